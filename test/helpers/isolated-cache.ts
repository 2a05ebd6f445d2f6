import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Loaded by mocha before any test (.mocharc.json `require`): every cache the
 * tool keeps under XDG_CACHE_HOME (checked manifests, hashes, upstream trees)
 * goes to a directory of this run, shared by its tests and removed at the end,
 * never to the developer's ~/.cache. Child processes inherit it.
 */
const dir = mkdtempSync(path.join(os.tmpdir(), 'rocm-ebuild-test-cache-'));
process.env.XDG_CACHE_HOME = dir;

export const mochaHooks = {
  afterAll(): void {
    rmSync(dir, { recursive: true, force: true });
  },
};
