import type { Context } from 'mocha';
import { FULL, SEED } from './sample.js';

/**
 * Loaded by mocha before any test (.mocharc.json `require`). Says at the start what share of the
 * sampled tests this run covers and how to replay or widen it, and at the end lists the ten
 * slowest tests, so the suite's time is watched where it is spent.
 */
const timings: { title: string; ms: number }[] = [];

export const mochaHooks = {
  beforeAll(): void {
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
    const slowest = [...timings].sort((a, b) => b.ms - a.ms).slice(0, 10);
    if (slowest.length === 0) return;
    const lines = slowest.map((t) => `  ${(t.ms / 1000).toFixed(1).padStart(7)} s  ${t.title}`);
    process.stdout.write(`\n  ten slowest tests (${FULL ? 'everything' : `sample seed ${SEED}`}):\n${lines.join('\n')}\n`);
  },
};
