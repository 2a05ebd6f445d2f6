import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BENCH_ROOT } from './dataset.js';
import type { BenchReport } from './report.js';
import { figure, interleaved, median, pairedRatio, timeCommand } from './timing.js';

/**
 * `pr check` over the 52 commits of a bump 6.2.2 into a new overlay, against
 * a baseline measured in the same run: what a maintainer does by hand to
 * review the same range, `git log -p` over it plus `rocm-ebuild lint
 * --overlay` of the same ebuilds (our checks, bash -n, shellcheck). The
 * target is at most 2× the baseline: pr check reads every commit and
 * Manifest, runs the git checks, and lints each ebuild as its commit wrote it.
 */

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const bin = path.join(root, 'bin', 'run.js');
const ROUNDS = Number(process.env.ROCM_EBUILD_BENCH_ROUNDS ?? 5);

const env = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'Bench',
  GIT_AUTHOR_EMAIL: 'bench@example.org',
  GIT_COMMITTER_NAME: 'Bench',
  GIT_COMMITTER_EMAIL: 'bench@example.org',
  NO_COLOR: '1',
};

async function bumpedOverlay(dir: string): Promise<string> {
  const distdir = path.join(dir, 'distfiles');
  const overlay = path.join(dir, 'overlay');
  const plan = JSON.parse(
    execFileSync(process.execPath, [bin, 'bump', '6.2.2', '--overlay', path.join(dir, 'none'), '--dry-run', '--json'], { env, maxBuffer: 64 << 20 }).toString(),
  ) as { packages: { distfiles: { name: string }[] }[] };
  await fs.mkdir(distdir, { recursive: true });
  for (const d of plan.packages.flatMap((p) => p.distfiles)) {
    const file = path.join(distdir, d.name);
    if (!(await fs.stat(file).catch(() => undefined))) await fs.writeFile(file, randomBytes(64 * 1024));
  }
  await fs.rm(overlay, { recursive: true, force: true });
  execFileSync(process.execPath, [bin, 'bump', '6.2.2', '--overlay', overlay, '--distdir', distdir, '--offline'], { env, stdio: 'ignore' });
  return overlay;
}

export async function run(): Promise<BenchReport> {
  Object.assign(process.env, env);
  const overlay = await bumpedOverlay(path.join(BENCH_ROOT, 'pr'));
  const commits = Number(execFileSync('git', ['rev-list', '--count', 'HEAD'], { cwd: overlay, env }).toString().trim());
  // The baseline's two parts are timed as separate contenders of the same rounds; round i's baseline is their sum.
  const t = await interleaved(ROUNDS, {
    ours: () => timeCommand(process.execPath, [bin, 'pr', 'check', '--overlay', overlay, '--root', '--no-pkgcheck']),
    gitLog: () => timeCommand('git', ['-C', overlay, 'log', '-p', '--root', 'HEAD']),
    lint: () => timeCommand(process.execPath, [bin, 'lint', '--overlay', overlay, '--version', '6.2.2']),
  });
  const base = (field: 'seconds' | 'cpuSeconds') => (i: number) => t.gitLog.runs[i]![field] + t.lint.runs[i]![field];
  const baseWall = t.gitLog.runs.map((_, i) => base('seconds')(i));
  const baseCpu = t.gitLog.runs.map((_, i) => base('cpuSeconds')(i));
  return {
    title: `pr check: the ${commits} commits of a bump 6.2.2 (median of ${ROUNDS} alternating runs [min–max])`,
    figures: [
      figure('rocm-ebuild pr check --root', t.ours, `${commits} commits: git checks, Manifests, lint + bash -n + shellcheck of 49 ebuilds`),
      {
        label: 'baseline: git log -p + rocm-ebuild lint',
        seconds: median(baseWall),
        min: Math.min(...baseWall),
        max: Math.max(...baseWall),
        cpuSeconds: median(baseCpu),
        detail: 'the same range read and the same ebuilds linted',
      },
      figure('  of which git log -p', t.gitLog),
      figure('  of which rocm-ebuild lint --overlay', t.lint),
    ],
    ratios: [{ label: 'pr check / baseline', ...pairedRatio(t.ours, base('seconds')), goal: 2 }],
    notes: ['Each side starts Node and loads the stack manifest once; pkgcheck is not involved (--no-pkgcheck).'],
  };
}
