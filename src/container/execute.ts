import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { chmod, lstat, mkdir, open, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { readBounded } from '../util/bounded-read.js';
import { writeFileAtomically } from '../util/atomic-write.js';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';
import { liveTerminal } from '../util/terminal.js';
import { removeCommand, stopCommand } from './command.js';
import { capture, ensureImage, type EngineInfo } from './engine.js';
import { readGtestReports } from './gtest.js';
import { junitXml } from './junit.js';
import { REPORT_FILES } from './layout.js';
import { markdownReport, markdownSummary } from './markdown.js';
import { buildReport, reportFileName, reportProblems, type TestReport } from './report.js';
import { parsePhases, parseStatus } from './records.js';
import type { PlannedContainer, PreparedRun, TestOptions, TestRunResult } from './run-types.js';
import { setupFiles } from './script.js';

/*
 * The part of `rocm-ebuild test` that runs: containers started and followed,
 * reports written. Split from run.ts so that --dry-run and the checks made
 * before any container starts load none of it (about 15 modules, the XML
 * parser among them).
 */

/**
 * A file the container wrote into the report directory (status, phases): what
 * ran in there as root could leave a FIFO or a huge file under the name, so it
 * is read through the bounded reader; anything else reads as empty.
 */
async function reportText(file: string): Promise<string> {
  const read = await readBounded(file, REPORT_FILE_MAX_BYTES);
  return read.ok ? read.data.toString('utf8') : '';
}

const REPORT_FILE_MAX_BYTES = 64 * 1024 * 1024;

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

async function writeSetup(c: PlannedContainer): Promise<void> {
  const dir = path.join(c.reportDir, 'setup');
  await mkdir(path.join(dir, 'env'), { recursive: true });
  const files = setupFiles(c.job);
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
    const text = await reportText(phasesFile);
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
  const status = parseStatus(await reportText(path.join(c.reportDir, REPORT_FILES.status)));
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
      phases: parsePhases(await reportText(phasesFile)),
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
  await writeFileAtomically(path.join(c.reportDir, file), `${JSON.stringify(report, null, 2)}\n`);
  await writeFileAtomically(path.join(c.reportDir, 'junit.xml'), junitXml(report, await readGtestReports(path.join(c.reportDir, REPORT_FILES.gtest), c.reportDir)));
  await writeFileAtomically(path.join(c.reportDir, 'report.md'), markdownReport(report));
  return report;
}

/**
 * The containers of a prepared run, one after the other (the first builds the
 * target-independent binary packages the others reuse). Stops at the first
 * interruption; the reports of what ran are put into `result` either way.
 */
export async function executeRun(prepared: PreparedRun, options: TestOptions, result: TestRunResult): Promise<void> {
  const { engine, containers } = prepared;
  const reportRoot = result.reportDir;
  if (engine.name !== 'none') await ensureImage(engine.name, options.image, { env: options.env, note: (t) => options.progress.note(t), tty: liveTerminal(process.stderr) });
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
  if (result.reports.length > 0) await writeFileAtomically(path.join(reportRoot, 'report.md'), markdownSummary(result.reports));
}
