/**
 * A reader for the CMake language (cmake-language(7)): command invocations
 * with their arguments, as CMake itself tokenizes them. Not an interpreter:
 * control flow is not followed, which is what a reviewer skimming build files
 * wants anyway (every find_package, whichever branch it sits in).
 *
 * Handled as CMake does: commands spanning lines, line comments, bracket
 * comments (`#[[ … ]]`, `#[==[ … ]==]`), quoted arguments with escape
 * sequences and line continuations, bracket arguments (verbatim, first newline
 * dropped), unquoted arguments with escapes, legacy `a"b c"d` unquoted
 * arguments, and nested parentheses.
 */

export type ArgumentKind = 'quoted' | 'unquoted' | 'bracket';

export interface CMakeArgument {
  /** The text after escape processing; variable references are left for the reader. */
  value: string;
  kind: ArgumentKind;
  line: number;
}

export interface CMakeCommand {
  /** Lower-cased: CMake command names are case-insensitive. */
  name: string;
  args: CMakeArgument[];
  line: number;
}

export interface CMakeParse {
  commands: CMakeCommand[];
  /** Syntax CMake would reject; reading stops at the first one. */
  errors: { line: number; message: string }[];
}

const isSpace = (c: string) => c === ' ' || c === '\t' || c === '\r';
const isIdentStart = (c: string) => /[A-Za-z_]/.test(c);
const isIdent = (c: string) => /[A-Za-z0-9_]/.test(c);

class Scanner {
  i = 0;
  line = 1;
  constructor(readonly text: string) {}

  get done(): boolean {
    return this.i >= this.text.length;
  }
  peek(offset = 0): string {
    return this.text[this.i + offset] ?? '';
  }
  next(): string {
    const c = this.text[this.i++] ?? '';
    if (c === '\n') this.line++;
    return c;
  }
  /** `[` `=`* `[` at the cursor: the number of `=`, or -1. */
  bracketOpen(at = this.i): number {
    if (this.text[at] !== '[') return -1;
    let j = at + 1;
    while (this.text[j] === '=') j++;
    return this.text[j] === '[' ? j - at - 1 : -1;
  }
  /** Reads a bracket construct whose opening has `level` `=`; returns its content or undefined when unclosed. */
  bracket(level: number): string | undefined {
    this.i += level + 2;
    const close = `]${'='.repeat(level)}]`;
    const end = this.text.indexOf(close, this.i);
    if (end < 0) return undefined;
    let content = this.text.slice(this.i, end);
    for (const ch of content) if (ch === '\n') this.line++;
    this.i = end + close.length;
    if (content.startsWith('\r\n')) content = content.slice(2);
    else if (content.startsWith('\n')) content = content.slice(1);
    return content;
  }
  skipLineComment(): void {
    while (!this.done && this.peek() !== '\n') this.i++;
  }
}

/** Escape sequences as CMake resolves them; `\;` stays escaped so list splitting can honour it. */
function escape(c: string): string {
  if (c === 't') return '\t';
  if (c === 'n') return '\n';
  if (c === 'r') return '\r';
  if (c === ';') return '\\;';
  return c;
}

/**
 * Skips a comment at `#`: a bracket comment (`#[[…]]`) or the rest of the line.
 * Returns the line an unterminated bracket comment started on.
 */
function skipComment(s: Scanner): number | undefined {
  const level = s.bracketOpen(s.i + 1);
  if (level < 0) {
    s.skipLineComment();
    return undefined;
  }
  const start = s.line;
  s.i++;
  return s.bracket(level) === undefined ? start : undefined;
}

/** A quoted argument's value, read after its opening quote; undefined when it is not closed. */
function quotedArgument(s: Scanner): string | undefined {
  let value = '';
  let closed = false;
  while (!s.done) {
    const q = s.next();
    if (q === '"') {
      closed = true;
      break;
    }
    if (q === '\\') {
      const e = s.next();
      if (e === '\n') continue; // line continuation
      if (e === '\r' && s.peek() === '\n') {
        s.next();
        continue;
      }
      value += escape(e);
    } else {
      value += q;
    }
  }
  return closed ? value : undefined;
}

/** An unquoted argument's value, up to a blank, a parenthesis or a comment. */
function unquotedArgument(s: Scanner): string {
  let value = '';
  while (!s.done) {
    const u = s.peek();
    if (isSpace(u) || u === '\n' || u === '(' || u === ')' || u === '#') break;
    if (u === '\\') {
      s.next();
      value += escape(s.next());
    } else if (u === '"') {
      // Legacy unquoted argument: -DFOO="a b" is one argument, quotes kept.
      value += s.next();
      while (!s.done && s.peek() !== '"') {
        if (s.peek() === '\\') value += s.next();
        value += s.next();
      }
      if (!s.done) value += s.next();
    } else {
      value += s.next();
    }
  }
  return value;
}

export function parseCMake(text: string): CMakeParse {
  const s = new Scanner(text);
  const commands: CMakeCommand[] = [];
  const errors: CMakeParse['errors'] = [];
  const fail = (message: string, line = s.line): CMakeParse => {
    errors.push({ line, message });
    return { commands, errors };
  };

  while (!s.done) {
    const c = s.peek();
    if (isSpace(c) || c === '\n') {
      s.next();
      continue;
    }
    if (c === '#') {
      const unterminated = skipComment(s);
      if (unterminated !== undefined) return fail('unterminated bracket comment', unterminated);
      continue;
    }
    if (!isIdentStart(c)) return fail(`unexpected ${JSON.stringify(c)} outside a command`);
    const line = s.line;
    let name = '';
    while (isIdent(s.peek())) name += s.next();
    while (isSpace(s.peek())) s.next();
    if (s.peek() !== '(') return fail(`expected "(" after ${name}`);
    s.next();
    const args: CMakeArgument[] = [];
    let depth = 0;
    for (;;) {
      if (s.done) return fail(`unterminated ${name}( started here`, line);
      const ch = s.peek();
      if (isSpace(ch) || ch === '\n') {
        s.next();
      } else if (ch === '#') {
        const unterminated = skipComment(s);
        if (unterminated !== undefined) return fail('unterminated bracket comment', unterminated);
      } else if (ch === '(') {
        depth++;
        s.next();
      } else if (ch === ')') {
        s.next();
        if (depth === 0) break;
        depth--;
      } else if (ch === '"') {
        const start = s.line;
        s.next();
        const value = quotedArgument(s);
        if (value === undefined) return fail('unterminated quoted argument', start);
        args.push({ value, kind: 'quoted', line: start });
      } else if (s.bracketOpen() >= 0) {
        const start = s.line;
        const content = s.bracket(s.bracketOpen());
        if (content === undefined) return fail('unterminated bracket argument', start);
        args.push({ value: content, kind: 'bracket', line: start });
      } else {
        const start = s.line;
        const value = unquotedArgument(s);
        args.push({ value, kind: 'unquoted', line: start });
      }
    }
    commands.push({ name: name.toLowerCase(), args, line });
  }
  return { commands, errors };
}

/**
 * `${NAME}` references replaced from `vars`, innermost first as CMake does
 * (`${${prefix}_VERSION}`); unknown variables and `$ENV{…}` stay as written.
 */
export function expandVariables(value: string, vars: ReadonlyMap<string, string>): string {
  let out = '';
  let i = 0;
  while (i < value.length) {
    if (value[i] === '$' && value[i + 1] === '{') {
      const parsed = readReference(value, i + 2, vars);
      if (parsed) {
        out += parsed.text;
        i = parsed.end;
        continue;
      }
    }
    out += value[i++];
  }
  return out;
}

function readReference(value: string, start: number, vars: ReadonlyMap<string, string>): { text: string; end: number } | undefined {
  let name = '';
  let i = start;
  while (i < value.length && value[i] !== '}') {
    if (value[i] === '$' && value[i + 1] === '{') {
      const inner = readReference(value, i + 2, vars);
      if (!inner) return undefined;
      name += inner.text;
      i = inner.end;
      continue;
    }
    name += value[i++];
  }
  if (i >= value.length) return undefined;
  const known = vars.get(name);
  return { text: known ?? `\${${name}}`, end: i + 1 };
}

/** An unquoted argument's value as a list: split on unescaped `;`, empty elements dropped. */
export function splitList(value: string): string[] {
  const parts: string[] = [];
  let cur = '';
  for (let i = 0; i < value.length; i++) {
    if (value[i] === '\\' && value[i + 1] === ';') {
      cur += ';';
      i++;
    } else if (value[i] === ';') {
      parts.push(cur);
      cur = '';
    } else {
      cur += value[i];
    }
  }
  parts.push(cur);
  return parts.filter((p) => p !== '');
}

/**
 * A command's arguments as CMake would pass them after expansion: unquoted
 * arguments split into list elements, quoted and bracket ones kept whole.
 */
export function evaluateArgs(args: CMakeArgument[], vars: ReadonlyMap<string, string>): string[] {
  const out: string[] = [];
  for (const a of args) {
    if (a.kind === 'bracket') out.push(a.value);
    else if (a.kind === 'quoted') out.push(expandVariables(a.value, vars).replace(/\\;/g, ';'));
    else out.push(...splitList(expandVariables(a.value, vars)));
  }
  return out;
}
