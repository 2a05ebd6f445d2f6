import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BENCH_ROOT } from './dataset.js';
import type { BenchReport } from './report.js';
import { figure, interleaved, pairedRatio, timeCommand } from './timing.js';

/**
 * How long each command takes to start and do its work, whole process, as
 * a ratio to Node starting and doing nothing (`node -e 0`) in the same run:
 * what a maintainer waits for dozens of times a day. The shipped manifest
 * is unchanged between runs, so the cache of checked manifests (a private
 * one, under the bench directory) answers; `validate` with the cache off is
 * measured too, for what a changed manifest costs.
 */

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const bin = path.join(root, 'bin', 'run.js');
const ROUNDS = Number(process.env.ROCM_EBUILD_BENCH_ROUNDS ?? 15);

export async function run(): Promise<BenchReport> {
  const env = { ...process.env, NO_COLOR: '1', XDG_CACHE_HOME: path.join(BENCH_ROOT, 'startup-cache') };
  const cli = (...args: string[]) => () => timeCommand(process.execPath, [bin, ...args], { env });
  const uncached = () => timeCommand(process.execPath, [bin, 'validate'], { env: { ...env, ROCM_EBUILD_NO_CACHE: '1' } });
  const commands = {
    help: { args: ['--help'], goal: 2.5 },
    bumpHelp: { args: ['bump', '--help'], goal: 2.5 },
    tagsHelp: { args: ['upstream', 'tags', '--help'], goal: 2.5 },
    validate: { args: ['validate'], goal: 4 },
    render: { args: ['render', 'rocBLAS', '--version', '6.2.2'], goal: 4 },
    graph: { args: ['graph', '--version', '6.2.2'], goal: 4 },
    // What a completion script asks on the first TAB of a shell session (later TABs reuse the answer).
    releaseWords: { args: ['completion', '--words', 'releases'], goal: 4 },
    packageWords: { args: ['completion', '--words', 'packages'], goal: 4 },
  } as const;
  type Name = keyof typeof commands;
  // A first run of each warms the page cache (and, where there is one, the manifest cache).
  for (const c of Object.values(commands)) await cli(...c.args)();
  const t = await interleaved(ROUNDS, {
    node: () => timeCommand(process.execPath, ['-e', '0'], { env }),
    ...(Object.fromEntries(Object.entries(commands).map(([k, c]) => [k, cli(...c.args)])) as Record<Name, ReturnType<typeof cli>>),
    uncached,
  });
  const names = Object.keys(commands) as Name[];
  return {
    title: `commands, whole process, against node -e 0 (median of ${ROUNDS} alternating runs [min–max])`,
    figures: [
      figure('node -e 0', t.node),
      ...names.map((n) => figure(`rocm-ebuild ${commands[n].args.join(' ')}`, t[n])),
      figure('rocm-ebuild validate, cache off', t.uncached, 'ROCM_EBUILD_NO_CACHE=1: read, validate, check every release'),
    ],
    ratios: [
      ...names.map((n) => ({ label: `${commands[n].args.join(' ')} / node -e 0`, ...pairedRatio(t[n], t.node), goal: commands[n].goal })),
      { label: 'validate, cache off / node -e 0', ...pairedRatio(t.uncached, t.node), note: 'a changed manifest: no goal' },
      ...names.map((n) => ({ label: `CPU: ${commands[n].args.join(' ')} / node -e 0`, ...pairedRatio(t[n], t.node, 'cpuSeconds') })),
    ],
    notes: ['Ratios are the median of each round’s pair (and the range); CPU is user + system, which other load on the machine barely moves.'],
  };
}
