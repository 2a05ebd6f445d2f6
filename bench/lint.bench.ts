import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadManifestOrFail, stackFor } from '../src/cli/stack.js';
import { SHELLCHECK_EXCLUDES } from '../src/lint/external-tools.js';
import { renderEbuild } from '../src/render/index.js';
import { BENCH_ROOT } from './dataset.js';
import type { BenchReport } from './report.js';
import { figure, interleaved, pairedRatio, timeCommand } from './timing.js';

/**
 * `rocm-ebuild lint --version 6.2.2` (49 ebuilds: render, our checks, bash -n
 * and shellcheck), whole process, against running shellcheck alone on the
 * same 49 files with the same options: one process, and one per core as
 * lint runs it.
 */

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const bin = path.join(root, 'bin', 'run.js');
const ROUNDS = Number(process.env.ROCM_EBUILD_BENCH_ROUNDS ?? 5);

export async function run(): Promise<BenchReport> {
  const dir = path.join(BENCH_ROOT, 'lint');
  await fs.rm(dir, { recursive: true, force: true });
  await fs.mkdir(dir, { recursive: true });
  const model = await stackFor(await loadManifestOrFail(undefined), '6.2.2');
  const files: string[] = [];
  for (const c of model.components) {
    const file = path.join(dir, `${c.pn}-${c.version}.ebuild`);
    await fs.writeFile(file, renderEbuild(c, model));
    files.push(file);
  }
  const options = ['-s', 'bash', '-f', 'json1', '-e', SHELLCHECK_EXCLUDES.join(',')];
  const cores = os.availableParallelism();
  const shares = Array.from({ length: cores }, (_, k) => files.filter((_, i) => i % cores === k));
  const env = { ...process.env, NO_COLOR: '1' };
  const t = await interleaved(ROUNDS, {
    lint: () => timeCommand(process.execPath, [bin, 'lint', '--version', '6.2.2'], { env }),
    shellcheck: () => timeCommand('shellcheck', [...options, ...files]),
    shellcheckPar: () =>
      timeCommand('bash', ['-c', shares.map((_, k) => `shellcheck "$@" \${SHARE_${k}} > /dev/null &`).join(' ') + ' wait', 'bash', ...options], {
        env: { ...env, ...Object.fromEntries(shares.map((s, k) => [`SHARE_${k}`, s.join(' ')])) },
      }),
    node: () => timeCommand(process.execPath, ['-e', '0'], { env }),
  });
  return {
    title: `lint --version 6.2.2 (${files.length} ebuilds), whole process, against shellcheck alone (median of ${ROUNDS} alternating runs [min–max])`,
    figures: [
      figure('rocm-ebuild lint --version 6.2.2', t.lint, 'render + checks + bash -n + shellcheck'),
      figure(`shellcheck, one process, ${files.length} files`, t.shellcheck),
      figure(`shellcheck, ${cores} processes (as lint runs it)`, t.shellcheckPar),
      figure('node -e 0', t.node),
    ],
    ratios: [
      { label: 'lint / shellcheck alone', ...pairedRatio(t.lint, t.shellcheck), goal: 2 },
      { label: `lint / shellcheck on ${cores} processes`, ...pairedRatio(t.lint, t.shellcheckPar) },
      { label: 'CPU: lint / shellcheck alone', ...pairedRatio(t.lint, t.shellcheck, 'cpuSeconds') },
    ],
  };
}
