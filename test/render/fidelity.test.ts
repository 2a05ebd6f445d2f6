import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { loadManifest, stackFor } from '../../src/stack-check/index.js';
import type { StackModel } from '../../src/model/resolve.js';
import { renderEbuild } from '../../src/render/index.js';
import { removeDir, shippedManifest, tempDir } from '../helpers/project.js';

/**
 * What a reviewer reading the shipped stack's ebuilds line by line finds,
 * each pinned by the generated text (the data says it, the code knows no
 * package).
 */
describe('the shipped stack as a reviewer reads it', function () {
  this.timeout(60_000);
  const models = new Map<string, StackModel>();
  const model = async (version: string): Promise<StackModel> => {
    let m = models.get(version);
    if (!m) models.set(version, (m = await stackFor(await loadManifest(shippedManifest), version)));
    return m;
  };
  const ebuild = async (atom: string, version: string): Promise<string> => {
    const m = await model(version);
    const c = m.byAtom.get(atom);
    assert.ok(c, `${atom} is not in ${version}`);
    return renderEbuild(c, m, { year: 2026 });
  };

  /** Runs an ebuild's src_prepare with real bash in `dir` (eclass calls stubbed). */
  const runPrepare = (text: string, dir: string) => {
    const prepare = /\nsrc_prepare\(\) \{\n([\s\S]*?)\n\}\n/.exec(text)?.[1] ?? '';
    const script = ['set -e', 'die() { echo "die: $*" >&2; exit 1; }', 'cmake_src_prepare() { :; }', 'use() { return 1; }', prepare].join('\n');
    execFileSync('bash', ['-c', script], { cwd: dir });
  };

  /** The atoms of `flag? ( … )` in an ebuild variable (the first group; no nesting). */
  const underFlag = (text: string, variable: string, flag: string): string[] => {
    const value = new RegExp(`\\n${variable}="([^"]*)"`).exec(text)?.[1] ?? '';
    const group = new RegExp(`(?:^|\\s)${flag}\\? \\(([^)]*)\\)`).exec(value)?.[1] ?? '';
    return group.split(/\s+/).filter(Boolean);
  };

  it('rocPRIM for LLVM 19 gives `.template` the argument list clang 19 requires; LLVM 18 releases are left alone', async () => {
    const header = 'rocprim/include/rocprim/device/detail/device_radix_sort.hpp';
    // The construct as clang 19 rejects it (-Wmissing-template-arg-list-after-template-kw).
    const before = '    helper().template sort_single(keys,\n                                  values);\n';
    const work = await tempDir('rocm-ebuild-rocprim-');
    try {
      for (const [version, after] of [
        ['6.3.3', '    helper().template sort_single<>(keys,\n                                  values);\n'],
        ['6.2.2', before],
      ] as const) {
        await mkdir(path.join(work, path.dirname(header)), { recursive: true });
        await writeFile(path.join(work, header), before);
        runPrepare(await ebuild('sci-libs/rocPRIM', version), work);
        assert.equal(await readFile(path.join(work, header), 'utf8'), after, version);
      }
    } finally {
      await removeDir(work);
    }
  });

  it('a package limited by many dependencies names them in a comment wrapped within 80 columns (hipfort 7.2.4)', async () => {
    const text = await ebuild('sci-libs/hipfort', '7.2.4');
    const lines = text.split('\n');
    const at = lines.findIndex((l) => l.startsWith('ROCM_SUPPORTED_TARGETS='));
    let first = at;
    while (first > 0 && lines[first - 1]!.startsWith('# ')) first--;
    const comment = lines.slice(first, at);
    assert.ok(comment.length > 1, text.slice(0, 600));
    for (const line of comment) assert.ok(line.length <= 80, line);
    assert.equal(
      comment.map((l) => l.slice(2)).join(' '),
      'sci-libs/hipBLAS, sci-libs/hipSOLVER, sci-libs/hipSPARSE, sci-libs/rocBLAS, sci-libs/rocSOLVER, sci-libs/rocSPARSE, needed whatever USE says, are built for these targets only',
    );
  });

  it('rocBLAS from 6.3 has GTest for benchmark-only builds: every client build finds it, and rocblas-bench links it', async () => {
    const v633 = await ebuild('sci-libs/rocBLAS', '6.3.3');
    for (const variable of ['RDEPEND', 'DEPEND']) assert.ok(underFlag(v633, variable, 'benchmark').includes('dev-cpp/gtest'), `6.3.3 ${variable}`);
    // 6.2.2 finds GTest in clients/gtest only.
    assert.ok(!underFlag(await ebuild('sci-libs/rocBLAS', '6.2.2'), 'RDEPEND', 'benchmark').includes('dev-cpp/gtest'));
  });

  it('rocm-validation-suite offers only the targets of hipBLASLt once it links it (6.3), and says why', async () => {
    const m = await model('6.3.3');
    const rvs = m.byAtom.get('dev-util/rocm-validation-suite')!;
    const hipblaslt = m.byAtom.get('sci-libs/hipBLASLt')!;
    assert.deepEqual([...rvs.targets].sort(), [...hipblaslt.targets].sort());
    const text = await ebuild('dev-util/rocm-validation-suite', '6.3.3');
    assert.match(text, /\n# sci-libs\/hipBLASLt, needed whatever USE says, is built for these targets only\nROCM_SUPPORTED_TARGETS=\( gfx908 gfx90a gfx940 gfx941 gfx942 gfx1100 gfx1101 \)\nROCM_VERSION=\$\{PV\}\n/);
    // 6.2.2 does not link hipBLASLt: every target of the release.
    assert.doesNotMatch(await ebuild('dev-util/rocm-validation-suite', '6.2.2'), /ROCM_SUPPORTED_TARGETS/);
  });

  it('the comment naming the libraries that limit the targets wraps at 80 columns (hipfort 7.2.0 names six)', async () => {
    const text = await ebuild('sci-libs/hipfort', '7.2.0');
    const comment = /\n((?:# .*\n)+)ROCM_SUPPORTED_TARGETS=\(/.exec(text)?.[1] ?? '';
    const lines = comment.trimEnd().split('\n');
    assert.ok(lines.length > 1, comment);
    for (const line of lines) assert.ok(line.length <= 80, line);
    assert.equal(
      lines.map((l) => l.slice(2)).join(' '),
      'sci-libs/hipBLAS, sci-libs/hipSOLVER, sci-libs/hipSPARSE, sci-libs/rocBLAS, sci-libs/rocSOLVER, sci-libs/rocSPARSE, needed whatever USE says, are built for these targets only',
    );
  });

  it('rocJPEG offers gfx908 and later only, as upstream requires', async () => {
    const m = await model('6.3.3');
    const offered = m.byAtom.get('media-libs/rocJPEG')!.targets;
    for (const old of ['gfx803', 'gfx900', 'gfx906']) assert.ok(!offered.includes(old), old);
    for (const t of ['gfx908', 'gfx90a', 'gfx942', 'gfx1030', 'gfx1100']) assert.ok(offered.includes(t), t);
  });

  it('rocBLAS and MIOpen 6.3 offer hipBLASLt as a flag, off by default, that requires one of its targets', async () => {
    for (const atom of ['sci-libs/rocBLAS', 'sci-libs/miopen']) {
      const text = await ebuild(atom, '6.3.3');
      assert.match(/^IUSE="(.*)"$/m.exec(text)![1]!, /(^| )hipblaslt( |$)/, atom);
      assert.match(text, /\n\thipblaslt\? \(\n\t\t\|\| \(\n\t\t\tamdgpu_targets_gfx908 amdgpu_targets_gfx90a /, atom);
      // Tied on the targets both offer only.
      assert.match(text, /\nRDEPEND="[^"]*\n\thipblaslt\? \([^"]*\tsci-libs\/hipBLASLt:\$\{SLOT\}\[amdgpu_targets_gfx908\(-\)\?,[^\]]*amdgpu_targets_gfx1101\(-\)\?\]\n/, atom);
      assert.match(text, /-D(BUILD_WITH_HIPBLASLT|MIOPEN_USE_HIPBLASLT)="\$\(usex hipblaslt ON OFF\)"/, atom);
      // Off by default, the flag leaves every target and the package sets alone.
      assert.ok((await model('6.3.3')).byAtom.get(atom)!.targets.includes('gfx1030'), atom);
    }
    assert.doesNotMatch(await ebuild('sci-libs/rocBLAS', '6.2.2'), /hipblaslt/);
  });

  it('hipBLAS-common, one header that includes nothing, depends on nothing of HIP, nor does its CMake package', async () => {
    const text = await ebuild('sci-libs/hipBLAS-common', '6.3.3');
    assert.doesNotMatch(text, /dev-util\/hip\b/);
    assert.match(text, /-DCMAKE_DISABLE_FIND_PACKAGE_hip=ON/);
    const work = await tempDir('rocm-ebuild-hipblas-common-');
    try {
      await mkdir(path.join(work, 'library'), { recursive: true });
      const cmake = 'rocm_export_targets(TARGETS roc::hipblas-common\n                      DEPENDS PACKAGE hip\n                      NAMESPACE roc::)\n';
      await writeFile(path.join(work, 'library', 'CMakeLists.txt'), cmake);
      runPrepare(text, work);
      assert.equal(await readFile(path.join(work, 'library', 'CMakeLists.txt'), 'utf8'), 'rocm_export_targets(TARGETS roc::hipblas-common\n                      NAMESPACE roc::)\n');
    } finally {
      await removeDir(work);
    }
  });

  it('hipBLASLt and hipSPARSELt run TensileLite from its tree: the virtualenv is created without pip and nothing is installed into it', async () => {
    const work = await tempDir('rocm-ebuild-tensilelite-');
    try {
      for (const [atom, call] of [
        ['sci-libs/hipBLASLt', 'virtualenv_install(${CMAKE_SOURCE_DIR}/tensilelite)'],
        ['sci-libs/hipSPARSELt', 'virtualenv_install(${Tensile_TEST_LOCAL_PATH})'],
      ] as const) {
        for (const version of ['6.2.2', '6.3.3']) {
          const text = await ebuild(atom, version);
          await mkdir(path.join(work, 'cmake'), { recursive: true });
          await writeFile(path.join(work, 'CMakeLists.txt'), `include(virtualenv)\n${call}\n`);
          await writeFile(path.join(work, 'cmake', 'virtualenv.cmake'), 'COMMAND ${VIRTUALENV_PYTHON_EXE} -m venv ${VIRTUALENV_HOME_DIR} --system-site-packages --clear\n');
          // Only the fix-ups about the virtualenv: the others need the real tree.
          const prepare = /\nsrc_prepare\(\) \{\n([\s\S]*?)\n\}\n/.exec(text)![1]!;
          const blocks = prepare.split(/\n(?=\t# )/).filter((b) => b.includes('virtualenv'));
          assert.equal(blocks.length, 2, `${atom}-${version}`);
          execFileSync('bash', ['-c', ['set -e', 'die() { exit 1; }', ...blocks].join('\n')], { cwd: work });
          assert.equal(await readFile(path.join(work, 'CMakeLists.txt'), 'utf8'), 'include(virtualenv)\nvirtualenv_create()\n', `${atom}-${version}`);
          assert.match(await readFile(path.join(work, 'cmake', 'virtualenv.cmake'), 'utf8'), /--clear --without-pip\n$/);
          assert.match(text, /\n\t+-DTensile_DIR="[^"]*\/tensilelite\/Tensile\/cmake"\n/);
          assert.match(/\nsrc_configure\(\) \{\n([\s\S]*?)\n\}\n/.exec(text)![1]!, /^\tlocal -x PYTHONPATH="[^"]*\/tensilelite"$/m);
        }
      }
    } finally {
      await removeDir(work);
    }
  });
});
