import { lstat, readFile, realpath } from 'node:fs/promises';
import path from 'node:path';
import type { ManifestIssue } from '../manifest/issues.js';
import type { Manifest } from '../manifest/load.js';
import type { PatchSpec } from '../manifest/types.js';
import { jsonPath, locate } from '../manifest/yaml-source.js';
import { isFilePatch, patchDir, patchesOf } from '../model/patches.js';
import { issueAt, type StackModel } from '../model/resolve.js';
import { parseUnifiedDiff, type DiffFile } from '../util/unified-diff.js';

/**
 * Our own patches, shipped in patches/<component>/ next to the manifest and
 * copied into each package's files/. Each file a component lists is checked
 * where it is listed: it exists as a regular file below the manifest's
 * directory (no symbolic link on the way: what reaches an overlay is what a
 * reviewer read here), it is UTF-8 text without bidirectional overrides (which
 * would show a reviewer other code than the compiler reads), a unified diff
 * whose paths stay below ${S}, and within ::gentoo's size limits for files/.
 */

/** pkgcheck's SizeViolation: a file in files/ over 20 KiB. */
export const FILES_FILE_LIMIT = 20480;
/** pkgcheck's TotalSizeViolation: files/ over 50 KiB. */
export const FILES_TOTAL_LIMIT = 51200;

export interface PatchFile {
  /** Absolute path of the file next to the manifest. */
  file: string;
  bytes: Buffer;
  diff: DiffFile[];
}

export class PatchFileError extends Error {
  constructor(
    message: string,
    /** Where in the patch file, when the problem is in its text. */
    readonly at?: { line: number; column: number },
  ) {
    super(message);
    this.name = 'PatchFileError';
  }
}

const BIDI = /[\u202a-\u202e\u2066-\u2069]/;

/**
 * A component's patch file, read and checked; throws PatchFileError saying
 * what is wrong. Used by validate, and by bump and the replay, which read
 * the bytes a validated manifest vouched for.
 */
export async function readPatchFile(manifestDir: string, component: string, name: string): Promise<PatchFile> {
  const rel = `${patchDir(component)}/${name}`;
  const file = path.join(manifestDir, rel);
  // Every component of the path below the manifest's directory: a link anywhere would let the bytes come from elsewhere.
  let at = manifestDir;
  for (const part of rel.split('/')) {
    at = path.join(at, part);
    const st = await lstat(at).catch(() => undefined);
    if (!st) throw new PatchFileError(`${rel} does not exist`);
    if (st.isSymbolicLink()) throw new PatchFileError(`${path.relative(manifestDir, at)} is a symbolic link: patch files are plain files below the manifest's directory`);
    if (at !== file && !st.isDirectory()) throw new PatchFileError(`${path.relative(manifestDir, at)} is not a directory`);
    if (at === file && !st.isFile()) throw new PatchFileError(`${rel} is not a regular file`);
    if (at === file && st.size > FILES_FILE_LIMIT) {
      throw new PatchFileError(
        `${rel} is ${kib(st.size)}, over the ${kib(FILES_FILE_LIMIT)} ::gentoo allows a file in files/ (pkgcheck SizeViolation)`,
      );
    }
  }
  const real = await realpath(file);
  const root = await realpath(manifestDir);
  if (!real.startsWith(`${root}${path.sep}`)) throw new PatchFileError(`${rel} resolves outside the manifest's directory`);
  const bytes = await readFile(file);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new PatchFileError(`${rel} is not UTF-8 text`, firstInvalidUtf8(bytes));
  }
  const lines = text.split('\n');
  for (const [i, l] of lines.entries()) {
    const bidi = BIDI.exec(l);
    if (bidi) throw new PatchFileError(`${rel} holds a bidirectional override (U+${bidi[0].codePointAt(0)!.toString(16).toUpperCase()}): what a reviewer reads would not be what the compiler reads`, { line: i + 1, column: bidi.index + 1 });
    if (/\u0000/.test(l)) throw new PatchFileError(`${rel} holds a NUL byte: not a text patch`, { line: i + 1, column: l.indexOf('\u0000') + 1 });
  }
  const parsed = parseUnifiedDiff(text);
  if ('error' in parsed) throw new PatchFileError(`${rel}: ${parsed.error}`, { line: parsed.line, column: 1 });
  return { file, bytes, diff: parsed.files };
}

/** A path as the user can type it: relative to where they are when that is below it, else absolute. */
function shown(file: string): string {
  const rel = path.relative(process.cwd(), file);
  return rel.startsWith('..') || path.isAbsolute(rel) ? file : rel;
}

const kib = (n: number) => `${(n / 1024).toFixed(1).replace(/\.0$/, '')} KiB`;

/** Line and column (1-based, in bytes on that line) of the first byte sequence that is not UTF-8. */
function firstInvalidUtf8(bytes: Buffer): { line: number; column: number } {
  let line = 1;
  let column = 1;
  for (let i = 0; i < bytes.length; ) {
    const b = bytes[i]!;
    const n = b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    if (n === 0 || i + n > bytes.length) return { line, column };
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(i, i + n));
    } catch {
      return { line, column };
    }
    if (b === 0x0a) {
      line++;
      column = 1;
    } else column += n;
    i += n;
  }
  return { line, column };
}

/** How to ship a patch too large for files/: as a distfile, hosted where Gentoo developers host them. */
const HOST_HINT =
  'host it as a distfile instead: put it where the Gentoo mirrors can fetch it (your https://dev.gentoo.org/~<you>/distfiles/, ' +
  'or a release asset of a repository you control), then list it as { url: https://…/<name>.patch, distfile: <name>.patch, reason: … }; ' +
  '`rocm-ebuild manifest` then records its checksums';

/**
 * Every patch file every component lists (in its own list and in each
 * override's), checked once per file; an issue points at each listing.
 * Returns the sizes of the files that passed, for the per-release total.
 */
export async function checkPatchFiles(manifest: Manifest): Promise<{ issues: ManifestIssue[]; sizes: Map<string, number> }> {
  const issues: ManifestIssue[] = [];
  const sizes = new Map<string, number>();
  const results = new Map<string, Promise<PatchFile | PatchFileError>>();
  for (const c of manifest.components) {
    const lists: { at: (string | number)[]; patches: PatchSpec[] }[] = [{ at: ['patches'], patches: c.spec.patches ?? [] }];
    (c.spec.overrides ?? []).forEach((o, i) => lists.push({ at: ['overrides', i, 'set', 'patches'], patches: o.set.patches ?? [] }));
    for (const { at, patches } of lists) {
      for (const [i, p] of patches.entries()) {
        // A patch fetched by URL is a distfile: the Manifest and the fetcher check it, not this directory.
        if (!isFilePatch(p)) continue;
        const name = typeof p === 'string' ? p : p.file;
        const key = `${c.spec.name}/${name}`;
        let result = results.get(key);
        if (!result) {
          result = readPatchFile(manifest.dir, c.spec.name, name).catch((err: unknown) => {
            if (err instanceof PatchFileError) return err;
            throw err;
          });
          results.set(key, result);
        }
        const r = await result;
        const where = typeof p === 'string' ? [...at, i] : [...at, i, 'file'];
        if (!(r instanceof PatchFileError)) {
          sizes.set(key, r.bytes.length);
          continue;
        }
        const listed = { file: c.source.file, ...locate(c.source, where), path: jsonPath(where) };
        const missing = /does not exist$/.test(r.message);
        const tooLarge = /SizeViolation/.test(r.message);
        issues.push({
          ...listed,
          message: `patch ${name}: ${r.message}${r.at ? ` (${path.join(manifest.dir, patchDir(c.spec.name), name)}:${r.at.line}:${r.at.column})` : ''}`,
          hint: missing
            ? `put it at ${shown(path.join(manifest.dir, patchDir(c.spec.name), name))}, or drop the entry`
            : tooLarge
              ? HOST_HINT
              : r.at
                ? 'write the patch as `git diff` or `diff -u` prints it: "--- a/<path>" and "+++ b/<path>" headers, then "@@ -l,n +l,n @@" hunks'
                : 'make it a regular file inside the manifest directory',
        });
        // The text problem is also reported at the patch file itself, where an editor jumps to it.
        if (r.at) issues.push({ file: path.join(manifest.dir, patchDir(c.spec.name), name), line: r.at.line, column: r.at.column, path: jsonPath(where), message: r.message.replace(/^[^:]+: /, '') });
      }
    }
  }
  return { issues, sizes };
}

/**
 * pkgcheck's TotalSizeViolation for one release: the patch files one ebuild
 * applies go into its package's files/ together, and ::gentoo allows 50 KiB.
 */
export function checkPatchTotals(model: StackModel, sizes: ReadonlyMap<string, number>): ManifestIssue[] {
  const issues: ManifestIssue[] = [];
  for (const c of model.components) {
    const files = patchesOf(c.spec.patches, c.pn, c.version).filter((p) => p.kind === 'file');
    const total = files.reduce((n, p) => n + (sizes.get(`${c.name}/${p.kind === 'file' ? p.file : ''}`) ?? 0), 0);
    if (total <= FILES_TOTAL_LIMIT) continue;
    issues.push(
      issueAt(c, ['patches'], `the patch files of ${c.atom} come to ${kib(total)}, over the ${kib(FILES_TOTAL_LIMIT)} ::gentoo allows in a package's files/ (pkgcheck TotalSizeViolation)`, `ship the largest as distfiles: ${HOST_HINT}`),
    );
  }
  return issues;
}
