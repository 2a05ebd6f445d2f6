import path from 'node:path';
import type { ManifestIssue } from '../manifest/issues.js';
import { jsonPath, locate } from '../manifest/yaml-source.js';
import { issueAt, type ResolvedComponent, type StackModel } from '../model/resolve.js';
import { inRange } from '../model/version.js';
import { projectKey } from '../model/sources/index.js';
import type { CheckContext } from './context.js';

/**
 * Whether one of the component's sources is the project: its GitHub
 * repository, or its release asset in a monorepo (rocBLAS is `rocblas.tar.gz`
 * of rocm-libraries, composable_kernel `composablekernel.tar.gz`).
 */
function buildsFrom(c: ResolvedComponent, project: string): boolean {
  const key = projectKey(project);
  return c.sources.some((s) => s.location.project !== undefined && projectKey(s.location.project) === key);
}

/**
 * Every project in AMD's release manifests must be packaged by a component or
 * excluded with a reason. A project may be split into several packages
 * (llvm-project's device-libs, comgr and hipcc; clr's HIP and OpenCL
 * runtimes), but then each of them builds from it; a second claim by a
 * component that does not fetch the project is a copy-and-paste mistake that
 * would hide a project nobody packages. Reported once per project, naming
 * the releases concerned.
 */
export function checkProjects(models: StackModel[], ctx: CheckContext): ManifestIssue[] {
  if (models.length === 0) return [];
  const { stack, stackSource } = ctx.manifest;
  // A broken `excluded:` list would make every excluded project look missing.
  const exclusionsKnown = !ctx.broken.stackKeys.has('excluded');
  // A broken component may package projects we cannot see.
  const claimsKnown = ctx.broken.components.every((b) => b.projects !== undefined || b.name !== undefined);
  const brokenClaims = new Set(ctx.broken.components.flatMap((b) => b.projects ?? (b.name ? [b.name] : [])));
  const missing = new Map<string, string[]>();
  const unknown = new Map<string, { c: ResolvedComponent; releases: string[] }>();
  const twice = new Map<string, { c: ResolvedComponent; other: ResolvedComponent; fetched: boolean; releases: string[] }>();
  for (const model of models) {
    const version = model.release.version;
    const claimants = new Map<string, ResolvedComponent[]>();
    for (const c of model.components) {
      for (const p of c.spec.projects ?? [c.name]) claimants.set(p, [...(claimants.get(p) ?? []), c]);
    }
    const packaged = new Map<string, ResolvedComponent>();
    for (const [p, list] of claimants) {
      packaged.set(p, list[0]!);
      if (list.length < 2 || list.every((c) => buildsFrom(c, p))) continue;
      // Blame the claims that do not fetch the project; when none does, every claim after the first.
      const builders = list.filter((c) => buildsFrom(c, p));
      const blamed = builders.length > 0 ? list.filter((c) => !buildsFrom(c, p)) : list.slice(1);
      const other = builders[0] ?? list[0]!;
      for (const c of blamed) {
        const key = `${p}\u0000${c.atom}`;
        const seen = twice.get(key) ?? { c, other, fetched: builders.length > 0, releases: [] };
        seen.releases.push(version);
        twice.set(key, seen);
      }
    }
    const listed = stack.projects?.[version];
    if (!listed) continue;
    const excluded = new Set((stack.excluded ?? []).filter((e) => inRange(version, e.releases)).map((e) => e.project));
    for (const p of listed) {
      if (packaged.has(p) || excluded.has(p) || brokenClaims.has(p)) continue;
      if (!exclusionsKnown || !claimsKnown) continue;
      missing.set(p, [...(missing.get(p) ?? []), version]);
    }
    for (const [p, c] of packaged) {
      if (!listed.includes(p)) {
        const seen = unknown.get(p) ?? { c, releases: [] };
        seen.releases.push(version);
        unknown.set(p, seen);
      }
    }
  }
  const issues: ManifestIssue[] = [];
  const all = models.map((m) => m.release.version);
  const where = (releases: string[]) => (releases.length === all.length ? '' : ` (in ${releases.join(', ')})`);
  for (const [p, releases] of missing) {
    const first = releases[0]!;
    const at = ['projects', first, stack.projects![first]!.indexOf(p)];
    issues.push({
      file: stackSource.file,
      ...locate(stackSource, at),
      path: jsonPath(at),
      message: `AMD project ${p} is neither packaged by a component nor excluded${where(releases)}`,
      hint: "add it to a component's `projects:` or to `excluded:` with the reason",
    });
  }
  for (const [p, { c, releases }] of unknown) {
    issues.push(issueAt(c, ['projects'], `project ${p} is not in AMD's manifest${where(releases)}`, 'check the spelling against the release manifest'));
  }
  for (const [key, { c, other, fetched, releases }] of twice) {
    const p = key.split('\u0000')[0]!;
    const at = c.spec.projects ? ['projects', c.spec.projects.indexOf(p)] : ['name'];
    const by = path.relative(ctx.manifest.dir, other.loaded.source.file);
    issues.push(
      issueAt(
        c,
        at,
        fetched
          ? `AMD project ${p} is packaged by ${by}, which builds from it; this component does not fetch ${p}${where(releases)}`
          : `AMD project ${p} is already packaged by ${by}${where(releases)}`,
        fetched
          ? 'list under `projects:` only the projects this package is built from'
          : `list it in one component only, or fetch ${p} in each if the project is split into several packages`,
      ),
    );
  }
  return issues;
}
