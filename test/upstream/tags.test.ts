import { strict as assert } from 'node:assert';
import path from 'node:path';
import { git, removeDir, runCli, tempDir } from '../helpers/project.js';
import { classifyTag, tagMatcher } from '../../src/upstream/releases/tags.js';
import { repositoryUrl } from '../../src/upstream/trees/locations.js';
import { bareRepo, fixtures, stackCopy } from './support.js';
import { GitHttpServer } from './git-http.js';
import { gitEnv } from '../../src/upstream/trees/exec.js';

interface TagsJson {
  known: string[];
  missing: { version: string; stream: string; tag: string; repositories: number; total: number; lacking: string[]; olderThanKnown: boolean }[];
  hiddenOlder: number;
  therock: { version: string; repositories: string[] }[];
  unreachable: { repo: string; error: string }[];
  repositories: { repo: string; releases: string[]; other: number }[];
}

describe('upstream tags', function () {
  this.timeout(120_000);
  let dir: string;
  let stack: string;
  let env: NodeJS.ProcessEnv;

  it('talks to remotes with no prompt and none of the variables that relocate a repository', () => {
    const saved = { ...process.env };
    try {
      // As when rocm-ebuild runs from a git hook of a worktree.
      Object.assign(process.env, { GIT_DIR: '/x/.git', GIT_COMMON_DIR: '/x/.git', GIT_INDEX_FILE: '/x/i', GIT_ALTERNATE_OBJECT_DIRECTORIES: '/x/o', GIT_QUARANTINE_PATH: '/x/q' });
      const env = gitEnv();
      assert.deepEqual(Object.keys(env).filter((k) => /^GIT_(DIR|COMMON_DIR|INDEX_FILE|ALTERNATE_OBJECT_DIRECTORIES|QUARANTINE_PATH)$/.test(k)), []);
      assert.equal(env.GIT_TERMINAL_PROMPT, '0');
    } finally {
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    }
  });

  before(async () => {
    dir = await tempDir('rocm-ebuild-tags-');
    env = { XDG_CACHE_HOME: path.join(dir, 'cache') };
    stack = stackCopy();
    const small = (repo: string, tag: string) => path.join(fixtures, 'trees', 'small', repo, tag);
    // gpulib: releases out of order as text, a TheRock tag, a pre-release and other names.
    await bareRepo(
      path.join(dir, 'git', 'ROCm', 'gpulib'),
      [
        { tag: 'rocm-6.2.2', tree: path.join(fixtures, 'trees', 'gpulib-6.2.2') },
        { tag: 'rocm-6.3.3', tree: path.join(fixtures, 'trees', 'gpulib-6.3.3') },
      ],
      ['rocm-6.10.0', 'rocm-6.3.0', 'rocm-6.1.0', 'therock-7.9', 'therock-7.10', 'rocm-6.4.0-rc1', 'v1.0.0'],
    );
    await bareRepo(path.join(dir, 'git', 'ROCm', 'runtime'), [{ tag: 'rocm-6.2.2', tree: small('runtime', 'rocm-6.2.2') }, { tag: 'rocm-6.3.3', tree: small('runtime', 'rocm-6.3.3') }], ['rocm-6.3.0']);
    await bareRepo(path.join(dir, 'git', 'ROCm', 'thunk'), [{ tag: 'rocm-6.2.2', tree: small('thunk', 'rocm-6.2.2') }]);
    // ROCm/gpulib-data is missing on purpose: one unreachable repository.
  });
  after(() => removeDir(dir));

  it('reads release versions from the stack tag scheme, TheRock tags apart', () => {
    const m = tagMatcher('rocm-${PV}');
    assert.deepEqual(classifyTag('rocm-6.3.3', m), { kind: 'release', version: '6.3.3' });
    assert.deepEqual(classifyTag('rocm-6.4', m), { kind: 'release', version: '6.4' });
    assert.deepEqual(classifyTag('therock-7.9', m), { kind: 'therock', version: '7.9.0' });
    assert.deepEqual(classifyTag('therock-10.0.1', m), { kind: 'therock', version: '10.0.1' });
    assert.deepEqual(classifyTag('rocm-6.4.0-rc1', m), { kind: 'other' });
    assert.deepEqual(classifyTag('xrocm-6.3.3', m), { kind: 'other' });
    assert.deepEqual(classifyTag('v2.1.0', tagMatcher('v${PV}')), { kind: 'release', version: '2.1.0' });
  });

  it('places repositories under a base URL or a template', () => {
    assert.equal(repositoryUrl('ROCm/rocBLAS'), 'https://github.com/ROCm/rocBLAS');
    assert.equal(repositoryUrl('ROCm/rocBLAS', 'file:///srv/git/'), 'file:///srv/git/ROCm/rocBLAS');
    assert.equal(repositoryUrl('ROCm/rocBLAS', '/work/.mirror/{owner}+{repo}/repo'), '/work/.mirror/ROCm+rocBLAS/repo');
  });

  it('lists the releases the manifest lacks, sorted as Portage sorts, and reports the unreachable repository (exit 5)', async () => {
    const r = await runCli(['upstream', 'tags', '--manifest', stack, '--base-url', `file://${path.join(dir, 'git')}`], { env });
    assert.equal(r.code, 5, r.stderr);
    assert.match(r.stdout, /^The manifest knows 6\.2\.2\.$/m);
    const rows = r.stdout.split('\n').filter((l) => /^ {2}6\./.test(l)).map((l) => l.trim().split(/\s+/).slice(0, 2).join(' '));
    assert.deepEqual(rows, ['6.3.0 2/3', '6.3.3 2/3', '6.10.0 1/3']);
    assert.match(r.stdout, /6\.3\.3 +2\/3 +not in ROCm\/thunk$/m);
    assert.match(r.stdout, /\(1 older release not shown: --all lists them\)/);
    // Both streams in one list, as Portage orders them: 6.10.0 < 7.9.0 < 7.10.0.
    const all = r.stdout.split('\n').filter((l) => /^ {2}\d/.test(l)).map((l) => l.trim().split(/\s+/)[0]);
    assert.deepEqual(all, ['6.3.0', '6.3.3', '6.10.0', '7.9.0', '7.10.0']);
    assert.match(r.stdout, /^ {2}7\.10\.0 +1\/3 .*\(TheRock therock-7\.10\)$/m);
    // Under each release, the commit its tag points at in each repository that has it (an annotated tag peeled).
    const commitOf = async (repo: string, tag: string) => (await git(path.join(dir, 'git', 'ROCm', repo), ['rev-parse', `${tag}^{commit}`])).trim();
    assert.match(r.stdout, new RegExp(`^ {2}6\\.3\\.3 .*\\n {4}ROCm/gpulib rocm-6\\.3\\.3 ${await commitOf('gpulib', 'rocm-6.3.3')}\\n {4}ROCm/runtime rocm-6\\.3\\.3 ${await commitOf('runtime', 'rocm-6.3.3')}$`, 'm'));
    assert.match(r.stdout, new RegExp(`^ {4}ROCm/gpulib therock-7\\.10 ${await commitOf('gpulib', 'therock-7.10')}$`, 'm'));
    assert.match(r.stdout, /^unreachable: ROCm\/gpulib-data \(file:\/\/.*\/ROCm\/gpulib-data\): fatal: .*$/m);
    // Progress lines go to stderr when it is not a terminal; stdout stays the report.
    assert.match(r.stderr, /^\[\d\/4\] git ls-remote /m);
  });

  it('with no repository answering says nothing could be asked, one line per cause with what to do (exit 5)', async () => {
    const r = await runCli(['upstream', 'tags', '--manifest', stack, '--base-url', `file://${path.join(dir, 'nowhere')}`], { env });
    assert.equal(r.code, 5, r.stderr);
    assert.doesNotMatch(r.stdout, /no release the manifest lacks/);
    assert.match(r.stdout, /^No repository could be asked \(none of 4 answered\): nothing is known of upstream's releases\.$/m);
    const lines = r.stdout.split('\n').filter((l) => l.startsWith('unreachable: '));
    assert.equal(lines.length, 1, r.stdout);
    assert.match(lines[0]!, /^unreachable: 4 repositories \(ROCm\/gpulib, ROCm\/gpulib-data, ROCm\/runtime, ROCm\/thunk\): /);
    assert.match(r.stdout, /^ {2}what to do: .*--base-url/m);
  });

  it('--json keeps exit 5 and gives every repository; --all lists older releases; COMPONENT narrows', async () => {
    const r = await runCli(['upstream', 'tags', 'gpulib', 'runtime', '--all', '--json', '--manifest', stack, '--base-url', `file://${path.join(dir, 'git')}`], { env });
    const j = JSON.parse(r.stdout) as TagsJson;
    assert.equal(r.code, 5);
    assert.equal(r.stderr, '');
    assert.deepEqual(j.known, ['6.2.2']);
    assert.deepEqual(j.missing.map((m) => [m.version, m.stream, m.tag, m.repositories, m.olderThanKnown]), [
      ['6.1.0', 'legacy', 'rocm-6.1.0', 1, true],
      ['6.3.0', 'legacy', 'rocm-6.3.0', 2, false],
      ['6.3.3', 'legacy', 'rocm-6.3.3', 2, false],
      ['6.10.0', 'legacy', 'rocm-6.10.0', 1, false],
      ['7.9.0', 'therock', 'therock-7.9', 1, false],
      ['7.10.0', 'therock', 'therock-7.10', 1, false],
    ]);
    assert.equal(j.hiddenOlder, 0);
    assert.deepEqual(j.unreachable.map((u) => u.repo), ['ROCm/gpulib-data']);
    const gpulib = j.repositories.find((x) => x.repo === 'ROCm/gpulib')!;
    assert.deepEqual(gpulib.releases, ['6.1.0', '6.2.2', '6.3.0', '6.3.3', '6.10.0']);
    assert.equal(gpulib.other, 2); // rocm-6.4.0-rc1 and v1.0.0
  });

  it('asks over git smart HTTP like GitHub, and an HTTP error is one unreachable repository', async () => {
    const server = await new GitHttpServer(path.join(dir, 'git')).start();
    try {
      server.fail.add('/ROCm/thunk');
      const r = await runCli(['upstream', 'tags', 'gpulib', 'thunk', '--json', '--manifest', stack, '--base-url', server.url], { env });
      const j = JSON.parse(r.stdout) as TagsJson;
      assert.equal(r.code, 5);
      assert.deepEqual(j.missing.map((m) => m.version), ['6.3.0', '6.3.3', '6.10.0', '7.9.0', '7.10.0']);
      assert.deepEqual(j.unreachable.map((u) => u.repo), ['ROCm/gpulib-data', 'ROCm/thunk']);
      assert.match(j.unreachable[1]!.error, /500/);
      assert.ok(server.requests.some((q) => q.startsWith('GET /ROCm/gpulib/info/refs?service=git-upload-pack')), server.requests.join('\n'));
    } finally {
      await server.close();
    }
  });

  it('an unknown component is an input error naming the nearest one (exit 2)', async () => {
    const r = await runCli(['upstream', 'tags', 'gpulb', '--manifest', stack], { env });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /no component gpulb in .*; did you mean gpulib\?/);
  });
});
