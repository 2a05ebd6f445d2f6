import { strict as assert } from 'node:assert';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describeEvidence, evidenceFor, releaseEvidence } from '../../src/model/evidence.js';
import type { EvidenceSpec } from '../../src/manifest/types.js';
import { validateManifest } from '../../src/stack-check/index.js';
import { BASE_FILES, fixtureManifest } from '../helpers/fixture-manifest.js';
import { IDENTITY } from '../helpers/bumped-overlay.js';
import { gitHome, runCli, tempDir } from '../helpers/project.js';

const RECORDS: EvidenceSpec[] = [
  { releases: ['6.2.2'], kind: 'tag', source: 'ROCm/gpulib at rocm-6.2.2', facts: ['deps', 'sources'] },
  { releases: { from: '6.3.0', until: '7.0.0' }, kind: 'peer', source: '::gentoo sci-libs/gpulib/gpulib-6.3.0.ebuild', facts: ['cmake'] },
  { releases: ['6.3.0'], kind: 'pin', source: 'ROCm/TheRock therock-6.3' },
];

/** gpulib moves to a monorepo's release asset at 6.3.0 and records what was checked; app and base record nothing. */
const GPULIB = BASE_FILES['components/gpulib.yaml']!.replace(
  'sources:\n  - github: ROCm/gpulib\n',
  `sources:
  - github: ROCm/gpulib
    releases: { until: "6.3.0" }
  - release_asset: ROCm/rocm-libraries
    file: gpulib.tar.gz
    releases: { from: "6.3.0" }
llvm:
  deps:
    - atom: llvm-core/clang
      classes: [BDEPEND]
evidence:
  - releases: ["6.2.2"]
    kind: tag
    source: ROCm/gpulib at rocm-6.2.2
    facts: [sources, deps, cmake]
  - releases: { from: "6.3.0" }
    kind: peer
    source: ::gentoo sci-libs/gpulib/gpulib-6.3.0.ebuild
    facts: [sources, deps]
`,
);

describe('model: evidence', function () {
  this.timeout(300_000);

  it('a release takes the strongest record that covers it, from a list or a range', () => {
    assert.deepEqual([evidenceFor(RECORDS, '6.2.2').level, evidenceFor(RECORDS, '6.2.2').facts], ['tag', ['sources', 'deps']]);
    const e630 = evidenceFor(RECORDS, '6.3.0');
    assert.equal(e630.level, 'peer', 'peer outranks pin: a pin says where the source is, not what it needs');
    assert.equal(e630.records.length, 2);
    assert.equal(evidenceFor(RECORDS, '6.3.3').level, 'peer');
    assert.equal(evidenceFor(RECORDS, '7.0.0').level, 'none');
    assert.equal(evidenceFor(undefined, '6.2.2').level, 'none');
    assert.equal(describeEvidence(e630), 'peer: ::gentoo sci-libs/gpulib/gpulib-6.3.0.ebuild (cmake); also pin: ROCm/TheRock therock-6.3');
    assert.match(describeEvidence(evidenceFor(RECORDS, '7.0.0')), /^none: not checked/);
  });

  it('a release has the weakest evidence of its packages, and says which those are', () => {
    const r = releaseEvidence([
      { atom: 'a/x', evidence: evidenceFor(RECORDS, '6.2.2') },
      { atom: 'a/y', evidence: evidenceFor(RECORDS, '6.3.0') },
      { atom: 'a/z', evidence: evidenceFor(RECORDS, '6.3.0') },
    ]);
    assert.deepEqual(r, { level: 'peer', counts: { none: 0, pin: 0, peer: 2, tag: 1 }, weakest: ['a/y', 'a/z'] });
    assert.equal(releaseEvidence([]).level, 'none');
  });

  it('refuses the old release-wide `verified`, naming what replaced it, at its line', async () => {
    const dir = await fixtureManifest({ 'stack.yaml': BASE_FILES['stack.yaml']!.replace('"6.2.2": { llvm_slot: 18 }', '"6.2.2": { llvm_slot: 18, verified: true }') });
    const { issues } = await validateManifest(path.join(dir, 'stack.yaml'));
    assert.equal(issues.length, 1, JSON.stringify(issues));
    assert.equal(issues[0]!.path, '$.releases["6.2.2"].verified');
    assert.equal(issues[0]!.message, '`verified` is no longer used');
    assert.match(issues[0]!.hint ?? '', /evidence/);
  });

  it('refuses evidence text that could reach a terminal as control characters', async () => {
    const bad = GPULIB.replace('source: ROCm/gpulib at rocm-6.2.2', 'source: "ROCm/gpulib \\e[2J at rocm-6.2.2"');
    const dir = await fixtureManifest({ 'components/gpulib.yaml': bad });
    const { issues } = await validateManifest(path.join(dir, 'stack.yaml'));
    assert.ok(issues.some((i) => i.path === '$.evidence[0].source'), JSON.stringify(issues));
  });

  describe('in what bump, render, lint and the pull request say', () => {
    let manifest: string;
    let home: string;
    let work: string;
    let distdir: string;
    before(async () => {
      manifest = await fixtureManifest({ 'components/gpulib.yaml': GPULIB });
      home = await gitHome(IDENTITY);
      work = await tempDir('rocm-ebuild-evidence-');
      distdir = path.join(work, 'distfiles');
      await runCli(['--version'], { home }); // warm the code cache once for the runs below
      const { mkdir } = await import('node:fs/promises');
      await mkdir(distdir);
      for (const v of ['6.2.2', '6.3.0']) {
        for (const pn of ['rocm-base', 'app']) await writeFile(path.join(distdir, `${pn}-${v}.tar.gz`), `${pn} ${v}\n`);
      }
      await writeFile(path.join(distdir, 'gpulib-6.2.2.tar.gz'), 'gpulib 6.2.2\n');
      await writeFile(path.join(distdir, 'gpulib-6.3.0.tar.gz'), 'gpulib asset 6.3.0\n');
    });

    it('bump names the release level and warns about packages nothing was checked for; --json per package', async () => {
      const r = await runCli(['bump', '6.3.0', '--overlay', path.join(work, 'plan'), '--manifest', manifest, '--dry-run', '--json'], { home });
      assert.equal(r.code, 0, r.stderr);
      const plan = JSON.parse(r.stdout) as { evidence: { level: string; weakest: string[] }; packages: { atom: string; evidence?: string }[] };
      assert.equal(plan.evidence.level, 'none');
      assert.deepEqual(plan.evidence.weakest, ['dev-libs/rocm-base', 'sci-libs/app']);
      assert.deepEqual(plan.packages.map((p) => [p.atom, p.evidence]), [
        ['dev-libs/rocm-base', 'none'],
        ['sci-libs/gpulib', 'peer'],
        ['sci-libs/app', 'none'],
      ]);
      assert.equal(r.stderr, '', 'with --json the evidence is in the output, not a warning');
      const text = await runCli(['bump', '6.3.0', '--overlay', path.join(work, 'plan'), '--manifest', manifest, '--dry-run'], { home });
      assert.match(text.stderr.replace(/\s*›\s*/g, ' '), /ROCm 6\.3\.0's evidence is none \(2 none, 1 peer\): the facts of dev-libs\/rocm-base, sci-libs\/app were checked neither/);
      // Said once: the warning, not also a line of the plan.
      assert.doesNotMatch(text.stdout, /^evidence: /m);
      assert.match(text.stdout, /^ {2}add +sci-libs\/gpulib-6\.3\.0 .*evidence: peer$/m);
    });

    it('render says what one package rests on, on stderr, leaving the ebuild on stdout alone', async () => {
      const r = await runCli(['render', 'gpulib', '--version', '6.3.0', '--manifest', manifest], { home });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stderr, 'evidence for sci-libs/gpulib-6.3.0: peer: ::gentoo sci-libs/gpulib/gpulib-6.3.0.ebuild (sources, deps)\n');
      assert.match(r.stdout, /^EAPI=8$/m);
      const j = JSON.parse((await runCli(['render', 'gpulib', '--version', '6.2.2', '--manifest', manifest, '--json'], { home })).stdout) as { evidence: { level: string } };
      assert.equal(j.evidence.level, 'tag');
    });

    it('lint states the evidence of the release it checked', async () => {
      const r = await runCli(['lint', '--version', '6.2.2', '--manifest', manifest, '--no-shellcheck'], { home });
      assert.match(r.stdout, /^evidence of ROCm 6\.2\.2: none \(2 none, 1 tag\)/m);
    });

    it("the pull request's notes name the source move, the LLVM slot the replaced versions had, and each package's evidence", async () => {
      const overlay = path.join(work, 'overlay');
      const flags = ['--manifest', manifest, '--distdir', distdir, '--offline'];
      assert.equal((await runCli(['bump', '6.2.2', '--overlay', overlay, ...flags], { home })).code, 0);
      const tip = (await import('node:child_process')).execFileSync('git', ['-C', overlay, 'rev-parse', 'HEAD'], { env: { ...process.env, HOME: home } }).toString().trim();
      const moved = await runCli(['bump', '6.3.0', '--overlay', overlay, '--drop-old', ...flags], { home });
      assert.equal(moved.code, 0, moved.stderr);
      const r = await runCli(['pr', 'body', '--overlay', overlay, '--range', tip, '--manifest', manifest, '--no-pkgcheck', '--json'], { home });
      assert.equal(r.code, 0, r.stderr);
      const body = (JSON.parse(r.stdout) as { body: string }).body;
      assert.match(body, /^- Sources: 1 package moved from their own repository's tag archives to ROCm\/rocm-libraries release assets: `sci-libs\/gpulib`\.$/m);
      assert.match(body, /^- LLVM: `LLVM_COMPAT=\( 19 \)` in \d+ ebuilds? \(the versions they replace had `\( 18 \)`\)/m);
      assert.match(body, /^### Evidence$/m);
      assert.match(body, /\(2 none, 1 peer\)/);
      assert.match(body, /^- `sci-libs\/gpulib-6\.3\.0`: peer: ::gentoo sci-libs\/gpulib\/gpulib-6\.3\.0\.ebuild \(sources, deps\)$/m);
      assert.match(body, /^- `sci-libs\/app-6\.3\.0`: none: not checked/m);
    });
  });
});
