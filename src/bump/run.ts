import { mkdir, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';
import type { Progress } from '../util/progress.js';
import { loadManifestOrFail, stackFor } from '../cli/stack.js';
import {
  describeProblem,
  ensureDistfiles,
  parseManifest,
  resolveDistdir,
  type DistfileNeed,
  type DistfileProgress,
  type DistfileResult,
  type ManifestEntry,
} from '../distfiles/index.js';
import { eclassPath, loadTargetTable, renderAmdgpuTargetsDesc } from '../eclass/index.js';
import { addSummary, commitMessage, dropSummary } from '../git/messages.js';
import { gitIdentity, OverlayRepo } from '../git/repo.js';
import { CommitBuilder, type CommitSpec } from '../git/transaction.js';
import { lintComponents } from '../lint/component.js';
import { failing, formatText } from '../lint/index.js';
import { resolveComponent, type StackModel } from '../model/resolve.js';
import { withoutRevision } from '../model/version.js';
import { addChanges, dropChanges } from '../overlay/changes.js';
import { scanOverlay, type OverlayState } from '../overlay/scan.js';
import { makePlan, type Plan, type PlanEntry, type ScaffoldStep } from '../plan/plan.js';
import { currentYear, renderEbuild, renderLayoutConf, renderMetadata } from '../render/index.js';

export interface BumpOptions {
  version: string;
  overlay: string;
  manifest?: string;
  distdir?: string;
  offline: boolean;
  dropOld: boolean;
  dryRun: boolean;
  /** false with --no-commit: leave the changes in the worktree. */
  commit: boolean;
  jobs?: number;
  timeoutMs?: number;
  retries?: number;
  mirrors: string[];
  progress: Progress;
  distfileProgress?: DistfileProgress;
  warn(message: string): void;
}

export interface PlannedPackage {
  atom: string;
  version: string;
  action: 'add' | 'keep' | 'drop';
  newPackage: boolean;
  distfiles: { name: string; urls: string[]; when?: string }[];
}

export interface BumpResult {
  version: string;
  overlay: string;
  dryRun: boolean;
  committed: boolean;
  branch?: string;
  head?: string;
  scaffold: ScaffoldStep[];
  packages: PlannedPackage[];
  commits: { subject: string; files: string[] }[];
  distfiles: { name: string; status: string; size?: number }[];
}

/** The plan as --json shows it: drops expanded to one entry per ebuild version. */
export function plannedPackages(plan: Plan): PlannedPackage[] {
  return plan.entries.flatMap<PlannedPackage>((e) =>
    e.action === 'drop'
      ? (e.versions ?? []).map((v) => ({ atom: e.atom, version: v, action: 'drop' as const, newPackage: false, distfiles: [] }))
      : [{ atom: e.atom, version: e.version, action: e.action, newPackage: e.action === 'add' && e.newPackage, distfiles: e.distfiles }],
  );
}

function checkLayout(state: OverlayState): void {
  const layout = state.layout;
  if (!layout) return;
  const problems: string[] = [];
  if (layout.get('thin-manifests') !== 'true') problems.push('thin-manifests = true');
  const hashes = (layout.get('manifest-hashes') ?? '').split(/\s+/);
  if (!hashes.includes('BLAKE2B') || !hashes.includes('SHA512')) problems.push('manifest-hashes = BLAKE2B SHA512');
  if (problems.length > 0) {
    throw new UserError(
      `${path.join(state.dir, 'metadata/layout.conf')} must have ${problems.join(' and ')}: the Manifests rocm-ebuild writes are thin, with BLAKE2B and SHA512 hashes`,
      ExitCode.overlayRefused,
    );
  }
}

/**
 * Move an overlay to a ROCm release: plan, render and lint, make sure every
 * distfile is at hand and hashed, then build one commit per package off the
 * branch and move the branch once, at the end. Any failure before that last
 * step leaves the overlay exactly as it was.
 */
export async function runBump(o: BumpOptions): Promise<BumpResult> {
  const manifest = await loadManifestOrFail(o.manifest);
  const model = await stackFor(manifest, o.version);
  if (!model.release.verified) {
    o.warn(`release ${o.version} is not marked verified in ${manifest.file}: the component data was checked against another 6.2 release; review the ebuilds`);
  }
  const dir = path.resolve(o.overlay);
  const state = await scanOverlay(dir, model.components.map((c) => c.atom));
  const repo = new OverlayRepo(dir);
  const isRepo = state.exists && (await repo.isRepository());
  if (state.exists && !isRepo && (await readdir(dir)).length > 0) {
    throw new UserError(
      `${dir} is not the top directory of a git repository; rocm-ebuild commits to overlays it can roll back`,
      ExitCode.overlayRefused,
      { hint: 'run `git init` there (and commit what it holds), or give a new or empty directory' },
    );
  }
  if (isRepo && !o.dryRun) await repo.requireClean();
  checkLayout(state);
  if (state.eclass !== undefined && state.eclass !== (await readFile(eclassPath, 'utf8'))) {
    o.warn(
      `${path.join(dir, 'eclass/rocm.eclass')} differs from the rocm.eclass these ebuilds are generated for; ` +
        `it is left as it is: compare it with ${eclassPath} and commit the update if it is older`,
    );
  }
  const plan = makePlan(model, state, { dropOld: o.dropOld });
  const result: BumpResult = {
    version: o.version,
    overlay: dir,
    dryRun: o.dryRun,
    committed: false,
    scaffold: plan.scaffold,
    packages: plannedPackages(plan),
    commits: [],
    distfiles: [],
  };
  if (o.dryRun) return result;

  const identity = await gitIdentity(isRepo ? dir : process.cwd());
  const branch = isRepo ? await repo.branch() : 'refs/heads/main';
  result.branch = branch.replace(/^refs\/heads\//, '');
  const adds = plan.entries.filter((e) => e.action === 'add');
  const drops = plan.entries.filter((e) => e.action === 'drop');
  if (adds.length === 0 && drops.length === 0 && plan.scaffold.every((s) => s.action === 'keep')) return result;

  // Render and check every new ebuild before anything is fetched or written.
  const year = currentYear();
  const rendered = new Map<string, { ebuild: string; metadata: string }>();
  for (const e of adds) {
    rendered.set(e.atom, { ebuild: renderEbuild(e.component, model, { year }), metadata: renderMetadata(e.component, model) });
  }
  const lints = await lintComponents(
    adds.map((e) => e.component),
    model,
    (c) => ({ year, ...rendered.get(c.atom)!, text: rendered.get(c.atom)!.ebuild, tools: { shellcheck: false } }),
  );
  const lintProblems: string[] = [];
  for (const lint of lints) {
    const bad = failing(lint.results);
    if (bad.length > 0 || lint.tools.length > 0) {
      lintProblems.push(formatText(bad).trimEnd(), ...lint.tools.map((t) => `  ${lint.file}:${t.line ?? '?'}: ${t.message}`));
    }
  }
  if (lintProblems.length > 0) {
    throw new UserError(`generated ebuilds fail QA checks; nothing was written:\n${lintProblems.join('\n')}`, ExitCode.qaFailed);
  }

  const fetched = await ensureAllDistfiles(adds, state, o);
  result.distfiles = fetched.results.map((r) => ({ name: r.name, status: r.status, ...(r.entry ? { size: r.entry.size } : {}) }));

  const addCommits = adds.map((e) => packageAddCommit(e, state, rendered.get(e.atom)!, fetched.entries, identity));
  // Drops come after the adds: they start from the Manifests the adds wrote.
  const afterAdds = withChanges(state, addCommits);
  const commits = [
    ...(await scaffoldCommits(plan, model, identity, year)),
    ...addCommits,
    ...(await packageDropCommits(drops, afterAdds, model, identity)),
  ];
  result.commits = commits.map((c) => ({ subject: c.message.split('\n')[0]!, files: c.changes.map((x) => x.path) }));

  if (!state.exists || !isRepo) {
    await mkdir(dir, { recursive: true });
    await repo.init();
  }
  const head = await repo.head();
  const builder = new CommitBuilder(repo);
  await builder.begin();
  // Interrupted while building, stop without touching the branch; once the
  // branch is moving (milliseconds), let it finish and exit afterwards.
  let landing = false;
  let interrupted: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    interrupted = signal;
    if (landing) return;
    builder.abortSync();
    process.stderr.write(`\nrocm-ebuild: interrupted by ${signal}; the overlay is unchanged\n`);
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const tip = await builder.build(head, commits, identity, {
      onCommit: (done, total) => o.progress.step(done, total, result.commits[done - 1]!.subject),
    });
    o.progress.done();
    landing = true;
    if (o.commit) {
      await builder.land(isRepo ? branch : (await repo.branch()), head, tip);
      result.committed = true;
      result.head = tip;
    } else {
      await builder.applyToWorktree(head, tip);
    }
  } finally {
    await builder.end();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  if (interrupted) {
    process.stderr.write(`rocm-ebuild: interrupted by ${interrupted} after the bump landed\n`);
    process.exit(interrupted === 'SIGINT' ? 130 : 143);
  }
  return result;
}

/** The overlay state as it will be after `commits`, for what the scan records (Manifests, versions). */
function withChanges(state: OverlayState, commits: CommitSpec[]): OverlayState {
  const packages = new Map([...state.packages].map(([atom, p]) => [atom, { ...p, versions: [...p.versions] }]));
  for (const change of commits.flatMap((c) => c.changes)) {
    const [category, pn, file] = change.path.split('/');
    if (!category || !pn || !file) continue;
    const atom = `${category}/${pn}`;
    const pkg = packages.get(atom) ?? { atom, versions: [], hasMetadata: false, files: [] };
    packages.set(atom, pkg);
    if (file === 'Manifest') {
      if (change.content === null) delete pkg.manifest;
      else pkg.manifest = change.content.toString();
    } else if (file === 'metadata.xml') {
      pkg.hasMetadata = change.content !== null;
    }
  }
  return { ...state, packages };
}

async function ensureAllDistfiles(
  adds: PlanEntry[],
  state: OverlayState,
  o: BumpOptions,
): Promise<{ results: DistfileResult[]; entries: Map<string, ManifestEntry> }> {
  const needs = new Map<string, DistfileNeed>();
  for (const e of adds) {
    const pkg = state.packages.get(e.atom);
    const known = pkg?.manifest !== undefined ? parseManifest(pkg.manifest, `${e.atom}/Manifest`) : [];
    for (const d of e.component.distfiles) {
      const need = needs.get(d.name) ?? { name: d.name, urls: d.urls, neededBy: [] };
      need.neededBy.push({ atom: e.atom, ebuild: `${e.component.pn}-${e.version}.ebuild` });
      const expected = known.find((k) => k.name === d.name);
      if (expected) need.expected = expected;
      needs.set(d.name, need);
    }
  }
  const results = await ensureDistfiles([...needs.values()], {
    distdir: resolveDistdir(o.distdir),
    offline: o.offline,
    mirrors: o.mirrors,
    ...(o.jobs !== undefined ? { jobs: o.jobs } : {}),
    ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}),
    ...(o.retries !== undefined ? { retries: o.retries } : {}),
    ...(o.distfileProgress ? { progress: o.distfileProgress } : {}),
  });
  const missing = results.filter((r) => r.status === 'missing');
  const failed = results.filter((r) => r.status === 'failed');
  if (missing.length > 0 || failed.length > 0) {
    const distdir = resolveDistdir(o.distdir);
    const lines = [...missing, ...failed].map((r) =>
      r.status === 'missing'
        ? `  ${r.name} (missing; needed by ${r.neededBy.map((n) => `${n.atom}/${n.ebuild}`).join(', ')})`
        : describeProblem(r).replace(/^/gm, '  '),
    );
    const how = missing.length > 0
      ? `Put the files into ${distdir} (or point --distdir at a directory holding them)${o.offline ? ', or run without --offline to download them' : ''}.`
      : 'Files fetched so far stay in the distdir; run the bump again to fetch only what is missing.';
    throw new UserError(
      `${missing.length + failed.length} distfile${missing.length + failed.length === 1 ? '' : 's'} ${failed.length ? 'could not be fetched or verified' : 'missing'}; nothing was written to the overlay:\n${lines.join('\n')}\n${how}`,
      failed.length > 0 ? ExitCode.fetchFailed : ExitCode.missingDistfiles,
      { distdir, missing: missing.map((r) => ({ name: r.name, urls: needs.get(r.name)!.urls, neededBy: r.neededBy })), failed },
    );
  }
  return { results, entries: new Map(results.map((r) => [r.name, r.entry!])) };
}

async function scaffoldCommits(
  plan: Plan,
  model: StackModel,
  identity: { name: string; email: string },
  year: number,
): Promise<CommitSpec[]> {
  const commits: CommitSpec[] = [];
  const repoName = model.manifest.stack.repo_name;
  for (const step of plan.scaffold) {
    if (step.action !== 'add') continue;
    if (step.what === 'repository') {
      commits.push({
        message: commitMessage(
          `profiles, metadata: new repository ${repoName}`,
          identity,
          `An overlay for the ROCm stack on top of ::gentoo, with thin Manifests (BLAKE2B, SHA512), written by rocm-ebuild.`,
        ),
        changes: [
          { path: 'profiles/repo_name', content: `${repoName}\n` },
          { path: 'metadata/layout.conf', content: renderLayoutConf(repoName, false) },
        ],
      });
    }
    if (step.what === 'targets-desc') {
      const table = await loadTargetTable(model.manifest.targetsFile);
      commits.push({
        message: commitMessage('profiles/desc: add amdgpu_targets.desc', identity),
        changes: [{ path: 'profiles/desc/amdgpu_targets.desc', content: renderAmdgpuTargetsDesc(table, year) }],
      });
    }
    if (step.what === 'eclass') {
      commits.push({
        message: commitMessage(
          'rocm.eclass: new eclass',
          identity,
          'GPU targets per ROCm release from data, target coherence through ROCM_USEDEP, and HIP builds with vanilla LLVM/clang.',
        ),
        changes: [{ path: 'eclass/rocm.eclass', content: await readFile(eclassPath, 'utf8') }],
      });
    }
  }
  return commits;
}

function packageAddCommit(
  e: PlanEntry,
  state: OverlayState,
  rendered: { ebuild: string; metadata: string },
  entries: Map<string, ManifestEntry>,
  identity: { name: string; email: string },
): CommitSpec {
  const own = e.component.distfiles.map((d) => entries.get(d.name)!);
  return {
    message: commitMessage(addSummary(e.atom, e.version, e.newPackage), identity),
    changes: addChanges(e, state.packages.get(e.atom), rendered, own),
  };
}

/** Drops: remove old ebuilds and the Manifest lines no remaining version needs. */
async function packageDropCommits(
  drops: PlanEntry[],
  state: OverlayState,
  model: StackModel,
  identity: { name: string; email: string },
): Promise<CommitSpec[]> {
  const commits: CommitSpec[] = [];
  for (const e of drops) {
    const pkg = state.packages.get(e.atom)!;
    const distfilesAt = async (version: string): Promise<string[] | undefined> => {
      const release = withoutRevision(version);
      if (!model.manifest.stack.releases[release]) return undefined;
      const other = release === model.release.version ? model : await stackFor(model.manifest, release);
      return resolveComponent(model.manifest, e.component.loaded, other.release)?.distfiles.map((d) => d.name);
    };
    const dropped = new Set<string>();
    for (const v of e.versions ?? []) for (const n of (await distfilesAt(v)) ?? []) dropped.add(n);
    const remaining = [...pkg.versions.filter((v) => !(e.versions ?? []).includes(v)), model.release.version];
    for (const v of remaining) {
      const names = await distfilesAt(v);
      if (names) for (const n of names) dropped.delete(n);
      // An ebuild the manifest knows nothing about keeps every entry that names its version.
      else for (const n of [...dropped]) if (n.includes(withoutRevision(v))) dropped.delete(n);
    }
    commits.push({
      message: commitMessage(dropSummary(e.atom, (e.versions ?? []).map(withoutRevision)), identity),
      changes: dropChanges(e, pkg, dropped),
    });
  }
  return commits;
}
