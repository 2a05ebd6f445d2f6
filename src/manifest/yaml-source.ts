import { constants, lstat, open, readlink } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Alias, Document, LineCounter, Node, Pair, Scalar, YAMLMap, YAMLSeq } from 'yaml';

// The yaml library is loaded on the first parse: a run that takes a checked
// manifest from the cache (stack-check/cache.ts) parses nothing. Its Node
// build is CommonJS, so this is the instance `import 'yaml'` gives elsewhere.
let yamlModule: typeof import('yaml') | undefined;
const yaml = (): typeof import('yaml') => (yamlModule ??= createRequire(import.meta.url)('yaml') as typeof import('yaml'));
const isAlias = (n: unknown): n is Alias => yaml().isAlias(n);
const isCollection = (n: unknown): n is YAMLMap | YAMLSeq => yaml().isCollection(n);
const isMap = (n: unknown): n is YAMLMap => yaml().isMap(n);
const isPair = (n: unknown): n is Pair => yaml().isPair(n);
const isScalar = (n: unknown): n is Scalar => yaml().isScalar(n);
const isSeq = (n: unknown): n is YAMLSeq => yaml().isSeq(n);
import type { ManifestIssue } from './issues.js';

/** A parsed YAML file that can still tell where each value came from. */
export interface YamlSource {
  file: string;
  value: unknown;
  doc: Document.Parsed;
  lines: LineCounter;
  /** The text as read, to quote what the user wrote (e.g. `6.10` that YAML read as 6.1). */
  text: string;
}

export interface Position {
  line: number;
  column: number;
}

/** A manifest file is a page of YAML; anything this large is a mistake or an attack. */
export const MAX_FILE_BYTES = 4 * 1024 * 1024;

/**
 * Aliases a file may use, and how many nodes their expansion may produce
 * (the yaml library's guard against "billion laughs").
 */
export const MAX_ALIASES = 100;

/** What `readYamlSource` returns: a source, or the issues that prevented one. */
export interface SourceRead {
  source?: YamlSource;
  issues: ManifestIssue[];
}

function fileIssue(file: string, message: string, hint: string): SourceRead {
  return { issues: [{ file, line: 0, column: 0, path: '$', message, hint }] };
}

/** Why `file` cannot be opened, in words: a dangling link and a link loop are named as such. */
async function openFailure(file: string, err: NodeJS.ErrnoException, missingHint: string): Promise<SourceRead> {
  if (err.code === 'ELOOP') return fileIssue(file, 'the file is a symbolic link loop', 'point the link at a real file, or remove it');
  if (err.code === 'ENOENT') {
    const link = await lstat(file).catch(() => undefined);
    if (link?.isSymbolicLink()) {
      const target = await readlink(file).catch(() => '?');
      return fileIssue(file, `the file is a dangling symbolic link (to ${target})`, 'point the link at an existing file, or remove it');
    }
    return fileIssue(file, 'file not found', missingHint);
  }
  if (err.code === 'EISDIR') return fileIssue(file, 'this is a directory, not a YAML file', missingHint);
  return fileIssue(file, `cannot read file: ${err.message}`, missingHint);
}

/**
 * Read and parse one YAML file. The file is opened without blocking and its
 * type checked on the open descriptor before reading, so a FIFO, a device or
 * a socket given as a manifest is refused instead of hanging the run.
 */
export async function readYamlSource(
  file: string,
  missingHint = 'check the path given with --manifest or listed under `components:`',
): Promise<SourceRead> {
  let handle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    return openFailure(file, err as NodeJS.ErrnoException, missingHint);
  }
  let text: string;
  try {
    const st = await handle.stat();
    if (!st.isFile()) {
      const kind = st.isDirectory()
        ? 'a directory'
        : st.isFIFO()
          ? 'a FIFO (named pipe)'
          : st.isSocket()
            ? 'a socket'
            : st.isCharacterDevice() || st.isBlockDevice()
              ? 'a device'
              : 'not a regular file';
      return fileIssue(file, `this is ${kind}, not a YAML file`, missingHint);
    }
    if (st.size > MAX_FILE_BYTES) {
      return fileIssue(file, `the file is ${st.size} bytes; manifest files are at most ${MAX_FILE_BYTES}`, 'split the data, or check that this is the file you meant');
    }
    text = await handle.readFile('utf8');
  } catch (err) {
    return openFailure(file, err as NodeJS.ErrnoException, missingHint);
  } finally {
    await handle.close();
  }
  return parseYamlSource(file, text);
}

export function parseYamlSource(file: string, text: string): SourceRead {
  const lines = new (yaml().LineCounter)();
  // YAML 1.2 core schema: `on`, `yes`, `ON` stay strings, which CMake values need.
  const doc = yaml().parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true, version: '1.2' });
  const at = (offset: number | undefined): Position => {
    if (offset === undefined) return { line: 1, column: 1 };
    const pos = lines.linePos(offset);
    return { line: pos.line, column: pos.col };
  };
  // One syntax error makes the parser lose its place, and every line after it
  // can then be "wrong" too (a mis-indented line gave a dozen errors): the
  // first is the one to fix, and the only one reported. Warnings come only
  // when nothing is an error.
  const errors = [...doc.errors].sort((a, b) => a.pos[0] - b.pos[0]);
  const shown = errors.length > 0 ? errors.slice(0, 1) : [...doc.warnings];
  const issues: ManifestIssue[] = shown.map((e) => ({
    file,
    ...at(e.pos[0]),
    path: '$',
    message: `YAML syntax: ${e.message.split('\n')[0]}`,
    hint:
      (e.code === 'DUPLICATE_KEY'
        ? 'remove or rename the repeated key'
        : e.code === 'TAG_RESOLVE_FAILED'
          ? 'remove the tag (`!name`): manifest values are plain YAML'
          : e.code === 'BAD_INDENT' || /same column|indent/i.test(e.message)
            ? 'indent this line as its neighbours are (spaces, the same number as the line before it at its level), or check the line above'
            : 'fix the YAML syntax at this position') +
      (errors.length > 1 ? `; the file is checked again once this is fixed (${errors.length - 1} later error${errors.length === 2 ? '' : 's'} may follow from this one)` : ''),
  }));
  if (issues.length > 0) return { issues };
  if (doc.contents === null) {
    const onlyComments = /\S/.test(text);
    return {
      issues: [
        {
          file,
          line: 1,
          column: 1,
          path: '$',
          message: onlyComments ? 'the file holds only comments' : 'the file is empty',
          hint: 'write the YAML mapping this file is for (see docs/manifest.md), or remove the file',
        },
      ],
    };
  }
  const found = scan(doc, text, file, at);
  if (found.issues.length > 0) return { issues: found.issues };
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_ALIASES });
  } catch (err) {
    // Only alias expansion throws here: an alias bomb whose expansion exceeds the budget.
    return {
      issues: [
        {
          file,
          ...at(found.firstAlias?.range?.[0]),
          path: '$',
          message: `YAML aliases expand too far (${(err as Error).message.toLowerCase()})`,
          hint: `write the repeated data out; aliases may expand to at most ${MAX_ALIASES} nodes`,
        },
      ],
    };
  }
  return { source: { file, value, doc, lines, text }, issues: [] };
}

/**
 * Characters that must not appear in any manifest text: C0 controls other
 * than tab and newline (NUL, ESC, CR…), DEL, C1 controls, and the bidirectional
 * overrides that make code read differently from how it runs. They would end
 * up in ebuilds, metadata.xml or profiles/desc, where none has a meaning.
 */
const FORBIDDEN_CHARS = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]/;

function describeChar(ch: string): string {
  const code = ch.codePointAt(0)!;
  const names: Record<number, string> = { 0: 'NUL', 0x1b: 'ESC', 0x0d: 'CR (carriage return)', 0x7f: 'DEL', 0x0c: 'form feed', 0x0b: 'vertical tab' };
  const hex = `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
  return names[code] ? `${names[code]} (${hex})` : code >= 0x202a ? `bidirectional control ${hex}` : `control character ${hex}`;
}

/**
 * Walk the document once for what YAML accepts but a manifest must not hold:
 * aliases to nowhere or too many of them, keys YAML reads as something other
 * than the text written (`6.10:` is the number 6.1), and control characters
 * in any key or value.
 */
function scan(
  doc: Document.Parsed,
  text: string,
  file: string,
  at: (offset: number | undefined) => Position,
): { issues: ManifestIssue[]; firstAlias?: Alias } {
  const issues: ManifestIssue[] = [];
  let aliases = 0;
  let firstAlias: Alias | undefined;
  const push = (node: Node | undefined, segments: (string | number)[], message: string, hint: string) =>
    issues.push({ file, ...at(node?.range?.[0]), path: jsonPath(segments), message, hint });

  const checkText = (node: Node, value: unknown, segments: (string | number)[], what: string) => {
    if (typeof value !== 'string') return;
    const m = FORBIDDEN_CHARS.exec(value);
    if (m) push(node, segments, `${what} holds ${describeChar(m[0])} at character ${m.index + 1}`, 'remove it: control characters have no place in ebuilds or metadata.xml');
  };

  const visitNode = (node: unknown, segments: (string | number)[]): void => {
    if (isAlias(node)) {
      aliases++;
      firstAlias ??= node;
      if (aliases === MAX_ALIASES + 1) {
        push(node, segments, `more than ${MAX_ALIASES} YAML aliases in one file`, 'write the repeated data out instead of using so many aliases');
      }
      if (!node.resolve(doc)) {
        push(node, segments, `alias *${node.source} refers to no anchor`, `define &${node.source} before this alias, or fix its name`);
      }
      return;
    }
    if (isScalar(node)) {
      checkText(node, node.value, segments, 'the value');
      return;
    }
    if (isMap(node)) {
      for (const pair of node.items) {
        if (!isPair(pair)) continue;
        const key = pair.key as Node | null;
        let name: string;
        if (isScalar(key)) {
          name = String(key.value);
          const written = key.range ? text.slice(key.range[0], key.range[1]).trim() : name;
          if (typeof key.value !== 'string' && written !== name) {
            push(key, [...segments, name], `YAML reads the key ${written} as ${typeName(key.value)} ${name}`, `quote it so it stays the text you wrote: "${written}":`);
          }
          checkText(key, key.value, [...segments, name], 'the key');
        } else if (isCollection(key) || isAlias(key)) {
          name = '?';
          push(key ?? undefined, segments, 'a key must be plain text, not a list, mapping or alias', 'write the key as text');
          continue;
        } else {
          name = '';
        }
        visitNode(pair.value, [...segments, name]);
      }
      return;
    }
    if (isSeq(node)) node.items.forEach((item, i) => visitNode(item, [...segments, i]));
  };
  visitNode(doc.contents, []);
  return { issues, ...(firstAlias ? { firstAlias } : {}) };
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (typeof v === 'number') return 'the number';
  if (typeof v === 'boolean') return 'the boolean';
  return typeof v;
}

/** The text the user wrote for the node at `segments`, when it is a scalar (e.g. `6.10` for the number 6.1). */
export function writtenText(source: YamlSource, segments: readonly (string | number)[]): string | undefined {
  const { node, depth } = nodeAt(source.doc, segments);
  if (depth !== segments.length || !isScalar(node) || !node.range) return undefined;
  return source.text.slice(node.range[0], node.range[1]).trim();
}

/** Split a JSON pointer ("/deps/2/atom") into YAML path segments. */
export function pointerSegments(pointer: string): (string | number)[] {
  if (pointer === '' || pointer === '/') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

/** "$.deps[2].atom" — the form users read in messages. */
export function jsonPath(segments: readonly (string | number)[]): string {
  let out = '$';
  for (const s of segments) {
    if (typeof s === 'number') out += `[${s}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(s)) out += `.${s}`;
    else out += `[${JSON.stringify(s)}]`;
  }
  return out;
}

function nodeAt(doc: Document.Parsed, segments: readonly (string | number)[]): { node?: Node; depth: number } {
  let node: unknown = doc.contents;
  let depth = 0;
  for (const seg of segments) {
    if (isAlias(node)) node = node.resolve(doc);
    if (isMap(node)) {
      const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(seg));
      if (!pair) break;
      node = pair.value;
    } else if (isSeq(node) && typeof seg === 'number') {
      const item = node.items[seg];
      if (item === undefined) break;
      node = item;
    } else {
      break;
    }
    depth++;
  }
  return { node: (node ?? undefined) as Node | undefined, depth };
}

/**
 * Where a value lives. With `key`, the position of that key inside the mapping
 * at `segments` (for unknown keys); otherwise the deepest node that exists on
 * the path (for missing keys that is the parent mapping).
 */
export function locate(source: YamlSource, segments: readonly (string | number)[], key?: string): Position {
  const { node } = nodeAt(source.doc, segments);
  let offset = node?.range?.[0];
  if (key !== undefined && isMap(node)) {
    const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === key);
    const k = pair?.key as Node | undefined;
    if (k?.range) offset = k.range[0];
  }
  if (offset === undefined) return { line: 1, column: 1 };
  const pos = source.lines.linePos(offset);
  return { line: pos.line, column: pos.col };
}
