import { readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';

/**
 * make.conf as Portage reads it (its getconfig: a shell-like lexer, not a
 * shell): `NAME=value` and `export NAME=value` lines, values unquoted,
 * "double-quoted" (with $NAME and ${NAME} expanded, backslash escapes) or
 * 'single-quoted' (literal), spanning lines inside quotes, `#` comments,
 * backslash-newline continuations, and `source FILE` lines (a relative FILE
 * is taken from the directory of the file naming it). make.conf may also be a
 * directory: its files in name order, hidden and backup (~) files skipped.
 *
 * Nothing is ever run: a command substitution ($(…) or `…`), arithmetic, or
 * an expansion with an operator (${X:-y}) is an error naming file:line:column,
 * since Portage would not run them either, and guessing a value could send a
 * bump's downloads somewhere unexpected. Files are read only when regular and
 * under 1 MiB, `source` nests at most 16 deep and never in a cycle.
 */

export interface MakeConfValue {
  value: string;
  /** file:line where it was set. */
  where: string;
}

export class MakeConfError extends UserError {
  constructor(where: string, what: string) {
    super(
      `${where}: ${what}\nhint: make.conf is read, not run; fix the line, or set the variable in the environment (which wins over make.conf)`,
      ExitCode.invalidInput,
    );
    this.name = 'MakeConfError';
  }
}

const MAX_BYTES = 1024 * 1024;
const MAX_DEPTH = 16;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface ReadOptions {
  /** Variables ${NAME} may refer to that make.conf itself does not set (the environment). */
  outer?: ReadonlyMap<string, string>;
}

/** Read make.conf (a file or a directory) into its variables; an absent path is an empty configuration. */
export function readMakeConf(file: string, options: ReadOptions = {}): Map<string, MakeConfValue> {
  const vars = new Map<string, MakeConfValue>();
  readPath(file, vars, options.outer ?? new Map(), [], true);
  return vars;
}

function readPath(file: string, vars: Map<string, MakeConfValue>, outer: ReadonlyMap<string, string>, stack: string[], top: boolean): void {
  let st;
  try {
    st = statSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (top && (code === 'ENOENT' || code === 'ENOTDIR')) return;
    throw new MakeConfError(stack.at(-1) ?? file, `cannot read ${file}: ${(err as Error).message}`);
  }
  if (st.isDirectory()) {
    for (const name of readdirSync(file).sort()) {
      if (name.startsWith('.') || name.endsWith('~')) continue;
      const child = path.join(file, name);
      // Only regular files are read, as Portage reads the directory: a subdirectory, a link
      // to nothing (ENOENT) or a link loop (ELOOP) is not a file of settings and is passed over.
      let isFile: boolean;
      try {
        isFile = statSync(child).isFile();
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOENT' || code === 'ELOOP' || code === 'ENOTDIR') continue;
        throw new MakeConfError(file, `cannot read ${child}: ${(err as Error).message}`);
      }
      if (isFile) readPath(child, vars, outer, stack, false);
    }
    return;
  }
  if (!st.isFile()) throw new MakeConfError(stack.at(-1) ?? file, `${file} is not a regular file`);
  if (st.size > MAX_BYTES) throw new MakeConfError(file, `is ${st.size} bytes; a make.conf of over 1 MiB is not read`);
  const real = realpathSync(file);
  if (stack.includes(real)) throw new MakeConfError(stack.at(-1)!, `source ${file} is already being read (a cycle: ${[...stack, real].join(' → ')})`);
  if (stack.length >= MAX_DEPTH) throw new MakeConfError(stack.at(-1)!, `source nests over ${MAX_DEPTH} files deep`);
  const text = readFileSync(file, 'utf8');
  if (text.includes('\u0000')) throw new MakeConfError(file, 'holds a NUL byte: not a text file');
  parse(text, file, vars, outer, (source) => readPath(path.resolve(path.dirname(file), source), vars, outer, [...stack, real], false));
}

/**
 * A cursor over one file's text, with the line and column each error names, and the
 * shell words and $ expansions of make.conf read from it.
 */
class Cursor {
  i = 0;
  line = 1;
  col = 1;

  constructor(
    readonly text: string,
    readonly file: string,
    private readonly lookup: (name: string) => string,
  ) {}

  at(): string {
    return `${this.file}:${this.line}:${this.col}`;
  }

  get done(): boolean {
    return this.i >= this.text.length;
  }

  /** The character under the cursor (undefined at the end). */
  peek(): string | undefined {
    return this.text[this.i];
  }

  advance(): void {
    if (this.text[this.i] === '\n') {
      this.line++;
      this.col = 1;
    } else this.col++;
    this.i++;
  }

  /** Blanks and backslash-newline continuations. */
  blanks(): void {
    const text = this.text;
    while (this.i < text.length && (text[this.i] === ' ' || text[this.i] === '\t' || (text[this.i] === '\\' && text[this.i + 1] === '\n'))) {
      if (text[this.i] === '\\') this.advance();
      this.advance();
    }
  }

  /** A $ expansion starting at the cursor's '$'; returns the value, leaves the cursor after it. */
  dollar(): string {
    const where = this.at();
    this.advance();
    const c = this.peek();
    if (c === '{') {
      this.advance();
      let name = '';
      while (!this.done && this.peek() !== '}') {
        name += this.peek();
        this.advance();
      }
      if (this.done) throw new MakeConfError(where, 'unterminated ${');
      this.advance();
      if (!NAME.test(name)) throw new MakeConfError(where, `\${${name}} is not a plain variable reference; only \${NAME} and $NAME are expanded`);
      return this.lookup(name);
    }
    if (c === '(') throw new MakeConfError(where, 'a command substitution $(…) is not run');
    if (c !== undefined && /[A-Za-z_]/.test(c)) {
      let name = '';
      while (!this.done && /[A-Za-z0-9_]/.test(this.peek()!)) {
        name += this.peek();
        this.advance();
      }
      return this.lookup(name);
    }
    // A lone $ is itself, as in Portage.
    return '$';
  }

  /** One shell word from the cursor: unquoted, "…" and '…' parts, until a blank, newline, ; or end. */
  word(): string {
    let out = '';
    while (!this.done) {
      const c = this.peek()!;
      if (c === ' ' || c === '\t' || c === '\n' || c === ';') break;
      if (c === '`') throw new MakeConfError(this.at(), 'a command substitution `…` is not run');
      if (c === '\\') {
        this.advance();
        if (this.peek() === '\n') {
          this.advance();
          continue;
        }
        if (!this.done) {
          out += this.peek();
          this.advance();
        }
        continue;
      }
      if (c === "'") {
        out += this.singleQuoted();
        continue;
      }
      if (c === '"') {
        out += this.doubleQuoted();
        continue;
      }
      if (c === '$' && (this.text[this.i + 1] === "'" || this.text[this.i + 1] === '"')) {
        // bash's $'…' (C escapes) and $"…" (translation): not make.conf syntax. Read as Portage's lexer
        // reads them, $'\x2ftmp' would be the relative path $\x2ftmp, never /tmp: refused, not guessed.
        const q = this.text[this.i + 1];
        throw new MakeConfError(this.at(), `$${q}…${q} is bash quoting make.conf does not have (Portage would not read it as bash does); write the value plainly, in '…' or "…"`);
      }
      if (c === '$') {
        out += this.dollar();
        continue;
      }
      if (c === '(' || c === ')' || c === '|' || c === '&' || c === '<' || c === '>') {
        throw new MakeConfError(this.at(), `"${c}" is shell syntax make.conf does not have`);
      }
      out += c;
      this.advance();
    }
    return out;
  }

  /** '…' from the opening quote under the cursor: literal. */
  private singleQuoted(): string {
    const where = this.at();
    let out = '';
    this.advance();
    while (!this.done && this.peek() !== "'") {
      out += this.peek();
      this.advance();
    }
    if (this.done) throw new MakeConfError(where, "unterminated ' quote");
    this.advance();
    return out;
  }

  /** "…" from the opening quote under the cursor: $ expanded, backslash escapes as the shell's. */
  private doubleQuoted(): string {
    const where = this.at();
    let out = '';
    this.advance();
    while (!this.done && this.peek() !== '"') {
      const d = this.peek()!;
      if (d === '`') throw new MakeConfError(this.at(), 'a command substitution `…` is not run');
      if (d === '\\') {
        this.advance();
        const e = this.peek();
        if (e === '\n') this.advance();
        else if (e === '$' || e === '`' || e === '"' || e === '\\') {
          out += e;
          this.advance();
        } else out += '\\';
        continue;
      }
      if (d === '$') {
        out += this.dollar();
        continue;
      }
      out += d;
      this.advance();
    }
    if (this.done) throw new MakeConfError(where, 'unterminated " quote');
    this.advance();
    return out;
  }
}

/** Parse one file's text; `source` lines call `include` with the expanded path. */
export function parse(
  text: string,
  file: string,
  vars: Map<string, MakeConfValue>,
  outer: ReadonlyMap<string, string>,
  include: (file: string) => void,
): void {
  const cur = new Cursor(text, file, (name) => vars.get(name)?.value ?? outer.get(name) ?? '');
  while (!cur.done) {
    cur.blanks();
    if (cur.done) break;
    const c = cur.peek()!;
    if (c === '\n' || c === ';') {
      cur.advance();
      continue;
    }
    if (c === '#') {
      while (!cur.done && cur.peek() !== '\n') cur.advance();
      continue;
    }
    const start = { line: cur.line, col: cur.col, i: cur.i };
    // The statement's first word: NAME=…, export, or source.
    let head = '';
    while (!cur.done && /[A-Za-z0-9_]/.test(cur.peek()!)) {
      head += cur.peek();
      cur.advance();
    }
    if (head && cur.peek() === '=' && NAME.test(head)) {
      cur.advance();
      const value = cur.word();
      vars.set(head, { value, where: `${file}:${start.line}` });
    } else if ((head === 'export' || head === 'source') && (cur.peek() === ' ' || cur.peek() === '\t')) {
      cur.blanks();
      if (head === 'source') {
        const where = `${file}:${start.line}:${start.col}`;
        const target = cur.word();
        if (!target) throw new MakeConfError(where, 'source without a file');
        include(target);
      } else {
        // `export NAME=value`: the same as the assignment for Portage.
        continue;
      }
    } else {
      cur.line = start.line;
      cur.col = start.col;
      throw new MakeConfError(cur.at(), `expected NAME=value, export or source, not ${JSON.stringify(text.slice(start.i, start.i + 20).split('\n')[0])}`);
    }
    cur.blanks();
    if (!cur.done && cur.peek() === '#') continue;
    if (!cur.done && cur.peek() !== '\n' && cur.peek() !== ';') {
      throw new MakeConfError(cur.at(), `unexpected ${JSON.stringify(text.slice(cur.i, cur.i + 20).split('\n')[0])} after the statement`);
    }
  }
}
