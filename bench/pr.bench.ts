import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BENCH_ROOT } from './dataset.js';
import type { BenchReport } from './report.js';
import { bestInterleaved, timeCommand, type Timing } from './timing.js';

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
const ROUNDS = Number(process.env.ROCM_EBUILD_BENCH_ROUNDS ?? 3);

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

const sum = (a: Timing, b: Timing): Timing => ({ seconds: a.seconds + b.seconds, cpuSeconds: a.cpuSeconds + b.cpuSeconds });

export async function run(): Promise<BenchReport> {
  Object.assign(process.env, env);
  const overlay = await bumpedOverlay(path.join(BENCH_ROOT, 'pr'));
  const commits = Number(execFileSync('git', ['rev-list', '--count', 'HEAD'], { cwd: overlay, env }).toString().trim());
  let gitLog: Timing = { seconds: 0, cpuSeconds: 0 };
  let lint: Timing = { seconds: 0, cpuSeconds: 0 };
  const best = await bestInterleaved(ROUNDS, {
    ours: () => timeCommand(process.execPath, [bin, 'pr', 'check', '--overlay', overlay, '--root', '--no-pkgcheck']),
    base: async () => {
      const g = await timeCommand('git', ['-C', overlay, 'log', '-p', '--root', 'HEAD']);
      const l = await timeCommand(process.execPath, [bin, 'lint', '--overlay', overlay, '--version', '6.2.2']);
      const t = sum(g, l);
      if (gitLog.seconds === 0 || t.seconds < gitLog.seconds + lint.seconds) [gitLog, lint] = [g, l];
      return t;
    },
  });
  const fig = (label: string, t: Timing, detail: string) => ({ label, seconds: t.seconds, cpuSeconds: t.cpuSeconds, detail });
  return {
    title: `pr check: the ${commits} commits of a bump 6.2.2 (best of ${ROUNDS})`,
    figures: [
      fig('rocm-ebuild pr check --root', best.ours, `${commits} commits: git checks, Manifests, lint + bash -n + shellcheck of 49 ebuilds`),
      fig('baseline: git log -p + rocm-ebuild lint', best.base, 'the same range read and the same ebuilds linted'),
      fig('  of which git log -p', gitLog, ''),
      fig('  of which rocm-ebuild lint --overlay', lint, ''),
    ],
    ratios: [{ label: 'pr check / baseline', value: best.ours.seconds / best.base.seconds, note: 'target: at most 2' }],
    notes: ['Each side starts Node and loads the stack manifest once; pkgcheck is not involved (--no-pkgcheck).'],
  };
}
