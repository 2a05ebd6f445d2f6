import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { loadManifest } from '../../src/stack-check/index.js';
import { releaseModel, resolveStack, type StackModel } from '../../src/model/resolve.js';
import { loadPolicies } from '../../src/model/targets.js';
import { lintComponent } from '../../src/lint/component.js';
import { renderEbuild } from '../../src/render/index.js';
import { sedReplace, wrapUseExpression } from '../../src/render/context.js';
import { BASE_FILES, fixtureManifest } from '../helpers/fixture-manifest.js';
import { removeDir, tempDir } from '../helpers/project.js';

const TOOLKIT = `name: toolkit
atom: dev-util/toolkit
description: Compiler-facing tool built against vanilla LLVM and Python
homepage: https://github.com/ROCm/toolkit
license: MIT
sources:
  - github: ROCm/toolkit
  - github: ROCm/toolkit-tests
    distfile: toolkit-tests-\${PV}.tar.gz
    when: test
build: cmake
compiler: clang
targets:
  mode: subset
  supported: [gfx90a, gfx942, gfx1100, gfx1201]
  cmake_vars: [GPU_TARGETS]
  join: ";"
llvm:
  deps:
    - atom: llvm-core/clang
      classes: [DEPEND, BDEPEND]
python:
  eclass: python-single-r1
  deps:
    - atom: dev-python/pyyaml
      classes: [BDEPEND]
cmake:
  defines:
    ROCM_PATH: \${EPREFIX}/usr
    TOOLKIT_JOBS: $(makeopts_jobs)
  target_defines:
    - name: DL_KERNELS
      value: ON
      reason: only DL kernels exist for these targets
      if_any_target: { except: ["gfx9*", "gfx11*"] }
prepare:
  - reason: the library directory is not always lib
    replace: { files: [CMakeLists.txt, cmake/paths.cmake], from: 'set(LIBDIR "lib")', to: 'set(LIBDIR "$(get_libdir)")' }
  - delete_lines: { files: [CMakeLists.txt], matching: "-Werror" }
  - remove: [third_party/bundled]
tests:
  gpu: true
  command: { dir: "\${BUILD_DIR}/bin", argv: [./toolkit-test, --gtest_brief=1], env: { TOOLKIT_HOME: "\${T}" } }
deps:
  - atom: sci-libs/gpulib
    classes: [RDEPEND, DEPEND]
    gpu: true
  - atom: dev-libs/rocm-base
    classes: [RDEPEND]
  - atom: dev-cpp/gtest
    classes: [DEPEND]
    when: test
phases:
  src_install:
    after: |
      rm "\${ED}/usr/share/doc/\${PF}/LICENSE" || die
`;

/** A full-target consumer of the subset library above. */
const VIEWER = `name: viewer
atom: sci-libs/viewer
description: Full-target library that links the subset toolkit library
homepage: https://github.com/ROCm/viewer
license: MIT
sources:
  - github: ROCm/viewer
build: cmake
compiler: hipcc
targets:
  mode: full
  cmake_vars: [AMDGPU_TARGETS]
use:
  tools:
    description: Link the toolkit library (its targets only)
deps:
  - atom: dev-util/toolkit
    classes: [RDEPEND, DEPEND]
    gpu: true
    when: tools
  - atom: sci-libs/gpulib
    classes: [RDEPEND, DEPEND]
    gpu: true
`;

const EXTERNAL = `${BASE_FILES['external.yaml']}  dev-python/pyyaml: { subslot: false }
`;

describe('rendering features (fixture stack)', () => {
  let dir: string;
  let model622: StackModel;
  let model630: StackModel;

  before(async () => {
    dir = await fixtureManifest({ 'components/toolkit.yaml': TOOLKIT, 'components/viewer.yaml': VIEWER, 'external.yaml': EXTERNAL });
    const manifest = await loadManifest(dir);
    const policies = await loadPolicies(manifest);
    if ('issues' in policies) throw new Error(JSON.stringify(policies.issues));
    model622 = resolveStack(manifest, releaseModel(manifest, '6.2.2', policies.byRelease.get('6.2.2')!)!);
    model630 = resolveStack(manifest, releaseModel(manifest, '6.3.0', policies.byRelease.get('6.3.0')!)!);
  });
  after(() => removeDir(dir));

  const ebuild = (model: StackModel, atom: string) => renderEbuild(model.byAtom.get(atom)!, model, { year: 2026 });

  it('applies overrides per release (GPU_TARGETS from 6.3.0 on)', () => {
    assert.match(ebuild(model622, 'sci-libs/gpulib'), /\t\t-DAMDGPU_TARGETS="\$\(get_amdgpu_flags\)"\n/);
    assert.match(ebuild(model630, 'sci-libs/gpulib'), /\t\t-DGPU_TARGETS="\$\(get_amdgpu_flags\)"\n/);
    assert.doesNotMatch(ebuild(model630, 'sci-libs/gpulib'), /AMDGPU_TARGETS/);
  });

  it('writes pre-inherit variables before inherit, with the release LLVM slot', () => {
    const text = ebuild(model622, 'dev-util/toolkit');
    assert.match(
      text,
      /\nEAPI=8\n\nLLVM_COMPAT=\( 18 \)\nPYTHON_COMPAT=\( python3_\{11\.\.14\} \)\nROCM_SUPPORTED_TARGETS=\( gfx90a gfx942 gfx1100 gfx1201 \)\nROCM_VERSION=\$\{PV\}\n\ninherit cmake edo llvm-r2 multiprocessing python-single-r1 rocm\n/,
    );
    assert.match(ebuild(model630, 'dev-util/toolkit'), /\nLLVM_COMPAT=\( 19 \)\n/);
  });

  it('renders dependencies: same-release slots, USE deps, eclass generators, conditions', () => {
    const text = ebuild(model622, 'dev-util/toolkit');
    assert.match(text, /\tsci-libs\/gpulib:\$\{SLOT\}\[\$\{ROCM_USEDEP\}\]\n/);
    assert.match(text, /\tdev-libs\/rocm-base:\$\{SLOT\}\n/);
    assert.match(text, /\ttest\? \( dev-cpp\/gtest \)\n/);
    assert.match(text, /\nBDEPEND="\n\t\$\(python_gen_cond_dep 'dev-python\/pyyaml\[\$\{PYTHON_USEDEP\}\]'\)\n\t\$\(llvm_gen_dep 'llvm-core\/clang:\$\{LLVM_SLOT\}='\)\n/);
    assert.match(text, /\$\(llvm_gen_dep 'llvm-core\/clang:\$\{LLVM_SLOT\}='\)/);
    assert.match(text, /\nSRC_URI="\n\thttps:\/\/github\.com\/ROCm\/toolkit\/archive\/rocm-\$\{PV\}\.tar\.gz -> \$\{P\}\.tar\.gz\n\ttest\? \(\n\t\thttps:\/\/github\.com\/ROCm\/toolkit-tests\/archive\/rocm-\$\{PV\}\.tar\.gz -> toolkit-tests-\$\{PV\}\.tar\.gz\n\t\)\n"\n/);
    assert.match(text, /\nREQUIRED_USE="\$\{ROCM_REQUIRED_USE\} \$\{PYTHON_REQUIRED_USE\}"\n/);
  });

  it('ties a subset library only to the targets both packages have (never unsolvable), and its flag needs one of them', () => {
    const text = ebuild(model622, 'sci-libs/viewer');
    // toolkit offers gfx90a, gfx942 and gfx1100 in 6.2 (gfx1201 is not in that policy).
    assert.match(text, /\ttools\? \(\n\t\tdev-util\/toolkit:\$\{SLOT\}\[amdgpu_targets_gfx90a\(-\)\?,amdgpu_targets_gfx942\(-\)\?,amdgpu_targets_gfx1100\(-\)\?\]\n\t\)\n/);
    assert.match(text, /\n\ttools\? \( \|\| \( amdgpu_targets_gfx90a amdgpu_targets_gfx942 amdgpu_targets_gfx1100 \) \)\n/);
    // Off by default, the flag leaves the viewer every target.
    assert.ok(model622.byAtom.get('sci-libs/viewer')!.targets.includes('gfx1030'));
    // A library with every target of the consumer keeps ${ROCM_USEDEP}.
    assert.match(text, /\tsci-libs\/gpulib:\$\{SLOT\}\[\$\{ROCM_USEDEP\}\]\n/);
  });

  it('calls both pkg_setup functions when llvm-r2 and python-single-r1 both export one', () => {
    assert.match(ebuild(model622, 'dev-util/toolkit'), /\npkg_setup\(\) \{\n\tllvm-r2_pkg_setup\n\tpython-single-r1_pkg_setup\n\}\n/);
  });

  it('resolves target conditions against the package\'s own targets in that release', () => {
    const text = ebuild(model622, 'dev-util/toolkit');
    // Of gfx90a gfx942 gfx1100 gfx1201 only gfx1201 is neither gfx9* nor gfx11*, and 6.2 does not offer it.
    assert.doesNotMatch(text, /DL_KERNELS/);
    const gpulib = model622.byAtom.get('sci-libs/gpulib')!;
    assert.ok(gpulib.targets.includes('gfx1030'));
  });

  it('joins targets without the trailing separator and quotes values with variables', () => {
    const text = ebuild(model622, 'dev-util/toolkit');
    assert.match(text, /\t\t-DGPU_TARGETS="\$\(get_amdgpu_flags ";"\)"\n\t\t-DROCM_PATH="\$\{EPREFIX\}\/usr"\n\t\t-DTOOLKIT_JOBS="\$\(makeopts_jobs\)"\n/);
    assert.match(text, /\n\trocm_use_clang\n/);
  });

  it('runs tests through edob after check_amdgpu, with their environment', () => {
    assert.match(
      ebuild(model622, 'dev-util/toolkit'),
      /\nsrc_test\(\) \{\n\tcheck_amdgpu\n\tlocal -x TOOLKIT_HOME="\$\{T\}"\n\tcd "\$\{BUILD_DIR\}\/bin" \|\| die\n\tedob \.\/toolkit-test --gtest_brief=1\n\}\n/,
    );
  });

  it('appends phase code and leaves out phases that would only call the eclass default', () => {
    const text = ebuild(model622, 'dev-util/toolkit');
    assert.match(text, /\nsrc_install\(\) \{\n\tcmake_src_install\n\n\trm "\$\{ED\}\/usr\/share\/doc\/\$\{PF\}\/LICENSE" \|\| die\n\}\n$/);
    assert.doesNotMatch(text, /src_compile/);
    assert.doesNotMatch(ebuild(model622, 'dev-libs/rocm-base'), /src_(prepare|configure|compile|install)\(\)/);
  });

  it('fix-ups do exactly what they say when real bash runs them', async () => {
    const text = ebuild(model622, 'dev-util/toolkit');
    const prepare = /\nsrc_prepare\(\) \{\n([\s\S]*?)\n\}\n/.exec(text)![1]!;
    const work = await tempDir('rocm-ebuild-prepare-');
    try {
      await mkdir(path.join(work, 'cmake'), { recursive: true });
      await mkdir(path.join(work, 'third_party', 'bundled'), { recursive: true });
      await writeFile(path.join(work, 'CMakeLists.txt'), 'set(LIBDIR "lib")\nadd_compile_options(-Werror -Wall)\nset(LIBDIRX "lib")\n');
      await writeFile(path.join(work, 'cmake', 'paths.cmake'), 'set(LIBDIR "lib") # set(LIBDIR.lib)\n');
      const script = ['set -e', 'die() { echo "die: $*" >&2; exit 1; }', 'cmake_src_prepare() { :; }', 'get_libdir() { echo lib64; }', prepare].join('\n');
      execFileSync('bash', ['-c', script], { cwd: work });
      assert.equal(await readFile(path.join(work, 'CMakeLists.txt'), 'utf8'), 'set(LIBDIR "lib64")\nset(LIBDIRX "lib")\n');
      assert.equal(await readFile(path.join(work, 'cmake', 'paths.cmake'), 'utf8'), 'set(LIBDIR "lib64") # set(LIBDIR.lib)\n');
      assert.throws(() => execFileSync('test', ['-e', path.join(work, 'third_party', 'bundled')]));
    } finally {
      await removeDir(work);
    }
  });

  it('every fixture ebuild passes our checks, bash -n and shellcheck', async () => {
    for (const model of [model622, model630]) {
      for (const c of model.components) {
        const lint = await lintComponent(c, model, { tools: { shellcheck: true } });
        assert.deepEqual(lint.results.filter((r) => r.level !== 'info').map((r) => `${r.keyword}: ${r.message}`), [], c.atom);
        assert.deepEqual(lint.tools, [], c.atom);
      }
    }
  });
});

describe('sed replacements and long lines', () => {
  /** Runs `sed -i -e <script> file` with real bash and returns the file. */
  function runSed(from: string, to: string, text: string): string {
    const script = sedReplace(from, to);
    return execFileSync('bash', ['-c', `f=$(mktemp) && printf '%s' "$1" > "$f" && sed -i -e ${script} "$f" && cat "$f" && rm "$f"`, 'sed', text], {
      encoding: 'utf8',
      env: { ...process.env, EPREFIX: '/ep', LLVM_SLOT: '18' },
    });
  }

  const cases: [string, string, string][] = [
    // short: the plain form
    ['/opt/rocm', '${EPREFIX}/usr', 'p = "/opt/rocm"'],
    // an insertion into a long anchor: "&"
    ['file(GLOB_RECURSE OPENCL_C_H_LIST "', 'file(GLOB_RECURSE OPENCL_C_H_LIST "${EPREFIX}/usr/lib/clang/${LLVM_SLOT}/include/opencl-c.h" "', 'x file(GLOB_RECURSE OPENCL_C_H_LIST "a.h") y'],
    // a change inside long shared text: \1 and \2, with regex and shell specials around
    [
      'dest="IgnoreAsmCapCache", action="store_true", default=False, help="[x]*.^ & more"',
      'dest="IgnoreAsmCapCache", action="store_true", default=True, help="[x]*.^ & more"',
      'a dest="IgnoreAsmCapCache", action="store_true", default=False, help="[x]*.^ & more" b',
    ],
    [
      'globalParameters["HipClangVersion"] = "0.0.0" # a comment that makes it long',
      'globalParameters["HipClangVersion"] = "${LLVM_SLOT}.0.0" # a comment that makes it long',
      'globalParameters["HipClangVersion"] = "0.0.0" # a comment that makes it long\n',
    ],
  ];

  for (const [from, to, text] of cases) {
    it(`replaces literally: ${from.slice(0, 40)}`, () => {
      const expanded = to.replace(/\$\{EPREFIX\}/g, '/ep').replace(/\$\{LLVM_SLOT\}/g, '18');
      assert.equal(runSed(from, to, text), text.split(from).join(expanded));
    });
  }

  it('picks a form that fits a 120-column line when the plain one does not', () => {
    for (const [from, to] of [
      ['dest="IgnoreAsmCapCache", action="store_true", default=False,', 'dest="IgnoreAsmCapCache", action="store_true", default=True,'],
      ['globalParameters["HipClangVersion"] = "0.0.0"', 'globalParameters["HipClangVersion"] = "${LLVM_SLOT}"'],
      ['action="store_true", help="Do not run rocm_agent_enumerator."', 'action="store_true", default=True, help="Do not run rocm_agent_enumerator."'],
    ] as const) {
      // A tab, "sed -i -e ", the script and " \\".
      assert.ok(13 + sedReplace(from, to).length <= 120, sedReplace(from, to));
      const text = `x ${from} y`;
      assert.equal(runSed(from, to, text), text.replace(from, to.replace('${LLVM_SLOT}', '18')));
    }
  });

  it('wraps long REQUIRED_USE groups and keeps short ones on one line', () => {
    assert.deepEqual(wrapUseExpression('a b c', 1), ['a b c']);
    const flags = Array.from({ length: 8 }, (_, i) => `amdgpu_targets_gfx90${i}`);
    assert.deepEqual(wrapUseExpression(`foo? ( || ( ${flags.join(' ')} ) )`, 1), [
      'foo? (',
      '\t|| (',
      `\t\t${flags.slice(0, 4).join(' ')}`,
      `\t\t${flags.slice(4).join(' ')}`,
      '\t)',
      ')',
    ]);
  });
});

describe('licenses outside @FREE (Portage masks them by default)', () => {
  let dir: string;

  /** The fixture stack with @FREE recorded and gpulib under `license`, accepting it when `reason` is given. */
  async function gpulib(license: string, reason?: string): Promise<{ model: StackModel; atom: string }> {
    const stack = BASE_FILES['stack.yaml']!.replace('targets: targets.yaml', 'licenses:\n  free: [MIT, UoI-NCSA, BSD]\ntargets: targets.yaml');
    let component = BASE_FILES['components/gpulib.yaml']!.replace('license: MIT', `license: ${license}`);
    if (reason) component += `qa:\n  accept:\n    - keyword: NonFreeLicense\n      reason: ${reason}\n`;
    dir = await fixtureManifest({ 'stack.yaml': stack, 'components/gpulib.yaml': component });
    const manifest = await loadManifest(dir);
    const policies = await loadPolicies(manifest);
    if ('issues' in policies) throw new Error(JSON.stringify(policies.issues));
    return { model: resolveStack(manifest, releaseModel(manifest, '6.2.2', policies.byRelease.get('6.2.2')!)!), atom: 'sci-libs/gpulib' };
  }
  afterEach(() => removeDir(dir));

  const keywordsOf = async (model: StackModel, atom: string) =>
    (await lintComponent(model.byAtom.get(atom)!, model)).results.map((r) => `${r.keyword} ${r.level}`);

  it("NCSA-AMD, in no group of ::gentoo's license_groups, fails lint; UoI-NCSA (the same text) passes", async () => {
    const bad = await gpulib('MIT NCSA-AMD');
    assert.deepEqual(await keywordsOf(bad.model, bad.atom), ['NonFreeLicense warning']);
    await removeDir(dir);
    const good = await gpulib('MIT UoI-NCSA');
    assert.deepEqual(await keywordsOf(good.model, good.atom), []);
  });

  it('an accepted one says why above LICENSE and is reported as info', async () => {
    const { model, atom } = await gpulib('MIT AMD-EULA', 'the device firmware blobs are under AMD-EULA, redistributable but not free');
    assert.deepEqual(await keywordsOf(model, atom), ['NonFreeLicense info']);
    assert.match(
      renderEbuild(model.byAtom.get(atom)!, model, { year: 2026 }),
      /\n\n# Not in @FREE \(users add it to ACCEPT_LICENSE\): the device firmware blobs are\n# under AMD-EULA, redistributable but not free\nLICENSE="MIT AMD-EULA"\n/,
    );
  });
});
