import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Loaded by mocha before any test (its `require`): every cache the tool keeps under
 * XDG_CACHE_HOME (checked manifests, hashes, upstream trees) goes to a directory of this run,
 * never to the developer's ~/.cache. Child processes inherit it.
 *
 * Under `npm test` the run's directory comes from .mocharc.cjs (ROCM_EBUILD_TEST_RUN_DIR),
 * shared by every worker of a parallel run, so a manifest one test file checked is found
 * checked by the next, in whichever worker it runs; the configuration removes it at the end.
 * Without it (`mocha --no-config --require …`) the cache is this process's, removed after
 * its files.
 */
const runDir = process.env.ROCM_EBUILD_TEST_RUN_DIR;
const own = runDir === undefined ? mkdtempSync(path.join(os.tmpdir(), 'rocm-ebuild-test-cache-')) : undefined;
const dir = own ?? path.join(runDir!, 'cache');
mkdirSync(dir, { recursive: true });
process.env.XDG_CACHE_HOME = dir;

export const mochaHooks = {
  afterAll(): void {
    // In a parallel run root hooks run after every file: the shared directory outlives them.
    if (own) rmSync(own, { recursive: true, force: true });
  },
};
