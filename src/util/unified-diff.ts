/**
 * Unified diffs (`diff -u`, `git diff`, `git format-patch`), read and applied
 * without running patch(1): the manifest's patch files are checked when it is
 * validated and replayed on upstream's trees by `upstream patches`.
 *
 * Applying is `git apply`'s rule, not GNU patch's: every context and removed
 * line of a hunk must match exactly, at the line the hunk names or at any
 * offset from it (nearest first, after the previous hunk), with no fuzz.
 * That is stricter than eapply's `patch -p1 -f -g0` (fuzz 2, whitespace kept),
 * so a patch that applies here applies in the ebuild.
 */

export interface DiffLine {
  op: ' ' | '-' | '+';
  text: string;
}

export interface DiffHunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  lines: DiffLine[];
  /** The old (new) side has no newline after its last line (`\ No newline at end of file`). */
  oldNoEol: boolean;
  newNoEol: boolean;
  /** 1-based line of the `@@` header in the patch text. */
  line: number;
}

export interface DiffFile {
  /** Paths after stripping one leading component (`-p1`); null for /dev/null (a created or deleted file). */
  oldPath: string | null;
  newPath: string | null;
  hunks: DiffHunk[];
  /** 1-based line of the `---` header. */
  line: number;
}

export type DiffParse = { files: DiffFile[] } | { error: string; line: number };

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/** A header path as patch -p1 reads it: the word before a tab (a date may follow), one leading component dropped. */
function headerPath(rest: string): { path: string | null } | { error: string } {
  let p = rest.split('\t')[0]!.replace(/\s+$/, '');
  if (p.startsWith('"')) return { error: 'a quoted (escaped) file name: write the path plainly' };
  if (p === '/dev/null') return { path: null };
  if (p.startsWith('/')) return { error: 'an absolute path: patches name files below the source directory (a/… and b/…)' };
  const slash = p.indexOf('/');
  if (slash < 0) return { error: `${JSON.stringify(p)} has no leading directory to strip (patches are applied with -p1: a/… and b/…)` };
  p = p.slice(slash + 1);
  if (p === '' || p.startsWith('/')) return { error: 'an absolute path: patches name files below the source directory' };
  if (p.split('/').some((s) => s === '..' || s === '')) return { error: `${JSON.stringify(p)} leaves the source directory or has an empty component` };
  return { path: p };
}

/**
 * The files and hunks of a unified diff. Text before the first `---` line and
 * between files (a commit message, `diff --git`, `index` lines, a signature)
 * is ignored, as patch(1) ignores it; what a hunk holds must add up to the
 * counts its header gives. Binary patches, renames without hunks and files
 * without a hunk are refused: nothing would be applied.
 */
export function parseUnifiedDiff(text: string): DiffParse {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const files: DiffFile[] = [];
  let i = 0;
  while (i < lines.length) {
    const l = lines[i]!;
    if (l.startsWith('GIT binary patch') || l.startsWith('Binary files ')) return { error: 'a binary patch: only text patches can be applied and checked', line: i + 1 };
    if (!l.startsWith('--- ') || !lines[i + 1]?.startsWith('+++ ')) {
      // A "---" alone is a commit message's separator (git format-patch), not a header.
      if (HUNK.test(l)) return { error: 'a hunk without a "--- a/file" / "+++ b/file" header before it', line: i + 1 };
      i++;
      continue;
    }
    const header = i + 1;
    const oldP = headerPath(l.slice(4));
    if ('error' in oldP) return { error: oldP.error, line: header };
    const newP = headerPath(lines[i + 1]!.slice(4));
    if ('error' in newP) return { error: newP.error, line: header + 1 };
    if (oldP.path === null && newP.path === null) return { error: 'both sides are /dev/null', line: header };
    i += 2;
    const hunks: DiffHunk[] = [];
    while (i < lines.length && HUNK.test(lines[i]!)) {
      const m = HUNK.exec(lines[i]!)!;
      const hunk: DiffHunk = {
        oldStart: Number(m[1]),
        oldLines: m[2] === undefined ? 1 : Number(m[2]),
        newStart: Number(m[3]),
        newLines: m[4] === undefined ? 1 : Number(m[4]),
        lines: [],
        oldNoEol: false,
        newNoEol: false,
        line: i + 1,
      };
      i++;
      let oldSeen = 0;
      let newSeen = 0;
      while (oldSeen < hunk.oldLines || newSeen < hunk.newLines) {
        if (i >= lines.length) return { error: `the hunk ends early: ${hunk.oldLines - oldSeen} old and ${hunk.newLines - newSeen} new lines missing`, line: hunk.line };
        const body = lines[i]!;
        // An empty line in a hunk is an empty context line whose leading space an editor dropped.
        const op = body === '' ? ' ' : body[0];
        if (op !== ' ' && op !== '-' && op !== '+') {
          if (body.startsWith('\\')) {
            i++;
            continue;
          }
          return { error: `a hunk line must start with " ", "-" or "+" (${hunk.oldLines - oldSeen} old and ${hunk.newLines - newSeen} new lines still expected)`, line: i + 1 };
        }
        hunk.lines.push({ op, text: body.slice(1) });
        if (op !== '+') oldSeen++;
        if (op !== '-') newSeen++;
        if (oldSeen > hunk.oldLines || newSeen > hunk.newLines) return { error: 'the hunk holds more lines than its header counts', line: i + 1 };
        i++;
        // "\ No newline at end of file" after a line: that side's last line has none.
        if (lines[i]?.startsWith('\\ ')) {
          if (op !== '+') hunk.oldNoEol = true;
          if (op !== '-') hunk.newNoEol = true;
          i++;
        }
      }
      if (lines[i]?.startsWith('\\ ')) i++;
      hunks.push(hunk);
      // A changed line right after the counted ones: the header counts too few (a hand-edited patch).
      const after = lines[i];
      if (after !== undefined && /^[-+]/.test(after) && !after.startsWith('--- ') && after !== '-- ') return { error: 'the hunk holds more lines than its header counts', line: i + 1 };
    }
    if (hunks.length === 0) return { error: 'a file header without any hunk (a rename, mode change or empty diff): nothing to apply', line: header };
    files.push({ oldPath: oldP.path, newPath: newP.path, hunks, line: header });
  }
  if (files.length === 0) return { error: 'not a unified diff: no "--- a/file" and "+++ b/file" header followed by an "@@ -l,n +l,n @@" hunk', line: 1 };
  return { files };
}

/** A file's lines, and whether its last line ends in a newline. */
function splitLines(text: string): { lines: string[]; eol: boolean } {
  if (text === '') return { lines: [], eol: true };
  const lines = text.split('\n');
  const eol = lines.at(-1) === '';
  if (eol) lines.pop();
  return { lines, eol };
}

export type ApplyResult = { ok: true; text: string; offsets: number[] } | { ok: false; hunk: number; reason: string };

/**
 * One file's hunks applied to its text (`undefined`: the file does not exist).
 * `reverse` applies the patch backwards, which succeeds on a tree that already
 * has the change: the way to tell "already upstream" from "does not apply".
 */
export function applyDiffFile(text: string | undefined, file: DiffFile, reverse = false): ApplyResult {
  const from = reverse ? file.newPath : file.oldPath;
  const to = reverse ? file.oldPath : file.newPath;
  if (from === null) {
    if (text !== undefined) return { ok: false, hunk: 1, reason: 'creates a file that already exists' };
  } else if (text === undefined) return { ok: false, hunk: 1, reason: 'the file does not exist' };
  const src = splitLines(text ?? '');
  const out: string[] = [];
  let pos = 0;
  let eol = src.eol;
  const offsets: number[] = [];
  for (const [k, h] of file.hunks.entries()) {
    const oldSide = h.lines.filter((l) => l.op !== (reverse ? '-' : '+')).map((l) => l.text);
    const newSide = h.lines.filter((l) => l.op !== (reverse ? '+' : '-')).map((l) => l.text);
    const start = (reverse ? h.newStart : h.oldStart) - (oldSide.length === 0 ? 0 : 1);
    // Less context before the change than after it means diff met the start of the file there, and the
    // other way round its end: such a hunk only applies there (patch(1) and git apply both hold to this).
    const leading = h.lines.findIndex((l) => l.op !== ' ');
    const trailing = h.lines.length - 1 - h.lines.findLastIndex((l) => l.op !== ' ');
    const anchor = leading < trailing ? 'start' : trailing < leading ? 'end' : undefined;
    const at = locate(src.lines, oldSide, Math.max(start, pos), pos, anchor);
    if (at < 0) return { ok: false, hunk: k + 1, reason: `hunk ${k + 1} (line ${h.line} of the patch) does not match the file near line ${Math.max(start, 0) + 1}` };
    offsets.push(at - start);
    out.push(...src.lines.slice(pos, at), ...newSide);
    pos = at + oldSide.length;
    if (pos === src.lines.length) eol = !(reverse ? h.oldNoEol : h.newNoEol);
  }
  out.push(...src.lines.slice(pos));
  if (to === null) {
    if (out.length > 0) return { ok: false, hunk: file.hunks.length, reason: 'deletes a file that holds more than the patch removes' };
    return { ok: true, text: '', offsets };
  }
  return { ok: true, text: out.length === 0 ? '' : `${out.join('\n')}${eol ? '\n' : ''}`, offsets };
}

/** Where `want` stands in `lines`, nearest to `near` first, not before `min`, at the file's start or end when anchored; -1 when nowhere. */
function locate(lines: string[], want: string[], near: number, min: number, anchor?: 'start' | 'end'): number {
  const fits = (at: number) =>
    at >= min &&
    at + want.length <= lines.length &&
    (anchor !== 'start' || at === 0) &&
    (anchor !== 'end' || at + want.length === lines.length) &&
    want.every((w, j) => lines[at + j] === w);
  for (let d = 0; near - d >= min || near + d <= lines.length; d++) {
    if (fits(near - d)) return near - d;
    if (d > 0 && fits(near + d)) return near + d;
  }
  return -1;
}
