import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { parseDocument } from 'yaml';
import { shippedManifest } from '../helpers/project.js';
import { applyDraft, DraftError, type DraftRelease } from '../../src/upstream/draft/draft.js';

// A release the shipped manifest lacks (its legacy stream ends at 7.2.4).
const draft: DraftRelease = {
  version: '7.3.0',
  from: '7.2.4',
  llvmSlot: 22,
  projects: ['ROCR-Runtime', 'hipBLAS-common', 'rocm-cmake'],
  newProjects: ['hipBLAS-common', 'on'],
};

/** The lines of `after` with the lines of `before` removed in order: what an insert-only edit added. */
function inserted(before: string, after: string): string[] {
  const a = before.split('\n');
  let i = 0;
  const added: string[] = [];
  for (const l of after.split('\n')) {
    if (i < a.length && l === a[i]) i++;
    else added.push(l);
  }
  assert.equal(i, a.length, 'every original line is kept, in order');
  return added;
}

describe('draft release in stack.yaml', () => {
  it('adds the release, its project list and the new exclusions to the shipped stack.yaml, keeping every other byte', () => {
    const text = readFileSync(shippedManifest, 'utf8');
    const out = applyDraft(text, draft);
    assert.deepEqual(inserted(text, out), [
      '  "7.3.0": { llvm_slot: 22 }  # draft derived from 7.2.4: no evidence yet; llvm_slot carried over, check it',
      '  "7.3.0":',
      '    [ROCR-Runtime, hipBLAS-common, rocm-cmake]',
      '  - project: hipBLAS-common',
      '    releases: { from: "7.3.0" }',
      '    reason: new in 7.3.0, not packaged yet',
      '  - project: "on"',
      '    releases: { from: "7.3.0" }',
      '    reason: new in 7.3.0, not packaged yet',
    ]);
    // The release lands right after the last release (its last line: a flow entry, or a block one's last key), the list after the last list.
    const lines = out.split('\n');
    const original = text.split('\n');
    const releasesAt = original.indexOf('releases:');
    const end = original.findIndex((l, i) => i > releasesAt && /^[^\s#]/.test(l));
    const lastRelease = original.slice(releasesAt, end).filter((l) => /^ {2,}\S/.test(l) && !/^\s*#/.test(l)).at(-1)!;
    assert.equal(lines[lines.findIndex((l) => l.startsWith('  "7.3.0": {')) - 1], lastRelease);
    const doc = parseDocument(out, { version: '1.2' }).toJS() as { releases: Record<string, unknown>; excluded: { project: string }[] };
    assert.deepEqual(doc.releases['7.3.0'], { llvm_slot: 22 });
    assert.deepEqual(doc.excluded.slice(-2).map((e) => e.project), ['hipBLAS-common', 'on']); // "on" stays a string
  });

  it('wraps long project lists as the shipped file does', () => {
    const text = readFileSync(shippedManifest, 'utf8');
    const many = Array.from({ length: 30 }, (_, i) => `project-number-${i}`);
    const out = applyDraft(text, { ...draft, projects: many, newProjects: [] });
    const list = inserted(text, out).slice(2);
    assert.ok(list.length > 1 && list.every((l) => l.length <= 100), list.join('\n'));
    assert.match(list[0]!, /^ {4}\[project-number-0, /);
    assert.match(list.at(-1)!, /^ {5}.*project-number-29\]$/);
  });

  it('creates `excluded:` when the stack has none, and leaves out lists a stack does not keep', () => {
    const text = '# a stack\nname: S\nreleases:\n  "6.2.2": { llvm_slot: 18 } # the one\n\ncomponents: [c/*.yaml]\n';
    const out = applyDraft(text, { ...draft, newProjects: ['x'] });
    assert.equal(
      out,
      '# a stack\nname: S\nreleases:\n  "6.2.2": { llvm_slot: 18 } # the one\n' +
        '  "7.3.0": { llvm_slot: 22 }  # draft derived from 7.2.4: no evidence yet; llvm_slot carried over, check it\n' +
        '\ncomponents: [c/*.yaml]\nexcluded:\n  - project: x\n    releases: { from: "7.3.0" }\n    reason: new in 7.3.0, not packaged yet\n',
    );
  });

  it('quotes hostile project names so they read back as the same strings', () => {
    const text = readFileSync(shippedManifest, 'utf8');
    const names = ['evil: "x" # not a comment', '- dash', '*alias', "it's", 'new\\line', '6.3'];
    const out = applyDraft(text, { ...draft, projects: names, newProjects: names });
    const doc = parseDocument(out, { version: '1.2' }).toJS() as { projects: Record<string, string[]>; excluded: { project: string }[] };
    assert.deepEqual(doc.projects['7.3.0'], names);
    assert.deepEqual(doc.excluded.slice(-names.length).map((e) => e.project), names);
  });

  it('refuses layouts it cannot extend faithfully, rather than rewriting the file', () => {
    assert.throws(() => applyDraft('releases: { "6.2.2": { llvm_slot: 18 } }\n', draft), (e: unknown) => e instanceof DraftError && /not a block collection/.test(e.message));
    assert.throws(() => applyDraft('releases: [\n', draft), DraftError);
  });
  it("a TheRock release derived from one with pins gets TheRock's commits as its pins:, in 10.0.0's block form", () => {
    const text = readFileSync(shippedManifest, 'utf8');
    const pins = { 'ROCm/rocm-libraries': '0123456789abcdef0123456789abcdef01234567', 'ROCm/rocm-systems': '1e10000000000000000000000000000000000000' };
    const out = applyDraft(text, { version: '10.1.0', from: '10.0.0', llvmSlot: 23, stream: 'therock', newProjects: [], pins });
    assert.match(out, /^ {2}"10\.1\.0": {2}# draft derived from 10\.0\.0: .*\n {4}llvm_slot: 23\n {4}stream: therock\n {4}pins:\n {6}"ROCm\/rocm-libraries": "0123456789abcdef0123456789abcdef01234567"\n/m);
    const release = (parseDocument(out).toJS() as { releases: Record<string, { pins?: Record<string, string> }> }).releases['10.1.0']!;
    // Read back as strings, a commit of digits and an e included.
    assert.deepEqual(release.pins, pins);
  });
});
