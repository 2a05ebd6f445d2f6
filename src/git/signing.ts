import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseLayoutConf } from '../overlay/scan.js';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';
import { printable } from '../util/printable.js';
import type { OverlayRepo } from './repo.js';
import { GitError, runGit, runGitFor } from './run.js';

/**
 * Signed commits, the way the user's git signs them: `commit.gpgSign`,
 * `gpg.format` (openpgp, ssh, x509), `user.signingKey` and the programs
 * (`gpg.program`, `gpg.ssh.program`, …) are git's own business, because
 * every signature is made by `git commit-tree -S`. A repository whose
 * metadata/layout.conf says `sign-commits = true` (::gentoo does) gets
 * signed commits whatever commit.gpgSign says. Whether signing works is
 * settled by a test signature before anything is written: its commit goes
 * into a scratch object directory, never into the repository.
 */

export type SigningFormat = 'openpgp' | 'ssh' | 'x509';

export interface CommitSigning {
  /** Whether the commits are signed. */
  sign: boolean;
  /** The repository's metadata/layout.conf says sign-commits = true. */
  required: boolean;
  /** git's commit.gpgSign is true. */
  configured: boolean;
  format?: SigningFormat;
  /** The key the test signature was made with, as the user knows it: "openpgp key 83D8… (Name <email>)". */
  key?: string;
  /** Why the commits are signed or not, for the user. */
  why: string;
  /** --dry-run only: signing is asked for and the test signature failed, so a real run would refuse; what failed and the fix. */
  problem?: string;
}

/**
 * How the commits bump makes in `dir` are signed. `repository`: `dir` is a
 * git repository (else it is created later, and only the global
 * configuration applies). Refuses (exit 4) when signing is asked for and a
 * test signature fails, unless `dryRun`, which reports it instead.
 */
export async function commitSigning(dir: string, options: { repository: boolean; commit: boolean; dryRun: boolean }): Promise<CommitSigning> {
  if (!options.commit) return { sign: false, required: false, configured: false, why: 'not signed: --no-commit leaves the commits to you' };
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'rocm-ebuild-sign-'));
  try {
    let cwd = dir;
    if (!options.repository) {
      // A new overlay: git's configuration as a new repository would see it.
      cwd = path.join(scratch, 'probe.git');
      await runGit(scratch, ['init', '-q', '--bare', cwd]);
    }
    const [configured, formatValue, signingKey, layout] = await Promise.all([
      configValue(cwd, ['--type=bool', 'commit.gpgSign']).then((v) => v === 'true'),
      configValue(cwd, ['gpg.format']),
      configValue(cwd, ['user.signingKey']),
      options.repository ? headFile(cwd, 'metadata/layout.conf') : Promise.resolve(undefined),
    ]);
    const required = layout !== undefined && parseLayoutConf(layout).get('sign-commits')?.toLowerCase() === 'true';
    if (!configured && !required) {
      return { sign: false, required, configured, why: 'not signed: neither git (commit.gpgSign) nor metadata/layout.conf (sign-commits) asks for signed commits' };
    }
    const format = (formatValue ?? 'openpgp') as SigningFormat;
    const why = [...(required ? ['metadata/layout.conf says sign-commits = true'] : []), ...(configured ? ['git has commit.gpgSign = true'] : [])].join(', and ');
    const probe = await testSignature(cwd, format, path.join(scratch, 'objects'));
    if ('key' in probe) return { sign: true, required, configured, format, key: probe.key, why };
    const problem =
      `commits must be signed (${why}), but git cannot sign: a test signature failed${options.dryRun ? '' : '; nothing was written'}:\n` +
      `${printable(probe.error).replace(/^/gm, '  ')}\n` +
      `hint: ${signingHint(format, signingKey === undefined ? undefined : printable(signingKey, { oneLine: true }))}` +
      (required ? '' : '\nhint: or commit unsigned in this repository: git config commit.gpgSign false');
    if (!options.dryRun) throw new UserError(problem, ExitCode.overlayRefused, { signing: { required, configured, format, error: probe.error } });
    return { sign: false, required, configured, format, why, problem };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** One line for the user: signed with which key and why, or why not. */
export function describeSigning(s: CommitSigning): string {
  if (s.problem) return `commits: cannot be signed, so a real run refuses (${s.why})`;
  return s.sign ? `commits: signed with ${s.key} (${s.why})` : `commits: ${s.why}`;
}

/** `git config --get` of a key, or undefined when it is not set. */
async function configValue(cwd: string, args: string[]): Promise<string | undefined> {
  try {
    const r = await runGitFor(cwd, ['config', '--get', ...args], (code) => code === 0 || code === 1);
    return r.code === 0 ? r.stdout.trim() : undefined;
  } catch (err) {
    if (!(err instanceof GitError)) throw err;
    throw new UserError(`git's configuration cannot be read: ${err.stderr.trim()}`, ExitCode.overlayRefused);
  }
}

/** A file of the commit HEAD points to, or undefined (no such file, or no commit yet). */
async function headFile(cwd: string, file: string): Promise<string | undefined> {
  const r = await runGitFor(cwd, ['cat-file', '-p', `HEAD:${file}`], () => true);
  return r.code === 0 ? r.stdout : undefined;
}

/**
 * Sign a commit of the empty tree, as bump's commits will be signed, into
 * `objects` (a scratch directory: the repository's own objects are not
 * written), and read back the key it was made with.
 */
async function testSignature(cwd: string, format: SigningFormat, objects: string): Promise<{ key: string } | { error: string }> {
  const env = { GIT_OBJECT_DIRECTORY: objects };
  await mkdir(objects, { recursive: true });
  let id: string;
  try {
    const emptyTree = (await runGit(cwd, ['hash-object', '-t', 'tree', '--stdin'])).trim();
    id = (await runGit(cwd, ['commit-tree', '-S', '-m', 'rocm-ebuild: test signature', emptyTree], { env })).trim();
  } catch (err) {
    if (!(err instanceof GitError)) throw err;
    return { error: err.stderr.trim() || `git commit-tree -S failed (${err.exitCode ?? 'killed'})` };
  }
  const raw = await runGit(cwd, ['cat-file', 'commit', id], { env });
  const signature = signatureOf(raw);
  if (!signature) return { error: 'git made the test commit without a signature' };
  return { key: await keyOf(cwd, id, signature, format, env) };
}

/** The signature a commit object carries (its gpgsig header, continuation lines joined), or undefined. */
export function signatureOf(commit: string): string | undefined {
  const header = commit.slice(0, commit.indexOf('\n\n') >= 0 ? commit.indexOf('\n\n') : commit.length);
  const m = /^gpgsig(?:-sha256)? (.*(?:\n .*)*)/m.exec(header);
  return m ? m[1]!.replace(/\n /g, '\n') : undefined;
}

/** The key a test signature was made with, in the words of its format. */
async function keyOf(cwd: string, id: string, signature: string, format: SigningFormat, env: NodeJS.ProcessEnv): Promise<string> {
  if (format === 'ssh' || signature.includes('BEGIN SSH SIGNATURE')) {
    const key = sshSignatureKey(signature);
    if (key) return `ssh ${key.type} key ${key.fingerprint}`;
  }
  // gpg (or gpgsm) checks the signature with the user's own keyring: its fingerprint and user id.
  const shown = await runGitFor(cwd, ['log', '-1', '--format=%GF%x1f%GS', id], () => true, { env });
  const [fingerprint = '', signer = ''] = shown.stdout.trim().split('\x1f');
  const kind = format === 'x509' ? 'x509' : 'openpgp';
  if (fingerprint) return `${kind} key ${printable(fingerprint, { oneLine: true })}${signer ? ` (${printable(signer, { oneLine: true })})` : ''}`;
  return `${kind} key (its fingerprint could not be read back)`;
}

/**
 * The public key inside an SSH signature (OpenSSH's PROTOCOL.sshsig: "SSHSIG",
 * a version, then the key as an SSH string), as ssh-keygen -l names it.
 */
export function sshSignatureKey(armored: string): { type: string; fingerprint: string } | undefined {
  const body = armored.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');
  const bytes = Buffer.from(body, 'base64');
  if (bytes.length < 14 || bytes.subarray(0, 6).toString('latin1') !== 'SSHSIG') return undefined;
  const keyLength = bytes.readUInt32BE(10);
  const key = bytes.subarray(14, 14 + keyLength);
  if (key.length !== keyLength || key.length < 4) return undefined;
  const typeLength = key.readUInt32BE(0);
  const type = key.subarray(4, 4 + typeLength).toString('latin1');
  const names: Record<string, string> = { 'ssh-ed25519': 'ED25519', 'ssh-rsa': 'RSA', 'sk-ssh-ed25519@openssh.com': 'ED25519-SK', 'sk-ecdsa-sha2-nistp256@openssh.com': 'ECDSA-SK' };
  const name = names[type] ?? (type.startsWith('ecdsa-') ? 'ECDSA' : type);
  return { type: name, fingerprint: `SHA256:${createHash('sha256').update(key).digest('base64').replace(/=+$/, '')}` };
}

function signingHint(format: SigningFormat, key: string | undefined): string {
  if (format === 'ssh') {
    return (
      `git signs with ssh-keygen (gpg.ssh.program) and user.signingKey${key ? ` (${key})` : ', which is not set'}: ` +
      'a public key whose private key ssh-agent holds, or a private key file: git config user.signingKey ~/.ssh/id_ed25519.pub'
    );
  }
  if (format === 'x509') return `git signs with gpgsm (gpg.x509.program) as ${key ? `user.signingKey ${key}` : 'your committer identity (user.signingKey is not set)'}: gpgsm --list-secret-keys shows what it can use`;
  return (
    `git signs with gpg (gpg.program) as ${key ? `user.signingKey ${key}` : 'your committer identity (user.signingKey is not set)'}; ` +
    `try it: echo test | gpg --clearsign${key ? ` -u ${key}` : ''} (gpg --list-secret-keys shows your keys; ` +
    'git config user.signingKey <fingerprint> picks one); a key behind a passphrase needs gpg-agent able to ask for it: export GPG_TTY=$(tty)'
  );
}

/** Author or committer line "Name <email> <epoch> <zone>" as the GIT_* variables that make git write it again. */
function identEnv(line: string, who: 'AUTHOR' | 'COMMITTER'): NodeJS.ProcessEnv {
  const m = /^(.*) <([^>]*)> (\d+ [+-]\d{4})$/.exec(line);
  if (!m) throw new Error(`not an ident line: ${line}`);
  return { [`GIT_${who}_NAME`]: m[1]!, [`GIT_${who}_EMAIL`]: m[2]!, [`GIT_${who}_DATE`]: `@${m[3]!}` };
}

/**
 * The commit of `tree` on `parent` with `message`, author and committer
 * lines as given, signed by git (`commit-tree -S`) the way it is configured
 * to sign; the message goes in byte for byte.
 */
export async function signedCommit(
  repo: OverlayRepo,
  c: { tree: string; parent: string | undefined; message: string; author: string; committer: string },
): Promise<string> {
  const env = { ...identEnv(c.author, 'AUTHOR'), ...identEnv(c.committer, 'COMMITTER') };
  try {
    return (await repo.raw(['commit-tree', '-S', c.tree, ...(c.parent ? ['-p', c.parent] : []), '-F', '-'], { input: c.message, env })).trim();
  } catch (err) {
    if (!(err instanceof GitError)) throw err;
    // The test signature worked moments ago: an agent that stopped, a card pulled out.
    throw new UserError(`git could not sign a commit; nothing was written to the branch:\n${printable(err.stderr.trim()).replace(/^/gm, '  ')}`, ExitCode.overlayRefused);
  }
}
