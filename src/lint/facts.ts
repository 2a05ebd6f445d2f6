import { parseBash } from '../ebuild/bash-parser.js';
import type { Assignment, Command, EbuildFacts, EbuildInput, Visited } from './types.js';

/** Strip one level of bash quoting from an assignment's value text. */
function unquote(text: string): string {
  if (text.length >= 2 && ((text.startsWith('"') && text.endsWith('"')) || (text.startsWith("'") && text.endsWith("'")))) {
    return text.slice(1, -1);
  }
  return text;
}

/** What the traversal collects for each node type: the checks' declarations merged, 'node' winning. */
export type NodeWants = ReadonlyMap<string, 'node' | 'text'>;

/** Line numbers from string offsets, as tree-sitter counts rows (after each "\n"). */
function lineIndex(text: string): (offset: number) => number {
  const starts = [0];
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return (offset) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
}

export async function extractFacts(input: EbuildInput, wants: NodeWants = new Map()): Promise<EbuildFacts> {
  const tree = await parseBash(input.text);
  const root = tree.rootNode;
  const globals: Assignment[] = [];
  const functions = new Map<string, import('../ebuild/bash-parser.js').Node>();
  let inherits: string[] = [];
  let inheritLine: number | undefined;

  for (const child of root.namedChildren) {
    if (!child) continue;
    if (child.type === 'variable_assignment') {
      const name = child.childForFieldName('name')?.text ?? '';
      const value = child.childForFieldName('value');
      globals.push({ name, value: value ? unquote(value.text) : '', line: child.startPosition.row + 1, node: child });
    }
    if (child.type === 'function_definition') {
      const name = child.childForFieldName('name')?.text;
      if (name) functions.set(name, child);
    }
  }

  // One walk over the whole tree with a cursor, which creates no node objects:
  // a check's node types are collected on the way, with their enclosing
  // function and ancestors, and only the nodes asked for are materialised.
  // (A walk per check, climbing parents, was most of the lint's time.)
  const text = input.text;
  const lineOf = lineIndex(text);
  const collected = new Map<string, Visited[]>([...wants.keys()].map((t) => [t, []]));
  type Found = Omit<Command, 'name'> & { name?: string };
  const found: Found[] = [];
  const ancestors: string[] = [];
  /** Per level of `ancestors`: the function name in force below it, and the command it is (if one). */
  const fnBelow: (string | undefined)[] = [];
  const commandAt: (Found | undefined)[] = [];
  let fn: string | undefined;
  const cursor = tree.walk();
  try {
    for (;;) {
      const type = cursor.nodeType;
      let command: Found | undefined;
      let innerFn = fn;
      if (type === 'command') {
        command = { node: cursor.currentNode, line: lineOf(cursor.startIndex), ancestors: [...ancestors], ...(fn ? { fn } : {}) };
        found.push(command);
      } else if (type === 'command_name' && ancestors[ancestors.length - 1] === 'command') {
        // The command's `name` field: its only command_name child.
        const owner = commandAt[commandAt.length - 1];
        if (owner && owner.name === undefined) owner.name = text.slice(cursor.startIndex, cursor.endIndex);
      } else if (type === 'function_definition') {
        innerFn = cursor.currentNode.childForFieldName('name')?.text;
      }
      const want = collected.get(type);
      if (want) {
        const startIndex = cursor.startIndex;
        const endIndex = cursor.endIndex;
        want.push({
          type,
          text: text.slice(startIndex, endIndex),
          line: lineOf(startIndex),
          startIndex,
          endIndex,
          ...(fn ? { fn } : {}),
          ancestors: [...ancestors],
          ...(wants.get(type) === 'node' ? { node: command?.node ?? cursor.currentNode } : {}),
        });
      }
      if (cursor.gotoFirstChild()) {
        ancestors.push(type);
        fnBelow.push(fn);
        commandAt.push(command);
        fn = innerFn;
        continue;
      }
      let done = false;
      while (!cursor.gotoNextSibling()) {
        if (!cursor.gotoParent()) {
          done = true;
          break;
        }
        ancestors.pop();
        commandAt.pop();
        fn = fnBelow.pop();
      }
      if (done) break;
    }
  } finally {
    cursor.delete();
  }
  const commands: Command[] = [];
  for (const c of found) {
    if (!c.name) continue;
    commands.push(c as Command);
    if (c.name === 'inherit' && !c.fn) {
      inherits = c.node.namedChildren.filter((n) => n && n.type !== 'command_name').map((n) => n!.text);
      inheritLine = c.line;
    }
  }
  // distutils_enable_tests adds IUSE=test (and RESTRICT) itself.
  const eclassIuse = [...(input.eclassIuse ?? []), ...(commands.some((c) => c.name === 'distutils_enable_tests' && !c.fn) ? ['test'] : [])];
  const iuse = new Set<string>();
  const iuseDefaults = new Set<string>();
  const iuseWords = [
    ...(globals.find((g) => g.name === 'IUSE')?.value.split(/\s+/) ?? []),
    ...eclassIuse,
  ].filter(Boolean);
  for (const w of iuseWords) {
    const flag = w.replace(/^[+-]/, '');
    iuse.add(flag);
    if (w.startsWith('+')) iuseDefaults.add(flag);
  }
  return {
    input,
    tree,
    lines: input.text.split('\n'),
    globals,
    globalMap: new Map(globals.map((g) => [g.name, g])),
    inherits,
    ...(inheritLine !== undefined ? { inheritLine } : {}),
    functions,
    commands,
    iuse,
    iuseDefaults,
    nodes(type) {
      const list = collected.get(type);
      if (!list) throw new Error(`lint: node type ${type} was not collected; declare it in the check's nodeTypes`);
      return list;
    },
  };
}
