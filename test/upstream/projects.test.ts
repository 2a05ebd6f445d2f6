import { strict as assert } from 'node:assert';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { removeDir, runCli, shippedManifest, tempDir } from '../helpers/project.js';
import { parseReleaseManifest, ReleaseManifestError } from '../../src/upstream/releases/release-manifest.js';
import type { ProjectsReport } from '../../src/upstream/releases/projects.js';
import { fixtures, stackCopy, universe, type Universe } from './support.js';

const xml = (name: string) => path.join(fixtures, 'release-manifests', name);

describe('upstream projects', function () {
  this.timeout(180_000);
  let u: Universe;
  let dir: string;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    u = await universe();
    dir = await tempDir('rocm-ebuild-projects-');
    env = { XDG_CACHE_HOME: path.join(dir, 'cache') };
  });
  after(() => removeDir(dir));

  it('reads repo-tool manifests: remotes, default revision, paths, groups, remove-project', () => {
    const m = parseReleaseManifest(`<?xml version="1.0"?>
<!-- comment <project name="commented-out"/> -->
<manifest>
  <remote name="a" fetch="https://github.com/ROCm/"/>
  <remote name='b' fetch='https://example.org/git'/>
  <default revision="refs/tags/rocm-6.3.3" remote="a"/>
  <project name="x" groups="mathlibs, tools"/>
  <project name="y" path="sub/y" remote="b"/>
  <project name="z &amp; co"/>
  <remove-project name="x"/>
</manifest>`);
    assert.deepEqual(m, {
      revision: 'refs/tags/rocm-6.3.3',
      projects: [
        { name: 'y', path: 'sub/y', groups: [], url: 'https://example.org/git/y' },
        { name: 'z & co', path: 'z & co', groups: [], url: 'https://github.com/ROCm/z & co' },
      ],
    });
    assert.throws(() => parseReleaseManifest('<manifest><project name="a"></manifest>', 'bad.xml'), (e: unknown) => e instanceof ReleaseManifestError && /^bad\.xml: not a valid XML manifest: .*1:/.test(e.message));
    assert.throws(() => parseReleaseManifest('<other/>', 'x.xml'), /x\.xml: no <manifest> element/);
    assert.throws(() => parseReleaseManifest('<manifest>\n<project path="p"/></manifest>', 'y.xml'), /y\.xml:2: <project> without a name/);
  });

  it("compares AMD's 6.3.3 list with the shipped manifest's 6.2.2 projects, from local files", async () => {
    const r = await runCli(['upstream', 'projects', '6.3.3', '--manifest', shippedManifest, '--file', xml('rocm-6.3.3.xml'), '--against', '6.2.2', '--against-file', xml('rocm-6.2.2.xml'), '--no-probe', '--json'], { env });
    assert.equal(r.code, 0, r.stderr);
    const j = JSON.parse(r.stdout) as ProjectsReport;
    const by = (s: string) => j.projects.filter((p) => p.status === s).map((p) => p.name).sort();
    assert.deepEqual(by('new'), ['TransferBench', 'hipBLAS-common', 'rocJPEG', 'rocprofiler-compute', 'rocprofiler-systems']);
    assert.deepEqual(by('gone'), ['ROCT-Thunk-Interface', 'omniperf', 'omnitrace']);
    assert.equal(by('kept').length, 57);
    const thunk = j.projects.find((p) => p.name === 'ROCT-Thunk-Interface')!;
    assert.deepEqual(thunk.packagedBy, ['dev-libs/roct-thunk-interface']);
    assert.match(j.projects.find((p) => p.name === 'omniperf')!.excluded!, /dash-bootstrap-components/);
    // The shipped manifest records 6.3.3: every new project is packaged or excluded, and its
    // list is AMD's.
    assert.ok(j.projects.filter((p) => p.status === 'new').every((p) => p.accounted));
    assert.deepEqual(j.projects.find((p) => p.name === 'hipBLAS-common')!.packagedBy, ['sci-libs/hipBLAS-common']);
    assert.match(j.projects.find((p) => p.name === 'rocprofiler-systems')!.excluded!, /omnitrace renamed/);
    assert.deepEqual(j.drift, { notInManifest: [], notUpstream: [] });
    // Paths come from both files: unchanged ones are not reported.
    assert.ok(j.projects.every((p) => p.pathBefore === undefined));
    assert.deepEqual(j.relations, []);
    assert.deepEqual(j.problems, []);
    const text = await runCli(['upstream', 'projects', '6.3.3', '--manifest', shippedManifest, '--file', xml('rocm-6.3.3.xml'), '--against', '6.2.2', '--no-probe'], { env });
    assert.match(text.stdout, /^ {2}new +rocJPEG +packaged by media-libs\/rocJPEG$/m);
    assert.match(text.stdout, /^ {2}gone +ROCT-Thunk-Interface +packaged by dev-libs\/roct-thunk-interface$/m);
    assert.match(text.stdout, /^ {2}note: checkout paths not compared: give 6\.2\.2's release manifest with --against-file$/m);
    assert.match(text.stdout, /^62 projects in 6\.3\.3: 57 kept, 5 new \(0 to decide\), 3 gone since 6\.2\.2$/m);
    // Without --against, the newest release the manifest knows before 6.3.3: nothing changed since 6.3.2.
    const next = await runCli(['upstream', 'projects', '6.3.3', '--manifest', shippedManifest, '--file', xml('rocm-6.3.3.xml'), '--no-probe'], { env });
    assert.match(next.stdout, /^62 projects in 6\.3\.3: 62 kept, 0 new \(0 to decide\), 0 gone since 6\.3\.2$/m);
  });

  it("finds renames and moves into another repository with evidence, from ROCm/ROCm's tags", async () => {
    const stack = stackCopy();
    const r = await runCli(['upstream', 'projects', '6.3.3', '--trees', '--json', '--manifest', stack, '--base-url', u.baseUrl], { env });
    assert.equal(r.code, 0, r.stderr);
    const j = JSON.parse(r.stdout) as ProjectsReport;
    assert.equal(j.source, 'ROCm/ROCm rocm-6.3.3:default.xml');
    assert.deepEqual(j.projects.map((p) => [p.name, p.status, p.accounted]), [
      ['gpulib', 'kept', true],
      ['gpulib-common', 'new', false],
      ['gpulib-data', 'kept', true],
      ['runtime', 'kept', true],
      ['newtool', 'new', false],
      ['thunk', 'gone', false],
      ['oldtool', 'gone', false],
    ]);
    assert.deepEqual(j.projects.find((p) => p.name === 'runtime')!.pathBefore, 'runtime');
    const [renamed, moved] = j.relations;
    assert.deepEqual([renamed!.kind, renamed!.from, renamed!.to, renamed!.evidence[0]], ['renamed', 'oldtool', 'newtool', 'same checkout path tools/oldtool']);
    assert.match(renamed!.evidence[1]!, /^the oldtool repository answers with newtool's HEAD \([0-9a-f]{12}\)$/);
    assert.deepEqual(moved, { kind: 'moved', from: 'thunk', to: 'runtime', at: 'libthunk', evidence: ['5 of 5 files of thunk 6.2.2 are in runtime 6.3.3 under libthunk/'] });
    assert.equal(j.relations.length, 2);
    const text = await runCli(['upstream', 'projects', '6.3.3', '--manifest', stack, '--base-url', u.template], { env });
    assert.match(text.stdout, /^ {2}path +runtime +runtime → system\/runtime$/m);
    assert.match(text.stdout, /^ {2}renamed +oldtool → newtool: same checkout path tools\/oldtool; the oldtool repository answers with newtool's HEAD \([0-9a-f]{12}\)$/m);
    assert.doesNotMatch(text.stdout, /moved/); // file lists are compared only with --trees
  });

  it("reports drift between the manifest's own list for a release and AMD's", async () => {
    const stack = stackCopy();
    const r = await runCli(['upstream', 'projects', '6.2.2', '--json', '--no-probe', '--manifest', stack, '--file', xml('stack-6.3.3.xml')], { env });
    const j = JSON.parse(r.stdout) as ProjectsReport;
    assert.deepEqual(j.drift, { notInManifest: ['gpulib-common', 'newtool'], notUpstream: ['thunk', 'oldtool'] });
  });

  it('a release AMD does not have, a broken file and an unreachable repository each get their exit code', async () => {
    const stack = stackCopy();
    const none = await runCli(['upstream', 'projects', '6.9.9', '--manifest', stack, '--base-url', u.baseUrl], { env });
    assert.equal(none.code, 2);
    assert.match(none.stderr, /AMD has no release 6\.9\.9: no tag rocm-6\.9\.9 in ROCm\/ROCm/);
    const broken = path.join(dir, 'broken.xml');
    await writeFile(broken, '<manifest>\n  <project name="a">\n</manifest>\n');
    const bad = await runCli(['upstream', 'projects', '6.3.3', '--manifest', stack, '--file', broken, '--no-probe'], { env });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /broken\.xml: not a valid XML manifest/);
    const away = await runCli(['upstream', 'projects', '6.3.3', '--manifest', stack, '--base-url', `file://${path.join(dir, 'nothing-here')}`], { env });
    assert.equal(away.code, 5);
    assert.match(away.stderr, /cannot read the release manifest of 6\.3\.3, so whether AMD has that release is not known: ROCm\/ROCm: no git repository at/);
    // No network (nothing listens there): not "no such release".
    const offline = await runCli(['upstream', 'projects', '9.9.9', '--manifest', stack, '--base-url', 'http://127.0.0.1:9', '--timeout', '5'], { env });
    assert.equal(offline.code, 5, offline.stderr);
    assert.doesNotMatch(offline.stderr, /AMD has no release/);
    assert.match(offline.stderr, /whether AMD has that release is not known: .*; no network\? Check the connection/);
    const notKnown = await runCli(['upstream', 'projects', '6.3.3', '--against', '6.1.0', '--manifest', stack], { env });
    assert.equal(notKnown.code, 2);
    assert.match(notKnown.stderr, /--against 6\.1\.0 is not a release of .*; it knows 6\.2\.2/);
  });
});
