import { strict as assert } from 'node:assert';
import { carries, parseUnifiedDiff, sedEdit, signature } from '../../src/upstream/peers/edits.js';
import { normaliseValue, readEbuild } from '../../src/upstream/peers/gentoo.js';
import { SpackEvaluator, show } from '../../src/upstream/peers/python-eval.js';
import { parsePython, PythonSyntaxError } from '../../src/upstream/peers/python-parse.js';
import { PeerReadError } from '../../src/upstream/peers/read-error.js';
import { decideResidues } from '../../src/upstream/peers/spack.js';
import { decideSpec, versionSatisfies } from '../../src/upstream/peers/spack-spec.js';
import { firstBadUtf8 } from '../../src/upstream/trees/local-dir.js';

/** The parts that read peers' recipes, each on text written for the test. */
describe('upstream peer: reading recipes', () => {
  describe('Python, read and never run', () => {
    const run = (src: string, version = '7.2.0') => {
      const ev = new SpackEvaluator({ version, source: src });
      ev.runModule(parsePython(src), () => true);
      return ev;
    };

    it('parses what recipes are written in: decorators, f-strings in f-strings, implicit joins, with-blocks, comprehensions', () => {
      const src = [
        'import os',
        'from spack.package import *',
        'class P(CMakePackage):',
        '    """doc"""',
        '    x = ("a" "b"',
        '         f"{1 + 2}-{\'q\'}")',
        '    @property',
        '    def root(self):',
        '        return [v for v in range(3) if v]',
        '    with when("+a"), working_dir("d"):',
        '        pass',
        '    def f(self, *args, **kw) -> str:',
        '        return f"{self.spec.version.up_to(2)}{x!r:>3}"',
        '',
      ].join('\n');
      const ev = run(src);
      assert.equal(show(ev.classAttrs.get('x')!), 'ab3-q');
      assert.equal(show(ev.callMethod('f')!), '7.2{x}');
    });

    it('refuses nesting no recipe has, with the line and column, instead of exhausting the stack', () => {
      const deep = `x = ${'['.repeat(5000)}${']'.repeat(5000)}\n`;
      assert.throws(() => parsePython(deep), (e: unknown) => e instanceof PythonSyntaxError && /nested more than 100 deep/.test(e.message) && e.line === 1);
      const blocks = Array.from({ length: 300 }, (_, i) => `${' '.repeat(i)}if x:\n`).join('') + `${' '.repeat(300)}pass\n`;
      assert.throws(() => parsePython(blocks), (e: unknown) => e instanceof PythonSyntaxError && /nested more than 100 deep/.test(e.message));
      const fstrings = `x = ${'f"{'.repeat(200)}1${'}"'.repeat(200)}\n`;
      assert.throws(() => parsePython(fstrings), PythonSyntaxError);
    });

    it('never runs what a recipe calls: imports, exec, os.system and open are unknown values, recorded as such', () => {
      const src = [
        'import os',
        '__import__("os").system("touch /tmp/never")',
        'class P(Package):',
        '    exec("import os; os.system(\'touch /tmp/never\')")',
        '    eval("1")',
        '    os.system("rm -rf /")',
        '    version("7.2.0", sha256="0")',
        '    def cmake_args(self):',
        '        open("/tmp/never", "w").write("x")',
        '        return [self.define("A", os.environ["HOME"]), subprocess.check_output(["id"])]',
        '',
      ].join('\n');
      const ev = run(src);
      const args = ev.callMethod('cmake_args')!;
      assert.equal(args.k, 'list');
      assert.deepEqual(args.k === 'list' ? args.items.map((i) => show(i.v)) : [], ['-DA={os.environ["HOME"]}', '{subprocess.check_output(["id"])}']);
      assert.deepEqual(ev.directives.map((d) => d.name), ['version']);
    });

    it('walks both branches of a test the version does not decide, each under its condition; bounds loops and recursion', () => {
      const src = [
        'class P(Package):',
        '    def cmake_args(self):',
        '        args = [self.define("A", True)]',
        '        if self.spec.satisfies("@7.2:"):',
        '            args.append(self.define("NEW", "ON"))',
        '        elif self.spec.satisfies("@:7.0"):',
        '            args.append(self.define("OLD", "ON"))',
        '        if "+asan" in self.spec:',
        '            args.append("-DASAN=ON")',
        '        else:',
        '            args.extend(["-DNOASAN=ON"])',
        '        return args',
        '    def loop(self):',
        '        while True:',
        '            self.loop()',
        '        return self.loop()',
        '',
      ].join('\n');
      const ev = run(src, '7.2.0');
      const args = ev.callMethod('cmake_args')!;
      assert.deepEqual(
        args.k === 'list' ? args.items.map((i) => `${show(i.v)} [${i.conds.join(', ')}]`) : [],
        ['-DA=True []', '-DNEW=ON []', '-DASAN=ON [+asan]', '-DNOASAN=ON [not (+asan)]'],
      );
      assert.match(show(ev.callMethod('loop')!), /nested too deep|budget/);
    });

    it('decides `when=` for a version: ranges, lists, exact versions; leaves variants and dependencies as the residue', () => {
      assert.equal(versionSatisfies('7.2.0', '7.2:'), true);
      assert.equal(versionSatisfies('7.1.1', ':7.1'), true, '7.1.1 is under 7.1');
      assert.equal(versionSatisfies('7.2.0', ':7.1'), false);
      assert.equal(versionSatisfies('6.4.3', '6.1:6.3,6.4.1:'), true);
      assert.equal(versionSatisfies('7.2.0', '=7.2'), false);
      assert.equal(decideSpec('@7.0 +asan', '7.2.0'), false);
      assert.deepEqual(decideSpec('@7: +asan ^cmake@3.21', '7.2.0'), { residue: '+asan ^cmake@3.21' });
      assert.equal(decideSpec('@7.2.0', '7.2.0'), true);
    });

    it("takes a variant by our USE flag of that name, else by its default; a compiler or OS condition is set aside", () => {
      const defaults = new Map<string, boolean | string>([['asan', false], ['optimal', true]]);
      const flags = new Set(['test', 'benchmark', 'video_cards_amdgpu']);
      assert.deepEqual(decideResidues(['+benchmark'], '7.2.0', flags, defaults), { when: ['benchmark'] });
      assert.deepEqual(decideResidues(['+rocm'], '7.2.0', flags, defaults), { when: ['video_cards_amdgpu'] });
      assert.equal(decideResidues(['+asan'], '7.2.0', flags, defaults), false);
      assert.deepEqual(decideResidues(['+optimal', 'self.run_tests'], '7.2.0', flags, defaults), { when: ['test'] });
      assert.deepEqual(decideResidues(['@7.2: amdgpu_target={tgt}'], '7.2.0', flags, defaults), { when: [] });
      assert.ok('skip' in (decideResidues(['%gcc@13'], '7.2.0', flags, defaults) as object));
      assert.ok('skip' in (decideResidues(['satisfies("^cmake@3.21.0:3.21.2")'], '7.2.0', flags, defaults) as object));
    });
  });

  describe('edits: the same change, whatever writes it', () => {
    it('a sed replacement and a patch of the same line carry each other; a different change on the same file does not', () => {
      const sed = sedEdit(['s|\\(target_link_libraries(foo \\)PRIVATE|\\1PUBLIC|']);
      const patch = parseUnifiedDiff('--- a/CMakeLists.txt\n+++ b/CMakeLists.txt\n@@ -1,2 +1,2 @@\n project(x)\n-target_link_libraries(foo PRIVATE bar)\n+target_link_libraries(foo PUBLIC bar)\n');
      assert.equal(patch[0]!.path, 'CMakeLists.txt');
      assert.ok(carries(signature([sed]), signature(patch)));
      assert.ok(carries(signature(patch), signature([sed])));
      const other = sedEdit(['/target_link_libraries/d']);
      assert.equal(carries(signature([other]), signature(patch)), false);
    });

    it('reads sed scripts as GNU sed does: addresses select, a/i/c add text, & and groups repeat the match', () => {
      assert.deepEqual(sedEdit(['/^project/a\\  include(GNUInstallDirs)']), { removes: [], adds: ['  include(GNUInstallDirs)'], opaque: [] });
      assert.deepEqual(sedEdit(['s:/opt/rocm:${EPREFIX}/usr:g']).adds, ['${EPREFIX}/usr']);
      assert.deepEqual(sedEdit(['s/foo/&-bar/']).adds, ['foo-bar']);
      assert.deepEqual(sedEdit(['\\|CMAKE_INSTALL_DOCDIR}-asan|d']).removes, ['CMAKE_INSTALL_DOCDIR}-asan']);
      assert.deepEqual(sedEdit(['1,5d']).opaque, ['<line 1> <line 5>d']);
      // -e scripts are one script, line by line: i\'s text runs on through each -e ending in a backslash.
      assert.deepEqual(sedEdit(['/^local:/i\\', 'hsaKmtCreateQueueExt;\\', 'hsaKmtModelEnabled;']), {
        removes: [],
        adds: ['hsaKmtCreateQueueExt;\nhsaKmtModelEnabled;'],
        opaque: [],
      });
      assert.deepEqual(sedEdit(['/a/d', 's/x/y/']), { removes: ['a', 'x'], adds: ['y'], opaque: [] });
    });

    it('reads a diff with prose around it, several sections of one file, and files created or deleted', () => {
      const files = parseUnifiedDiff(
        'Subject: fix\n\nSome prose\n--- a/a.c\n+++ b/a.c\n@@ -1 +1 @@\n-x\n+y\n--- /dev/null\n+++ b/new.h\n@@ -0,0 +1 @@\n+#pragma once\n--- a/a.c\n+++ b/a.c\n@@ -9 +9 @@\n-p\n+q\n-- \n2.40\n',
      );
      assert.deepEqual(
        files.map((f) => [f.path, f.removes, f.adds, f.whole]),
        [
          ['a.c', ['x', 'p'], ['y', 'q'], undefined],
          ['new.h', [], ['#pragma once'], 'create'],
        ],
      );
    });

    it('reads an a\\ whose text is the next -e script, as GNU sed joins them, and skips comments', () => {
      // The form our own `insert` renders: the text begins with "#", which is not a command.
      const insert = sedEdit(['0,/^#pragma once/{', '/^#pragma once/a\\', '#include <new>', '}']);
      assert.deepEqual(insert, { removes: [], adds: ['#include <new>'], opaque: [] });
      const patch = parseUnifiedDiff('--- a/h.hpp\n+++ b/h.hpp\n@@ -1,2 +1,4 @@\n #pragma once\n+\n+#include <new>\n \n');
      assert.ok(carries(signature([insert]), signature(patch)));
      assert.deepEqual(sedEdit(['# drop the flag', 's/-Werror//']), { removes: ['-Werror'], adds: [''], opaque: [] });
    });
  });

  describe('ebuilds, read and never sourced', () => {
    const read = (text: string) =>
      readEbuild({ text, file: 'cat/pkg/pkg-7.2.0.ebuild', category: 'cat', pn: 'pkg', version: '7.2.0', requested: '7.2.0', nearest: false, peer: 'gentoo', readPatch: async () => undefined, patchFile: (n) => n });

    it('follows globals through version tests, seds through pushd and USE conditions, and options through use &&', async () => {
      const r = await read(
        [
          'EAPI=8',
          'if [[ ${PV} == *9999 ]]; then',
          '\tS="${WORKDIR}/${P}"',
          'else',
          '\tSRC_URI="https://github.com/ROCm/pkg/archive/rocm-${PV}.tar.gz -> ${P}.tar.gz test? ( https://example.org/${P}-data.tar.xz )"',
          '\tS="${WORKDIR}/pkg-rocm-${PV}/"',
          'fi',
          'OTHER_S="${WORKDIR}/other"',
          'LLVM_COMPAT=( {20..21} )',
          'RESTRICT="mirror !test? ( test )"',
          'RDEPEND="|| ( dev-libs/a dev-libs/b ) foo? ( >=dev-util/hip-7.2:${SLOT}= )"',
          'DEPEND="${RDEPEND} !dev-libs/old"',
          'src_prepare() {',
          '\tpushd "${OTHER_S}" >/dev/null || die',
          '\tsed -i -e "s/-Werror//" CMakeLists.txt || die',
          '\tpopd >/dev/null || die',
          '\tif use test && ! use foo; then',
          '\t\tsed -e "/add_subdirectory(bench)/d" -i tests/CMakeLists.txt || die',
          '\tfi',
          '}',
          'src_configure() {',
          '\tlocal mycmakeargs=( -DA="$(usex foo)" -DB=yes -Wno-dev )',
          '\tuse bar && mycmakeargs+=( -DC=1 )',
          '}',
        ].join('\n'),
      );
      assert.equal(r.s?.dir, 'pkg-rocm-7.2.0');
      assert.deepEqual(r.sources.map((s) => [s.url, s.distfile, s.when]), [
        ['https://github.com/ROCm/pkg/archive/rocm-7.2.0.tar.gz', 'pkg-7.2.0.tar.gz', []],
        ['https://example.org/pkg-7.2.0-data.tar.xz', 'pkg-7.2.0-data.tar.xz', ['test']],
      ]);
      assert.deepEqual(r.llvm?.slots, ['20', '21']);
      assert.equal(r.tests?.restrict, '!test? ( test )');
      assert.deepEqual(r.deps.map((d) => `${d.blocker ? '!' : ''}${d.atom} ${d.classes.join()} [${d.when.join(' ')}] ${d.slot} ${d.version ?? ''}`.trim()), [
        'dev-libs/a RDEPEND [||]',
        'dev-libs/b RDEPEND [||]',
        'dev-util/hip RDEPEND [foo] :${SLOT}= >=7.2',
        'dev-libs/a DEPEND [||]',
        'dev-libs/b DEPEND [||]',
        'dev-util/hip DEPEND [foo] :${SLOT}= >=7.2',
        '!dev-libs/old DEPEND []',
      ]);
      assert.deepEqual(r.fixups.map((f) => [f.id, f.when, f.edits.map((e) => e.path)]), [
        ['sed ${WORKDIR}/other/CMakeLists.txt', [], ['other/CMakeLists.txt']],
        ['sed tests/CMakeLists.txt', ['test', '!foo'], ['pkg-rocm-7.2.0/tests/CMakeLists.txt']],
      ]);
      assert.deepEqual(r.cmake.map((c) => `${c.name}=${c.value} [${c.when.join(' ')}]`), ['A=$(usex foo ON OFF) []', 'B=ON []', '-Wno-dev= []', 'C=ON [bar]']);
      assert.equal(normaliseValue('"$(usex test yes no)"'), '$(usex test ON OFF)');
    });

    it('refuses statements nested deeper than any ebuild, naming the line', async () => {
      const deep = `src_prepare() {\n${'if use a; then\n'.repeat(400)}true\n${'fi\n'.repeat(400)}}\n`;
      await assert.rejects(read(deep), (e: unknown) => e instanceof PeerReadError && /nested more than 200 deep/.test(e.message) && /cat\/pkg\/pkg-7\.2\.0\.ebuild:\d+:\d+/.test(e.message));
    });
  });

  it('says where text stops being UTF-8, as line and column', () => {
    assert.equal(firstBadUtf8(Buffer.from('ok\nstill ok é\n')), undefined);
    assert.deepEqual(firstBadUtf8(Buffer.concat([Buffer.from('ab\ncd'), Buffer.from([0xc3, 0x28])])), { offset: 5, line: 2, column: 3 });
    assert.deepEqual(firstBadUtf8(Buffer.from([0xed, 0xa0, 0x80])), { offset: 0, line: 1, column: 1 }, 'a surrogate is not UTF-8');
  });
});
