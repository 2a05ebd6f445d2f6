import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';
import { BENCH_ROOT } from './dataset.js';
import type { BenchReport } from './report.js';
import { bestInterleaved, type Timing } from './timing.js';

/**
 * A full 6.2.2 bump into a new overlay, and the same for a synthetic stack ten
 * times larger, each against a baseline measured in the same run: the same
 * number of plain `git add` + `git commit -s` invocations committing the very
 * same files (what a maintainer's script, or pkgdev commit, would do).
 * Distfiles are synthetic and already on disk (--offline): downloads are
 * measured by fetch.bench.
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

function timeCommand(cmd: string, args: string[], cwd = root): Promise<Timing> {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn('bash', ['-c', 'TIMEFORMAT="%U %S"; { time "$@" >/dev/null 2>/tmp/rocm-ebuild-bench.err; } 2>&1', 'bash', cmd, ...args], { cwd, env });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('close', async (code) => {
      if (code !== 0) return reject(new Error(`${cmd} ${args.join(' ')} failed: ${await fs.readFile('/tmp/rocm-ebuild-bench.err', 'utf8').catch(() => '')}`));
      const m = /(\d+\.\d+) (\d+\.\d+)\s*$/.exec(out);
      resolve({ seconds: Number(process.hrtime.bigint() - start) / 1e9, cpuSeconds: m ? Number(m[1]) + Number(m[2]) : 0 });
    });
  });
}

/** A stack `copies` times the shipped one: every component cloned under a suffixed name. */
async function syntheticManifest(dir: string, copies: number): Promise<string> {
  const src = path.join(root, 'manifest');
  await fs.rm(dir, { recursive: true, force: true });
  await fs.mkdir(path.join(dir, 'components'), { recursive: true });
  await fs.mkdir(path.join(dir, 'external'), { recursive: true });
  for (const f of await fs.readdir(path.join(src, 'external'))) await fs.copyFile(path.join(src, 'external', f), path.join(dir, 'external', f));
  await fs.copyFile(path.join(src, 'targets.yaml'), path.join(dir, 'targets.yaml'));
  const stack = parse(await fs.readFile(path.join(src, 'stack.yaml'), 'utf8')) as Record<string, unknown>;
  delete stack.projects;
  delete stack.excluded;
  await fs.writeFile(path.join(dir, 'stack.yaml'), stringify(stack));
  const files = (await fs.readdir(path.join(src, 'components'))).filter((f) => f.endsWith('.yaml'));
  const specs = await Promise.all(files.map(async (f) => parse(await fs.readFile(path.join(src, 'components', f), 'utf8')) as Record<string, unknown>));
  const atoms = new Set(specs.map((s) => s.atom as string));
  const rename = (atom: string, i: number) => (atoms.has(atom) ? `${atom}-x${i}` : atom);
  for (let i = 0; i < copies; i++) {
    for (const spec of specs) {
      const copy = structuredClone(spec) as Record<string, unknown> & { deps?: { atom: string }[]; overrides?: { set: { deps?: { atom: string }[] } }[] };
      copy.name = `${spec.name as string}-x${i}`;
      copy.atom = rename(spec.atom as string, i);
      delete copy.projects;
      for (const d of copy.deps ?? []) d.atom = rename(d.atom, i);
      for (const o of copy.overrides ?? []) for (const d of o.set.deps ?? []) d.atom = rename(d.atom, i);
      await fs.writeFile(path.join(dir, 'components', `${copy.name as string}.yaml`), stringify(copy));
    }
  }
  return path.join(dir, 'stack.yaml');
}

interface Plan {
  packages: { distfiles: { name: string }[] }[];
}

async function distfilesFor(manifest: string, distdir: string): Promise<void> {
  const out = execFileSync(process.execPath, [bin, 'bump', '6.2.2', '--overlay', path.join(BENCH_ROOT, 'none'), '--manifest', manifest, '--dry-run', '--json'], { env, maxBuffer: 64 << 20 });
  const plan = JSON.parse(out.toString()) as Plan;
  await fs.mkdir(distdir, { recursive: true });
  for (const p of plan.packages) {
    for (const d of p.distfiles) {
      const file = path.join(distdir, d.name);
      if (!(await fs.stat(file).catch(() => undefined))) await fs.writeFile(file, randomBytes(64 * 1024));
    }
  }
}

/** The baseline: replay the bump's commits one `git add` + `git commit -s` at a time. */
async function replayWithGitCommit(reference: string, target: string): Promise<Timing> {
  const shas = execFileSync('git', ['rev-list', '--reverse', 'HEAD'], { cwd: reference, env }).toString().trim().split('\n');
  await fs.rm(target, { recursive: true, force: true });
  await fs.mkdir(target, { recursive: true });
  execFileSync('git', ['init', '-q'], { cwd: target, env });
  // Materialise every commit's files first, so the timing holds only git's work.
  const steps: { message: string; files: { path: string; content: Buffer }[] }[] = shas.map((sha) => ({
    message: execFileSync('git', ['log', '-1', '--format=%B', sha], { cwd: reference, env }).toString(),
    files: execFileSync('git', ['show', '--name-only', '--format=', sha], { cwd: reference, env })
      .toString()
      .trim()
      .split('\n')
      .map((p) => ({ path: p, content: execFileSync('git', ['show', `${sha}:${p}`], { cwd: reference, env }) })),
  }));
  const start = process.hrtime.bigint();
  for (const s of steps) {
    for (const f of s.files) {
      await fs.mkdir(path.dirname(path.join(target, f.path)), { recursive: true });
      await fs.writeFile(path.join(target, f.path), f.content);
    }
    execFileSync('git', ['add', '--', ...s.files.map((f) => f.path)], { cwd: target, env });
    execFileSync('git', ['commit', '-q', '-m', s.message.replace(/\n\nSigned-off-by: .*\n?$/, '\n'), '-s'], { cwd: target, env });
  }
  // Node cannot report its children's CPU time, so the baseline gives wall time only.
  return { seconds: Number(process.hrtime.bigint() - start) / 1e9, cpuSeconds: 0 };
}

async function measure(label: string, manifest: string): Promise<{ ours: Timing; base: Timing; commits: number }> {
  const dir = path.join(BENCH_ROOT, `bump-${label}`);
  const distdir = path.join(dir, 'distfiles');
  await distfilesFor(manifest, distdir);
  const overlay = path.join(dir, 'overlay');
  const replay = path.join(dir, 'replay');
  let commits = 0;
  const best = await bestInterleaved(ROUNDS, {
    ours: async () => {
      await fs.rm(overlay, { recursive: true, force: true });
      const t = await timeCommand(process.execPath, [bin, 'bump', '6.2.2', '--overlay', overlay, '--manifest', manifest, '--distdir', distdir, '--offline']);
      commits = Number(execFileSync('git', ['rev-list', '--count', 'HEAD'], { cwd: overlay, env }).toString().trim());
      return t;
    },
    base: () => replayWithGitCommit(overlay, replay),
  });
  return { ...best, commits };
}

export async function run(): Promise<BenchReport> {
  const real = await measure('6.2.2', path.join(root, 'manifest', 'stack.yaml'));
  const synthetic = await measure('x10', await syntheticManifest(path.join(BENCH_ROOT, 'stack-x10'), 10));
  const fig = (label: string, t: Timing, detail: string) => ({ label, seconds: t.seconds, ...(t.cpuSeconds ? { cpuSeconds: t.cpuSeconds } : {}), detail });
  return {
    title: `bump: a whole stack into a new overlay (best of ${ROUNDS})`,
    figures: [
      fig('rocm-ebuild bump 6.2.2', real.ours, `${real.commits} commits, render + lint + hash + commit`),
      fig('baseline: git add + commit -s', real.base, `${real.commits} commits of the same files`),
      fig('rocm-ebuild bump, 10× stack', synthetic.ours, `${synthetic.commits} commits`),
      fig('baseline: git add + commit -s, 10×', synthetic.base, `${synthetic.commits} commits of the same files`),
    ],
    ratios: [
      { label: '6.2.2: bump / baseline', value: real.ours.seconds / real.base.seconds, note: 'below 1: the whole bump is faster than committing its files by hand' },
      { label: '10×: bump / baseline', value: synthetic.ours.seconds / synthetic.base.seconds },
      { label: '10× / 6.2.2 (bump)', value: synthetic.ours.seconds / real.ours.seconds, note: `for ${(synthetic.commits / real.commits).toFixed(1)}× the commits` },
    ],
    notes: ['The bump includes starting Node, loading and validating the manifest, rendering, the QA checks of every ebuild, hashing the distfiles (cache cold on the first round) and the commits.'],
  };
}
