import { readFile } from 'node:fs/promises';
import type { Manifest } from '../../manifest/load.js';
import { expand, knownReleases } from '../../model/resolve.js';
import { compareVersions, inRange } from '../../model/version.js';
import { Limiter } from '../../util/limiter.js';
import type { Progress } from '../../util/progress.js';
import { execFile, gitEnv, lastLine } from '../trees/exec.js';
import { gitTreeAt, type GitAccess } from '../trees/git-tree.js';
import { repositoryUrl } from '../trees/locations.js';
import { parseReleaseManifest, ReleaseManifestError, type ReleaseManifest } from './release-manifest.js';
import { monorepoProjects, type MonorepoReport } from './monorepo-projects.js';
import { resolveAt } from '../trees/sources.js';
import { TreeError } from '../trees/source-tree.js';

/** Where AMD's release manifests are read from: ROCm/ROCm's default.xml at each release tag. */
export const RELEASE_REPOSITORY = 'ROCm/ROCm';
export const RELEASE_MANIFEST_FILE = 'default.xml';

export interface ProjectSourceOptions extends GitAccess {
  baseUrl: string;
}

/** AMD's release manifest of `version`: a local file, or default.xml at the release tag of ROCm/ROCm. */
export async function readReleaseManifest(
  manifest: Manifest,
  version: string,
  o: ProjectSourceOptions,
  file?: string,
): Promise<{ release: ReleaseManifest; source: string }> {
  if (file) {
    let xml: string;
    try {
      xml = await readFile(file, 'utf8');
    } catch (err) {
      throw new TreeError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, 'unreachable');
    }
    return { release: parseReleaseManifest(xml, file), source: file };
  }
  const tag = expand(manifest.stack.defaults?.tag ?? 'rocm-${PV}', 'ROCm', version);
  const url = repositoryUrl(RELEASE_REPOSITORY, o.baseUrl);
  const label = `${RELEASE_REPOSITORY} ${tag}`;
  const tree = await gitTreeAt(url, tag, label, o);
  const xml = (await tree.read([RELEASE_MANIFEST_FILE])).get(RELEASE_MANIFEST_FILE);
  if (!xml) throw new TreeError(`${label} has no ${RELEASE_MANIFEST_FILE}`, 'missing');
  return { release: parseReleaseManifest(xml.toString('utf8'), `${label}:${RELEASE_MANIFEST_FILE}`), source: `${label}:${RELEASE_MANIFEST_FILE}` };
}

export type ProjectStatus = 'kept' | 'new' | 'gone';

export interface ProjectEntry {
  name: string;
  status: ProjectStatus;
  /** Atoms of the components that package it in the new release (for gone projects: in the old one). */
  packagedBy: string[];
  /** The exclusion's reason, when the manifest excludes it in the release concerned. */
  excluded?: string;
  /** Packaged or excluded: nothing to decide. */
  accounted: boolean;
  path?: string;
  /** The checkout path in the older release, when it differs. */
  pathBefore?: string;
}

export interface Relation {
  kind: 'renamed' | 'moved';
  /** The project that disappeared. */
  from: string;
  /** The project that now holds it. */
  to: string;
  /** For moves into a monorepo: the directory it now lives in. */
  at?: string;
  evidence: string[];
}

export interface ProjectsReport {
  version: string;
  against: string;
  source: string;
  againstSource: string;
  projects: ProjectEntry[];
  relations: Relation[];
  /** When the manifest already records a project list for `version`: how it differs from AMD's. */
  drift?: { notInManifest: string[]; notUpstream: string[] };
  /** Checks that could not be made (a repository unreachable); never fatal. */
  problems: string[];
  /** The project directories of the monorepos the release's components build from. */
  monorepos: MonorepoReport[];
  /** AMD's release manifest could not be read: only the monorepos were compared. */
  unread?: string;
}

export interface ProjectsOptions extends ProjectSourceOptions {
  version: string;
  against?: string;
  /** AMD's manifest of `version` as a local file instead of the ROCm/ROCm tag. */
  file?: string;
  /** The older release's manifest as a local file; with `file` and without this, it is not read. */
  againstFile?: string;
  /** Ask each remote whether a gone project's repository is the same as a new one's (GitHub redirects renamed repositories). */
  probe: boolean;
  /** Compare file lists: did a gone project's files reappear inside another project (a monorepo)? */
  trees: boolean;
  jobs: number;
  progress: Progress;
}

/** The release to compare with: --against, else the newest known release before `version`. */
export function defaultAgainst(manifest: Manifest, version: string): string {
  const known = knownReleases(manifest).sort(compareVersions);
  const before = known.filter((k) => compareVersions(k, version) < 0);
  return before.at(-1) ?? known.find((k) => k !== version) ?? known[0]!;
}

/** Who accounts for each project in a release: packaging components (by atom) and exclusions. */
function accounting(manifest: Manifest, version: string): { packaged: Map<string, string[]>; excluded: Map<string, string> } {
  const packaged = new Map<string, string[]>();
  for (const loaded of manifest.components) {
    const c = resolveAt(manifest, loaded, version);
    if (!c) continue;
    for (const p of c.spec.projects ?? [c.name]) packaged.set(p, [...(packaged.get(p) ?? []), c.atom]);
  }
  const excluded = new Map<string, string>();
  for (const e of manifest.stack.excluded ?? []) if (inRange(version, e.releases)) excluded.set(e.project, e.reason.replace(/\s+/g, ' ').trim());
  return { packaged, excluded };
}

const normalized = (name: string) => name.toLowerCase().replace(/[-_.]/g, '');

/** owner/name of a project, from its URL in the release manifest (GitHub), else ROCm/<name>. */
function githubName(url: string | undefined, name: string): string {
  const m = /github\.com[/:]([^/]+)\/([^/]+?)(?:\.git)?$/.exec(url ?? '');
  return m ? `${m[1]}/${m[2]}` : `ROCm/${name}`;
}

export async function compareProjects(manifest: Manifest, o: ProjectsOptions): Promise<ProjectsReport> {
  const against = o.against ?? defaultAgainst(manifest, o.version);
  const problems: string[] = [];
  let now: Awaited<ReturnType<typeof readReleaseManifest>>;
  try {
    now = await readReleaseManifest(manifest, o.version, o, o.file);
  } catch (err) {
    if (!(err instanceof TreeError || err instanceof ReleaseManifestError)) throw err;
    // From 7.2.0 most projects are directories of AMD's monorepos: those can still be listed.
    const monorepos = await monorepoProjects(manifest, o.version, o);
    if (monorepos.length === 0) throw err;
    return { version: o.version, against, source: '', againstSource: '', projects: [], relations: [], problems, monorepos, unread: err.message };
  }
  // The older XML gives checkout paths; the manifest's own list is the basis for new/gone.
  let before: ReleaseManifest | undefined;
  let againstSource = `the manifest's project list for ${against}`;
  if (o.file && !o.againstFile) {
    problems.push(`checkout paths not compared: give ${against}'s release manifest with --against-file`);
  } else {
    try {
      const r = await readReleaseManifest(manifest, against, o, o.againstFile);
      before = r.release;
    } catch (err) {
      if (!(err instanceof TreeError || err instanceof ReleaseManifestError)) throw err;
      problems.push(`${against}'s release manifest: ${err.message} (checkout paths not compared)`);
    }
  }
  const recorded = manifest.stack.projects?.[against];
  const oldNames = recorded ?? before?.projects.map((p) => p.name);
  if (!oldNames) throw new TreeError(`the manifest records no project list for ${against} and its release manifest could not be read`, 'unreachable');
  if (!recorded) againstSource = `AMD's release manifest of ${against}`;

  const newByName = new Map(now.release.projects.map((p) => [p.name, p]));
  const projects = projectEntries(manifest, o.version, against, now.release, oldNames, before);

  const gone = projects.filter((p) => p.status === 'gone');
  const added = projects.filter((p) => p.status === 'new');
  const relations: Relation[] = [];
  const relate = (kind: Relation['kind'], from: string, to: string, evidence: string, at?: string) => {
    const r = relations.find((x) => x.from === from && x.to === to);
    if (r) {
      if (!r.evidence.includes(evidence)) r.evidence.push(evidence);
      if (kind === 'moved') {
        r.kind = 'moved';
        if (at) r.at = at;
      }
    } else relations.push({ kind, from, to, ...(at ? { at } : {}), evidence: [evidence] });
  };
  for (const g of gone) {
    for (const n of added) {
      if (g.path && n.path === g.path) relate('renamed', g.name, n.name, `same checkout path ${g.path}`);
      if (normalized(g.name) === normalized(n.name)) relate('renamed', g.name, n.name, 'same name but for case and punctuation');
    }
  }

  const limiter = new Limiter(Math.max(1, o.jobs));
  if (o.probe && gone.length > 0 && added.length > 0) await probeRenames(o, gone, added, before, newByName, limiter, relate, problems);

  if (o.trees && gone.length > 0) {
    await findMoves(manifest, o, against, gone, now.release, limiter, relate, problems);
  }

  let drift: ProjectsReport['drift'];
  const own = manifest.stack.projects?.[o.version];
  if (own) {
    const upstream = new Set(now.release.projects.map((p) => p.name));
    drift = { notInManifest: [...upstream].filter((p) => !own.includes(p)), notUpstream: own.filter((p) => !upstream.has(p)) };
  }

  const monorepos = await monorepoProjects(manifest, o.version, o);
  return { version: o.version, against, source: now.source, againstSource, projects, relations, ...(drift ? { drift } : {}), problems, monorepos };
}

/** Each project of the new release, and each gone from the older one, with the packages that account for it. */
function projectEntries(
  manifest: Manifest,
  version: string,
  against: string,
  release: ReleaseManifest,
  oldNames: readonly string[],
  before: ReleaseManifest | undefined,
): ProjectEntry[] {
  const newByName = new Map(release.projects.map((p) => [p.name, p]));
  const oldPath = new Map((before?.projects ?? []).map((p) => [p.name, p.path]));
  const oldSet = new Set(oldNames);
  const acNew = accounting(manifest, version);
  const acOld = accounting(manifest, against);
  const projects: ProjectEntry[] = [];
  for (const p of release.projects) {
    const status: ProjectStatus = oldSet.has(p.name) ? 'kept' : 'new';
    const packagedBy = acNew.packaged.get(p.name) ?? [];
    const excluded = acNew.excluded.get(p.name);
    const was = oldPath.get(p.name);
    projects.push({
      name: p.name,
      status,
      packagedBy,
      ...(excluded ? { excluded } : {}),
      accounted: packagedBy.length > 0 || excluded !== undefined,
      path: p.path,
      ...(was !== undefined && was !== p.path ? { pathBefore: was } : {}),
    });
  }
  for (const name of oldNames) {
    if (newByName.has(name)) continue;
    const packagedBy = acOld.packaged.get(name) ?? [];
    const excluded = acOld.excluded.get(name);
    projects.push({ name, status: 'gone', packagedBy, ...(excluded ? { excluded } : {}), accounted: false, ...(oldPath.has(name) ? { path: oldPath.get(name)! } : {}) });
  }
  return projects;
}

/** Renames found by asking GitHub for each gone and each new project's HEAD. */
async function probeRenames(
  o: ProjectsOptions,
  gone: readonly ProjectEntry[],
  added: readonly ProjectEntry[],
  before: ReleaseManifest | undefined,
  newByName: ReadonlyMap<string, ReleaseManifest['projects'][number]>,
  limiter: Limiter,
  relate: (kind: Relation['kind'], from: string, to: string, evidence: string, at?: string) => void,
  problems: string[],
): Promise<void> {
  // GitHub answers for a renamed repository under its old name: same HEAD, same repository.
  const heads = new Map<string, string | undefined>();
  const names = [...gone.map((g) => ({ name: g.name, url: before?.projects.find((p) => p.name === g.name)?.url })), ...added.map((n) => ({ name: n.name, url: newByName.get(n.name)?.url }))];
  let done = 0;
  await Promise.all(
    names.map(({ name, url }) =>
      limiter.run(async () => {
        const repo = repositoryUrl(githubName(url, name), o.baseUrl);
        const r = await execFile('git', ['ls-remote', '--', repo, 'HEAD'], { env: gitEnv(), timeoutMs: o.deadline.callMs() });
        const sha = r.code === 0 ? /^([0-9a-f]{40,64})\s/m.exec(r.stdout.toString())?.[1] : undefined;
        if (!sha) problems.push(`${name}: cannot ask ${repo} (${r.timedOut ? o.deadline.reason() : lastLine(r.stderr) || 'no HEAD'})`);
        heads.set(name, sha);
        o.progress.step(++done, names.length, `ls-remote ${name}`);
      }),
    ),
  );
  o.progress.done();
  for (const g of gone) for (const n of added) {
    const a = heads.get(g.name);
    if (a && a === heads.get(n.name)) relate('renamed', g.name, n.name, `the ${g.name} repository answers with ${n.name}'s HEAD (${a.slice(0, 12)})`);
  }
}

/**
 * A gone project whose files (at the older tag) reappear under one directory
 * of another project (at the new tag) moved there. Half its files, and at
 * least three, must be found under the same directory.
 */
async function findMoves(
  manifest: Manifest,
  o: ProjectsOptions,
  against: string,
  gone: ProjectEntry[],
  release: ReleaseManifest,
  limiter: Limiter,
  relate: (kind: Relation['kind'], from: string, to: string, evidence: string, at?: string) => void,
  problems: string[],
): Promise<void> {
  const tagOf = (v: string) => expand(manifest.stack.defaults?.tag ?? 'rocm-${PV}', 'ROCm', v);
  const list = async (project: string, url: string | undefined, version: string): Promise<string[] | undefined> => {
    const gh = githubName(url, project);
    try {
      const tree = await gitTreeAt(repositoryUrl(gh, o.baseUrl), tagOf(version), `${gh} ${tagOf(version)}`, o);
      return await tree.files();
    } catch (err) {
      if (!(err instanceof TreeError)) throw err;
      problems.push(`${project}: ${err.message} (not compared)`);
      return undefined;
    }
  };
  const goneFiles = new Map<string, string[]>();
  await Promise.all(
    gone.map((g) =>
      limiter.run(async () => {
        const files = await list(g.name, undefined, against);
        // Repository plumbing moves with no project: compare only code.
        if (files) goneFiles.set(g.name, files.filter((f) => !/^(\.|LICENSE|README|CHANGELOG|NOTICE)/i.test(f.split('/').at(-1)!)));
      }),
    ),
  );
  let done = 0;
  await Promise.all(
    release.projects.map((candidate) =>
      limiter.run(async () => {
        const files = await list(candidate.name, candidate.url, o.version);
        o.progress.step(++done, release.projects.length, `files of ${candidate.name}`);
        if (!files) return;
        const byBase = new Map<string, string[]>();
        for (const f of files) {
          const b = f.split('/').at(-1)!;
          byBase.set(b, [...(byBase.get(b) ?? []), f]);
        }
        for (const [name, old] of goneFiles) {
          if (old.length < 3 || name === candidate.name) continue;
          const prefixes = new Map<string, number>();
          for (const f of old) {
            for (const g of byBase.get(f.split('/').at(-1)!) ?? []) {
              if (g === f || g.endsWith(`/${f}`)) {
                const prefix = g.slice(0, g.length - f.length).replace(/\/$/, '');
                prefixes.set(prefix, (prefixes.get(prefix) ?? 0) + 1);
              }
            }
          }
          const best = [...prefixes.entries()].sort((a, b) => b[1] - a[1])[0];
          if (best && best[1] >= 3 && best[1] * 2 >= old.length) {
            const share = `${best[1]} of ${old.length} files of ${name} ${against} are in ${candidate.name} ${o.version}${best[0] ? ` under ${best[0]}/` : ''}`;
            relate(best[0] ? 'moved' : 'renamed', name, candidate.name, share, best[0] || undefined);
          }
        }
      }),
    ),
  );
  o.progress.done();
}
