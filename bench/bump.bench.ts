import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';
import { BENCH_ROOT } from './dataset.js';
import { deterministicDistfiles, digest, fingerprint, PINNED_ENV } from './fingerprint.js';
import type { BenchReport } from './report.js';
import { figure, interleaved, pairedRatio, timeCommand, type Stats, type Timing } from './timing.js';

/**
 * A full 6.2.2 bump into a new overlay, whole process, against the floor:
 * `git fast-import` of the very same commits into a new repository and
 * `git read-tree -u` to check them out, and (for an empty hash cache) the
 * floor plus openssl's two digests of the distfiles, run in parallel. Then a
 * synthetic stack ten times larger, with the bump's peak memory. Distfiles
 * are synthetic (64 KiB each, made from their names) and on disk (--offline): downloads are
 * measured by fetch.bench, hashing at scale by hash.bench and manifest.bench.
 */

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const bin = path.join(root, 'bin', 'run.js');
const ROUNDS = Number(process.env.ROCM_EBUILD_BENCH_ROUNDS ?? 5);

/** A stack `copies` times the shipped one: every component cloned under a suffixed name. */
async function syntheticManifest(dir: string, copies: number): Promise<string> {
  const src = path.join(root, 'manifest');
  await fs.rm(dir, { recursive: true, force: true });
  await fs.mkdir(path.join(dir, 'components'), { recursive: true });
  await fs.mkdir(path.join(dir, 'external'), { recursive: true });
  for (const f of await fs.readdir(path.join(src, 'external'))) await fs.copyFile(path.join(src, 'external', f), path.join(dir, 'external', f));
  for (const f of await fs.readdir(src)) if (f.endsWith('.yaml') && f !== 'stack.yaml') await fs.copyFile(path.join(src, f), path.join(dir, f));
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

/** The distfiles of the plan, made from their names (so Manifests, and the fingerprint, are the same on every run). */
async function distfilesFor(manifest: string, distdir: string, env: NodeJS.ProcessEnv): Promise<string[]> {
  await deterministicDistfiles(manifest, distdir, env);
  return (await fs.readdir(distdir)).map((f) => path.join(distdir, f));
}

/** Peak resident memory of a Node process, written by a preloaded hook as it exits. */
async function peakHook(dir: string): Promise<{ preload: string; read: () => Promise<number> }> {
  const preload = path.join(dir, 'peak-rss.cjs');
  const out = path.join(dir, 'peak-rss.txt');
  await fs.writeFile(preload, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(out)}, String(process.resourceUsage().maxRSS)));\n`);
  return { preload, read: async () => Number(await fs.readFile(out, 'utf8')) / 1024 };
}

interface Measured {
  commits: number;
  fingerprint: string;
  warm: Stats;
  cold: Stats;
  floor: Stats;
  digests: Stats;
  /** With `context`: Node starting and doing nothing, and `validate` of the same manifest (warm cache). */
  node?: Stats;
  validate?: Stats;
  peakMiB: number[];
}

/**
 * `context` adds, in the same alternating rounds, what any bump pays before
 * its own work: Node's start (`node -e 0`) and the manifest check every bump
 * begins with (`validate`, cache warm). Set against the floor, they show how
 * much of the goal is left for rendering, QA and committing.
 */
async function measure(label: string, manifest: string, rounds: number, context = false): Promise<Measured> {
  const dir = path.join(BENCH_ROOT, `bump-${label}`);
  await fs.rm(dir, { recursive: true, force: true });
  await fs.mkdir(dir, { recursive: true });
  const cache = path.join(dir, 'cache');
  const env = { ...process.env, ...PINNED_ENV, HOME: dir, XDG_CACHE_HOME: cache };
  const distdir = path.join(dir, 'distfiles');
  const files = await distfilesFor(manifest, distdir, env);
  const overlay = path.join(dir, 'overlay');
  const hashCache = path.join(cache, 'rocm-ebuild', 'hash-cache.json');
  const peak = await peakHook(dir);
  const peakMiB: number[] = [];
  const bump = (cold: boolean) => async (): Promise<Timing> => {
    await fs.rm(overlay, { recursive: true, force: true });
    if (cold) await fs.rm(hashCache, { force: true });
    const t = await timeCommand(process.execPath, ['--require', peak.preload, bin, 'bump', '6.2.2', '--overlay', overlay, '--manifest', manifest, '--distdir', distdir, '--offline'], { env });
    peakMiB.push(await peak.read());
    return t;
  };
  // A first bump: the commits the floor replays, and a warm hash cache.
  await bump(false)();
  const commits = Number(execFileSync('git', ['rev-list', '--count', 'HEAD'], { cwd: overlay, env }).toString().trim());
  const print = fingerprint(overlay, env);
  const stream = path.join(dir, 'commits.fi');
  await fs.writeFile(stream, execFileSync('git', ['fast-export', '--all'], { cwd: overlay, env, maxBuffer: 1 << 30 }));
  const floorRepo = path.join(dir, 'floor');
  const floorScript = 'rm -rf "$1" && git init -q "$1" && cd "$1" && git fast-import --quiet < "$2" && git read-tree -u -m HEAD';
  const contenders: Record<string, () => Promise<Timing>> = {
    warm: bump(false),
    cold: bump(true),
    floor: () => timeCommand('bash', ['-c', floorScript, 'bash', floorRepo, stream], { env }),
    digests: () => timeCommand('bash', ['-c', 'openssl dgst -blake2b512 "$@" > /dev/null & openssl dgst -sha512 "$@" > /dev/null; wait', 'bash', ...files], { env }),
  };
  if (context) {
    contenders.node = () => timeCommand(process.execPath, ['-e', '0'], { env });
    contenders.validate = () => timeCommand(process.execPath, [bin, 'validate', manifest], { env });
  }
  const t = await interleaved(rounds, contenders);
  const { warm, cold, floor, digests, node, validate } = t;
  return { commits, fingerprint: digest(print), warm: warm!, cold: cold!, floor: floor!, digests: digests!, ...(node && validate ? { node, validate } : {}), peakMiB };
}

export async function run(): Promise<BenchReport> {
  const real = await measure('6.2.2', path.join(root, 'manifest', 'stack.yaml'), ROUNDS, true);
  const x10 = await measure('x10', await syntheticManifest(path.join(BENCH_ROOT, 'stack-x10'), 10), Math.max(1, Math.ceil(ROUNDS / 2)));
  const withDigests = (m: Measured) => (i: number) => m.floor.runs[i]!.seconds + m.digests.runs[i]!.seconds;
  const mib = (xs: number[]) => Math.max(...xs);
  return {
    title: `bump into a new overlay, whole process, against the git floor (median of alternating runs [min–max]; 10×: ${Math.ceil(ROUNDS / 2)} rounds)`,
    figures: [
      { ...figure('bump 6.2.2, hash cache warm', real.warm, `${real.commits} commits`), peakMiB: mib(real.peakMiB) },
      figure('bump 6.2.2, hash cache empty', real.cold),
      figure('floor: git fast-import + read-tree -u', real.floor, `the same ${real.commits} commits`),
      figure('openssl blake2b + sha512 in parallel', real.digests, 'the same distfiles'),
      figure('node -e 0', real.node!, 'what any bump pays first'),
      figure('validate, manifest cache warm', real.validate!, 'the manifest check every bump begins with'),
      { ...figure('bump 10× stack, hash cache warm', x10.warm, `${x10.commits} commits`), peakMiB: mib(x10.peakMiB) },
      figure('bump 10× stack, hash cache empty', x10.cold),
      figure('floor 10×: git fast-import + read-tree -u', x10.floor, `the same ${x10.commits} commits`),
    ],
    ratios: [
      { label: '6.2.2, warm cache / floor', ...pairedRatio(real.warm, real.floor), goal: 3 },
      { label: '6.2.2, empty cache / (floor + digests)', ...pairedRatio(real.cold, withDigests(real)), goal: 1.5 },
      { label: 'CPU: 6.2.2 warm / floor', ...pairedRatio(real.warm, real.floor, 'cpuSeconds') },
      { label: 'node -e 0 / floor', ...pairedRatio(real.node!, real.floor), note: 'Node starting and doing nothing' },
      { label: 'validate / floor', ...pairedRatio(real.validate!, real.floor), note: 'before a bump renders, checks or commits anything' },
      { label: '10×, warm cache / floor', ...pairedRatio(x10.warm, x10.floor) },
      { label: '10× / 6.2.2 (warm)', value: x10.warm.seconds / real.warm.seconds, note: `for ${(x10.commits / real.commits).toFixed(1)}× the commits` },
      { label: 'peak memory of the 10× bump / 300 MiB', value: mib(x10.peakMiB) / 300, goal: 1, note: `${mib(x10.peakMiB).toFixed(0)} MiB: the Node process's maxRSS (git runs in its own)` },
    ],
    notes: [
      `Output fingerprint (tree, identity, message and hash of every commit, dates pinned): 6.2.2 ${real.fingerprint.slice(0, 16)}…, 10× ${x10.fingerprint.slice(0, 16)}…; the same build gives the same value, so a faster build that writes other commits shows here.`,
      'Each bump starts Node, loads and validates the manifest, renders and QA-checks every ebuild (bash -n included), hashes the distfiles (or reads the hash cache) and commits through one git fast-import.',
    ],
  };
}
