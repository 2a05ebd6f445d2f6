import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BENCH_ROOT } from './dataset.js';
import { doubledManifest } from './doubled-manifest.js';
import { deterministicDistfiles, PINNED_ENV } from './fingerprint.js';
import type { BenchReport } from './report.js';
import { figure, interleaved, pairedRatio, timeCommand, type Stats, type Timing } from './timing.js';

/**
 * The start-up goals, whole process, against `node -e 0` in the same
 * alternating rounds: `--help`, `render sci-libs/rocBLAS` and `validate` of
 * the shipped manifest, the same two on a copy of it with twice the releases
 * (bench/doubled-manifest.ts: start-up must not grow with the manifest), and
 * `bump` of the newest legacy release into a new overlay set against
 * `validate` of the same manifest (what a bump costs beyond the check it
 * begins with; shellcheck runs when it is on PATH, as it should be here).
 * Every cache is warm, as for a maintainer's second command of the day.
 */

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const bin = path.join(root, 'bin', 'run.js');
const ROUNDS = Number(process.env.ROCM_EBUILD_BENCH_ROUNDS ?? 7);
const RELEASE = '7.2.4';
/** 7.2.4 in the doubled manifest (X.Y.Z becomes X.Y.2Z). */
const DOUBLED_RELEASE = '7.2.8';

export async function run(): Promise<BenchReport> {
  const dir = path.join(BENCH_ROOT, 'targets');
  await fs.rm(dir, { recursive: true, force: true });
  await fs.mkdir(dir, { recursive: true });
  const env = { ...process.env, ...PINNED_ENV, HOME: dir, XDG_CACHE_HOME: path.join(dir, 'cache') };
  const shipped = path.join(root, 'manifest', 'stack.yaml');
  const doubled = await doubledManifest(path.join(root, 'manifest'), path.join(dir, 'manifest-x2'));
  const cli = (...args: string[]) => () => timeCommand(process.execPath, [bin, ...args], { env });
  const distdir = path.join(dir, 'distfiles');
  await deterministicDistfiles(shipped, distdir, env, RELEASE);
  const overlay = path.join(dir, 'overlay');
  const bump = async (): Promise<Timing> => {
    await fs.rm(overlay, { recursive: true, force: true });
    return timeCommand(process.execPath, [bin, 'bump', RELEASE, '--overlay', overlay, '--manifest', shipped, '--distdir', distdir, '--offline'], { env });
  };
  const contenders = {
    node: () => timeCommand(process.execPath, ['-e', '0'], { env }),
    help: cli('--help'),
    render: cli('render', 'sci-libs/rocBLAS', '--version', RELEASE),
    validate: cli('validate'),
    renderX2: cli('render', 'sci-libs/rocBLAS', '--version', DOUBLED_RELEASE, '--manifest', doubled),
    validateX2: cli('validate', doubled),
    bump,
  };
  // A first run of each fills the caches (checked manifests, hashes) and the page cache.
  for (const c of Object.values(contenders)) await c();
  const t: Record<keyof typeof contenders, Stats> = await interleaved(ROUNDS, contenders);
  const beyond = (a: Stats, b: Stats) => {
    const d = a.runs.map((r, i) => r.seconds - b.runs[i]!.seconds).sort((x, y) => x - y);
    return d[d.length >> 1]!;
  };
  return {
    title: `start-up goals, whole process, against node -e 0 (median of ${ROUNDS} alternating runs [min–max])`,
    figures: [
      figure('node -e 0', t.node),
      figure('rocm-ebuild --help', t.help),
      figure(`render sci-libs/rocBLAS --version ${RELEASE}`, t.render),
      figure('validate', t.validate),
      figure(`render sci-libs/rocBLAS --version ${DOUBLED_RELEASE}, manifest of twice the releases`, t.renderX2),
      figure('validate, manifest of twice the releases', t.validateX2),
      figure(`bump ${RELEASE} into a new overlay`, t.bump),
      { label: `bump ${RELEASE} beyond validate (median of the rounds' differences)`, seconds: beyond(t.bump, t.validate) },
    ],
    ratios: [
      { label: '--help / node -e 0', ...pairedRatio(t.help, t.node), goal: 1.5 },
      { label: 'render / node -e 0', ...pairedRatio(t.render, t.node), goal: 2 },
      { label: 'validate / node -e 0', ...pairedRatio(t.validate, t.node), goal: 2 },
      { label: 'render, 2× releases / node -e 0', ...pairedRatio(t.renderX2, t.node), goal: 2 },
      { label: 'validate, 2× releases / node -e 0', ...pairedRatio(t.validateX2, t.node), goal: 2 },
      { label: 'render, 2× releases / render', ...pairedRatio(t.renderX2, t.render), note: 'the same within noise: ~1' },
      { label: 'validate, 2× releases / validate', ...pairedRatio(t.validateX2, t.validate), note: 'the same within noise: ~1' },
      { label: 'CPU: --help / node -e 0', ...pairedRatio(t.help, t.node, 'cpuSeconds') },
      { label: 'CPU: render / node -e 0', ...pairedRatio(t.render, t.node, 'cpuSeconds') },
      { label: 'CPU: validate / node -e 0', ...pairedRatio(t.validate, t.node, 'cpuSeconds') },
    ],
    notes: [`bump ${RELEASE} beyond validate: goal ≤ 0.3 s. Run with TMPDIR on tmpfs (ROCM_EBUILD_BENCH_DIR too), so the disk's phases do not decide the figures.`],
  };
}
