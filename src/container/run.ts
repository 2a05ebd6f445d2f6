import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync } from 'node:fs';
import { chmod, lstat, mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { cacheHome, resolveDistdir } from '../distfiles/locations.js';
import { checkedDeviceTable, deviceTablePath } from '../gpu/devices.js';
import { readTopology, rootsFromEnv, usable, type Gpu, type Topology } from '../gpu/topology.js';
import { OverlayRepo } from '../git/repo.js';
import type { StackModel } from '../model/resolve.js';
import { scanOverlay } from '../overlay/scan.js';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';
import { removeCommand, runCommand, shellLine, stopCommand, type EngineName, type RunSpec } from './command.js';
import { capture, detectEngine, engineInfo, ensureImage, noEngineError, type EngineInfo } from './engine.js';
import { readGtestReports } from './gtest.js';
import { junitXml } from './junit.js';
import { containerPaths, IN_CONTAINER, REPORT_FILES } from './layout.js';
import { markdownReport, markdownSummary } from './markdown.js';
import { resolveAtoms, testPlan, type TestPlan, type TestTier } from './plan.js';
import { portageFiles, type ContainerJob } from './portage.js';
import { buildReport, reportFileName, reportProblems, type TestReport } from './report.js';
import { parsePhases, parseStatus } from './records.js';
import { containerScript } from './script.js';
import { selectGpus } from './select.js';
import type { TestProgress } from './progress.js';

export const DEFAULT_IMAGE = 'gentoo/stage3:amd64-openrc';
export const DEFAULT_TREE = '/var/db/repos/gentoo';
/** Seconds each atom under test may take by default: a full rocBLAS build and test fits. */
export const DEFAULT_TIMEOUT = 6 * 3600;

export interface TestOptions {
  model: StackModel;
  /** Atoms as given (category/PN or PN); empty: the whole release. */
  atoms: string[];
  /** Atoms built without running their tests (a CI matrix tests them in shard jobs). */
  skipTests?: string[];
  /** Run this share of each gtest suite: GTEST_SHARD_INDEX = index - 1, GTEST_TOTAL_SHARDS = total. */
  shard?: { index: number; total: number };
  overlay: string;
  /** auto, all, indexes, gfx names; or none: one build without a GPU. */
  gpus: string[];
  /** none: run in place, inside a container a CI engine started. */
  engine?: EngineName | 'none';
  image: string;
  tree: string;
  distdir?: string;
  pkgdir?: string;
  tests: TestTier;
  jobs: number;
  timeoutSeconds: number;
  reportDir: string;
  keep: boolean;
  dryRun: boolean;
  toolVersion: string;
  env: NodeJS.ProcessEnv;
  progress: TestProgress;
  /** Aborted on Ctrl-C / SIGTERM: the running container is stopped and the partial report written. */
  signal: AbortSignal;
}

export interface PlannedContainer {
  label: string;
  gpu: Gpu | null;
  name: string;
  reportDir: string;
  job: ContainerJob;
  /** Absent when running in place. */
  run?: RunSpec;
  argv: string[];
}

export interface TestRunResult {
  release: string;
  tests: TestTier;
  dryRun: boolean;
  engine: EngineInfo;
  reportDir: string;
  /** The engine command lines (what --dry-run prints). */
  commands: string[];
  containers: { label: string; name: string; gfx: string | null; gpu: number | null; reportDir: string }[];
  reports: TestReport[];
  /** Stopped by a signal (some GPUs may not have been tested). */
  interrupted: boolean;
  notes: string[];
}

/** The seconds of --timeout: a number of seconds, or with s, m, h; 0 for none. */
export function parseDuration(text: string): number {
  const m = /^([0-9]+)(s|m|min|h)?$/.exec(text.trim());
  if (!m) throw new UserError(`--timeout ${text}: expected seconds or a number with s, m or h (e.g. 90m, 6h; 0 for none)`, ExitCode.invalidInput);
  const n = Number(m[1]);
  return m[2] === 'h' ? n * 3600 : m[2] === 'm' || m[2] === 'min' ? n * 60 : n;
}

async function isDirectory(p: string): Promise<boolean> {
  try {
    return (await stat(p)).isDirectory();
  } catch {
    return false;
  }
}

/** The overlay: a git repository with a repo_name, holding the ebuilds under test. Exit 4 otherwise. */
async function checkOverlay(dir: string, plan: TestPlan): Promise<string> {
  if (!(await new OverlayRepo(dir).isRepository())) {
    throw new UserError(`the overlay ${dir} is not a git repository; create it with \`rocm-ebuild bump ${plan.release} --overlay ${dir}\``, ExitCode.overlayRefused);
  }
  const state = await scanOverlay(dir, plan.atoms.map((a) => a.atom));
  if (!state.repoName) throw new UserError(`the overlay ${dir} has no profiles/repo_name`, ExitCode.overlayRefused);
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
export async function prepareRun(options: TestOptions): Promise<{ plan: TestPlan; topology: Topology; engine: EngineInfo; containers: PlannedContainer[]; notes: string[]; pkgdir: string; distdir: string }> {
  const { model } = options;
  const inPlace = options.engine === 'none';
  // Asking the engine its version is a process of 30-40 ms: started now, it
  // runs while the overlay, the tree and the GPUs are checked. Its answer (or
  // absence) is looked at only where it was before, so errors keep their order.
  const wanted = options.engine as EngineName | undefined;
  const probe = inPlace
    ? undefined
    : detectEngine(wanted, options.env).then(async (found) => ({ found, info: found ? await engineInfo(found, options.env) : undefined }));
  probe?.catch(() => undefined);
  const plan = testPlan(model, options.atoms.length ? resolveAtoms(model, options.atoms) : undefined, options.tests, {
    skipTests: resolveAtoms(model, options.skipTests ?? []),
  });
  const overlay = path.resolve(options.overlay);
  const repoName = await checkOverlay(overlay, plan);
  const tree = path.resolve(options.tree);
  await checkTree(tree);

  const roots = rootsFromEnv(options.env);
  const noGpu = options.gpus.includes('none');
  if (noGpu && options.gpus.length > 1) throw new UserError('--gpu none cannot be combined with other --gpu values', ExitCode.invalidInput);
  const devices = await checkedDeviceTable(deviceTablePath(model.manifest.targetsFile)).catch(() => undefined);
  const topology = await readTopology(roots, devices);
  const { selected, notes } = noGpu ? { selected: [], notes: [] as string[] } : selectGpus(topology, options.gpus, model.release.policy, model.release.version);

  let engine: EngineInfo;
  if (inPlace || !probe) {
    engine = { name: 'none', version: 'in place', rootless: false, outer: await containerEngineHere(options.env) };
    if (!engine.outer && !options.dryRun) {
      throw new UserError(
        '--engine none runs Portage on this machine, rewriting /etc/portage and /etc/group: it is meant for CI jobs that already run in a Gentoo container, and no container was detected (/.dockerenv, /run/.containerenv). Set ROCM_EBUILD_IN_CONTAINER=1 if this is one.',
        ExitCode.invalidInput,
      );
    }
    if (process.geteuid?.() !== 0 && !options.dryRun) throw new UserError('--engine none needs root: it configures Portage on this machine', ExitCode.invalidInput);
  } else {
    const { found, info } = await probe;
    if (!found && !options.dryRun) throw noEngineError(wanted);
    const engineName = found ?? wanted ?? 'podman';
    engine = info ?? { name: engineName, version: 'not installed', rootless: engineName === 'podman' && process.geteuid?.() !== 0 };
    if (!found) notes.push(`${engineName} is not installed: the commands are shown, nothing can run here`);
  }

  const distdir = resolveDistdir(options.distdir, options.env);
  const pkgdir = path.resolve(options.pkgdir ?? path.join(cacheHome(options.env), 'binpkgs'));
  const reportRoot = path.resolve(options.reportDir);
  const runId = randomBytes(3).toString('hex');
  const shardEnv: Record<string, string> = options.shard ? { GTEST_SHARD_INDEX: String(options.shard.index - 1), GTEST_TOTAL_SHARDS: String(options.shard.total) } : {};
  const usableGpus = topology.gpus.filter((g) => usable(topology, g));
  const targets: { gpu: Gpu | null; label: string }[] = noGpu ? [{ gpu: null, label: NO_GPU_LABEL }] : selected;
  const containers = targets.map(({ gpu, label }) => {
    const render = gpu?.render ?? null;
    const gids = gpu ? [...new Set([topology.kfd.gid, render!.gid].filter((g): g is number => g !== null))] : [];
    const reportDir = path.join(reportRoot, label);
    const paths = inPlace
      ? { tree, overlay, distdir, pkgdir, log: reportDir, setup: path.join(reportDir, 'setup') }
      : containerPaths(repoName);
    const job: ContainerJob = {
      plan: noGpu ? withoutGpuTests(plan) : plan,
      gfx: gpu?.gfx ?? null,
      paths,
      // In place the job's container may see every GPU of its machine: the runtime is told which one is ours.
      testEnv: { ...(inPlace && gpu ? { ROCR_VISIBLE_DEVICES: String(usableGpus.indexOf(gpu)) } : {}), ...shardEnv },
      repoName,
      jobs: options.jobs,
      timeoutSeconds: options.timeoutSeconds,
      gids,
      devices: gpu ? (inPlace ? [topology.kfd.hostPath, render!.hostPath] : [topology.kfd.path, render!.path]) : [],
      userpriv: !engine.rootless,
    };
    const name = inPlace ? `in-place-${label}` : `rocm-ebuild-${model.release.version.replace(/\./g, '')}-${label}-${runId}`;
    if (inPlace) return { label, gpu, name, reportDir, job, argv: ['/bin/sh', path.join(paths.setup, 'run.sh')] };
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
      seccompUnconfined: Boolean(gpu) && job.plan.atoms.some((a) => a.runTests && a.gpuTests),
      mounts: [
        { host: overlay, container: IN_CONTAINER.overlay(repoName), readOnly: true },
        { host: tree, container: IN_CONTAINER.tree, readOnly: true },
        { host: distdir, container: IN_CONTAINER.distdir, readOnly: false },
        { host: pkgdir, container: IN_CONTAINER.pkgdir, readOnly: false },
        { host: reportDir, container: IN_CONTAINER.log, readOnly: false },
        { host: path.join(reportDir, 'setup'), container: IN_CONTAINER.setup, readOnly: true },
      ],
      labels: { 'io.rocm-ebuild.release': model.release.version, 'io.rocm-ebuild.gfx': gpu?.gfx ?? 'none', 'io.rocm-ebuild.run': runId },
      remove: !options.keep,
      command: ['/bin/sh', `${IN_CONTAINER.setup}/run.sh`],
    };
    let argv: string[];
    try {
      argv = runCommand(run);
    } catch (err) {
      throw new UserError((err as Error).message, ExitCode.invalidInput);
    }
    return { label, gpu, name, reportDir, job, run, argv };
  });
  return { plan, topology, engine, containers, notes, pkgdir, distdir };
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

/** A lock on one GPU's report directory: two runs writing one report would mix their results. */
async function lockReportDir(dir: string): Promise<() => Promise<void>> {
  const file = path.join(dir, '.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(file, 'wx');
      await handle.writeFile(`${process.pid}\n`);
      await handle.close();
      return () => rm(file, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number((await readFile(file, 'utf8').catch(() => '')).trim());
      let alive = false;
      try {
        if (pid > 0) {
          process.kill(pid, 0);
          alive = true;
        }
      } catch {
        alive = false;
      }
      if (alive) {
        throw new UserError(`another rocm-ebuild test (pid ${pid}) is writing ${dir}; wait for it or use another --report-dir`, ExitCode.overlayRefused);
      }
      await rm(file, { force: true }); // left by a run that was killed
    }
  }
  throw new UserError(`cannot lock ${dir}`, ExitCode.overlayRefused);
}

/** Results of an earlier run in this directory go; anything else the user put there stays. */
async function clearResults(dir: string): Promise<void> {
  for (const f of [REPORT_FILES.status, REPORT_FILES.phases, REPORT_FILES.console, REPORT_FILES.build, REPORT_FILES.gtest, 'setup', 'report.json', 'junit.xml', 'report.md']) {
    await rm(path.join(dir, f), { recursive: true, force: true });
  }
}

async function writeAtomic(file: string, text: string): Promise<void> {
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, text);
  await rename(tmp, file);
}

async function writeSetup(c: PlannedContainer): Promise<void> {
  const dir = path.join(c.reportDir, 'setup');
  await mkdir(path.join(dir, 'env'), { recursive: true });
  const files = { ...portageFiles(c.job), 'run.sh': containerScript(c.job) };
  for (const [rel, text] of Object.entries(files)) {
    const file = path.join(dir, rel);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, text, { mode: 0o644 });
  }
  // The container reads it as any user; the report directory itself is written by user portage too.
  await chmod(dir, 0o755);
}

async function tailOf(file: string, lines = 200): Promise<string> {
  try {
    const handle = await open(file, 'r');
    try {
      const { size } = await handle.stat();
      const length = Math.min(size, 256 * 1024);
      const buf = Buffer.alloc(length);
      await handle.read(buf, 0, length, size - length);
      return buf.toString('utf8').split('\n').slice(-lines).join('\n');
    } finally {
      await handle.close();
    }
  } catch {
    return '';
  }
}

async function listFiles(dir: string, relativeTo: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true, recursive: true });
    return entries
      .filter((e) => e.isFile())
      .map((e) => path.relative(relativeTo, path.join(e.parentPath ?? (e as unknown as { path: string }).path, e.name)))
      .sort();
  } catch {
    return [];
  }
}

/**
 * One container: started with the plan's command line, followed (console to
 * console.log, the phases file for progress), stopped when the run is
 * aborted, removed unless --keep, and its report written. The container's
 * exit status is not the verdict: the status file is.
 */
async function runContainer(c: PlannedContainer, options: TestOptions, engine: EngineInfo, position: { index: number; count: number }): Promise<TestReport> {
  const { progress } = options;
  const started = new Date();
  const consoleFile = path.join(c.reportDir, REPORT_FILES.console);
  const phasesFile = path.join(c.reportDir, REPORT_FILES.phases);
  const consoleOut = createWriteStream(consoleFile);
  const plan = c.job.plan;
  const total = plan.atoms.length;
  let done = 0;
  let what = 'starting';
  const show = () => progress.update(position.count > 1 ? `${c.label} (${position.index + 1}/${position.count})` : c.label, done, total, what);
  show();

  let interrupted = options.signal.aborted;
  let stderrTail = '';
  const child = spawn(c.argv[0]!, c.argv.slice(1), { env: options.env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  const onLine = (line: string) => {
    const m = /^@@rocm-ebuild (step|atom|finish) ?(\S*)/.exec(line);
    if (!m) return;
    if (m[1] === 'step') what = m[2] === 'deps' ? 'dependencies' : m[2] === 'resolve' ? 'resolving dependencies' : m[2]!;
    if (m[1] === 'atom') {
      done = Math.max(0, plan.atoms.findIndex((a) => a.atom === m[2]));
      what = m[2]!;
    }
    show();
  };
  let pending = '';
  child.stdout.on('data', (d: Buffer) => {
    consoleOut.write(d);
    pending += d.toString();
    const lines = pending.split('\n');
    pending = lines.pop()!;
    for (const l of lines) onLine(l);
  });
  child.stderr.on('data', (d: Buffer) => {
    consoleOut.write(d);
    stderrTail = (stderrTail + d.toString()).slice(-4000);
  });
  // Phases come from Portage's bashrc hook through the report directory.
  let phaseOffset = 0;
  const poll = setInterval(async () => {
    const text = await readFile(phasesFile, 'utf8').catch(() => '');
    if (text.length <= phaseOffset) return;
    const fresh = parsePhases(text.slice(phaseOffset));
    phaseOffset = text.length;
    const last = fresh.filter((p) => p.atom !== '-').pop();
    if (last) {
      what = `${last.atom} ${last.phase}`;
      show();
    }
  }, 1000);

  let stopping: Promise<unknown> | undefined;
  const stop = () => {
    interrupted = true;
    what = 'stopping';
    show();
    // SIGTERM to the script, which stops emerge and records what it was doing; SIGKILL after 10 s.
    if (!c.run) {
      child.kill('SIGTERM');
      stopping ??= new Promise((resolve) => setTimeout(resolve, 10_000).unref()).then(() => {
        if (child.exitCode === null) child.kill('SIGKILL');
      });
      return;
    }
    stopping ??= capture(stopCommand(c.run.engine, c.name, 10), { env: options.env }).then(async (r) => {
      if (r.code !== 0 && child.exitCode === null) child.kill('SIGKILL');
    });
  };
  options.signal.addEventListener('abort', stop, { once: true });
  if (options.signal.aborted) stop();

  const engineStatus = await new Promise<number | null>((resolve) => {
    child.on('error', (err) => {
      stderrTail += err.message;
      resolve(127);
    });
    child.on('close', (code) => resolve(code));
  });
  options.signal.removeEventListener('abort', stop);
  clearInterval(poll);
  if (c.run) await stopping;
  await new Promise<void>((resolve) => consoleOut.end(() => resolve()));
  if (c.run && !options.keep) {
    // --rm removes it when it ends; this covers an engine client that died first.
    await capture(removeCommand(c.run.engine, c.name), { env: options.env });
  }

  const ended = new Date();
  const status = parseStatus(await readFile(path.join(c.reportDir, REPORT_FILES.status), 'utf8').catch(() => ''));
  const report = await buildReport(
    {
      tool: { name: 'rocm-ebuild', version: options.toolVersion },
      gfx: c.job.gfx,
      ...(c.job.gfx ? { amdgpuTargets: c.job.gfx } : {}),
      ...(c.gpu
        ? {
            device: {
              index: c.gpu.index,
              gfx: c.gpu.gfx!,
              ...(c.gpu.name ? { name: c.gpu.name } : {}),
              ...(c.gpu.pciAddress ? { pciAddress: c.gpu.pciAddress } : {}),
              ...(c.gpu.deviceId ? { deviceId: c.gpu.deviceId } : {}),
              ...(c.gpu.uniqueId ? { uniqueId: c.gpu.uniqueId } : {}),
              renderNode: c.gpu.render!.path,
              ...(c.gpu.computeUnits !== null ? { computeUnits: c.gpu.computeUnits } : {}),
              ...(c.gpu.vramBytes !== null ? { vramBytes: c.gpu.vramBytes } : {}),
            },
          }
        : {}),
      engine:
        engine.name === 'none'
          ? { name: engine.outer === 'docker' || engine.outer === 'podman' ? engine.outer : 'none', version: 'in place' }
          : { name: engine.name, version: engine.version },
      image: options.image,
      started: started.toISOString(),
      ended: ended.toISOString(),
      container: { name: c.name, kept: options.keep },
    },
    c.job.plan,
    {
      status,
      phases: parsePhases(await readFile(phasesFile, 'utf8').catch(() => '')),
      console: await readFile(consoleFile, 'utf8').catch(() => ''),
      buildLogs: await listFiles(path.join(c.reportDir, REPORT_FILES.build), c.reportDir),
      gtest: await readGtestReports(path.join(c.reportDir, REPORT_FILES.gtest), c.reportDir),
      interrupted,
      engineStatus,
      ...(engineStatus !== null && engineStatus >= 125 && status.length === 0 ? { engineError: `${engine.name} could not run the container (exit ${engineStatus}): ${stderrTail.trim().split('\n').slice(-3).join(' ')}` } : {}),
      tail: (rel) => tailOf(path.join(c.reportDir, rel)),
    },
  );
  const file = reportFileName(report);
  const problems = reportProblems(report, { relaxed: file !== 'report.json' });
  if (problems.length > 0) throw new Error(`internal error: the report of ${c.label} does not match schemas/test-report.schema.json: ${problems.join('; ')}`);
  await writeAtomic(path.join(c.reportDir, file), `${JSON.stringify(report, null, 2)}\n`);
  await writeAtomic(path.join(c.reportDir, 'junit.xml'), junitXml(report, await readGtestReports(path.join(c.reportDir, REPORT_FILES.gtest), c.reportDir)));
  await writeAtomic(path.join(c.reportDir, 'report.md'), markdownReport(report));
  return report;
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
    containers: containers.map((c) => ({ label: c.label, name: c.name, gfx: c.job.gfx, gpu: c.gpu?.index ?? null, reportDir: c.reportDir })),
    reports: [],
    interrupted: false,
    notes,
  };
  if (options.dryRun) return result;

  if (engine.name !== 'none') await ensureImage(engine.name, options.image, { env: options.env, note: (t) => options.progress.note(t), tty: Boolean(process.stderr.isTTY) });
  await mkdir(prepared.distdir, { recursive: true });
  await mkdir(prepared.pkgdir, { recursive: true });
  options.progress.start();
  try {
    for (const [index, c] of containers.entries()) {
      if (options.signal.aborted) break;
      await mkdir(c.reportDir, { recursive: true });
      // It is bind-mounted into a container that runs as root: never somewhere a symlink points to.
      if ((await lstat(c.reportDir)).isSymbolicLink()) {
        throw new UserError(`${c.reportDir} is a symbolic link; give --report-dir a real directory`, ExitCode.invalidInput);
      }
      const unlock = await lockReportDir(c.reportDir);
      try {
        await clearResults(c.reportDir);
        await writeSetup(c);
        const report = await runContainer(c, options, engine, { index, count: containers.length });
        result.reports.push(report);
        options.progress.note(`${c.label}: ${report.result} (${path.join(c.reportDir, 'report.md')})`);
      } finally {
        await unlock();
      }
    }
  } finally {
    options.progress.stop();
  }
  result.interrupted = options.signal.aborted;
  if (result.reports.length > 0) await writeAtomic(path.join(reportRoot, 'report.md'), markdownSummary(result.reports));
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

