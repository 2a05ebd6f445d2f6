/**
 * A Gentoo dependency specification (PMS 8.2) read into atoms with the USE
 * conditions around each: `flag? ( … )`, `!flag? ( … )`, `|| ( … )` groups
 * (the alternatives count as a condition "||"), blockers. Eclass-generated
 * parts are opened before: $(llvm_gen_dep '…'), $(python_gen_any_dep "…")
 * and friends hold atoms written for every slot or implementation, which is
 * what both sides of a comparison write.
 */

export interface ParsedAtom {
  key: string;
  op: string;
  version?: string;
  /** The slot part as written, with its colon (":${SLOT}", ":=", ":0/7.2"), or ''. */
  slot: string;
  usedeps?: string;
  blocker: boolean;
  when: string[];
  /** 0-based offset in the text the parse was given (for a line number). */
  offset: number;
}

const ATOM =
  /^(!!?)?(<=|>=|<|>|=|~)?([A-Za-z0-9+_][A-Za-z0-9+_.-]*\/[A-Za-z0-9+_][A-Za-z0-9+_-]*?)(?:-(\d+(?:\.\d+)*[a-z]?(?:_(?:alpha|beta|pre|rc|p)\d*)*(?:-r\d+)?|\$\{PV\}|\$\{PVR\})(\*)?)?(:[^[\s]*)?(\[[^\]]*\])?$/;

/** Parses one atom; undefined when the word is not one. */
export function parseAtom(word: string): Omit<ParsedAtom, 'when' | 'offset'> | undefined {
  const m = ATOM.exec(word);
  if (!m) return undefined;
  return {
    key: m[3]!,
    op: m[2] ?? '',
    ...(m[4] ? { version: `${m[4]}${m[5] ?? ''}` } : {}),
    slot: m[6] ?? '',
    ...(m[7] ? { usedeps: m[7] } : {}),
    blocker: Boolean(m[1]),
  };
}

export interface DepParse {
  atoms: ParsedAtom[];
  /** Words that are neither atoms nor operators, with their offsets. */
  unknown: { word: string; offset: number }[];
}

/** Parses a dependency string; unbalanced parentheses or stray words are reported, not fatal. */
export function parseDepString(text: string): DepParse {
  const atoms: ParsedAtom[] = [];
  const unknown: DepParse['unknown'] = [];
  const stack: string[][] = [[]];
  let pending: string | undefined;
  const re = /\S+/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text))) {
    const w = m[0];
    if (w === '(') {
      const outer = stack[stack.length - 1]!;
      stack.push(pending !== undefined ? [...outer, pending] : [...outer]);
      pending = undefined;
      continue;
    }
    if (w === ')') {
      if (stack.length > 1) stack.pop();
      else unknown.push({ word: w, offset: m.index });
      continue;
    }
    if (w === '||' || /^!?[A-Za-z0-9][A-Za-z0-9+_@-]*\?$/.test(w)) {
      pending = w === '||' ? '||' : w.slice(0, -1);
      continue;
    }
    if (pending !== undefined) {
      unknown.push({ word: `${pending} without (`, offset: m.index });
      pending = undefined;
    }
    const a = parseAtom(w);
    if (!a) {
      unknown.push({ word: w, offset: m.index });
      continue;
    }
    atoms.push({ ...a, when: [...stack[stack.length - 1]!], offset: m.index });
  }
  return { atoms, unknown };
}

/** Opens the eclass helpers that wrap atoms, leaving the atoms in place; other $(…) are left for the caller to report. */
export function openGenerators(text: string): string {
  let out = text;
  for (let pass = 0; pass < 8; pass++) {
    const next = out.replace(/\$\((?:llvm_gen_dep|python_gen_any_dep|python_gen_cond_dep|python_gen_impl_dep|python_gen_deps)\s+(?:"([^"]*)"|'([^']*)')[^)]*\)/g, (_m, a?: string, b?: string) => ` ${a ?? b ?? ''} `);
    if (next === out) break;
    out = next;
  }
  return out;
}
