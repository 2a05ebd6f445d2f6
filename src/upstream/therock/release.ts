import { isVersion } from '../../model/version.js';
import { gitTreeAt, type GitAccess, type GitTree } from '../trees/git-tree.js';
import { repositoryUrl } from '../trees/locations.js';
import { readSubmodules, shown, type Submodule } from './gitmodules.js';
import { readSubprojects, type Subproject } from './subprojects.js';
import { readArtifactSubprojects, readTopology, type Topology } from './topology.js';

/**
 * TheRock at a tag or branch, read as a release manifest: its version, the
 * repositories it pins (submodules with their commits), the components it
 * builds (CMake subproject declarations, each resolved to a submodule and a
 * directory) and its artifact topology. Only trees and a few small files are
 * fetched (a partial clone); nothing TheRock says is run or checked out.
 */
export interface TheRockRelease {
  /** The tag or branch asked for. */
  ref: string;
  /** The full ref it was found at (refs/tags/…, refs/heads/…). */
  fullRef: string;
  commit: string;
  /** version.json's "rocm-version". */
  version?: string;
  submodules: Submodule[];
  subprojects: Subproject[];
  topology?: Topology;
  /** Input refused or malformed: the report stands without it. */
  problems: string[];
  /** What cannot be resolved without configuring TheRock. */
  unresolved: string[];
  /** Bytes fetched to read it (0 for a local repository). */
  bytes: number;
}

/** Size limits for what is read from the tree: anything larger is refused unread (TheRock's own files are a few KiB each). */
export const LIMITS = {
  small: 64 * 1024,
  cmakeFile: 1024 * 1024,
  cmakeTotal: 32 * 1024 * 1024,
  cmakeFiles: 4000,
  topology: 2 * 1024 * 1024,
};

const isCMake = (f: string) => f === 'CMakeLists.txt' || f.endsWith('/CMakeLists.txt') || f.endsWith('.cmake');

export interface TheRockOptions extends GitAccess {
  /** See repositoryUrl: https://github.com, a mirror directory or a {owner}/{repo} template. */
  baseUrl: string;
}

/** The repository TheRock is read from. */
export const THEROCK = 'ROCm/TheRock';

export async function readTheRock(ref: string, o: TheRockOptions): Promise<TheRockRelease> {
  const tree = await gitTreeAt(repositoryUrl(THEROCK, o.baseUrl), ref, `${THEROCK} ${ref}`, o, undefined, { partial: true, kinds: 'tags-or-branches' });
  return readTheRockTree(tree, ref);
}

/** The files whose sizes are within the limits of their kind and of all CMake files together; the others said in `problems`. */
function withinLimits(candidates: readonly string[], sizes: ReadonlyMap<string, number>, problems: string[]): string[] {
  const limitOf = (f: string) => (f === 'BUILD_TOPOLOGY.toml' || (f.endsWith('.json') && f !== 'version.json') ? LIMITS.topology : isCMake(f) ? LIMITS.cmakeFile : LIMITS.small);
  const allowed: string[] = [];
  let cmakeBytes = 0;
  for (const f of candidates) {
    const size = sizes.get(f);
    if (size === undefined) continue;
    if (size > limitOf(f)) {
      problems.push(`${f}: ${size} bytes, over the ${limitOf(f)} bytes a file of its kind may have; not read`);
      continue;
    }
    if (isCMake(f)) {
      if (cmakeBytes + size > LIMITS.cmakeTotal) {
        problems.push(`${f}: the CMake files exceed ${LIMITS.cmakeTotal} bytes in all; not read`);
        continue;
      }
      cmakeBytes += size;
    }
    allowed.push(f);
  }
  return allowed;
}

/** The release's version from version.json's "rocm-version"; what is wrong with it said in `problems`. */
function readVersion(text: string | undefined, problems: string[]): string | undefined {
  let version: string | undefined;
  if (text === undefined) problems.push('version.json: missing or unreadable; the release has no version');
  else {
    try {
      const v = (JSON.parse(text) as Record<string, unknown>)['rocm-version'];
      if (typeof v === 'string' && isVersion(v)) version = v;
      else problems.push(`version.json: "rocm-version" is ${shown(String(v))}, not a version such as 10.0.0`);
    } catch (err) {
      problems.push(`version.json: ${(err as Error).message}`);
    }
  }
  return version;
}

/** Reads TheRock's files from a tree already opened (a tag or a branch). */
export async function readTheRockTree(tree: GitTree, ref: string): Promise<TheRockRelease> {
  const problems: string[] = [];
  const unresolved: string[] = [];
  const files = await tree.files();
  const gitlinks = await tree.gitlinks();
  const cmakeFiles = files.filter((f) => isCMake(f) && !gitlinks.has(f));
  const named = ['version.json', '.gitmodules', 'BUILD_TOPOLOGY.toml', 'build_tools/artifact_subprojects.json'].filter((f) => files.includes(f) && !gitlinks.has(f));
  const sizes = await tree.sizes([...named, ...cmakeFiles.slice(0, LIMITS.cmakeFiles)]);
  if (cmakeFiles.length > LIMITS.cmakeFiles) problems.push(`${cmakeFiles.length} CMake files: only the first ${LIMITS.cmakeFiles} are read`);

  const allowed = withinLimits([...named, ...cmakeFiles.slice(0, LIMITS.cmakeFiles)], sizes, problems);
  const contents = await tree.read(allowed);
  const textOf = (f: string): string | undefined => {
    const b = contents.get(f);
    if (b === undefined) return undefined;
    if (b.includes(0)) {
      problems.push(`${f}: binary (holds NUL bytes); not read`);
      return undefined;
    }
    return b.toString('utf8');
  };

  const version = readVersion(textOf('version.json'), problems);

  let submodules: Submodule[] = [];
  if (!named.includes('.gitmodules')) {
    if (gitlinks.size > 0) problems.push(`.gitmodules is missing: the ${gitlinks.size} gitlinks have no repository`);
  } else if (allowed.includes('.gitmodules') && textOf('.gitmodules') !== undefined) {
    const config = await tree.configOf('.gitmodules');
    if ('error' in config) problems.push(`.gitmodules: git cannot read it as configuration (${config.error}); no submodule is used`);
    else {
      const read = readSubmodules(config.entries, gitlinks);
      submodules = read.submodules;
      problems.push(...read.problems);
    }
  }

  const cmake = new Map<string, string>();
  const read = new Set(allowed);
  for (const f of cmakeFiles) {
    if (!read.has(f)) continue;
    const t = textOf(f);
    if (t !== undefined) cmake.set(f, t);
  }
  const sub = readSubprojects({ files: cmake, submodules });
  problems.push(...sub.problems);
  unresolved.push(...sub.unresolved);

  let topology: Topology | undefined;
  const topologyText = named.includes('BUILD_TOPOLOGY.toml') ? textOf('BUILD_TOPOLOGY.toml') : undefined;
  if (topologyText !== undefined) {
    const t = readTopology(topologyText);
    topology = t.topology;
    problems.push(...t.problems);
  }
  const artifactsText = named.includes('build_tools/artifact_subprojects.json') ? textOf('build_tools/artifact_subprojects.json') : undefined;
  if (artifactsText !== undefined) {
    const a = readArtifactSubprojects(artifactsText);
    problems.push(...a.problems);
    for (const s of sub.subprojects) {
      const artifacts = a.bySubproject.get(s.name);
      if (artifacts) s.artifacts = artifacts;
    }
  }
  return {
    ref,
    fullRef: tree.ref,
    commit: await tree.commit(),
    ...(version !== undefined ? { version } : {}),
    submodules,
    subprojects: sub.subprojects,
    ...(topology ? { topology } : {}),
    problems,
    unresolved,
    bytes: tree.transferred(),
  };
}
