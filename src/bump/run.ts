import { existsSync, statSync } from 'node:fs';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';
import type { Progress } from '../util/progress.js';
import { loadManifestOrFail, stackFor } from '../stack-check/index.js';
import { renderPackageSets, SETS_CONF, SETS_DIR } from '../stack-check/package-set.js';
import {
  describeProblems,
  ensureDistfiles,
  parseManifest,
  resolveDistdir,
  type DistfileNeed,
  type DistfileProgress,
  type DistfileResult,
  type ManifestEntry,
} from '../distfiles/index.js';
import {
  checkedTargetTable,
  descTargets,
  eclassApiNames,
  eclassForMaintainers,
  eclassPath,
  extendDesc,
  renderAmdgpuTargetsDescFor,
  sameEclassCode,
  targetsOfReleases,
  usedApiNames,
} from '../eclass/index.js';
import { applyBugTrailers, commitMessage, parseBugRef, type BugRef } from '../git/messages.js';
import { gitIdentity, gitIdentityAndSignatures, gitSignatures, OverlayRepo, type Identity, type Person } from '../git/repo.js';
import { CommitBuilder, type CommitSpec } from '../git/transaction.js';
import { OverlayLock } from '../git/lock.js';
import { recoverInterrupted } from '../git/worktree.js';
import { lintComponents } from '../lint/component.js';
import { failing, formatText } from '../lint/index.js';
import { releaseEvidence, type EvidenceLevel, type ReleaseEvidence } from '../model/evidence.js';
import { inRelease, knownReleases, type ResolvedComponent, type StackModel } from '../model/resolve.js';
import { compareVersions, withoutRevision } from '../model/version.js';
import { restrictedDepsOfText, slotOf, unmet, type ProvidedEbuild, type RestrictedDep } from '../lint/overlay-deps.js';
import { describedPackages, whyLeft } from '../plan/left.js';
import { requirePackageNames } from '../model/package-names.js';
import { readRecord, RECORD_REF, recordTip } from '../git/generated-record.js';
import { packageCommits } from './package-commits.js';
import { patchFilesToAdd } from './patch-files.js';
import { ebuildPath, reconcile, recordPaths, type PackageWork, type Refusal } from './reconcile.js';
import { checkOverlayPath, refuseLinksOut, unwritableDirs } from '../overlay/paths.js';
import { isScanned, overlayIndex, readEbuild, scannedPathspecs, scanOverlay, type OverlayState } from '../overlay/scan.js';
import {
  formatMaintainer,
  MAINTAINER_FORMAT,
  maintainersFor,
  parseMaintainer,
  renderSettings,
  settingsMaintainer,
  SETTINGS_FILE,
  type Maintainer,
  type MaintainerSetting,
} from '../overlay/settings.js';
import { makePlan, type LeftPackage, type Plan, type ScaffoldStep } from '../plan/plan.js';
import { currentYear, renderEbuild, renderLayoutConf, renderMetadata, stackMaintainers } from '../render/index.js';

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
  /** --maintainer: "gentoo" or "Name <email>", saved in the overlay's settings when it has none. */
  maintainer?: string;
  jobs?: number;
  timeoutMs?: number;
  retries?: number;
  /** Bytes: the largest download accepted for a distfile no Manifest lists yet. */
  maxSize?: number;
  mirrors: string[];
  /** Packages named on the command line (category/PN or PN): only these are bumped or regenerated. */
  packages?: string[];
  /** --allow-downgrade: add a release older than versions the overlay holds. */
  allowDowngrade?: boolean;
  /** --discard-local: drop or supersede ebuilds changed by hand even where the change cannot be carried forward. */
  discardLocal?: boolean;
  /** --separate-drops: drops in commits of their own, after every add (the older form). */
  separateDrops?: boolean;
  /** --bug / --closes values: bug numbers or https URLs, optionally "cat/pkg=…". */
  bug?: string[];
  closes?: string[];
  progress: Progress;
  distfileProgress?: DistfileProgress;
  warn(message: string): void;
}

export interface PlannedPackage {
  atom: string;
  version: string;
  /** treeclean: a version of a package that left the release, removed with the package. */
  action: 'add' | 'keep' | 'drop' | 'revbump' | 'treeclean';
  newPackage: boolean;
  /** revbump: the revision the new one replaces. */
  replaces?: string;
  distfiles: { name: string; urls: string[]; when?: string }[];
  /** How the added version's facts were established (the component's evidence in this release). */
  evidence?: EvidenceLevel;
}

/** A package whose new ebuild is not simply what the manifest generates, or that replaces one: shown with its diff. */
export interface PackageChange {
  atom: string;
  version: string;
  /** revbump: what changed in the generated text (unified diff). */
  revbump?: { replaces: string; diff: string };
  /** Hand edits of an older ebuild carried into the new one (unified diff of the edits). */
  carried?: { from: string; diff: string };
  discarded: { version: string; diff: string }[];
  /** Files under files/ the package's commit removes: no remaining ebuild uses them. */
  removedFiles: string[];
}

export interface BumpResult {
  version: string;
  overlay: string;
  dryRun: boolean;
  committed: boolean;
  branch?: string;
  head?: string;
  scaffold: ScaffoldStep[];
  /** Who new packages' metadata.xml names, and where that came from. */
  maintainer: { maintainers: Maintainer[]; source: string };
  /** The release's evidence: the weakest of its packages'. */
  evidence: ReleaseEvidence;
  packages: PlannedPackage[];
  /**
   * Packages the overlay holds that the manifest describes and this release
   * does not generate, with the reason; what the bump does with them
   * (keep, or with --drop-old treeclean, or drop the older versions).
   */
  left: { atom: string; versions: string[]; reason: string; action: LeftPackage['action']; removed: string[] }[];
  /** Revision bumps, carried hand edits, discarded ones, removed files/ entries. */
  changes: PackageChange[];
  /** What bump could not decide alone and reports. */
  notes: string[];
  commits: { subject: string; files: string[] }[];
  distfiles: { name: string; status: string; size?: number }[];
  /** --dry-run: the distfiles the bump needs, how many the distdir holds (and their bytes), how many it would download. */
  download?: { files: number; present: number; presentBytes: number; missing: string[]; distdir: string };
}

/** The plan as --json shows it: drops expanded to one entry per ebuild version. */
export function plannedPackages(plan: Plan, works: PackageWork[] = []): PlannedPackage[] {
  const revbumps = new Map(works.filter((w) => w.revbump).map((w) => [w.atom, w]));
  return plan.entries.flatMap<PlannedPackage>((e) => {
    if (e.action === 'drop') {
      const action = e.left?.treeclean ? ('treeclean' as const) : ('drop' as const);
      return (e.versions ?? []).map((v) => ({ atom: e.atom, version: v, action, newPackage: false, distfiles: [] }));
    }
    const r = revbumps.get(e.atom);
    if (r && e.action === 'keep') {
      return [{ atom: e.atom, version: r.write!.version, action: 'revbump' as const, newPackage: false, replaces: r.revbump!.replaces, distfiles: e.distfiles }];
    }
    return [{ atom: e.atom, version: e.version, action: e.action, newPackage: e.action === 'add' && e.newPackage, distfiles: e.distfiles }];
  });
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

/** The maintainer decision: the overlay's setting, else (once, when it is created) --maintainer or the git identity. */
interface MaintainerChoice {
  maintainers: Maintainer[];
  source: string;
  /** A setting to save in the overlay (it has none yet). */
  save?: MaintainerSetting;
}

function chooseMaintainer(
  state: OverlayState,
  requested: MaintainerSetting | undefined,
  creating: boolean,
  identity: Person | undefined,
  model: StackModel,
  dryRun: boolean,
  where: string,
): MaintainerChoice {
  const saved = `${dryRun ? 'to be ' : ''}saved in ${where}`;
  const stack = stackMaintainers(model) as Maintainer[];
  const configured = state.settings !== undefined ? settingsMaintainer(state.settings) : undefined;
  if (configured) {
    if (requested && formatMaintainer(requested) !== formatMaintainer(configured)) {
      throw new UserError(
        `${where} sets the maintainer to ${formatMaintainer(configured)}; change it there (--maintainer only sets it where none is set)`,
        ExitCode.invalidInput,
      );
    }
    return { maintainers: maintainersFor(configured, stack), source: `from ${where}` };
  }
  if (requested) {
    return {
      maintainers: maintainersFor(requested, stack),
      source: `from --maintainer${requested.kind === 'gentoo' ? ' gentoo' : ''}, ${saved}`,
      save: requested,
    };
  }
  if (creating && identity) {
    const mine = parseMaintainer(`${identity.name} <${identity.email}>`);
    if (!mine) {
      throw new UserError(
        `your git identity "${identity.name} <${identity.email}>" cannot name the maintainer in metadata.xml; give --maintainer: it ${MAINTAINER_FORMAT}`,
        ExitCode.invalidInput,
      );
    }
    return { maintainers: maintainersFor(mine, stack), source: `your git identity, ${saved}`, save: mine };
  }
  return { maintainers: stack, source: "the stack manifest's default: this overlay sets none; set it with --maintainer" };
}

/** Refuse ignored files where bump reads: the plan would trust files the branch does not have. */
async function refuseIgnoredInputs(repo: OverlayRepo, atoms: string[]): Promise<void> {
  const wanted = new Set(atoms);
  const ignored = (await repo.ignoredPresent(scannedPathspecs(atoms))).filter((f) => isScanned(f.path, wanted));
  if (ignored.length === 0) return;
  throw new UserError(
    `the overlay holds files that git ignores where bump reads and writes; the branch does not have them, so a bump would plan from files it cannot commit:\n` +
      ignored.map((f) => `  ${f.path} is ignored (${f.rule})`).join('\n') +
      '\nhint: commit them (git add -f), or move them out of the overlay, then run the bump again',
    ExitCode.overlayRefused,
    { ignored },
  );
}

/**
 * Holds the overlay for one run: the lock, taken before the overlay is read
 * and kept until the branch has moved, and Ctrl-C / SIGTERM handling. A run
 * interrupted before it lands leaves the overlay unchanged; once the branch
 * is moving (milliseconds) it finishes, and exits afterwards.
 */
class Session {
  landing = false;
  interrupted?: NodeJS.Signals;
  builder?: CommitBuilder;
  private readonly onSignal = (signal: NodeJS.Signals) => {
    this.interrupted = signal;
    if (this.landing) return;
    this.builder?.abortSync();
    this.lock.releaseSync();
    process.stderr.write(`\nrocm-ebuild: interrupted by ${signal}; the overlay is unchanged\n`);
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };

  private constructor(
    readonly lock: OverlayLock,
    readonly gitDir: string,
  ) {
    process.on('SIGINT', this.onSignal);
    process.on('SIGTERM', this.onSignal);
  }

  /** Take the lock, then finish or undo what an interrupted run left: private refs, index, worktree. */
  static async open(repo: OverlayRepo, warn: (m: string) => void, options: { created?: boolean } = {}): Promise<Session> {
    const { gitDir, commonDir } = await repo.dirs();
    const lock = await OverlayLock.take(commonDir, warn);
    const session = new Session(lock, gitDir);
    try {
      for (const m of await recoverInterrupted(repo, session.gitDir)) warn(m);
      session.builder = new CommitBuilder(repo, session.gitDir);
      // A repository this run has just created holds no private refs of a killed run.
      if (!options.created) await session.builder.clearStaleRefs();
    } catch (err) {
      await session.close();
      throw err;
    }
    return session;
  }

  async close(): Promise<void> {
    await this.builder?.end();
    await this.lock.release();
    process.off('SIGINT', this.onSignal);
    process.off('SIGTERM', this.onSignal);
  }
}

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

async function existingParent(dir: string): Promise<string> {
  let cur = dir;
  while (!existsSync(cur)) cur = path.dirname(cur);
  return cur;
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

/** --bug/--closes as trailer refs; a value that is neither a bug number nor an https URL is refused. */
function bugRefs(o: BumpOptions): { bug: BugRef[]; closes: BugRef[] } {
  const parse = (flag: string, values: string[] = []) =>
    values.map((v) => {
      const r = parseBugRef(v);
      if ('error' in r) throw new UserError(`--${flag}: ${r.error}`, ExitCode.invalidInput);
      return r;
    });
  return { bug: parse('bug', o.bug), closes: parse('closes', o.closes) };
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
  // Our patches go into files/ with the ebuilds that apply them; a different file already there stops the bump here.
  const addFiles = await patchFilesToAdd(works, state, model);
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
      addFiles,
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

/** Where a ::gentoo checkout keeps the maintainer setting: the clone's git config, never a commit. */
const GENTOO_SETTING = 'rocm-ebuild.maintainer';

/**
 * The packages the overlay holds that a component describes and this release
 * does not generate: each with its component as the newest release that has
 * it describes it, and why it left (plan/left.ts).
 */
async function leftCandidates(model: StackModel, state: OverlayState): Promise<Map<string, { component: ResolvedComponent; reason: string }>> {
  const manifest = model.manifest;
  const out = new Map<string, { component: ResolvedComponent; reason: string }>();
  const newestFirst = knownReleases(manifest).sort(compareVersions).reverse();
  const models = new Map<string, Promise<StackModel>>();
  const modelOf = (r: string) => models.get(r) ?? models.set(r, stackFor(manifest, r)).get(r)!;
  for (const [atom, loaded] of describedPackages(manifest)) {
    if (model.byAtom.has(atom) || !state.packages.get(atom)?.versions.length) continue;
    for (const r of newestFirst) {
      if (!inRelease(loaded, r)) continue;
      const component = (await modelOf(r)).byAtom.get(atom);
      if (!component) continue;
      out.set(atom, { component, reason: whyLeft(manifest, loaded, model.release.version) });
      break;
    }
  }
  return out;
}

/**
 * Whether an older version of a left package that keeps newer ones (or a
 * 9999) is orphaned by the bump: a dependency of its ebuild on a package of
 * the overlay, at a slot or version, that no ebuild the overlay holds after
 * the bump meets (lint's NonexistentDeps, asked in advance). Versions the
 * bump adds have the stack's SLOT="0/$(ver_cut 1-2)"; held ones their own.
 */
async function orphanTest(
  model: StackModel,
  state: OverlayState,
  left: ReadonlyMap<string, unknown>,
): Promise<(atom: string, version: string, after: ReadonlyMap<string, readonly string[]>) => boolean> {
  const release = model.release.version;
  const deps = new Map<string, RestrictedDep[]>();
  for (const atom of left.keys()) {
    const versions = state.packages.get(atom)?.versions ?? [];
    const old = versions.filter((v) => v !== '9999' && compareVersions(withoutRevision(v), release) < 0);
    if (old.length === versions.length) continue; // the whole package goes: nothing to decide
    for (const v of old) deps.set(`${atom}-${v}`, await restrictedDepsOfText(readEbuild(state.dir, atom, v), atom.split('/')[1]!, v));
  }
  const keys = [...new Set([...deps.values()].flat().map((d) => d.key))].filter((k) => state.packages.has(k));
  const held = keys.length > 0 ? overlayIndex(state.dir, keys) : new Map<string, ProvidedEbuild[]>();
  return (atom, version, after) => {
    const wanted = deps.get(`${atom}-${version}`) ?? [];
    const index = new Map<string, ProvidedEbuild[]>();
    for (const d of wanted) {
      const pn = d.key.split('/')[1]!;
      index.set(
        d.key,
        (after.get(d.key) ?? []).map((v) => held.get(d.key)?.find((p) => p.version === v) ?? { version: v, ...slotOf('0/$(ver_cut 1-2)', pn, v) }),
      );
    }
    // A package the overlay will not hold at all is ::gentoo's business, not an orphaning by this bump.
    return unmet(wanted, new Map([...index].filter(([, p]) => p.length > 0))).length > 0;
  };
}

/** ::gentoo: a package that left the release is last-rited, then removed; a bump never removes it. Nothing is written. */
function refuseGentooTreeclean(dir: string, plan: Plan): never {
  const gone = plan.left.filter((l) => l.action === 'treeclean');
  const lines = gone.map((l) => `  ${path.join(dir, l.atom)}: ${l.versions.join(', ')}: not part of ROCm ${plan.version}: ${l.reason}`);
  throw new UserError(
    `${dir} is ::gentoo, and ${gone.length === 1 ? 'a package' : `${gone.length} packages`} it holds left ROCm ${plan.version}; --drop-old would remove ${gone.length === 1 ? 'it' : 'them'} (the older stack ${gone.length === 1 ? 'it needs' : 'they need'} goes), and ::gentoo removes a package only after its last rites; nothing was written:\n${lines.join('\n')}\n` +
      `hint: last-rite ${gone.length === 1 ? 'it' : 'them'} first: mask ${gone.map((l) => l.atom).join(' ')} in ${path.join(dir, 'profiles/package.mask')} with the reason and a removal date (pkgdev mask), announce it on gentoo-dev, and remove ${gone.length === 1 ? 'it' : 'them'} after 30 days; ` +
      `or bump without --drop-old, which keeps ${gone.length === 1 ? 'it' : 'them'} and the older stack ${gone.length === 1 ? 'it needs' : 'they need'}`,
    ExitCode.overlayRefused,
    { left: gone.map((l) => ({ atom: l.atom, versions: l.versions, reason: l.reason })) },
  );
}

/**
 * ::gentoo's rocm.eclass against the names the new ebuilds use of ours: when
 * it lacks some, the update to ours is a commit of its own, first, saying
 * which names and why, for pr check and the PR body to call out.
 */
function gentooEclassUpdate(tree: string, ours: string, writes: PackageWork[], identity: Person, version: string): { missing: string[]; commit: CommitSpec } | undefined {
  const api = eclassApiNames(ours);
  const have = eclassApiNames(tree);
  const used = new Set(writes.flatMap((w) => usedApiNames(w.write!.text, api)));
  const missing = [...used].filter((n) => !have.has(n)).sort();
  if (missing.length === 0) return undefined;
  const listed = `rocm.eclass: add ${missing.join(', ')}`;
  return {
    missing,
    commit: {
      message: commitMessage(
        listed.length - 'rocm.eclass: '.length <= 69 ? listed : `rocm.eclass: add ${missing.length} variables and functions for ROCm ${version}`,
        identity,
        `The ROCm ${version} ebuilds of the following commits use ${missing.join(', ')}, which this eclass does not have. ` +
          'Eclass changes are posted to the gentoo-dev mailing list for review before they are merged.',
      ),
      changes: [{ path: 'eclass/rocm.eclass', content: ours }],
    },
  };
}

/** What a dry run can tell of the downloads: the distfiles needed, and which the distdir already has. */
function downloadSize(works: PackageWork[], state: OverlayState, distdir: string): NonNullable<BumpResult['download']> {
  const names = new Set<string>();
  for (const w of works) {
    if (!w.write) continue;
    const known = state.packages.get(w.atom)?.manifest ?? '';
    for (const d of w.component.distfiles) if (!(w.revbump && known.includes(`DIST ${d.name} `))) names.add(d.name);
  }
  let present = 0;
  let presentBytes = 0;
  const missing: string[] = [];
  for (const name of [...names].sort()) {
    try {
      const st = statSync(path.join(distdir, name));
      if (!st.isFile()) throw new Error('not a file');
      present++;
      presentBytes += st.size;
    } catch {
      missing.push(name);
    }
  }
  return { files: names.size, present, presentBytes, missing, distdir };
}

/** A downgrade is refused unless asked for: the overlay holds newer versions of the packages. */
function refuseDowngrade(plan: Plan): never {
  const n = plan.newer.length;
  const shown = plan.newer.slice(0, 5).map((p) => `  ${p.atom}: ${p.versions.join(', ')}`);
  if (n > 5) shown.push(`  … and ${n - 5} more`);
  throw new UserError(
    `the overlay holds versions newer than ${plan.version} of ${n} package${n === 1 ? '' : 's'}; adding ${plan.version} would be a downgrade:\n${shown.join('\n')}\n` +
      'hint: pass --allow-downgrade to add the older release next to them, or check the version you asked for',
    ExitCode.invalidInput,
    { newer: plan.newer },
  );
}

/** Ebuilds changed by hand that this bump would lose: refused with the change, and the ways on. */
function refuseLocalEdits(refusals: Refusal[]): never {
  const parts = refusals.map((r) => `${r.atom}-${r.version}: ${r.why}${r.diff ? `\n${r.diff.trimEnd().replace(/^/gm, '    ')}` : ''}`);
  const others = [...new Set(refusals.map((r) => r.atom))];
  throw new UserError(
    `${refusals.length === 1 ? 'an ebuild' : `${refusals.length} ebuilds`} changed by hand would be lost; nothing was written:\n${parts.map((p) => `  ${p}`).join('\n')}\n` +
      `hint: port the change to the stack manifest or by hand, then run again; or pass --discard-local to drop ${refusals.length === 1 ? 'it' : 'them'}; ` +
      `or name the other packages on the command line to bump them without ${others.join(', ')}`,
    ExitCode.overlayRefused,
    { refused: refusals },
  );
}

/** The files a plan will write or delete, relative to the overlay. */
function plannedPaths(plan: Plan, works: PackageWork[], saveSettings: boolean): string[] {
  const files: string[] = [];
  for (const step of plan.scaffold) {
    if (step.action === 'keep') continue;
    if (step.what === 'repository') files.push('profiles/repo_name', 'metadata/layout.conf', SETTINGS_FILE);
    if (step.what === 'targets-desc') files.push('profiles/desc/amdgpu_targets.desc');
    if (step.what === 'eclass') files.push('eclass/rocm.eclass');
    if (step.what === 'package-sets') files.push(SETS_CONF, `${SETS_DIR}/rocm`);
  }
  if (saveSettings) files.push(SETTINGS_FILE);
  for (const w of works) {
    const versions = [...w.remove, ...(w.write ? [w.write.version] : [])];
    files.push(`${w.atom}/Manifest`, `${w.atom}/metadata.xml`, ...versions.map((v) => ebuildPath(w.atom, v)));
  }
  return files;
}

/** Every directory the bump writes to must be writable, or nothing is done (exit 4). */
async function checkWritable(dir: string, files: string[]): Promise<void> {
  const bad = await unwritableDirs(dir, [...new Set(files)]);
  if (bad.length === 0) return;
  throw new UserError(
    `cannot write to these directories of the overlay ${dir}; nothing was changed:\n${bad.map((b) => `  ${b.dir}: ${b.why}`).join('\n')}\n` +
      'hint: make them writable (or remount the overlay read-write), then run the bump again',
    ExitCode.overlayRefused,
  );
}

/**
 * Files bump writes are committed whatever the ignore rules say (fast-import
 * does not read them); say so, since a later `git add` of such a file would
 * need -f, and with --no-commit `git add -A` would leave them out.
 */
async function noteIgnored(repo: OverlayRepo, commits: CommitSpec[], o: BumpOptions): Promise<void> {
  const written = [...new Set(commits.flatMap((c) => c.changes.filter((x) => x.content !== null).map((x) => x.path)))];
  const ignored = await repo.ignoreRules(written);
  if (ignored.length === 0) return;
  const n = ignored.length;
  const first = `${ignored[0]!.path}, by ${ignored[0]!.rule}`;
  o.warn(
    o.commit
      ? `${n} committed file${n === 1 ? '' : 's'} match the overlay's ignore rules (e.g. ${first}); they are tracked now`
      : `${n} file${n === 1 ? '' : 's'} written match the overlay's ignore rules (e.g. ${first}): \`git add\` skips them, \`git add -f\` does not`,
  );
}

function settingsCommit(setting: MaintainerSetting, identity: Person): CommitSpec {
  return {
    message: commitMessage(
      `metadata: add ${path.basename(SETTINGS_FILE)}`,
      identity,
      `rocm-ebuild's settings of this overlay. New packages' metadata.xml name ${setting.kind === 'gentoo' ? "the stack manifest's maintainers (for ::gentoo)" : formatMaintainer(setting)} as maintainer.`,
    ),
    changes: [{ path: SETTINGS_FILE, content: renderSettings(setting) }],
  };
}

async function ensureAllDistfiles(
  writes: PackageWork[],
  state: OverlayState,
  o: BumpOptions,
): Promise<{ results: DistfileResult[]; entries: Map<string, ManifestEntry> }> {
  const needs = new Map<string, DistfileNeed>();
  for (const w of writes) {
    const pkg = state.packages.get(w.atom);
    const known = pkg?.manifest !== undefined ? parseManifest(pkg.manifest, `${w.atom}/Manifest`) : [];
    for (const d of w.component.distfiles) {
      // A revision bump of a release whose distfiles the Manifest already lists needs none of them on disk.
      if (w.revbump && known.some((k) => k.name === d.name)) continue;
      const need = needs.get(d.name) ?? { name: d.name, urls: d.urls, neededBy: [] };
      need.neededBy.push({ atom: w.atom, ebuild: `${w.component.pn}-${w.write!.version}.ebuild` });
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
    ...(o.maxSize !== undefined ? { maxSize: o.maxSize } : {}),
    ...(o.distfileProgress ? { progress: o.distfileProgress } : {}),
  });
  const missing = results.filter((r) => r.status === 'missing');
  const failed = results.filter((r) => r.status === 'failed');
  if (missing.length > 0 || failed.length > 0) {
    const distdir = resolveDistdir(o.distdir);
    const lines = missing.map((r) => `  ${r.name} (missing; needed by ${r.neededBy.map((n) => `${n.atom}/${n.ebuild}`).join(', ')})`);
    // Failures grouped by cause: one unreachable host is one line, not a block per file (--json has them all).
    if (failed.length > 0) lines.push(describeProblems(failed, { distdir }).replace(/^/gm, '  '));
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

/**
 * The overlay's package sets as they should be after the bump, for the
 * newest release it will hold (what emerge picks), or undefined when they
 * already are. Sets the package-sets step's action.
 */
async function packageSetChanges(plan: Plan, model: StackModel, state: OverlayState): Promise<{ version: string; changes: { path: string; content: string | null }[] } | undefined> {
  const step = plan.scaffold.find((s) => s.what === 'package-sets');
  if (!step) return undefined;
  const held = (step.releases ?? [plan.version]).filter((v) => model.manifest.stack.releases[v]);
  const newest = held[held.length - 1] ?? plan.version;
  const setsModel = newest === plan.version ? model : await stackFor(model.manifest, newest);
  const wanted = renderPackageSets(setsModel, state.repoName ?? model.manifest.stack.repo_name);
  const changes: { path: string; content: string | null }[] = wanted.filter((f) => state.packageSets.get(f.path) !== f.content);
  // A set of a target the newest release no longer offers goes.
  for (const file of state.packageSets.keys()) if (!wanted.some((f) => f.path === file)) changes.push({ path: file, content: null });
  if (changes.length === 0) return undefined;
  if (step.action === 'keep') step.action = 'update';
  return { version: newest, changes };
}

function packageSetsCommit(sets: { version: string; changes: { path: string; content: string | null }[] }, identity: Person): CommitSpec {
  return {
    message: commitMessage(
      `${SETS_CONF}, ${SETS_DIR}: package sets for ROCm ${sets.version}`,
      identity,
      'One set per GPU target, everything GPUs of that target can use: emerge @rocm-gfx1030 (rocm-ebuild set).',
    ),
    changes: sets.changes,
  };
}

const isDescCommit = (c: CommitSpec): boolean => c.changes.some((x) => x.path === 'profiles/desc/amdgpu_targets.desc');

async function scaffoldCommits(
  plan: Plan,
  model: StackModel,
  identity: Person,
  year: number,
  settings: MaintainerSetting | undefined,
  maintainers: readonly { email: string; name?: string }[],
): Promise<CommitSpec[]> {
  const commits: CommitSpec[] = [];
  const repoName = model.manifest.stack.repo_name;
  for (const step of plan.scaffold) {
    if (step.action === 'keep') continue;
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
          ...(settings ? [{ path: SETTINGS_FILE, content: renderSettings(settings) }] : []),
        ],
      });
    }
    if (step.what === 'targets-desc' && step.extended) {
      const added = step.extended.added;
      const listed = `profiles/desc: add amdgpu_targets ${added.join(', ')}`;
      commits.push({
        message: commitMessage(
          listed.length - 'profiles/desc: '.length <= 69 ? listed : `profiles/desc: add ${added.length} amdgpu_targets`,
          identity,
          `Descriptions of the GPU targets the ${plan.version} ebuilds offer that amdgpu_targets.desc lacked (${added.join(', ')}); every other line is kept as it was.`,
        ),
        changes: [{ path: 'profiles/desc/amdgpu_targets.desc', content: step.extended.text }],
      });
      continue;
    }
    if (step.what === 'targets-desc') {
      const table = await checkedTargetTable(model.manifest.targetsFile);
      const releases = step.releases ?? [plan.version];
      commits.push({
        message:
          step.action === 'add'
            ? commitMessage('profiles/desc: add amdgpu_targets.desc', identity)
            : commitMessage(
                `profiles/desc: amdgpu_targets.desc for ROCm ${releases.join(', ')}`,
                identity,
                'The targets the ebuilds of these releases offer, no more (pkgcheck: UnusedGlobalUseExpand), no fewer.',
              ),
        changes: [{ path: 'profiles/desc/amdgpu_targets.desc', content: renderAmdgpuTargetsDescFor(table, releases, year) }],
      });
    }
    if (step.what === 'eclass') {
      commits.push({
        message: commitMessage(
          'rocm.eclass: new eclass',
          identity,
          'GPU targets per ROCm release from data, target coherence through ROCM_USEDEP, and HIP builds with vanilla LLVM/clang.',
        ),
        // Named as its maintainers: those of the overlay's packages.
        changes: [{ path: 'eclass/rocm.eclass', content: eclassForMaintainers(await readFile(eclassPath, 'utf8'), maintainers) }],
      });
    }
  }
  return commits;
}
