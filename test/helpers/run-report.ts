import { appendFileSync } from 'node:fs';
import path from 'node:path';
import type { Context } from 'mocha';
import { FULL, SEED } from './sample.js';

/**
 * Loaded by mocha before any test (its `require`), so the suite's time is watched where it is
 * spent: every test's time is noted, and the ten slowest are listed at the end.
 *
 * Under `npm test` (.mocharc.cjs) the files may run in parallel workers, each of which runs
 * these hooks per file: each worker appends its timings to a file of the run's directory, and
 * the configuration, in the process that started the run, prints the sample line first and the
 * list at the end. Without it (`mocha --no-config --require …`) this process prints both.
 */
const runDir = process.env.ROCM_EBUILD_TEST_RUN_DIR;
let timings: { title: string; ms: number }[] = [];

export const mochaHooks = {
  beforeAll(): void {
    if (runDir !== undefined) return;
    process.stdout.write(
      FULL
        ? '  test sample: everything (ROCM_EBUILD_TEST_FULL=1)\n'
        : `  test sample: seed ${SEED}, one release per family and a share of the property cases (replay: ROCM_EBUILD_TEST_SEED=${SEED}; everything: ROCM_EBUILD_TEST_FULL=1)\n`,
    );
  },
  afterEach(this: Context): void {
    const t = this.currentTest;
    if (t?.duration !== undefined) timings.push({ title: t.fullTitle(), ms: t.duration });
  },
  afterAll(): void {
    if (runDir !== undefined) {
      if (timings.length > 0) appendFileSync(path.join(runDir, `timings-${process.pid}.jsonl`), timings.map((t) => `${JSON.stringify(t)}\n`).join(''));
      timings = [];
      return;
    }
    const slowest = [...timings].sort((a, b) => b.ms - a.ms).slice(0, 10);
    if (slowest.length === 0) return;
    const lines = slowest.map((t) => `  ${(t.ms / 1000).toFixed(1).padStart(7)} s  ${t.title}`);
    process.stdout.write(`\n  ten slowest tests (${FULL ? 'everything' : `sample seed ${SEED}`}):\n${lines.join('\n')}\n`);
  },
};
