import { strict as assert } from 'node:assert';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { removeDir, runCli, tempDir } from '../helpers/project.js';
import { evaluateWord, globToRegExp } from '../../src/upstream/replay/bash-words.js';
import { changedLines, onlyDeletes, parseSedArgs, runSed } from '../../src/upstream/replay/sed-command.js';
import type { PatchesReport } from '../../src/upstream/replay/patches.js';
import { stackCopy, universe, type Universe } from './support.js';

describe('upstream patches', function () {
  this.timeout(180_000);
  let u: Universe;
  let dir: string;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    u = await universe();
    dir = await tempDir('rocm-ebuild-patches-');
    env = { XDG_CACHE_HOME: path.join(dir, 'cache') };
  });
  after(() => removeDir(dir));

  /** `upstream patches 6.3.3 gpulib` on a copy of the stack, against the local upstream. */
  const patchesOfGpulib = (stack: string) => runCli(['upstream', 'patches', '6.3.3', 'gpulib', '--manifest', stack, '--base-url', u.baseUrl], { env });
  /** The report's fix-up lines, indentation and column padding squeezed. */
  const reportLines = (stdout: string) => stdout.split('\n').filter((l) => l.startsWith('  ')).map((l) => l.trim().replace(/\s+/g, ' '));

  describe('reading sed command lines', () => {
    it('understands clustered and long options as GNU sed does', () => {
      assert.deepEqual(parseSedArgs(['-i', '-e', 's/a/b/', '-e', '/x/d', 'f1', 'f2']), { scripts: ['s/a/b/', '/x/d'], files: ['f1', 'f2'], extended: false, quiet: false, nullData: false, separate: false });
      assert.deepEqual(parseSedArgs(['-Ei', 's/(a)/\\1/', 'f'])!, { scripts: ['s/(a)/\\1/'], files: ['f'], extended: true, quiet: false, nullData: false, separate: false });
      // -ie is "-i with backup suffix e", not "-i -e": the script is then the first operand.
      assert.deepEqual((parseSedArgs(['-ie', 's/a/b/', 'f']) as { scripts: string[]; files: string[] }).files, ['f']);
      assert.deepEqual((parseSedArgs(['--in-place=.bak', '--expression=s/a/b/', '--regexp-extended', '--', '-odd-name']) as { files: string[]; extended: boolean }).files, ['-odd-name']);
      assert.deepEqual((parseSedArgs(['-ne', 's/a/b/p', '-i', 'f']) as { quiet: boolean }).quiet, true);
      assert.equal(parseSedArgs(['-e', 's/a/b/', 'f']), undefined); // a filter, not an edit
      assert.deepEqual(parseSedArgs(['-i', '-f', 'script.sed', 'f']), { error: 'sed -f reads its script from a file, which is not replayed' });
    });

    it('runs scripts in GNU sed sandbox mode: no command execution, no file writes', async () => {
      const marker = path.join(dir, 'written-by-sed');
      const exec = await runSed({ scripts: [`s/x/touch ${marker}/e`], extended: false, quiet: false, nullData: false, separate: false }, Buffer.from('x\n'));
      assert.ok('error' in exec, 'the e flag is refused');
      const write = await runSed({ scripts: [`w ${marker}`], extended: false, quiet: false, nullData: false, separate: false }, Buffer.from('x\n'));
      assert.ok('error' in write);
      assert.ok(!existsSync(marker));
      const ok = await runSed({ scripts: ['s|/opt/rocm|/usr|g'], extended: false, quiet: false, nullData: false, separate: false }, Buffer.from('/opt/rocm /opt/rocm\nkeep\n'));
      assert.deepEqual(ok, { output: Buffer.from('/usr /usr\nkeep\n') });
    });

    it('counts changed lines and recognises deletion-only scripts', () => {
      assert.equal(changedLines('a\nb\nc\n', 'a\nB\nc\n'), 1);
      assert.equal(changedLines('a\nb\nc\nb\n', 'a\nc\n'), 2);
      assert.equal(changedLines('same', 'same'), 0);
      assert.ok(onlyDeletes(['/^#pragma x/d', '\\|-Werror|d']));
      assert.ok(onlyDeletes(['/a/d;/b/d', '12d', '$d']));
      assert.ok(!onlyDeletes(['s/a/b/']));
      assert.ok(!onlyDeletes(['/a/d', 's/x/y/']));
    });
  });

  describe('expanding words without a shell', () => {
    const env = new Map([
      ['EPREFIX', ''],
      ['PV', '6.3.3'],
      ['S', '/S'],
    ]);
    it('handles quotes, escapes and known variables', () => {
      assert.deepEqual(evaluateWord(`"s|\\"\\$ROCM_PATH|\${EPREFIX}/usr|"`, env), { ok: true, value: 's|"$ROCM_PATH|/usr|', glob: false });
      assert.deepEqual(evaluateWord(`'\${S}/x'"\${S}"/y\\ z`, env), { ok: true, value: '${S}/x/S/y z', glob: false });
      assert.deepEqual(evaluateWord('cmake/*.cmake', env), { ok: true, value: 'cmake/*.cmake', glob: true });
      assert.deepEqual(evaluateWord('"$(get_libdir)"', env, { get_libdir: 'lib64' }), { ok: true, value: 'lib64', glob: false });
    });
    it('refuses what would run code or needs state the replay has not', () => {
      const marker = path.join(dir, 'ran');
      for (const [word, reason] of [
        [`"$(touch ${marker})"`, /runs a command/],
        [`\`touch ${marker}\``, /runs a command/],
        ['"${UNKNOWN}"', /not known to the replay/],
        ['"${PV:-1}"', /expansion operator/],
        ['"$1"', /shell parameter/],
        ['{a,b}.c', /brace expansion/],
        ['"unterminated', /unterminated double quote/],
      ] as const) {
        const r = evaluateWord(word, env);
        assert.ok(!r.ok && reason.test(r.reason), `${word}: ${JSON.stringify(r)}`);
      }
      assert.ok(!existsSync(marker));
    });
    it('matches globs per path segment', () => {
      assert.ok(globToRegExp('cmake/*.cmake').test('cmake/a.cmake'));
      assert.ok(!globToRegExp('cmake/*.cmake').test('cmake/sub/a.cmake'));
      assert.ok(globToRegExp('src/[ab]?.c').test('src/bx.c'));
    });
  });

  it('replays every fix-up on the new tree, one line each with the file and the reason (exit 6)', async () => {
    const stack = stackCopy();
    const r = await patchesOfGpulib(stack);
    assert.equal(r.code, 6, r.stderr);
    const lines = reportLines(r.stdout);
    assert.deepEqual(lines, [
      'upstream CMakeLists.txt prepare[0] replace " -Werror": the text it removes is gone',
      'differs src/config.h prepare[1] replace "/opt/rocm": 3 matches, 1 before',
      'upstream cmake/paths.cmake prepare[2] replace "/opt/rocm/bin/hipcc": "hipcc" is already there',
      'fails src/legacy.c prepare[3] replace "foo": the file is gone (sed -i would die)',
      'fails CMakeLists.txt prepare[4] replace "DESTINATION share/doc/gpulib": no match (1 match before): the code changed',
      'applies CMakeLists.txt prepare[5] delete_lines "^ add_subdirectory(test)": 1 line changed',
      'upstream cmake/Warnings.cmake prepare[6] delete_lines "-Werror": the lines it deletes are gone',
      'upstream third_party/bundled-gtest prepare[7] remove: the path is gone: drop the fix-up (rm -r would die)',
      'applies extern/json prepare[8] remove: the path exists',
      'applies test/CMakeLists.txt prepare[9] replace "gtest_main": 1 match (only with USE=test)',
      'applies "${S}/gpulib.pc.in" phases.src_prepare.after, line 2 sed -e "s|@ROCM_PATH@|/usr|g": 1 line changed',
      'applies cmake/*.cmake phases.src_prepare.after, line 3 sed -e "s|/opt/rocm/llvm/bin|/usr/lib/llvm/bin|": 1 line changed',
      'applies "${data}/setup.sh" phases.src_prepare.after, line 4 sed -e "s|lib/llvm|lib64/llvm|": 1 line changed',
      'skipped src/config.h phases.src_prepare.after, line 5 sed (src_prepare.after): cannot replay: $(date +%s) runs a command',
      'upstream src/config.h phases.src_prepare.after, line 6 sed -e "/^#pragma once_legacy/d": the lines it deletes are gone',
      'skipped "${ED}/usr/share/gpulib/env.sh" phases.src_install.after, line 1 sed -e "s|/opt/rocm|/usr|": ${ED} is not a source tree',
    ]);
    assert.match(r.stdout, /^6 apply, 1 apply differently, 5 already upstream, 2 fail, 2 not replayed$/m);
  });

  it('replays each fix-up on what those before it left, in the order the ebuild runs them', async () => {
    const stack = stackCopy();
    const file = path.join(stack, 'components', 'gpulib.yaml');
    const head = (await readFile(file, 'utf8')).split('\nprepare:\n')[0]!;
    await writeFile(
      file,
      `${head}
prepare:
  # The second replaces what the first wrote: no match in the release's own text.
  - replace: { files: [src/config.h], from: '"/opt/rocm"', to: '"/usr/lib/rocm"' }
  - replace: { files: [src/config.h], from: '"/usr/lib/rocm"', to: '"\${EPREFIX}/usr"' }
  - remove: [extern]
phases:
  src_prepare:
    # Runs before the prepare list: the text it edits is the release's.
    before: |
      sed -i -e 's|^#pragma once$|#pragma once // gpulib|' src/config.h || die
    after: |
      sed -i -e 's|// gpulib|// gpulib, edited|' src/config.h || die
      sed -i -e 's|a|b|' extern/json/json.hpp || die
`,
    );
    const r = await patchesOfGpulib(stack);
    const lines = reportLines(r.stdout);
    assert.deepEqual(lines, [
      'applies src/config.h prepare[0] replace "\\"/opt/rocm\\"": 1 match',
      'applies src/config.h prepare[1] replace "\\"/usr/lib/rocm\\"": 1 match',
      'applies extern prepare[2] remove: the path exists',
      'applies src/config.h phases.src_prepare.before, line 1 sed -e "s|^#pragma once$|#pragma once // gpulib|": 1 line changed',
      'applies src/config.h phases.src_prepare.after, line 1 sed -e "s|// gpulib|// gpulib, edited|": 1 line changed',
      'fails extern/json/json.hpp phases.src_prepare.after, line 2 sed -e "s|a|b|": the file is gone (sed -i would die)',
    ]);
    assert.equal(r.code, 6, r.stderr);
  });

  it('replays insert, first-only replacements and skip_missing; says why a patch fetched by URL is not replayed', async () => {
    const stack = stackCopy();
    const file = path.join(stack, 'components', 'gpulib.yaml');
    const head = (await readFile(file, 'utf8')).split('\nprepare:\n')[0]!;
    await writeFile(
      file,
      `${head}
patches:
  - url: https://github.com/ROCm/gpulib/commit/0123456789abcdef0123456789abcdef01234567.patch
    distfile: gpulib-6.3.3-0123456.patch
    reason: upstream's fix for a newer compiler
prepare:
  # Three paths in the file: only the first is changed, the next fix-up meets the other two.
  - replace: { files: [src/config.h], from: /opt/rocm, to: '\\\${CMAKE_INSTALL_PREFIX}', first: true }
  - replace: { files: [src/config.h], from: '"/opt/rocm/', to: '"/usr/' }
  - insert: { files: [CMakeLists.txt], after: "^project(", lines: [include(GNUInstallDirs), 'set(P "\${EPREFIX}/usr")'] }
  - insert: { files: [CMakeLists.txt], before: "^find_package(", lines: ['# found'], first: true }
  - insert: { files: [CMakeLists.txt], after: "^not_in_the_file(", lines: ['x'] }
  - insert: { files: [CMakeLists.txt], before: "^option(GONE", lines: [include(GNUInstallDirs)] }
  - replace: { files: [src/legacy.c, src/config.h], from: '#pragma once', to: '#pragma once // gpulib', skip_missing: true }
`,
    );
    const r = await patchesOfGpulib(stack);
    const lines = reportLines(r.stdout);
    assert.deepEqual(lines, [
      'skipped gpulib-6.3.3-0123456.patch patches[0] patch gpulib-6.3.3-0123456.patch: cannot replay a patch fetched by URL offline (https://github.com/ROCm/gpulib/commit/0123456789abcdef0123456789abcdef01234567.patch); the ebuild\'s prepare phase checks that it applies',
      // 6.2.2's config.h has one path: counts compare with it.
      'differs src/config.h prepare[0] replace "/opt/rocm" (first): 3 matches, 1 before',
      'differs src/config.h prepare[1] replace "\\"/opt/rocm/": 2 matches, 0 before',
      'applies CMakeLists.txt prepare[2] insert after "^project(": 1 matching line',
      'applies CMakeLists.txt prepare[3] insert before "^find_package(" (first): 1 matching line',
      'fails CMakeLists.txt prepare[4] insert after "^not_in_the_file(": no match',
      // The line the insertion before it wrote is there already: the aim is met.
      'upstream CMakeLists.txt prepare[5] insert before "^option(GONE": the lines are already there',
      'skipped src/legacy.c prepare[6] replace "#pragma once": the file is absent; skip_missing lets the ebuild go on without it',
      'differs src/config.h prepare[6] replace "#pragma once": 1 match, 2 before',
    ]);
    assert.equal(r.code, 6, r.stderr);
  });

  it('--json keeps the exit code; Markdown lists what needs attention', async () => {
    const stack = stackCopy();
    const j = await runCli(['upstream', 'patches', '6.3.3', 'gpulib', '--json', '--manifest', stack, '--base-url', u.template], { env });
    assert.equal(j.code, 6);
    const report = JSON.parse(j.stdout) as PatchesReport;
    assert.equal(report.against, '6.2.2');
    assert.deepEqual(report.counts, { applies: 6, differs: 1, upstream: 5, fails: 2, skipped: 2, unreadable: 0 });
    const differs = report.components[0]!.lines.find((l) => l.status === 'differs')!;
    assert.deepEqual([differs.count, differs.previous], [3, 1]);
    const md = await runCli(['upstream', 'patches', '6.3.3', 'gpulib', '--format', 'markdown', '--manifest', stack, '--base-url', u.template], { env });
    assert.match(md.stdout, /^### Fix-ups replayed on 6\.3\.3 \(compared with 6\.2\.2\)$/m);
    assert.match(md.stdout, /^- \*\*fails\*\* `src\/legacy\.c` prepare\[3\] `replace "foo"`: the file is gone/m);
    assert.doesNotMatch(md.stdout, /\*\*applies\*\*/);
  });

  it('on the release the data was written for, everything applies (exit 0)', async () => {
    const stack = stackCopy();
    // Against itself nothing can differ; 6.2.2's trees hold every text the fix-ups look for.
    const r = await runCli(['upstream', 'patches', '6.2.2', 'gpulib', '--json', '--manifest', stack, '--base-url', u.baseUrl, '--against', '6.3.3'], { env });
    const report = JSON.parse(r.stdout) as PatchesReport;
    const bad = report.components[0]!.lines.filter((l) => !['applies', 'differs', 'skipped'].includes(l.status));
    assert.deepEqual(bad.map((l) => `${l.fixup} ${l.file}: ${l.reason}`), []);
    assert.equal(r.code, 0, r.stderr);
  });

  it('never runs phase code: a command substitution in a sed argument is reported, not executed', async () => {
    const stack = stackCopy();
    const marker = path.join(dir, 'pwned');
    const file = path.join(stack, 'components', 'gpulib.yaml');
    const text = await readFile(file, 'utf8');
    await writeFile(file, text.replace('sed -i -e "s|/opt/rocm|$(date +%s)|" src/config.h || die', `sed -i -e "s|a|b|" "$(touch ${marker})" || die`));
    const r = await patchesOfGpulib(stack);
    assert.equal(r.code, 6);
    assert.match(r.stdout, /skipped .*cannot replay: \$\(touch .*pwned\) runs a command/);
    assert.ok(!existsSync(marker));
  });

  it('a source that cannot be read is reported once per component (exit 5)', async () => {
    const stack = stackCopy();
    const r = await runCli(['upstream', 'patches', '6.3.3', '--manifest', stack, '--base-url', `file://${path.join(dir, 'nowhere')}`], { env });
    assert.equal(r.code, 5);
    assert.match(r.stdout, /^ {2}unreadable +\d+ fix-ups not replayed: ROCm\/gpulib: no git repository at .*nowhere\/ROCm\/gpulib$/m);
  });
});
