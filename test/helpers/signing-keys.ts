import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * A real signing key made for a test, and the environment that makes git
 * sign with it: GIT_CONFIG_GLOBAL names a configuration that includes the
 * test HOME's own (identity, default branch) and adds the signing settings,
 * so the shared HOME is never changed.
 */
export interface SigningKey {
  /** For the CLI and for git: GNUPGHOME (OpenPGP) and GIT_CONFIG_GLOBAL. */
  env: NodeJS.ProcessEnv;
  /** OpenPGP: the key's fingerprint; SSH: ssh-keygen -l's SHA256:… */
  fingerprint: string;
  /** The global configuration file, to add settings to. */
  config: string;
  /** Stop the gpg-agent this key started (a no-op for SSH). */
  stop(): Promise<void>;
}

async function globalConfig(dir: string, home: string, lines: string[]): Promise<string> {
  const config = path.join(dir, 'gitconfig');
  await writeFile(config, `[include]\n\tpath = ${path.join(home, '.gitconfig')}\n${lines.join('\n')}\n`);
  return config;
}

/**
 * An ed25519 OpenPGP key without passphrase in a GnuPG home of its own
 * (`gpg --batch --quick-gen-key`), for `identity`. `gpgSign`: whether git's
 * commit.gpgSign is on (off: only the key is configured).
 */
export async function gpgKey(dir: string, home: string, identity: { name: string; email: string }, options: { gpgSign?: boolean } = {}): Promise<SigningKey> {
  const gnupgHome = path.join(dir, 'gnupg');
  await mkdir(gnupgHome, { recursive: true, mode: 0o700 });
  const env = { ...process.env, GNUPGHOME: gnupgHome };
  await run('gpg', ['--batch', '--passphrase', '', '--quick-gen-key', `${identity.name} <${identity.email}>`, 'ed25519', 'sign', 'never'], { env });
  const listed = (await run('gpg', ['--batch', '--with-colons', '--list-secret-keys'], { env })).stdout;
  const fingerprint = /^fpr:+([0-9A-F]{40}):/m.exec(listed)![1]!;
  const config = await globalConfig(dir, home, ['[user]', `\tsigningKey = ${fingerprint}`, '[commit]', `\tgpgSign = ${options.gpgSign ?? true}`]);
  return {
    env: { GNUPGHOME: gnupgHome, GIT_CONFIG_GLOBAL: config },
    fingerprint,
    config,
    stop: async () => {
      await run('gpgconf', ['--kill', 'all'], { env }).catch(() => undefined);
    },
  };
}

/** An ed25519 SSH key without passphrase; git signs with it (gpg.format ssh) and checks against an allowed-signers file naming it. */
export async function sshKey(dir: string, home: string, identity: { name: string; email: string }): Promise<SigningKey> {
  await mkdir(dir, { recursive: true });
  const key = path.join(dir, 'id_ed25519');
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', identity.email, '-f', key]);
  const pub = `${key}.pub`;
  const allowed = path.join(dir, 'allowed_signers');
  await writeFile(allowed, `${identity.email} ${(await readFile(pub, 'utf8')).trim()}\n`);
  const fingerprint = (await run('ssh-keygen', ['-l', '-f', pub])).stdout.split(' ')[1]!;
  const config = await globalConfig(dir, home, ['[gpg]', '\tformat = ssh', '[gpg "ssh"]', `\tallowedSignersFile = ${allowed}`, '[user]', `\tsigningKey = ${pub}`, '[commit]', '\tgpgSign = true']);
  return { env: { GIT_CONFIG_GLOBAL: config }, fingerprint, config, stop: async () => undefined };
}
