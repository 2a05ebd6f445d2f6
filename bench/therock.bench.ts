import { parseCMake } from '../src/upstream/facts/cmake-lexer.js';
import type { Submodule } from '../src/upstream/therock/gitmodules.js';
import { readSubprojects } from '../src/upstream/therock/subprojects.js';
import { HOSTILE_CMAKE } from '../test/upstream/therock-hostile.js';
import type { BenchFigure, BenchRatio, BenchReport } from './report.js';
import { figure, interleaved, pairedRatio, timeInProcess, type Stats } from './timing.js';

/**
 * `upstream therock` reading the CMake a hostile or huge TheRock fork may
 * hold (test/upstream/therock-hostile.ts: 50,000 set()s, 30,000 growing
 * list set()s, lists growing from each other, `${` nested 50,000 deep, a
 * variable doubled 40 times), each file under the 1 MiB a CMake file may
 * have. The baseline, measured alternately in the same run, is lexing the
 * same bytes (parseCMake): a reader linear in the bytes stays a small
 * multiple of it whatever the file holds. The scaling ratio is the time per
 * byte at four times the size over the time per byte at the smaller: about
 * 1 when linear, about 4 when quadratic. Ratios use CPU time, which other
 * load on the machine barely moves. The lists growing from each other and
 * the doubled variable are cut at the file's expansion limit, as the
 * command reports them.
 */

const ROUNDS = Number(process.env.ROCM_EBUILD_BENCH_ROUNDS ?? 5);
const SUBMODULES: Submodule[] = [{ name: 'rocm-libraries', path: 'rocm-libraries', url: 'https://github.com/ROCm/rocm-libraries', github: 'ROCm/rocm-libraries', commit: 'a'.repeat(40) }];

const readOnce = (text: string) => timeInProcess(async () => readSubprojects({ files: new Map([['CMakeLists.txt', text]]), submodules: SUBMODULES }));
const lexOnce = (text: string) => timeInProcess(async () => parseCMake(text));

async function pair(text: string): Promise<{ read: Stats; lex: Stats }> {
  return interleaved(ROUNDS, { read: () => readOnce(text), lex: () => lexOnce(text) });
}

const kib = (text: string) => `${(text.length / 1024).toFixed(0)} KiB`;

export async function run(): Promise<BenchReport> {
  const figures: BenchFigure[] = [];
  const ratios: BenchRatio[] = [];
  const cases: [string, (n: number) => string, number][] = [
    ['50,000 set()s', HOSTILE_CMAKE.manySets, 50_000],
    ['30,000 growing list set()s', HOSTILE_CMAKE.growingList, 30_000],
    ['30,000 set()s of two lists growing from each other', HOSTILE_CMAKE.leapfrog, 30_000],
  ];
  for (const [label, make, n] of cases) {
    const small = make(n / 4);
    const large = make(n);
    const s = await pair(small);
    const l = await pair(large);
    figures.push(figure(`read ${label}`, l.read, kib(large)), figure(`  lex the same bytes (baseline)`, l.lex));
    figures.push(figure(`read a quarter of it`, s.read, kib(small)));
    ratios.push({ label: `${label}: read / lex, CPU`, ...pairedRatio(l.read, l.lex, 'cpuSeconds'), note: 'a small constant when reading is linear' });
    const perByte = (x: Stats, text: string) => x.cpuSeconds / text.length;
    ratios.push({ label: `${label}: CPU per byte, 4× the size / 1×`, value: perByte(l.read, large) / perByte(s.read, small), goal: 2, note: '≈ 1 linear, ≈ 4 quadratic' });
  }
  for (const [label, text] of [
    ['${ nested 50,000 deep', HOSTILE_CMAKE.deepNesting(50_000)],
    ['a variable doubled 40 times (cut at the limit)', HOSTILE_CMAKE.doubling(40)],
  ] as const) {
    const p = await pair(text);
    figures.push(figure(`read ${label}`, p.read, kib(text)), figure(`  lex the same bytes (baseline)`, p.lex));
  }
  const peak = process.resourceUsage().maxRSS / 1024;
  return {
    title: 'upstream therock: reading hostile CMake (in process)',
    figures,
    ratios,
    notes: [`peak resident memory of the bench process: ${peak.toFixed(0)} MiB`],
  };
}
