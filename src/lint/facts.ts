import { functionOf, parseBash, walk } from './bash-parser.js';
import type { Assignment, Command, EbuildFacts, EbuildInput } from './types.js';

/** Strip one level of bash quoting from an assignment's value text. */
function unquote(text: string): string {
  if (text.length >= 2 && ((text.startsWith('"') && text.endsWith('"')) || (text.startsWith("'") && text.endsWith("'")))) {
    return text.slice(1, -1);
  }
  return text;
}

export async function extractFacts(input: EbuildInput): Promise<EbuildFacts> {
  const tree = await parseBash(input.text);
  const root = tree.rootNode;
  const globals: Assignment[] = [];
  const functions = new Map<string, import('./bash-parser.js').Node>();
  const commands: Command[] = [];
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
  for (const node of walk(root)) {
    if (node.type !== 'command') continue;
    const name = node.childForFieldName('name')?.text;
    if (!name) continue;
    const fn = functionOf(node);
    commands.push({ name, node, line: node.startPosition.row + 1, ...(fn ? { fn } : {}) });
    if (name === 'inherit' && !fn) {
      inherits = node.namedChildren.filter((c) => c && c.type !== 'command_name').map((c) => c!.text);
      inheritLine = node.startPosition.row + 1;
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
  };
}
