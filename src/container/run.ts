import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { cacheHome, resolveDistdir } from '../distfiles/locations.js';
import { checkedDeviceTable, deviceTablePath } from '../gpu/devices.js';
import { readTopology, rootsFromEnv, usable, type Gpu, type Topology } from '../gpu/topology.js';
import { scanOverlay } from '../overlay/scan.js';
import { repoNameProblem } from '../overlay/repo-name.js';
import { UserError } from '../util/errors.js';
import { IMAGE_REFERENCE_FORMAT, isImageReference } from '../util/names.js';
import { printable } from '../util/printable.js';
import { ExitCode } from '../util/exit-codes.js';
import { GPU_CAPABILITIES, runCommand, type EngineName, type RunSpec } from './command.js';
import { shellLine } from '../util/argv.js';
import { detectEngine, engineInfo, noEngineError, type EngineInfo } from './engine.js';
import { containerPaths, IN_CONTAINER } from './layout.js';
import { resolveAtoms, testPlan, type TestPlan } from './plan.js';
import type { ContainerJob } from './portage.js';
import { setupFiles } from './script.js';
import { selectGpus } from './select.js';

export const DEFAULT_TREE = '/var/db/repos/gentoo';
/** Seconds each atom under test may take by default: a full rocBLAS build and test fits. */
export const DEFAULT_TIMEOUT = 6 * 3600;

import type { PlannedContainer, PreparedRun, TestOptions, TestRunResult } from './run-types.js';

export type { PlannedContainer, PreparedRun, TestOptions, TestRunResult };

/** The seconds of --timeout: a number of seconds, or with s, m, h; 0 for none. */
export function parseDuration(text: string): number {
  const m = /^([0-9]+)(s|m|min|h)?$/.exec(text.trim());
  if (!m) throw new UserError(`--timeout ${text}: expected seconds or a number with s, m or h (e.g. 90m, 6h; 0 for none)`, ExitCode.invalidInput);
  const n = Number(m[1]);
  return m[2] === 'h' ? n * 3600 : m[2] === 'm' || m[2] === 'min' ? n * 60 : n;
}

/**
 * The overlay: a Portage repository (profiles/repo_name) holding the ebuilds
 * under test. Exit 4 otherwise. Portage reads it as a directory, so it need
 * not be a git repository (a release tarball, a CI job's export): asking git
 * was also a process of 10 ms on the main thread of every run.
 */
async function checkOverlay(dir: string, plan: TestPlan): Promise<string> {
  const state = await scanOverlay(dir, plan.atoms.map((a) => a.atom));
  if (!state.repoName) {
    throw new UserError(
      `the overlay ${dir} is not a Portage repository (no profiles/repo_name); create it with \`rocm-ebuild bump ${plan.release} --overlay ${dir}\``,
      ExitCode.overlayRefused,
    );
  }
  // The name becomes a mount point (/var/db/repos/<name>), a repos.conf section and atoms' ::repo:
  // PMS's rule, the one bump holds overlays to, keeps "../..", a newline or a "]" out of all three.
  const problem = repoNameProblem(state.repoName);
  if (problem) {
    throw new UserError(
      `the overlay ${dir} has an invalid repository name in profiles/repo_name: ${JSON.stringify(state.repoName)} (${problem})`,
      ExitCode.overlayRefused,
    );
  }
  const missing = plan.atoms.filter((a) => !state.packages.get(a.atom)?.versions.some((v) => v === a.version || v.startsWith(`${a.version}-r`)));
  if (missing.length > 0) {
    throw new UserError(
      `the overlay ${dir} lacks the ebuilds under test: ${missing.map((a) => `${a.atom}-${a.version}`).join(', ')}; bump it first (rocm-ebuild bump ${plan.release} --overlay ${dir})`,
      ExitCode.overlayRefused,
      { missing: missing.map((a) => a.atom) },
    );
  }
  return state.repoName;
}

async function checkTree(tree: string): Promise<void> {
  const name = await readFile(path.join(tree, 'profiles', 'repo_name'), 'utf8').catch(() => undefined);
  if (name?.trim() !== 'gentoo') {
    throw new UserError(
      `--tree ${tree} is not a ::gentoo checkout (no profiles/repo_name saying "gentoo"); name one with --tree, e.g. a git clone of https://github.com/gentoo/gentoo`,
      ExitCode.invalidInput,
    );
  }
}

/**
 * Everything decided before a container starts: the plan, the GPUs, the
 * engine and every command line. Errors here (exit 2 and 4) leave nothing
 * behind; --dry-run stops after this.
 */
export async function prepareRun(options: TestOptions): Promise<PreparedRun> {
  const overlay = path.resolve(options.overlay);
  const inPlace = options.engine === 'none';
  // The image reaches the engine's command line (image exists, pull, run): an image reference, or nothing runs.
  if (!inPlace && !isImageReference(options.image)) {
    throw new UserError(`--image ${printable(JSON.stringify(options.image))} is not ${IMAGE_REFERENCE_FORMAT}`, ExitCode.invalidInput);
  }
  // Asking the engine its version is a process of 30-40 ms: started now, it
  // runs while the overlay, the tree and the GPUs are checked. Its answer (or
  // absence) is looked at only where it was before, so errors keep their order.
  const wanted = options.engine as EngineName | undefined;
  // --dry-run runs nothing, the engine included: which one is installed is a
  // PATH lookup, and its version is not asked.
  const probe = inPlace
    ? undefined
    : detectEngine(wanted, options.env).then(async (found) => ({ found, info: found && !options.dryRun ? await engineInfo(found, options.env) : undefined }));
  probe?.catch(() => undefined);
  const model = await options.model;
  const plan = testPlan(model, options.atoms.length ? resolveAtoms(model, options.atoms) : undefined, options.tests, {
    skipTests: resolveAtoms(model, options.skipTests ?? []),
  });
  const repoName = await checkOverlay(overlay, plan);
  const tree = path.resolve(options.tree);
  const treeNotes: string[] = [];
  // A dry run mounts nothing: a missing tree is said, not refused, so the plan and files can be reviewed anywhere.
  if (options.dryRun) await checkTree(tree).catch((err: unknown) => treeNotes.push(`${(err as Error).message.split(';')[0]}: a real run refuses it`));
  else await checkTree(tree);

  const roots = rootsFromEnv(options.env);
  const noGpu = options.gpus.includes('none');
  if (noGpu && options.gpus.length > 1) throw new UserError('--gpu none cannot be combined with other --gpu values', ExitCode.invalidInput);
  const devices = await checkedDeviceTable(deviceTablePath(model.manifest.targetsFile)).catch(() => undefined);
  const topology = await readTopology(roots, devices);
  const { selected, notes } = noGpu ? { selected: [], notes: [] as string[] } : selectGpus(topology, options.gpus, model.release.policy, model.release.version, { dryRun: options.dryRun });
  notes.push(...treeNotes);

  const engine = await chooseEngine(options, probe, wanted, notes);
  const distdir = resolveDistdir(options.distdir, options.env);
  const pkgdir = path.resolve(options.pkgdir ?? path.join(cacheHome(options.env), 'binpkgs'));
  const setting: ContainerSetting = {
    options,
    plan: noGpu ? withoutGpuTests(plan) : plan,
    release: model.release.version,
    topology,
    usableGpus: topology.gpus.filter((g) => usable(topology, g)),
    engine,
    repoName,
    hostPaths: { tree, overlay, distdir, pkgdir },
    reportRoot: path.resolve(options.reportDir),
    runId: randomBytes(3).toString('hex'),
  };
  const targets: { gpu: Gpu | null; label: string; standIn?: boolean }[] = noGpu ? [{ gpu: null, label: NO_GPU_LABEL }] : selected;
  const containers = targets.map((target) => plannedContainer(setting, target));
  return { plan, topology, engine, containers, notes, pkgdir, distdir };
}

/**
 * The engine that will run the containers: in place (only inside a container, as root), or the
 * one the probe found. Without one, a dry run still shows the commands (said in `notes`).
 */
async function chooseEngine(
  options: TestOptions,
  probe: Promise<{ found: EngineName | undefined; info: EngineInfo | undefined }> | undefined,
  wanted: EngineName | undefined,
  notes: string[],
): Promise<EngineInfo> {
  if (options.engine === 'none' || !probe) {
    const engine: EngineInfo = { name: 'none', version: 'in place', rootless: false, outer: await containerEngineHere(options.env) };
    if (!engine.outer && !options.dryRun) {
      throw new UserError(
        '--engine none runs Portage on this machine, rewriting /etc/portage and /etc/group: it is meant for CI jobs that already run in a Gentoo container, and no container was detected (/.dockerenv, /run/.containerenv). Set ROCM_EBUILD_IN_CONTAINER=1 if this is one.',
        ExitCode.invalidInput,
      );
    }
    if (process.geteuid?.() !== 0 && !options.dryRun) throw new UserError('--engine none needs root: it configures Portage on this machine', ExitCode.invalidInput);
    return engine;
  }
  const { found, info } = await probe;
  if (!found && !options.dryRun) throw noEngineError(wanted);
  const engineName = found ?? wanted ?? 'podman';
  if (!found) notes.push(`${engineName} is not installed: the commands are shown, nothing can run here`);
  return info ?? { name: engineName, version: found ? 'not asked (--dry-run)' : 'not installed', rootless: engineName === 'podman' && process.geteuid?.() !== 0 };
}

/** What every container of a run shares. */
interface ContainerSetting {
  options: TestOptions;
  /** The plan as the containers run it (without GPU tests under --gpu none). */
  plan: TestPlan;
  release: string;
  topology: Topology;
  /** The GPUs of this machine a container may use, in the order the runtime numbers them. */
  usableGpus: Gpu[];
  engine: EngineInfo;
  repoName: string;
  hostPaths: { tree: string; overlay: string; distdir: string; pkgdir: string };
  reportRoot: string;
  runId: string;
}

/** One container of the run: its job (what runs inside), its name, and the command line that starts it. */
function plannedContainer(s: ContainerSetting, { gpu, label, standIn }: { gpu: Gpu | null; label: string; standIn?: boolean }): PlannedContainer {
  const { options, topology, engine } = s;
  const inPlace = options.engine === 'none';
  const shardEnv: Record<string, string> = options.shard ? { GTEST_SHARD_INDEX: String(options.shard.index - 1), GTEST_TOTAL_SHARDS: String(options.shard.total) } : {};
  const render = gpu?.render ?? null;
  const gids = gpu ? [...new Set([topology.kfd.gid, render!.gid].filter((g): g is number => g !== null))] : [];
  const reportDir = path.join(s.reportRoot, label);
  const paths = inPlace ? { ...s.hostPaths, log: reportDir, setup: path.join(reportDir, 'setup') } : containerPaths(s.repoName);
  const job: ContainerJob = {
    plan: s.plan,
    gfx: gpu?.gfx ?? null,
    paths,
    // In place the job's container may see every GPU of its machine: the runtime is told which one is ours.
    testEnv: { ...(inPlace && gpu ? { ROCR_VISIBLE_DEVICES: String(standIn ? 0 : s.usableGpus.indexOf(gpu)) } : {}), ...shardEnv },
    repoName: s.repoName,
    jobs: options.jobs,
    timeoutSeconds: options.timeoutSeconds,
    gids,
    devices: gpu ? (inPlace ? [topology.kfd.hostPath, render!.hostPath] : [topology.kfd.path, render!.path]) : [],
    userpriv: !engine.rootless,
  };
  const name = inPlace ? `in-place-${label}` : `rocm-ebuild-${s.release.replace(/\./g, '')}-${label}-${s.runId}`;
  const shown = standIn ? { standIn } : {};
  if (inPlace) return { label, gpu, name, reportDir, job, argv: ['/bin/sh', path.join(paths.setup, 'run.sh')], ...shown };
  const { overlay, tree, distdir, pkgdir } = s.hostPaths;
  const run: RunSpec = {
    engine: engine.name as EngineName,
    name,
    image: options.image,
    devices: gpu
      ? [
          { host: topology.kfd.hostPath, container: topology.kfd.path },
          { host: render!.hostPath, container: render!.path },
        ]
      : [],
    groups: !gpu ? [] : engine.rootless ? 'keep-groups' : gids,
    capabilities: gpu && job.plan.atoms.some((a) => a.runTests && a.gpuTests) ? GPU_CAPABILITIES : [],
    mounts: [
      { host: overlay, container: IN_CONTAINER.overlay(s.repoName), readOnly: true },
      { host: tree, container: IN_CONTAINER.tree, readOnly: true },
      { host: distdir, container: IN_CONTAINER.distdir, readOnly: false },
      { host: pkgdir, container: IN_CONTAINER.pkgdir, readOnly: false },
      { host: reportDir, container: IN_CONTAINER.log, readOnly: false },
      { host: path.join(reportDir, 'setup'), container: IN_CONTAINER.setup, readOnly: true },
    ],
    labels: { 'io.rocm-ebuild.release': s.release, 'io.rocm-ebuild.gfx': gpu?.gfx ?? 'none', 'io.rocm-ebuild.run': s.runId },
    remove: !options.keep,
    command: ['/bin/sh', `${IN_CONTAINER.setup}/run.sh`],
  };
  let argv: string[];
  try {
    argv = runCommand(run);
  } catch (err) {
    throw new UserError((err as Error).message, ExitCode.invalidInput);
  }
  return { label, gpu, name, reportDir, job, run, argv, ...shown };
}

/** The report subdirectory of a build without a GPU. */
export const NO_GPU_LABEL = 'no-gpu';

/** Without a GPU, tests that need one cannot run: the packages are still built. */
function withoutGpuTests(plan: TestPlan): TestPlan {
  return { ...plan, atoms: plan.atoms.map((a) => (a.runTests && a.gpuTests ? { ...a, runTests: false, noTests: 'its tests need a GPU (--gpu none)', testEnv: {} } : a)) };
}

/** The container engine that runs this process's container, from the marks podman and docker leave, or the user's word. */
async function containerEngineHere(env: NodeJS.ProcessEnv): Promise<EngineName | 'unknown' | undefined> {
  if (existsSync('/run/.containerenv')) return 'podman';
  if (existsSync('/.dockerenv')) return 'docker';
  return env.ROCM_EBUILD_IN_CONTAINER ? 'unknown' : undefined;
}

/**
 * `rocm-ebuild test`: one container per selected GPU, one after the other
 * (the first builds the target-independent binary packages the others reuse),
 * each given only its GPU. Stops at the first interruption; the reports of
 * what ran are written either way.
 */
export async function runTests(options: TestOptions): Promise<TestRunResult> {
  const prepared = await prepareRun(options);
  const { plan, engine, containers, notes } = prepared;
  const reportRoot = path.resolve(options.reportDir);
  const result: TestRunResult = {
    release: plan.release,
    tests: plan.tier,
    dryRun: options.dryRun,
    engine,
    reportDir: reportRoot,
    commands: containers.map((c) => shellLine(c.argv)),
    containers: containers.map((c) => ({
      label: c.label,
      name: c.name,
      gfx: c.job.gfx,
      // A stand-in is no GPU of this host: it has no index to name.
      gpu: c.standIn ? null : (c.gpu?.index ?? null),
      reportDir: c.reportDir,
      ...(options.dryRun ? { setup: setupFiles(c.job) } : {}),
    })),
    reports: [],
    interrupted: false,
    notes,
  };
  if (options.dryRun) return result;

  // Everything that runs containers and writes reports is loaded only now:
  // --dry-run, and every error above, never needs it.
  const { executeRun } = await import('./execute.js');
  await executeRun(prepared, options, result);
  return result;
}

/** The exit code of a run: 0 all passed, 6 an atom failed or a run could not proceed, 130 interrupted. */
export function exitCodeOf(result: TestRunResult): number {
  if (result.interrupted || result.reports.some((r) => r.result === 'interrupted')) return 130;
  if (result.reports.some((r) => r.result !== 'passed')) return ExitCode.qaFailed;
  return ExitCode.ok;
}

export function defaultJobs(): number {
  return typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
}

