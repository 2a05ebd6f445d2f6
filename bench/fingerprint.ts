import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The fingerprint of a `bump` into a new overlay: every commit's tree hash,
 * author, committer and message, in order, with the dates pinned (and so the
 * commit hashes too). Two builds whose fingerprints match wrote the same
 * commits, byte for byte: what a speed change must keep.
 *
 *   node dist/bench/fingerprint.js [VERSION] [--manifest PATH]   # prints it, and its sha256 last
 *
 * The bump bench prints the sha256 of the runs it times, so a faster build
 * that writes something else shows up there too.
 */

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const bin = path.join(root, 'bin', 'run.js');

export const PINNED_ENV: NodeJS.ProcessEnv = {
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'Bench',
  GIT_AUTHOR_EMAIL: 'bench@example.org',
  GIT_COMMITTER_NAME: 'Bench',
  GIT_COMMITTER_EMAIL: 'bench@example.org',
  GIT_AUTHOR_DATE: '2024-11-01T12:00:00+0000',
  GIT_COMMITTER_DATE: '2024-11-01T12:00:00+0000',
  SOURCE_DATE_EPOCH: '1730462400',
  TZ: 'UTC',
  NO_COLOR: '1',
};

/** Distfiles whose content depends only on their name, so Manifests are reproducible. */
export async function deterministicDistfiles(manifest: string, distdir: string, env: NodeJS.ProcessEnv, version = '6.2.2'): Promise<number> {
  const out = execFileSync(process.execPath, [bin, 'bump', version, '--overlay', path.join(distdir, '..', 'no-such-overlay'), '--manifest', manifest, '--dry-run', '--json'], {
    env,
    maxBuffer: 64 << 20,
  });
  const plan = JSON.parse(out.toString()) as { packages: { distfiles: { name: string }[] }[] };
  await fs.mkdir(distdir, { recursive: true });
  let n = 0;
  for (const p of plan.packages) {
    for (const d of p.distfiles) {
      const file = path.join(distdir, d.name);
      n++;
      if (await fs.stat(file).catch(() => undefined)) continue;
      // 64 KiB from the name: a hash chain, cheap and the same on every machine.
      const parts: Buffer[] = [];
      let block = createHash('sha512').update(d.name).digest();
      for (let i = 0; i < 1024; i++) {
        parts.push(block);
        block = createHash('sha512').update(block).digest();
      }
      await fs.writeFile(file, Buffer.concat(parts));
    }
  }
  return n;
}

/** Every commit of the overlay's branch, oldest first: tree, author, committer, message. */
export function fingerprint(overlay: string, env: NodeJS.ProcessEnv = PINNED_ENV): string {
  return execFileSync('git', ['log', '--reverse', '--format=%H %T%n%an <%ae> %ad%n%cn <%ce> %cd%n%B%x00'], { cwd: overlay, env: { ...process.env, ...env } }).toString();
}

export function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const m = args.indexOf('--manifest');
  const manifest = m >= 0 ? path.resolve(args[m + 1]!) : path.join(root, 'manifest', 'stack.yaml');
  const version = args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--manifest') ?? '6.2.2';
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rocm-ebuild-fingerprint-'));
  try {
    const env = { ...process.env, ...PINNED_ENV, HOME: dir, XDG_CACHE_HOME: path.join(dir, 'cache') };
    const distdir = path.join(dir, 'distfiles');
    await deterministicDistfiles(manifest, distdir, env);
    const overlay = path.join(dir, 'overlay');
    execFileSync(process.execPath, [bin, 'bump', version, '--overlay', overlay, '--manifest', manifest, '--distdir', distdir, '--offline'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
    const text = fingerprint(overlay, env);
    process.stdout.write(text);
    process.stdout.write(`${digest(text)}\n`);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
