import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { removeDir, runCli, tempDir } from '../helpers/project.js';
import { ArchiveTree } from '../../src/upstream/trees/archive-tree.js';
import { GitTree, gitTreeAt, isRefName } from '../../src/upstream/trees/git-tree.js';
import { hasPath, TreeError } from '../../src/upstream/trees/source-tree.js';
import { universe, type Universe } from './support.js';
import { Deadline } from '../../src/util/deadline.js';
import { commitTree, repoWithCommit } from './therock-fixture.js';

describe('upstream source trees', function () {
  this.timeout(120_000);
  let u: Universe;
  let dir: string;

  before(async () => {
    u = await universe();
    dir = await tempDir('rocm-ebuild-trees-');
  });
  after(() => removeDir(dir));

  async function tarball(name: string, files: Record<string, string>, links: Record<string, string> = {}): Promise<string> {
    const src = path.join(dir, `src-${name}`);
    for (const [rel, text] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(src, rel)), { recursive: true });
      await writeFile(path.join(src, rel), text);
    }
    for (const [rel, target] of Object.entries(links)) {
      await mkdir(path.dirname(path.join(src, rel)), { recursive: true });
      await symlink(target, path.join(src, rel));
    }
    const out = path.join(dir, `${name}.tar.gz`);
    const top = (await readdir(src))[0]!;
    const r = spawnSync('tar', ['-czf', out, '-C', src, top]);
    assert.equal(r.status, 0, r.stderr.toString());
    return out;
  }

  it('reads a tarball below its top directory and a subdirectory, extracting only what is asked', async () => {
    const t = await tarball('proj', {
      'proj-rocm-6.3.3/CMakeLists.txt': 'project(p)\n',
      'proj-rocm-6.3.3/amd/comgr/CMakeLists.txt': 'project(comgr)\n',
      'proj-rocm-6.3.3/amd/comgr/src/a.c': 'int a;\n',
    });
    const cache = path.join(dir, 'cache');
    const root = await ArchiveTree.open(t, 'proj.tar.gz', cache);
    assert.deepEqual(await root.files(), ['CMakeLists.txt', 'amd/comgr/CMakeLists.txt', 'amd/comgr/src/a.c']);
    const sub = await ArchiveTree.open(t, 'proj.tar.gz', cache, 'amd/comgr');
    assert.equal(sub.label, 'proj.tar.gz:amd/comgr');
    const read = await sub.read(['CMakeLists.txt', 'src/a.c', 'missing.txt', '../CMakeLists.txt']);
    assert.deepEqual([...read.entries()].map(([k, v]) => [k, v.toString()]), [
      ['CMakeLists.txt', 'project(comgr)\n'],
      ['src/a.c', 'int a;\n'],
    ]);
    // The listing is cached; the scratch directory is cleaned up.
    assert.equal((await readdir(path.join(cache, 'listings'))).length, 1);
    assert.deepEqual(await readdir(path.join(cache, 'tmp')), []);
    await assert.rejects(ArchiveTree.open(t, 'proj.tar.gz', cache, 'amd/nothere'), (e: unknown) => e instanceof TreeError && e.kind === 'missing');
  });

  it('never follows a symlink out of a hostile tarball: the link text is the content, as in git', async () => {
    const t = await tarball('evil', { 'evil-1/README': 'x\n' }, { 'evil-1/CMakeLists.txt': '/etc/passwd', 'evil-1/cmake/escape.cmake': '../../../../../../etc/hostname' });
    const tree = await ArchiveTree.open(t, 'evil.tar.gz', path.join(dir, 'cache'));
    const read = await tree.read(['CMakeLists.txt', 'cmake/escape.cmake']);
    assert.equal(read.get('CMakeLists.txt')!.toString(), '/etc/passwd');
    assert.equal(read.get('cmake/escape.cmake')!.toString(), '../../../../../../etc/hostname');
  });

  it('reads tags of a git repository, and says which tag or directory is missing', async () => {
    const gitDir = path.join(u.dir, 'git', 'ROCm', 'runtime');
    const tree = await GitTree.open(gitDir, 'rocm-6.3.3', 'ROCm/runtime rocm-6.3.3', 'libthunk');
    assert.deepEqual(await tree.files(), ['CMakeLists.txt', 'include/thunk.h', 'src/events.c', 'src/fmm.c', 'src/queues.c']);
    assert.equal(hasPath(await tree.files(), 'src'), 'dir');
    assert.equal(hasPath(await tree.files(), 'src/fmm.c'), 'file');
    assert.equal(hasPath(await tree.files(), 'sr'), undefined);
    const read = await tree.read(['include/thunk.h', 'src', 'nope']);
    assert.deepEqual([...read.keys()], ['include/thunk.h']); // a directory is not a file
    await assert.rejects(GitTree.open(gitDir, 'rocm-9.9.9', 'ROCm/runtime rocm-9.9.9'), /no tag rocm-9\.9\.9 in ROCm\/runtime/);
    await assert.rejects(GitTree.open(gitDir, 'rocm-6.2.2', 'ROCm/runtime rocm-6.2.2', 'libthunk'), /has no directory libthunk/);
    // A tag name that looks like an option is only ever a ref name.
    await assert.rejects(GitTree.open(gitDir, '--output=/tmp/x', 'x'), (e: unknown) => e instanceof TreeError && e.kind === 'missing');
    await assert.rejects(gitTreeAt(path.join(dir, 'no-repo'), 'rocm-6.3.3', 'ROCm/none rocm-6.3.3', { cacheDir: dir, deadline: new Deadline(undefined, 10_000) }), (e: unknown) => e instanceof TreeError && e.kind === 'unreachable');
  });

  it('reads a branch only when asked to (a tag of the same name wins), with its commit, gitlinks, sizes and a file as configuration', async () => {
    const gitDir = path.join(dir, 'branches.git');
    const scratch = path.join(dir, 'scratch');
    await mkdir(scratch, { recursive: true });
    const pinned = await repoWithCommit(path.join(dir, 'pinned.git'), { 'a.txt': 'a\n' }, scratch);
    const tagged = await commitTree(gitDir, { 'v.txt': 'tag\n', '.gitmodules': '[submodule "p"]\n\tpath = sub\n\turl = https://example.org/p.git\n' }, { sub: pinned }, scratch, { tag: 'release/x' });
    const branched = await commitTree(gitDir, { 'v.txt': 'branch\n' }, {}, scratch, { branch: 'release/x', parent: tagged });
    await commitTree(gitDir, { 'v.txt': 'only a branch\n' }, {}, scratch, { branch: 'release/y', parent: branched });
    // Tags only, as every legacy caller asks: a branch is not a release.
    await assert.rejects(GitTree.open(gitDir, 'release/y', 'r release/y'), /no tag release\/y in r/);
    const y = await GitTree.open(gitDir, 'release/y', 'r release/y', undefined, undefined, 'tags-or-branches');
    assert.equal(y.ref, 'refs/heads/release/y');
    assert.equal((await y.read(['v.txt'])).get('v.txt')!.toString(), 'only a branch\n');
    const x = await GitTree.open(gitDir, 'release/x', 'r release/x', undefined, undefined, 'tags-or-branches');
    assert.equal(x.ref, 'refs/tags/release/x');
    assert.equal(await x.commit(), tagged);
    // A gitlink is listed as before, never read as a blob; its commit is what gitlinks() gives.
    assert.deepEqual(await x.files(), ['.gitmodules', 'sub', 'v.txt']);
    assert.deepEqual([...(await x.gitlinks())], [['sub', pinned]]);
    assert.deepEqual([...(await x.read(['sub', 'v.txt'])).keys()], ['v.txt']);
    assert.deepEqual([...(await x.sizes(['v.txt', 'sub', 'nope']))], [['v.txt', 4]]);
    assert.deepEqual(await x.configOf('.gitmodules'), { entries: [['submodule.p.path', 'sub'], ['submodule.p.url', 'https://example.org/p.git']] });
    assert.ok('error' in (await x.configOf('sub')));
    await assert.rejects(GitTree.open(gitDir, 'release/z', 'r release/z', undefined, undefined, 'tags-or-branches'), /no tag or branch release\/z in r/);
    for (const bad of ['-x', '--upload-pack=x', 'a..b', 'a b', 'a:b', 'a~1', 'x.lock', '.hidden', 'a//b', 'a/', '@', 'a@{1}', 'a\x01']) assert.equal(isRefName(bad), false, bad);
    for (const good of ['rocm-6.3.3', 'therock-7.14', 'release/therock-10.0', 'v1.2']) assert.equal(isRefName(good), true, good);
  });

  it('every upstream command has --help with examples, and --json', async () => {
    for (const cmd of ['tags', 'projects', 'diff', 'patches', 'therock', 'evidence']) {
      const r = await runCli(['upstream', cmd, '--help']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`^USAGE\\n {2}\\$ rocm-ebuild upstream ${cmd}`, 'm'));
      assert.match(r.stdout, /^EXAMPLES\n/m);
      assert.match(r.stdout, /--json\s+Format output as json\./);
      assert.match(r.stdout, /Exit codes: 0 /);
    }
  });
});
