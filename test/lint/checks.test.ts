import { strict as assert } from 'node:assert';
import { bashSyntax, bashSyntaxAll, shellcheckAll } from '../../src/lint/external-tools.js';
import { KEYWORDS, lintEbuild, type EbuildInput } from '../../src/lint/index.js';
import { braceExpand } from '../../src/lint/python-compat.js';
import { nonFreeLicenses } from '../../src/lint/checks/license.js';
import { parseGentooMasks, GentooMasksError } from '../../src/manifest/gentoo-masks.js';

/** A clean ebuild; each case below breaks exactly one thing. */
const GOOD = `# Copyright 1999-2026 Gentoo Authors
# Distributed under the terms of the GNU General Public License v2

EAPI=8

ROCM_VERSION=\${PV}

inherit cmake rocm

DESCRIPTION="HIP parallel primitives for GPU code on ROCm"
HOMEPAGE="https://github.com/ROCm/rocPRIM"
SRC_URI="https://github.com/ROCm/rocPRIM/archive/rocm-\${PV}.tar.gz -> \${P}.tar.gz"
S="\${WORKDIR}/rocPRIM-rocm-\${PV}"

LICENSE="MIT"
SLOT="0/$(ver_cut 1-2)"
KEYWORDS="~amd64"
IUSE="benchmark test"
REQUIRED_USE="\${ROCM_REQUIRED_USE}"
RESTRICT="!test? ( test )"

RDEPEND="dev-util/hip:\${SLOT}"
DEPEND="\${RDEPEND}
	test? ( dev-cpp/gtest )
"

src_prepare() {
	cmake_src_prepare
	sed -i -e 's|a|b|' CMakeLists.txt || die
}

src_configure() {
	rocm_use_hipcc
	local mycmakeargs=(
		-DAMDGPU_TARGETS="$(get_amdgpu_flags)"
		-DBUILD_BENCHMARK="$(usex benchmark ON OFF)"
	)
	cmake_src_configure
}

src_test() {
	check_amdgpu
	cmake_src_test
}
`;

const METADATA = `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE pkgmetadata SYSTEM "https://www.gentoo.org/dtd/metadata.dtd">
<pkgmetadata>
	<maintainer type="project"><email>sci@gentoo.org</email></maintainer>
	<use><flag name="benchmark">Build the benchmarks</flag></use>
	<upstream><remote-id type="github">ROCm/rocPRIM</remote-id></upstream>
</pkgmetadata>
`;

function input(text: string, extra: Partial<EbuildInput> = {}): EbuildInput {
  return {
    file: 'sci-libs/rocPRIM/rocPRIM-6.2.2.ebuild',
    atom: 'sci-libs/rocPRIM',
    version: '6.2.2',
    text,
    metadata: METADATA,
    upstreamRepos: ['ROCm/rocPRIM'],
    eclassIuse: ['+amdgpu_targets_gfx906', 'amdgpu_targets_gfx1030'],
    rocmRequiredUse: '|| ( amdgpu_targets_gfx906 amdgpu_targets_gfx1030 )',
    year: 2026,
    ...extra,
  };
}

/** Gentoo's Python as stack.yaml records it. */
const PYTHON = { current: ['python3_11', 'python3_12', 'python3_13', 'python3_14'], default: ['python3_13'] };

/** The stack the dependency checks know: hip in two releases, a subset library, an external package. */
const STACK = new Map([
  ['dev-util/hip', { iuse: new Set(['debug', 'test']), versions: ['6.2.2', '6.2.4'] }],
  ['sci-libs/ck', { iuse: new Set(['test', 'amdgpu_targets_gfx906']), versions: ['6.2.2'] }],
  ['dev-cpp/gtest', {}],
  // A library that can be merged only with gfx906 enabled (a subset library).
  ['sci-libs/gemm', { iuse: new Set(['amdgpu_targets_gfx906']), versions: ['6.2.2'], usableTargets: ['gfx906'] }],
  // An external package whose default-profile flags are recorded.
  ['media-libs/mesa', { iuse: new Set(['proprietary-codecs', 'vaapi']), enabled: new Set(['proprietary-codecs']) }],
]);

/** The clean ebuild turned into a python-single-r1 one with this PYTHON_COMPAT. */
function withPython(compat: string): string {
  return swap('ROCM_VERSION=${PV}\n\ninherit cmake rocm', `PYTHON_COMPAT=( ${compat} )\nROCM_VERSION=\${PV}\n\ninherit cmake python-single-r1 rocm`).replace(
    'REQUIRED_USE="${ROCM_REQUIRED_USE}"',
    'REQUIRED_USE="${ROCM_REQUIRED_USE} ${PYTHON_REQUIRED_USE}"',
  );
}

/** The clean ebuild built with llvm-r2 and this LLVM_COMPAT. */
function withLlvm(compat: string): string {
  return swap('ROCM_VERSION=${PV}\n\ninherit cmake rocm', `LLVM_COMPAT=${compat}\nROCM_VERSION=\${PV}\n\ninherit cmake llvm-r2 rocm`);
}

async function keywords(text: string, extra: Partial<EbuildInput> = {}): Promise<string[]> {
  return (await lintEbuild(input(text, extra))).map((r) => r.keyword).sort();
}

function swap(from: string, to: string): string {
  assert.ok(GOOD.includes(from), `the clean ebuild lacks ${JSON.stringify(from)}`);
  return GOOD.replace(from, to);
}

/** keyword → an ebuild that must produce it (and nothing else). */
const CASES: [string, () => string, Partial<EbuildInput>?][] = [
  ['InvalidCopyright', () => swap('# Copyright 1999-2026 Gentoo Authors', '# Copyright AMD')],
  ['OldGentooCopyright', () => swap('1999-2026', '1999-2024')],
  ['InvalidLicenseHeader', () => swap('General Public License v2', 'General Public License v3')],
  ['UnsupportedEapi', () => swap('EAPI=8', 'EAPI=7'), { rocm: true }],
  ['VariableOrderWrong', () => swap('LICENSE="MIT"\nSLOT="0/$(ver_cut 1-2)"', 'SLOT="0/$(ver_cut 1-2)"\nLICENSE="MIT"')],
  ['MisplacedEclassVar', () => swap('ROCM_VERSION=${PV}\n\ninherit cmake rocm\n', 'inherit cmake rocm\n\nROCM_VERSION=${PV}\n')],
  ['MissingVariable', () => swap('KEYWORDS="~amd64"\n', '')],
  ['VariableShadowed', () => swap('LICENSE="MIT"\n', 'LICENSE="MIT"\nLICENSE="BSD"\n')],
  ['MissingSlotSubslot', () => swap('SLOT="0/$(ver_cut 1-2)"', 'SLOT="0"'), { rocm: true }],
  ['BadDescription', () => swap('HIP parallel primitives for GPU code on ROCm', 'Parallel primitives.')],
  ['MissingInherits', () => swap('\tcmake_src_test\n', '\tcmake_src_test\n\tedob ./smoke-test\n')],
  ['UnusedInherits', () => swap('inherit cmake rocm', 'inherit cmake edo rocm')],
  ['DeprecatedEclass', () => swap('inherit cmake rocm', 'inherit cmake llvm-r1 rocm'), {}],
  ['UnknownUseFlags', () => swap('test? ( dev-cpp/gtest )', 'tests? ( dev-cpp/gtest )')],
  ['MissingTestRestrict', () => swap('RESTRICT="!test? ( test )"\n', '')],
  ['RequiredUseDefaults', () => GOOD, { eclassIuse: ['amdgpu_targets_gfx906', 'amdgpu_targets_gfx1030'] }],
  ['UseExpandDefault', () => swap('IUSE="benchmark test"', 'IUSE="benchmark test +video_cards_amdgpu"')],
  ['MissingDie', () => swap("CMakeLists.txt || die", 'CMakeLists.txt')],
  ['UnquotedVariable', () => swap('\tcmake_src_test\n', '\tcmake_src_test\n\tls ${WORKDIR}/logs || die\n')],
  ['VariableScope', () => swap('\tcmake_src_test\n', '\tcmake_src_test\n\tls "${ED}"/usr || die\n')],
  ['InvalidSandboxCall', () => swap('\tcheck_amdgpu\n', '\tcheck_amdgpu\n\taddwrite /dev/kfd:/dev/dri\n')],
  ['DuplicateFunctionDefinition', () => `${GOOD}\nsrc_test() {\n\tcmake_src_test\n}\n`],
  ['MissingLocalUseDesc', () => GOOD, { metadata: METADATA.replace('<flag name="benchmark">Build the benchmarks</flag>', '') }],
  ['UnusedLocalUseDesc', () => GOOD, { metadata: METADATA.replace('</use>', '<flag name="docs">Build documentation</flag></use>') }],
  ['MissingRemoteId', () => GOOD, { upstreamRepos: ['ROCm/rocPRIM', 'ROCm/rocm-cmake'] }],
  ['MaintainerNeeded', () => GOOD, { metadata: METADATA.replace(/<maintainer[\s\S]*?<\/maintainer>/, '') }],
  ['WhitespaceFound', () => swap('KEYWORDS="~amd64"', 'KEYWORDS="~amd64" ')],
  ['WrongIndentFound', () => swap('\tcheck_amdgpu\n', '    check_amdgpu\n')],
  ['DoubleEmptyLine', () => swap('\nsrc_test() {', '\n\nsrc_test() {')],
  ['TrailingEmptyLine', () => `${GOOD}\n`],
  ['NoFinalNewline', () => GOOD.trimEnd()],
  ['ParseError', () => swap('\tcmake_src_test\n}', '\tif true; then\n\tcmake_src_test\n}')],
  ['ExcessiveLineLength', () => swap('\tcmake_src_test\n', `\tcmake_src_test\n\teinfo ${'words '.repeat(20)}end\n`)],
  ['PythonCompatUpdate', () => withPython('python3_{11..13}'), { python: PYTHON }],
  ['MaskedLlvmSlot', () => withLlvm('( 23 )')],
  ['MissingToolDep', () => swap('\trocm_use_hipcc\n', '\trocm_use_clang\n')],
  ['InheritsError', () => swap('inherit cmake rocm', 'inherit cmake foobar-r9 rocm')],
  ['GpuNeededOutsideTest', () => swap('\trocm_use_hipcc\n', '\tuse test && check_amdgpu\n\trocm_use_hipcc\n')],
  ['NonsolvableDeps', () => swap('RDEPEND="dev-util/hip:${SLOT}"', 'RDEPEND="dev-util/hip:${SLOT}\n\tsci-libs/ck:${SLOT}[${ROCM_USEDEP}]\n"'), { stack: STACK }],
  ['NonFreeLicense', () => swap('LICENSE="MIT"', 'LICENSE="MIT NCSA-AMD"'), { freeLicenses: new Set(['MIT', 'UoI-NCSA']) }],
  ['UseChangeNeeded', () => swap('RDEPEND="dev-util/hip:${SLOT}"', 'RDEPEND="dev-util/hip:${SLOT}\n\tmedia-libs/mesa[vaapi]\n"'), { stack: STACK }],
  ['UnmergeableTargets', () => swap('RDEPEND="dev-util/hip:${SLOT}"', 'RDEPEND="dev-util/hip:${SLOT}\n\tsci-libs/gemm:${SLOT}\n"'), { stack: STACK }],
  ['NonexistentBlocker', () => swap('RDEPEND="dev-util/hip:${SLOT}"', 'RDEPEND="dev-util/hip:${SLOT}\n\t!<dev-util/hip-6\n"'), { stack: STACK }],
  // An overlay whose hip moved to 7.2.4 while this 6.2.2 ebuild stayed: dev-util/hip:${SLOT} is hip:0/6.2.
  ['NonexistentDeps', () => GOOD, { overlay: new Map([['dev-util/hip', [{ version: '7.2.4', slot: '0', subslot: '7.2' }]]]) }],
];

describe('lint checks (one case per keyword)', () => {
  it('the clean ebuild produces no result', async () => {
    assert.deepEqual(await keywords(GOOD), []);
  });

  for (const [keyword, make, extra] of CASES) {
    it(`${keyword}`, async () => {
      const found = await keywords(make(), extra);
      if (keyword === 'ParseError') {
        assert.ok(found.includes('ParseError'), found.join(' '));
      } else {
        assert.deepEqual(found, [keyword]);
      }
    });
  }

  it('covers every keyword a check declares, except the few only tested elsewhere', () => {
    const covered = new Set(CASES.map(([k]) => k));
    const elsewhere = new Set(['IndirectInherits', 'RedundantUseExpandDesc', 'PackageSetUnresolvable', 'NoUsableTarget']);
    assert.deepEqual([...KEYWORDS.keys()].filter((k) => !covered.has(k) && !elsewhere.has(k)), []);
  });

  it('IndirectInherits: a function of an eclass only cmake inherits', async () => {
    const text = swap('\tcmake_src_prepare\n', '\tcmake_src_prepare\n\tmakeopts_jobs >/dev/null\n');
    assert.deepEqual(await keywords(text), ['IndirectInherits']);
  });

  it('functions several eclasses provide are fine with any of them (python_has_version)', async () => {
    const text = swap('inherit cmake rocm', 'PYTHON_COMPAT=( python3_12 )\ninherit cmake python-any-r1 rocm').replace(
      '\nsrc_prepare() {',
      '\npython_check_deps() {\n\tpython_has_version "dev-python/pyyaml[${PYTHON_USEDEP}]"\n}\n\nsrc_prepare() {',
    );
    assert.deepEqual(await keywords(text), []);
  });
});

describe('rules real pkgcheck and Portage taught us', () => {
  it("an LLVM_COMPAT of slots ::gentoo's profiles mask is a notice naming the setting that lifts the mask", async () => {
    const [r] = await lintEbuild(input(withLlvm('( 23 )')));
    assert.equal(r!.level, 'info');
    assert.equal(r!.line, 6);
    assert.equal(
      r!.message,
      "LLVM_COMPAT=( 23 ) needs llvm_slot_23, which ::gentoo masks (profiles/base/use.mask): Portage refuses the package until \"sci-libs/rocPRIM -llvm_slot_23\" is in /etc/portage/profile/package.use.mask (or \"-llvm_slot_23\" in /etc/portage/profile/use.mask for every package)",
    );
    // One unmasked slot is enough: llvm-r2 enables the newest stable one by default.
    assert.deepEqual(await keywords(withLlvm('( {22..23} )')), []);
    assert.deepEqual(await keywords(withLlvm('( 22 )')), []);
    assert.deepEqual(await keywords(withLlvm('( 23 24 )')), ['MaskedLlvmSlot']);
    // The data decides: once ::gentoo unmasks 23, nothing is said.
    assert.deepEqual(await keywords(withLlvm('( 23 )'), { gentooMasks: { file: 'x', llvmSlots: [] } }), []);
    // Without llvm-r2, LLVM_COMPAT means nothing to Portage.
    assert.deepEqual(await keywords(withLlvm('( 23 )').replace('inherit cmake llvm-r2 rocm', 'inherit cmake rocm')), []);
  });

  it('the masked-slot data is checked: each problem at file:line:column with a fix', () => {
    assert.throws(
      () => parseGentooMasks('llvm_slots:\n  - slot: twenty-three\n    reason: short\n', 'gentoo-masks.yaml'),
      (err: unknown) => {
        assert.ok(err instanceof GentooMasksError);
        const where = err.issues.map((i) => `${i.line}:${i.column} ${i.path}`);
        assert.ok(where.includes('2:11 $.llvm_slots[0].slot'), where.join(', '));
        assert.match(err.message, /gentoo-masks\.yaml:2:11/);
        return true;
      },
    );
  });

  it("a PYTHON_COMPAT without the profile's default target fails REQUIRED_USE (the stack could not be merged)", async () => {
    assert.deepEqual(await keywords(withPython('python3_{10..12}'), { python: PYTHON }), ['PythonCompatUpdate', 'RequiredUseDefaults']);
    assert.deepEqual(await keywords(withPython('python3_{11..14}'), { python: PYTHON }), []);
    // python-r1's REQUIRED_USE wants any one target: the default one is enough.
    const multi = withPython('python3_{12..14}').replace('python-single-r1', 'python-r1');
    assert.deepEqual(await keywords(multi, { python: PYTHON }), []);
    assert.deepEqual(await keywords(multi.replace('python3_{12..14}', 'python3_12 python3_14'), { python: PYTHON }), ['RequiredUseDefaults']);
  });

  it("REQUIRED_USE on VIDEO_CARDS flags holds under default USE through the profile's VIDEO_CARDS, not through a + in IUSE", async () => {
    const platforms = swap('IUSE="benchmark test"', 'IUSE="benchmark test video_cards_amdgpu video_cards_nvidia"').replace(
      'REQUIRED_USE="${ROCM_REQUIRED_USE}"',
      'REQUIRED_USE="\n\t${ROCM_REQUIRED_USE}\n\t^^ ( video_cards_amdgpu video_cards_nvidia )\n"',
    );
    const profile = new Set(['video_cards_amdgpu', 'video_cards_radeonsi']);
    assert.deepEqual(await keywords(platforms, { profileFlags: profile }), []);
    // Without the profile's values nothing enables either card.
    assert.deepEqual(await keywords(platforms), ['RequiredUseDefaults']);
    // A profile naming both cards fails ^^: the user must choose.
    assert.deepEqual(await keywords(platforms, { profileFlags: new Set([...profile, 'video_cards_nvidia']) }), ['RequiredUseDefaults']);
    // The + that made it pass before is itself a finding.
    assert.deepEqual(await keywords(platforms.replace(' video_cards_amdgpu ', ' +video_cards_amdgpu ')), ['UseExpandDefault']);
  });

  it('UnmergeableTargets: only what a build always pulls in, against the targets the ebuild really offers', async () => {
    const needs = (deps: string) => swap('RDEPEND="dev-util/hip:${SLOT}"', `RDEPEND="dev-util/hip:\${SLOT}\n\t${deps}\n"`);
    const found = await lintEbuild(input(needs('sci-libs/gemm:${SLOT}'), { stack: STACK }));
    assert.match(found[0]!.message, /offers amdgpu_targets_gfx1030, but sci-libs\/gemm, needed whatever USE says, is built for gfx906 only/);
    assert.equal(found[0]!.line, 23);
    // Optional dependencies and blockers do not limit the package.
    for (const deps of ['test? ( sci-libs/gemm:${SLOT} )', '|| ( sci-libs/gemm dev-cpp/gtest )', '!sci-libs/gemm']) {
      assert.deepEqual(await keywords(needs(deps), { stack: STACK }), [], deps);
    }
    // ROCM_SUPPORTED_TARGETS narrows what the ebuild offers, whatever the release has.
    const narrowed = needs('sci-libs/gemm:${SLOT}').replace('ROCM_VERSION=${PV}', 'ROCM_SUPPORTED_TARGETS=( gfx906 gfx90a )\nROCM_VERSION=${PV}');
    assert.deepEqual(await keywords(narrowed, { stack: STACK, releaseTargets: ['gfx906', 'gfx1030'] }), []);
    assert.deepEqual(await keywords(narrowed, { stack: STACK, releaseTargets: ['gfx906', 'gfx90a'] }), ['UnmergeableTargets']);
    // Without rocm.eclass's globals the ebuild offers no targets to check.
    const skip = needs('sci-libs/gemm:${SLOT}').replace('ROCM_VERSION=${PV}', 'ROCM_SKIP_GLOBALS=1').replace('REQUIRED_USE="${ROCM_REQUIRED_USE}"\n', '');
    assert.ok(!(await keywords(skip, { stack: STACK })).includes('UnmergeableTargets'));
  });

  it('ExcessiveLineLength spares what pkgcheck spares: one long word, a long quoted string, DESCRIPTION', async () => {
    const line = (text: string) => swap('\tcmake_src_test\n', `\tcmake_src_test\n\t${text}\n`);
    assert.deepEqual(await keywords(line(`einfo ${'w'.repeat(115)} and a few more words to pass 120`)), []);
    assert.deepEqual(await keywords(line(`einfo "${'quoted text '.repeat(10)}" plus more`)), []);
    assert.deepEqual(await keywords(line(`einfo "${'quoted "text" '.repeat(9)}" plus more`)), ['ExcessiveLineLength']);
  });

  it('MissingToolDep: rocm_use_clang needs clang in BDEPEND, directly or through llvm_gen_dep', async () => {
    const clang = swap('\trocm_use_hipcc\n', '\trocm_use_clang\n');
    assert.deepEqual(await keywords(clang.replace('\nsrc_prepare', '\nBDEPEND="llvm-core/clang:18"\n\nsrc_prepare')), []);
    const viaEclass = clang
      .replace('ROCM_VERSION=${PV}\n', 'LLVM_COMPAT=( 18 )\nROCM_VERSION=${PV}\n')
      .replace('inherit cmake rocm', 'inherit cmake llvm-r2 rocm')
      .replace('\nsrc_prepare', `\nBDEPEND="$(llvm_gen_dep 'llvm-core/clang:\${LLVM_SLOT}')"\n\nsrc_prepare`);
    assert.deepEqual(await keywords(viaEclass), []);
    // Through another package (hip) it only works by accident.
    assert.deepEqual(await keywords(clang.replace('\nsrc_prepare', '\nBDEPEND="dev-util/hip"\n\nsrc_prepare')), ['MissingToolDep']);
  });

  it('inherit foobar-r9 eutils: an unknown eclass is an InheritsError, a removed one DeprecatedEclass', async () => {
    const results = await lintEbuild(input(swap('inherit cmake rocm', 'inherit cmake foobar-r9 eutils rocm')));
    assert.deepEqual(
      results.map((r) => `${r.keyword} (${r.level}): ${r.message}`),
      [
        'DeprecatedEclass (warning): eutils was removed from ::gentoo, use EAPI 7/8 built-ins and the small eclasses it was split into (edos2unix, estack, optfeature, wrapper, …)',
        'InheritsError (error): inherit foobar-r9: no such eclass in ::gentoo or the overlay, so the ebuild cannot be sourced',
      ],
    );
    // An overlay's own eclass exists; deprecated ::gentoo ones say what replaces them.
    assert.deepEqual(await keywords(swap('inherit cmake rocm', 'inherit cmake foobar-r9 rocm'), { eclasses: ['foobar-r9'] }), []);
    const golang = await lintEbuild(input(swap('inherit cmake rocm', 'inherit cmake golang-base rocm')));
    assert.ok(golang.some((r) => r.keyword === 'DeprecatedEclass' && /use go-module/.test(r.message)));
  });

  it('NonFreeLicense reads LICENSE as Portage does: all of a list, one of || ( ), conditionals as if set', () => {
    const free = new Set(['MIT', 'BSD', 'UoI-NCSA']);
    assert.deepEqual(nonFreeLicenses('MIT UoI-NCSA', free), []);
    assert.deepEqual(nonFreeLicenses('MIT NCSA-AMD', free), ['NCSA-AMD']);
    assert.deepEqual(nonFreeLicenses('|| ( NCSA-AMD UoI-NCSA ) BSD', free), []);
    assert.deepEqual(nonFreeLicenses('|| ( NCSA-AMD AMD-EULA )', free), ['NCSA-AMD', 'AMD-EULA']);
    assert.deepEqual(nonFreeLicenses('MIT firmware? ( AMD-EULA )', free), ['AMD-EULA']);
    assert.deepEqual(nonFreeLicenses('|| ( ( MIT AMD-EULA ) BSD )', free), []);
    assert.deepEqual(nonFreeLicenses('|| ( ( MIT AMD-EULA ) NCSA-AMD )', free), ['AMD-EULA', 'NCSA-AMD']);
    // Without the data (an old stack.yaml) the check stays silent.
    return keywords(swap('LICENSE="MIT"', 'LICENSE="NCSA-AMD"')).then((k) => assert.deepEqual(k, []));
  });

  it('brace expansion of PYTHON_COMPAT follows bash', () => {
    assert.deepEqual(braceExpand('python3_{11..14}'), ['python3_11', 'python3_12', 'python3_13', 'python3_14']);
    assert.deepEqual(braceExpand('python3_{12,13}'), ['python3_12', 'python3_13']);
    assert.deepEqual(braceExpand('pypy3'), ['pypy3']);
  });

  it('NonsolvableDeps: only the targets both packages have may be tied', async () => {
    const rdepend = (dep: string) => swap('RDEPEND="dev-util/hip:${SLOT}"', `RDEPEND="dev-util/hip:\${SLOT}\n\t${dep}\n"`);
    // The consumer has gfx906 and gfx1030; sci-libs/ck only gfx906.
    assert.deepEqual(await keywords(rdepend('sci-libs/ck:${SLOT}[amdgpu_targets_gfx906(-)?]'), { stack: STACK }), []);
    assert.deepEqual(await keywords(rdepend('sci-libs/ck:${SLOT}[amdgpu_targets_gfx1030(-)?]'), { stack: STACK }), ['NonsolvableDeps']);
    // (+) counts a missing flag as enabled, a negated flag as disabled: both satisfiable.
    assert.deepEqual(await keywords(rdepend('sci-libs/ck:${SLOT}[amdgpu_targets_gfx1030(+)?]'), { stack: STACK }), []);
    assert.deepEqual(await keywords(rdepend('sci-libs/ck:${SLOT}[!amdgpu_targets_gfx1030(-)?]'), { stack: STACK }), []);
    assert.deepEqual(await keywords(rdepend('dev-util/hip:${SLOT}[rocprofiler]'), { stack: STACK }), ['NonsolvableDeps']);
    // Without stack knowledge nothing is said.
    assert.deepEqual(await keywords(rdepend('sci-libs/ck:${SLOT}[${ROCM_USEDEP}]')), []);
  });

  it("UseChangeNeeded: a ::gentoo flag the default profile leaves off, asked for by a plain [flag]", async () => {
    const rdepend = (dep: string) => swap('RDEPEND="dev-util/hip:${SLOT}"', `RDEPEND="dev-util/hip:\${SLOT}\n\t${dep}\n"`);
    assert.deepEqual(await keywords(rdepend('media-libs/mesa[proprietary-codecs]'), { stack: STACK }), []);
    assert.deepEqual(await keywords(rdepend('media-libs/mesa[proprietary-codecs,vaapi]'), { stack: STACK }), ['UseChangeNeeded']);
    // Conditional, negated and defaulted forms follow the consumer or ask for "off": Portage needs no change.
    for (const dep of ['media-libs/mesa[vaapi?]', 'media-libs/mesa[vaapi=]', 'media-libs/mesa[-vaapi]', 'media-libs/mesa[!vaapi?]']) {
      assert.deepEqual(await keywords(rdepend(dep), { stack: STACK }), [], dep);
    }
    // A flag the external list does not record for the package is NonsolvableDeps, as for stack packages.
    const unknown = await lintEbuild(input(rdepend('media-libs/mesa[vulkan]'), { stack: STACK }));
    assert.deepEqual(unknown.map((r) => r.keyword), ['NonsolvableDeps']);
    assert.match(unknown[0]!.message, /does not record in media-libs\/mesa's iuse/);
  });

  it("NonexistentDeps: a dependency on a package of the overlay must be met by one of its ebuilds, at the slot and version asked for", async () => {
    const hip = (...held: [string, string?][]) => ({ overlay: new Map([['dev-util/hip', held.map(([version, slot]) => ({ version, ...(slot ? { slot: slot.split('/')[0]!, ...(slot.includes('/') ? { subslot: slot.split('/')[1]! } : {}) } : {}) }))]]) });
    const rdepend = (dep: string) => swap('RDEPEND="dev-util/hip:${SLOT}"', `RDEPEND="${dep}"`);
    // ${SLOT} is this ebuild's own, 0/6.2 at 6.2.2: met by hip 6.2.4 (0/6.2), not by 6.3.3 (0/6.3).
    assert.deepEqual(await keywords(GOOD, hip(['6.2.4', '0/6.2'], ['7.2.4', '0/7.2'])), []);
    const unmet = await lintEbuild(input(GOOD, hip(['6.3.3', '0/6.3'])));
    assert.deepEqual(unmet.map((r) => r.keyword), ['NonexistentDeps']);
    assert.match(unmet[0]!.message, /dev-util\/hip:\$\{SLOT\} \(dev-util\/hip:0\/6\.2\): no ebuild of dev-util\/hip in the overlay provides it \(it holds 6\.3\.3 \(SLOT 0\/6\.3\)\).*treeclean/);
    assert.equal(unmet[0]!.line, 22);
    // Versions: =, ~, globs and ranges, with or without a slot.
    assert.deepEqual(await keywords(rdepend('=dev-util/hip-${PV}*'), hip(['6.2.2-r1', '0/6.2'])), []);
    assert.deepEqual(await keywords(rdepend('~dev-util/hip-6.2.2'), hip(['6.2.4', '0/6.2'])), ['NonexistentDeps']);
    assert.deepEqual(await keywords(rdepend('>=dev-util/hip-6.2:0/6.2'), hip(['7.2.4', '0/7.2'])), ['NonexistentDeps']);
    assert.deepEqual(await keywords(rdepend('>=dev-util/hip-6.2:0'), hip(['7.2.4', '0/7.2'])), []);
    // No restriction, a := binding, or a package the overlay does not hold (::gentoo's): nothing to refute.
    assert.deepEqual(await keywords(rdepend('dev-util/hip'), hip(['7.2.4', '0/7.2'])), []);
    assert.deepEqual(await keywords(rdepend('dev-util/hip:='), hip(['7.2.4', '0/7.2'])), []);
    assert.deepEqual(await keywords(rdepend('dev-libs/rocr-runtime:${SLOT}'), hip(['7.2.4', '0/7.2'])), []);
    // An ebuild whose SLOT is not literal meets any slot; a SLOT without subslot is its own subslot (PMS).
    assert.deepEqual(await keywords(GOOD, hip(['6.2.2'])), []);
    assert.deepEqual(await keywords(rdepend('dev-util/hip:0/0'), hip(['6.2.2', '0'])), []);
    // Without the overlay (a render of one release), nothing is said.
    assert.deepEqual(await keywords(GOOD), []);
  });

  it('NonexistentBlocker: a blocker must match a version some repository has', async () => {
    const rdepend = (dep: string) => swap('RDEPEND="dev-util/hip:${SLOT}"', `RDEPEND="dev-util/hip:\${SLOT}\n\t${dep}\n"`);
    assert.deepEqual(await keywords(rdepend('!<=dev-util/hip-${PV}'), { stack: STACK }), []);
    assert.deepEqual(await keywords(rdepend('!<dev-util/hip-6.2.2'), { stack: STACK }), ['NonexistentBlocker']);
    assert.deepEqual(await keywords(rdepend('!>=dev-util/hip-6.2.4'), { stack: STACK }), []);
    assert.deepEqual(await keywords(rdepend('!~dev-util/hip-6.2.3'), { stack: STACK }), ['NonexistentBlocker']);
    assert.deepEqual(await keywords(rdepend('!!=dev-util/hip-6.2*'), { stack: STACK }), []);
    // An external package's versions must be recorded before a versioned blocker can be judged.
    assert.deepEqual(await keywords(rdepend('!<dev-cpp/gtest-1.10'), { stack: STACK }), ['NonexistentBlocker']);
    assert.deepEqual(await keywords(rdepend('!dev-cpp/gtest'), { stack: STACK }), []);
  });
});

describe('bash -n and shellcheck wrappers', () => {
  it('bash -n reports errors bash prints even when it exits 0', async () => {
    const found = await bashSyntax('f() {\n\tif [[ x ]; then :; fi\n}\n');
    assert.equal(found.length, 1);
    assert.equal(found[0]!.line, 2);
  });

  it('checks many ebuilds in one bash and still says which one is broken', async () => {
    const results = await bashSyntaxAll([GOOD, 'src_test() {\n', GOOD]);
    assert.deepEqual(results.map((r) => r.length), [0, 1, 0]);
  });

  it('runs shellcheck once over many files and attributes findings to each', async () => {
    const results = await shellcheckAll([GOOD, swap('\tcmake_src_test\n', '\tcmake_src_test\n\techo $1\n'), GOOD]);
    assert.deepEqual(results.map((r) => r.map((f) => f.code)), [[], ['SC2086'], []]);
  });
});
