import path from 'node:path';
import { NO_GPU_REPORT_SCHEMA, SchemaValidator, TEST_REPORT_SCHEMA } from '../manifest/schema-validator.js';
import { classify, type FailureClass } from './classify.js';
import { gtestCounts, type GtestReport } from './gtest.js';
import { REPORT_FILES } from './layout.js';
import type { TestPlan, TestTier } from './plan.js';
import { emergedPackages, phasesBySegment, splitConsole, type PhaseRecord, type StatusRecord } from './records.js';

/** The phases schemas/test-report.schema.json knows, in order. */
export const REPORT_PHASES = ['resolve', 'fetch', 'unpack', 'prepare', 'configure', 'compile', 'test', 'install', 'merged'] as const;
export type ReportPhase = (typeof REPORT_PHASES)[number];

/** Portage's EBUILD_PHASE as the report names it. */
export function reportPhase(ebuildPhase: string): ReportPhase | undefined {
  switch (ebuildPhase) {
    case 'pretend':
    case 'setup':
    case 'nofetch':
    case 'fetch':
      return 'fetch';
    case 'unpack':
    case 'prepare':
    case 'configure':
    case 'compile':
    case 'test':
    case 'install':
      return ebuildPhase;
    case 'instprep':
    case 'package':
    case 'preinst':
    case 'postinst':
    case 'merge':
      return 'install';
    default:
      return undefined;
  }
}

export interface AtomReport {
  atom: string;
  version?: string;
  tested: boolean;
  phase: ReportPhase;
  result: 'passed' | 'failed' | 'skipped' | 'not-run';
  binpkg?: boolean;
  seconds: number;
  failureClass: FailureClass | null;
  message?: string;
  logs: string[];
  testCounts?: { total: number; failed: number; skipped: number };
}

export interface DeviceReport {
  index?: number;
  gfx: string;
  name?: string;
  pciAddress?: string;
  deviceId?: string;
  uniqueId?: string;
  renderNode: string;
  computeUnits?: number;
  vramBytes?: number;
}

/** One container's report: schemas/test-report.schema.json, written as <report-dir>/<gfx>/report.json. */
export interface TestReport {
  schemaVersion: 1;
  tool: { name: string; version: string };
  release: string;
  /** Null for a build without a GPU (written as build-report.json, not report.json). */
  gfx: string | null;
  amdgpuTargets?: string;
  device?: DeviceReport;
  /** "none": run in place inside a CI job's own container (--engine none). */
  engine: { name: 'podman' | 'docker' | 'none'; version?: string };
  image: string;
  tests: TestTier;
  started: string;
  ended: string;
  result: 'passed' | 'failed' | 'interrupted' | 'error';
  /** Why the run as a whole failed or could not proceed (optional, ours). */
  message?: string;
  /** The container's name, and whether it was kept (--keep) (optional, ours). */
  container?: { name: string; kept: boolean };
  atoms: AtomReport[];
}

/** What the container run left behind, read by the host. */
export interface RunOutcome {
  status: StatusRecord[];
  phases: PhaseRecord[];
  console: string;
  /** Files under build/, relative to the report directory. */
  buildLogs: string[];
  gtest: GtestReport[];
  /** rocm-ebuild stopped the run (Ctrl-C, SIGTERM). */
  interrupted: boolean;
  /** The engine's own exit status (the script's, or 125–127 when the engine failed to start it). */
  engineStatus: number | null;
  engineError?: string;
  /** The last lines of a file under the report directory (build logs), for classification. */
  tail: (relative: string) => Promise<string>;
}

export type ReportMeta = Omit<TestReport, 'result' | 'atoms' | 'message' | 'schemaVersion' | 'tests' | 'release'>;

const elapsed = (records: readonly PhaseRecord[]): number => (records.length > 1 ? records[records.length - 1]!.time - records[0]!.time : 0);

function logsOf(buildLogs: readonly string[], atom: string, version?: string): string[] {
  const [cat, pn] = atom.split('/') as [string, string];
  const prefix = `${cat}:${pn}-${version ?? ''}`;
  return buildLogs.filter((f) => {
    const base = path.basename(f);
    return base.startsWith(prefix) && (version !== undefined || /^[0-9]/.test(base.slice(prefix.length)));
  });
}

/** The console and the phases file, split by the step (or atom) of the run they belong to. */
interface Segments {
  consoleBy: ReturnType<typeof splitConsole>;
  phasesBy: ReturnType<typeof phasesBySegment>;
  /** The console text of one segment. */
  text: (segment: string) => string;
}

/** Why the run as a whole failed before its atoms, if it did, and the class of that failure. */
interface RunVerdict {
  runMessage: string | undefined;
  runClass: FailureClass | null;
}

/**
 * The report of one container run, from the status file (every result comes
 * from an exit status recorded there), with phases, packages, classes and
 * messages read from the phases file, the console and the build logs.
 */
export async function buildReport(meta: ReportMeta, plan: TestPlan, outcome: RunOutcome): Promise<TestReport> {
  const consoleBy = splitConsole(outcome.console);
  const seg: Segments = { consoleBy, phasesBy: phasesBySegment(outcome.phases), text: (segment) => (consoleBy.get(segment) ?? []).join('\n') };
  const step = (name: string) => outcome.status.find((s) => s.step === name);
  const { atoms, ...verdict } = await stepsBeforeAtoms(outcome, seg);

  let anyFailed = false;
  for (const planned of plan.atoms) {
    const { atom, failed } = await plannedAtomReport(planned, outcome, seg, verdict);
    atoms.push(atom);
    if (failed) anyFailed = true;
  }

  const setup = step('setup');
  const gpu = step('gpu');
  const { runMessage } = verdict;
  let result: TestReport['result'];
  if (outcome.interrupted) result = 'interrupted';
  else if (!setup || setup.status !== 0 || !gpu || gpu.status !== 0 || (outcome.engineStatus !== null && outcome.engineStatus >= 125 && outcome.status.length === 0)) result = 'error';
  else if (runMessage || anyFailed || atoms.some((a) => a.result === 'failed')) result = 'failed';
  else result = 'passed';
  return {
    schemaVersion: 1,
    ...meta,
    release: plan.release,
    tests: plan.tier,
    result,
    ...(runMessage ? { message: runMessage } : {}),
    atoms,
  };
}

/**
 * The steps before the atoms (setup, gpu, resolve, deps): any of them failing leaves the
 * atoms not run, and says why. The dependencies emerge merged are reported, each with its outcome.
 */
async function stepsBeforeAtoms(outcome: RunOutcome, seg: Segments): Promise<RunVerdict & { atoms: AtomReport[] }> {
  const step = (name: string) => outcome.status.find((s) => s.step === name);
  const { text } = seg;
  const setup = step('setup');
  const gpu = step('gpu');
  const resolve = step('resolve');
  const deps = step('deps');
  if (!setup || setup.status !== 0) {
    return {
      atoms: [],
      runMessage: outcome.engineError ?? (setup ? `setting up the container failed: ${setup.note || `exit status ${setup.status}`}` : outcome.interrupted ? 'interrupted before the container was set up' : 'the container did not start'),
      runClass: outcome.interrupted ? 'interrupted' : null,
    };
  }
  if (!gpu || gpu.status !== 0) {
    if (gpu || !outcome.interrupted) {
      const c = classify({ step: 'gpu', status: gpu?.status ?? null, timedOut: false, interrupted: outcome.interrupted, text: text('gpu') });
      return { atoms: [], runMessage: c.message, runClass: c.failureClass };
    }
    return { atoms: [], runMessage: 'interrupted', runClass: 'interrupted' };
  }
  if (!resolve || resolve.status !== 0) {
    const c = classify({ step: 'resolve', status: resolve?.status ?? null, timedOut: false, interrupted: outcome.interrupted || !resolve, text: text('resolve') });
    return { atoms: [], runMessage: c.message, runClass: c.failureClass };
  }
  const atoms = await dependencyReports(outcome, seg, deps?.status);
  if (deps && deps.status === 0) return { atoms, runMessage: undefined, runClass: null };
  const failedDep = atoms.find((a) => a.result === 'failed');
  if (failedDep) return { atoms, runMessage: `dependency ${failedDep.atom}-${failedDep.version} failed: ${failedDep.message}`, runClass: failedDep.failureClass };
  const c = classify({ step: 'deps', status: deps?.status ?? null, timedOut: false, interrupted: outcome.interrupted || !deps, text: text('deps') });
  return { atoms, runMessage: `building the dependencies failed: ${c.message}`, runClass: c.failureClass };
}

/** Dependencies: what emerge merged, each with its own outcome. */
async function dependencyReports(outcome: RunOutcome, seg: Segments, depsStatus: number | null | undefined): Promise<AtomReport[]> {
  const atoms: AtomReport[] = [];
  const emerged = emergedPackages(seg.consoleBy.get('deps') ?? []);
  const depPhases = seg.phasesBy.get('deps') ?? [];
  for (const e of emerged) {
    const own = depPhases.filter((p) => p.atom === e.atom);
    const last = own.length ? reportPhase(own[own.length - 1]!.phase) : undefined;
    const logs = logsOf(outcome.buildLogs, e.atom, e.version);
    let failure: { failureClass: FailureClass; message: string } | undefined;
    if (e.failedPhase) {
      const tail = logs.length ? await outcome.tail(logs[logs.length - 1]!) : '';
      failure = classify({ step: 'deps', status: depsStatus ?? 1, timedOut: false, interrupted: false, phase: reportPhase(e.failedPhase) ?? last, text: `${seg.text('deps')}\n${tail}` });
    } else if (!e.done && outcome.interrupted) {
      failure = { failureClass: 'interrupted', message: 'interrupted' };
    }
    atoms.push({
      atom: e.atom,
      version: e.version,
      tested: false,
      phase: e.done ? 'merged' : e.failedPhase ? (reportPhase(e.failedPhase) ?? last ?? 'fetch') : (last ?? 'fetch'),
      result: e.done ? 'passed' : e.failedPhase ? 'failed' : 'not-run',
      binpkg: e.binpkg,
      seconds: elapsed(own),
      failureClass: failure?.failureClass ?? null,
      ...(failure ? { message: failure.message } : {}),
      logs: [...logs, REPORT_FILES.console],
    });
  }
  return atoms;
}

/**
 * One atom the plan tests, from its status line: not run, skipped, passed, or failed with
 * its class and message (with the failing test cases). `failed` says it counts against the run.
 */
async function plannedAtomReport(
  planned: TestPlan['atoms'][number],
  outcome: RunOutcome,
  seg: Segments,
  verdict: RunVerdict,
): Promise<{ atom: AtomReport; failed: boolean }> {
  const gtest = outcome.gtest.filter((g) => g.file.startsWith(`${REPORT_FILES.gtest}/${planned.atom}/`));
  const counts: { testCounts?: AtomReport['testCounts'] } = gtest.length ? { testCounts: gtestCounts(gtest) } : {};
  const logs = [...logsOf(outcome.buildLogs, planned.atom, planned.version), ...gtest.map((g) => g.file), REPORT_FILES.console];
  const base = { atom: planned.atom, version: planned.version, tested: true, binpkg: false, logs, ...counts };
  const s = outcome.status.find((x) => x.step === 'atom' && x.atom === planned.atom);
  if (!s) {
    const interrupted = outcome.interrupted;
    const atom: AtomReport = {
      ...base,
      phase: 'resolve',
      result: 'not-run',
      seconds: 0,
      failureClass: verdict.runClass ?? (interrupted ? 'interrupted' : null),
      message: `not run: ${verdict.runMessage ?? (interrupted ? 'interrupted' : 'the run ended before it')}`,
    };
    return { atom, failed: false };
  }
  const own = seg.phasesBy.get(`atom:${planned.atom}`)?.filter((p) => p.atom === planned.atom) ?? [];
  const last = own.length ? reportPhase(own[own.length - 1]!.phase) : undefined;
  if (s.status === null) {
    return { atom: { ...base, phase: 'resolve', result: 'skipped', seconds: 0, failureClass: null, message: `not run: ${s.note}` }, failed: true };
  }
  if (s.status === 0) {
    const atom: AtomReport = {
      ...base,
      phase: 'merged',
      result: 'passed',
      seconds: s.seconds,
      failureClass: null,
      ...(planned.runTests ? {} : { message: `built, not tested: ${planned.noTests}` }),
    };
    return { atom, failed: false };
  }
  const interrupted = outcome.interrupted && s.note !== 'timeout';
  const buildLog = logsOf(outcome.buildLogs, planned.atom, planned.version).pop();
  const tail = buildLog ? await outcome.tail(buildLog) : '';
  const c = classify({ step: 'atom', status: s.status, timedOut: s.note === 'timeout', interrupted, phase: last, text: `${seg.text(`atom:${planned.atom}`)}\n${tail}` });
  const tc = counts.testCounts;
  const names = gtest.flatMap((g) => g.suites.flatMap((su) => su.cases.filter((x) => x.failure !== undefined).map((x) => `${su.name}.${x.name}`)));
  const failedTests =
    tc && tc.failed > 0 && c.failureClass === 'test'
      ? ` (${tc.failed} of ${tc.total} tests failed: ${names.slice(0, 3).join(', ')}${names.length > 3 ? ', …' : ''})`
      : '';
  const atom: AtomReport = { ...base, phase: last ?? 'resolve', result: interrupted ? 'not-run' : 'failed', seconds: s.seconds, failureClass: c.failureClass, message: c.message + failedTests };
  return { atom, failed: !interrupted };
}

/**
 * Where a report goes. report.json (what `pr body --tests` reads) follows the
 * schema exactly; a build without a GPU has no gfx and goes to
 * build-report.json: the same shape, outside the contract.
 */
export function reportFileName(report: Pick<TestReport, 'gfx' | 'engine'>): string {
  if (report.gfx === null) return 'build-report.json';
  return 'report.json';
}

/** Problems of a report against schemas/test-report.schema.json (empty when it conforms); relaxed: gfx may be null. */
export function reportProblems(report: unknown, options: { relaxed?: boolean } = {}): string[] {
  const validate = SchemaValidator.shared().validatorOf(options.relaxed ? NO_GPU_REPORT_SCHEMA : TEST_REPORT_SCHEMA);
  if (validate(report)) return [];
  return ((validate.errors ?? []) as { instancePath: string; message?: string }[]).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`);
}
