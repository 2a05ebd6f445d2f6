import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BENCH_ROOT } from './dataset.js';
import { deterministicDistfiles, PINNED_ENV } from './fingerprint.js';
import type { BenchReport } from './report.js';
import { figure, interleaved, pairedRatio, timeCommand, type Timing } from './timing.js';

/**
 * What signing costs a bump: the same 6.2.2 bump into a new overlay, whole
 * process, hash cache warm, unsigned and signed with real keys (an ed25519
 * OpenPGP key in a GnuPG home of the bench's own, through gpg-agent, and an
 * ed25519 SSH key), in alternating rounds. Signed, fast-import's commits are
 * made again by `git commit-tree -S`, one git and one signature per commit.
 */

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const bin = path.join(root, 'bin', 'run.js');
const ROUNDS = Number(process.env.ROCM_EBUILD_BENCH_ROUNDS ?? 5);

export async function run(): Promise<BenchReport> {
  const dir = path.join(BENCH_ROOT, 'signing');
  await fs.rm(dir, { recursive: true, force: true });
  await fs.mkdir(dir, { recursive: true });
  const env: NodeJS.ProcessEnv = { ...process.env, ...PINNED_ENV, HOME: dir, XDG_CACHE_HOME: path.join(dir, 'cache') };
  delete env.GIT_CONFIG_GLOBAL;
  const manifest = path.join(root, 'manifest', 'stack.yaml');
  const distdir = path.join(dir, 'distfiles');
  await deterministicDistfiles(manifest, distdir, env);

  // The keys, and a global git configuration for each way of signing.
  const gnupg = path.join(dir, 'gnupg');
  await fs.mkdir(gnupg, { mode: 0o700 });
  const gpgEnv = { ...env, GNUPGHOME: gnupg };
  execFileSync('gpg', ['--batch', '--passphrase', '', '--quick-gen-key', 'Bench <bench@example.org>', 'ed25519', 'sign', 'never'], { env: gpgEnv, stdio: 'ignore' });
  const fpr = /^fpr:+([0-9A-F]{40}):/m.exec(execFileSync('gpg', ['--batch', '--with-colons', '--list-secret-keys'], { env: gpgEnv }).toString())![1]!;
  const sshKey = path.join(dir, 'id_ed25519');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', sshKey]);
  const configs = {
    unsigned: '[commit]\n\tgpgSign = false\n',
    openpgp: `[user]\n\tsigningKey = ${fpr}\n[commit]\n\tgpgSign = true\n`,
    ssh: `[gpg]\n\tformat = ssh\n[user]\n\tsigningKey = ${sshKey}.pub\n[commit]\n\tgpgSign = true\n`,
  };
  const envs: Record<keyof typeof configs, NodeJS.ProcessEnv> = { unsigned: env, openpgp: env, ssh: env };
  for (const [name, text] of Object.entries(configs) as [keyof typeof configs, string][]) {
    const file = path.join(dir, `gitconfig-${name}`);
    await fs.writeFile(file, text);
    envs[name] = { ...gpgEnv, GIT_CONFIG_GLOBAL: file };
  }

  const overlay = path.join(dir, 'overlay');
  const bump = (name: keyof typeof configs) => async (): Promise<Timing> => {
    await fs.rm(overlay, { recursive: true, force: true });
    return timeCommand(process.execPath, [bin, 'bump', '6.2.2', '--overlay', overlay, '--manifest', manifest, '--distdir', distdir, '--offline'], { env: envs[name] });
  };
  // A first bump of each kind: a warm hash cache, the agent started, and the commits counted and checked.
  const verdicts: Record<string, string> = {};
  let commits = 0;
  for (const name of Object.keys(configs) as (keyof typeof configs)[]) {
    await bump(name)();
    commits = Number(execFileSync('git', ['rev-list', '--count', 'HEAD'], { cwd: overlay, env: envs[name] }).toString().trim());
    const signed = execFileSync('git', ['log', '--format=%H', 'HEAD'], { cwd: overlay, env: envs[name] })
      .toString()
      .trim()
      .split('\n')
      .filter((id) => /\ngpgsig /.test(execFileSync('git', ['cat-file', 'commit', id], { cwd: overlay, env: envs[name] }).toString())).length;
    verdicts[name] = `${signed} of ${commits} signed`;
  }
  try {
    const t = await interleaved(ROUNDS, { unsigned: bump('unsigned'), openpgp: bump('openpgp'), ssh: bump('ssh') });
    const { unsigned, openpgp, ssh } = t as Record<keyof typeof configs, NonNullable<(typeof t)['unsigned']>>;
    const perCommit = (signed: typeof unsigned) => ((signed.seconds - unsigned.seconds) / commits) * 1000;
    return {
      title: `signed commits: bump 6.2.2 into a new overlay, hash cache warm, unsigned and signed (median of ${ROUNDS} alternating rounds [min–max])`,
      figures: [
        figure('bump 6.2.2, unsigned', unsigned, `${commits} commits: ${verdicts.unsigned}`),
        figure('bump 6.2.2, OpenPGP ed25519 (gpg-agent)', openpgp, verdicts.openpgp),
        figure('bump 6.2.2, SSH ed25519 (ssh-keygen)', ssh, verdicts.ssh),
      ],
      ratios: [
        { label: 'OpenPGP-signed / unsigned', ...pairedRatio(openpgp, unsigned), note: `${perCommit(openpgp).toFixed(1)} ms more per commit` },
        { label: 'SSH-signed / unsigned', ...pairedRatio(ssh, unsigned), note: `${perCommit(ssh).toFixed(1)} ms more per commit` },
      ],
      notes: ['Signed, every commit fast-import made is made again by git commit-tree -S (one git process and one gpg or ssh-keygen each), after a test signature.'],
    };
  } finally {
    execFileSync('gpgconf', ['--kill', 'all'], { env: gpgEnv });
  }
}
