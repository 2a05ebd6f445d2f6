import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BENCH_ROOT } from './dataset.js';
import type { BenchReport } from './report.js';
import { figure, interleaved, timeCommand } from './timing.js';

/**
 * `gpu list` on a host with 16 GPUs and `test --dry-run` of the whole 6.2.2
 * stack on 4 GPUs, against Node's own start-up (`node -e 0`) measured in the
 * same run: the target is at most 3× it. Both read a fake topology through
 * ROCM_EBUILD_SYSFS_ROOT / ROCM_EBUILD_DEV_ROOT, as the tests do.
 */

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const bin = path.join(root, 'bin', 'run.js');
const ROUNDS = Number(process.env.ROCM_EBUILD_BENCH_ROUNDS ?? 11);

/** A host with `count` MI210s (gfx90a) on distinct PCI addresses and render nodes. */
async function host(dir: string, count: number): Promise<{ sysfs: string; dev: string }> {
  const sysfs = path.join(dir, 'sysfs');
  const dev = path.join(dir, 'dev');
  await fs.rm(dir, { recursive: true, force: true });
  const nodes = path.join(sysfs, 'sys/class/kfd/kfd/topology/nodes');
  await fs.mkdir(path.join(nodes, '0'), { recursive: true });
  await fs.writeFile(path.join(nodes, '0', 'properties'), 'cpu_cores_count 64\nsimd_count 0\ngfx_target_version 0\ndrm_render_minor 0\n');
  await fs.mkdir(path.join(dev, 'dev', 'dri'), { recursive: true });
  await fs.writeFile(path.join(dev, 'dev', 'kfd'), '');
  for (let i = 0; i < count; i++) {
    const n = path.join(nodes, String(i + 1));
    await fs.mkdir(path.join(n, 'mem_banks', '0'), { recursive: true });
    const gfx = [90010, 110000, 100300, 90402][i % 4];
    const props = `cpu_cores_count 0\nsimd_count 416\nsimd_per_cu 4\ngfx_target_version ${gfx}\nvendor_id 4098\ndevice_id 29711\nlocation_id ${(0x10 + i) << 8}\ndomain 0\ndrm_render_minor ${128 + i}\nunique_id ${1000 + i}\n`;
    await fs.writeFile(path.join(n, 'properties'), props);
    await fs.writeFile(path.join(n, 'mem_banks', '0', 'properties'), `heap_type 1\nsize_in_bytes ${64 * 2 ** 30}\n`);
    await fs.writeFile(path.join(dev, 'dev', 'dri', `renderD${128 + i}`), '');
  }
  return { sysfs, dev };
}

/** An overlay holding every 6.2.2 package (empty ebuilds: --dry-run only checks they are there) and a ::gentoo stand-in. */
async function overlayAndTree(dir: string): Promise<{ overlay: string; tree: string }> {
  const overlay = path.join(dir, 'overlay');
  const tree = path.join(dir, 'tree');
  const order = (JSON.parse(execFileSync(process.execPath, [bin, 'graph', '--version', '6.2.2', '--json']).toString()) as { order: string[] }).order;
  for (const atom of order) {
    await fs.mkdir(path.join(overlay, atom), { recursive: true });
    await fs.writeFile(path.join(overlay, atom, `${atom.split('/')[1]}-6.2.2.ebuild`), '');
  }
  await fs.mkdir(path.join(overlay, 'profiles'), { recursive: true });
  await fs.writeFile(path.join(overlay, 'profiles', 'repo_name'), 'rocm\n');
  execFileSync('git', ['init', '-q', overlay]);
  await fs.mkdir(path.join(tree, 'profiles'), { recursive: true });
  await fs.writeFile(path.join(tree, 'profiles', 'repo_name'), 'gentoo\n');
  return { overlay, tree };
}

/**
 * The commands' own work in a fresh process, modules already imported and
 * start-up excluded: reading the topology and the target policy (gpu list);
 * loading the manifest, planning and building every command line (test
 * --dry-run). Printed as seconds by a small script.
 */
async function ownWork(dir: string, big: { sysfs: string; dev: string }, four: { sysfs: string; dev: string }, overlay: string, tree: string): Promise<{ list: number; dryRun: number; manifest: number }> {
  const script = path.join(dir, 'own-work.mjs');
  const src = (m: string) => JSON.stringify(path.join(root, 'dist', 'src', m));
  await fs.writeFile(
    script,
    `import { listGpus } from ${src('gpu/list.js')};
import { loadManifestOrFail, stackFor } from ${src('stack-check/index.js')};
import { prepareRun } from ${src('container/run.js')};
const t = () => Number(process.hrtime.bigint()) / 1e9;
let t0 = t();
await listGpus({ roots: ${JSON.stringify(big)}, targetsFile: ${JSON.stringify(path.join(root, 'manifest', 'targets.yaml'))}, release: '6.2.2' });
const list = t() - t0;
t0 = t();
const manifest = await loadManifestOrFail(${JSON.stringify(path.join(root, 'manifest', 'stack.yaml'))});
const model = await stackFor(manifest, '6.2.2');
const loaded = t() - t0;
t0 = t();
const env = { ...process.env, ROCM_EBUILD_SYSFS_ROOT: ${JSON.stringify(four.sysfs)}, ROCM_EBUILD_DEV_ROOT: ${JSON.stringify(four.dev)} };
await prepareRun({ model, atoms: [], overlay: ${JSON.stringify(overlay)}, gpus: ['all'], image: 'gentoo/stage3:amd64-openrc', tree: ${JSON.stringify(tree)}, tests: 'full', jobs: 8, timeoutSeconds: 3600, reportDir: ${JSON.stringify(path.join(dir, 'reports'))}, keep: false, dryRun: true, toolVersion: '0', env, progress: undefined, signal: new AbortController().signal });
console.log(JSON.stringify({ list, manifest: loaded, dryRun: t() - t0 }));
`,
  );
  const runs = Array.from({ length: ROUNDS }, () => JSON.parse(execFileSync(process.execPath, [script]).toString()) as { list: number; dryRun: number; manifest: number });
  const min = (k: 'list' | 'dryRun' | 'manifest') => Math.min(...runs.map((r) => r[k]));
  return { list: min('list'), dryRun: min('dryRun'), manifest: min('manifest') };
}

export async function run(): Promise<BenchReport> {
  const dir = path.join(BENCH_ROOT, 'gpu');
  const big = await host(path.join(dir, 'host16'), 16);
  const four = await host(path.join(dir, 'host4'), 4);
  const { overlay, tree } = await overlayAndTree(dir);
  const withEnv = (h: { sysfs: string; dev: string }, argv: string[]) => () =>
    timeCommand('env', [`ROCM_EBUILD_SYSFS_ROOT=${h.sysfs}`, `ROCM_EBUILD_DEV_ROOT=${h.dev}`, 'NO_COLOR=1', process.execPath, bin, ...argv]);
  const testArgs = ['test', '--overlay', overlay, '--version', '6.2.2', '--tree', tree, '--report-dir', path.join(dir, 'reports'), '--gpu', 'all', '--dry-run'];
  const t = await interleaved(ROUNDS, {
    node: () => timeCommand(process.execPath, ['-e', '0']),
    list: withEnv(big, ['gpu', 'list', '--version', '6.2.2']),
    dryRun: withEnv(four, testArgs),
    version: () => timeCommand(process.execPath, [bin, '--version']),
  });
  const own = await ownWork(dir, big, four, overlay, tree);
  // The files each container would get are printed as comments above its command line.
  const dryOut = (await withEnv(four, testArgs)()).stdout.trim().split('\n').filter((l) => !l.startsWith('#'));
  const listOut = (await withEnv(big, ['gpu', 'list', '--version', '6.2.2'])()).stdout.trim().split('\n');
  return {
    title: `gpu list and test --dry-run (median of ${ROUNDS} interleaved runs)`,
    figures: [
      figure('node -e 0', t.node),
      figure('rocm-ebuild --version (oclif start-up)', t.version),
      figure('gpu list, 16 GPUs', t.list, `${listOut.length - 1} GPUs listed`),
      figure('test --dry-run, 6.2.2, 4 GPUs', t.dryRun, `${dryOut.length} command lines`),
      { label: 'own work: gpu list (topology + policy)', seconds: own.list, detail: 'in a fresh process, start-up excluded' },
      { label: 'own work: the manifest and the 6.2.2 model', seconds: own.manifest, detail: 'as test --dry-run gets them: from the cache of checked manifests' },
      { label: 'own work: test --dry-run (plan + checks + files + command lines)', seconds: own.dryRun, detail: 'after the manifest' },
    ],
    ratios: [
      { label: 'gpu list / node -e 0', value: t.list.seconds / t.node.seconds, note: 'target ≤ 3' },
      { label: 'test --dry-run / node -e 0', value: t.dryRun.seconds / t.node.seconds, note: 'target ≤ 3' },
      { label: 'rocm-ebuild --version / node -e 0', value: t.version.seconds / t.node.seconds, note: 'the floor any command pays' },
      { label: 'CPU: gpu list / node -e 0', value: t.list.cpuSeconds / t.node.cpuSeconds, note: 'CPU time, barely moved by other load' },
      { label: 'CPU: test --dry-run / node -e 0', value: t.dryRun.cpuSeconds / t.node.cpuSeconds },
      { label: 'CPU: rocm-ebuild --version / node -e 0', value: t.version.cpuSeconds / t.node.cpuSeconds },
      { label: 'own work, gpu list / node -e 0', value: own.list / t.node.seconds },
      { label: 'own work, test --dry-run / node -e 0', value: own.dryRun / t.node.seconds, note: 'without loading the manifest' },
    ],
    notes: [
      'End to end, every rocm-ebuild command first pays Node and oclif (rocm-ebuild --version above); oclif.manifest.json spares it importing the other commands.',
      'test --dry-run first takes the checked manifest from the cache (validated and cross-checked by an earlier run; the key is the content of every file) and builds the 6.2.2 model.',
    ],
  };
}
