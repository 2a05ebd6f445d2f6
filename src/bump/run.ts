import { mkdir, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';
import { loadManifestOrFail, stackFor } from '../stack-check/index.js';
import { resolveDistdir } from '../distfiles/index.js';
import { checkedTargetTable, descTargets, eclassPath, extendDesc, renderAmdgpuTargetsDescFor, sameEclassCode, targetsOfReleases } from '../eclass/index.js';
import { applyBugTrailers } from '../git/messages.js';
import { gitIdentity, gitIdentityAndSignatures, gitSignatures, OverlayRepo, type Identity } from '../git/repo.js';
import { lintComponents } from '../lint/component.js';
import { failing, formatText } from '../lint/index.js';
import { releaseEvidence } from '../model/evidence.js';
import type { StackModel } from '../model/resolve.js';
import { requirePackageNames } from '../model/package-names.js';
import { readRecord, RECORD_REF, recordTip } from '../git/generated-record.js';
import { packageCommits } from './package-commits.js';
import { ebuildPath, reconcile, recordPaths, refuseLocalEdits } from './reconcile.js';
import { checkOverlayPath, refuseLinksOut } from '../overlay/paths.js';
import { scanOverlay } from '../overlay/scan.js';
import { formatMaintainer, MAINTAINER_FORMAT, parseMaintainer, SETTINGS_FILE, type MaintainerSetting } from '../overlay/settings.js';
import { describedPackages } from '../plan/left.js';
import { makePlan } from '../plan/plan.js';
import { currentYear, renderEbuild, renderMetadata } from '../render/index.js';
import { checkWritable, plannedPaths } from './check.js';
import { downloadSize, ensureAllDistfiles } from './distfiles.js';
import { gentooEclassUpdate } from './eclass.js';
import { bugRefs } from './inputs.js';
import { leftCandidates, orphanTest } from './left.js';
import { packageSetChanges, packageSetsCommit } from './package-sets.js';
import { refuseDowngrade, refuseGentooTreeclean } from './plan.js';
import { checkLayout } from './read.js';
import { plannedPackages } from './report.js';
import { isDescCommit, scaffoldCommits } from './scaffold.js';
import { existingParent, refuseIgnoredInputs, Session } from './session.js';
import { chooseMaintainer, GENTOO_SETTING, settingsCommit } from './settings.js';
import type { BumpOptions, BumpResult } from './types.js';
import { noteIgnored } from './write.js';

export type { BumpOptions, BumpResult, PackageChange, PlannedPackage } from './types.js';

/**
 * Move an overlay to a ROCm release: plan, render and lint, make sure every
 * distfile is at hand and hashed, then build one commit per package off the
 * branch and move the branch once, at the end. Any failure before that last
 * step leaves the overlay exactly as it was.
 */
export async function runBump(o: BumpOptions): Promise<BumpResult> {
  // Everything that needs no work first: paths, flags, the manifest.
  bugRefs(o);
  const dir = path.resolve(o.overlay);
  const where = await checkOverlayPath(dir, { create: !o.dryRun });
  const requested = o.maintainer !== undefined ? parseMaintainer(o.maintainer) : undefined;
  if (o.maintainer !== undefined && !requested) throw new UserError(`--maintainer ${MAINTAINER_FORMAT}`, ExitCode.invalidInput);
  const manifest = await loadManifestOrFail(o.manifest);
  const model = await stackFor(manifest, o.version);
  const repo = new OverlayRepo(dir);
  const isRepo = where === 'exists' && (await repo.isRepository());
  if (where === 'exists' && !isRepo && (await readdir(dir)).length > 0) {
    throw new UserError(
      `${dir} is not the top directory of a git repository; rocm-ebuild commits to overlays it can roll back\n` +
        'hint: run `git init` there (and commit what it holds), or give a new or empty directory',
      ExitCode.overlayRefused,
    );
  }
  const atoms = model.components.map((c) => c.atom);
  const only = o.packages?.length ? new Set(requirePackageNames(o.packages, atoms, `ROCm ${o.version}`)) : undefined;
  // Every package a component describes is read, not only the release's: one that left it must be seen to be reported or removed.
  const scanned = [...new Set([...atoms, ...describedPackages(manifest).keys()])];

  // Then the overlay's git state, read-only, and the lock before the overlay is read.
  let identity: Identity | undefined;
  let session: Session | undefined;
  if (!o.dryRun) {
    if (isRepo) await repo.branch(); // a detached HEAD is refused before anything is written
    identity = await gitIdentity(isRepo ? dir : await existingParent(dir));
    if (isRepo) session = await Session.open(repo, o.warn);
  }
  try {
    if (session) {
      await repo.requireUnlockedIndex(session.gitDir);
      await repo.requireClean();
      await refuseIgnoredInputs(repo, scanned);
    }
    return await bumpLocked(o, { dir, repo, isRepo, model, atoms: scanned, only, requested, identity, session });
  } finally {
    await session?.close();
  }
}

interface Context {
  dir: string;
  repo: OverlayRepo;
  isRepo: boolean;
  model: StackModel;
  /** The packages the scan reads: the release's and every other one a component describes. */
  atoms: string[];
  /** The packages named on the command line, if any. */
  only: ReadonlySet<string> | undefined;
  requested: MaintainerSetting | undefined;
  identity: Identity | undefined;
  session: Session | undefined;
}

async function bumpLocked(o: BumpOptions, ctx: Context): Promise<BumpResult> {
  const { dir, repo, isRepo, model } = ctx;
  let session = ctx.session;
  // The plan is made from this commit (the worktree is clean, so it holds the same files);
  // the branch moves only if it still points here.
  const planned = isRepo ? await repo.head() : undefined;
  // What the scan reads and the commits write must be the overlay's own files, not a link's target.
  if (isRepo) await refuseLinksOut(dir, ['eclass/rocm.eclass', 'profiles/repo_name', 'profiles/desc/amdgpu_targets.desc', 'metadata/layout.conf', SETTINGS_FILE, ...ctx.atoms.map((a) => `${a}/Manifest`)]);
  const state = await scanOverlay(dir, ctx.atoms);
  checkLayout(state);
  // ::gentoo itself: nothing of rocm-ebuild's own goes into it, its files are extended, never rewritten.
  const gentoo = state.repoName === 'gentoo';
  const ourEclass = await readFile(eclassPath, 'utf8');
  if (gentoo) {
    const configured = isRepo ? (await repo.raw(['config', '--get', GENTOO_SETTING]).catch(() => '')).trim() : '';
    state.settings = configured ? `maintainer = ${configured}\n` : undefined;
  // Who maintains the overlay's copy is the overlay's business; its code is ours.
  } else if (state.eclass !== undefined && !sameEclassCode(state.eclass, ourEclass)) {
    o.warn(
      `${path.join(dir, 'eclass/rocm.eclass')} differs from the rocm.eclass these ebuilds are generated for; ` +
        `it is left as it is: compare it with ${eclassPath} and commit the update if it is older`,
    );
  }
  const left = await leftCandidates(model, state);
  const plan = makePlan(model, state, {
    dropOld: o.dropOld,
    ...(ctx.only ? { only: ctx.only } : {}),
    left,
    orphaned: await orphanTest(model, state, left),
  });
  // ::gentoo ships no repository sets (sets.conf has no place there): `rocm-ebuild set` prints them instead.
  if (gentoo) plan.scaffold = plan.scaffold.filter((s) => s.what !== 'package-sets');
  if (plan.newer.length > 0 && !o.allowDowngrade) refuseDowngrade(plan);
  // ::gentoo removes a package only after its last rites: never in a bump.
  if (gentoo && plan.left.some((l) => l.action === 'treeclean')) refuseGentooTreeclean(dir, plan);
  // amdgpu_targets.desc follows the releases the overlay holds after this bump:
  // a target no ebuild offers is pkgcheck's UnusedGlobalUseExpand, a new
  // release's target missing from it an undescribed flag.
  const descStep = plan.scaffold.find((s) => s.what === 'targets-desc');
  let descShrinks = false;
  if (descStep?.action === 'keep' && state.targetsDesc !== undefined && (gentoo || ctx.only)) {
    // ::gentoo's file (or a bump of named packages only): the targets it lacks are added, nothing else changes.
    const ours = renderAmdgpuTargetsDescFor(await checkedTargetTable(model.manifest.targetsFile), descStep.releases ?? [plan.version], currentYear());
    const extended = extendDesc(state.targetsDesc, ours);
    if (extended) {
      descStep.action = 'update';
      descStep.extended = extended;
    }
  } else if (descStep?.action === 'keep' && state.targetsDesc !== undefined) {
    const want = targetsOfReleases(await checkedTargetTable(model.manifest.targetsFile), descStep.releases ?? [plan.version]);
    const have = descTargets(state.targetsDesc);
    if (want.join(' ') !== have.join(' ')) {
      descStep.action = 'update';
      descShrinks = want.every((t) => have.includes(t));
    }
  }
  // The package sets follow the newest release the overlay holds after this bump.
  const sets = await packageSetChanges(plan, model, state);
  const refs = bugRefs(o);
  const changing = new Set(plan.entries.filter((e) => e.action !== 'keep').map((e) => e.atom));
  const stray = [...refs.bug, ...refs.closes].filter((r) => r.atom !== undefined && !changing.has(r.atom)).map((r) => r.atom!);
  if (stray.length > 0) {
    throw new UserError(`--bug/--closes name ${[...new Set(stray)].join(', ')}, which this bump does not commit`, ExitCode.invalidInput);
  }
  const creating = plan.scaffold.some((s) => s.what === 'repository' && s.action === 'add');
  const identity = ctx.identity ?? (await gitIdentity(isRepo ? dir : await existingParent(dir)).catch(() => undefined));
  const maintainer = chooseMaintainer(state, ctx.requested, creating, identity, model, o.dryRun, gentoo ? `git config ${GENTOO_SETTING}` : SETTINGS_FILE);
  // Render every new ebuild, then read what the overlay holds of the planned packages:
  // revisions to bump, hand edits to carry forward or refuse to lose.
  const year = currentYear();
  const adds = plan.entries.filter((e) => e.action === 'add');
  const rendered = new Map(adds.map((e) => [e.atom, renderEbuild(e.component, model, { year })]));
  const recordAt = isRepo ? await recordTip(repo) : undefined;
  const record = isRepo ? await readRecord(repo, recordAt, recordPaths(plan, state)) : new Map<string, string>();
  const { works, refusals, warnings } = await reconcile({ plan, model, state, record, rendered, year, discardLocal: o.discardLocal ?? false });
  if (refusals.length > 0) refuseLocalEdits(refusals);
  const result: BumpResult = {
    version: o.version,
    overlay: dir,
    dryRun: o.dryRun,
    committed: false,
    scaffold: plan.scaffold,
    maintainer: { maintainers: maintainer.maintainers, source: maintainer.source },
    evidence: releaseEvidence(model.components),
    packages: plannedPackages(plan, works).map((p) => {
      const c = p.action === 'drop' || p.action === 'treeclean' ? undefined : model.byAtom.get(p.atom);
      return c ? { ...p, evidence: c.evidence.level } : p;
    }),
    left: plan.left.map((l) => ({ atom: l.atom, versions: l.versions, reason: l.reason, action: l.action, removed: l.remove })),
    changes: works
      .filter((w) => w.revbump || w.carried || w.discarded.length > 0)
      .map((w) => ({
        atom: w.atom,
        version: w.write?.version ?? w.remove.join(', '),
        ...(w.revbump ? { revbump: w.revbump } : {}),
        ...(w.carried ? { carried: w.carried } : {}),
        discarded: w.discarded,
        removedFiles: [],
      })),
    notes: warnings,
    commits: [],
    distfiles: [],
  };
  for (const w of warnings) o.warn(w);
  if (o.dryRun) {
    result.download = downloadSize(works, state, resolveDistdir(o.distdir));
    return result;
  }
  if (isRepo) result.branch = (await repo.branch()).replace(/^refs\/heads\//, '');
  // ::gentoo keeps the setting in the clone's git config, never in a commit.
  const saveSettings = maintainer.save !== undefined && !creating && !gentoo;
  const configSetting = gentoo && maintainer.save !== undefined ? maintainer.save : undefined;
  if (works.length === 0 && !creating && !saveSettings && plan.scaffold.every((s) => s.action === 'keep')) {
    if (configSetting) await repo.raw(['config', GENTOO_SETTING, formatMaintainer(configSetting)]);
    return result;
  }

  // Check every ebuild this bump writes (generated, or with hand edits merged in) before anything is fetched or written.
  const writes = works.filter((w) => w.write);
  const metadata = new Map(
    writes.filter((w) => !state.packages.get(w.atom)?.hasMetadata).map((w) => [w.atom, renderMetadata(w.component, model, { maintainers: maintainer.maintainers })]),
  );
  const lints = await lintComponents(
    writes.map((w) => w.component),
    model,
    (c) => {
      const w = writes.find((x) => x.atom === c.atom)!;
      return { year, text: w.write!.text, metadata: metadata.get(c.atom) ?? renderMetadata(c, model, { maintainers: maintainer.maintainers }), tools: { shellcheck: false } };
    },
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

  // Every directory the bump will write to must be writable, before anything is fetched.
  if (isRepo) await checkWritable(dir, plannedPaths(plan, works, saveSettings));

  const fetched = await ensureAllDistfiles(writes, state, o);
  result.distfiles = fetched.results.map((r) => ({ name: r.name, status: r.status, ...(r.entry ? { size: r.entry.size } : {}) }));

  if (!isRepo) {
    // A new overlay: created only now that everything that can fail has passed.
    await mkdir(dir, { recursive: true });
    const created = !(await repo.isRepository());
    if (created) await repo.init();
    session = await Session.open(repo, o.warn, { created });
    result.branch = (await repo.branch()).replace(/^refs\/heads\//, '');
  }
  try {
    // Commits carry the identity git gives in the overlay itself (its config may set one).
    const fresh = isRepo ? undefined : await gitIdentityAndSignatures(dir);
    const signer = fresh?.identity ?? ctx.identity!;
    const packages = await packageCommits({
      works,
      state,
      model,
      entries: fetched.entries,
      metadata,
      identity: signer,
      separateDrops: o.separateDrops ?? false,
    });
    for (const r of packages.removedFiles) {
      const change = result.changes.find((c) => c.atom === r.atom);
      if (change) change.removedFiles = r.files;
      else result.changes.push({ atom: r.atom, version: works.find((w) => w.atom === r.atom)?.write?.version ?? '', discarded: [], removedFiles: r.files });
    }
    const scaffold = await scaffoldCommits(plan, model, signer, year, creating ? maintainer.save : undefined, maintainer.maintainers);
    // ::gentoo's rocm.eclass stays unless these ebuilds use names it lacks: then the update is its own first commit.
    const eclassUpdate = gentoo && state.eclass !== undefined && state.eclass !== ourEclass ? gentooEclassUpdate(state.eclass, ourEclass, writes, signer, o.version) : undefined;
    if (eclassUpdate) {
      o.warn(`::gentoo's eclass/rocm.eclass lacks ${eclassUpdate.missing.join(', ')}, which these ebuilds use: its update is the first commit ("${eclassUpdate.commit.message.split('\n')[0]}"); eclass changes to ::gentoo go to the gentoo-dev mailing list for review`);
      result.notes.push(`eclass/rocm.eclass updated in its own first commit: the ebuilds use ${eclassUpdate.missing.join(', ')}`);
    }
    // A desc that only loses targets changes after the drops, so that every
    // commit still describes the targets its ebuilds offer.
    const lateDesc = descStep?.action === 'update' && descShrinks ? scaffold.splice(scaffold.findIndex(isDescCommit), 1) : [];
    // New sets are scaffolding, as the desc file is; changed ones come after
    // the packages they name, and carry no bug trailers.
    const setsCommit = sets ? [packageSetsCommit(sets, signer)] : [];
    const newSets = plan.scaffold.some((s) => s.what === 'package-sets' && s.action === 'add');
    const commits = [
      ...(eclassUpdate ? [eclassUpdate.commit] : []),
      ...scaffold,
      ...(newSets ? setsCommit : []),
      ...(saveSettings ? [settingsCommit(maintainer.save!, signer)] : []),
      ...packages.commits,
      ...lateDesc,
    ];
    applyBugTrailers(commits, refs);
    if (!newSets) commits.push(...setsCommit);
    result.commits = commits.map((c) => ({ subject: c.message.split('\n')[0]!, files: c.changes.map((x) => x.path) }));
    await noteIgnored(repo, commits, o);

    const builder = session!.builder!;
    const recordFiles = writes.map((w) => ({ path: ebuildPath(w.atom, w.write!.version), content: w.write!.generated }));
    const tip = await builder.build(planned, commits, fresh?.signatures ?? (await gitSignatures(dir)), {
      onCommit: (done, total) => o.progress.step(done, total, result.commits[done - 1]!.subject),
      record: { parent: recordAt, message: `rocm-ebuild: generated for ROCm ${o.version}\n`, files: recordFiles },
    });
    o.progress.done();
    session!.landing = true;
    const branchRef = `refs/heads/${result.branch}`;
    const recordRef = { ref: RECORD_REF, old: recordAt };
    if (o.commit) {
      await builder.land(branchRef, planned, tip, recordRef);
      result.committed = true;
      result.head = tip;
    } else {
      await builder.applyToWorktree(branchRef, planned, tip, recordRef);
    }
    if (configSetting) await repo.raw(['config', GENTOO_SETTING, formatMaintainer(configSetting)]);
  } finally {
    if (!isRepo) await session?.close();
  }
  if (session!.interrupted) {
    const signal = session!.interrupted;
    await session!.close();
    process.stderr.write(`rocm-ebuild: interrupted by ${signal} after the bump landed\n`);
    process.exit(signal === 'SIGINT' ? 130 : 143);
  }
  return result;
}
