import { strict as assert } from 'node:assert';
import { mkdir, rename, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ManifestIssue } from '../../src/manifest/issues.js';
import { validateManifest } from '../../src/stack-check/index.js';
import { fixtureManifest, patchedComponent } from '../helpers/fixture-manifest.js';
import { removeDir, runCli, tempDir } from '../helpers/project.js';

const COMPONENT = patchedComponent(`  - file: patched-fix.patch
    reason: the fix this release needs
    releases: { from: "6.3.0" }
`);
const GOOD = 'Fix the build.\n\n--- a/CMakeLists.txt\n+++ b/CMakeLists.txt\n@@ -1 +1 @@\n-project(patched)\n+project(patched LANGUAGES CXX)\n';

/**
 * Our patch files are what reaches every overlay's files/: validate checks
 * each where the component lists it (file:line:column, the JSON path, a fix)
 * and, for a problem in the text, at the patch file's own line too.
 */
describe('manifest: patch files shipped next to the manifest', function () {
  this.timeout(120_000);
  const made: string[] = [];
  after(async () => {
    for (const d of made) await removeDir(d);
  });

  async function issues(patch: string | Buffer | null, setup?: (dir: string) => Promise<void>, component = COMPONENT): Promise<{ dir: string; issues: ManifestIssue[] }> {
    const dir = await fixtureManifest({ 'components/patched.yaml': component });
    made.push(dir);
    await mkdir(path.join(dir, 'patches', 'patched'), { recursive: true });
    if (patch !== null) await writeFile(path.join(dir, 'patches', 'patched', 'patched-fix.patch'), patch);
    await setup?.(dir);
    return { dir, issues: (await validateManifest(path.join(dir, 'stack.yaml'))).issues };
  }
  const listed = (dir: string, i: ManifestIssue) => `${path.relative(dir, i.file)}:${i.line}:${i.column}: ${i.path}: ${i.message}`;

  it('accepts a unified diff of our own, and applies it only from the releases it names', async () => {
    const { dir, issues: found } = await issues(GOOD);
    assert.deepEqual(found, []);
    const r622 = await runCli(['render', 'dev-libs/patched', '--version', '6.2.2', '--manifest', dir]);
    assert.doesNotMatch(r622.stdout, /PATCHES/);
    const r630 = await runCli(['render', 'dev-libs/patched', '--version', '6.3.0', '--manifest', dir]);
    assert.match(r630.stdout, /\nPATCHES=\(\n\t# the fix this release needs\n\t"\$\{FILESDIR\}\/patched-fix\.patch"\n\)\n/);
  });

  it('refuses a missing file, a symbolic link (the file or a directory on its way) and a file outside the manifest, where it is listed', async () => {
    const missing = await issues(null);
    assert.deepEqual(missing.issues.map((i) => listed(missing.dir, i)), ['components/patched.yaml:10:11: $.patches[0].file: patch patched-fix.patch: patches/patched/patched-fix.patch does not exist']);
    assert.match(missing.issues[0]!.hint!, /put it at .*patches\/patched\/patched-fix\.patch/);

    const outside = await tempDir('rocm-ebuild-outside-');
    made.push(outside);
    await writeFile(path.join(outside, 'x.patch'), GOOD);
    const linked = await issues(null, (dir) => symlink(path.join(outside, 'x.patch'), path.join(dir, 'patches', 'patched', 'patched-fix.patch')));
    assert.deepEqual(linked.issues.map((i) => listed(linked.dir, i)), ['components/patched.yaml:10:11: $.patches[0].file: patch patched-fix.patch: patches/patched/patched-fix.patch is a symbolic link: patch files are plain files below the manifest\'s directory']);

    const linkedDir = await issues(GOOD, async (dir) => {
      await rename(path.join(dir, 'patches', 'patched'), path.join(outside, 'patched'));
      await symlink(path.join(outside, 'patched'), path.join(dir, 'patches', 'patched'));
    });
    assert.match(linkedDir.issues[0]!.message, /patches\/patched is a symbolic link/);
  });

  it('refuses what is not UTF-8 text, a bidirectional override and what is not a unified diff, at the patch file\'s line and column too', async () => {
    const latin1 = await issues(Buffer.concat([Buffer.from('Fix.\n\n--- a/x.c\n+++ b/x.c\n@@ -1 +1 @@\n-caf'), Buffer.from([0xe9]), Buffer.from('\n+cafe\n')]));
    assert.deepEqual(latin1.issues.map((i) => listed(latin1.dir, i)), [
      'components/patched.yaml:10:11: $.patches[0].file: patch patched-fix.patch: patches/patched/patched-fix.patch is not UTF-8 text (' + path.join(latin1.dir, 'patches/patched/patched-fix.patch') + ':6:5)',
      'patches/patched/patched-fix.patch:6:5: $.patches[0].file: patches/patched/patched-fix.patch is not UTF-8 text',
    ]);
    const bidi = await issues(GOOD.replace('+project(patched LANGUAGES CXX)', '+project(patched) # \u202e)XXC SEGAUGNAL'));
    assert.match(bidi.issues[0]!.message, /bidirectional override \(U\+202E\).*:7:21\)$/);
    const prose = await issues('Just a description of a fix.\n');
    assert.match(prose.issues[0]!.message, /not a unified diff/);
    assert.match(prose.issues[0]!.hint!, /"--- a\/<path>" and "\+\+\+ b\/<path>" headers/);
    const escaping = await issues('--- a/../../etc/profile\n+++ b/../../etc/profile\n@@ -1 +1 @@\n-a\n+b\n');
    assert.deepEqual(escaping.issues.map((i) => `${path.relative(escaping.dir, i.file)}:${i.line}`), ['components/patched.yaml:10', 'patches/patched/patched-fix.patch:1']);
    assert.match(escaping.issues[0]!.message, /leaves the source directory/);
  });

  it("holds ::gentoo's files/ limits: 20 KiB a file (host it as a distfile, says how), 50 KiB the files one ebuild applies", async () => {
    const big = await issues(GOOD + `+${'x'.repeat(79)}\n`.repeat(260));
    assert.match(big.issues[0]!.message, /is 2\d\.\d KiB, over the 20 KiB ::gentoo allows a file in files\/ \(pkgcheck SizeViolation\)/);
    assert.match(big.issues[0]!.hint!, /host it as a distfile.*dev\.gentoo\.org\/~<you>\/distfiles.*\{ url: https:\/\/…\/<name>\.patch, distfile: <name>\.patch, reason: … \}/);

    // Three patches of 18 KiB each: each fine, together over the 50 KiB of one package's files/.
    const body = (n: number) => `Part ${n}.\n\n--- a/f${n}.c\n+++ b/f${n}.c\n@@ -1,230 +1,230 @@\n${`-${'y'.repeat(39)}\n`.repeat(230)}${`+${'z'.repeat(39)}\n`.repeat(230)}`;
    const three = COMPONENT.replace(/patches:\n[\s\S]*$/, 'patches:\n' + [1, 2, 3].map((n) => `  - file: part-${n}.patch\n    reason: part ${n}\n`).join(''));
    const total = await issues(null, async (dir) => {
      for (const n of [1, 2, 3]) await writeFile(path.join(dir, 'patches', 'patched', `part-${n}.patch`), body(n));
    }, three);
    assert.deepEqual(total.issues.map((i) => `${path.relative(total.dir, i.file)}:${i.line}:${i.column}: ${i.path}`), ['components/patched.yaml:10:3: $.patches']);
    assert.match(total.issues[0]!.message, /come to 5\d\.\d KiB, over the 50 KiB ::gentoo allows in a package's files\/ \(pkgcheck TotalSizeViolation\)/);
  });
});
