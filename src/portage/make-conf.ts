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

/** Parse one file's text; `source` lines call `include` with the expanded path. */
export function parse(
  text: string,
  file: string,
  vars: Map<string, MakeConfValue>,
  outer: ReadonlyMap<string, string>,
  include: (file: string) => void,
): void {
  let i = 0;
  let line = 1;
  let col = 1;
  const at = () => `${file}:${line}:${col}`;
  const advance = () => {
    if (text[i] === '\n') {
      line++;
      col = 1;
    } else col++;
    i++;
  };
  const lookup = (name: string): string => vars.get(name)?.value ?? outer.get(name) ?? '';

  /** A $ expansion starting at text[i] === '$'; returns the value, leaves i after it. */
  const dollar = (): string => {
    const where = at();
    advance();
    const c = text[i];
    if (c === '{') {
      advance();
      let name = '';
      while (i < text.length && text[i] !== '}') {
        name += text[i];
        advance();
      }
      if (i >= text.length) throw new MakeConfError(where, 'unterminated ${');
      advance();
      if (!NAME.test(name)) throw new MakeConfError(where, `\${${name}} is not a plain variable reference; only \${NAME} and $NAME are expanded`);
      return lookup(name);
    }
    if (c === '(') throw new MakeConfError(where, 'a command substitution $(…) is not run');
    if (c !== undefined && /[A-Za-z_]/.test(c)) {
      let name = '';
      while (i < text.length && /[A-Za-z0-9_]/.test(text[i]!)) {
        name += text[i];
        advance();
      }
      return lookup(name);
    }
    // A lone $ is itself, as in Portage.
    return '$';
  };

  /** One shell word from text[i]: unquoted, "…" and '…' parts, until a blank, newline, ; or end. */
  const word = (): string => {
    let out = '';
    while (i < text.length) {
      const c = text[i]!;
      if (c === ' ' || c === '\t' || c === '\n' || c === ';') break;
      if (c === '`') throw new MakeConfError(at(), 'a command substitution `…` is not run');
      if (c === '\\') {
        advance();
        if (text[i] === '\n') {
          advance();
          continue;
        }
        if (i < text.length) {
          out += text[i];
          advance();
        }
        continue;
      }
      if (c === "'") {
        const where = at();
        advance();
        while (i < text.length && text[i] !== "'") {
          out += text[i];
          advance();
        }
        if (i >= text.length) throw new MakeConfError(where, "unterminated ' quote");
        advance();
        continue;
      }
      if (c === '"') {
        const where = at();
        advance();
        while (i < text.length && text[i] !== '"') {
          const d = text[i]!;
          if (d === '`') throw new MakeConfError(at(), 'a command substitution `…` is not run');
          if (d === '\\') {
            advance();
            const e = text[i];
            if (e === '\n') advance();
            else if (e === '$' || e === '`' || e === '"' || e === '\\') {
              out += e;
              advance();
            } else out += '\\';
            continue;
          }
          if (d === '$') {
            out += dollar();
            continue;
          }
          out += d;
          advance();
        }
        if (i >= text.length) throw new MakeConfError(where, 'unterminated " quote');
        advance();
        continue;
      }
      if (c === '$' && (text[i + 1] === "'" || text[i + 1] === '"')) {
        // bash's $'…' (C escapes) and $"…" (translation): not make.conf syntax. Read as Portage's lexer
        // reads them, $'\x2ftmp' would be the relative path $\x2ftmp, never /tmp: refused, not guessed.
        throw new MakeConfError(at(), `$${text[i + 1]}…${text[i + 1]} is bash quoting make.conf does not have (Portage would not read it as bash does); write the value plainly, in '…' or "…"`);
      }
      if (c === '$') {
        out += dollar();
        continue;
      }
      if (c === '(' || c === ')' || c === '|' || c === '&' || c === '<' || c === '>') {
        throw new MakeConfError(at(), `"${c}" is shell syntax make.conf does not have`);
      }
      out += c;
      advance();
    }
    return out;
  };

  const blanks = () => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || (text[i] === '\\' && text[i + 1] === '\n'))) {
      if (text[i] === '\\') advance();
      advance();
    }
  };

  while (i < text.length) {
    blanks();
    if (i >= text.length) break;
    const c = text[i]!;
    if (c === '\n' || c === ';') {
      advance();
      continue;
    }
    if (c === '#') {
      while (i < text.length && text[i] !== '\n') advance();
      continue;
    }
    const start = { line, col, i };
    // The statement's first word: NAME=…, export, or source.
    let head = '';
    while (i < text.length && /[A-Za-z0-9_]/.test(text[i]!)) {
      head += text[i];
      advance();
    }
    if (head && text[i] === '=' && NAME.test(head)) {
      advance();
      const value = word();
      vars.set(head, { value, where: `${file}:${start.line}` });
    } else if ((head === 'export' || head === 'source') && (text[i] === ' ' || text[i] === '\t')) {
      blanks();
      if (head === 'source') {
        const where = `${file}:${start.line}:${start.col}`;
        const target = word();
        if (!target) throw new MakeConfError(where, 'source without a file');
        include(target);
      } else {
        // `export NAME=value`: the same as the assignment for Portage.
        continue;
      }
    } else {
      line = start.line;
      col = start.col;
      throw new MakeConfError(at(), `expected NAME=value, export or source, not ${JSON.stringify(text.slice(start.i, start.i + 20).split('\n')[0])}`);
    }
    blanks();
    if (i < text.length && text[i] === '#') continue;
    if (i < text.length && text[i] !== '\n' && text[i] !== ';') {
      throw new MakeConfError(at(), `unexpected ${JSON.stringify(text.slice(i, i + 20).split('\n')[0])} after the statement`);
    }
  }
}
