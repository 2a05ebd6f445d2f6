import type { ResolvedComponent } from '../model/resolve.js';
import { isTarball } from '../model/sources/index.js';
import { useTest, wrapCommand } from './prepare.js';

/**
 * The ebuild's own variables its sources need: the commit of each pinned
 * repository, stated once (`ROCM_LIBRARIES_COMMIT="…"`) and named by SRC_URI
 * and S, as ::gentoo writes snapshots of a commit.
 */
export function sourceVariables(c: ResolvedComponent): string[] {
  const seen = new Map<string, string>();
  for (const { location } of c.sources) {
    const commit = location.commit;
    if (commit?.value !== undefined && !seen.has(commit.variable)) seen.set(commit.variable, commit.value);
  }
  return [...seen].map(([name, value]) => `${name}="${value}"`);
}

/** Formats Portage's `unpack` handles; anything else in A (a patch) is not unpacked. */
const UNPACKABLE = /\.(tar(\.(gz|bz2|xz|lz|lzma|zst|Z))?|tgz|tbz2?|txz|zip|ZIP|jar|gz|bz2|xz|lzma|Z|7z|rar|deb|lha|lzh)$/;

/** A source's DISTDIR name as the ebuild writes it (with ${PV}): the SRC_URI entry's target. */
function ebuildName(uri: string): string {
  const [url, renamed] = uri.split(' -> ');
  return renamed ?? url!.split('/').pop()!;
}

interface Archive {
  /** The name in ebuild form. */
  file: string;
  /** Expanded, to tell archives apart. */
  name: string;
  /** The archive's top directory, ebuild form. */
  dir: string;
  /** Directories to extract below `dir`; undefined: all of it. */
  extract?: string[];
  when?: string;
}

/**
 * src_unpack for a package that reads only part of an archive (a monorepo's
 * project and the shared directories it builds; `extract` in the manifest):
 * GNU tar extracts just those members, as ::gentoo's hipBLASLt 7.1.0 and
 * llvm.org.eclass do, and dies when one is missing from the archive (a
 * project that moved fails here, not later). Every other archive of A is
 * unpacked as Portage's default would, those of a USE flag under it.
 * Empty (Portage's default src_unpack) when nothing is extracted in part.
 */
export function unpackBody(c: ResolvedComponent): string[] {
  const archives: Archive[] = [];
  for (const { spec, location } of c.sources) {
    const seen = archives.find((a) => a.name === location.name);
    if (seen) {
      // One file serving two sources: the union of what they read, or all of it.
      seen.extract = seen.extract && spec.extract ? [...new Set([...seen.extract, ...spec.extract])] : undefined;
      if (seen.when !== spec.when) delete seen.when;
      continue;
    }
    archives.push({ file: ebuildName(location.uri), name: location.name, dir: location.dir, ...(spec.extract ? { extract: [...spec.extract] } : {}), ...(spec.when ? { when: spec.when } : {}) });
  }
  if (!archives.some((a) => a.extract && isTarball(a.name))) return [];
  const lines: string[] = [];
  const groups = new Map<string, string[]>();
  for (const a of archives) {
    if (a.extract && isTarball(a.name)) {
      const indent = a.when ? '\t\t' : '\t';
      const body = [
        `${indent}# Only the directories of the archive ${c.pn} reads, not the whole tree`,
        ...wrapCommand(`tar -xf "\${DISTDIR}/${a.file}" -C "\${WORKDIR}"`, a.extract.map((e) => `"${a.dir}/${e}"`), indent),
      ];
      if (a.when) lines.push(`\tif ${useTest(a.when)}; then`, ...body, '\tfi');
      else lines.push(...body);
    } else if (UNPACKABLE.test(a.name)) {
      groups.set(a.when ?? '', [...(groups.get(a.when ?? '') ?? []), a.file]);
    }
  }
  for (const [when, listed] of groups) {
    const indent = when ? '\t\t' : '\t';
    // Quoted: a name with ${P} or ${PV} is one word whatever they hold (shellcheck SC2086).
    const files = listed.map((f) => (f.includes('$') ? `"${f}"` : f));
    const call = files.length === 1 ? [`${indent}unpack ${files[0]}`] : [`${indent}unpack \\`, ...files.map((f, i) => `${indent}\t${f}${i === files.length - 1 ? '' : ' \\'}`)];
    if (when) lines.push(`\tif ${useTest(when)}; then`, ...call, '\tfi');
    else lines.push(...call);
  }
  return lines;
}
