import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { copyOverlay, IDENTITY, smallStackFixture, type SmallStackFixture } from '../helpers/bumped-overlay.js';
import { git, gitEnv, removeDir, runCli, tempDir } from '../helpers/project.js';
import { gpgKey, sshKey, type SigningKey } from '../helpers/signing-keys.js';
import { head, treeDigest } from './support.js';

/**
 * Signed commits with real keys: an ed25519 OpenPGP key in a GnuPG home of
 * the test's own, and an SSH key. git signs (commit-tree -S), git verifies
 * (%G?), and a repository that requires signing while git cannot sign is
 * refused with nothing written.
 */
describe('bump: signed commits (real GnuPG and SSH keys)', function () {
  this.timeout(180_000);
  let small: SmallStackFixture;
  let work: string;
  const keys: SigningKey[] = [];
  const bump = (version: string, overlay: string, env: NodeJS.ProcessEnv, ...extra: string[]) =>
    runCli(['bump', version, '--overlay', overlay, ...small.flags, ...extra], { home: small.home, env });
  /** %G? of every commit from `from` (exclusive, or the root) to HEAD, with `env`'s keys. */
  const verdicts = async (dir: string, env: NodeJS.ProcessEnv, from?: string) =>
    (await runGitEnv(dir, ['log', '--format=%G?', ...(from ? [`${from}..HEAD`] : ['HEAD'])], env)).trim().split('\n');

  /** git with the test HOME and a key's environment (GNUPGHOME, GIT_CONFIG_GLOBAL). */
  const runGitEnv = (dir: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> =>
    new Promise((resolve, reject) =>
      execFile('git', args, { cwd: dir, env: { ...process.env, ...gitEnv(small.home), ...env } }, (err, out, stderr) => (err ? reject(new Error(`git ${args.join(' ')}: ${stderr}`)) : resolve(out))),
    );

  /** A copy of the 6.2.2 overlay whose layout.conf requires signed commits (committed unsigned, as a layout change by hand would be). */
  async function requiringOverlay(name: string): Promise<{ dir: string; start: string }> {
    const dir = copyOverlay(small.overlay, path.join(work, name));
    const file = path.join(dir, 'metadata/layout.conf');
    await writeFile(file, (await readFile(file, 'utf8')).replace('sign-commits = false', 'sign-commits = true'));
    await git(dir, ['commit', '-q', '-a', '-s', '-m', 'metadata/layout.conf: require signed commits'], small.home);
    return { dir, start: await head(dir, small.home) };
  }

  before(async () => {
    small = await smallStackFixture();
    work = await tempDir('rocm-ebuild-signing-');
  });
  after(async () => {
    for (const k of keys) await k.stop();
    await removeDir(work);
  });

  it('commit.gpgSign with an OpenPGP key: every commit of a new overlay is signed (G), the dry run names the key, layout.conf says sign-commits = true', async () => {
    const key = await gpgKey(path.join(work, 'gpg-new'), small.home, IDENTITY);
    keys.push(key);
    const overlay = path.join(work, 'gpg-new-overlay');
    const dry = await bump('6.2.2', overlay, key.env, '--dry-run');
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stdout, new RegExp(`^commits: signed with openpgp key ${key.fingerprint} \\(Ada Tester <ada@example\\.org>\\) \\(git has commit\\.gpgSign = true\\); the new overlay's metadata/layout\\.conf says sign-commits = true$`, 'm'));
    const json = JSON.parse((await bump('6.2.2', overlay, key.env, '--dry-run', '--json')).stdout) as { signing: { sign: boolean; key: string } };
    assert.equal(json.signing.sign, true);

    const r = await bump('6.2.2', overlay, key.env);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^commits: signed with openpgp key /m);
    const all = await verdicts(overlay, key.env);
    assert.ok(all.length >= 5, all.join(' '));
    assert.deepEqual([...new Set(all)], ['G']);
    // The record of generated texts is signed as well.
    assert.equal((await runGitEnv(overlay, ['log', '-1', '--format=%G?', 'refs/rocm-ebuild-generated'], key.env)).trim(), 'G');
    assert.match(await readFile(path.join(overlay, 'metadata/layout.conf'), 'utf8'), /^sign-commits = true$/m);
    // Messages, authors and dates are the ones fast-import wrote: each signed off, one commit per package.
    const messages = (await runGitEnv(overlay, ['log', '--format=%B%x00'], key.env)).split('\0\n').filter(Boolean);
    for (const m of messages) assert.match(m, /\nSigned-off-by: Ada Tester <ada@example\.org>\n?$/, m);
    assert.equal((await git(overlay, ['status', '--porcelain'], small.home)).trim(), '');

    // A later bump signs too.
    const start = await head(overlay, small.home);
    const next = await bump('6.3.0', overlay, key.env);
    assert.equal(next.code, 0, next.stderr);
    assert.deepEqual([...new Set(await verdicts(overlay, key.env, start))], ['G']);
  });

  it('an SSH key (gpg.format ssh): the commits are signed and verify against the allowed signers; the dry run names the key as ssh-keygen -l does', async () => {
    const key = await sshKey(path.join(work, 'ssh'), small.home, IDENTITY);
    const overlay = copyOverlay(small.overlay, path.join(work, 'ssh-overlay'));
    const start = await head(overlay, small.home);
    const dry = await bump('6.3.0', overlay, key.env, '--dry-run');
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stdout, new RegExp(`^commits: signed with ssh ED25519 key ${key.fingerprint.replace(/[+/]/g, '\\$&')} \\(git has commit\\.gpgSign = true\\)$`, 'm'));
    const r = await bump('6.3.0', overlay, key.env);
    assert.equal(r.code, 0, r.stderr);
    const v = await verdicts(overlay, key.env, start);
    assert.equal(v.length, 3);
    assert.deepEqual([...new Set(v)], ['G']);
  });

  it('layout.conf requires signing and git has no key: refused before anything is written (exit 4, with the fix); the dry run says so', async () => {
    const { dir } = await requiringOverlay('no-key');
    const empty = { GNUPGHOME: path.join(work, 'no-key-gnupg') };
    await mkdir(empty.GNUPGHOME, { mode: 0o700 });
    const before = await treeDigest(dir);
    const r = await bump('6.3.0', dir, empty);
    assert.equal(r.code, 4, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stderr, /commits must be signed \(metadata\/layout\.conf says sign-commits = true\), but git cannot sign: a test signature failed; nothing was written/);
    assert.match(r.stderr, /hint: git signs with gpg \(gpg\.program\) as your committer identity \(user\.signingKey is not set\)/);
    assert.equal(await treeDigest(dir), before, 'the overlay (.git included) changed');
    const dry = await bump('6.3.0', dir, empty, '--dry-run');
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stdout, /^commits: cannot be signed, so a real run refuses \(metadata\/layout\.conf says sign-commits = true\)$/m);
    assert.equal(await treeDigest(dir), before);
  });

  it('commit.gpgSign with an agent that cannot sign (gpg.program fails): refused before anything is written, naming the way out', async () => {
    const key = await gpgKey(path.join(work, 'gpg-broken'), small.home, IDENTITY);
    keys.push(key);
    await writeFile(key.config, `${await readFile(key.config, 'utf8')}[gpg]\n\tprogram = false\n`);
    const dir = copyOverlay(small.overlay, path.join(work, 'broken-overlay'));
    const before = await treeDigest(dir);
    const r = await bump('6.3.0', dir, key.env);
    assert.equal(r.code, 4, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stderr, /commits must be signed \(git has commit\.gpgSign = true\), but git cannot sign/);
    assert.match(r.stderr, /hint: or commit unsigned in this repository: git config commit\.gpgSign false/);
    assert.equal(await treeDigest(dir), before, 'the overlay (.git included) changed');
  });

  it('layout.conf requires signing and a key is configured (commit.gpgSign off): the commits are signed anyway', async () => {
    const key = await gpgKey(path.join(work, 'gpg-required'), small.home, IDENTITY, { gpgSign: false });
    keys.push(key);
    const { dir, start } = await requiringOverlay('required');
    const r = await bump('6.3.0', dir, key.env);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^commits: signed with openpgp key [0-9A-F]{40} \(Ada Tester <ada@example\.org>\) \(metadata\/layout\.conf says sign-commits = true\)$/m);
    assert.deepEqual([...new Set(await verdicts(dir, key.env, start))], ['G']);
  });

  it('nothing asks for signing: unsigned, and said so', async () => {
    const overlay = copyOverlay(small.overlay, path.join(work, 'unsigned'));
    const start = await head(overlay, small.home);
    const r = await bump('6.3.0', overlay, {});
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^commits: not signed: neither git \(commit\.gpgSign\) nor metadata\/layout\.conf \(sign-commits\) asks for signed commits$/m);
    assert.deepEqual([...new Set(await verdicts(overlay, {}, start))], ['N']);
  });
});
