import type { LoadedComponent, Manifest } from '../../manifest/load.js';
import { knownReleases } from '../../model/resolve.js';
import { STREAMS } from '../../model/streams.js';
import { expand } from '../../model/sources/index.js';
import { compareVersions, isVersion } from '../../model/version.js';
import type { Deadline } from '../../util/deadline.js';
import { Limiter } from '../../util/limiter.js';
import type { Progress } from '../../util/progress.js';
import { listRemoteTags } from '../trees/git-tree.js';
import { repositoryUrl } from '../trees/locations.js';
import { byCodePoint } from '../../util/order.js';


export type TagKind = 'release' | 'therock' | 'other';

/** A tag scheme such as `rocm-${PV}` as a matcher giving the version. */
export function tagMatcher(scheme: string): (tag: string) => string | undefined {
  const parts = scheme.split('${PV}').map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  const re = new RegExp(`^${parts.join('(\\d+(?:\\.\\d+)*)')}$`);
  return (tag) => {
    const m = re.exec(tag);
    return m?.[1] !== undefined && isVersion(m[1]) ? m[1] : undefined;
  };
}

export function classifyTag(tag: string, release: (tag: string) => string | undefined): { kind: TagKind; version?: string } {
  const v = release(tag);
  if (v !== undefined) return { kind: 'release', version: v };
  // TheRock's stream: therock-10.0 is release 10.0.0, as bump and the ebuilds name it.
  const t = STREAMS.therock.versionOf(tag);
  if (t !== undefined) return { kind: 'therock', version: t };
  return { kind: 'other' };
}

export interface RepositoryTags {
  /** owner/name */
  repo: string;
  url: string;
  components: string[];
  releases: string[];
  therock: string[];
  /** Tags of neither scheme (branches of history, pre-release names). */
  other: number;
  /** The tag of each release ("release:7.2.4") and TheRock release ("therock:10.0.0"), with the commit it points at. */
  commits: Record<string, { tag: string; commit: string }>;
  error?: string;
}

export interface TagsReport {
  /** Releases the manifest has, sorted. */
  known: string[];
  /**
   * Releases upstream has that the manifest lacks, of both streams (rocm-X.Y.Z
   * and TheRock's therock-X.Y as X.Y.0), sorted as Portage sorts versions.
   */
  missing: {
    version: string;
    stream: 'legacy' | 'therock';
    tag: string;
    repositories: number;
    total: number;
    lacking: string[];
    olderThanKnown: boolean;
    /** The tag in each repository that has it, and the commit it points at. */
    commits: { repo: string; tag: string; commit: string }[];
  }[];
  /** Releases older than the manifest's oldest, not listed (see --all). */
  hiddenOlder: number;
  therock: { version: string; repositories: string[] }[];
  repositories: RepositoryTags[];
  unreachable: { repo: string; url: string; error: string }[];
}

export interface TagsOptions {
  components: LoadedComponent[];
  baseUrl: string;
  /** The whole operation's bound: every ls-remote gets what is left of it. */
  deadline: Deadline;
  jobs: number;
  /** List releases older than the manifest's oldest too. */
  all: boolean;
  progress: Progress;
}

/**
 * The release tags of every repository the components are built from (those
 * whose tag follows the release: `rocm-${PV}`; pinned sources are not
 * release-tracked), asked with `git ls-remote --tags --refs`: no API, no token.
 */
export async function upstreamTags(manifest: Manifest, o: TagsOptions): Promise<TagsReport> {
  const defaultTag = manifest.stack.defaults?.tag ?? 'rocm-${PV}';
  const repos = new Map<string, { scheme: string; components: string[] }>();
  for (const c of o.components) {
    const sources = [c.spec.sources, ...(c.spec.overrides ?? []).map((ov) => ov.set.sources ?? [])].flat();
    for (const s of sources) {
      // A repository's tags, or those of the monorepo whose release carries the asset.
      const repo = s.github ?? s.release_asset;
      if (!repo) continue;
      const scheme = s.tag ?? defaultTag;
      if (!scheme.includes('${PV}')) continue;
      const r = repos.get(repo) ?? { scheme, components: [] };
      if (!r.components.includes(c.spec.name)) r.components.push(c.spec.name);
      repos.set(repo, r);
    }
  }
  const limiter = new Limiter(Math.max(1, o.jobs));
  let done = 0;
  const results = await Promise.all(
    [...repos.entries()].sort(([a], [b]) => byCodePoint(a, b)).map(([repo, info]) =>
      limiter.run(async (): Promise<RepositoryTags> => {
        const url = repositoryUrl(repo, o.baseUrl);
        const r = await listRemoteTags(url, o.deadline);
        o.progress.step(++done, repos.size, `git ls-remote ${url}`);
        const base = { repo, url, components: info.components, releases: [] as string[], therock: [] as string[], other: 0, commits: {} as RepositoryTags['commits'] };
        if ('error' in r) return { ...base, error: r.error };
        const match = tagMatcher(info.scheme);
        for (const tag of r.tags) {
          const k = classifyTag(tag, match);
          if (k.kind === 'release') base.releases.push(k.version!);
          else if (k.kind === 'therock') base.therock.push(k.version!);
          else base.other++;
          if (k.kind !== 'other') base.commits[`${k.kind}:${k.version!}`] ??= { tag, commit: r.commits.get(tag)! };
        }
        base.releases = [...new Set(base.releases)].sort(compareVersions);
        base.therock = [...new Set(base.therock)].sort(compareVersions);
        return base;
      }),
    ),
  );
  o.progress.done();

  const known = knownReleases(manifest).sort(compareVersions);
  const oldest = known[0]!;
  const reachable = results.filter((r) => !r.error);
  const everyRelease = new Set(reachable.flatMap((r) => r.releases));
  const therock = [...new Set(reachable.flatMap((r) => r.therock))].sort(compareVersions);
  // A version both streams tag (none so far) is the legacy one's.
  const streamOf = (v: string): 'legacy' | 'therock' => (everyRelease.has(v) ? 'legacy' : 'therock');
  const lacking = [...new Set([...everyRelease, ...therock])].filter((v) => !known.includes(v)).sort(compareVersions);
  const shown = lacking.filter((v) => o.all || compareVersions(v, oldest) >= 0);
  return {
    known,
    missing: shown.map((version) => {
      const stream = streamOf(version);
      const has = (r: RepositoryTags) => (stream === 'legacy' ? r.releases : r.therock).includes(version);
      return {
        version,
        stream,
        tag: expand(STREAMS[stream].tagFor(version), 'ROCm', version),
        repositories: reachable.filter(has).length,
        total: reachable.length,
        lacking: reachable.filter((r) => !has(r)).map((r) => r.repo),
        olderThanKnown: compareVersions(version, oldest) < 0,
        commits: reachable.filter(has).map((r) => ({ repo: r.repo, ...r.commits[`${stream === 'legacy' ? 'release' : 'therock'}:${version}`]! })),
      };
    }),
    hiddenOlder: lacking.length - shown.length,
    therock: therock.map((version) => ({ version, repositories: reachable.filter((r) => r.therock.includes(version)).map((r) => r.repo) })),
    repositories: results,
    unreachable: results.filter((r) => r.error).map((r) => ({ repo: r.repo, url: r.url, error: r.error! })),
  };
}
