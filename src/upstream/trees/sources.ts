import path from 'node:path';
import type { LoadedComponent, Manifest } from '../../manifest/load.js';
import { knownReleases, releaseModel, resolveComponent, type ResolvedComponent } from '../../model/resolve.js';
import { compareVersions } from '../../model/version.js';
import { defaultHashCacheFile, ensureDistfiles, type DistfileProgress, type DistfileResult } from '../../distfiles/index.js';
import type { Deadline } from '../../util/deadline.js';
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
  /** Position among the release's sources; 0 is the main tree (S). */
  index: number;
  /** The GitHub repository the source is cut from ("ROCm/rocPRIM", "ROCm/rocm-libraries"): what git reads. */
  github?: string;
  /** The tag, expanded ("rocm-6.3.3"). */
  tag?: string;
  /** The project's directory in the repository at the tag, for a monorepo's release asset ("projects/rocblas"). */
  path?: string;
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

/** A label for people: "ROCm/rocPRIM rocm-6.3.3", "ROCm/rocm-libraries rocm-7.2.0:projects/rocblas", or the distfile name. */
export function sourceLabel(ref: SourceRef): string {
  if (!ref.github) return ref.distfile;
  return `${ref.github} ${ref.tag}${ref.path ? `:${ref.path}` : ''}`;
}

/** The sources of a resolved component, with the same naming rules as its SRC_URI (the source kinds'). */
export function sourceRefs(_manifest: Manifest, c: ResolvedComponent): SourceRef[] {
  return c.sources.map(({ spec: src, location: l }, index): SourceRef => ({
    component: c.name,
    index,
    ...(l.repo !== undefined ? { github: l.repo } : {}),
    ...(l.tag !== undefined ? { tag: l.tag } : {}),
    ...(l.path !== undefined ? { path: l.path } : {}),
    url: l.url,
    distfile: l.name,
    ...(index === 0 && src.subdir ? { subdir: src.subdir } : {}),
    dir: l.dirExpanded,
    versioned: l.versioned,
    ...(src.when ? { when: src.when } : {}),
  }));
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
      deadline: Deadline;
    }
  | {
      /** Release tarballs through the distfiles engine, as the ebuilds fetch them. */
      kind: 'archive';
      distdir: string;
      offline: boolean;
      mirrors: string[];
      jobs?: number;
      /** Idle time after which one download attempt is abandoned and retried. */
      timeoutMs?: number;
      /** A bound on all the downloads together (the upstream commands' --timeout). */
      deadline?: Deadline;
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
      ...(a.deadline?.signal ? { signal: a.deadline.signal } : {}),
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
      // A release asset is its project's directory of the repository at the tag.
      const inRepo = [ref.path, ref.subdir].filter((p): p is string => p !== undefined).join('/') || undefined;
      // A monorepo's project is read from a partial clone: its trees, and only the blobs the reports read.
      return gitTreeAt(repositoryUrl(ref.github, this.access.baseUrl), ref.tag, label, this.access, inRepo, { partial: ref.path !== undefined });
    }
    await this.prepare([ref]);
    const r = this.fetched.get(ref.distfile)!;
    if (r.status === 'missing') throw new TreeError(`${ref.distfile} is not in the distdir (--offline)`, 'unreachable');
    if (r.status === 'failed' || !r.path) {
      if (this.access.deadline?.expired()) throw new TreeError(`cannot fetch ${ref.distfile}: ${this.access.deadline.reason()}`, 'unreachable');
      // The distfiles engine's error already says "could not fetch FILE: …"; it is not said twice.
      const why = r.error ?? `cannot fetch ${ref.distfile}: ${r.attempts.map((t) => `${t.url}: ${t.outcome}`).join('; ')}`;
      // A 404 for a GitHub tag archive means the tag does not exist.
      const missing = r.attempts.length > 0 && r.attempts.every((t) => /\b404\b/.test(t.outcome));
      throw new TreeError(missing ? `no release archive ${ref.url} (HTTP 404: no such tag?)` : why, missing ? 'missing' : 'unreachable');
    }
    return ArchiveTree.open(r.path, label, this.access.cacheDir, ref.subdir, r.status === 'fetched' ? (r.entry?.size ?? 0) : 0);
  }
}
