import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fixtureManifest } from './fixture-manifest.js';
import { gitHome, runCli, tempDir, type CliResult } from './project.js';
import { synthesizeDistfiles, type PlanJson } from './stack-distfiles.js';

/**
 * Bumped overlays are expensive (a bump renders, checks and commits every
 * package), so tests that only read one share it: each fixture is built once
 * per mocha process, on first use, and removed when the process exits. A test
 * that changes an overlay works on `copyOverlay()` of it, never on it.
 */

export const IDENTITY = { name: 'Ada Tester', email: 'ada@example.org' };

const cleanup: string[] = [];
process.once('exit', () => {
  for (const dir of cleanup) rmSync(dir, { recursive: true, force: true });
});

async function scratch(prefix: string): Promise<string> {
  const dir = await tempDir(prefix);
  cleanup.push(dir);
  return dir;
}

export interface FullStackFixture {
  work: string;
  home: string;
  distdir: string;
  /** The shipped stack's plans (bump --dry-run --json) of 6.2.0, 6.2.2, 6.2.4 and 6.3.3. */
  plans: Map<string, PlanJson>;
  /** 6.2.2 bumped into a new overlay: read it, never change it. */
  overlay: string;
  /** The output of the bump that created `overlay`. */
  created: CliResult;
}

let fullStack: Promise<FullStackFixture> | undefined;

/** The shipped stack with synthetic distfiles (6.2.0, 6.2.2, 6.2.4, 6.3.3), and 6.2.2 bumped into a new overlay. */
export function fullStackFixture(): Promise<FullStackFixture> {
  fullStack ??= (async () => {
    const work = await scratch('rocm-ebuild-shared-');
    const home = await gitHome(IDENTITY);
    cleanup.push(home);
    const distdir = path.join(work, 'distfiles');
    await mkdir(distdir);
    const plans = new Map<string, PlanJson>();
    for (const version of ['6.2.0', '6.2.2', '6.2.4', '6.3.3']) plans.set(version, await synthesizeDistfiles(version, distdir, home));
    const overlay = path.join(work, 'overlay-6.2.2');
    const created = await runCli(['bump', '6.2.2', '--overlay', overlay, '--distdir', distdir, '--offline'], { home, cwd: work });
    assert.equal(created.code, 0, created.stderr);
    return { work, home, distdir, plans, overlay, created };
  })();
  return fullStack;
}

export interface SmallStackFixture {
  work: string;
  home: string;
  distdir: string;
  /** test/helpers/fixture-manifest.ts's three-package stack. */
  manifest: string;
  /** 6.2.2 of that stack bumped into a new overlay (6 commits): read it, never change it. */
  overlay: string;
  /** bump's arguments for this stack, after the version: --manifest, --distdir, --offline. */
  flags: string[];
}

let smallStack: Promise<SmallStackFixture> | undefined;

/** A three-package stack, its distfiles for 6.2.2 and 6.3.0, and 6.2.2 bumped into a new overlay. */
export function smallStackFixture(): Promise<SmallStackFixture> {
  smallStack ??= (async () => {
    const work = await scratch('rocm-ebuild-small-');
    const home = await gitHome(IDENTITY);
    cleanup.push(home);
    const manifest = await fixtureManifest();
    cleanup.push(manifest);
    const distdir = path.join(work, 'distfiles');
    await mkdir(distdir);
    for (const pn of ['rocm-base', 'gpulib', 'app']) {
      for (const v of ['6.2.2', '6.3.0']) await writeFile(path.join(distdir, `${pn}-${v}.tar.gz`), `${pn} ${v}\n`);
    }
    const flags = ['--manifest', manifest, '--distdir', distdir, '--offline'];
    const overlay = path.join(work, 'overlay-6.2.2');
    const r = await runCli(['bump', '6.2.2', '--overlay', overlay, ...flags], { home, cwd: work });
    assert.equal(r.code, 0, r.stderr);
    return { work, home, distdir, manifest, overlay, flags };
  })();
  return smallStack;
}

/** A private copy of a fixture overlay (with its .git), for a test that changes it. */
export function copyOverlay(from: string, to: string): string {
  execFileSync('cp', ['-a', from, to]);
  return to;
}
