import { createRequire } from 'node:module';
import v8 from 'node:v8';
import type { Node, Parser, Tree } from 'web-tree-sitter';

const require = createRequire(import.meta.url);
let parser: Promise<Parser> | undefined;

/**
 * tree-sitter-bash through web-tree-sitter (WebAssembly): the grammar Gentoo's
 * pkgcheck parses ebuilds with, without a native build at install time. The
 * promise is shared, so callers that arrive together load the module once.
 */
export function bashParser(): Promise<Parser> {
  parser ??= (async () => {
    // Imported here: commands that never parse bash (validate, graph, render) need not load it.
    const { Language, Parser } = await import('web-tree-sitter');
    // tree-sitter-bash's lexer is one huge WebAssembly function, hot from the
    // first parse: V8 then recompiles it with its optimising compiler, about
    // 1.3 s of CPU on a background thread in every process that parses, for
    // parses its baseline (Liftoff) code does as fast (49 ebuilds in ~0.1 s
    // either way). Baseline code only, then; this flag concerns WebAssembly
    // alone, and tree-sitter is the only WebAssembly this program runs.
    v8.setFlagsFromString('--liftoff-only');
    await Parser.init();
    const language = await Language.load(require.resolve('tree-sitter-bash/tree-sitter-bash.wasm'));
    const p = new Parser();
    p.setLanguage(language);
    return p;
  })();
  return parser;
}

export async function parseBash(text: string): Promise<Tree> {
  const tree = (await bashParser()).parse(text);
  if (!tree) throw new Error('tree-sitter could not parse the text');
  return tree;
}

/** Depth-first walk over named nodes. */
export function* walk(node: Node): Generator<Node> {
  yield node;
  for (const child of node.namedChildren) if (child) yield* walk(child);
}

/** The enclosing function definition's name, if any. */
export function functionOf(node: Node): string | undefined {
  for (let n: Node | null = node.parent; n; n = n.parent) {
    if (n.type === 'function_definition') return n.childForFieldName('name')?.text;
  }
  return undefined;
}

export function isInside(node: Node, types: readonly string[]): boolean {
  for (let n: Node | null = node.parent; n; n = n.parent) if (types.includes(n.type)) return true;
  return false;
}

export type { Node, Tree };
