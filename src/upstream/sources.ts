import path from 'node:path';
import type { LoadedComponent, Manifest } from '../manifest/load.js';
import type { SourceSpec } from '../manifest/types.js';
import { expand, knownReleases, releaseModel, resolveComponent, type ResolvedComponent } from '../model/resolve.js';
import { compareVersions } from '../model/version.js';
import { defaultHashCacheFile, ensureDistfiles, type DistfileProgress, type DistfileResult } from '../distfiles/index.js';
import { ArchiveTree } from './archive-tree.js';
import { gitTreeAt } from './git-tree.js';
import { repositoryUrl } from './locations.js';
import { TreeError, type SourceTree } from './source-tree.js';

/**
 * The release whose data describes `version`: itself when the manifest has
 * it, else the newest known release before it (the one a new release is
 * derived from), else the oldest known.
 */
export function dataRelease(manifest: Manifest, version: string): string {
  const known = knownReleases(manifest).sort(compareVersions);
  if (known.includes(version)) return version;
  const before = known.filter((k) => compareVersions(k, version) < 0);
  return before.at(-1) ?? known[0]!;
}

/**
 * A component as the manifest would generate it for `version`, which need not
 * be a release the manifest knows: its overrides and release range are
 * applied to that version. Only source layout is read from the result, so the
 * target policy is left empty.
 */
export function resolveAt(manifest: Manifest, loaded: LoadedComponent, version: string): ResolvedComponent | undefined {
  const base = releaseModel(manifest, dataRelease(manifest, version), { default: [], optional: [] })!;
  return resolveComponent(manifest, loaded, { ...base, version });
}

/** One source of a component in one release. */
export interface SourceRef {
  component: string;
  /** Position in the component's `sources`; 0 is the main tree (S). */
  index: number;
  /** "ROCm/rocPRIM" for GitHub sources. */
  github?: string;
  /** The tag, expanded ("rocm-6.3.3"). */
  tag?: string;
  /** The distfile's download URL. */
  url: string;
  /** The distfile's name in DISTDIR. */
  distfile: string;
  /** The directory the ebuild reads (S for the main source): `subdir` of the unpacked tree. */
  subdir?: string;
  /** The unpacked directory's name under ${WORKDIR}, as fix-ups write `${WORKDIR}/<dir>/…`. */
  dir: string;
  /** The source moves with the release (its tag or URL holds ${PV}); pinned sources do not. */
  versioned: boolean;
  when?: string;
}

const VERSIONED = /\$\{(PV|P)\}/;

/** A label for people: "ROCm/rocPRIM rocm-6.3.3", or the distfile name. */
export function sourceLabel(ref: SourceRef): string {
  return ref.github ? `${ref.github} ${ref.tag}` : ref.distfile;
}

/** The sources of a resolved component, with the same naming rules as its SRC_URI. */
export function sourceRefs(manifest: Manifest, c: ResolvedComponent): SourceRef[] {
  const defaultTag = manifest.stack.defaults?.tag ?? 'rocm-${PV}';
  return c.spec.sources.map((src: SourceSpec, index): SourceRef => {
    const x = (t: string) => expand(t, c.pn, c.version);
    if (src.github) {
      const tagTemplate = src.tag ?? defaultTag;
      const tag = x(tagTemplate);
      const repoName = src.github.split('/')[1]!;
      const distfile = x(src.distfile ?? (index === 0 ? '${P}.tar.gz' : `${repoName}-\${PV}.tar.gz`));
      return {
        component: c.name,
        index,
        github: src.github,
        tag,
        url: `https://github.com/${src.github}/archive/${tag}.tar.gz`,
        distfile,
        ...(index === 0 && src.subdir ? { subdir: src.subdir } : {}),
        dir: x(src.dir ?? `${repoName}-${/^v[0-9]/.test(tag) ? tag.slice(1) : tag}`),
        versioned: VERSIONED.test(tagTemplate),
        ...(src.when ? { when: src.when } : {}),
      };
    }
    return {
      component: c.name,
      index,
      url: x(src.url!),
      distfile: x(src.distfile!),
      ...(index === 0 && src.subdir ? { subdir: src.subdir } : {}),
      dir: x(src.dir!),
      versioned: VERSIONED.test(src.url!) || VERSIONED.test(src.distfile ?? ''),
      ...(src.when ? { when: src.when } : {}),
    };
  });
}

/** Where rocm-ebuild keeps what it fetched from upstream (next to the hash cache). */
export function upstreamCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(path.dirname(defaultHashCacheFile(env)), 'upstream');
}

export type TreeAccess =
  | {
      /** Git repositories: `baseUrl` in place of https://github.com (see repositoryUrl). */
      kind: 'git';
      baseUrl: string;
      cacheDir: string;
      timeoutMs: number;
    }
  | {
      /** Release tarballs through the distfiles engine, as the ebuilds fetch them. */
      kind: 'archive';
      distdir: string;
      offline: boolean;
      mirrors: string[];
      jobs?: number;
      timeoutMs?: number;
      retries?: number;
      progress?: DistfileProgress;
      cacheDir: string;
    };

/**
 * Opens the trees of source refs. In archive mode every distfile the refs
 * need is fetched first, in one run of the distfiles engine (parallel,
 * resumable, kept in the distdir for the bump that follows).
 */
export class TreeProvider {
  private readonly fetched = new Map<string, DistfileResult>();

  constructor(readonly access: TreeAccess) {}

  async prepare(refs: SourceRef[]): Promise<void> {
    if (this.access.kind !== 'archive') return;
    const a = this.access;
    const needs = new Map<string, { name: string; urls: string[]; neededBy: { atom: string; ebuild: string }[] }>();
    for (const r of refs) {
      if (this.fetched.has(r.distfile)) continue;
      const need = needs.get(r.distfile) ?? { name: r.distfile, urls: [r.url], neededBy: [] };
      need.neededBy.push({ atom: r.component, ebuild: sourceLabel(r) });
      needs.set(r.distfile, need);
    }
    if (needs.size === 0) return;
    const results = await ensureDistfiles([...needs.values()], {
      distdir: a.distdir,
      offline: a.offline,
      mirrors: a.mirrors,
      ...(a.jobs !== undefined ? { jobs: a.jobs } : {}),
      ...(a.timeoutMs !== undefined ? { timeoutMs: a.timeoutMs } : {}),
      ...(a.retries !== undefined ? { retries: a.retries } : {}),
      ...(a.progress ? { progress: a.progress } : {}),
    });
    for (const r of results) this.fetched.set(r.name, r);
  }

  async open(ref: SourceRef): Promise<SourceTree> {
    const label = sourceLabel(ref);
    if (this.access.kind === 'git') {
      if (!ref.github || !ref.tag) {
        throw new TreeError(`${ref.distfile} is not a git source; run without --base-url to read it from its distfile`, 'unreachable');
      }
      return gitTreeAt(repositoryUrl(ref.github, this.access.baseUrl), ref.tag, label, this.access, ref.subdir);
    }
    await this.prepare([ref]);
    const r = this.fetched.get(ref.distfile)!;
    if (r.status === 'missing') throw new TreeError(`${ref.distfile} is not in the distdir (--offline)`, 'unreachable');
    if (r.status === 'failed' || !r.path) {
      const why = r.error ?? r.attempts.map((t) => `${t.url}: ${t.outcome}`).join('; ');
      // A 404 for a GitHub tag archive means the tag does not exist.
      const missing = r.attempts.length > 0 && r.attempts.every((t) => /\b404\b/.test(t.outcome));
      throw new TreeError(missing ? `no release archive ${ref.url} (HTTP 404: no such tag?)` : `cannot fetch ${ref.distfile}: ${why}`, missing ? 'missing' : 'unreachable');
    }
    return ArchiveTree.open(r.path, label, this.access.cacheDir, ref.subdir);
  }
}
