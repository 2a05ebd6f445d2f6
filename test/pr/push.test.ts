import { strict as assert } from 'node:assert';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { bareBin, commitAll, git, prCli, prFixture, sh, stub, workClone, type PrFixture } from './support.js';

/**
 * `pr push` against the fixture's bare "upstream" (gentoo/gentoo) and fork
 * (ada/gentoo) repositories, with real git pushes. gh cannot reach GitHub
 * from here: a stub on PATH records its arguments and standard input and
 * prints what `gh pr create` prints on success, the new pull request's URL.
 */

const PR_URL = 'https://github.com/gentoo/gentoo/pull/40123';

describe('pr push', function () {
  this.timeout(300_000);
  let f: PrFixture;
  let bare: string;
  let ghBin: string;
  let ghLog: string;

  before(async () => {
    f = await prFixture();
    bare = await bareBin(path.join(f.work, 'push-bare-bin'));
    ghBin = path.join(f.work, 'gh-bin');
    ghLog = path.join(f.work, 'gh.log');
    await stub(ghBin, 'gh', `printf '%s\\0' "$@" > "$GH_LOG"\ncat > "$GH_LOG.stdin"\necho "${PR_URL}"`);
  });

  const withGh = () => ({ PATH: `${ghBin}:${bare}`, GH_LOG: ghLog });
  const forkHead = async (branch: string) => (await sh(f.fork, 'git', ['rev-parse', '-q', '--verify', `refs/heads/${branch}`], { home: f.home })).stdout.trim();
  const config = async (dir: string) => [await git(dir, ['config', '--local', '--list'], f.home), await readFile(path.join(f.home, '.gitconfig'), 'utf8')];

  it('pushes the branch to the fork and opens the pull request with gh, the body on standard input', async () => {
    const dir = await workClone(f, 'push-gh');
    const before = await config(dir);
    const r = await prCli(f, ['push', '--overlay', dir, '--remote', 'fork', '--draft'], { env: withGh() });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^pushed rocm-6\.2\.2 to fork$/m);
    assert.match(r.stdout, new RegExp(`^pull request: ${PR_URL}$`, 'm'));
    assert.equal(await forkHead('rocm-6.2.2'), f.tip);
    const args = (await readFile(ghLog, 'utf8')).split('\0').slice(0, -1);
    assert.deepEqual(args, ['pr', 'create', '--repo=gentoo/gentoo', '--base=master', '--head=ada:rocm-6.2.2', '--title=ROCm 6.2.2', '--body-file=-', '--draft']);
    const body = await prCli(f, ['body', '--overlay', dir], { env: { PATH: bare } });
    assert.equal(await readFile(`${ghLog}.stdin`, 'utf8'), body.stdout);
    // Nothing configured, no upstream set, no credentials stored.
    assert.deepEqual(await config(dir), before);
    assert.ok(!existsSync(path.join(f.home, '.git-credentials')));
    assert.ok(!existsSync(path.join(f.home, '.config', 'gh')));
  });

  it('--dry-run prints the exact commands and the text, and runs nothing', async () => {
    const dir = await workClone(f, 'push-dry');
    await git(dir, ['remote', 'set-url', 'fork', 'https://ada:s3cret-token@github.com/ada/gentoo.git'], f.home);
    const r = await prCli(f, ['push', '--overlay', dir, '--remote', 'fork', '--branch', 'rocm-dry', '--dry-run'], { env: withGh() });
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.split('\n');
    assert.equal(lines[1], 'git push -- fork HEAD:refs/heads/rocm-dry');
    assert.equal(lines[2], "gh pr create --repo=gentoo/gentoo --base=master --head=ada:rocm-dry '--title=ROCm 6.2.2' --body-file=-  # the text below on standard input");
    assert.match(r.stdout, /\ntitle: ROCm 6\.2\.2\n\nROCm 6\.2\.2: this pull request adds 49 new packages/);
    assert.equal(await forkHead('rocm-dry'), '');
    await writeFile(ghLog, '');
    assert.equal(await readFile(ghLog, 'utf8'), '');
    assert.ok(!`${r.stdout}${r.stderr}`.includes('s3cret'), 'a token from the remote URL was printed');
    const json = await prCli(f, ['push', '--overlay', dir, '--remote', 'fork', '--branch', 'rocm-dry', '--range', 'HEAD~1', '--dry-run', '--json'], { env: withGh() });
    const out = JSON.parse(json.stdout) as { commands: string[][]; pushed: boolean };
    assert.deepEqual(out.commands[0], ['git', 'push', '--', 'fork', 'HEAD:refs/heads/rocm-dry']);
    assert.equal(out.pushed, false);
    assert.ok(!json.stdout.includes('s3cret'));
  });

  it('pushes the record of what bump generated along with the branch, and --dry-run shows it', async () => {
    const dir = await workClone(f, 'push-record');
    const record = 'refs/rocm-ebuild-generated';
    await git(dir, ['fetch', '-q', f.overlay, `${record}:${record}`], f.home);
    const tip = (await git(dir, ['rev-parse', record], f.home)).trim();
    const dry = await prCli(f, ['push', '--overlay', dir, '--remote', 'fork', '--branch', 'rocm-record', '--range', 'HEAD~1', '--dry-run'], { env: { PATH: bare } });
    assert.equal(dry.code, 0, dry.stderr);
    assert.equal(dry.stdout.split('\n')[1], `git push -- fork HEAD:refs/heads/rocm-record ${record}:refs/meta/rocm-ebuild-generated`);
    const r = await prCli(f, ['push', '--overlay', dir, '--remote', 'fork', '--branch', 'rocm-record', '--range', 'HEAD~1'], { env: { PATH: bare } });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(await forkHead('rocm-record'), f.tip);
    assert.equal((await sh(f.fork, 'git', ['rev-parse', '-q', '--verify', 'refs/meta/rocm-ebuild-generated'], { home: f.home })).stdout.trim(), tip);
  });

  it('without gh, pushes and prints the URL to open and the text to paste', async () => {
    const dir = await workClone(f, 'push-nogh');
    const r = await prCli(f, ['push', '--overlay', dir, '--remote', 'fork', '--branch', 'rocm-nogh', '--range', 'HEAD~1'], { env: { PATH: bare } });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(await forkHead('rocm-nogh'), f.tip);
    assert.match(r.stderr, /gh \(GitHub CLI\) is not installed/);
    assert.match(r.stdout, /^open https:\/\/github\.com\/gentoo\/gentoo\/compare\/master\.\.\.ada:rocm-nogh\?expand=1$/m);
    assert.match(r.stdout, /^title: sci-libs\/rocAL: new package, add 6\.2\.2$/m);
    assert.match(r.stdout, /^\| `sci-libs\/rocAL` \| 6\.2\.2 \|/m);
  });

  it('refuses to push when pr check finds an error (exit 6); --force pushes and still prints it', async () => {
    const dir = await workClone(f, 'push-refused');
    await writeFile(path.join(dir, 'README.md'), 'changed\n');
    await commitAll(dir, f.home, 'README.md: unsigned\n');
    const r = await prCli(f, ['push', '--overlay', dir, '--remote', 'fork', '--branch', 'rocm-refused', '--range', f.tip], { env: withGh() });
    assert.equal(r.code, 6);
    assert.match(r.stderr, /pr check found 1 error; nothing was pushed:\n {2}commit [0-9a-f]{12}: MissingSignOff: missing sign-off: Ada Tester <ada@example\.org> \[error, [0-9a-f]{12}\]\n {2}hint: fix the commits/);
    assert.equal(await forkHead('rocm-refused'), '');
    const forced = await prCli(f, ['push', '--overlay', dir, '--remote', 'fork', '--branch', 'rocm-refused', '--range', f.tip, '--force'], { env: withGh() });
    assert.equal(forced.code, 0, forced.stderr);
    assert.match(forced.stderr, /MissingSignOff: missing sign-off/);
    assert.match(forced.stderr, /pushing despite 1 error from pr check \(--force\)/);
    assert.equal(await forkHead('rocm-refused'), (await git(dir, ['rev-parse', 'HEAD'], f.home)).trim());
  });

  it('refuses an unknown remote, an invalid branch name and an empty range (exit 2)', async () => {
    const dir = await workClone(f, 'push-invalid');
    const unknown = await prCli(f, ['push', '--overlay', dir, '--remote', 'nosuch', '--range', 'HEAD~1'], { env: withGh() });
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /no remote "nosuch"[^]*hint: remotes: fork, origin/);
    const badName = await prCli(f, ['push', '--overlay', dir, '--remote', 'fork', '--branch', 'x..y', '--range', 'HEAD~1'], { env: withGh() });
    assert.equal(badName.code, 2);
    assert.match(badName.stderr, /"x\.\.y" is not a valid branch name/);
    const empty = await prCli(f, ['push', '--overlay', dir, '--remote', 'fork', '--range', 'HEAD..HEAD'], { env: withGh() });
    assert.equal(empty.code, 2);
  });

  it('a remote name that reads as an option never reaches git push as one, from --remote or from the config', async () => {
    const dir = await workClone(f, 'push-hostile-remote');
    const marker = path.join(f.work, 'receive-pack-ran');
    // Every git the command runs, recorded: the argv it really builds, not what it says it would.
    const wrapped = path.join(f.work, 'git-recorder');
    const log = path.join(f.work, 'git-argv.log');
    await stub(wrapped, 'git', `[ "$1" = push ] && printf '%s\\0' "$@" >> '${log}'\nexec '${(await sh(f.work, 'sh', ['-c', 'command -v git'])).stdout.trim()}' "$@"`);
    // ssh stands in for the host git would contact: it must never be started.
    const ssh = await stub(path.join(f.work, 'ssh-bin'), 'ssh', `'${(await sh(f.work, 'sh', ['-c', 'command -v touch'])).stdout.trim()}' '${marker}'`);
    const env = { PATH: `${wrapped}:${ghBin}:${bare}`, GH_LOG: ghLog, GIT_SSH_COMMAND: ssh };
    const hostile = `--receive-pack=touch ${marker}`;
    await git(dir, ['config', `remote.${hostile}.url`, 'https://github.com/ada/gentoo.git'], f.home);
    await git(dir, ['config', 'branch.rocm-6.2.2.pushRemote', hostile], f.home);
    const fromConfig = await prCli(f, ['push', '--overlay', dir, '--range', 'HEAD~1'], { env });
    assert.equal(fromConfig.code, 2, fromConfig.stderr);
    assert.match(fromConfig.stderr, /"--receive-pack=touch \S+" \(the push remote git's config names for rocm-6\.2\.2\) is not a valid remote name/);
    const fromFlag = await prCli(f, ['push', '--overlay', dir, `--remote=${hostile}`, '--range', 'HEAD~1'], { env });
    assert.equal(fromFlag.code, 2, fromFlag.stderr);
    assert.match(fromFlag.stderr, /is not a valid remote name/);
    // A configured remote whose name starts with "-" and is otherwise valid: pushed to as a remote, after --.
    await git(dir, ['config', 'remote.-fork.url', 'https://github.com/ada/gentoo.git'], f.home);
    const dashed = await prCli(f, ['push', '--overlay', dir, '--remote=-fork', '--branch', 'rocm-dashed', '--range', 'HEAD~1'], { env });
    assert.equal(dashed.code, 0, dashed.stderr);
    assert.equal(await forkHead('rocm-dashed'), f.tip);
    const pushes = (await readFile(log, 'utf8')).split('\0').slice(0, -1);
    assert.deepEqual(pushes, ['push', '--', '-fork', 'HEAD:refs/heads/rocm-dashed']);
    const gh = (await readFile(ghLog, 'utf8')).split('\0').slice(0, -1);
    assert.ok(gh.slice(2).every((a) => a.startsWith('--') && (a === '--draft' || a.includes('='))), `gh got a value as a word of its own: ${JSON.stringify(gh)}`);
    assert.ok(!existsSync(marker), 'a command from the remote name ran');
    const badBranch = await prCli(f, ['push', '--overlay', dir, '--remote', 'fork', '--branch=--force', '--range', 'HEAD~1'], { env });
    assert.equal(badBranch.code, 2);
    const badBase = await prCli(f, ['push', '--overlay', dir, '--remote', 'fork', '--base=--web', '--range', 'HEAD~1', '--dry-run'], { env });
    assert.equal(badBase.code, 2);
    assert.match(badBase.stderr, /--base "--web" is not a valid branch name/);
  });

  it("a remote's refusal is shown as text: escape sequences from its messages do not reach the terminal", async () => {
    const dir = await workClone(f, 'push-hostile-server');
    const server = path.join(f.work, 'hostile-server.git');
    await git(f.work, ['init', '-q', '--bare', server], f.home);
    await writeFile(path.join(server, 'hooks', 'pre-receive'), "#!/bin/sh\nprintf 'denied \\033]0;pwned\\007\\033[2J\\n' >&2\nexit 1\n", { mode: 0o755 });
    await git(dir, ['remote', 'add', 'hostile', server], f.home);
    const r = await prCli(f, ['push', '--overlay', dir, '--remote', 'hostile', '--range', 'HEAD~1', '--force'], { env: withGh() });
    assert.equal(r.code, 5, r.stderr);
    assert.match(r.stderr, /denied \\x1b\]0;pwned\\x07\\x1b\[2J/);
    assert.doesNotMatch(r.stderr, /[\x07\x1b]/);
  });

  it('reports a failed push (exit 5) without the credentials of the remote URL', async () => {
    const dir = await workClone(f, 'push-fails');
    // Nothing listens on port 1: the push fails at once, as a cut connection would.
    await git(dir, ['remote', 'add', 'broken', 'https://ada:s3cret-token@127.0.0.1:1/ada/gentoo.git'], f.home);
    const r = await prCli(f, ['push', '--overlay', dir, '--remote', 'broken', '--range', 'HEAD~1'], { env: withGh() });
    assert.equal(r.code, 5, r.stderr);
    assert.match(r.stderr, /git push failed \(exit 128\)/);
    assert.ok(!r.stderr.includes('s3cret'), r.stderr);
  });
});
