import { strict as assert } from 'node:assert';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { copyOverlay, fullStackFixture, IDENTITY } from '../helpers/bumped-overlay.js';
import { bin, git, gitEnv, gitHome, removeDir, root, runCli, tempDir } from '../helpers/project.js';
import { synthesizeDistfiles, type PlanJson } from '../helpers/stack-distfiles.js';
import { killGroup, startCli } from './support.js';
import { parseTargetTable, targetsOfReleases } from '../../src/eclass/index.js';

const SIGN_OFF = `Signed-off-by: ${IDENTITY.name} <${IDENTITY.email}>`;

/** Independent digests from coreutils, to check the engine's Manifest lines. */
function coreutilsEntry(file: string): string {
  const b2 = execFileSync('b2sum', [file], { encoding: 'utf8' }).split(/\s+/)[0]!;
  const sha = execFileSync('sha512sum', [file], { encoding: 'utf8' }).split(/\s+/)[0]!;
  const size = execFileSync('stat', ['-c', '%s', file], { encoding: 'utf8' }).trim();
  return `DIST ${path.basename(file)} ${size} BLAKE2B ${b2} SHA512 ${sha}`;
}

describe('rocm-ebuild bump (the full 6.2 stack into real git repositories)', function () {
  this.timeout(240_000);
  let work: string;
  let home: string;
  let distdir: string;
  let plans: Map<string, PlanJson>;

  const bump = (args: string[], options: { home?: string } = {}) =>
    runCli(['bump', ...args, '--distdir', distdir, '--offline'], { home: options.home ?? home, cwd: work });
  const log = (dir: string, format = '%s') => git(dir, ['log', '--reverse', `--format=${format}%x00`], home).then((o) => o.split('\0\n').map((s) => s.replace(/\0$/, '')).filter(Boolean));

  before(async () => {
    // The shipped stack's plans, synthetic distfiles named as they ask, and 6.2.2 bumped into a new overlay.
    const shared = await fullStackFixture();
    work = await tempDir('rocm-ebuild-bump-');
    home = shared.home;
    distdir = shared.distdir;
    plans = shared.plans;
    assert.ok(!existsSync(path.join(shared.work, 'no-such-overlay')), '--dry-run created the overlay');
  });

  after(async () => {
    await removeDir(work);
  });

  describe('--dry-run --json', () => {
    it('prints the plan in build order, with every distfile and its URLs, and writes nothing', () => {
      const plan = plans.get('6.2.2')!;
      assert.equal(plan.version, '6.2.2');
      assert.ok(plan.packages.length >= 45);
      for (const p of plan.packages) {
        assert.equal(p.action, 'add');
        assert.equal(p.version, '6.2.2');
        for (const d of p.distfiles) {
          assert.match(d.name, /^[A-Za-z0-9._+-]+$/);
          assert.ok(d.urls.length > 0 && d.urls.every((u) => u.startsWith('https://')), `${d.name}: ${d.urls.join(' ')}`);
        }
      }
      const order = plan.packages.map((p) => p.atom);
      assert.ok(order.indexOf('dev-build/rocm-cmake') < order.indexOf('sci-libs/rocPRIM'));
      assert.ok(order.indexOf('dev-util/hip') < order.indexOf('sci-libs/rocBLAS'));
      assert.ok(order.indexOf('dev-util/Tensile') < order.indexOf('sci-libs/rocBLAS'));
      assert.ok(order.indexOf('sci-libs/composable-kernel') < order.indexOf('sci-libs/miopen'));
    });
  });

  describe('a new overlay', () => {
    /** The shared fixture's: only read. */
    let overlay: string;
    /** A copy for the tests that run bump again or change something. */
    let mutable: string;
    let subjects: string[];

    before(async () => {
      overlay = (await fullStackFixture()).overlay;
      mutable = copyOverlay(overlay, path.join(work, 'overlay'));
      subjects = await log(overlay);
    });

    it('is a git repository with repo_name, a thin BLAKE2B/SHA512 layout.conf, the desc file and the eclass', async () => {
      assert.equal(await readFile(path.join(overlay, 'profiles/repo_name'), 'utf8'), 'rocm\n');
      const layout = await readFile(path.join(overlay, 'metadata/layout.conf'), 'utf8');
      assert.match(layout, /^masters = gentoo$/m);
      assert.match(layout, /^thin-manifests = true$/m);
      assert.match(layout, /^manifest-hashes = BLAKE2B SHA512$/m);
      // The project's eclass, maintained by whoever maintains the overlay (its metadata.xml names them).
      const eclass = await readFile(path.join(overlay, 'eclass/rocm.eclass'), 'utf8');
      const ours = await readFile(path.join(root, 'eclass/rocm.eclass'), 'utf8');
      assert.equal(eclass, ours.replace(/# @MAINTAINER:\n# [^\n]*\n/, `# @MAINTAINER:\n# ${IDENTITY.name} <${IDENTITY.email}>\n`));
      assert.match(await readFile(path.join(overlay, 'dev-util/hip/metadata.xml'), 'utf8'), new RegExp(`<email>${IDENTITY.email}</email>`));
      assert.doesNotMatch(eclass, /\.example>/);
      const desc = await readFile(path.join(overlay, 'profiles/desc/amdgpu_targets.desc'), 'utf8');
      assert.match(desc, /^gfx1030 - .+$/m);
      assert.equal((await git(overlay, ['status', '--porcelain', '--untracked-files=all'], home)).trim(), '');
    });

    it('commits the scaffolding first, then one commit per package in build order', async () => {
      const plan = plans.get('6.2.2')!;
      assert.deepEqual(subjects.slice(0, 4), [
        'profiles, metadata: new repository rocm',
        'profiles/desc: add amdgpu_targets.desc',
        'rocm.eclass: new eclass',
        'sets.conf, metadata/sets: package sets for ROCm 6.2.2',
      ]);
      assert.deepEqual(subjects.slice(4), plan.packages.map((p) => `${p.atom}: new package, add 6.2.2`));
      for (const s of subjects) {
        const prefix = s.split(': ')[0]!;
        assert.ok(s.length - prefix.length - 2 <= 69, `summary too long: ${s}`);
      }
    });

    it('ships one package set per GPU target, the atoms `rocm-ebuild set` prints, and sets.conf pointing Portage at them', async () => {
      const conf = await readFile(path.join(overlay, 'sets.conf'), 'utf8');
      assert.match(conf, /^\[rocm package sets\]\nclass = portage\.sets\.files\.StaticFileSet\nmultiset = true\ndirectory = \$\{repository:rocm\}\/metadata\/sets\n$/m);
      const files = (await readdir(path.join(overlay, 'metadata/sets'))).sort();
      const desc = await readFile(path.join(overlay, 'profiles/desc/amdgpu_targets.desc'), 'utf8');
      assert.deepEqual(files, [...desc.matchAll(/^(gfx\S+) - /gm)].map((m) => `rocm-${m[1]}`).sort());
      const atoms = (text: string) => text.split('\n').filter((l) => l && !l.startsWith('#'));
      const printed = await runCli(['set', '--version', '6.2.2', '--targets', 'gfx1030'], { home });
      assert.equal(printed.code, 0, printed.stderr);
      const set = atoms(await readFile(path.join(overlay, 'metadata/sets/rocm-gfx1030'), 'utf8'));
      assert.deepEqual(set, atoms(printed.stdout).map((a) => `${a}::rocm`));
      assert.ok(!set.includes('sci-libs/hipBLASLt::rocm') && set.includes('sci-libs/rocBLAS::rocm'));
      assert.ok(atoms(await readFile(path.join(overlay, 'metadata/sets/rocm-gfx90a'), 'utf8')).includes('sci-libs/hipBLASLt::rocm'));
      // No top-level directory pkgcheck would take for an unknown category (UnknownCategoryDirs).
      const top = (await readdir(overlay, { withFileTypes: true })).filter((e) => e.isDirectory() && !e.name.startsWith('.')).map((e) => e.name);
      assert.deepEqual(top.filter((d) => !['eclass', 'metadata', 'profiles', 'licenses'].includes(d) && !/^[a-z0-9]+-[a-z0-9]+$/.test(d)), []);
    });

    it('signs off every commit with the git identity, after a blank line', async () => {
      const bodies = await log(overlay, '%B');
      assert.equal(bodies.length, subjects.length);
      for (const b of bodies) {
        const lines = b.trimEnd().split('\n');
        assert.equal(lines.at(-1), SIGN_OFF);
        assert.equal(lines.at(-2), '');
        assert.ok(lines.every((l) => l.length <= 80), b);
      }
      const author = await git(overlay, ['log', '-1', '--format=%an <%ae>|%cn <%ce>'], home);
      assert.equal(author.trim(), `${IDENTITY.name} <${IDENTITY.email}>|${IDENTITY.name} <${IDENTITY.email}>`);
    });

    it('touches only its own package in each package commit', async () => {
      const shas = (await git(overlay, ['rev-list', '--reverse', 'HEAD'], home)).trim().split('\n');
      for (const sha of shas.slice(4)) {
        const subject = (await git(overlay, ['log', '-1', '--format=%s', sha], home)).trim();
        const atom = subject.split(':')[0]!;
        const files = (await git(overlay, ['show', '--name-only', '--format=', sha], home)).trim().split('\n');
        assert.ok(files.every((f) => f.startsWith(`${atom}/`)), `${subject}: ${files.join(' ')}`);
        assert.ok(files.includes(`${atom}/${atom.split('/')[1]}-6.2.2.ebuild`));
        assert.ok(files.includes(`${atom}/metadata.xml`));
      }
    });

    it('orders commits so that every package comes after the stack packages it depends on', async () => {
      const r = await runCli(['graph', '--version', '6.2.2', '--json'], { home });
      const graph = JSON.parse(r.stdout) as { order: string[]; edges: { from: string; to: string; testOnly: boolean }[] };
      const position = new Map(subjects.slice(4).map((s, i) => [s.split(':')[0]!, i]));
      for (const e of graph.edges.filter((x) => !x.testOnly)) {
        assert.ok(position.get(e.to)! < position.get(e.from)!, `${e.from} committed before its dependency ${e.to}`);
      }
    });

    it('writes thin Manifests whose lines equal b2sum and sha512sum of the distfiles, sorted', async () => {
      const plan = plans.get('6.2.2')!;
      for (const p of plan.packages) {
        const manifestFile = path.join(overlay, p.atom, 'Manifest');
        if (p.distfiles.length === 0) {
          assert.ok(!existsSync(manifestFile), `${p.atom} has a Manifest without distfiles`);
          continue;
        }
        const expected = [...new Set(p.distfiles.map((d) => d.name))].sort().map((n) => coreutilsEntry(path.join(distdir, n)));
        assert.equal(await readFile(manifestFile, 'utf8'), `${expected.join('\n')}\n`, p.atom);
      }
    });

    it('changes nothing and makes no commit when run again', async () => {
      const before = (await git(mutable, ['rev-parse', 'HEAD'], home)).trim();
      const r = await bump(['6.2.2', '--overlay', mutable]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /already holds ROCm 6\.2\.2: nothing to do/);
      assert.equal((await git(mutable, ['rev-parse', 'HEAD'], home)).trim(), before);
    });

    it('keeps an overlay eclass that differs, and says so', async () => {
      const file = path.join(mutable, 'eclass/rocm.eclass');
      const original = await readFile(file, 'utf8');
      await writeFile(file, `${original}# a local change\n`);
      await git(mutable, ['commit', '-qam', 'rocm.eclass: local change'], home);
      try {
        const r = await bump(['6.2.2', '--overlay', mutable]);
        assert.equal(r.code, 0, r.stderr);
        // oclif wraps a warning at 80 columns, inside a long word too (the temporary directory's path): compared without the breaks.
        const flat = (t: string) => t.replace(/[\s›]+/g, '');
        assert.ok(flat(r.stderr).includes(flat('eclass/rocm.eclass differs from the rocm.eclass these ebuilds are generated for; it is left as it is')), r.stderr);
        assert.equal(await readFile(file, 'utf8'), `${original}# a local change\n`);
      } finally {
        await git(mutable, ['reset', '-q', '--hard', 'HEAD~1'], home);
      }
    });

    it('brings a stale amdgpu_targets.desc to the targets of the releases the overlay holds', async () => {
      const file = path.join(mutable, 'profiles/desc/amdgpu_targets.desc');
      const written = await readFile(file, 'utf8');
      const targets = (text: string) => [...text.matchAll(/^(\S+) - /gm)].map((m) => m[1]);
      // The 6.2 targets: what the target table offers in the overlay's releases.
      const table = parseTargetTable(await readFile(path.join(root, 'manifest/targets.yaml'), 'utf8'), 'targets.yaml');
      const want = targetsOfReleases(table, ['6.2.2']);
      assert.deepEqual(targets(written), want);
      const before = (await git(mutable, ['rev-parse', 'HEAD'], home)).trim();
      const stale = async (text: string) => {
        await writeFile(file, text);
        await git(mutable, ['commit', '-qam', 'profiles/desc: a stale copy'], home);
      };
      try {
        // Lacks gfx1030 and lists a target no 6.2 ebuild offers (UnusedGlobalUseExpand).
        await stale(written.replace(/^gfx1030 - .*\n/m, '') + 'gfx950 - a target of a later series\n');
        let r = await bump(['6.2.2', '--overlay', mutable]);
        assert.equal(r.code, 0, r.stderr);
        assert.deepEqual((await log(mutable)).slice(-1), ['profiles/desc: amdgpu_targets.desc for ROCm 6.2.2']);
        assert.deepEqual(targets(await readFile(file, 'utf8')), want);
        // A desc that is right is left alone.
        const head = (await git(mutable, ['rev-parse', 'HEAD'], home)).trim();
        r = await bump(['6.2.2', '--overlay', mutable]);
        assert.equal(r.code, 0, r.stderr);
        assert.equal((await git(mutable, ['rev-parse', 'HEAD'], home)).trim(), head);
      } finally {
        await git(mutable, ['reset', '-q', '--hard', before], home);
      }
    });

    it('refuses a dirty worktree, naming what is dirty, and leaves it as it was', async () => {
      const before = (await git(mutable, ['rev-parse', 'HEAD'], home)).trim();
      await writeFile(path.join(mutable, 'notes.txt'), 'work in progress\n');
      await writeFile(path.join(mutable, 'profiles/repo_name'), 'renamed\n');
      try {
        const r = await bump(['6.2.4', '--overlay', mutable]);
        assert.equal(r.code, 4);
        // git's porcelain XY status: " M" modified in the worktree, "??" untracked.
        assert.match(r.stderr, /has uncommitted changes; refusing to touch it:\n {3}M profiles\/repo_name\n {2}\?\? notes\.txt\n/);
        assert.equal((await git(mutable, ['rev-parse', 'HEAD'], home)).trim(), before);
        assert.equal(await readFile(path.join(mutable, 'notes.txt'), 'utf8'), 'work in progress\n');
        assert.equal(await readFile(path.join(mutable, 'profiles/repo_name'), 'utf8'), 'renamed\n');
      } finally {
        await git(mutable, ['checkout', '--', 'profiles/repo_name'], home);
        await rm(path.join(mutable, 'notes.txt'));
      }
    });

    it('lists exactly the missing distfiles, exits 3 and writes nothing', async () => {
      const before = (await git(mutable, ['rev-parse', 'HEAD'], home)).trim();
      const missing = plans.get('6.2.4')!.packages.find((p) => p.atom === 'sci-libs/rocBLAS')!.distfiles[0]!.name;
      const aside = path.join(work, missing);
      await writeFile(aside, await readFile(path.join(distdir, missing)));
      await rm(path.join(distdir, missing));
      try {
        const r = await bump(['6.2.4', '--overlay', mutable]);
        assert.equal(r.code, 3, r.stderr);
        assert.match(r.stderr, new RegExp(`1 distfile missing; nothing was written to the overlay:\\n {2}${missing.replace(/\./g, '\\.')} \\(missing; needed by sci-libs/rocBLAS/rocBLAS-6\\.2\\.4\\.ebuild\\)`));
        assert.match(r.stderr, /Put the files into .* or run without --offline to download them/);
        assert.equal((await git(mutable, ['rev-parse', 'HEAD'], home)).trim(), before);
        assert.equal((await git(mutable, ['status', '--porcelain'], home)).trim(), '');
      } finally {
        await writeFile(path.join(distdir, missing), await readFile(aside));
      }
    });

    it('leaves the branch untouched when killed in the middle of a bump', async () => {
      const before = (await git(mutable, ['rev-parse', 'HEAD'], home)).trim();
      const stderrs: string[] = [];
      for (const signal of ['SIGKILL', 'SIGTERM', 'SIGINT'] as const) {
        const child = spawn(process.execPath, [bin, 'bump', '6.2.4', '--overlay', mutable, '--distdir', distdir, '--offline'], {
          env: { ...process.env, NO_COLOR: '1', ...gitEnv(home) },
        });
        let sawCommits = false;
        const code = await new Promise<number | null>((resolve) => {
          let err = '';
          child.stderr.on('data', (d: Buffer) => {
            err += d.toString();
            // Line progress (not a TTY): "[3/49] sci-libs/…: add 6.2.4". Kill at the third commit.
            if (!sawCommits && /^\[3\/\d+\] /m.test(err)) {
              sawCommits = true;
              child.kill(signal);
            }
          });
          child.on('close', (c) => {
            stderrs.push(err);
            resolve(c);
          });
        });
        assert.ok(sawCommits, `${signal}: the bump never reported commit progress`);
        assert.notEqual(code, 0, `${signal}: the bump finished before the signal`);
        assert.equal((await git(mutable, ['rev-parse', 'HEAD'], home)).trim(), before, `${signal} moved the branch`);
        assert.equal((await git(mutable, ['status', '--porcelain', '--untracked-files=all'], home)).trim(), '', `${signal} left the worktree dirty`);
        assert.equal((await git(mutable, ['for-each-ref', 'refs/heads'], home)).trim().split('\n').length, 1);
      }
      // The SIGKILLed run could not release its lock: the next one took it over, saying so.
      assert.match(stderrs[1]!.replace(/\s*›\s*/g, ' '), /taking over the lock of rocm-ebuild pid \d+, which is no longer running/);
      assert.doesNotMatch(stderrs[2]!, /taking over/, 'SIGTERM left its lock behind');
      // A later run is not blocked by what the killed ones left.
      const r = await bump(['6.2.4', '--overlay', mutable]);
      assert.equal(r.code, 0, r.stderr);
      assert.doesNotMatch(r.stderr, /taking over/, 'SIGINT left its lock behind');
      const subjects = await log(mutable);
      assert.equal(subjects.at(-1), `${plans.get('6.2.4')!.packages.at(-1)!.atom}: add 6.2.4`);
      assert.ok(subjects.includes('sci-libs/rocBLAS: add 6.2.4'));
      assert.equal((await git(mutable, ['for-each-ref', 'refs/rocm-ebuild'], home)).trim(), '');
    });
  });

  describe('--drop-old', () => {
    it('--separate-drops: adds the release, then drops older versions consumers first, with the Manifest lines only they needed', async () => {
      const overlay = path.join(work, 'drop');
      assert.equal((await bump(['6.2.0', '--overlay', overlay])).code, 0);
      const start = (await log(overlay)).length;
      const r = await bump(['6.2.2', '--overlay', overlay, '--drop-old', '--separate-drops']);
      assert.equal(r.code, 0, r.stderr);
      const subjects = (await log(overlay)).slice(start);
      const plan = plans.get('6.2.2')!;
      const n = plan.packages.length;
      assert.deepEqual(subjects.slice(0, n), plan.packages.map((p) => `${p.atom}: add 6.2.2`));
      assert.deepEqual(subjects.slice(n), plan.packages.map((p) => `${p.atom}: drop 6.2.0`).reverse());
      for (const p of plan.packages) {
        const files = await readdir(path.join(overlay, p.atom));
        assert.deepEqual(files.filter((f) => f.endsWith('.ebuild')), [`${p.atom.split('/')[1]}-6.2.2.ebuild`]);
        if (p.distfiles.length === 0) continue;
        const manifest = await readFile(path.join(overlay, p.atom, 'Manifest'), 'utf8');
        assert.doesNotMatch(manifest, /6\.2\.0/, p.atom);
        assert.equal(manifest.trim().split('\n').length, new Set(p.distfiles.map((d) => d.name)).size, p.atom);
      }
    });
  });

  describe('to the next series: 6.2.2 → 6.3.3 --drop-old', () => {
    /** A copy of the shared 6.2.2 overlay, bumped once in before(). */
    let overlay: string;
    let start: number;
    let result: { code: number | null; stdout: string; stderr: string };

    before(async () => {
      overlay = copyOverlay((await fullStackFixture()).overlay, path.join(work, 'to-6.3.3'));
      start = (await log(overlay)).length;
      result = await bump(['6.3.3', '--overlay', overlay, '--drop-old']);
    });

    it('warns that 6.3.3 has packages without evidence, moves every package in build order in one commit each (pkgdev: "add 6.3.3, drop 6.2.2"), new ones as new packages', async () => {
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stderr.replace(/\s*›\s*/g, ' '), /ROCm 6\.3\.3's evidence is none \(\d+ none/);
      const subjects = (await log(overlay)).slice(start);
      const plan = plans.get('6.3.3')!;
      const had = new Set(plans.get('6.2.2')!.packages.map((p) => p.atom));
      const fresh = plan.packages.filter((p) => !had.has(p.atom)).map((p) => p.atom);
      // AMD's 6.3 adds hipBLAS-common (needed from 6.3.0) and rocJPEG; nothing of 6.2.2 disappears.
      assert.deepEqual(fresh.sort(), ['media-libs/rocJPEG', 'sci-libs/hipBLAS-common']);
      assert.ok([...had].every((atom) => plan.packages.some((p) => p.atom === atom)));
      const moves = plan.packages.map((p) => (had.has(p.atom) ? `${p.atom}: add 6.3.3, drop 6.2.2` : `${p.atom}: new package, add 6.3.3`));
      // rocm-validation-suite leaves the gfx1030 set (it needs hipBLASLt from 6.3): the sets change last.
      assert.deepEqual(subjects, [...moves, 'sets.conf, metadata/sets: package sets for ROCm 6.3.3']);
      const order = plan.packages.map((p) => p.atom);
      assert.ok(order.indexOf('sci-libs/hipBLAS-common') < order.indexOf('sci-libs/hipBLASLt'));
      assert.ok(order.indexOf('sci-libs/hipBLAS-common') < order.indexOf('sci-libs/hipBLAS'));
      assert.ok(order.indexOf('dev-libs/roct-thunk-interface') < order.indexOf('dev-libs/rocr-runtime'));
    });

    it('commits every package after the stack packages it depends on in 6.3.3, each touching only its package, signed off', async () => {
      const r = await runCli(['graph', '--version', '6.3.3', '--json'], { home });
      const graph = JSON.parse(r.stdout) as { edges: { from: string; to: string; testOnly: boolean }[] };
      const subjects = (await log(overlay)).slice(start);
      const added = new Map(subjects.filter((s) => /\badd 6\.3\.3\b/.test(s)).map((s, i) => [s.split(':')[0]!, i]));
      for (const e of graph.edges.filter((x) => !x.testOnly)) {
        assert.ok(added.get(e.to)! < added.get(e.from)!, `${e.from} committed before its dependency ${e.to}`);
      }
      const shas = (await git(overlay, ['rev-list', '--reverse', `HEAD~${subjects.length}..HEAD~1`], home)).trim().split('\n');
      for (const sha of shas) {
        const [subject, ...rest] = (await git(overlay, ['log', '-1', '--format=%s%n%b', sha], home)).trimEnd().split('\n');
        assert.equal(rest.at(-1), SIGN_OFF, subject);
        const atom = subject!.split(':')[0]!;
        const files = (await git(overlay, ['show', '--name-only', '--format=', sha], home)).trim().split('\n');
        assert.ok(files.every((f) => f.startsWith(`${atom}/`)), `${subject}: ${files.join(' ')}`);
      }
    });

    it('leaves one ebuild per package and Manifests holding exactly the 6.3.3 distfiles, as b2sum and sha512sum compute them', async () => {
      const plan = plans.get('6.3.3')!;
      for (const p of plan.packages) {
        const files = await readdir(path.join(overlay, p.atom));
        assert.deepEqual(files.filter((f) => f.endsWith('.ebuild')), [`${p.atom.split('/')[1]}-6.3.3.ebuild`]);
        assert.ok(files.includes('metadata.xml'), p.atom);
        const manifestFile = path.join(overlay, p.atom, 'Manifest');
        if (p.distfiles.length === 0) {
          assert.ok(!existsSync(manifestFile), `${p.atom} has a Manifest without distfiles`);
          continue;
        }
        const expected = [...new Set(p.distfiles.map((d) => d.name))].sort().map((n) => coreutilsEntry(path.join(distdir, n)));
        assert.equal(await readFile(manifestFile, 'utf8'), `${expected.join('\n')}\n`, p.atom);
      }
      // libhsakmt is built from ROCR-Runtime's archive from 6.3.0: one distfile, two packages.
      const thunk = await readFile(path.join(overlay, 'dev-libs/roct-thunk-interface/Manifest'), 'utf8');
      const rocr = await readFile(path.join(overlay, 'dev-libs/rocr-runtime/Manifest'), 'utf8');
      assert.match(thunk, /^DIST rocr-runtime-6\.3\.3\.tar\.gz /);
      assert.equal(thunk, rocr);
      assert.equal((await git(overlay, ['status', '--porcelain', '--untracked-files=all'], home)).trim(), '');
    });

    it("brings metadata.xml to the versions held: a moved source's remote-id, a new flag", async () => {
      const thunk = await readFile(path.join(overlay, 'dev-libs/roct-thunk-interface/metadata.xml'), 'utf8');
      assert.match(thunk, /<remote-id type="github">ROCm\/ROCR-Runtime<\/remote-id>/);
      assert.doesNotMatch(thunk, /ROCT-Thunk-Interface/);
      assert.match(thunk, /<bugs-to>https:\/\/github\.com\/ROCm\/ROCR-Runtime\/issues<\/bugs-to>/);
      assert.match(await readFile(path.join(overlay, 'sci-libs/rocBLAS/metadata.xml'), 'utf8'), /<flag name="hipblaslt">/);
      // What lint holds an overlay's metadata.xml against is met.
      const r = await runCli(['lint', '--overlay', overlay, 'dev-libs/roct-thunk-interface', 'sci-libs/rocBLAS', '--no-shellcheck'], { home });
      assert.equal(r.code, 0, r.stdout + r.stderr);
    });

    it('changes nothing when run again', async () => {
      const before = (await git(overlay, ['rev-parse', 'HEAD'], home)).trim();
      const r = await bump(['6.3.3', '--overlay', overlay, '--drop-old']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /already holds ROCm 6\.3\.3: nothing to do/);
      assert.equal((await git(overlay, ['rev-parse', 'HEAD'], home)).trim(), before);
    });
  });

  describe('to 7.2.4: 6.2.2 → 7.2.4 --drop-old, with packages that left the release', () => {
    /** stack.yaml excludes hipSPARSELt from 6.4.0 and rocm_bandwidth_test from 7.0.0: the 6.2.2 overlay holds both. */
    const LEFT = ['dev-util/rocm_bandwidth_test', 'sci-libs/hipSPARSELt'];
    let overlay: string;
    let before622: string;
    let result: { code: number | null; stdout: string; stderr: string };
    let plan: PlanJson;

    before(async () => {
      plan = await synthesizeDistfiles('7.2.4', distdir, home);
      overlay = copyOverlay((await fullStackFixture()).overlay, path.join(work, 'to-7.2.4'));
      before622 = (await git(overlay, ['rev-parse', 'HEAD'], home)).trim();
      result = await bump(['7.2.4', '--overlay', overlay, '--drop-old']);
    });

    const subjectsSince = async (dir: string, from: string) => (await git(dir, ['log', '--reverse', '--format=%s', `${from}..HEAD`], home)).trim().split('\n');
    const dependencies = async (version: string) => {
      const r = await runCli(['graph', '--version', version, '--json'], { home });
      return (JSON.parse(r.stdout) as { edges: { from: string; to: string; testOnly: boolean }[] }).edges;
    };

    it('without --drop-old they are kept and reported, with the reasons stack.yaml gives (text and --json)', async () => {
      const shared = (await fullStackFixture()).overlay;
      assert.ok(plan.packages.every((p) => !LEFT.includes(p.atom)));
      const json = await bump(['7.2.4', '--overlay', shared, '--dry-run', '--json']);
      assert.equal(json.code, 0, json.stderr);
      const left = (JSON.parse(json.stdout) as { left: { atom: string; versions: string[]; reason: string; action: string; removed: string[] }[] }).left;
      assert.deepEqual(left.map((l) => [l.atom, l.versions, l.action, l.removed]), LEFT.map((a) => [a, ['6.2.2'], 'keep', []]));
      assert.match(left[0]!.reason, /^the stack manifest excludes rocm_bandwidth_test from ROCm 7\.0\.0: Rewritten in 7\.0 as a plugin launcher/);
      assert.match(left[1]!.reason, /^the stack manifest excludes hipSPARSELt from ROCm 6\.4\.0: Its TensileLite is a hipBLASLt commit/);
      const text = await bump(['7.2.4', '--overlay', shared, '--dry-run']);
      assert.match(text.stdout, /^not part of ROCm 7\.2\.4 \(the stack manifest describes them, this release does not generate them\):$/m);
      assert.match(text.stdout, /^ {2}sci-libs\/hipSPARSELt 6\.2\.2: kept \(its ebuilds need the older stack: --drop-old without package names removes it\); the stack manifest excludes hipSPARSELt/m);
      assert.match(text.stdout, /; 2 packages left ROCm 7\.2\.4 \(0 removed\)$/m);
      const dry = await bump(['7.2.4', '--overlay', shared, '--dry-run', '--drop-old']);
      assert.match(dry.stdout, /^ {2}treeclean sci-libs\/hipSPARSELt-6\.2\.2$/m);
      assert.match(dry.stdout, /^ {2}dev-util\/rocm_bandwidth_test 6\.2\.2: to be removed \(treeclean\); the stack manifest excludes rocm_bandwidth_test/m);
    });

    it('moves every package in build order, one commit each, and removes the two that left in treeclean commits placed before the drops of what they need', async () => {
      assert.equal(result.code, 0, result.stderr);
      const subjects = await subjectsSince(overlay, before622);
      const had = new Set(plans.get('6.2.2')!.packages.map((p) => p.atom));
      const moves = plan.packages.map((p) => (had.has(p.atom) ? `${p.atom}: add 7.2.4, drop 6.2.2` : `${p.atom}: new package, add 7.2.4`));
      assert.deepEqual([...had].filter((a) => !plan.packages.some((p) => p.atom === a)).sort(), LEFT);
      assert.equal(subjects[0], 'profiles/desc: amdgpu_targets.desc for ROCm 7.2.4');
      assert.equal(subjects.at(-1), 'sets.conf, metadata/sets: package sets for ROCm 7.2.4');
      const packageCommits = subjects.slice(1, -1);
      assert.deepEqual(packageCommits.filter((s) => !s.endsWith(': treeclean')), moves);
      assert.deepEqual(packageCommits.filter((s) => s.endsWith(': treeclean')).sort(), LEFT.map((a) => `${a}: treeclean`));
      // Every package after the stack packages it depends on in 7.2.4.
      const at = new Map(packageCommits.map((s, i) => [s.split(':')[0]!, i]));
      for (const e of (await dependencies('7.2.4')).filter((x) => !x.testOnly)) assert.ok(at.get(e.to)! < at.get(e.from)!, `${e.from} committed before its dependency ${e.to}`);
      // A package that left goes before the commit dropping anything its 6.2.2 ebuild needs, and right before the first of them.
      const old = await dependencies('6.2.2');
      for (const atom of LEFT) {
        const needs = old.filter((e) => e.from === atom).map((e) => e.to);
        assert.ok(needs.length > 0, atom);
        for (const n of needs) assert.ok(at.get(atom)! < at.get(n)!, `${atom} removed after ${n} dropped the 6.2.2 it needs`);
        assert.ok(needs.includes(packageCommits[at.get(atom)! + 1]!.split(':')[0]!), `${atom} is not right before the first drop of what it needs`);
      }
    });

    it('a treeclean commit removes the whole package, says why and which versions, and is signed off', async () => {
      for (const atom of LEFT) {
        assert.ok(!existsSync(path.join(overlay, atom)), atom);
        const sha = (await git(overlay, ['log', '--format=%H', '--fixed-strings', `--grep=${atom}: treeclean`, `${before622}..HEAD`], home)).trim();
        const [subject, ...body] = (await git(overlay, ['log', '-1', '--format=%s%n%b', sha], home)).trimEnd().split('\n');
        assert.equal(subject, `${atom}: treeclean`);
        const text = body.join(' ').replace(/\s+/g, ' ');
        const project = atom.split('/')[1]!;
        assert.match(text, new RegExp(`^Not part of ROCm 7\\.2\\.4: the stack manifest excludes ${project} from ROCm \\d\\.\\d\\.0: `));
        assert.match(text, /Removes 6\.2\.2 \(the only version the overlay held\), with the package's Manifest, metadata\.xml and files\/: it needs the older ROCm stack this bump drops\./);
        assert.equal(body.at(-1), SIGN_OFF);
        const files = (await git(overlay, ['show', '--name-status', '--format=', sha], home)).trim().split('\n').sort();
        const pn = atom.split('/')[1]!;
        assert.deepEqual(files, [`D\t${atom}/Manifest`, `D\t${atom}/metadata.xml`, `D\t${atom}/${pn}-6.2.2.ebuild`].sort());
      }
    });

    it('changes nothing when run again, and lint finds the overlay clean', async () => {
      const tip = (await git(overlay, ['rev-parse', 'HEAD'], home)).trim();
      const again = await bump(['7.2.4', '--overlay', overlay, '--drop-old']);
      assert.equal(again.code, 0, again.stderr);
      assert.match(again.stdout, /already holds ROCm 7\.2\.4: nothing to do/);
      assert.doesNotMatch(again.stdout, /not part of ROCm/);
      assert.equal((await git(overlay, ['rev-parse', 'HEAD'], home)).trim(), tip);
      const lint = await runCli(['lint', '--overlay', overlay, '--no-shellcheck'], { home });
      assert.equal(lint.code, 0, lint.stdout + lint.stderr);
      assert.match(lint.stdout, /^49 ebuilds checked: 0 errors\/warnings/m);
    });

    it("lint flags what the old behaviour left: hipSPARSELt-6.2.2 kept next to hip 7.2.4 does not resolve (NonexistentDeps)", async () => {
      const stale = copyOverlay(overlay, path.join(work, 'stale-7.2.4'));
      await git(stale, ['checkout', before622, '--', 'sci-libs/hipSPARSELt'], home);
      const lint = await runCli(['lint', '--overlay', stale, '--no-shellcheck'], { home });
      assert.equal(lint.code, 6, lint.stdout + lint.stderr);
      const found = lint.stdout.split('\n').filter((l) => l.includes('NonexistentDeps'));
      // RDEPEND and DEPEND both name hip and hipSPARSE: each line is reported.
      const atoms = found.map((l) => /NonexistentDeps: version 6\.2\.2: (\S+) \((\S+)\): no ebuild of \S+ in the overlay provides it \(it holds 7\.2\.4 \(SLOT 0\/7\.2\)\)/.exec(l)?.slice(1, 3));
      assert.equal(found.length, 5, found.join('\n'));
      assert.deepEqual(
        [...new Map(atoms.map((x) => [JSON.stringify(x), x])).values()],
        [
          ['dev-util/hip:${SLOT}', 'dev-util/hip:0/6.2'],
          ['sci-libs/hipSPARSE:${SLOT}', 'sci-libs/hipSPARSE:0/6.2'],
          ['dev-build/rocm-cmake:${SLOT}', 'dev-build/rocm-cmake:0/6.2'],
        ],
      );
      assert.match(lint.stdout, /^sci-libs\/hipSPARSELt$/m);
      assert.match(found[0]!, /sci-libs\/hipSPARSELt: treeclean/);
    });

    it('pr body explains the move (release assets, LLVM 18 → 22, new GPU targets) and lists the packages that left with the reasons; its pr check accepts the treeclean commits', async () => {
      const range = `${before622}..HEAD`;
      // One run: --json carries the body, its data and pr check's findings (the QA section is pr check's report).
      const r = await runCli(['pr', 'body', '--overlay', overlay, '--range', range, '--template', 'none', '--no-pkgcheck', '--json'], { home });
      assert.equal(r.code, 0, r.stderr);
      const out = JSON.parse(r.stdout) as { title: string; body: string; data: { packages: { removed: { atom: string; versions: string[]; reason?: string }[] }; qa: { findings: unknown[] } } };
      const body = out.body;
      assert.equal(out.title, 'ROCm 7.2.4, drop 6.2.2');
      assert.deepEqual(out.data.packages.removed.map((x) => [x.atom, x.versions, /^Not part of ROCm 7\.2\.4: /.test(x.reason ?? '')]), [
        ['dev-util/rocm_bandwidth_test', ['6.2.2'], true],
        ['sci-libs/hipSPARSELt', ['6.2.2'], true],
      ]);
      // pr check's errors and warnings: none, the treeclean commits included.
      assert.deepEqual(out.data.qa.findings, []);
      assert.match(body, /^ROCm 7\.2\.4: this pull request adds 2 new packages, bumps 47 packages, drops old versions of 47 packages, removes 2 packages that left ROCm 7\.2\.4 in 53 commits, one package per commit\.$/m);
      assert.match(body, /^### Removed packages \(2\)$/m);
      assert.match(body, /^- `dev-util\/rocm_bandwidth_test` \(6\.2\.2\): Not part of ROCm 7\.2\.4: the stack manifest excludes rocm\\_bandwidth\\_test from ROCm 7\.0\.0: Rewritten in 7\.0 as a plugin launcher/m);
      assert.match(body, /^- `sci-libs\/hipSPARSELt` \(6\.2\.2\): Not part of ROCm 7\.2\.4: the stack manifest excludes hipSPARSELt from ROCm 6\.4\.0: Its TensileLite/m);
      // Said once: not again under the release's projects left out.
      assert.doesNotMatch(body, /^- \*\*hipSPARSELt\*\*/m);
      assert.match(body, /^### Not packaged \(\d+\)$/m);
      assert.doesNotMatch(body.split('### Dropped versions')[1]!.split('###')[0]!, /hipSPARSELt|rocm_bandwidth_test/);
      // What release-notes.ts reads from the ebuilds: the monorepos' release assets, the LLVM slot, the targets.
      assert.match(body, /^- LLVM: `LLVM_COMPAT=\( 22 \)` in \d+ ebuilds \(the versions they replace had `\( 18 \)`\): Gentoo's LLVM\/clang, not AMD's fork\.$/m);
      assert.match(body, /^- Sources: \d+ packages moved from [^\n]* to ROCm\/rocm-libraries release assets: [^\n]*`sci-libs\/rocBLAS`/m);
      assert.match(body, /^- Sources: \d+ packages moved from [^\n]* to ROCm\/rocm-systems release assets: [^\n]*`dev-util\/hip`/m);
      assert.match(body, /^- GPU targets added: [^\n]*`gfx950` \(CDNA4[^\n]*`gfx1201` \(RDNA4/m);
    });

    it('pr check: a "treeclean" commit that leaves part of the package, or touches another, is BadTreeclean', async () => {
      const bad = copyOverlay((await fullStackFixture()).overlay, path.join(work, 'bad-treeclean'));
      await git(bad, ['rm', '-q', 'sci-libs/hipSPARSELt/hipSPARSELt-6.2.2.ebuild', 'dev-util/rocm_bandwidth_test/metadata.xml'], home);
      await git(bad, ['commit', '-q', '-s', '-m', 'sci-libs/hipSPARSELt: treeclean'], home);
      const check = await runCli(['pr', 'check', '--overlay', bad, '--range', 'HEAD~1..HEAD', '--no-pkgcheck', '--json'], { home });
      assert.equal(check.code, 6, check.stderr);
      const found = (JSON.parse(check.stdout) as { results: { keyword: string; message: string }[] }).results.filter((x) => x.keyword === 'BadTreeclean');
      assert.deepEqual(found.map((x) => x.message), [
        'a treeclean of sci-libs/hipSPARSELt also deletes dev-util/rocm_bandwidth_test/metadata.xml: remove the package alone, and commit anything else on its own',
        'sci-libs/hipSPARSELt/ still holds Manifest, metadata.xml after its treeclean: remove the whole package directory, or name the commit "sci-libs/hipSPARSELt: drop <versions>"',
      ]);
    });

    it('a package that left holding other tracked files (a NOTES, a patch outside files/): its treeclean removes the whole directory, names them, and pr check accepts it', async () => {
      const extra = copyOverlay((await fullStackFixture()).overlay, path.join(work, 'treeclean-extra'));
      const lt = path.join(extra, 'sci-libs/hipSPARSELt');
      await writeFile(path.join(lt, 'NOTES'), 'kept by hand\n');
      await mkdir(path.join(lt, 'patches'));
      await writeFile(path.join(lt, 'patches/fix-build.patch'), '--- a/x\n+++ b/x\n');
      await git(extra, ['add', '-A'], home);
      await git(extra, ['commit', '-q', '-s', '-m', 'sci-libs/hipSPARSELt: notes'], home);
      const tip = (await git(extra, ['rev-parse', 'HEAD'], home)).trim();
      const dry = await bump(['7.2.4', '--overlay', extra, '--drop-old', '--dry-run', '--json']);
      assert.equal(dry.code, 0, dry.stderr);
      const planned = (JSON.parse(dry.stdout) as { left: { atom: string; files?: string[] }[] }).left.find((l) => l.atom === 'sci-libs/hipSPARSELt');
      assert.deepEqual(planned?.files, ['Manifest', 'NOTES', 'hipSPARSELt-6.2.2.ebuild', 'metadata.xml', 'patches/fix-build.patch'].map((f) => `sci-libs/hipSPARSELt/${f}`));
      const r = await bump(['7.2.4', '--overlay', extra, '--drop-old']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^ {2}sci-libs\/hipSPARSELt 6\.2\.2: removed \(treeclean: the whole directory, with NOTES, patches\/fix-build\.patch\)/m);
      assert.ok(!existsSync(lt), 'the package directory is still there');
      const sha = (await git(extra, ['log', '--format=%H', '--fixed-strings', '--grep=sci-libs/hipSPARSELt: treeclean', `${tip}..HEAD`], home)).trim();
      const files = (await git(extra, ['show', '--name-status', '--format=', sha], home)).trim().split('\n').sort();
      assert.deepEqual(files, ['Manifest', 'NOTES', 'hipSPARSELt-6.2.2.ebuild', 'metadata.xml', 'patches/fix-build.patch'].map((f) => `D\tsci-libs/hipSPARSELt/${f}`));
      assert.match((await git(extra, ['log', '-1', '--format=%b', sha], home)).replace(/\s+/g, ' '), /The whole package directory goes, with its other files: NOTES, patches\/fix-build\.patch\./);
      const check = await runCli(['pr', 'check', '--overlay', extra, '--range', `${sha}~1..${sha}`, '--no-pkgcheck', '--json'], { home });
      const results = (JSON.parse(check.stdout) as { results: { keyword: string; message: string }[] }).results;
      assert.deepEqual(results.filter((x) => x.keyword === 'BadTreeclean'), []);
    });

    it('a package that left whose directory is a committed symlink: refused (exit 4) naming it, nothing written', async () => {
      const linked = copyOverlay((await fullStackFixture()).overlay, path.join(work, 'treeclean-link'));
      await git(linked, ['mv', 'dev-util/rocm_bandwidth_test', 'dev-util/rbt-real'], home);
      execFileSync('ln', ['-s', 'rbt-real', path.join(linked, 'dev-util/rocm_bandwidth_test')]);
      await git(linked, ['add', '-A'], home);
      await git(linked, ['commit', '-q', '-s', '-m', 'dev-util/rocm_bandwidth_test: a link'], home);
      const tip = (await git(linked, ['rev-parse', 'HEAD'], home)).trim();
      const r = await bump(['7.2.4', '--overlay', linked, '--drop-old']);
      assert.equal(r.code, 4, r.stdout + r.stderr);
      const err = r.stderr.replace(/\s*›\s*/g, ' ');
      assert.match(err, /dev-util\/rocm_bandwidth_test: a symlink to rbt-real; git tracks a link as one file/);
      assert.match(err, /nothing was written/);
      assert.match(err, /hint: replace the link with the directory it points to/);
      assert.doesNotMatch(err, /internal error|at .*\.js:\d+/i);
      assert.equal((await git(linked, ['rev-parse', 'HEAD'], home)).trim(), tip);
      assert.equal((await git(linked, ['status', '--porcelain', '--untracked-files=all'], home)).trim(), '');
    });

    it('a package that left but holds a 9999 stays: only its older versions whose dependencies the bump leaves unmet go', async () => {
      const live = copyOverlay((await fullStackFixture()).overlay, path.join(work, 'live-7.2.4'));
      const lt = path.join(live, 'sci-libs/hipSPARSELt');
      const bw = path.join(live, 'dev-util/rocm_bandwidth_test');
      // hipSPARSELt-9999 next to 6.2.2 (needs hip:0/6.2: orphaned); rocm_bandwidth_test-9999 next to a
      // 6.2.2 whose maintainer let it take any rocr-runtime (nothing unmet: it stays).
      await writeFile(path.join(lt, 'hipSPARSELt-9999.ebuild'), await readFile(path.join(lt, 'hipSPARSELt-6.2.2.ebuild'), 'utf8'));
      await writeFile(path.join(bw, 'rocm_bandwidth_test-9999.ebuild'), await readFile(path.join(bw, 'rocm_bandwidth_test-6.2.2.ebuild'), 'utf8'));
      const edited = (await readFile(path.join(bw, 'rocm_bandwidth_test-6.2.2.ebuild'), 'utf8')).replace('RDEPEND="dev-libs/rocr-runtime:${SLOT}"', 'RDEPEND="dev-libs/rocr-runtime"');
      assert.match(edited, /^RDEPEND="dev-libs\/rocr-runtime"$/m);
      await writeFile(path.join(bw, 'rocm_bandwidth_test-6.2.2.ebuild'), edited);
      await git(live, ['add', '-A'], home);
      await git(live, ['commit', '-q', '-s', '-m', 'live ebuilds'], home);
      const tip = (await git(live, ['rev-parse', 'HEAD'], home)).trim();
      const dry = await bump(['7.2.4', '--overlay', live, '--drop-old', '--dry-run', '--json']);
      assert.equal(dry.code, 0, dry.stderr);
      const left = (JSON.parse(dry.stdout) as { left: { atom: string; versions: string[]; action: string; removed: string[] }[] }).left;
      assert.deepEqual(left.map((l) => [l.atom, l.versions, l.action, l.removed]), [
        ['dev-util/rocm_bandwidth_test', ['6.2.2', '9999'], 'keep', []],
        ['sci-libs/hipSPARSELt', ['6.2.2', '9999'], 'drop', ['6.2.2']],
      ]);
      const r = await bump(['7.2.4', '--overlay', live, '--drop-old']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^ {2}dev-util\/rocm_bandwidth_test 6\.2\.2, 9999: kept \(it holds newer versions or 9999; --drop-old drops 6\.2\.2 once a bump leaves their dependencies unmet\); the stack manifest excludes/m);
      assert.match(r.stdout, /^ {2}sci-libs\/hipSPARSELt 6\.2\.2, 9999: 6\.2\.2 dropped, 9999 kept; /m);
      const subjects = (await git(live, ['log', '--reverse', '--format=%s', `${tip}..HEAD`], home)).trim().split('\n');
      assert.ok(subjects.includes('sci-libs/hipSPARSELt: drop 6.2.2'), subjects.join('\n'));
      assert.ok(!subjects.some((x) => x.startsWith('dev-util/rocm_bandwidth_test') || x.endsWith(': treeclean')), subjects.join('\n'));
      assert.deepEqual((await readdir(lt)).filter((f) => f.endsWith('.ebuild')), ['hipSPARSELt-9999.ebuild']);
      assert.ok(existsSync(path.join(lt, 'metadata.xml')));
      const sha = (await git(live, ['log', '--format=%H', '--fixed-strings', '--grep=sci-libs/hipSPARSELt: drop 6.2.2', `${tip}..HEAD`], home)).trim();
      const body = (await git(live, ['log', '-1', '--format=%b', sha], home)).replace(/\s+/g, ' ');
      assert.match(body, /^Not part of ROCm 7\.2\.4: the stack manifest excludes hipSPARSELt from ROCm 6\.4\.0: .* Its newer versions stay; 6\.2\.2 needs the older ROCm stack this bump drops\./);
    });

    it('::gentoo: --drop-old is refused, naming the packages, why, and the way on (last rites, or no --drop-old); nothing is written', async () => {
      const tree = copyOverlay((await fullStackFixture()).overlay, path.join(work, 'gentoo-7.2.4'));
      await writeFile(path.join(tree, 'profiles/repo_name'), 'gentoo\n');
      await git(tree, ['commit', '-q', '-a', '-m', 'profiles: repo_name gentoo'], home);
      const tip = (await git(tree, ['rev-parse', 'HEAD'], home)).trim();
      const r = await bump(['7.2.4', '--overlay', tree, '--drop-old']);
      assert.equal(r.code, 4, r.stdout + r.stderr);
      const err = r.stderr.replace(/\s*›\s*/g, ' ');
      assert.match(err, new RegExp(`${tree.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} is ::gentoo, and 2 packages it holds left ROCm 7\\.2\\.4; --drop-old would remove them`));
      assert.match(err, /sci-libs\/hipSPARSELt: 6\.2\.2: not part of ROCm 7\.2\.4: the stack manifest excludes hipSPARSELt from ROCm 6\.4\.0/);
      assert.match(err, /dev-util\/rocm_bandwidth_test: 6\.2\.2: not part of ROCm 7\.2\.4/);
      assert.match(err, /nothing was written/);
      assert.match(err, /hint: last-rite them first: mask dev-util\/rocm_bandwidth_test sci-libs\/hipSPARSELt in \S+\/profiles\/package\.mask/);
      assert.match(err, /or bump without --drop-old, which keeps them/);
      assert.equal((await git(tree, ['rev-parse', 'HEAD'], home)).trim(), tip);
      assert.equal((await git(tree, ['status', '--porcelain', '--untracked-files=all'], home)).trim(), '');
    });

    it('kill -9 during a bump with treecleans: the branch and the record of what was generated move together; the next run completes it', async () => {
      const killedOverlay = copyOverlay((await fullStackFixture()).overlay, path.join(work, 'killed-7.2.4'));
      const recordBefore = (await git(killedOverlay, ['rev-parse', 'refs/rocm-ebuild-generated'], home)).trim();
      const killed = startCli(['bump', '7.2.4', '--overlay', killedOverlay, '--drop-old', '--distdir', distdir, '--offline'], { home, detached: true });
      await killed.waitFor(/^\[\d+\/\d+\] sci-libs\/hipSPARSELt: treeclean$/m);
      killGroup(killed);
      await killed.done;
      const afterKill = (await git(killedOverlay, ['rev-parse', 'HEAD'], home)).trim();
      const recordAfter = (await git(killedOverlay, ['rev-parse', 'refs/rocm-ebuild-generated'], home)).trim();
      assert.equal(afterKill === before622, recordAfter === recordBefore, 'the branch and the record moved apart');
      const again = await bump(['7.2.4', '--overlay', killedOverlay, '--drop-old']);
      assert.equal(again.code, 0, again.stderr);
      assert.deepEqual(await subjectsSince(killedOverlay, before622), await subjectsSince(overlay, before622));
      assert.equal((await git(killedOverlay, ['status', '--porcelain', '--untracked-files=all'], home)).trim(), '');
      for (const atom of LEFT) assert.ok(!existsSync(path.join(killedOverlay, atom)), atom);
      assert.match((await bump(['7.2.4', '--overlay', killedOverlay, '--drop-old'])).stdout, /nothing to do/);
    });
  });

  describe('--no-commit', () => {
    it('leaves the changes in the worktree and the branch where it was', async () => {
      const overlay = path.join(work, 'nocommit');
      assert.equal((await bump(['6.2.0', '--overlay', overlay])).code, 0);
      const before = (await git(overlay, ['rev-parse', 'HEAD'], home)).trim();
      const r = await bump(['6.2.2', '--overlay', overlay, '--no-commit']);
      assert.equal(r.code, 0, r.stderr);
      assert.equal((await git(overlay, ['rev-parse', 'HEAD'], home)).trim(), before);
      const status = (await git(overlay, ['status', '--porcelain', '--untracked-files=all'], home)).trim().split('\n');
      assert.ok(status.includes('?? sci-libs/rocBLAS/rocBLAS-6.2.2.ebuild'), status.join('\n'));
      assert.ok(status.includes(' M sci-libs/rocBLAS/Manifest'), status.join('\n'));
      assert.equal((await git(overlay, ['diff', '--cached', '--name-only'], home)).trim(), '', 'changes were staged');
    });
  });

  describe('refusals', () => {
    it('explains how to set a git identity when none is configured, and creates nothing', async () => {
      const bare = await gitHome(null);
      try {
        const overlay = path.join(work, 'anonymous');
        const r = await bump(['6.2.2', '--overlay', overlay], { home: bare });
        assert.equal(r.code, 4);
        assert.match(r.stderr, /no git identity is configured, so commits cannot carry a Signed-off-by line \(GLEP 76\)\.\nSet one with: git config --global user\.name/);
        assert.ok(!existsSync(overlay));
      } finally {
        await removeDir(bare);
      }
    });

    it('refuses a non-empty directory that is not a git repository', async () => {
      const dir = path.join(work, 'plain');
      await mkdir(dir);
      await writeFile(path.join(dir, 'README'), 'mine\n');
      const r = await bump(['6.2.2', '--overlay', dir]);
      assert.equal(r.code, 4);
      assert.match(r.stderr, /is not the top directory of a git repository/);
      assert.deepEqual(await readdir(dir), ['README']);
    });

    it('refuses an unknown release, naming the known ones (exit 2)', async () => {
      const r = await bump(['6.9.9', '--overlay', path.join(work, 'x')]);
      assert.equal(r.code, 2);
      assert.match(r.stderr, /release 6\.9\.9 is not in the manifest .*; it knows 6\.2\.0, 6\.2\.1, 6\.2\.2, 6\.2\.4, 6\.3\.0, 6\.3\.1, 6\.3\.2, 6\.3\.3/);
    });
  });
});
