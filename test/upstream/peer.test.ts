import { strict as assert } from 'node:assert';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync } from 'node:fs';
import { lstat, readdir, readFile, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'yaml';
import type { PeerReport } from '../../src/upstream/peers/peer-report.js';
import { setPeerRecord, type PeerRecord } from '../../src/upstream/records/peer-records.js';
import { RecordError } from '../../src/upstream/records/component-file.js';
import { fixtureManifest } from '../helpers/fixture-manifest.js';
import { removeDir, root, runCli, tempDir, writeTree } from '../helpers/project.js';
import { ALPHA, EXTERNAL, HIP, OUR_PATCH, peerTrees, STACK, TEST_SED_ARGUED } from './peer-fixtures.js';

describe('upstream peer', function () {
  this.timeout(180_000);
  let dir: string;
  let gentoo: string;
  let spack: string;

  before(async () => {
    dir = await tempDir('rocm-ebuild-peer-');
    const t = peerTrees();
    gentoo = path.join(dir, 'gentoo');
    spack = path.join(dir, 'spack');
    await writeTree(gentoo, t.gentoo);
    await writeTree(spack, t.spack);
  });
  after(() => removeDir(dir));

  /** A fresh copy of the test stack, with files replaced as given. */
  const manifest = (files: Record<string, string | null> = {}) =>
    fixtureManifest({
      'stack.yaml': STACK,
      'external.yaml': EXTERNAL,
      'components/base.yaml': null,
      'components/gpulib.yaml': null,
      'components/app.yaml': null,
      'components/hip.yaml': HIP,
      'components/alpha.yaml': ALPHA,
      'patches/alpha/alpha-cstdint.patch': OUR_PATCH,
      ...files,
    });
  const argued = ALPHA.replace('# (end)\n', `${TEST_SED_ARGUED}# (end)\n`);
  const peer = (m: string, args: string[], trees: { gentoo?: string; spack?: string } = { gentoo, spack }) =>
    runCli(['upstream', 'peer', ...args, '--manifest', m, ...(trees.gentoo ? ['--gentoo', trees.gentoo] : []), ...(trees.spack ? ['--spack', trees.spack] : [])]);
  const json = (stdout: string) => JSON.parse(stdout) as PeerReport;
  const read = (m: string) => readFile(path.join(m, 'components', 'alpha.yaml'), 'utf8');
  const items = (r: PeerReport, peerKind: string) => new Map((r.components.find((c) => c.peer === peerKind)?.items ?? []).map((i) => [`${i.fact} ${i.item}`, i]));

  it('compares each fact with ::gentoo and Spack: agreeing, differing with both sides, argued; a peer fix-up we lack is a finding (exit 6)', async () => {
    const m = await manifest();
    const r = await peer(m, ['7.2.0', 'alpha', '--json']);
    assert.equal(r.code, 6, r.stderr);
    const report = json(r.stdout);
    const g = items(report, 'gentoo');
    assert.equal(g.get('sources SRC_URI')?.status, 'agrees');
    assert.equal(g.get('sources S')?.status, 'agrees');
    assert.equal(g.get('deps dev-util/hip')?.status, 'agrees');
    // numactl: ::gentoo lists it, ours gets it through hip.
    assert.deepEqual([g.get('deps sys-process/numactl')?.status, g.get('deps sys-process/numactl')?.ours], ['agrees', 'through dev-util/hip']);
    assert.equal(g.get('cmake BUILD_TEST')?.status, 'agrees', '$(usex test) and "$(usex test ON OFF)" are one value');
    assert.deepEqual([g.get('cmake ALPHA_USE_HMM')?.status, g.get('cmake ALPHA_USE_HMM')?.ours, g.get('cmake ALPHA_USE_HMM')?.peer], ['differs', 'OFF', 'ON']);
    assert.match(g.get('cmake ALPHA_USE_HMM')?.argued ?? '', /host-mapped memory is slower/);
    assert.deepEqual([g.get('cmake ALPHA_TEST_DATA')?.status, g.get('cmake ALPHA_TEST_DATA')?.peer], ['differs', 'test? ${WORKDIR}/data']);
    // The same edit written otherwise: ::gentoo's sed and our replace; its patch and ours, other hunks and context.
    assert.equal(g.get('fixups sed src/config.h')?.status, 'agrees');
    assert.equal(g.get('fixups patch alpha-7.0.0-include-cstdint.patch')?.status, 'agrees');
    assert.match(g.get('fixups patch alpha-7.0.0-include-cstdint.patch')?.ours ?? '', /patch alpha-cstdint\.patch/);
    const sed = g.get('fixups sed test/CMakeLists.txt')!;
    assert.deepEqual([sed.status, sed.finding, sed.argued], ['differs', true, undefined]);
    assert.match(sed.peer!, /^test\? alpha-rocm-7\.2\.0\/test\/CMakeLists\.txt: −Werror$/);
    assert.equal(sed.peerWhere?.line, 41);
    const gc = report.components.find((c) => c.peer === 'gentoo')!;
    assert.deepEqual(gc.lacks, ['sed test/CMakeLists.txt']);
    assert.equal(gc.record, undefined, 'a record with an unargued finding is withheld');
    assert.match(gc.withheld ?? '', /sed test\/CMakeLists\.txt/);

    const s = items(report, 'spack');
    assert.equal(s.get('sources trees')?.status, 'agrees');
    assert.equal(s.get('deps dev-cpp/gtest')?.ours, 'test');
    assert.ok(!s.has('deps dev-libs/boost'), "a dependency of Spack's 6.4 only is not this version's");
    assert.ok(![...s.keys()].some((k) => /libx11|cxx|cmake$/.test(k)), 'a non-default variant and the implicit tools are not compared');
    assert.deepEqual([s.get('cmake ALPHA_USE_HMM')?.peer, s.get('cmake BUILD_TEST')?.peer], ['ON', '$(usex test ON OFF)']);
    assert.ok(!s.has('cmake ALPHA_ASAN'));
    assert.match(s.get('fixups filter_file src/config.h')?.peer ?? '', /\+self \+spec \+hip \+prefix −opt −rocm/);
    const sc = report.components.find((c) => c.peer === 'spack')!;
    assert.match(sc.aside?.[0]?.why ?? '', /\^cmake@3\.21\.0:3\.21\.2/);
  });

  it('--record writes the computed record, takes the release out of the typed one, keeps every other byte; a second run changes nothing', async () => {
    const m = await manifest({ 'components/alpha.yaml': argued });
    const before = await read(m);
    const r = await peer(m, ['7.2.0', 'alpha', '--record'], { gentoo });
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.match(r.stdout, /record +written: peer \(sources, deps, fixups, tests\), lacks 1/);
    const after = await read(m);
    // Only the evidence list changed: the typed record lost 7.2.0 and the computed one follows it.
    const expected = before.replace('  - releases: ["7.1.1", "7.2.0"]\n', '  - releases: ["7.1.1"]\n').replace(
      '    facts: [sources, deps, cmake, fixups]\n',
      '    facts: [sources, deps, cmake, fixups]\n  - releases: ["7.2.0"]\n    kind: peer\n    source: "::gentoo sci-libs/alpha/alpha-7.2.0.ebuild"\n    facts: [sources, deps, fixups, tests]\n    lacks: ["sed test/CMakeLists.txt"]\n',
    );
    assert.equal(after, expected);
    const again = await peer(m, ['7.2.0', 'alpha', '--record'], { gentoo });
    assert.equal(again.code, 0);
    assert.match(again.stdout, /record +already recorded/);
    assert.equal(await read(m), after);
    // The manifest validates: the record's finding is argued.
    const v = await runCli(['validate', m]);
    assert.equal(v.code, 0, v.stdout + v.stderr);
  });

  it('compares a release the peer lacks with its nearest lower recipe and says so in the record', async () => {
    const m = await manifest({ 'components/alpha.yaml': argued });
    const r = await peer(m, ['7.1.1', 'alpha', '--record']);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.match(r.stdout, /::gentoo sci-libs\/alpha\/alpha-7\.1\.0\.ebuild \(the nearest lower version, 7\.1\.0\)/);
    const evidence = (parse(await read(m)) as { evidence: PeerRecord[] }).evidence;
    const g = evidence.find((e) => e.source === '::gentoo sci-libs/alpha/alpha-7.1.0.ebuild')!;
    assert.deepEqual(g.releases, ['7.1.1']);
    assert.match(g.note!, /::gentoo has no ebuild of these releases; its 7\.1\.0 ebuild, the nearest lower version, was read as its copy to each/);
    // Spack's 7.1.0 is another tag than ours: its fix-ups' files are not placed in our source, and its sources differ.
    assert.deepEqual(
      evidence.map((e) => [e.source, e.releases, e.facts]),
      [
        ['::gentoo sci-libs/alpha/alpha-7.2.0.ebuild', ['7.2.0'], ['sources', 'deps', 'cmake', 'fixups']],
        ['::gentoo sci-libs/alpha/alpha-7.1.0.ebuild', ['7.1.1'], ['sources', 'deps', 'fixups', 'tests']],
        ['Spack repos/spack_repo/builtin/packages/alpha/package.py', ['7.1.1'], ['deps']],
      ],
    );
    assert.match(evidence[2]!.note!, /Spack's recipe has no version\(\) of these releases; compared with its version\("7\.1\.0"\)/);
  });

  it('validate and lint fail on a finding no differences: entry argues', async () => {
    const m = await manifest({ 'components/alpha.yaml': argued });
    assert.equal((await peer(m, ['7.2.0', 'alpha', '--record'], { gentoo })).code, 0);
    // Someone drops the argument later: the record's finding is open again.
    await writeFile(path.join(m, 'components', 'alpha.yaml'), (await read(m)).replace(TEST_SED_ARGUED, ''));
    const v = await runCli(['validate', m], { env: { ROCM_EBUILD_NO_CACHE: '1' } });
    assert.equal(v.code, 2, v.stdout);
    assert.match(v.stderr + v.stdout, /alpha\.yaml:\d+:\d+: .*::gentoo's fix-up "sed test\/CMakeLists\.txt" changes our source and we carry no equivalent edit/);
    assert.match(v.stderr + v.stdout, /differences: \{ peer: gentoo, fact: fixups, item: "sed test\/CMakeLists\.txt"/);
    const l = await runCli(['lint', '--version', '7.2.0', '--manifest', m], { env: { ROCM_EBUILD_NO_CACHE: '1' } });
    assert.equal(l.code, 2, l.stdout);
  });

  describe('hostile and broken peer trees: a clear error, nothing written', () => {
    const hostile = async (files: Record<string, string>, setup?: (tree: string) => Promise<void>) => {
      const tree = await tempDir('rocm-ebuild-peer-hostile-');
      await writeTree(tree, { ...peerTrees().gentoo, ...files });
      if (setup) await setup(tree);
      return tree;
    };
    const refused = async (tree: string, pattern: RegExp, which: 'gentoo' | 'spack' = 'gentoo') => {
      const m = await manifest({ 'components/alpha.yaml': argued });
      const before = await read(m);
      const r = await peer(m, ['7.2.0', 'alpha', '--record'], { [which]: tree });
      assert.equal(r.code, 2, r.stdout + r.stderr);
      assert.match(r.stderr, pattern);
      assert.match(r.stderr, /nothing was written/);
      assert.equal(await read(m), before);
      assert.deepEqual((await readdir(path.join(m, 'components'))).sort(), ['alpha.yaml', 'hip.yaml']);
      await removeDir(tree);
    };

    it('an ebuild that is a symbolic link out of the tree', async () => {
      const outside = path.join(dir, 'outside.ebuild');
      await writeFile(outside, 'SRC_URI="https://example.org/secret"\n');
      const tree = await hostile({}, async (t) => {
        await rm(path.join(t, 'sci-libs/alpha/alpha-7.2.0.ebuild'));
        await symlink(outside, path.join(t, 'sci-libs/alpha/alpha-7.2.0.ebuild'));
      });
      await refused(tree, /alpha-7\.2\.0\.ebuild leads out of the tree \(a symbolic link to .*outside\.ebuild\)/);
    });

    it('a package directory that is a symbolic link out of the tree', async () => {
      const elsewhere = await tempDir('rocm-ebuild-peer-elsewhere-');
      await writeTree(elsewhere, { 'alpha-7.2.0.ebuild': 'EAPI=8\n' });
      const tree = await hostile({}, async (t) => {
        await removeDir(path.join(t, 'sci-libs/alpha'));
        await symlink(elsewhere, path.join(t, 'sci-libs/alpha'));
      });
      await refused(tree, /sci-libs\/alpha leads out of the tree/);
      await removeDir(elsewhere);
    });

    it('a FIFO where the ebuild is: refused at once, never opened for a writer that never comes', async () => {
      const tree = await hostile({}, async (t) => {
        await rm(path.join(t, 'sci-libs/alpha/alpha-7.2.0.ebuild'));
        execFileSync('mkfifo', [path.join(t, 'sci-libs/alpha/alpha-7.2.0.ebuild')]);
      });
      await refused(tree, /alpha-7\.2\.0\.ebuild: cannot read it \(a FIFO, not a regular file\)/);
    });

    it('a patch of a gigabyte (sparse: no disk is used)', async () => {
      const tree = await hostile({}, async (t) => {
        const p = path.join(t, 'sci-libs/alpha/files/alpha-7.0.0-include-cstdint.patch');
        await truncate(p, 1024 ** 3);
      });
      await refused(tree, /include-cstdint\.patch: cannot read it \(larger than 4194304 bytes\)/);
    });

    it('an ebuild that is not UTF-8, with the line and column of the first bad byte', async () => {
      const tree = await hostile({}, async (t) => {
        await writeFile(path.join(t, 'sci-libs/alpha/alpha-7.2.0.ebuild'), Buffer.concat([Buffer.from('EAPI=8\nDESCRIPTION="a'), Buffer.from([0xff, 0xfe]), Buffer.from('"\n')]));
      });
      await refused(tree, /alpha-7\.2\.0\.ebuild:2:15: not UTF-8 \(byte 0xff at offset 21\)/);
    });

    it('a package.py nested deeper than any recipe', async () => {
      const tree = await tempDir('rocm-ebuild-peer-spack-');
      await writeTree(tree, { 'repos/spack_repo/builtin/packages/alpha/package.py': `class Alpha(Package):\n    x = ${'('.repeat(20_000)}1${')'.repeat(20_000)}\n` });
      await refused(tree, /package\.py:2:\d+: brackets nested more than 100 deep/, 'spack');
    });

    it('a package.py that tries to run code is read, never run: nothing it asks for happens', async () => {
      const marker = path.join(dir, 'ran');
      const tree = await tempDir('rocm-ebuild-peer-spack-');
      const code = (what: string) => `__import__("os").system("touch ${marker}-${what}")`;
      await writeTree(tree, {
        'repos/spack_repo/builtin/packages/alpha/package.py': [
          `import os; os.system("touch ${marker}-import")`,
          code('module'),
          'class Alpha(CMakePackage):',
          `    url = "https://github.com/ROCm/alpha/archive/rocm-7.2.0.tar.gz"`,
          '    version("7.2.0", sha256="0")',
          `    exec(${JSON.stringify(code('exec'))})`,
          `    depends_on(${code('dep')})`,
          '    def cmake_args(self):',
          `        open("${marker}-open", "w").write("x")`,
          `        return [self.define("A", ${code('define')}), eval("1")]`,
          '    def patch(self):',
          `        filter_file("a", ${code('filter')}, "CMakeLists.txt")`,
          '',
        ].join('\n'),
      });
      const m = await manifest();
      const r = await peer(m, ['7.2.0', 'alpha', '--json'], { spack: tree });
      assert.ok([0, 6].includes(r.code), r.stderr);
      const report = json(r.stdout);
      const c = report.components.find((x) => x.peer === 'spack')!;
      assert.ok((c.items ?? []).some((i) => i.item === 'A' && /__import__/.test(i.peer ?? '')));
      assert.deepEqual((await readdir(dir)).filter((f) => f.startsWith('ran')), [], 'nothing the recipe asked for ran');
      await removeDir(tree);
    });

    it('a tree that is not a directory, and a missing one', async () => {
      const m = await manifest();
      const file = path.join(dir, 'not-a-tree');
      await writeFile(file, 'x');
      const a = await peer(m, ['7.2.0', 'alpha'], { gentoo: file });
      assert.equal(a.code, 2);
      assert.match(a.stderr, /--gentoo: .*not-a-tree is not a directory/);
      const b = await peer(m, ['7.2.0', 'alpha'], { spack: path.join(dir, 'nowhere') });
      assert.equal(b.code, 2);
      assert.match(b.stderr, /--spack: .*nowhere: cannot read it \(ENOENT\)/);
    });
  });

  describe('a component file --record must not replace: refused before any peer recipe is read (exit 2), nothing changes', () => {
    /** Runs --record on alpha.yaml set up by `setup`, and checks the refusal; returns the file's text afterwards. */
    const refusedRecord = async (setup: (file: string) => Promise<() => void>, pattern: RegExp) => {
      const m = await manifest({ 'components/alpha.yaml': argued });
      const file = path.join(m, 'components', 'alpha.yaml');
      const undo = await setup(file);
      try {
        const r = await peer(m, ['7.2.0', 'alpha', '--record']);
        assert.equal(r.code, 2, `${r.stdout}\n${r.stderr}`);
        assert.match(r.stderr, pattern);
        assert.match(r.stderr, /; nothing was compared or written\n$/);
        assert.doesNotMatch(r.stderr, /internal error|at .*\.js:\d+/);
        assert.equal(r.stdout, '', 'no comparison was printed');
        const j = await peer(m, ['7.2.0', 'alpha', '--record', '--json']);
        assert.equal(j.code, 2);
        assert.equal((JSON.parse(j.stdout) as { error: { exitCode: number } }).error.exitCode, 2);
      } finally {
        undo();
      }
      assert.deepEqual((await readdir(path.join(m, 'components'))).filter((n) => n.startsWith('.alpha.yaml')), [], 'no lock or temporary file left');
      return m;
    };

    it('a symbolic link: the file it points to is neither read for writing nor replaced, and the link stays a link', async () => {
      const real = path.join(await tempDir('rocm-ebuild-peer-linked-'), 'alpha.yaml');
      const m = await refusedRecord(async (file) => {
        await writeFile(real, argued);
        await rm(file);
        await symlink(real, file);
        return () => undefined;
      }, /alpha\.yaml is a symbolic link \(to .*alpha\.yaml\); --record writes only regular files in the manifest directory: record in the file itself/);
      assert.equal(await readFile(real, 'utf8'), argued);
      assert.ok((await lstat(path.join(m, 'components', 'alpha.yaml'))).isSymbolicLink());
      await removeDir(path.dirname(real));
    });

    it('an immutable or read-only file: the refusal names it, not an internal error', async () => {
      const m = await refusedRecord(async (file) => {
        if (process.getuid?.() === 0 && spawnSync('chattr', ['+i', file]).status === 0) return () => void spawnSync('chattr', ['-i', file]);
        chmodSync(file, 0o444);
        return () => chmodSync(file, 0o644);
      }, /alpha\.yaml: cannot replace it \((immutable or append-only, EPERM|read-only for you, EACCES)\); make the file and its directory writable, or add the record by hand/);
      assert.equal(await read(m), argued);
    });
  });

  describe('a second process and kill -9', () => {
    it('the CLI run twice at once writes the record once', async () => {
      const m = await manifest({ 'components/alpha.yaml': argued });
      const [a, b] = await Promise.all([peer(m, ['7.2.0', 'alpha', '--record'], { gentoo }), peer(m, ['7.2.0', 'alpha', '--record'], { gentoo })]);
      assert.deepEqual([a.code, b.code], [0, 0], a.stderr + b.stderr);
      const text = await read(m);
      assert.equal(text.split('releases: ["7.2.0"]').length, 2, text);
      assert.match(a.stdout + b.stdout, /record +written/);
      assert.match(a.stdout + b.stdout, /record +already recorded/);
    });

    it('a writer killed with SIGKILL at any moment leaves the old file or the new one, and the next run takes over its lock', async () => {
      const padding = Array.from({ length: 16_384 }, (_, i) => `# ${String(i).padStart(5, '0')} ${'-'.repeat(54)}\n`).join('');
      const m = await manifest({ 'components/alpha.yaml': padding + argued });
      const file = path.join(m, 'components', 'alpha.yaml');
      const writer = (versions: string[]) => {
        const code = `
          const { rewriteComponentFile } = await import(${JSON.stringify(path.join(root, 'dist/src/upstream/records/component-file.js'))});
          const { setPeerRecord } = await import(${JSON.stringify(path.join(root, 'dist/src/upstream/records/peer-records.js'))});
          const [file, dir, ...versions] = process.argv.slice(1);
          for (const v of versions) {
            const record = { releases: [v], kind: 'peer', source: 'Spack repos/x/package.py', facts: ['sources'] };
            await rewriteComponentFile(file, dir, (text) => setPeerRecord(text, v, 'Spack ', record, file));
          }
        `;
        return spawn(process.execPath, ['--input-type=module', '-e', code, file, m, ...versions], { stdio: ['ignore', 'inherit', 'inherit'] });
      };
      const exited = (child: ReturnType<typeof spawn>) => new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
      let reads = 0;
      let last = 0;
      let reading = true;
      const reader = (async () => {
        while (reading) {
          const text = await readFile(file, 'utf8');
          assert.ok(text.startsWith(padding) && text.endsWith('# (end)\n'), `a read saw a broken file of ${text.length} characters`);
          const spack = (parse(text) as { evidence: PeerRecord[] }).evidence.find((e) => e.source.startsWith('Spack'));
          const count = spack ? (spack.releases as string[]).length : 0;
          assert.ok(count >= last, 'a release disappeared');
          last = count;
          reads++;
          await new Promise((r) => setImmediate(r));
        }
      })();
      for (let round = 0; round < 3; round++) {
        const child = writer(Array.from({ length: 150 }, (_, i) => `${8 + round}.${i}.0`));
        const done = exited(child);
        const start = last;
        for (let waited = 0; last === start && waited < 30_000; waited += 10) await new Promise((r) => setTimeout(r, 10));
        await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 40)));
        child.kill('SIGKILL');
        await done;
      }
      reading = false;
      await reader;
      assert.ok(reads > 10, `only ${reads} reads`);
      assert.ok(last > 1, 'the killed writers wrote something before they were killed');
      const next = await exited(writer(['20.0.0']));
      assert.equal(next, 0);
      assert.deepEqual((await readdir(path.join(m, 'components'))).sort(), ['alpha.yaml', 'hip.yaml']);
      assert.match(await readFile(file, 'utf8'), /"20\.0\.0"\]/);
    });
  });

  describe('setting a peer record in the text', () => {
    const rec = (v: string, facts: PeerRecord['facts'] = ['sources']): PeerRecord => ({ releases: [v], kind: 'peer', source: 'Spack repos/x/package.py', facts });
    const text = 'name: x\nevidence:\n  - releases: ["6.2.2", "7.2.0"]  # typed\n    kind: peer\n    source: Spack repos/x/package.py\n    facts: [sources, deps]\n  - releases: ["7.2.0"]\n    kind: tag\n    source: ROCm/x at rocm-7.2.0\nnotes: n\n';
    it('narrows a typed record, joins a record of the same content, drops one left empty, and keeps the rest', () => {
      const a = setPeerRecord(text, '7.2.0', 'Spack ', rec('7.2.0'))!;
      assert.equal(a, 'name: x\nevidence:\n  - releases: ["6.2.2"]  # typed\n    kind: peer\n    source: Spack repos/x/package.py\n    facts: [sources, deps]\n  - releases: ["7.2.0"]\n    kind: tag\n    source: ROCm/x at rocm-7.2.0\n  - releases: ["7.2.0"]\n    kind: peer\n    source: Spack repos/x/package.py\n    facts: [sources]\nnotes: n\n');
      const b = setPeerRecord(a, '7.1.0', 'Spack ', rec('7.1.0'))!;
      assert.match(b, /releases: \["7\.1\.0", "7\.2\.0"\]\n    kind: peer\n    source: Spack repos\/x\/package\.py\n    facts: \[sources\]\n/);
      assert.equal(setPeerRecord(b, '7.1.0', 'Spack ', rec('7.1.0')), undefined);
      const c = setPeerRecord(b, '6.2.2', 'Spack ', undefined)!;
      assert.ok(!c.includes('# typed'), 'the record left with no release goes, its comment with it');
      assert.match(c, /^name: x\nevidence:\n {2}- releases: \["7\.2\.0"\]\n {4}kind: tag\n/);
      assert.equal(setPeerRecord(c, '6.2.2', '::gentoo ', undefined), undefined);
    });
    it('refuses a layout it cannot edit without rewriting it', () => {
      const range = 'name: x\nevidence:\n  - releases: { from: "7.0.0" }\n    kind: peer\n    source: Spack repos/x/package.py\n';
      assert.throws(() => setPeerRecord(range, '7.2.0', 'Spack ', rec('7.2.0')), RecordError);
      assert.throws(() => setPeerRecord('name: x\nevidence: [{ releases: ["7.2.0"], kind: peer, source: Spack y }]\n', '7.2.0', 'Spack ', undefined), RecordError);
    });
  });

  it('has --help with examples that run', async () => {
    const r = await runCli(['upstream', 'peer', '--help']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Exit codes: 0 compared, 2 invalid input/);
    const examples = r.stdout
      .slice(r.stdout.indexOf('EXAMPLES'))
      .replace(/ *\\\n\s*/g, ' ')
      .split('\n')
      .filter((l) => l.trim().startsWith('$ rocm-ebuild upstream peer'));
    assert.equal(examples.length, 3);
    const m = await manifest({ 'components/alpha.yaml': argued });
    for (const line of examples) {
      // The examples, on the test stack and its peer trees.
      const words = line
        .trim()
        .replace(/^\$ rocm-ebuild upstream peer /, '')
        .replace(/ (rocPRIM|rocSOLVER)/g, ' alpha')
        .replace(/ hipCUB/, ' hip')
        .replace(/\/var\/db\/repos\/gentoo|~\/gentoo/, gentoo)
        .replace('~/spack-packages', spack)
        .replace('7.1.0', '7.1.1')
        .split(' ');
      const e = await runCli(['upstream', 'peer', ...words, '--manifest', m]);
      assert.ok([0, 6].includes(e.code), `${line}: exit ${e.code}: ${e.stderr}`);
      if (words.includes('--json')) assert.equal(json(e.stdout).version, words[0]);
    }
    assert.ok(existsSync(path.join(m, 'components', 'alpha.yaml')));
    assert.match(await read(m), /releases: \["7\.2\.0"\]\n {4}kind: peer\n {4}source: "::gentoo sci-libs\/alpha\/alpha-7\.2\.0\.ebuild"/, 'the --record example recorded');
  });
});
