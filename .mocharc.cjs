'use strict';
// mocha's configuration (`npm test`, `npx mocha`). Read once, by the process that starts the
// run; in parallel mode the test files run in worker processes, which inherit its environment.
const { mkdtempSync, readdirSync, readFileSync, rmSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');

// The suite is CPU-bound on its own and spends much of its time waiting for the programs it
// runs (git, bash, shellcheck, podman): one file per core keeps both cores busy, also on a
// loaded host, where two runnable processes get twice the share of one. Mocha's default is a
// core less than the machine has, which is one worker on two cores. ROCM_EBUILD_TEST_JOBS=1
// runs the files one after another in one process, as before.
const jobs = Number(process.env.ROCM_EBUILD_TEST_JOBS) || os.availableParallelism();

// One directory for the run, shared by every worker (test/helpers/isolated-cache.ts: the tool's
// caches; test/helpers/run-report.ts: each worker's test timings), removed when the run ends.
const runDir = mkdtempSync(path.join(os.tmpdir(), 'rocm-ebuild-test-run-'));
process.env.ROCM_EBUILD_TEST_RUN_DIR = runDir;

// The same rules as test/helpers/sample.ts, which the tests use: printed here, once, before the run.
const full = process.env.ROCM_EBUILD_TEST_FULL === '1';
const seedText = process.env.ROCM_EBUILD_TEST_SEED;
const seed = seedText !== undefined && /^\d+$/.test(seedText) ? Number(seedText) : 1;
process.stdout.write(
  full
    ? '  test sample: everything (ROCM_EBUILD_TEST_FULL=1)\n'
    : `  test sample: seed ${seed}, one release per family and a share of the property cases (replay: ROCM_EBUILD_TEST_SEED=${seed}; everything: ROCM_EBUILD_TEST_FULL=1)\n`,
);

process.once('exit', () => {
  // The ten slowest tests of the whole run, from what every worker wrote (run-report.ts).
  const timings = [];
  try {
    for (const f of readdirSync(runDir)) {
      if (!f.startsWith('timings-')) continue;
      for (const line of readFileSync(path.join(runDir, f), 'utf8').split('\n')) if (line) timings.push(JSON.parse(line));
    }
  } catch {
    // Nothing written: nothing to list.
  }
  const slowest = timings.sort((a, b) => b.ms - a.ms).slice(0, 10);
  if (slowest.length > 0) {
    const lines = slowest.map((t) => `  ${(t.ms / 1000).toFixed(1).padStart(7)} s  ${t.title}`);
    process.stdout.write(`\n  ten slowest tests (${full ? 'everything' : `sample seed ${seed}`}, ${jobs} at once):\n${lines.join('\n')}\n`);
  }
  rmSync(runDir, { recursive: true, force: true });
});

module.exports = {
  spec: ['dist/test/**/*.test.js'],
  timeout: 60000,
  reporter: 'spec',
  'enable-source-maps': true,
  require: ['dist/test/helpers/isolated-cache.js', 'dist/test/helpers/run-report.js'],
  ...(jobs > 1 ? { parallel: true, jobs } : {}),
};
