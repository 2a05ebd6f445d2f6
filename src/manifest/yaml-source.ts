import { readFile } from 'node:fs/promises';
import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import type { ManifestIssue } from './issues.js';

/** A parsed YAML file that can still tell where each value came from. */
export interface YamlSource {
  file: string;
  value: unknown;
  doc: Document.Parsed;
  lines: LineCounter;
}

export interface Position {
  line: number;
  column: number;
}

export async function readYamlSource(
  file: string,
  missingHint = 'check the path given with --manifest or listed under `components:`',
): Promise<{ source?: YamlSource; issues: ManifestIssue[] }> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    return {
      issues: [
        {
          file,
          line: 0,
          column: 0,
          path: '$',
          message: e.code === 'ENOENT' ? 'file not found' : `cannot read file: ${e.message}`,
          hint: missingHint,
        },
      ],
    };
  }
  return parseYamlSource(file, text);
}

export function parseYamlSource(file: string, text: string): { source?: YamlSource; issues: ManifestIssue[] } {
  const lines = new LineCounter();
  // YAML 1.2 core schema: `on`, `yes`, `ON` stay strings, which CMake values need.
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true, version: '1.2' });
  const issues: ManifestIssue[] = doc.errors.map((e) => {
    const pos = lines.linePos(e.pos[0]);
    return {
      file,
      line: pos.line,
      column: pos.col,
      path: '$',
      message: `YAML syntax: ${e.message.split('\n')[0]}`,
      hint: e.code === 'DUPLICATE_KEY' ? 'remove or rename the repeated key' : 'fix the YAML syntax at this position',
    };
  });
  if (issues.length > 0) return { issues };
  return { source: { file, value: doc.toJS({ maxAliasCount: 100 }), doc, lines }, issues };
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
