import type { Manifest } from '../../manifest/load.js';
import { projectKey } from '../../model/sources/index.js';
import { inRange } from '../../model/version.js';
import { gitTreeAt, type GitAccess } from '../trees/git-tree.js';
import { repositoryUrl } from '../trees/locations.js';
import { resolveAt } from '../trees/sources.js';
import { TreeError } from '../trees/source-tree.js';

/** One project directory of a monorepo at a release tag, and who accounts for it. */
export interface MonorepoProject {
  /** "projects/rocblas", "shared/tensile". */
  dir: string;
  /** Atoms of the components that build from it in the release. */
  packagedBy: string[];
  /** The exclusion's reason, when the manifest excludes a project of that name. */
  excluded?: string;
  accounted: boolean;
}

export interface MonorepoReport {
  /** owner/name */
  repo: string;
  tag: string;
  projects: MonorepoProject[];
  /** Bytes fetched to list it (its trees only: no file is read). */
  bytes: number;
  error?: string;
}

/** Top-level project directories AMD's monorepos keep their projects in. */
const PROJECT_ROOTS = ['projects', 'shared'];

/**
 * AMD's monorepos (rocm-libraries, rocm-systems) release each project as its
 * own asset from 7.2.0, so a release's project list is partly their
 * directories: for every monorepo a component of the release builds from,
 * its `projects/*` and `shared/*` at the release tag against the manifest
 * (the components whose release asset is that directory, or whose project
 * names match it; the exclusions). Only trees are fetched.
 */
export async function monorepoProjects(manifest: Manifest, version: string, o: GitAccess & { baseUrl: string }): Promise<MonorepoReport[]> {
  const repos = new Map<string, { tag: string; builders: Map<string, string[]> }>();
  const claims: { atom: string; projects: string[] }[] = [];
  for (const loaded of manifest.components) {
    const c = resolveAt(manifest, loaded, version);
    if (!c) continue;
    claims.push({ atom: c.atom, projects: c.spec.projects ?? [c.name] });
    for (const s of c.sources) {
      const l = s.location;
      if (s.spec.release_asset === undefined || !l.repo || !l.tag || !l.path) continue;
      const r = repos.get(l.repo) ?? { tag: l.tag, builders: new Map<string, string[]>() };
      r.builders.set(l.path, [...new Set([...(r.builders.get(l.path) ?? []), c.atom])]);
      repos.set(l.repo, r);
    }
  }
  const exclusions = (manifest.stack.excluded ?? []).filter((e) => inRange(version, e.releases));
  const out: MonorepoReport[] = [];
  for (const [repo, { tag, builders }] of [...repos].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    try {
      const tree = await gitTreeAt(repositoryUrl(repo, o.baseUrl), tag, `${repo} ${tag}`, o, undefined, { partial: true });
      const dirs = new Set<string>();
      for (const f of await tree.files()) {
        const [root, name] = f.split('/');
        if (root !== undefined && name !== undefined && PROJECT_ROOTS.includes(root) && f.split('/').length > 2) dirs.add(`${root}/${name}`);
      }
      const projects = [...dirs].sort().map((dir): MonorepoProject => {
        const key = projectKey(dir.split('/')[1]!);
        const packagedBy = [...new Set([...(builders.get(dir) ?? []), ...claims.filter((c) => c.projects.some((p) => projectKey(p) === key)).map((c) => c.atom)])].sort();
        const excluded = exclusions.find((e) => projectKey(e.project) === key)?.reason.replace(/\s+/g, ' ').trim();
        return { dir, packagedBy, ...(excluded !== undefined ? { excluded } : {}), accounted: packagedBy.length > 0 || excluded !== undefined };
      });
      out.push({ repo, tag, projects, bytes: tree.transferred() });
    } catch (err) {
      if (!(err instanceof TreeError)) throw err;
      out.push({ repo, tag, projects: [], bytes: 0, error: err.message });
    }
  }
  return out;
}
