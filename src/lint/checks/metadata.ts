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
    { name: 'MaintainerNeeded', level: 'warning', description: 'metadata.xml lists no maintainer' },
  ],
  run(f) {
    const xml = f.input.metadata;
    if (xml === undefined) return [];
    const out = [];
    const described = new Set([...xml.matchAll(/<flag\s[^>]*>/g)].map((m) => attr(m[0], 'name')).filter((n): n is string => Boolean(n)));
    const own = (f.globalMap.get('IUSE')?.value ?? '').split(/\s+/).filter(Boolean).map((w) => w.replace(/^[+-]/, ''));
    // Flags with a global description in ::gentoo (profiles/use.desc) need no local one.
    const global = new Set(['test', 'debug', 'doc', 'examples', 'python', 'openmp', 'mpi', 'fortran', 'opencl', 'static-libs', 'video_cards_amdgpu', 'video_cards_nvidia', 'cuda', 'rocm', 'X', 'opengl', 'vulkan', 'static']);
    for (const flag of own) {
      if (!global.has(flag) && !described.has(flag)) {
        out.push({ keyword: 'MissingLocalUseDesc', message: `USE flag ${flag} has no <flag> description` });
      }
    }
    for (const flag of described) {
      if (!own.includes(flag)) out.push({ keyword: 'UnusedLocalUseDesc', message: `<flag name="${flag}"> but ${flag} is not in IUSE` });
    }
    const ids = new Set([...xml.matchAll(/<remote-id type="github">([^<]+)<\/remote-id>/g)].map((m) => m[1]!));
    for (const repo of f.input.upstreamRepos ?? []) {
      if (!ids.has(repo)) out.push({ keyword: 'MissingRemoteId', message: `missing <remote-id type="github">${repo}</remote-id>` });
    }
    if (!/<maintainer[\s>]/.test(xml)) out.push({ keyword: 'MaintainerNeeded', message: 'no <maintainer> in metadata.xml' });
    return out;
  },
};
