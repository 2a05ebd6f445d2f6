import type { FileEdit } from './recipe.js';

/**
 * What an edit changes, independent of how it is written: a unified diff's
 * removed and added lines, a sed script's pattern and replacement, Spack's
 * filter_file(regex, replacement). Two edits of one file are compared by
 * their change signatures — the words and symbols the edit puts in that were
 * not there, and those it takes out — so that our fix-up written as a
 * one-line replacement and a peer's patch of the same change are seen as
 * the same edit, and our own patch (written from upstream's fix) as a
 * different one when it changes something else.
 */

/** One file's part of a unified diff, its path with the first component stripped (patch -p1, as eapply and Spack apply). */
export interface DiffFile {
  path: string;
  removes: string[];
  adds: string[];
  whole?: 'create' | 'delete';
}

/** The files of a unified (or git) diff and the lines each loses and gains; prose around the hunks is skipped. */
export function parseUnifiedDiff(text: string, strip = 1): DiffFile[] {
  const out: DiffFile[] = [];
  const lines = text.split('\n');
  let cur: DiffFile | undefined;
  let inHunk = { old: 0, new: 0 };
  const strippedPath = (p: string) => {
    let x = p.replace(/^"|"$/g, '').split('\t')[0]!.trim();
    for (let k = 0; k < strip; k++) x = x.replace(/^[^/]*\//, '');
    return x;
  };
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    if (inHunk.old > 0 || inHunk.new > 0) {
      if (l.startsWith('\\')) continue;
      const c = l[0];
      if (c === '-') {
        cur?.removes.push(l.slice(1));
        inHunk.old--;
      } else if (c === '+') {
        cur?.adds.push(l.slice(1));
        inHunk.new--;
      } else {
        inHunk.old--;
        inHunk.new--;
      }
      continue;
    }
    if (l.startsWith('--- ') && lines[i + 1]?.startsWith('+++ ')) {
      const from = l.slice(4);
      const to = lines[i + 1]!.slice(4);
      i++;
      const fromNull = /^\/dev\/null\b/.test(from);
      const toNull = /^\/dev\/null\b/.test(to);
      const path = strippedPath(toNull ? from : to);
      cur = { path, removes: [], adds: [], ...(fromNull ? { whole: 'create' as const } : toNull ? { whole: 'delete' as const } : {}) };
      out.push(cur);
      continue;
    }
    const h = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/.exec(l);
    if (h && cur) inHunk = { old: h[1] === undefined ? 1 : Number(h[1]), new: h[2] === undefined ? 1 : Number(h[2]) };
  }
  // One file patched in several sections counts once.
  const merged = new Map<string, DiffFile>();
  for (const f of out) {
    const m = merged.get(f.path);
    if (!m) merged.set(f.path, f);
    else {
      m.removes.push(...f.removes);
      m.adds.push(...f.adds);
    }
  }
  return [...merged.values()];
}

/** A regular expression's literal text, near enough for a signature: anchors, classes and quantifiers dropped, groups kept (their texts in `groups`, for \\1 …). */
export function regexLiteral(re: string, extended = false): string {
  return regexParts(re, extended).text;
}

function regexParts(re: string, extended: boolean): { text: string; groups: string[] } {
  let out = '';
  const groups: string[] = [];
  // Groups are numbered by their opening parenthesis, as sed numbers them.
  const open: { at: number; n: number }[] = [];
  const startGroup = () => open.push({ at: out.length, n: groups.push('') - 1 });
  const endGroup = () => {
    const g = open.pop();
    if (g) groups[g.n] = out.slice(g.at);
  };
  for (let i = 0; i < re.length; i++) {
    const c = re[i]!;
    if (c === '\\') {
      const n = re[i + 1];
      i++;
      if (n === undefined) break;
      if (/[0-9]/.test(n)) continue;
      if (!extended && n === '(') startGroup();
      else if (!extended && n === ')') endGroup();
      else if (!extended && '{}+?|'.includes(n)) continue;
      else out += n === 'n' ? '\n' : n === 't' ? '\t' : /[swdbBSWD<>]/.test(n) ? ' ' : n;
    } else if (c === '[') {
      const end = re.indexOf(']', i + 2);
      if (end < 0) out += c;
      else i = end;
      out += ' ';
    } else if ((c === '^' && (i === 0 || (!extended && re.slice(i - 2, i) === '\\(') || (extended && re[i - 1] === '('))) || (c === '$' && (i === re.length - 1 || (!extended && re.slice(i + 1, i + 3) === '\\)') || (extended && re[i + 1] === ')')))) {
      // Anchors only where sed reads them as anchors; elsewhere ^ and $ are themselves.
      out += ' ';
    } else if (c === '.' && (re[i + 1] === '*' || re[i + 1] === '+' || re[i + 1] === '?')) {
      i++;
      out += ' ';
    } else if (c === '*' || (extended && '+?'.includes(c))) {
      // a quantifier on what came before
    } else if (extended && c === '(') startGroup();
    else if (extended && c === ')') endGroup();
    else if (extended && '{}|'.includes(c)) {
      out += ' ';
    } else out += c;
  }
  return { text: out, groups };
}

/** A sed replacement's text: & stands for what matched, \\N for the Nth group, escapes decoded. */
function replacementText(rep: string, matched: string, groups: readonly string[] = []): string {
  let out = '';
  for (let i = 0; i < rep.length; i++) {
    const c = rep[i]!;
    if (c === '\\') {
      const n = rep[++i];
      if (n === undefined) break;
      if (/[1-9]/.test(n)) out += groups[Number(n) - 1] ?? '';
      else if (n === '0') out += matched;
      else out += n === 'n' ? '\n' : n === 't' ? '\t' : n;
    } else if (c === '&') out += matched;
    else out += c;
  }
  return out;
}

/** Reads a delimited part of a sed command (`/…/`, `|…|`) starting after the delimiter; returns the part and the index after its closing delimiter. */
function delimited(s: string, i: number, d: string): { text: string; next: number } | undefined {
  let text = '';
  while (i < s.length) {
    const c = s[i]!;
    if (c === '\\' && i + 1 < s.length) {
      // An escaped delimiter is the delimiter's character itself.
      text += s[i + 1] === d ? d : c + s[i + 1];
      i += 2;
      continue;
    }
    if (c === d) return { text, next: i + 1 };
    if (c === '\n' && d !== '\n') return undefined;
    text += c;
    i++;
  }
  return undefined;
}

export interface SedEdit {
  removes: string[];
  adds: string[];
  /** Commands whose effect the signature cannot say (y, numbered deletions, N, …). */
  opaque: string[];
}

/**
 * GNU sed joins its -e scripts with newlines, so a script ending in a
 * backslash goes on in the next: `-e '/re/a\' -e 'text'` is one `a` and its text.
 */
function joinContinued(scripts: readonly string[]): string[] {
  const joined: string[] = [];
  for (const script of scripts) {
    const prev = joined.at(-1);
    if (prev !== undefined && /(^|[^\\])(\\\\)*\\$/.test(prev)) joined[joined.length - 1] = `${prev}\n${script}`;
    else joined.push(script);
  }
  return joined;
}

/**
 * A sed script's change: `s/pat/rep/` takes out the pattern's literal text
 * and puts in the replacement; `/re/d` takes out the address's text; `a`, `i`
 * and `c` put in their text. Addresses select lines; they change nothing.
 */
export function sedEdit(scripts: readonly string[], extended = false): SedEdit {
  const edit: SedEdit = { removes: [], adds: [], opaque: [] };
  for (const script of joinContinued(scripts)) {
    let i = 0;
    const s = script;
    while (i < s.length) {
      while (i < s.length && /[\s;{}!]/.test(s[i]!)) i++;
      if (i >= s.length) break;
      // Addresses: /re/, \cREc, numbers, $, and a second one after a comma.
      let address = '';
      for (let k = 0; k < 2; k++) {
        if (s[i] === '/' || s[i] === '\\') {
          const d = s[i] === '/' ? '/' : s[i + 1]!;
          const r = delimited(s, i + (s[i] === '/' ? 1 : 2), d);
          if (!r) {
            edit.opaque.push(s.slice(i));
            i = s.length;
            break;
          }
          address += ` ${r.text}`;
          i = r.next;
          if (s[i] === 'I' || s[i] === 'M') i++;
        } else if (/[0-9$]/.test(s[i] ?? '')) {
          const m = /^(\d+(~\d+)?|\$)/.exec(s.slice(i))!;
          address += ` <line ${m[0]}>`;
          i += m[0].length;
        }
        if (s[i] === ',' && k === 0) {
          i++;
          if (s[i] === '+' || s[i] === '~') {
            const m = /^[+~]\d+/.exec(s.slice(i));
            if (m) {
              address += ` <${m[0]} lines>`;
              i += m[0].length;
              break;
            }
          }
          continue;
        }
        break;
      }
      while (i < s.length && /[\s!]/.test(s[i]!)) i++;
      const cmd = s[i];
      if (cmd === undefined) break;
      if (cmd === '{' || cmd === '}' || cmd === ';') {
        i++;
        continue;
      }
      if (cmd === '#') {
        // A comment, to the end of its line.
        const nl = s.indexOf('\n', i);
        i = nl < 0 ? s.length : nl + 1;
        continue;
      }
      if (cmd === 's') {
        const d = s[i + 1]!;
        const pat = delimited(s, i + 2, d);
        const rep = pat && delimited(s, pat.next, d);
        if (!pat || !rep) {
          edit.opaque.push(s.slice(i));
          break;
        }
        const parts = regexParts(pat.text, extended);
        edit.removes.push(parts.text);
        edit.adds.push(replacementText(rep.text, parts.text, parts.groups));
        i = rep.next;
        while (i < s.length && /[gpiImMe0-9]/.test(s[i]!)) i++;
        continue;
      }
      if (cmd === 'd' || cmd === 'D') {
        if (address.trim() && !/^ <line/.test(address)) edit.removes.push(regexLiteral(address.trim(), extended));
        else edit.opaque.push(`${address.trim()}${cmd}`);
        i++;
        continue;
      }
      if (cmd === 'a' || cmd === 'i' || cmd === 'c') {
        // `a\` then the text (kept as written, on the same line as GNU allows or the next), or GNU's one-liner `a text` (leading blanks dropped).
        const rest = s.slice(i + 1);
        const text = rest.startsWith('\\') ? rest.slice(1).replace(/^\n/, '') : rest.replace(/^[ \t]+/, '');
        const nl = text.search(/(?<!\\)\n/);
        const body = nl >= 0 ? text.slice(0, nl) : text;
        edit.adds.push(body.replace(/\\\n/g, '\n').replace(/\\(.)/g, '$1'));
        if (cmd === 'c' && address.trim()) edit.removes.push(regexLiteral(address.trim(), extended));
        i = nl >= 0 ? s.length - text.length + nl : s.length;
        continue;
      }
      if (cmd === 'y') {
        edit.opaque.push(s.slice(i));
        break;
      }
      // p, q, n, N, h, g, x, …: change no text by themselves, or nothing the signature can say.
      if (!/[pPqQnNhHgGxzl=]/.test(cmd)) edit.opaque.push(cmd);
      i++;
    }
  }
  return edit;
}

/** Words and symbols: "add_subdirectory(foo)" → add_subdirectory ( foo ). */
export function tokens(text: string): string[] {
  return text.match(/[A-Za-z0-9_]+|[^\sA-Za-z0-9_]/g) ?? [];
}

export interface Signature {
  /** Tokens the edit puts in that it did not take out, with counts. */
  added: Map<string, number>;
  /** Tokens it takes out that it does not put back. */
  removed: Map<string, number>;
}

function count(texts: readonly string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const t of texts) for (const k of tokens(t)) m.set(k, (m.get(k) ?? 0) + 1);
  return m;
}

function minus(a: Map<string, number>, b: Map<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [k, n] of a) {
    const d = n - (b.get(k) ?? 0);
    if (d > 0) out.set(k, d);
  }
  return out;
}

/** The change signature of several edits of one file together. */
export function signature(edits: readonly Pick<FileEdit, 'removes' | 'adds'>[]): Signature {
  const removes = count(edits.flatMap((e) => e.removes));
  const adds = count(edits.flatMap((e) => e.adds));
  return { added: minus(adds, removes), removed: minus(removes, adds) };
}

function within(a: Map<string, number>, b: Map<string, number>): boolean {
  for (const [k, n] of a) if ((b.get(k) ?? 0) < n) return false;
  return true;
}

export const emptySignature = (s: Signature) => s.added.size === 0 && s.removed.size === 0;

/**
 * Our edits of a file make the peer's change when what the peer puts in and
 * takes out is all among what ours does (ours may do more to the file). A
 * peer edit that changes no token (whitespace) is made by any edit of ours
 * that also changes only whitespace, or by none.
 */
export function carries(ours: Signature, peer: Signature): boolean {
  if (emptySignature(peer)) return emptySignature(ours);
  return within(peer.added, ours.added) && within(peer.removed, ours.removed);
}

/** "+INSTALL_HIPCC +AND −…" — a short account of a signature for people. */
export function describeSignature(s: Signature, max = 8): string {
  const part = (m: Map<string, number>, sign: string) => [...m.keys()].filter((k) => /\w/.test(k)).map((k) => `${sign}${k}`);
  const all = [...part(s.added, '+'), ...part(s.removed, '−')];
  if (all.length === 0) {
    const sym = [...part(s.added, '+'), ...part(s.removed, '−')];
    const any = [...s.added.keys()].map((k) => `+${k}`).concat([...s.removed.keys()].map((k) => `−${k}`));
    return (sym.length ? sym : any).slice(0, max).join(' ') || 'no change';
  }
  return all.slice(0, max).join(' ') + (all.length > max ? ' …' : '');
}
