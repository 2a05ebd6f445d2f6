/**
 * What an eclass's code defines, found line by line in the way Gentoo
 * eclasses are written: function definitions ("name() {"), assignments at
 * file scope, and every use of the eclass's own variable prefix. Comments,
 * here-documents and the continuation lines of multi-line strings and arrays
 * are skipped.
 */

export interface Definition {
  name: string;
  line: number;
  column: number;
}

export interface CodeFacts {
  functions: Definition[];
  /** Variables assigned outside function bodies. */
  globals: Definition[];
  /** Every variable named with the eclass prefix (ROCM_*, _ROCM_*), first use. */
  prefixed: Definition[];
  /** The include-guard variable (_FOO_ECLASS), exempt from documentation. */
  guard?: string;
}

const FUNC_RE = /^(\s*)(?:function\s+)?([A-Za-z_][A-Za-z0-9_:.+-]*)\s*\(\)\s*(\{.*)?$/;
const ASSIGN_RE = /^\s*(?:export\s+|readonly\s+|local\s+|declare\s+(?:-[a-zA-Z]+\s+)*)?([A-Za-z_][A-Za-z0-9_]*)(?:\[[^\]]*\])?\+?=/;
const GUARD_RE = /^if \[\[ -z \$\{(_[A-Z0-9_]+_ECLASS)\} \]\]; then/;
const HEREDOC_RE = /(?<!<)<<-?(?!<)\s*(['"]?)([A-Za-z_][A-Za-z0-9_]*)\1/;

/** Count the double quotes that open or close a string on this line. */
function quoteToggles(line: string): number {
  let n = 0;
  let single = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === '\\' && !single) {
      i++;
    } else if (c === "'" && n % 2 === 0) {
      single = !single;
    } else if (c === '"' && !single) {
      n++;
    } else if (c === '#' && !single && n % 2 === 0 && (i === 0 || /\s/.test(line[i - 1]!))) {
      break;
    }
  }
  return n;
}

/** The variable prefix of an eclass name: rocm.eclass -> ROCM, llvm-r2.eclass -> LLVM. */
export function prefixOf(eclassName: string): string {
  return eclassName.replace(/\.eclass$/, '').split('-')[0]!.toUpperCase().replace(/[^A-Z0-9]/g, '_');
}

export function scanCode(text: string, prefix: string): CodeFacts {
  const facts: CodeFacts = { functions: [], globals: [], prefixed: [] };
  const lines = text.split('\n');
  const prefixRe = new RegExp(`(?<![A-Za-z0-9_])(_?${prefix}_[A-Za-z0-9_]+)`, 'g');
  const seenPrefixed = new Set<string>();
  let body: string | null = null; // closing line of the function we are in
  let heredoc: string | null = null;
  let inString = false;
  let inArray = false;

  lines.forEach((raw, index) => {
    const lineNo = index + 1;
    if (heredoc !== null) {
      if (raw.replace(/^\t+/, '') === heredoc) heredoc = null;
      return;
    }
    const continuation = inString;
    const toggles = quoteToggles(raw);
    if (toggles % 2 === 1) inString = !inString;
    const trimmed = raw.trim();
    if (!continuation && trimmed.startsWith('#')) return;

    const guard = GUARD_RE.exec(raw);
    if (guard) facts.guard = guard[1]!;

    // Variables of the eclass's namespace, wherever they appear in code.
    const code = continuation ? '' : raw;
    for (const m of code.matchAll(prefixRe)) {
      const name = m[1]!;
      if (!seenPrefixed.has(name)) {
        seenPrefixed.add(name);
        facts.prefixed.push({ name, line: lineNo, column: (m.index ?? 0) + 1 });
      }
    }

    if (!continuation) {
      const fn = FUNC_RE.exec(raw);
      if (fn && !/^(if|then|else|elif|fi|do|done|case|esac|while|until|for)$/.test(fn[2]!)) {
        facts.functions.push({ name: fn[2]!, line: lineNo, column: fn[1]!.length + 1 });
        const rest = fn[3] ?? '';
        // A one-line function ("foo() { :; }") has no body to skip.
        if (!/\}\s*(#.*)?$/.test(rest)) body = `${fn[1]}}`;
      } else if (body !== null) {
        if (raw.replace(/\s+$/, '') === body) body = null;
      } else if (inArray) {
        if (/^\s*\)/.test(raw)) inArray = false;
      } else {
        const a = ASSIGN_RE.exec(raw);
        if (a && !/^\s*local\s/.test(raw)) {
          facts.globals.push({ name: a[1]!, line: lineNo, column: raw.indexOf(a[1]!) + 1 });
          if (/=\(\s*$/.test(raw) || (/=\(/.test(raw) && !/\)\s*$/.test(raw))) inArray = true;
        }
      }
    }
    const hd = continuation ? null : HEREDOC_RE.exec(raw);
    if (hd && !raw.trim().startsWith('#')) heredoc = hd[2]!;
  });
  return facts;
}
