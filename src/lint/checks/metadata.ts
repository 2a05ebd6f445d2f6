import { isUseExpand, needsLocalDescription } from '../../model/use-flags.js';
import type { Check } from '../types.js';

function attr(tag: string, name: string): string | undefined {
  return new RegExp(`${name}="([^"]*)"`).exec(tag)?.[1];
}

/**
 * metadata.xml against the ebuild: local USE flags described, no stale
 * descriptions, upstream remote-ids, a maintainer. (xmllint checks the DTD.)
 */
export const metadataCheck: Check = {
  name: 'MetadataCheck',
  keywords: [
    { name: 'MissingLocalUseDesc', level: 'warning', description: 'a local USE flag has no description in metadata.xml' },
    { name: 'UnusedLocalUseDesc', level: 'warning', description: 'metadata.xml describes a flag the ebuild does not have' },
    { name: 'MissingRemoteId', level: 'info', description: 'an upstream repository has no <remote-id>' },
    { name: 'RedundantUseExpandDesc', level: 'style', description: 'metadata.xml describes a USE_EXPAND flag' },
    { name: 'MaintainerNeeded', level: 'warning', description: 'metadata.xml lists no maintainer' },
  ],
  run(f) {
    const xml = f.input.metadata;
    if (xml === undefined) return [];
    const out = [];
    const described = new Set([...xml.matchAll(/<flag\s[^>]*>/g)].map((m) => attr(m[0], 'name')).filter((n): n is string => Boolean(n)));
    const own = (f.globalMap.get('IUSE')?.value ?? '').split(/\s+/).filter(Boolean).map((w) => w.replace(/^[+-]/, ''));
    for (const flag of own) {
      if (needsLocalDescription(flag) && !described.has(flag)) {
        out.push({ keyword: 'MissingLocalUseDesc', message: `USE flag ${flag} has no <flag> description` });
      }
    }
    for (const flag of described) {
      if (isUseExpand(flag)) out.push({ keyword: 'RedundantUseExpandDesc', message: `<flag name="${flag}">: USE_EXPAND flags are described by the profiles` });
      else if (!own.includes(flag)) out.push({ keyword: 'UnusedLocalUseDesc', message: `<flag name="${flag}"> but ${flag} is not in IUSE` });
    }
    const ids = new Set([...xml.matchAll(/<remote-id type="github">([^<]+)<\/remote-id>/g)].map((m) => m[1]!));
    for (const repo of f.input.upstreamRepos ?? []) {
      if (!ids.has(repo)) out.push({ keyword: 'MissingRemoteId', message: `missing <remote-id type="github">${repo}</remote-id>` });
    }
    if (!/<maintainer[\s>]/.test(xml)) out.push({ keyword: 'MaintainerNeeded', message: 'no <maintainer> in metadata.xml' });
    return out;
  },
};
