import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { loadManifest } from '../../src/stack-check/index.js';
import { knownReleases, releaseModel, resolveStack, type StackModel } from '../../src/model/resolve.js';
import { loadPolicies } from '../../src/model/targets.js';
import { lintComponent } from '../../src/lint/component.js';
import { formatText } from '../../src/lint/index.js';
import { evaluateRequiredUse } from '../../src/lint/checks/use-flags.js';
import { renderEbuild, renderMetadata } from '../../src/render/index.js';
import { removeDir, root, shippedManifest, tempDir } from '../helpers/project.js';
import { releaseSample } from '../helpers/sample.js';

const run = promisify(execFile);

/** Our restatement of the DTD always; Gentoo's own copy too when the workspace has it. */
const DTDS = [
  path.join(root, 'test', 'fixtures', 'metadata.dtd'),
  ...[process.env.ROCM_EBUILD_GENTOO_DTD, path.join(root, '..', 'shared', 'reference', 'gentoo-metadata.dtd')].filter(
    (p): p is string => Boolean(p) && existsSync(p!),
  ),
];

async function models(): Promise<StackModel[]> {
  const manifest = await loadManifest(shippedManifest);
  const policies = await loadPolicies(manifest);
  if ('issues' in policies) throw new Error(JSON.stringify(policies.issues));
  return knownReleases(manifest).map((v) => resolveStack(manifest, releaseModel(manifest, v, policies.byRelease.get(v)!)!));
}

describe('every generated ebuild of the shipped stack', function () {
  this.timeout(180_000);
  let all: StackModel[];
  let tmp: string;

  before(async () => {
    all = await models();
    tmp = await tempDir('rocm-ebuild-qa-');
  });
  after(() => removeDir(tmp));

  // 6.2.2 was read at its tags; 6.3.3 is the newest, with the 6.3 layout changes.
  for (const version of ['6.2.2', '6.3.3']) {
    it(`${version}: passes our pkgcheck-style checks, real bash -n and shellcheck, with no warning`, async () => {
      const model = all.find((m) => m.release.version === version)!;
      const problems: string[] = [];
      for (const c of model.components) {
        const lint = await lintComponent(c, model, { tools: { shellcheck: true } });
        const bad = lint.results.filter((r) => r.level !== 'info');
        if (bad.length) problems.push(formatText(bad).trimEnd());
        for (const t of lint.tools) problems.push(`${lint.file}:${t.line}: ${t.tool} ${t.code ?? ''} ${t.message}`);
      }
      assert.deepEqual(problems, []);
      assert.ok(model.components.length >= 45);
    });
  }

  // Per release, once per family (the others of a family share its layout): ROCM_EBUILD_TEST_FULL=1 for all.
  it('a release of every family passes our checks too (errors, warnings and style)', async () => {
    const problems: string[] = [];
    const others = all.map((m) => m.release.version).filter((v) => !['6.2.2', '6.3.3'].includes(v));
    const chosen = releaseSample(others, 'stack QA');
    for (const model of all.filter((m) => chosen.includes(m.release.version))) {
      for (const c of model.components) {
        // Style too: pkgcheck reports ExcessiveLineLength and its kind to every reviewer.
        const bad = (await lintComponent(c, model)).results.filter((r) => r.level !== 'info');
        if (bad.length) problems.push(`${model.release.version}: ${formatText(bad).trimEnd()}`);
      }
    }
    assert.deepEqual(problems, []);
  });

  it('metadata.xml validates against the metadata DTD with xmllint (6.2.2, and the packages 6.3.3 adds)', async () => {
    const base = all.find((m) => m.release.version === '6.2.2')!;
    const newest = all.find((m) => m.release.version === '6.3.3')!;
    const known = new Set(base.components.map((c) => c.atom));
    const added = newest.components.filter((c) => !known.has(c.atom));
    assert.ok(added.length >= 2, `6.3.3 adds ${added.length} packages`);
    const cases = [...base.components.map((c) => ({ c, model: base })), ...added.map((c) => ({ c, model: newest }))];
    for (const { c, model } of cases) {
      const file = path.join(tmp, `${c.pn}-metadata.xml`);
      await writeFile(file, renderMetadata(c, model));
      for (const dtd of DTDS) {
        try {
          await run('xmllint', ['--noout', '--nonet', '--dtdvalid', dtd, file]);
        } catch (err) {
          assert.fail(`${c.atom}/metadata.xml against ${path.basename(dtd)}: ${(err as { stderr?: string }).stderr}`);
        }
      }
    }
  });

  it('every distfile name means one upstream file, across packages and releases', () => {
    const urls = new Map<string, string>();
    for (const model of all) {
      for (const c of model.components) {
        for (const d of c.distfiles) {
          const seen = urls.get(d.name);
          assert.ok(!seen || seen === d.urls[0], `${d.name} is both ${seen} and ${d.urls[0]}`);
          urls.set(d.name, d.urls[0]!);
          // A file that changes with the release must say which release it is, or two
          // releases would share one DISTDIR name for different contents.
          if (d.urls[0]!.includes(model.release.version)) {
            assert.ok(d.name.includes(model.release.version), `${c.atom}: ${d.name} comes from ${d.urls[0]} but does not name ${model.release.version}`);
          }
        }
      }
    }
  });

  it('test and benchmark programs a package installs find their libraries at run time (RDEPEND under the same flag)', () => {
    // ROCm's client frameworks (clients/ and the rocPRIM family's test and
    // benchmark directories) install their programs with rocm_install; a
    // library they link must then outlive emerge --depclean.
    const CLIENTS = /^BUILD_(CLIENTS_(TESTS|BENCHMARKS|BENCH)|TEST|BENCHMARKS?)$/;
    const model = all.find((m) => m.release.version === '6.2.2')!;
    const problems: string[] = [];
    for (const c of model.components) {
      const flags = Object.entries(c.spec.cmake?.defines ?? {})
        .filter(([name, v]) => CLIENTS.test(name) && typeof v === 'object')
        .map(([, v]) => (v as { use: string }).use);
      for (const d of c.spec.deps ?? []) {
        if (d.when && flags.includes(d.when) && d.classes.includes('DEPEND') && !d.classes.includes('RDEPEND')) {
          problems.push(`${c.atom}: ${d.when}? ( ${d.atom} ) is built against but not in RDEPEND`);
        }
      }
    }
    assert.deepEqual(problems, []);
  });

  it('no ebuild of any release depends on dev-python/pip or runs pip itself (Gentoo builds Python with the PEP 517 eclass or runs it from the tree; a virtualenv an upstream build makes has its own)', () => {
    const problems: string[] = [];
    for (const model of all) {
      for (const c of model.components) {
        const text = renderEbuild(c, model, { year: 2026 });
        if (/dev-python\/pip\b|\bpip install\b|-m pip\b/.test(text)) problems.push(`${model.release.version} ${c.atom}`);
      }
    }
    assert.deepEqual(problems, []);
  });

  it('bundles no library that ::gentoo packages (googletest is dev-cpp/gtest)', () => {
    // Upstream repositories of libraries ::gentoo has, and the package to use instead.
    const SYSTEM: Record<string, string> = { 'google/googletest': 'dev-cpp/gtest' };
    const problems: string[] = [];
    for (const model of all) {
      for (const c of model.components) {
        for (const src of c.spec.sources) {
          if (src.github && SYSTEM[src.github]) problems.push(`${model.release.version} ${c.atom}: bundles ${src.github}, use ${SYSTEM[src.github]}`);
        }
      }
    }
    assert.deepEqual(problems, []);
  });

  it('packages built against ffmpeg-compat use ffmpeg-compat.eclass instead of hand-rolled paths', () => {
    const model = all.find((m) => m.release.version === '6.2.2')!;
    const users = model.components.filter((c) => (c.spec.deps ?? []).some((d) => d.atom === 'media-video/ffmpeg-compat'));
    assert.ok(users.length >= 3);
    for (const c of users) {
      const text = renderEbuild(c, model, { year: 2026 });
      assert.match(text, /^inherit .*\bffmpeg-compat\b/m, c.atom);
      assert.match(text, /\tffmpeg_compat_setup \d+\n/, c.atom);
      assert.doesNotMatch(text, /PKG_CONFIG_PATH=|ffmpeg\d+\/\$\(get_libdir\)|\/usr\/lib\/ffmpeg\d/, c.atom);
      // The prefix, where CMake needs it, is the eclass's answer.
      if (/-DCMAKE_PREFIX_PATH=/.test(text)) assert.match(text, /-DCMAKE_PREFIX_PATH="\$\{SYSROOT\}\$\(ffmpeg_compat_get_prefix 4\)"/, c.atom);
    }
  });

  it('hip builds for exactly one platform, AMD for a user who changed nothing (VIDEO_CARDS of the default profile)', async () => {
    const { profileUseFlags } = await import('../../src/model/use-flags.js');
    const profile = profileUseFlags(all[0]!.manifest.stack.profile?.use_expand);
    assert.ok(profile.has('video_cards_amdgpu') && !profile.has('video_cards_nvidia'), "stack.yaml records the base profile's VIDEO_CARDS");
    for (const model of all) {
      const hip = model.byAtom.get('dev-util/hip')!;
      const text = renderEbuild(hip, model, { year: 2026 });
      assert.match(text, /\n\t\^\^ \( video_cards_amdgpu video_cards_nvidia \)\n/, model.release.version);
      assert.doesNotMatch(/^IUSE="(.*)"$/m.exec(text)![1]!, /\+video_cards_/, model.release.version);
      const enabled = (flags: string[]) => new Set(flags.filter((f) => f in (hip.spec.use ?? {})));
      for (const r of hip.spec.required_use ?? []) {
        assert.equal(evaluateRequiredUse(r, enabled([...profile])), undefined, `${model.release.version}: ${r}`);
      }
      // Both cards: the user picks one for hip, as with ::gentoo's hip.
      assert.ok((hip.spec.required_use ?? []).some((r) => evaluateRequiredUse(r, enabled([...profile, 'video_cards_nvidia'])) !== undefined));
    }
  });

  it('tools run while building are BDEPEND (hip-tests run rocm_agent_enumerator at configure time)', () => {
    const model = all.find((m) => m.release.version === '6.2.2')!;
    const rocminfo = model.byAtom.get('dev-util/hip')!.spec.deps!.find((d) => d.atom === 'dev-util/rocminfo')!;
    assert.deepEqual(rocminfo.classes, ['BDEPEND']);
  });

  it('every Python ebuild supports the targets Gentoo\'s profiles enable (python-any-r1 too)', async () => {
    const { braceExpand } = await import('../../src/lint/python-compat.js');
    const problems: string[] = [];
    for (const model of all) {
      for (const c of model.components.filter((x) => x.spec.python)) {
        const m = /^PYTHON_COMPAT=\( (.*) \)$/m.exec(renderEbuild(c, model, { year: 2026 }));
        const compat = (m?.[1] ?? '').split(/\s+/).flatMap(braceExpand);
        for (const t of model.manifest.stack.python.default) if (!compat.includes(t)) problems.push(`${model.release.version} ${c.atom}: ${t}`);
      }
    }
    assert.deepEqual(problems, []);
  });

  it("every LICENSE is in Gentoo's @FREE, so Portage's default ACCEPT_LICENSE installs the stack", async () => {
    const { nonFreeLicenses } = await import('../../src/lint/checks/license.js');
    const free = new Set(all[0]!.manifest.stack.licenses?.free ?? []);
    // The data lint holds LICENSE against: without it NonFreeLicense would be silent.
    assert.ok(free.has('MIT') && free.has('UoI-NCSA') && !free.has('NCSA-AMD'), 'stack.yaml records @FREE');
    const problems: string[] = [];
    for (const model of all) {
      for (const c of model.components) {
        const accepted = (c.spec.qa?.accept ?? []).some((a) => a.keyword === 'NonFreeLicense');
        const outside = nonFreeLicenses(c.spec.license, free);
        if (outside.length && !accepted) problems.push(`${model.release.version} ${c.atom}: ${outside.join(' ')}`);
      }
    }
    assert.deepEqual(problems, []);
  });

  it('every RESTRICT="test" says why in a comment right above it', () => {
    const problems: string[] = [];
    for (const model of all) {
      for (const c of model.components) {
        const lines = renderEbuild(c, model, { year: 2026 }).split('\n');
        const i = lines.findIndex((l) => l.startsWith('RESTRICT=') && /\btest\b/.test(l.replace('!test? ( test )', '')));
        if (i >= 0 && !lines[i - 1]!.startsWith('# ')) problems.push(`${model.release.version} ${c.atom}`);
      }
    }
    assert.deepEqual(problems, []);
  });

  it('an accepted QA finding is explained where a reviewer meets it (CPU flags above REQUIRED_USE)', () => {
    const model = all.find((m) => m.release.version === '6.2.2')!;
    const accepting = model.components.filter((c) => (c.spec.qa?.accept ?? []).length > 0);
    assert.ok(accepting.some((c) => c.atom === 'sci-libs/rpp'));
    assert.ok(accepting.some((c) => c.atom === 'media-libs/rocDecode'));
    for (const c of accepting) {
      const text = renderEbuild(c, model, { year: 2026 });
      for (const a of c.spec.qa!.accept) {
        if (a.keyword === 'RequiredUseDefaults') {
          assert.match(text, /\n# pkgcheck RequiredUseDefaults is expected: [^\n]*\n(# [^\n]*\n)*REQUIRED_USE=/, c.atom);
          assert.match(text, /CPU_FLAGS_X86/, `${c.atom}: say that users set CPU_FLAGS_X86`);
        } else if (a.keyword === 'UseChangeNeeded') {
          // Portage, not pkgcheck, stops there: the comment says what users set.
          const said = (/\n((?:# .*\n)+)DESCRIPTION=/.exec(text)?.[1] ?? '').replace(/\n# /g, ' ');
          assert.match(said, /Portage asks users to enable a flag of a ::gentoo package \(UseChangeNeeded\): .*package\.use/, c.atom);
        } else if (a.keyword === 'NonFreeLicense') {
          assert.match(text, /\n# Not in @FREE [^\n]*\n(# [^\n]*\n)*LICENSE=/, c.atom);
        } else {
          assert.match(text, new RegExp(`\\n# pkgcheck ${a.keyword} is expected: `), c.atom);
        }
      }
    }
  });

  it('the libraries with device code use rocm.eclass with targets, and their GPU dependencies share them', () => {
    const model = all.find((m) => m.release.version === '6.2.2')!;
    const withTargets = model.components.filter((c) => ['full', 'subset'].includes(c.spec.targets.mode));
    assert.ok(withTargets.length >= 20, `${withTargets.length} packages with amdgpu_targets`);
    for (const atom of ['sci-libs/rocBLAS', 'sci-libs/composable-kernel', 'sci-libs/miopen', 'sci-libs/rocFFT', 'sci-libs/rocRAND']) {
      assert.ok(withTargets.some((c) => c.atom === atom), `${atom} has no amdgpu_targets`);
    }
    const miopen = model.byAtom.get('sci-libs/miopen')!;
    const rocblas = miopen.spec.deps!.find((d) => d.atom === 'sci-libs/rocBLAS')!;
    assert.equal(rocblas.gpu, true, 'MIOpen must depend on rocBLAS[${ROCM_USEDEP}]');
  });

  it('every release: the package set of every GPU target resolves as the generated ebuilds read, and every package is in one', async () => {
    const { checkPackageSets } = await import('../../src/stack-check/package-set-check.js');
    const { packageSet } = await import('../../src/stack-check/package-set.js');
    const problems: string[] = [];
    for (const model of all) problems.push(...(await checkPackageSets(model)).map((r) => `${model.release.version} ${r.category}/${r.package}: ${r.keyword}: ${r.message}`));
    assert.deepEqual(problems, []);
    // What an RDNA2 user of 6.3.3 gets: not the Instinct-only libraries, nor what needs them.
    const rdna2 = packageSet(all.find((m) => m.release.version === '6.3.3')!, ['gfx1030']);
    for (const atom of ['sci-libs/hipBLASLt', 'sci-libs/hipSPARSELt', 'sci-libs/hipTensor', 'dev-util/rocm-validation-suite', 'dev-libs/hipother']) {
      assert.ok(rdna2.excluded.some((e) => e.atom === atom), atom);
    }
    assert.ok(rdna2.atoms.includes('sci-libs/miopen') && rdna2.atoms.includes('dev-util/hip'));
  });

  it('the package-set check reads the ebuilds: a member pulling in a package outside the set, and a package no target can use, are errors', async () => {
    const { checkPackageSets } = await import('../../src/stack-check/package-set-check.js');
    const model = all.find((m) => m.release.version === '6.3.3')!;
    const miopen = model.byAtom.get('sci-libs/miopen')!;
    const text = renderEbuild(miopen, model, { year: 2026 }).replace('RDEPEND="\n', 'RDEPEND="\n\tsci-libs/hipBLASLt:${SLOT}\n');
    const found = await checkPackageSets(model, new Map([[miopen.atom, text]]));
    assert.ok(found.some((r) => r.package === 'miopen' && r.keyword === 'PackageSetUnresolvable' && /set for gfx1030, but needs sci-libs\/hipBLASLt/.test(r.message)));
    // A library built for no target the release offers (its own list emptied).
    const tensor = model.byAtom.get('sci-libs/hipTensor')!;
    const saved = tensor.targets;
    tensor.targets = [];
    try {
      const none = await checkPackageSets(model);
      assert.ok(none.some((r) => r.package === 'hipTensor' && r.keyword === 'NoUsableTarget'));
    } finally {
      tensor.targets = saved;
    }
  });

  it('composable-kernel honours the selected targets and turns on DL kernels only where needed', () => {
    const model = all.find((m) => m.release.version === '6.2.2')!;
    const ck = model.byAtom.get('sci-libs/composable-kernel')!;
    assert.equal(ck.spec.compiler, 'hip-lang');
    // INSTANCES_ONLY=ON would build every default target whatever GPU_TARGETS says.
    const text = renderEbuild(ck, model, { year: 2026 });
    assert.doesNotMatch(text, /-DINSTANCES_ONLY=ON/);
    assert.match(text, /\n\tif ! use test; then\n\t\tmycmakeargs\+=\( -DINSTANCES_ONLY=OFF \)\n\tfi\n/);
    assert.match(text, /-DGPU_TARGETS="\$\(get_amdgpu_flags/);
    assert.match(text, /-DCMAKE_HIP_ARCHITECTURES="\$\(get_amdgpu_flags ";"\)"/);
    assert.match(text, /\trocm_use_clang\n/);
    if (ck.targets.includes('gfx1030')) assert.match(text, /\tif use amdgpu_targets_gfx1030; then\n\t\tmycmakeargs\+=\( -DDL_KERNELS=ON \)\n\tfi\n/);
    const dl = ck.spec.cmake?.target_defines?.find((t) => t.name === 'DL_KERNELS');
    assert.ok(dl, 'no DL_KERNELS rule');
    assert.equal(dl.value, 'ON');
    assert.equal(ck.spec.cmake?.defines?.DL_KERNELS, undefined, 'DL_KERNELS is tested with if(DEFINED): never pass it unconditionally');
  });
});
