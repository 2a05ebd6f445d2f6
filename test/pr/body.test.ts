import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { symlinkSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { BodyData } from '../../src/pr/body.js';
import { root, runCli } from '../helpers/project.js';
import { bareBin, commitAll, git, prCli, prFixture, signed, workClone, type PrFixture } from './support.js';

const fixtures = path.join(root, 'test', 'fixtures', 'pr');
const reports = ['report-gfx90a.json', 'report-gfx1100.json'].map((f) => path.join(fixtures, f));

/** Compare with a golden file; UPDATE_GOLDEN=1 rewrites it after an intended change. */
async function golden(name: string, actual: string): Promise<void> {
  const file = path.join(fixtures, name);
  if (process.env.UPDATE_GOLDEN === '1') await writeFile(file, actual);
  assert.equal(actual, await readFile(file, 'utf8'), `${name} differs (UPDATE_GOLDEN=1 npm test rewrites it)`);
}

describe('pr body', function () {
  this.timeout(300_000);
  let f: PrFixture;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    f = await prFixture();
    // No pkgcheck or gh from the developer's machine in the golden text.
    env = { PATH: await bareBin(path.join(f.work, 'body-bin')) };
  });

  it('writes the full 6.2.2 range as ROCm stack pull requests read (golden), with the GPU test table', async () => {
    const r = await prCli(f, ['body', '--overlay', f.overlay, ...reports.flatMap((x) => ['--tests', x])], { env });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, 'title: ROCm 6.2.2\n');
    await golden('body-6.2.2.md', r.stdout);
  });

  it('writes a one-package range with its own title and the Closes: of its commit (golden)', async () => {
    const r = await prCli(f, ['body', '--overlay', f.overlay, '--range', 'HEAD~1'], { env });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, 'title: sci-libs/rocAL: new package, add 6.2.2\nnote: no --tests given: the text says the ebuilds were not tested on a GPU; `rocm-ebuild test` writes the report.json files --tests reads\n');
    await golden('body-one-package.md', r.stdout);
  });

  it('gives the same content as data with --json, and takes GURU\'s checklist on request', async () => {
    const r = await prCli(f, ['body', '--overlay', f.overlay, '--range', 'HEAD~3', '--template', 'guru', '--json'], { env });
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { title: string; body: string; data: BodyData };
    assert.equal(out.title, 'sci-libs/rpp, sci-libs/MIVisionX, sci-libs/rocAL: new package, add 6.2.2');
    assert.deepEqual(out.data.packages.added.map((a) => [a.atom, a.versions, a.newPackage]), [
      ['sci-libs/MIVisionX', ['6.2.2'], true],
      ['sci-libs/rocAL', ['6.2.2'], true],
      ['sci-libs/rpp', ['6.2.2'], true],
    ]);
    assert.deepEqual(out.data.trailers, { closes: ['https://bugs.gentoo.org/940300'], bugs: ['https://bugs.gentoo.org/940123'] });
    assert.equal(out.data.template.name, 'guru');
    assert.ok(out.data.template.checklist.some((c) => c.includes("GURU's rules")));
    assert.ok(out.body.includes('- [ ] The build logs of every package added or changed here are attached.'));
    const none = await prCli(f, ['body', '--overlay', f.overlay, '--range', 'HEAD~1', '--template', 'none'], { env });
    assert.ok(!none.stdout.includes('- [ ]'));
  });

  it('counts what the range adds and drops net: a version added and dropped inside the range is neither', async () => {
    const dir = await workClone(f, 'body-net');
    const pkg = path.join(dir, 'sci-libs/rocBLAS');
    await writeFile(path.join(pkg, 'rocBLAS-6.2.4.ebuild'), await readFile(path.join(pkg, 'rocBLAS-6.2.2.ebuild'), 'utf8'));
    const manifest = await readFile(path.join(pkg, 'Manifest'), 'utf8');
    await writeFile(path.join(pkg, 'Manifest'), `${manifest}${manifest.replaceAll('6.2.2', '6.2.4')}`);
    await commitAll(dir, f.home, signed('sci-libs/rocBLAS: add 6.2.4'));
    await git(dir, ['rm', '-q', 'sci-libs/rocBLAS/rocBLAS-6.2.4.ebuild'], f.home);
    await writeFile(path.join(pkg, 'Manifest'), manifest);
    await commitAll(dir, f.home, signed('sci-libs/rocBLAS: drop 6.2.4'));
    const r = await prCli(f, ['body', '--overlay', dir, '--range', 'HEAD', '--root', '--json'], { env });
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { title: string; body: string; data: BodyData };
    assert.deepEqual(out.data.packages.dropped, []);
    assert.deepEqual(out.data.packages.added.find((a) => a.atom === 'sci-libs/rocBLAS')?.versions, ['6.2.2']);
    assert.doesNotMatch(out.body, /Dropped versions/);
  });

  it('lists a version bump with the version it replaces, and the dropped version', async () => {
    const dir = await workClone(f, 'body-bump');
    const pkg = path.join(dir, 'sci-libs/rocBLAS');
    await writeFile(path.join(pkg, 'rocBLAS-6.2.4.ebuild'), await readFile(path.join(pkg, 'rocBLAS-6.2.2.ebuild'), 'utf8'));
    const manifest = await readFile(path.join(pkg, 'Manifest'), 'utf8');
    await writeFile(path.join(pkg, 'Manifest'), `${manifest}${manifest.replaceAll('6.2.2', '6.2.4')}`);
    await commitAll(dir, f.home, signed('sci-libs/rocBLAS: add 6.2.4'));
    await git(dir, ['rm', '-q', 'sci-libs/rocBLAS/rocBLAS-6.2.2.ebuild'], f.home);
    await writeFile(path.join(pkg, 'Manifest'), manifest.replaceAll('6.2.2', '6.2.4'));
    await commitAll(dir, f.home, signed('sci-libs/rocBLAS: drop 6.2.2'));
    const r = await prCli(f, ['body', '--overlay', dir, '--range', f.tip, '--json'], { env });
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { title: string; body: string; data: BodyData };
    assert.equal(out.title, 'sci-libs/rocBLAS: add 6.2.4; sci-libs/rocBLAS: drop 6.2.2');
    assert.deepEqual(out.data.packages.added, [{ atom: 'sci-libs/rocBLAS', versions: ['6.2.4'], previous: ['6.2.2'], newPackage: false }]);
    assert.deepEqual(out.data.packages.dropped, [{ atom: 'sci-libs/rocBLAS', versions: ['6.2.2'] }]);
    assert.match(out.body, /^\| `sci-libs\/rocBLAS` \| 6\.2\.2 \| 6\.2\.4 \|$/m);
    assert.match(out.body, /^- `sci-libs\/rocBLAS`: 6\.2\.2$/m);
    assert.equal(out.data.qa.counts.error + out.data.qa.counts.warning, 0, JSON.stringify(out.data.qa.findings));
  });

  it("names the packages that need an LLVM slot ::gentoo's profiles mask, with the settings that lift the mask", async () => {
    const dir = await workClone(f, 'body-masked-llvm');
    const pkg = path.join(dir, 'dev-libs/rocm-comgr');
    const text = await readFile(path.join(pkg, 'rocm-comgr-6.2.2.ebuild'), 'utf8');
    assert.match(text, /^LLVM_COMPAT=\( 18 \)$/m);
    await writeFile(path.join(pkg, 'rocm-comgr-6.2.4.ebuild'), text.replace(/^LLVM_COMPAT=\( 18 \)$/m, 'LLVM_COMPAT=( 23 )'));
    const manifest = await readFile(path.join(pkg, 'Manifest'), 'utf8');
    await writeFile(path.join(pkg, 'Manifest'), `${manifest}${manifest.replaceAll('6.2.2', '6.2.4')}`);
    await commitAll(dir, f.home, signed('dev-libs/rocm-comgr: add 6.2.4'));
    const r = await prCli(f, ['body', '--overlay', dir, '--range', 'HEAD~1', '--json'], { env });
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { body: string; data: BodyData };
    assert.deepEqual(out.data.notes.llvmMasked?.packages, ['dev-libs/rocm-comgr']);
    assert.deepEqual(out.data.notes.llvmMasked?.settings.perPackage, { file: '/etc/portage/profile/package.use.mask', lines: ['dev-libs/rocm-comgr -llvm_slot_23'] });
    assert.match(out.body, /^- Masked LLVM slot: 1 package can only be built with LLVM 23 \(llvm\\_slot\\_23, /m);
    assert.match(out.body, /^ {2}```\n {2}dev-libs\/rocm-comgr -llvm_slot_23\n {2}```$/m);
    assert.match(out.body, /or `-llvm_slot_23` to `\/etc\/portage\/profile\/use\.mask` for every package\./);
    // LLVM 18 is not masked: the 6.2.2 range says nothing of it.
    const plain = await prCli(f, ['body', '--overlay', f.overlay, '--range', 'HEAD~1', '--json'], { env });
    assert.equal((JSON.parse(plain.stdout) as { data: BodyData }).data.notes.llvmMasked, undefined);
  });

  it('escapes HTML and table syntax from commit text', async () => {
    const dir = await workClone(f, 'body-hostile');
    await writeFile(path.join(dir, 'README.md'), 'changed\n');
    await commitAll(dir, f.home, signed('README.md: <img src=x onerror=alert(1)> | *bold* `code`'));
    const r = await prCli(f, ['body', '--overlay', dir, '--range', 'HEAD~1'], { env });
    assert.equal(r.code, 0, r.stderr);
    assert.ok(!r.stdout.includes('<img'), r.stdout);
    assert.match(r.stdout, /^- README\.md: &lt;img src=x onerror=alert\(1\)&gt; \\\| \\\*bold\\\* \\`code\\`$/m);
  });

  it('neutralises what commit text would make GitHub or a terminal do: bidi overrides, @mentions, __emphasis__', async () => {
    const dir = await workClone(f, 'body-mentions');
    await writeFile(path.join(dir, 'README.md'), 'changed again\n');
    await commitAll(dir, f.home, signed('README.md: thanks @gentoo/sci and @ada, see __init__ \u202Egnp.exe\u202C'));
    const r = await prCli(f, ['body', '--overlay', dir, '--range', 'HEAD~1', '--json'], { env });
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { title: string; body: string };
    for (const text of [out.title, out.body]) assert.doesNotMatch(text, /[\u202a-\u202e\u2066-\u2069]/, 'a bidirectional control survived');
    assert.match(out.body, /^- README\.md: thanks `@gentoo\/sci` and `@ada`, see \\_\\_init\\_\\_ \uFFFDgnp\.exe\uFFFD$/m);
    assert.doesNotMatch(out.body.replace(/`@[^`]*`/g, ''), /(^|[^\w`])@\w/m, 'a mention outside a code span');
    // The terminal gets the same text: the title on stderr, the body on stdout.
    const text = await prCli(f, ['body', '--overlay', dir, '--range', 'HEAD~1'], { env });
    assert.doesNotMatch(`${text.stdout}${text.stderr}`, /[\u202a-\u202e\u2066-\u2069\x1b]/);
  });

  for (const [what, make] of [
    ['a FIFO with no writer', (file: string) => execFileSync('mkfifo', [file])],
    ['a link to /dev/zero', (file: string) => symlinkSync('/dev/zero', file)],
  ] as const) {
    it(`refuses a --tests report that is ${what}, without waiting on it (exit 2)`, async () => {
      const file = path.join(f.work, `report-${what.replace(/\W+/g, '-')}.json`);
      make(file);
      const r = await runCli(['pr', 'body', '--overlay', f.overlay, '--range', 'HEAD~1', '--tests', file], { home: f.home, cwd: f.work, env, killAfterMs: 20_000 });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /--tests \S+: (a FIFO|a character device), not a regular file/);
    });
  }

  it('refuses a test report that does not validate, naming the JSON path (exit 2)', async () => {
    const bad = path.join(f.work, 'bad-report.json');
    const report = JSON.parse(await readFile(reports[0]!, 'utf8')) as Record<string, unknown>;
    await writeFile(bad, JSON.stringify({ ...report, gfx: 'navi31', tests: 'some' }));
    const r = await prCli(f, ['body', '--overlay', f.overlay, '--range', 'HEAD~1', '--tests', bad], { env });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /is not a test report \(schemas\/test-report\.schema\.json\):\n {2}\$\.gfx: must match pattern/);
    assert.match(r.stderr, /\$\.tests: must be equal to one of the allowed values: one of "none", "smoke", "full"/);
    const twice = await prCli(f, ['body', '--overlay', f.overlay, '--range', 'HEAD~1', '--tests', reports[0]!, '--tests', reports[0]!], { env });
    assert.equal(twice.code, 2);
    assert.match(twice.stderr, /both report gfx90a/);
  });

  it('reads the report of an in-place CI job (--engine none) and says where it ran', async () => {
    const inPlace = path.join(f.work, 'report-in-place.json');
    const report = JSON.parse(await readFile(reports[0]!, 'utf8')) as Record<string, unknown>;
    await writeFile(inPlace, JSON.stringify({ ...report, engine: { name: 'none' } }));
    const r = await prCli(f, ['body', '--overlay', f.overlay, '--range', 'HEAD~1', '--tests', inPlace], { env });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^- `gfx90a` .*, in place in the CI job, image /m);
  });

  it('refuses an empty range (exit 2)', async () => {
    const r = await prCli(f, ['body', '--overlay', f.overlay, '--range', 'HEAD..HEAD'], { env });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /no commits, so no pull request to describe/);
  });

  it('follows the target repository: no checklist for an overlay whose base is not gentoo or guru', async () => {
    const dir = await workClone(f, 'body-other');
    await git(dir, ['remote', 'set-url', 'origin', 'https://github.com/someone/rocm-overlay.git'], f.home);
    const r = await prCli(f, ['body', '--overlay', dir, '--range', 'origin/master..HEAD~51', '--json'], { env });
    assert.equal(r.code, 0, r.stderr);
    assert.equal((JSON.parse(r.stdout) as { data: BodyData }).data.template.name, 'none');
  });
});
