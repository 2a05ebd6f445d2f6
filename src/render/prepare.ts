import type { InsertSpec, PrepareOp } from '../manifest/types.js';
import { bashWord, expandingText, expands, fileText, inDoubleQuotes, literalInDoubleQuotes, singleQuoted, unescapedDollars } from '../model/bash-value.js';

/** `use flag` or `! use flag` for a USE condition as the manifest writes it. */
export function useTest(cond: string): string {
  return cond.startsWith('!') ? `! use ${cond.slice(1)}` : `use ${cond}`;
}

/** A command with its arguments and `|| die`, continued one argument a line past 80 columns. */
export function wrapCommand(command: string, args: string[], indent = '\t'): string[] {
  const oneLine = `${indent}${command} ${args.join(' ')} || die`;
  if (oneLine.length + 3 <= 80) return [oneLine];
  return [`${indent}${command} \\`, ...args.map((a, i) => `${indent}\t${a}${i === args.length - 1 ? ' || die' : ' \\'}`)];
}

/**
 * The sed script of a literal replacement, quoted for bash. `from` is any
 * text: escaped for a basic regular expression, then for the shell. `to` may
 * hold ${VAR} and $(helper) (checked by the manifest validation), which need
 * double quotes, and `\$` for a literal dollar sign, which bash resolves
 * there; otherwise single quotes keep everything literal. `first` changes
 * only the first match of each file (GNU sed's `0,/re/` range; sed -i reads
 * each file on its own).
 */
export function sedReplace(from: string, to: string, options: { first?: boolean } = {}): string {
  const expanding = expands(to);
  // A replacement that expands is a checked value (model/bash-value.ts); its
  // pieces below are substrings of it plus sed's own &, \& and \1.
  if (expanding) expandingText(to, { quotesEscaped: true, dollarEscapes: true });
  const script = (regex: string, replacement: string) =>
    options.first ? `0,\\|${regex}|s||${replacement}|` : `s|${regex}|${replacement}|g`;
  const quote = ([regex, replacement]: [string, string]) => {
    if (!expanding) return singleQuoted(script(regex, replacement));
    return `"${script(inDoubleQuotes(regex), replacement.replace(/"/g, '\\"'))}"`;
  };
  // The plain form reads best; when it does not fit a line ("sed -i -e … \"
  // within 120 columns, pkgcheck's ExcessiveLineLength), the shortest that does.
  // An expanding `to` with `\$` escapes keeps the plain form: the shortcuts
  // below compare `to` with `from` character by character, and an escape
  // must never be split from its dollar sign.
  const fits = (s: string) => s.length <= 107;
  const forms = expanding && to.includes('\\$') ? [[sedRegex(from), amp(to)] as [string, string]] : sedScripts(from, expanding ? to : unescapedDollars(to));
  const [plain, ...shorter] = forms.map(quote);
  if (fits(plain!)) return plain!;
  const best = shorter.reduce<string | undefined>((a, b) => (a === undefined || b.length < a.length ? b : a), undefined);
  return best !== undefined && fits(best) ? best : plain!;
}

function sedRegex(text: string): string {
  return text.replace(/[\\.[\]*^$]/g, (m) => `\\${m}`);
}

const amp = (t: string) => t.replace(/&/g, '\\&');

/**
 * s|from|to|g as [regex, replacement], first the plain form, then shorter
 * ones: text kept around an insertion written as "&" (the whole match), and
 * a shared beginning and end as \1 and \2, so long anchors are not written
 * twice. Never splits a ${VAR} or $(helper) of `to`, nor a word.
 */
function sedScripts(from: string, to: string): [string, string][] {
  const out: [string, string][] = [[sedRegex(from), amp(to)]];
  if (!from) return out;
  const at = to.indexOf(from);
  if (at >= 0 && to.indexOf(from, at + 1) < 0) out.push([sedRegex(from), `${amp(to.slice(0, at))}&${amp(to.slice(at + from.length))}`]);
  let p = 0;
  while (p < from.length && p < to.length && from[p] === to[p]) p++;
  let q = 0;
  while (q < from.length - p && q < to.length - p && from[from.length - 1 - q] === to[to.length - 1 - q]) q++;
  // Split between words only, so each part still reads as code.
  const word = (c: string | undefined) => c !== undefined && /\w/.test(c);
  while (p > 0 && word(from[p - 1]) && word(from[p])) p--;
  while (q > 0 && word(from[from.length - q - 1]) && word(from[from.length - q])) q--;
  const [pre, suf] = [from.slice(0, p), from.slice(from.length - q)];
  const middle = to.slice(p, to.length - q);
  if (pre.length + suf.length > 8 && !pre.includes('$') && !suf.includes('$') && !middle.endsWith('$')) {
    const g = (t: string) => (t ? `\\(${sedRegex(t)}\\)` : '');
    const refs = pre && suf ? ['\\1', '\\2'] : pre ? ['\\1', ''] : ['', '\\1'];
    out.push([`${g(pre)}${sedRegex(from.slice(p, from.length - q))}${g(suf)}`, `${refs[0]}${amp(middle)}${refs[1]}`]);
  }
  return out;
}


/**
 * The sed scripts (one word each, quoted) that insert `lines` after or before
 * each line matching a basic regular expression, or the first one only:
 * GNU sed's `a\` / `i\` with the text continued over one -e per line. The
 * lines are written like `to`: ${VAR} and $(helper …) expand, `\$` is a
 * dollar sign; GNU sed keeps their leading white space.
 */
export function sedInsert(spec: InsertSpec): string[] {
  const [command, re] = spec.after !== undefined ? ['a', spec.after] : ['i', spec.before!];
  // sed's usual /re/, or \|re| for a regular expression holding a slash.
  const address = re.includes('/') ? `\\|${re}|` : `/${re}/`;
  const text = spec.lines.map((l, i) => fileText(l, i < spec.lines.length - 1 ? '\\' : ''));
  const open = `"${literalInDoubleQuotes(`${address}${command}\\`)}"`;
  if (!spec.first) return [open, ...text];
  return [singleQuoted(`0,${address}{`), open, ...text, singleQuoted('}')];
}

/** `sed -i` with its scripts as -e words, and its files; wrapped when long. */
function sedCommand(scripts: string[], files: string[], indent: string): string[] {
  const args = scripts.map((s) => `-e ${s}`);
  const oneLine = `${indent}sed -i ${args.join(' ')} ${files.join(' ')} || die`;
  if (scripts.length === 1) return wrapCommand(`sed -i ${args[0]}`, files, indent);
  if (oneLine.length + 3 <= 80) return [oneLine];
  const rest = [...args.slice(1), ...files];
  return [`${indent}sed -i ${args[0]} \\`, ...rest.map((a, i) => `${indent}\t${a}${i === rest.length - 1 ? ' || die' : ' \\'}`)];
}

/**
 * One file operation on its files. With `skip_missing`, each file is
 * tested first (a file that may be absent, e.g. removed in some releases);
 * otherwise sed -i dies on a missing file, so an upstream move is noticed.
 */
function onFiles(scripts: string[], files: string[], skipMissing: boolean | undefined): string[] {
  const words = files.map(bashWord);
  if (!skipMissing) return sedCommand(scripts, words, '\t');
  return words.flatMap((f) => [`\tif [[ -e ${f} ]]; then`, ...sedCommand(scripts, [f], '\t\t'), '\tfi']);
}

/** The bash lines of one prepare operation (tab-indented, as in src_prepare), its reason as a comment above. */
export function prepareOpLines(op: PrepareOp): string[] {
  const lines: string[] = [];
  if (op.reason) lines.push(`\t# ${op.reason}`);
  if ('replace' in op) {
    const r = op.replace;
    lines.push(...onFiles([sedReplace(r.from, r.to, { first: r.first ?? false })], r.files, r.skip_missing));
  } else if ('delete_lines' in op) {
    lines.push(...onFiles([singleQuoted(`\\|${op.delete_lines.matching}|d`)], op.delete_lines.files, op.delete_lines.skip_missing));
  } else if ('insert' in op) {
    lines.push(...onFiles(sedInsert(op.insert), op.insert.files, op.insert.skip_missing));
  } else {
    lines.push(...wrapCommand('rm -r', op.remove.map(bashWord)));
  }
  return lines;
}

/** src_prepare's fix-ups, one block each; consecutive fix-ups under one USE flag share one if block. */
export function prepareBlocks(ops: readonly PrepareOp[] | undefined): string[][] {
  const prepare: string[][] = [];
  const prepareWhen: (string | undefined)[] = [];
  for (const op of ops ?? []) {
    const lines = prepareOpLines(op);
    if (op.when) {
      const previous = prepare[prepare.length - 1];
      const same = previous && prepareWhen[prepareWhen.length - 1] === op.when;
      const inner = lines.map((l) => `\t${l}`);
      if (same) previous.splice(previous.length - 1, 0, ...inner);
      else prepare.push([`\tif ${useTest(op.when)}; then`, ...inner, '\tfi']);
      if (!same) prepareWhen.push(op.when);
      continue;
    }
    prepare.push(lines);
    prepareWhen.push(undefined);
  }
  return prepare;
}
