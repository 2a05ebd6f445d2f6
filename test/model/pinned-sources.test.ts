import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describeEvidence } from '../../src/model/evidence.js';
import { locateSource } from '../../src/model/sources/index.js';
import { renderEbuild } from '../../src/render/index.js';
import { stackFor, validateManifest } from '../../src/stack-check/index.js';
import { BASE_FILES, fixtureManifest } from '../helpers/fixture-manifest.js';
import { removeDir, tempDir } from '../helpers/project.js';

const run = promisify(execFile);

const LIBS = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const OTHER = 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';

/** The fixture stack with 6.3.0 pinning a monorepo, and gpulib built from one project of it (and a shared directory). */
function pinnedStack(changes: { stack?: (s: string) => string; gpulib?: (s: string) => string } = {}): Record<string, string> {
  const stack = BASE_FILES['stack.yaml']!.replace(
    '  "6.3.0": { llvm_slot: 19 }\n',
    `  "6.3.0":\n    llvm_slot: 19\n    pins:\n      ROCm/rocm-libraries: ${LIBS}\n`,
  );
  const gpulib = BASE_FILES['components/gpulib.yaml']!.replace(
    'sources:\n  - github: ROCm/gpulib\n',
    `sources:
  - github: ROCm/gpulib
    releases: { until: "6.3.0" }
  - pinned: ROCm/rocm-libraries
    distfile: rocm-libraries-\${PV}.tar.gz
    subdir: projects/gpulib
    extract: [projects/gpulib, shared/kernels]
    releases: { from: "6.3.0" }
`,
  )
    .replace(
      'overrides:\n  - versions: { from: "6.3.0" }\n    set:\n',
      'overrides:\n  - versions: { from: "6.3.0" }\n    set:\n      homepage: https://github.com/ROCm/rocm-libraries/tree/develop/projects/gpulib\n',
    )
    .concat(
      `evidence:
  - releases: ["6.3.0"]
    kind: pin
    source: ROCm/TheRock therock-6.3 cccccccccccccccccccccccccccccccccccccccc
    facts: [sources]
    pin:
      repo: ROCm/rocm-libraries
      commit: ${LIBS}
      path: projects/gpulib
      fetch: commit
`,
    );
  return {
    'stack.yaml': (changes.stack ?? ((s) => s))(stack),
    'components/gpulib.yaml': (changes.gpulib ?? ((s) => s))(gpulib),
  };
}

async function issuesOf(files: Record<string, string>) {
  const dir = await fixtureManifest(files);
  return (await validateManifest(path.join(dir, 'stack.yaml'))).issues;
}

describe('model: sources at a pinned commit, unpacked in part', function () {
  this.timeout(60_000);

  it("a pinned source is the commit's archive: SRC_URI and S name the commit through one variable", () => {
    const l = locateSource({ pinned: 'ROCm/rocm-libraries', distfile: 'rocm-libraries-${PV}.tar.gz' }, { pn: 'rocBLAS', version: '10.0.0', releaseTag: 'therock-$(ver_cut 1-2)', index: 0, pins: { 'ROCm/rocm-libraries': LIBS } });
    assert.equal(l.uri, 'https://github.com/ROCm/rocm-libraries/archive/${ROCM_LIBRARIES_COMMIT}.tar.gz -> rocm-libraries-${PV}.tar.gz');
    assert.equal(l.url, `https://github.com/ROCm/rocm-libraries/archive/${LIBS}.tar.gz`);
    assert.deepEqual([l.name, l.dir, l.dirExpanded, l.tag, l.versioned], ['rocm-libraries-10.0.0.tar.gz', 'rocm-libraries-${ROCM_LIBRARIES_COMMIT}', `rocm-libraries-${LIBS}`, LIBS, false]);
    assert.deepEqual(l.commit, { variable: 'ROCM_LIBRARIES_COMMIT', value: LIBS });
    // Its own commit wins over the release's pin; a name that starts with a digit still makes a variable.
    const own = locateSource({ pinned: 'ROCm/3rd-party', commit: OTHER }, { pn: 'x', version: '10.0.0', releaseTag: 'x', index: 0, pins: { 'ROCm/3rd-party': LIBS } });
    assert.deepEqual(own.commit, { variable: 'R_3RD_PARTY_COMMIT', value: OTHER });
    assert.equal(own.name, 'x-10.0.0.tar.gz');
  });

  it('renders the commit once, SRC_URI and S from it, and a src_unpack that extracts only the listed directories', async () => {
    const dir = await fixtureManifest(pinnedStack());
    const { manifest, issues } = await validateManifest(path.join(dir, 'stack.yaml'));
    assert.deepEqual(issues, []);
    const model = await stackFor(manifest!, '6.3.0');
    const text = renderEbuild(model.byAtom.get('sci-libs/gpulib')!, model, { year: 2026 });
    assert.match(text, new RegExp(`^inherit [^\\n]*\\n\\nROCM_LIBRARIES_COMMIT="${LIBS}"\\nDESCRIPTION=`, 'm'));
    assert.match(text, /^\thttps:\/\/github\.com\/ROCm\/rocm-libraries\/archive\/\$\{ROCM_LIBRARIES_COMMIT\}\.tar\.gz\n\t\t-> rocm-libraries-\$\{PV\}\.tar\.gz$/m);
    assert.match(text, /^S="\$\{WORKDIR\}\/rocm-libraries-\$\{ROCM_LIBRARIES_COMMIT\}\/projects\/gpulib"$/m);
    assert.match(
      text,
      /^src_unpack\(\) \{\n\t# [^\n]*\n\ttar -xf "\$\{DISTDIR\}\/rocm-libraries-\$\{PV\}\.tar\.gz" -C "\$\{WORKDIR\}" \\\n\t\t"rocm-libraries-\$\{ROCM_LIBRARIES_COMMIT\}\/projects\/gpulib" \\\n\t\t"rocm-libraries-\$\{ROCM_LIBRARIES_COMMIT\}\/shared\/kernels" \|\| die\n\}$/m,
    );
    // The evidence says what is pinned and how the ebuild gets it, where reviewers read it (render, pr body).
    assert.equal(
      describeEvidence(model.byAtom.get('sci-libs/gpulib')!.evidence),
      `pin: ROCm/TheRock therock-6.3 cccccccccccccccccccccccccccccccccccccccc (sources): ROCm/rocm-libraries ${LIBS.slice(0, 12)} projects/gpulib, fetched by that commit`,
    );
    // 6.2.2 is the repository's own tag archive: Portage's default src_unpack.
    const before = await stackFor(manifest!, '6.2.2');
    assert.doesNotMatch(renderEbuild(before.byAtom.get('sci-libs/gpulib')!, before, { year: 2026 }), /src_unpack|_COMMIT/);
  });

  it('the generated src_unpack, run by bash on a real archive, writes only those directories, and dies on one the archive lacks', async () => {
    const tmp = await tempDir('rocm-ebuild-unpack-');
    try {
      const dir = await fixtureManifest(pinnedStack());
      const { manifest } = await validateManifest(path.join(dir, 'stack.yaml'));
      const model = await stackFor(manifest!, '6.3.0');
      const text = renderEbuild(model.byAtom.get('sci-libs/gpulib')!, model, { year: 2026 });
      const fn = /^src_unpack\(\) \{\n[\s\S]*?^\}$/m.exec(text)![0];
      // An archive shaped as GitHub makes it: one top directory, projects and shared trees.
      const top = `rocm-libraries-${LIBS}`;
      const tree = path.join(tmp, 'tree');
      for (const d of ['projects/gpulib/src', 'projects/other/src', 'shared/kernels', 'shared/unused', 'docs']) {
        await mkdir(path.join(tree, top, d), { recursive: true });
        await writeFile(path.join(tree, top, d, 'file.txt'), `${d}\n`);
      }
      const distdir = path.join(tmp, 'distdir');
      await mkdir(distdir);
      await run('tar', ['-czf', path.join(distdir, 'rocm-libraries-6.3.0.tar.gz'), '-C', tree, top]);
      const script = (workdir: string) =>
        `set -e\ndie() { echo "died: $*" >&2; exit 1; }\nPV=6.3.0\nDISTDIR='${distdir}'\nWORKDIR='${workdir}'\n${/^ROCM_LIBRARIES_COMMIT=.*$/m.exec(text)![0]}\n${fn}\ncd "\${WORKDIR}"\nsrc_unpack\n`;
      const work = path.join(tmp, 'work');
      await mkdir(work);
      await run('bash', ['-c', script(work)]);
      assert.deepEqual(await readdir(path.join(work, top)), ['projects', 'shared']);
      assert.deepEqual(await readdir(path.join(work, top, 'projects')), ['gpulib']);
      assert.deepEqual(await readdir(path.join(work, top, 'shared')), ['kernels']);
      // A directory the archive does not hold (the project moved): tar fails, and so does the phase.
      await run('tar', ['-czf', path.join(distdir, 'rocm-libraries-6.3.0.tar.gz'), '-C', tree, `${top}/projects/gpulib`]);
      const work2 = path.join(tmp, 'work2');
      await mkdir(work2);
      await assert.rejects(run('bash', ['-c', script(work2)]), (e: { stderr: string }) => /died/.test(e.stderr) && /shared\/kernels/.test(e.stderr));
    } finally {
      await removeDir(tmp);
    }
  });

  it('refuses a pinned source whose release pins no commit of its repository, at the source', async () => {
    const issues = await issuesOf(pinnedStack({ stack: (s) => s.replace(`    pins:\n      ROCm/rocm-libraries: ${LIBS}\n`, `    pins:\n      ROCm/rocm-systems: ${OTHER}\n`) }));
    const found = issues.filter((i) => /pins no commit of ROCm\/rocm-libraries/.test(i.message));
    assert.equal(found.length, 1, JSON.stringify(issues, null, 1));
    assert.equal(found[0]!.path, '$.sources[1].pinned');
    assert.match(found[0]!.hint ?? '', /releases\."6\.3\.0"\.pins/);
  });

  it("refuses a pin record that disagrees with what the ebuild fetches: another commit, another directory, a tag it does not fetch", async () => {
    const commit = await issuesOf(pinnedStack({ stack: (s) => s.replace(LIBS, OTHER) }));
    assert.ok(commit.some((i) => i.path === '$.evidence[0].pin.commit' && i.message.includes(`names commit ${LIBS}`) && i.message.includes(`fetches ${OTHER}`)), JSON.stringify(commit, null, 1));
    const where = await issuesOf(pinnedStack({ gpulib: (s) => s.replace('      path: projects/gpulib\n', '      path: projects/gpulib2\n') }));
    assert.ok(where.some((i) => i.path === '$.evidence[0].pin.path'), JSON.stringify(where, null, 1));
    const tag = await issuesOf(pinnedStack({ gpulib: (s) => s.replace('      fetch: commit\n', '      fetch: { tag: therock-6.3 }\n') }));
    assert.ok(tag.some((i) => i.path === '$.evidence[0].pin.fetch.tag' && /fetches ROCm\/rocm-libraries by tag therock-6\.3, but the source fetches commit/.test(i.message)), JSON.stringify(tag, null, 1));
    const repo = await issuesOf(pinnedStack({ gpulib: (s) => s.replace('      repo: ROCm/rocm-libraries\n', '      repo: ROCm/rocm-systems\n') }));
    assert.ok(repo.some((i) => i.path === '$.evidence[0].pin.repo'), JSON.stringify(repo, null, 1));
    // A pin record must say what is pinned; `pin` belongs to pin records only.
    const bare = await issuesOf(pinnedStack({ gpulib: (s) => s.replace(/    pin:\n(      .*\n)+/, '') }));
    assert.ok(bare.some((i) => /evidence\[0\]/.test(i.path)), JSON.stringify(bare, null, 1));
  });

  it('a tag archive is accepted for a pin only when the record says that tag was seen at the commit', async () => {
    const byTag = (s: string) =>
      s
        .replace('  - pinned: ROCm/rocm-libraries\n', '  - github: ROCm/rocm-libraries\n    tag: therock-$(ver_cut 1-2)\n')
        .replace('      fetch: commit\n', '      fetch: { tag: therock-$(ver_cut 1-2) }\n');
    assert.deepEqual(await issuesOf(pinnedStack({ gpulib: byTag })), []);
    const wrong = await issuesOf(pinnedStack({ gpulib: (s) => byTag(s).replace('fetch: { tag: therock-$(ver_cut 1-2) }', 'fetch: commit') }));
    assert.ok(wrong.some((i) => i.path === '$.evidence[0].pin.commit' && /fetches tag therock-6\.3/.test(i.message)), JSON.stringify(wrong, null, 1));
  });

  it('refuses an extract list that leaves out the package\'s own tree, or one on a file tar cannot read', async () => {
    const left = await issuesOf(pinnedStack({ gpulib: (s) => s.replace('extract: [projects/gpulib, shared/kernels]', 'extract: [shared/kernels]') }));
    assert.ok(left.some((i) => i.path === '$.sources[1].extract' && /leaves out projects\/gpulib/.test(i.message)), JSON.stringify(left, null, 1));
    const zip = await issuesOf(pinnedStack({ gpulib: (s) => s.replace('distfile: rocm-libraries-${PV}.tar.gz', 'distfile: rocm-libraries-${PV}.zip') }));
    assert.ok(zip.some((i) => i.path === '$.sources[1].extract' && /needs a tar archive/.test(i.message)), JSON.stringify(zip, null, 1));
  });
});
