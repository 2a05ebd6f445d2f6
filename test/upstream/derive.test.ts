import { strict as assert } from 'node:assert';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseDocument } from 'yaml';
import { git, gitHome, removeDir, runCli, tempDir } from '../helpers/project.js';
import { gitArchive, stackCopy, universe, type Universe } from './support.js';

describe('bump --derive-from', function () {
  this.timeout(300_000);
  let u: Universe;
  let dir: string;
  let home: string;
  let distdir: string;

  before(async () => {
    u = await universe();
    dir = await tempDir('rocm-ebuild-derive-');
    home = await gitHome({ name: 'Derive Tester', email: 'derive@example.org' });
    // The 6.3.3 distfiles of the test stack, so the bump runs offline.
    distdir = path.join(dir, 'distfiles');
    const repo = (r: string) => path.join(u.dir, 'git', 'ROCm', r);
    await gitArchive(repo('gpulib'), 'rocm-6.3.3', 'gpulib-rocm-6.3.3', path.join(distdir, 'gpulib-6.3.3.tar.gz'));
    await gitArchive(repo('gpulib-data'), 'rocm-6.3.3', 'gpulib-data-rocm-6.3.3', path.join(distdir, 'gpulib-data-6.3.3.tar.gz'));
    await gitArchive(repo('runtime'), 'rocm-6.3.3', 'runtime-rocm-6.3.3', path.join(distdir, 'runtime-6.3.3.tar.gz'));
    await gitArchive(repo('oldtool'), 'rocm-6.3.3', 'googletest-1.14.0', path.join(distdir, 'googletest-1.14.0.tar.gz'));
  });
  after(async () => {
    await removeDir(dir);
    await removeDir(home);
  });

  const derive = (stack: string, overlay: string, ...extra: string[]) =>
    runCli(['bump', '6.3.3', '--derive-from', '6.2.2', '--manifest', stack, '--overlay', overlay, '--base-url', u.baseUrl, '--distdir', distdir, '--offline', ...extra], {
      home,
      env: { XDG_CACHE_HOME: path.join(dir, 'cache') },
    });

  it('writes a draft that does not validate, prints the reports, and generates no ebuild (exit 2)', async () => {
    const stack = stackCopy();
    const overlay = path.join(dir, 'overlay-invalid');
    const before = await readFile(path.join(stack, 'stack.yaml'), 'utf8');
    const r = await derive(stack, overlay);
    assert.equal(r.code, 2, r.stdout + r.stderr);
    // The three reports, then the draft.
    assert.match(r.stdout, /^ {2}gone +thunk +packaged by dev-libs\/thunk$/m);
    assert.match(r.stdout, /^gpulib \(sci-libs\/gpulib\) 6\.2\.2 → 6\.3\.3$/m);
    assert.match(r.stdout, /^ {2}fails +src\/legacy\.c +prepare\[3\]/m);
    assert.match(r.stdout, /^Draft release 6\.3\.3 written to .*stack\.yaml \(derived from 6\.2\.2; no evidence yet; llvm_slot 18 carried over: check it; 2 new projects excluded as not packaged yet\)\.$/m);
    assert.match(r.stderr, /the draft of 6\.3\.3 in .*stack\.yaml does not validate; no ebuild was generated or committed/);
    assert.match(r.stderr, /components\/thunk\.yaml:\d+:\d+: \$\.projects: project thunk is not in AMD's manifest \(in 6\.3\.3\)/);
    assert.ok(!existsSync(overlay), 'the overlay is not created');
    const after = await readFile(path.join(stack, 'stack.yaml'), 'utf8');
    // Extended, not rewritten: every line of the file is still there, in order.
    const kept = after.split('\n');
    let at = 0;
    for (const l of before.split('\n')) {
      at = kept.indexOf(l, at);
      assert.ok(at >= 0, `line kept: ${l}`);
      at++;
    }
    const doc = parseDocument(after, { version: '1.2' }).toJS() as { releases: Record<string, Record<string, unknown>>; projects: Record<string, string[]>; excluded: { project: string; reason: string; releases?: unknown }[] };
    assert.deepEqual(Object.keys(doc.releases['6.3.3']!), ['llvm_slot']);
    assert.deepEqual(doc.projects['6.3.3'], ['gpulib', 'gpulib-common', 'gpulib-data', 'runtime', 'newtool']);
    assert.deepEqual(doc.excluded.slice(1), [
      { project: 'gpulib-common', releases: { from: '6.3.3' }, reason: 'new in 6.3.3, not packaged yet' },
      { project: 'newtool', releases: { from: '6.3.3' }, reason: 'new in 6.3.3, not packaged yet' },
    ]);
    // Run again: the manifest (with the draft) must be fixed first; nothing more is written.
    const again = await derive(stack, overlay);
    assert.equal(again.code, 2);
    assert.match(again.stderr, /1 problem in the manifest; fix it before deriving a release:\n.*project thunk is not in AMD's manifest/);
    assert.equal(await readFile(path.join(stack, 'stack.yaml'), 'utf8'), after);
  });

  it('with a draft that validates, goes on to bump: no-evidence warning, commits in build order', async () => {
    const stack = stackCopy(true);
    const overlay = path.join(dir, 'overlay-valid');
    const r = await derive(stack, overlay);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^Draft release 6\.3\.3 written to /m);
    assert.match(r.stderr.replace(/\s*›\s*/g, ' '), /ROCm 6\.3\.3's evidence is none/);
    // Said once for the run, not once per package.
    assert.equal((r.stderr.match(/evidence is none/g) ?? []).length, 1, r.stderr);
    const log = (await git(overlay, ['log', '--format=%s'], home)).trim().split('\n').reverse();
    assert.deepEqual(log.slice(-2), ['dev-libs/runtime: new package, add 6.3.3', 'sci-libs/gpulib: new package, add 6.3.3']);
    assert.ok(existsSync(path.join(overlay, 'sci-libs', 'gpulib', 'gpulib-6.3.3.ebuild')));
    assert.ok(!existsSync(path.join(overlay, 'dev-libs', 'thunk')), 'thunk ends before 6.3');
    const validate = await runCli(['validate', stack]);
    assert.equal(validate.code, 0, validate.stderr);
  });

  it('--dry-run prints the draft and changes nothing', async () => {
    const stack = stackCopy(true);
    const before = await readFile(path.join(stack, 'stack.yaml'), 'utf8');
    const r = await derive(stack, path.join(dir, 'overlay-dry'), '--dry-run');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^Draft release 6\.3\.3 for .*stack\.yaml \(--dry-run: not written\):$/m);
    assert.match(r.stdout, /^ {2}\+ {3}"6\.3\.3": \{ llvm_slot: 18 \} {2}# draft derived from 6\.2\.2/m);
    assert.match(r.stdout, /^ {2}\+ {3}- project: newtool$/m);
    assert.equal(await readFile(path.join(stack, 'stack.yaml'), 'utf8'), before);
    const json = await derive(stack, path.join(dir, 'overlay-dry'), '--dry-run', '--json');
    const j = JSON.parse(json.stdout) as { written: boolean; draft: { newProjects: string[] }; patches: { counts: { fails: number } } };
    assert.equal(j.written, false);
    assert.deepEqual(j.draft.newProjects, ['gpulib-common', 'newtool']);
    assert.equal(j.patches.counts.fails, 2);
  });

  it('two derives at once leave one draft, never two or a torn file', async () => {
    const stack = stackCopy();
    const [a, b] = await Promise.all([derive(stack, path.join(dir, 'race-a'), '--no-commit'), derive(stack, path.join(dir, 'race-b'), '--no-commit')]);
    for (const r of [a, b]) assert.equal(r.code, 2, `${r.code}: ${r.stdout.slice(-500)}${r.stderr}`);
    const text = await readFile(path.join(stack, 'stack.yaml'), 'utf8');
    const doc = parseDocument(text, { version: '1.2' });
    assert.deepEqual(doc.errors, []);
    assert.equal((text.match(/^ {2}"6\.3\.3": \{/gm) ?? []).length, 1);
    const refused = [a, b].filter((r) => /already in|changed while the release was being derived/.test(r.stderr));
    const drafted = [a, b].filter((r) => /does not validate/.test(r.stderr));
    assert.equal(drafted.length + refused.length, 2);
    assert.ok(drafted.length >= 1);
  });

  it('refuses a known release, an unknown base and a base older than the release (exit 2)', async () => {
    const stack = stackCopy();
    const known = await runCli(['bump', '6.2.2', '--derive-from', '6.2.2', '--manifest', stack, '--overlay', path.join(dir, 'x')], { home });
    assert.equal(known.code, 2);
    assert.match(known.stderr, /release 6\.2\.2 is already in/);
    const unknown = await runCli(['bump', '6.3.3', '--derive-from', '6.1.0', '--manifest', stack, '--overlay', path.join(dir, 'x')], { home });
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /--derive-from 6\.1\.0 is not a release of .*; it knows 6\.2\.2/);
    await mkdir(path.join(dir, 'y'), { recursive: true });
    await writeFile(path.join(dir, 'y', 'keep'), '');
    const older = await runCli(['bump', '6.2.0', '--derive-from', '6.2.2', '--manifest', stack, '--overlay', path.join(dir, 'y')], { home });
    assert.equal(older.code, 2);
    assert.match(older.stderr, /--derive-from 6\.2\.2 must be older than 6\.2\.0/);
  });
});
