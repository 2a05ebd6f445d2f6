import { strict as assert } from 'node:assert';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { root } from './helpers/project.js';

/** Longest a function, method or arrow in src/ may be (lines, its first to its last). */
export const MAX_LINES = 100;

/**
 * Long functions that predate the rule in folders being reworked elsewhere, by
 * "file relative to src/:name". Each entry is a debt: shrink the list, never grow it.
 * A function of the list that got short (or went) fails the test too, so the list stays true.
 */
const KNOWN_LONG = new Set<string>([
]);

/** The comment just before a long function must say this (and why) for it to be kept whole. */
const ONE_PIECE = /\bone piece\b/i;

export interface LongFunction {
  /** Path relative to src/. */
  file: string;
  name: string;
  line: number;
  lines: number;
  /** Whether the comment just before it says why it is one piece. */
  explained: boolean;
}

function isFunctionLike(node: ts.Node): node is ts.FunctionLikeDeclaration {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isArrowFunction(node) ||
    ts.isFunctionExpression(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node)
  );
}

/** The name a reader would look for: the declared name, or the variable/property an arrow is assigned to. */
function nameOf(node: ts.FunctionLikeDeclaration, source: ts.SourceFile): string {
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  if (node.name) return node.name.getText(source);
  const parent = node.parent;
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) && parent.name) {
    return parent.name.getText(source);
  }
  return `<anonymous>@${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}`;
}

/**
 * The node whose leading comment documents a function: the statement for a declared function or
 * `const f = () => …`, the member for a method or property, the function itself otherwise.
 */
function documentedNode(node: ts.FunctionLikeDeclaration): ts.Node {
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) && ts.isVariableDeclarationList(parent.parent) && ts.isVariableStatement(parent.parent.parent)) {
    return parent.parent.parent;
  }
  if (ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) return parent;
  return node;
}

function leadingComment(node: ts.Node, source: ts.SourceFile): string {
  const ranges = ts.getLeadingCommentRanges(source.text, node.getFullStart()) ?? [];
  return ranges.map((r) => source.text.slice(r.pos, r.end)).join('\n');
}

/** Every function in a file's text longer than `max` lines. */
export function longFunctions(file: string, text: string, max = MAX_LINES): LongFunction[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: LongFunction[] = [];
  const visit = (node: ts.Node): void => {
    if (isFunctionLike(node) && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      if (lines > max) {
        found.push({
          file,
          name: nameOf(node, source),
          line: first + 1,
          lines,
          explained: ONE_PIECE.test(leadingComment(documentedNode(node), source)),
        });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function sourceFiles(dir: string, rel = ''): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const child = rel ? `${rel}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...sourceFiles(dir, child));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(child);
  }
  return out;
}

describe('function length', () => {
  const src = path.join(root, 'src');
  const all = sourceFiles(src).flatMap((rel) => longFunctions(rel, readFileSync(path.join(src, rel), 'utf8')));

  it(`no function in src/ is over ${MAX_LINES} lines unless the comment before it says why it is one piece`, () => {
    const unexplained = all.filter((f) => !f.explained && !KNOWN_LONG.has(`${f.file}:${f.name}`));
    assert.deepEqual(
      unexplained.map((f) => `src/${f.file}:${f.line} ${f.name} (${f.lines} lines)`),
      [],
      `split these where a name would explain a part, or say in the comment just before each why it is one piece`,
    );
  });

  it('every allowed exception is still a long function (the list only shrinks)', () => {
    const present = new Set(all.filter((f) => !f.explained).map((f) => `${f.file}:${f.name}`));
    const stale = [...KNOWN_LONG].filter((key) => !present.has(key));
    assert.deepEqual(stale, [], 'these are no longer long (or are explained): remove them from KNOWN_LONG');
  });

  it('finds long declared functions, methods and arrows, and reads the comment before them', () => {
    const body = (n: number): string => Array.from({ length: n }, (_, i) => `  x += ${i};`).join('\n');
    const text = [
      `export function declared(): void {\n  let x = 0;\n${body(100)}\n}`,
      `/** One piece: each step feeds the next. */\nexport const arrow = (): void => {\n  let x = 0;\n${body(100)}\n};`,
      `class C {\n  /** Walks. */\n  method(): void {\n    let x = 0;\n${body(100)}\n  }\n}`,
      `export function short(): void {\n  let x = 0;\n${body(97)}\n}`,
    ].join('\n\n');
    const found = longFunctions('sample.ts', text);
    assert.deepEqual(
      found.map((f) => [f.name, f.lines, f.explained]),
      [
        ['declared', 103, false],
        ['arrow', 103, true],
        ['method', 103, false],
      ],
    );
  });
});
