import { strict as assert } from 'node:assert';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { loadManifest } from '../../src/stack-check/index.js';
import { releaseModel, resolveStack, type StackModel } from '../../src/model/resolve.js';
import { loadPolicies } from '../../src/model/targets.js';
import { lintComponent } from '../../src/lint/component.js';
import { renderEbuild } from '../../src/render/index.js';
import { FIXER } from '../helpers/fixer-component.js';
import { fixtureManifest } from '../helpers/fixture-manifest.js';
import { removeDir, runCli, tempDir } from '../helpers/project.js';

describe('source fix-ups and fetched patches (fixture stack, real bash)', function () {
  this.timeout(120_000);
  let dir: string;
  let model622: StackModel;
  let model630: StackModel;

  before(async () => {
    dir = await fixtureManifest({ 'components/fixer.yaml': FIXER });
    const manifest = await loadManifest(dir);
    const policies = await loadPolicies(manifest);
    if ('issues' in policies) throw new Error(JSON.stringify(policies.issues));
    model622 = resolveStack(manifest, releaseModel(manifest, '6.2.2', policies.byRelease.get('6.2.2')!)!);
    model630 = resolveStack(manifest, releaseModel(manifest, '6.3.0', policies.byRelease.get('6.3.0')!)!);
  });
  after(() => removeDir(dir));

  const ebuild = (model: StackModel) => renderEbuild(model.byAtom.get('dev-libs/fixer')!, model, { year: 2026 });

  /** src_prepare's body run by real bash in `work`, with the ebuild's variables and cmake_src_prepare stubbed. */
  function runPrepare(text: string, work: string) {
    const body = /\nsrc_prepare\(\) \{\n([\s\S]*?)\n\}\n/.exec(text)![1]!;
    const script = ['set -e', 'die() { echo "die: $*" >&2; exit 1; }', 'cmake_src_prepare() { :; }', body].join('\n');
    return spawnSync('bash', ['-c', script], { cwd: work, encoding: 'utf8', env: { ...process.env, EPREFIX: '/ep', LLVM_SLOT: '19', PV: '6.3.0' } });
  }

  const CMAKE = [
    'cmake_minimum_required(VERSION 3.16)',
    'project(fixer)',
    'set(LLVM "${ROCM_PATH}/llvm")',
    'set(DOC "${CMAKE_INSTALL_PREFIX}/doc")',
    'add_compile_options(-O3)',
    '',
  ].join('\n');

  async function tree(files: Record<string, string>): Promise<string> {
    const work = await tempDir('rocm-ebuild-fixups-');
    for (const [name, text] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(work, name)), { recursive: true });
      await writeFile(path.join(work, name), text);
    }
    return work;
  }

  it('writes ${…} of CMake literally, expands the ebuild variables, inserts lines and changes only the first match', async () => {
    const work = await tree({ 'CMakeLists.txt': CMAKE, 'version.txt': '0.0\n0.0\n0.0\n' });
    try {
      const r = runPrepare(ebuild(model630), work);
      assert.equal(r.status, 0, r.stderr);
      assert.equal(
        await readFile(path.join(work, 'CMakeLists.txt'), 'utf8'),
        [
          'cmake_minimum_required(VERSION 3.16)',
          'project(fixer)',
          'include(GNUInstallDirs)',
          '\tset(FIXER_PREFIX "/ep/usr")',
          '',
          'set(FIXER_DATA "${CMAKE_INSTALL_DATADIR}/fixer" $ & | * ; # $(id))',
          'set(LLVM "${CMAKE_INSTALL_PREFIX}/lib/llvm/19")',
          'set(DOC "${CMAKE_INSTALL_PREFIX}/share/doc")',
          'add_compile_options()',
          '',
        ].join('\n'),
      );
      assert.equal(await readFile(path.join(work, 'version.txt'), 'utf8'), '6.3.0\n# version $Id$\n0.0\n0.0\n');
    } finally {
      await removeDir(work);
    }
  });

  it('dies on a missing file unless the fix-up says skip_missing', async () => {
    const work = await tree({ 'CMakeLists.txt': CMAKE });
    try {
      const r = runPrepare(ebuild(model630), work);
      assert.notEqual(r.status, 0);
      assert.match(r.stderr, /version\.txt/);
      assert.match(r.stderr, /^die: /m);
      // gone.cmake and absent.txt were skipped: the run got as far as version.txt.
      assert.doesNotMatch(r.stderr, /gone\.cmake|absent\.txt/);
    } finally {
      await removeDir(work);
    }
  });

  it('fetches the patch as a distfile and applies it through PATCHES from its first release on', () => {
    const before = ebuild(model622);
    const after = ebuild(model630);
    assert.doesNotMatch(before, /PATCHES|0123456/);
    assert.match(
      after,
      /\nSRC_URI="\n\thttps:\/\/github\.com\/ROCm\/fixer\/archive\/rocm-\$\{PV\}\.tar\.gz -> \$\{P\}\.tar\.gz\n\thttps:\/\/github\.com\/ROCm\/fixer\/commit\/0123456789abcdef0123456789abcdef01234567\.patch\n\t\t-> fixer-6\.3\.0-0123456\.patch\n"\n/,
    );
    assert.match(after, /\nPATCHES=\(\n\t# upstream's fix for building against a newer LLVM\n\t"\$\{DISTDIR\}\/fixer-6\.3\.0-0123456\.patch"\n\)\n/);
    // cmake_src_prepare applies PATCHES, then the fix-ups run.
    assert.match(after, /\nsrc_prepare\(\) \{\n\tcmake_src_prepare\n/);
    const c = model630.byAtom.get('dev-libs/fixer')!;
    assert.deepEqual(
      c.distfiles.map((d) => [d.name, d.urls]),
      [
        ['fixer-6.3.0.tar.gz', ['https://github.com/ROCm/fixer/archive/rocm-6.3.0.tar.gz']],
        ['fixer-6.3.0-0123456.patch', ['https://github.com/ROCm/fixer/commit/0123456789abcdef0123456789abcdef01234567.patch']],
      ],
    );
  });

  it('passes our checks, bash -n and shellcheck', async () => {
    for (const model of [model622, model630]) {
      const c = model.byAtom.get('dev-libs/fixer')!;
      const lint = await lintComponent(c, model, { tools: { shellcheck: true } });
      assert.deepEqual(lint.results.filter((r) => r.level !== 'info').map((r) => `${r.keyword}: ${r.message}`), [], c.atom);
      assert.deepEqual(lint.tools, [], c.atom);
      execFileSync('bash', ['-n'], { input: ebuild(model) });
    }
  });

  it('validates', async () => {
    const r = await runCli(['validate', dir]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
  });
});
