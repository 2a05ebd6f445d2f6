import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { gitEnv, gitHome, removeDir, runCli, tempDir } from '../helpers/project.js';
import { gpgKey, sshKey, type SigningKey } from '../helpers/signing-keys.js';

const IDENTITY = { name: 'Ada Tester', email: 'ada@example.org' };

interface Finding {
  keyword: string;
  level: string;
  message: string;
  commit?: string;
}

/**
 * `pr check` where the repository requires signed commits: a real GnuPG key
 * signs, a real SSH key signs what the checker cannot verify, one commit is
 * unsigned and one is a signed commit whose message was changed afterwards.
 */
describe('pr check: commit signatures (real GnuPG and SSH keys)', function () {
  this.timeout(120_000);
  let work: string;
  let home: string;
  let gpg: SigningKey;
  let ssh: SigningKey;
  let repo: string;
  let base: string;
  const ids: Record<'good' | 'unsigned' | 'forged' | 'ssh', string> = { good: '', unsigned: '', forged: '', ssh: '' };

  const git = (dir: string, args: string[], env: NodeJS.ProcessEnv = {}, input?: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const child = execFile('git', args, { cwd: dir, env: { ...process.env, ...gitEnv(home), ...env } }, (err, out, stderr) =>
        err ? reject(new Error(`git ${args.join(' ')}: ${stderr}`)) : resolve(out),
      );
      if (input !== undefined) child.stdin!.end(input);
    });

  async function commit(file: string, env: NodeJS.ProcessEnv, sign: boolean): Promise<string> {
    await writeFile(path.join(repo, file), `${file}\n`);
    await git(repo, ['add', file]);
    await git(repo, ['commit', '-q', '-s', ...(sign ? ['-S'] : ['--no-gpg-sign']), '-m', `${file}: add`], env);
    return (await git(repo, ['rev-parse', 'HEAD'])).trim();
  }

  const check = async (dir: string, env: NodeJS.ProcessEnv) => {
    const r = await runCli(['pr', 'check', '--overlay', dir, '--range', `${base}..HEAD`, '--no-pkgcheck', '--json'], { home, env });
    const report = JSON.parse(r.stdout) as { results: Finding[]; signatures: Record<string, unknown> };
    return { code: r.code, report, signatureFindings: report.results.filter((x) => /Signature|Unsigned/.test(x.keyword)) };
  };

  before(async () => {
    work = await tempDir('rocm-ebuild-pr-signatures-');
    home = await gitHome(IDENTITY);
    gpg = await gpgKey(path.join(work, 'gpg'), home, IDENTITY, { gpgSign: false });
    ssh = await sshKey(path.join(work, 'ssh'), home, IDENTITY);
    repo = path.join(work, 'repo');
    await mkdir(path.join(repo, 'metadata'), { recursive: true });
    await mkdir(path.join(repo, 'profiles'), { recursive: true });
    await writeFile(path.join(repo, 'profiles/repo_name'), 'signed\n');
    await writeFile(path.join(repo, 'metadata/layout.conf'), 'masters = gentoo\nthin-manifests = true\nsign-commits = true\n');
    await git(repo, ['init', '-q']);
    await git(repo, ['add', '-A']);
    await git(repo, ['commit', '-q', '-s', '-m', 'profiles, metadata: new repository']);
    base = (await git(repo, ['rev-parse', 'HEAD'])).trim();
    ids.good = await commit('good', gpg.env, true);
    ids.unsigned = await commit('unsigned', gpg.env, false);
    // A signed commit whose message is changed afterwards, keeping the signature: it no longer verifies.
    const signed = await commit('forged', gpg.env, true);
    const raw = await git(repo, ['cat-file', 'commit', signed]);
    ids.forged = (await git(repo, ['hash-object', '-t', 'commit', '-w', '--stdin'], {}, raw.replace('forged: add', 'forged: add, changed after signing'))).trim();
    await git(repo, ['update-ref', 'HEAD', ids.forged, signed]);
    ids.ssh = await commit('ssh', ssh.env, true);
  });
  after(async () => {
    await gpg.stop();
    await removeDir(work);
    await removeDir(home);
  });

  it('an unsigned commit is UnsignedCommit, a changed one BadCommitSignature, one it cannot check UnverifiedCommitSignature; a good one nothing', async () => {
    const { code, report, signatureFindings } = await check(repo, gpg.env);
    assert.equal(code, 6);
    const by = (id: string) => signatureFindings.filter((x) => x.commit === id).map((x) => [x.keyword, x.level]);
    assert.deepEqual(by(ids.good), []);
    assert.deepEqual(by(ids.unsigned), [['UnsignedCommit', 'error']]);
    assert.deepEqual(by(ids.forged), [['BadCommitSignature', 'error']]);
    assert.deepEqual(by(ids.ssh), [['UnverifiedCommitSignature', 'warning']]);
    assert.match(signatureFindings.find((x) => x.commit === ids.unsigned)!.message, new RegExp(`git rebase --force-rebase --gpg-sign ${base}`));
    assert.match(signatureFindings.find((x) => x.commit === ids.forged)!.message, /does not match the commit/);
    assert.deepEqual(report.signatures, { required: true, commits: 4, signed: 3, good: 1, bad: 1, unverified: 1 });

    // With the SSH allowed signers configured as well, the SSH-signed commit verifies.
    const both = await check(repo, { ...gpg.env, GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'gpg.ssh.allowedSignersFile', GIT_CONFIG_VALUE_0: path.join(work, 'ssh', 'allowed_signers') });
    assert.deepEqual(both.signatureFindings.filter((x) => x.commit === ids.ssh), []);

    const text = await runCli(['pr', 'check', '--overlay', repo, '--range', `${base}..HEAD`, '--no-pkgcheck'], { home, env: gpg.env });
    assert.match(text.stdout, /^signatures: 3 of 4 commits signed, 1 verified, 1 bad, 1 not verifiable here \(metadata\/layout\.conf requires signed commits\)$/m);
    assert.match(text.stdout, new RegExp(`^ {2}commit ${ids.unsigned.slice(0, 12)}: UnsignedCommit: not signed, and metadata/layout\\.conf requires signed commits`, 'm'));
  });

  it('pr push --dry-run refuses the range for its unsigned and badly signed commits, and with --force says how the signatures stand', async () => {
    await git(repo, ['remote', 'add', 'fork', 'https://github.com/ada/signed.git']).catch(() => undefined);
    const args = ['pr', 'push', '--overlay', repo, '--range', `${base}..HEAD`, '--no-pkgcheck', '--remote', 'fork', '--branch', 'signed', '--dry-run'];
    const refused = await runCli(args, { home, env: { ...gpg.env, PATH: '/usr/bin:/bin' } });
    assert.equal(refused.code, 6, refused.stderr);
    assert.match(refused.stderr, /UnsignedCommit: not signed/);
    assert.match(refused.stderr, /BadCommitSignature: the signature does not match the commit/);
    const forced = await runCli([...args, '--force'], { home, env: { ...gpg.env, PATH: '/usr/bin:/bin' } });
    assert.equal(forced.code, 0, forced.stderr);
    assert.match(forced.stdout, /^# signatures: 3 of 4 commits signed, 1 verified, 1 bad, 1 not verifiable here \(metadata\/layout\.conf requires signed commits\)$/m);
  });

  it('a repository that does not require signing: counted, not checked, no finding', async () => {
    const copy = path.join(work, 'not-required');
    await git(work, ['clone', '-q', repo, copy]);
    await writeFile(path.join(copy, 'metadata/layout.conf'), 'masters = gentoo\nthin-manifests = true\nsign-commits = false\n');
    await git(copy, ['commit', '-q', '-s', '-a', '--no-gpg-sign', '-m', 'metadata/layout.conf: signing not required']);
    const { report, signatureFindings } = await check(copy, gpg.env);
    assert.deepEqual(signatureFindings, []);
    assert.deepEqual(report.signatures, { required: false, commits: 5, signed: 3 });
  });
});
