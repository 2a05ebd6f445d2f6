import type { EbuildVars } from './vars.js';

/**
 * The distfile names an ebuild's SRC_URI asks for, worked out from its text
 * without running bash: Portage's own variables (${PN}, ${PV}, ${P}, …), the
 * ebuild's global variables, the common substitutions (${X/a/b}, ${X%.*}
 * with literal patterns, ${X,,}) and `$(ver_cut …)` / `$(ver_rs …)`. Every
 * USE-conditional group counts (a Manifest must cover all of them). Anything
 * else throws Unevaluable, naming what could not be evaluated, so callers can
 * say so instead of guessing.
 */

export class Unevaluable extends Error {
  constructor(readonly what: string) {
    super(`cannot evaluate ${what}`);
    this.name = 'Unevaluable';
  }
}

export interface EbuildIdentity {
  category: string;
  pn: string;
  /** Version with revision. */
  version: string;
}

export function portageVars(e: EbuildIdentity): Map<string, string> {
  const m = /^(.*?)(?:-(r\d+))?$/.exec(e.version)!;
  const pv = m[1]!;
  const pr = m[2] ?? 'r0';
  const pvr = m[2] ? `${pv}-${pr}` : pv;
  return new Map([
    ['PN', e.pn],
    ['PV', pv],
    ['PR', pr],
    ['PVR', pvr],
    ['P', `${e.pn}-${pv}`],
    ['PF', `${e.pn}-${pvr}`],
    ['CATEGORY', e.category],
  ]);
}

/** The separators and components of a version, as eapi7-ver's ver_split: [sep0, comp1, sep1, comp2, …]. */
export function verSplit(v: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < v.length) {
    let sep = '';
    while (i < v.length && !/[A-Za-z0-9]/.test(v[i]!)) sep += v[i++];
    out.push(sep);
    if (i >= v.length) break;
    const digit = /[0-9]/.test(v[i]!);
    let comp = '';
    while (i < v.length && (digit ? /[0-9]/ : /[A-Za-z]/).test(v[i]!)) comp += v[i++];
    out.push(comp);
  }
  if (out.length % 2 === 1 && out.at(-1) === '' && out.length > 1) out.pop();
  return out;
}

function parseRange(range: string, max: number): [number, number] {
  const m = /^(\d+)(?:(-)(\d+)?)?$/.exec(range);
  if (!m) throw new Unevaluable(`the version range "${range}"`);
  const start = Number(m[1]);
  const end = m[2] ? (m[3] !== undefined ? Number(m[3]) : max) : start;
  return [start, Math.min(end, max)];
}

export function verCut(range: string, version: string): string {
  const comp = verSplit(version);
  const max = Math.floor(comp.length / 2);
  const [start, end] = parseRange(range, max);
  const s = start > 0 ? start * 2 - 1 : 0;
  return comp.slice(s, end * 2).join('');
}

export function verRs(args: string[], version: string): string {
  const comp = verSplit(version);
  const max = Math.floor(comp.length / 2);
  for (let k = 0; k + 1 < args.length; k += 2) {
    const [start, end] = parseRange(args[k]!, max);
    for (let i = start * 2; i <= end * 2 && i < comp.length; i += 2) {
      if (i === 0 && comp[0] === '') continue;
      comp[i] = args[k + 1]!;
    }
  }
  return comp.join('');
}

class Expander {
  private readonly resolving = new Set<string>();
  private readonly cache = new Map<string, string>();

  constructor(
    private readonly vars: EbuildVars,
    private readonly portage: Map<string, string>,
  ) {}

  variable(name: string): string {
    const p = this.portage.get(name);
    if (p !== undefined) return p;
    const hit = this.cache.get(name);
    if (hit !== undefined) return hit;
    if (this.resolving.has(name)) throw new Unevaluable(`\${${name}} (it refers to itself)`);
    const own = this.vars.assignments.filter((a) => a.name === name);
    if (own.length === 0) throw new Unevaluable(`\${${name}} (not set by the ebuild; an eclass or Portage sets it)`);
    if (own.some((a) => a.raw.startsWith('('))) throw new Unevaluable(`\${${name}} (an array)`);
    this.resolving.add(name);
    try {
      let value = '';
      for (const a of own) value = a.append ? value + this.expand(a.raw) : this.expand(a.raw);
      this.cache.set(name, value);
      return value;
    } finally {
      this.resolving.delete(name);
    }
  }

  /** Expand a value's source text (quotes included) to the string bash would assign. */
  expand(raw: string): string {
    let out = '';
    let i = 0;
    let quote: '"' | undefined;
    while (i < raw.length) {
      const c = raw[i]!;
      if (c === '\\') {
        out += raw[i + 1] ?? '';
        i += 2;
      } else if (c === '"') {
        quote = quote ? undefined : '"';
        i++;
      } else if (c === "'" && !quote) {
        const end = raw.indexOf("'", i + 1);
        if (end === -1) throw new Unevaluable('an unterminated quote');
        out += raw.slice(i + 1, end);
        i = end + 1;
      } else if (c === '`') {
        throw new Unevaluable('a `command` substitution');
      } else if (c === '$' && raw[i + 1] === '{') {
        const end = matching(raw, i + 1, '{', '}');
        out += this.parameter(raw.slice(i + 2, end));
        i = end + 1;
      } else if (c === '$' && raw[i + 1] === '(') {
        if (raw[i + 2] === '(') throw new Unevaluable('an $(( arithmetic )) expansion');
        const end = matching(raw, i + 1, '(', ')');
        out += this.command(raw.slice(i + 2, end).trim());
        i = end + 1;
      } else if (c === '$' && /[A-Za-z_]/.test(raw[i + 1] ?? '')) {
        const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(raw.slice(i + 1))!;
        out += this.variable(m[0]);
        i += 1 + m[0].length;
      } else {
        out += c;
        i++;
      }
    }
    return out;
  }

  private parameter(body: string): string {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)(.*)$/s.exec(body);
    if (!m) throw new Unevaluable(`\${${body}}`);
    const [, name, op] = m as unknown as [string, string, string];
    if (op === '') return this.variable(name);
    const value = this.variable(name);
    const literal = (p: string) => {
      const text = this.expand(p);
      if (/[*?[]/.test(text)) throw new Unevaluable(`\${${body}} (a glob pattern)`);
      return text;
    };
    let r: RegExpExecArray | null;
    if ((r = /^(\/\/?)([^/]*)(?:\/(.*))?$/s.exec(op))) {
      const pat = literal(r[2]!);
      const rep = this.expand(r[3] ?? '');
      if (pat === '') return value;
      return r[1] === '//' ? value.split(pat).join(rep) : value.replace(pat, () => rep);
    }
    if ((r = /^(%%?|##?)(.*)$/s.exec(op))) {
      const pat = literal(r[2]!);
      if (r[1]!.startsWith('%')) return value.endsWith(pat) ? value.slice(0, value.length - pat.length) : value;
      return value.startsWith(pat) ? value.slice(pat.length) : value;
    }
    if (op === '^^') return value.toUpperCase();
    if (op === ',,') return value.toLowerCase();
    if (op === '^') return value.charAt(0).toUpperCase() + value.slice(1);
    if (op === ',') return value.charAt(0).toLowerCase() + value.slice(1);
    throw new Unevaluable(`\${${body}}`);
  }

  private command(body: string): string {
    const words = body.split(/\s+/).map((w) => this.expand(w));
    const pv = this.portage.get('PV')!;
    if (words[0] === 'ver_cut' && (words.length === 2 || words.length === 3)) return verCut(words[1]!, words[2] ?? pv);
    if (words[0] === 'ver_rs' && words.length >= 3) {
      const args = words.slice(1);
      const version = args.length % 2 === 1 ? args.pop()! : pv;
      return verRs(args, version);
    }
    throw new Unevaluable(`$(${body})`);
  }
}

function matching(text: string, open: number, o: string, c: string): number {
  let depth = 0;
  for (let k = open; k < text.length; k++) {
    if (text[k] === '\\') k++;
    else if (text[k] === o) depth++;
    else if (text[k] === c && --depth === 0) return k;
  }
  throw new Unevaluable(`an unterminated ${o}…${c}`);
}

/**
 * A word of ebuild text expanded as bash would at global scope, with the
 * ebuild's own globals and Portage's variables (plus `extra`, e.g. FILESDIR
 * as a placeholder); throws Unevaluable for anything else.
 */
export function expandWord(vars: EbuildVars, ebuild: EbuildIdentity, raw: string, extra: ReadonlyMap<string, string> = new Map()): string {
  return new Expander(vars, new Map([...portageVars(ebuild), ...extra])).expand(raw);
}

export interface SrcUriEntry {
  name: string;
  url?: string;
}

/** SRC_URI's distfiles: `url -> name`, or the URL's last path part; every conditional group included. */
export function srcUriEntries(vars: EbuildVars, ebuild: EbuildIdentity): SrcUriEntry[] {
  const own = vars.assignments.filter((a) => a.name === 'SRC_URI');
  if (own.length === 0) return [];
  const expander = new Expander(vars, portageVars(ebuild));
  let text = '';
  for (const a of own) text = a.append ? `${text} ${expander.expand(a.raw)}` : expander.expand(a.raw);
  const words = text.split(/\s+/).filter(Boolean);
  const out: SrcUriEntry[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (w === '(' || w === ')' || w.endsWith('?')) continue;
    if (w === '->') throw new Unevaluable('SRC_URI ("->" without a URL before it)');
    const renamed = words[i + 1] === '->' ? words[i + 2] : undefined;
    if (words[i + 1] === '->') {
      if (!renamed) throw new Unevaluable('SRC_URI ("->" without a name after it)');
      i += 2;
    }
    const isUrl = /^[a-z][a-z0-9+.-]*:\/\//i.test(w);
    const name = renamed ?? (isUrl ? w.replace(/[?#].*$/, '').split('/').pop() ?? '' : w);
    if (!name) throw new Unevaluable(`SRC_URI (no file name in ${w})`);
    out.push({ name, ...(isUrl ? { url: w } : {}) });
  }
  return out;
}
