import type { ReleaseEvidence } from '../model/evidence.js';
import type { Gpu, Topology } from '../gpu/topology.js';
import type { StackModel } from '../model/resolve.js';
import type { EngineName, RunSpec } from './command.js';
import type { EngineInfo } from './engine.js';
import type { TestPlan, TestTier } from './plan.js';
import type { ContainerJob } from './portage.js';
import type { TestReport } from './report.js';
import type { TestProgress } from './progress.js';

/**
 * What a test run is asked, what it prepares and what it returns: the types
 * run.ts (preparing) and execute.ts (running the containers) share, apart so
 * that neither imports the other for them.
 */

export interface TestOptions {
  /** The release's model, or its load still under way: the checks that need no manifest start meanwhile. */
  model: StackModel | Promise<StackModel>;
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
  /** --dry-run: the GPU is a stand-in for one this host lacks. */
  standIn?: boolean;
}

/** Everything prepareRun decided. */
export interface PreparedRun {
  plan: TestPlan;
  topology: Topology;
  engine: EngineInfo;
  containers: PlannedContainer[];
  notes: string[];
  pkgdir: string;
  distdir: string;
}

export interface TestRunResult {
  release: string;
  tests: TestTier;
  dryRun: boolean;
  engine: EngineInfo;
  reportDir: string;
  /** The engine command lines (what --dry-run prints). */
  commands: string[];
  containers: {
    label: string;
    name: string;
    gfx: string | null;
    gpu: number | null;
    reportDir: string;
    /** --dry-run: the files the container would get in its setup directory, by name. */
    setup?: Record<string, string>;
  }[];
  reports: TestReport[];
  /** Stopped by a signal (some GPUs may not have been tested). */
  interrupted: boolean;
  notes: string[];
  /** The release's evidence (how far its facts were checked), added by the command. */
  evidence?: ReleaseEvidence;
}
