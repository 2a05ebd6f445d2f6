/**
 * The names an eclass offers ebuilds, read from its text: eclassdoc's
 * @ECLASS_VARIABLE and @FUNCTION tags, and the functions it defines. What an
 * ebuild uses of another eclass's names tells whether it works with this one
 * (::gentoo's rocm.eclass against the one these ebuilds are generated for).
 */
export function eclassApiNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const m of text.matchAll(/^#\s*@(?:ECLASS_VARIABLE|FUNCTION):\s*([A-Za-z_][A-Za-z0-9_-]*)\s*$/gm)) names.add(m[1]!);
  for (const m of text.matchAll(/^([A-Za-z_][A-Za-z0-9_-]*)\s*\(\)\s*\{/gm)) names.add(m[1]!);
  // Private helpers (a leading underscore) are no API.
  for (const n of [...names]) if (n.startsWith('_')) names.delete(n);
  return names;
}

/** The names of `api` an ebuild's text uses (as whole words), sorted. */
export function usedApiNames(ebuild: string, api: ReadonlySet<string>): string[] {
  const used = new Set<string>();
  for (const m of ebuild.matchAll(/[A-Za-z_][A-Za-z0-9_]*/g)) if (api.has(m[0])) used.add(m[0]);
  return [...used].sort();
}

/** The lines of an amdgpu_targets.desc: target name → its whole line. */
function descLines(text: string): { lines: string[]; targets: Map<string, number> } {
  const lines = text.replace(/\n$/, '').split('\n');
  const targets = new Map<string, number>();
  lines.forEach((l, i) => {
    const m = /^(gfx[0-9a-z]+)\s+-\s/.exec(l);
    if (m) targets.set(m[1]!, i);
  });
  return { lines, targets };
}

/** gfx803 < gfx900 < gfx90a < gfx1010: by the length of the number, then as text, as the file lists them. */
function targetOrder(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}

/**
 * An existing amdgpu_targets.desc with the lines of `ours` for targets it
 * lacks, each inserted in target order; every existing line is kept as it
 * is (descriptions, targets ours does not have, comments). Undefined when
 * nothing is missing. For a repository whose file is not ours to rewrite.
 */
export function extendDesc(existing: string, ours: string): { text: string; added: string[] } | undefined {
  const have = descLines(existing);
  const want = descLines(ours);
  const added = [...want.targets.keys()].filter((t) => !have.targets.has(t)).sort(targetOrder);
  if (added.length === 0) return undefined;
  const lines = [...have.lines];
  for (const t of added) {
    const line = want.lines[want.targets.get(t)!]!;
    const current = descLines(lines.join('\n'));
    const after = [...current.targets.entries()].filter(([name]) => targetOrder(name, t) < 0).sort((x, y) => x[1] - y[1]).at(-1);
    const before = [...current.targets.entries()].filter(([name]) => targetOrder(name, t) > 0).sort((x, y) => x[1] - y[1])[0];
    const at = after ? after[1] + 1 : before ? before[1] : lines.length;
    lines.splice(at, 0, line);
  }
  return { text: `${lines.join('\n')}\n`, added };
}
