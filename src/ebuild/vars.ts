import { parseBash } from './bash-parser.js';

/** One top-level assignment as written: `NAME=value` or `NAME+=value`. */
export interface RawAssignment {
  name: string;
  append: boolean;
  /** The value's source text, quotes included. */
  raw: string;
  line: number;
}

export interface EbuildVars {
  assignments: RawAssignment[];
  /** The end year of "# Copyright [YYYY-]YYYY holder" on line 1, as pkgcheck reads it. */
  copyright?: { end: number; line: string };
}

const COPYRIGHT_RE = /^# Copyright (\d{4}-)?(\d{4}) (.+)$/;

/**
 * The global assignments of an ebuild, read from the tree-sitter-bash parse
 * (the grammar pkgcheck uses), without running anything.
 */
export async function ebuildVars(text: string): Promise<EbuildVars> {
  const tree = await parseBash(text);
  const assignments: RawAssignment[] = [];
  try {
    for (const node of tree.rootNode.namedChildren) {
      if (!node || node.type !== 'variable_assignment') continue;
      const name = node.childForFieldName('name')?.text ?? '';
      const append = node.children.some((c) => c?.type === '+=');
      const value = node.childForFieldName('value');
      assignments.push({ name, append, raw: value?.text ?? '', line: node.startPosition.row + 1 });
    }
  } finally {
    tree.delete();
  }
  const first = text.split('\n', 1)[0] ?? '';
  const m = COPYRIGHT_RE.exec(first);
  return { assignments, ...(m ? { copyright: { end: Number(m[2]), line: first } } : {}) };
}

/** Remove one level of quoting from a simple value ("x", 'x' or x). */
export function unquote(raw: string): string {
  if (raw.length >= 2 && ((raw.startsWith('"') && raw.endsWith('"')) || (raw.startsWith("'") && raw.endsWith("'")))) return raw.slice(1, -1);
  return raw;
}

/** A variable's value text as its assignments build it (the last `=` and the `+=` after it), whitespace-normalised. */
export function assigned(vars: EbuildVars, name: string): string | undefined {
  let parts: string[] | undefined;
  for (const a of vars.assignments) {
    if (a.name !== name) continue;
    if (!a.append || !parts) parts = [];
    parts.push(unquote(a.raw));
  }
  return parts?.join(' ').replace(/\s+/g, ' ').trim();
}

/**
 * What RDEPEND says, for comparing two revisions of one ebuild: its own text
 * with ${DEPEND} (the common `RDEPEND="${DEPEND}"`) replaced by DEPEND's.
 */
export function rdependText(vars: EbuildVars): string {
  const depend = assigned(vars, 'DEPEND') ?? '';
  return (assigned(vars, 'RDEPEND') ?? '').replace(/\$\{DEPEND\}|\$DEPEND\b/g, depend).replace(/\s+/g, ' ').trim();
}
