import { execFileSync } from 'node:child_process';
import { randomFillSync } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { renderEbuild } from '../src/render/index.js';
import { loadManifest, stackFor } from '../src/stack-check/index.js';
import { shippedManifest } from '../test/helpers/project.js';
import { BENCH_ROOT } from './dataset.js';
import type { BenchReport } from './report.js';
import { figure, interleaved, mib, pairedRatio, timeCommand, type Timing } from './timing.js';

const KiB = 1024;
const MiB = 1024 * KiB;
/** Per directory of the archive: source-like files, half text (compresses), half binary (kernels, test data: does not). */
const FILES = 48;
const FILE_SIZE = 128 * KiB;
/** Directories of rocm-libraries that no 10.0.0 package extracts, but the archive holds (a monorepo's other projects and tooling). */
const OTHERS = ['projects/hipdnn', 'projects/hipsparselt', 'projects/rocroller-tests', 'shared/rocroller', 'shared/mxdatagenerator', 'dnn-providers/miopen-provider', 'docs', '.github'];
const ROUNDS = 3;

/** A file of `size` bytes: its first half repeated C++-like lines, its second half random. */
function contents(size: number, seed: string): Buffer {
  const text = Buffer.from(`// ${seed}\nfor (int i = 0; i < n; ++i) { out[i] = alpha * x[i] + y[i]; } // axpy kernel body\n`.repeat(Math.ceil(size / 2 / 80))).subarray(0, size >> 1);
  const bin = Buffer.allocUnsafe(size - text.length);
  randomFillSync(bin);
  return Buffer.concat([text, bin]);
}

/** Bytes and files under a directory, as written to disk (file sizes; directories not counted). */
function written(dir: string): { bytes: number; files: number } {
  const out = execFileSync('find', [dir, '-type', 'f', '-printf', '%s\\n'], { maxBuffer: 64 * MiB }).toString();
  const sizes = out.split('\n').filter(Boolean).map(Number);
  return { bytes: sizes.reduce((a, b) => a + b, 0), files: sizes.length };
}

/**
 * What a 10.0.0 package of rocm-libraries writes and costs in src_unpack:
 * the src_unpack rocm-ebuild generates (tar extracting the project's
 * directory and the shared ones it reads), run by bash on a synthetic
 * archive shaped like rocm-libraries (every project and shared directory
 * the 10.0.0 packages extract, and others no package reads), against
 * unpacking the whole archive as Portage's default src_unpack does, in the
 * same run, alternately.
 */
export async function run(): Promise<BenchReport> {
  const root = path.join(BENCH_ROOT, 'unpack');
  await fs.rm(root, { recursive: true, force: true });
  const manifest = await loadManifest(shippedManifest);
  const model = await stackFor(manifest, '10.0.0');
  const commit = manifest.stack.releases['10.0.0']!.pins!['ROCm/rocm-libraries']!;
  const top = `rocm-libraries-${commit}`;
  // The generated src_unpack of every rocm-libraries package, and what each extracts.
  const packages = model.components
    .filter((c) => c.sources[0]?.location.repo === 'ROCm/rocm-libraries' && c.sources[0].spec.extract)
    .map((c) => ({ atom: c.atom, extract: c.sources[0]!.spec.extract!, phase: /^src_unpack\(\) \{\n[\s\S]*?^\}$/m.exec(renderEbuild(c, model, { year: 2026 }))![0] }));
  const dirs = [...new Set([...packages.flatMap((p) => p.extract), ...OTHERS])].sort();
  const tree = path.join(root, 'tree');
  for (const d of dirs) {
    const at = path.join(tree, top, d);
    await fs.mkdir(at, { recursive: true });
    for (let i = 0; i < FILES; i++) await fs.writeFile(path.join(at, `file${i}.cpp`), contents(FILE_SIZE, `${d}/${i}`));
  }
  await fs.writeFile(path.join(tree, top, 'README.md'), 'rocm-libraries\n');
  const distdir = path.join(root, 'distdir');
  await fs.mkdir(distdir);
  const archive = path.join(distdir, 'rocm-libraries-10.0.0.tar.gz');
  execFileSync('tar', ['-czf', archive, '-C', tree, top]);
  await fs.rm(tree, { recursive: true, force: true });
  const archiveBytes = (await fs.stat(archive)).size;

  /** One package's src_unpack as bash runs it in a fresh WORKDIR; the tree is removed afterwards (not timed). */
  let round = 0;
  const unpack = async (phase: string, measure?: (work: string) => void): Promise<Timing> => {
    const work = path.join(root, `work-${round++}`);
    await fs.mkdir(work);
    const script = `set -e\ndie() { echo "died: $*" >&2; exit 1; }\nPV=10.0.0\nDISTDIR='${distdir}'\nWORKDIR='${work}'\nROCM_LIBRARIES_COMMIT=${commit}\n${phase}\ncd "\${WORKDIR}"\nsrc_unpack\n`;
    const t = await timeCommand('bash', ['-c', script]);
    measure?.(work);
    await fs.rm(work, { recursive: true, force: true });
    return t;
  };
  // Portage's default: unpack the whole archive (unpack runs tar on it).
  const whole = `src_unpack() {\n\ttar -xf "\${DISTDIR}/rocm-libraries-\${PV}.tar.gz" -C "\${WORKDIR}" || die\n}`;
  const rocblas = packages.find((p) => p.atom === 'sci-libs/rocBLAS')!;
  const hipblaslt = packages.find((p) => p.atom === 'sci-libs/hipBLASLt')!;

  const sizes: Record<string, { bytes: number; files: number }> = {};
  const stats = await interleaved(ROUNDS, {
    rocblas: () => unpack(rocblas.phase, (w) => (sizes.rocblas = written(w))),
    hipblaslt: () => unpack(hipblaslt.phase, (w) => (sizes.hipblaslt = written(w))),
    whole: () => unpack(whole, (w) => (sizes.whole = written(w))),
  });
  // Every rocm-libraries package of 10.0.0 once: what building them all writes, against the whole archive each time.
  let allBytes = 0;
  for (const p of packages) await unpack(p.phase, (w) => (allBytes += written(w).bytes));
  const w = sizes.whole!;
  const detail = (s: { bytes: number; files: number }) => `${mib(s.bytes)} in ${s.files} files written`;
  return {
    title: `src_unpack of a rocm-libraries package of 10.0.0: the generated partial unpack against the whole archive (${dirs.length} directories, ${mib(w.bytes)} unpacked, ${mib(archiveBytes)} .tar.gz)`,
    figures: [
      figure('sci-libs/rocBLAS: projects/rocblas', stats.rocblas, detail(sizes.rocblas!)),
      figure('sci-libs/hipBLASLt: projects/hipblaslt, shared/origami', stats.hipblaslt, detail(sizes.hipblaslt!)),
      figure("whole archive (Portage's default src_unpack)", stats.whole, detail(w)),
    ],
    ratios: [
      { label: 'bytes written, whole / rocBLAS', value: w.bytes / sizes.rocblas!.bytes },
      { label: 'bytes written, whole / hipBLASLt', value: w.bytes / sizes.hipblaslt!.bytes },
      { label: `bytes written, all ${packages.length} packages: whole each / partial`, value: (w.bytes * packages.length) / allBytes, note: `${mib(allBytes)} against ${mib(w.bytes * packages.length)}` },
      { label: 'time, rocBLAS / whole (wall)', ...pairedRatio(stats.rocblas, stats.whole), note: 'tar still reads and decompresses the whole archive' },
      { label: 'time, rocBLAS / whole (CPU)', ...pairedRatio(stats.rocblas, stats.whole, 'cpuSeconds') },
      { label: 'time, hipBLASLt / whole (wall)', ...pairedRatio(stats.hipblaslt, stats.whole) },
    ],
    notes: [`every 10.0.0 package of rocm-libraries extracts part of it: ${packages.map((p) => p.atom.split('/')[1]).join(', ')}`],
  };
}
