import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { applyDiffFile, parseUnifiedDiff, type DiffFile } from '../../src/util/unified-diff.js';
import { removeDir, tempDir } from '../helpers/project.js';

const run = promisify(execFile);

/** `diff -u` of two texts as files a/<name> and b/<name>, as a patch -p1 reads it. */
async function realDiff(dir: string, name: string, before: string, after: string): Promise<string> {
  await mkdir(path.join(dir, 'a'), { recursive: true });
  await mkdir(path.join(dir, 'b'), { recursive: true });
  await writeFile(path.join(dir, 'a', name), before);
  await writeFile(path.join(dir, 'b', name), after);
  // diff exits 1 when the files differ.
  const r = await run('diff', ['-u', `a/${name}`, `b/${name}`], { cwd: dir }).catch((e: { stdout: string }) => e);
  return r.stdout;
}

/** GNU patch -p1 as eapply runs it (-f -g0), on a copy of `text`: the result, or undefined when it fails. */
async function gnuPatch(dir: string, name: string, text: string, diff: string): Promise<string | undefined> {
  const work = path.join(dir, 'work');
  await mkdir(work, { recursive: true });
  await writeFile(path.join(work, name), text);
  await writeFile(path.join(dir, 'p.diff'), diff);
  try {
    await run('patch', ['-p1', '-f', '-g0', '--no-backup-if-mismatch', '-F0', '-i', path.join(dir, 'p.diff')], { cwd: work });
  } catch {
    return undefined;
  }
  return readFile(path.join(work, name), 'utf8');
}

/** A deterministic pseudo-random sequence (the same cases every run). */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const one = (text: string): DiffFile => {
  const p = parseUnifiedDiff(text);
  if ('error' in p) throw new Error(p.error);
  assert.equal(p.files.length, 1);
  return p.files[0]!;
};

describe('util: unified diffs read and applied without patch(1)', function () {
  this.timeout(120_000);
  let dir: string;
  before(async () => {
    dir = await tempDir('rocm-ebuild-unified-diff-');
  });
  after(() => removeDir(dir));

  it('applies what diff -u writes exactly as GNU patch does, and refuses what patch refuses without fuzz (200 generated edits)', async () => {
    const rnd = lcg(7);
    for (let n = 0; n < 200; n++) {
      const lines = Array.from({ length: 5 + Math.floor(rnd() * 40) }, (_, i) => `line ${i} ${Math.floor(rnd() * 5)}`);
      const after = [...lines];
      for (let k = 0; k < 1 + Math.floor(rnd() * 4); k++) {
        const at = Math.floor(rnd() * after.length);
        const r = rnd();
        if (r < 0.4) after.splice(at, 1);
        else if (r < 0.7) after.splice(at, 0, `added ${n}.${k}`);
        else after[at] = `changed ${n}.${k}`;
      }
      const eolBefore = rnd() < 0.9;
      const eolAfter = rnd() < 0.9;
      const before = lines.join('\n') + (eolBefore ? '\n' : '');
      const afterText = after.join('\n') + (eolAfter ? '\n' : '');
      if (before === afterText) continue;
      const diff = await realDiff(path.join(dir, `c${n}`), 'f.txt', before, afterText);
      const f = one(diff);
      assert.equal(f.oldPath, 'f.txt');
      const ours = applyDiffFile(before, f);
      assert.ok(ours.ok, `case ${n}: ${ours.ok ? '' : ours.reason}`);
      assert.equal(ours.text, afterText, `case ${n}`);
      // Backwards on the result gives the original back: how "already upstream" is told.
      const back = applyDiffFile(afterText, f, true);
      assert.ok(back.ok && back.text === before, `case ${n} reversed`);
      // Shifted by a few lines (upstream added a header): both find it at an offset.
      const shifted = `x\ny\nz\n${before}`;
      const moved = applyDiffFile(shifted, f);
      const gnu = await gnuPatch(path.join(dir, `c${n}`), 'f.txt', shifted, diff);
      assert.equal(moved.ok ? moved.text : undefined, gnu, `case ${n} shifted: ours and GNU patch (no fuzz) agree`);
      // A context line changed: patch without fuzz refuses it, and so do we.
      const hunk = f.hunks[0]!;
      const ctx = hunk.lines.findIndex((l) => l.op === ' ');
      if (ctx >= 0) {
        const target = before.split('\n');
        const lineNo = hunk.oldStart - 1 + hunk.lines.slice(0, ctx).filter((l) => l.op !== '+').length;
        if (target[lineNo] !== undefined) {
          target[lineNo] = `${target[lineNo]} (edited upstream)`;
          const edited = target.join('\n');
          const r = applyDiffFile(edited, f);
          const g = await gnuPatch(path.join(dir, `c${n}`), 'f.txt', edited, diff);
          assert.equal(r.ok ? r.text : undefined, g, `case ${n} with an edited context line`);
        }
      }
    }
  });

  it('reads git format-patch mails, creations, deletions and "no newline" markers', () => {
    const mail = [
      'From 0123456789abcdef Mon Sep 17 00:00:00 2001',
      'Subject: [PATCH] fix the build',
      '',
      '---',
      ' src/a.c | 2 +-',
      ' 1 file changed',
      '',
      'diff --git a/src/a.c b/src/a.c',
      'index 1111111..2222222 100644',
      '--- a/src/a.c',
      '+++ b/src/a.c',
      '@@ -1,2 +1,2 @@',
      ' int x;',
      '-int y;',
      '+long y;',
      'diff --git a/new.h b/new.h',
      'new file mode 100644',
      '--- /dev/null',
      '+++ b/new.h',
      '@@ -0,0 +1 @@',
      '+#pragma once',
      '\\ No newline at end of file',
      '-- ',
      '2.45.0',
      '',
    ].join('\n');
    const p = parseUnifiedDiff(mail);
    assert.ok(!('error' in p), JSON.stringify(p));
    assert.deepEqual(p.files.map((f) => [f.oldPath, f.newPath]), [['src/a.c', 'src/a.c'], [null, 'new.h']]);
    assert.deepEqual(applyDiffFile('int x;\nint y;\n', p.files[0]!), { ok: true, text: 'int x;\nlong y;\n', offsets: [0] });
    assert.deepEqual(applyDiffFile(undefined, p.files[1]!), { ok: true, text: '#pragma once', offsets: [0] });
    assert.equal(applyDiffFile('already', p.files[1]!).ok, false);
  });

  it('refuses what is not a text patch for files below S, saying where', () => {
    const cases: [string, RegExp, number][] = [
      ['just some text\n', /not a unified diff/, 1],
      ['--- a/x\n+++ b/x\n', /without any hunk/, 1],
      ['--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n-b\n', /ends early/, 3],
      ['--- a/x\n+++ b/x\n@@ -1,1 +1,1 @@\n-a\n+b\n+c\n', /more lines than its header/, 6],
      ['--- a/../../etc/passwd\n+++ b/../../etc/passwd\n@@ -1 +1 @@\n-a\n+b\n', /leaves the source directory/, 1],
      ['--- /etc/passwd\n+++ /etc/passwd\n@@ -1 +1 @@\n-a\n+b\n', /absolute path/, 1],
      ['--- x\n+++ x\n@@ -1 +1 @@\n-a\n+b\n', /no leading directory/, 1],
      ['diff --git a/x b/x\nGIT binary patch\nliteral 1\n', /binary patch/, 2],
      ['@@ -1 +1 @@\n-a\n+b\n', /without a "--- a\/file"/, 1],
      ['--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n*b\n', /must start with/, 5],
    ];
    for (const [text, re, line] of cases) {
      const p = parseUnifiedDiff(text);
      assert.ok('error' in p, `${JSON.stringify(text)} is refused`);
      assert.match(p.error, re);
      assert.equal(p.line, line, `${JSON.stringify(text)}: line`);
    }
  });
});
