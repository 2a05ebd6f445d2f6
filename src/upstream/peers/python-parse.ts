/**
 * A tokenizer and parser for the part of Python that Spack's package.py
 * recipes are written in: classes and functions, if/for/with/try, calls with
 * keyword arguments, literals (f-strings included), attribute and subscript
 * chains, the arithmetic, comparison and boolean operators. The result is a
 * tree that python-eval.ts walks symbolically; nothing is ever run. What the
 * parser does not know (lambda, comprehensions, walrus, decorators' effects)
 * becomes an opaque node, not an error, so one odd line does not hide a
 * recipe. It is bounded: nesting deeper than MAX_DEPTH (brackets, blocks,
 * f-strings inside f-strings) is an error naming the line and column, so a
 * hostile recipe cannot exhaust the stack.
 */

export class PythonSyntaxError extends Error {
  constructor(
    message: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(`${line}:${column}: ${message}`);
    this.name = 'PythonSyntaxError';
  }
}

export const MAX_DEPTH = 100;

export interface Pos {
  line: number;
  col: number;
  /** Offsets of the node's text in the source (for conditions shown as written). */
  start: number;
  end: number;
}

export type Expr = Pos &
  (
    | { t: 'str'; v: string }
    | { t: 'fstr'; parts: (string | Expr)[] }
    | { t: 'num'; v: number }
    | { t: 'const'; v: boolean | null }
    | { t: 'name'; id: string }
    | { t: 'attr'; obj: Expr; name: string }
    | { t: 'call'; fn: Expr; args: Expr[]; kwargs: [string, Expr][] }
    | { t: 'sub'; obj: Expr; index: Expr }
    | { t: 'list' | 'tuple' | 'set'; items: Expr[] }
    | { t: 'dict'; entries: [Expr, Expr][] }
    | { t: 'bin'; op: string; l: Expr; r: Expr }
    | { t: 'cmp'; ops: string[]; operands: Expr[] }
    | { t: 'bool'; op: 'and' | 'or'; values: Expr[] }
    | { t: 'not'; v: Expr }
    | { t: 'neg'; v: Expr }
    | { t: 'ifexp'; test: Expr; body: Expr; orelse: Expr }
    | { t: 'opaque'; why: string }
  );

export type Stmt = Pos &
  (
    | { t: 'expr'; e: Expr }
    | { t: 'assign'; targets: Expr[]; value: Expr; op?: string }
    | { t: 'if'; branches: [Expr, Stmt[]][]; orelse: Stmt[] }
    | { t: 'for'; target: Expr; iter: Expr; body: Stmt[]; orelse: Stmt[] }
    | { t: 'with'; items: [Expr, Expr | undefined][]; body: Stmt[] }
    | { t: 'def'; name: string; params: string[]; body: Stmt[]; decorators: Expr[] }
    | { t: 'class'; name: string; bases: Expr[]; body: Stmt[] }
    | { t: 'return'; value?: Expr }
    | { t: 'try'; body: Stmt[]; handlers: Stmt[][]; orelse: Stmt[]; finalbody: Stmt[] }
    | { t: 'opaque'; why: string; body?: Stmt[] }
    | { t: 'pass' }
  );

interface Token {
  type: 'name' | 'num' | 'str' | 'op' | 'newline' | 'indent' | 'dedent' | 'eof';
  value: string;
  line: number;
  col: number;
  start: number;
  end: number;
  /** String prefix letters, lower-cased (r, b, f, u). */
  prefix?: string;
}

const KEYWORDS = new Set([
  'and', 'as', 'assert', 'async', 'await', 'break', 'class', 'continue', 'def', 'del', 'elif', 'else', 'except', 'finally', 'for',
  'from', 'global', 'if', 'import', 'in', 'is', 'lambda', 'nonlocal', 'not', 'or', 'pass', 'raise', 'return', 'try', 'while', 'with', 'yield',
]);
const OPERATORS = ['**=', '//=', '>>=', '<<=', '...', '->', ':=', '**', '//', '<<', '>>', '<=', '>=', '==', '!=', '+=', '-=', '*=', '/=', '%=', '&=', '|=', '^=', '@=',
  '+', '-', '*', '/', '%', '@', '&', '|', '^', '~', '<', '>', '(', ')', '[', ']', '{', '}', ',', ':', '.', ';', '='];

/**
 * Python's tokens with INDENT/DEDENT, line continuations and implicit joining inside brackets.
 * Kept as one piece: a single scan over the text whose branches all move the same cursor, line
 * and line-start counters and bracket depth; split apart, each part would have to hand them back.
 */
export function tokenize(src: string): Token[] {
  const out: Token[] = [];
  const indents = [0];
  let i = 0;
  let line = 1;
  let lineStart = 0;
  let depth = 0;
  let atLineStart = true;
  const err = (msg: string, at = i): never => {
    throw new PythonSyntaxError(msg, line, at - lineStart + 1);
  };
  while (i < src.length) {
    if (atLineStart && depth === 0) {
      let col = 0;
      let j = i;
      while (j < src.length && (src[j] === ' ' || src[j] === '\t' || src[j] === '\f')) {
        col = src[j] === '\t' ? (Math.floor(col / 8) + 1) * 8 : col + 1;
        j++;
      }
      if (j >= src.length) break;
      if (src[j] === '#' || src[j] === '\n' || src[j] === '\r') {
        // A blank or comment-only line takes no part in indentation.
        while (j < src.length && src[j] !== '\n') j++;
        i = j + 1;
        line++;
        lineStart = i;
        continue;
      }
      i = j;
      atLineStart = false;
      const top = indents[indents.length - 1]!;
      if (col > top) {
        if (indents.length > MAX_DEPTH) err(`blocks nested more than ${MAX_DEPTH} deep`);
        indents.push(col);
        out.push({ type: 'indent', value: '', line, col: col + 1, start: i, end: i });
      } else {
        while (col < indents[indents.length - 1]!) {
          indents.pop();
          out.push({ type: 'dedent', value: '', line, col: col + 1, start: i, end: i });
        }
        if (col !== indents[indents.length - 1]) err('the indentation matches no outer block');
      }
    }
    const c = src[i]!;
    if (c === '\n') {
      if (depth === 0) out.push({ type: 'newline', value: '', line, col: i - lineStart + 1, start: i, end: i + 1 });
      i++;
      line++;
      lineStart = i;
      atLineStart = depth === 0;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\r' || c === '\f') {
      i++;
      continue;
    }
    if (c === '#') {
      while (i < src.length && src[i] !== '\n') i++;
      continue;
    }
    if (c === '\\' && (src[i + 1] === '\n' || (src[i + 1] === '\r' && src[i + 2] === '\n'))) {
      i += src[i + 1] === '\n' ? 2 : 3;
      line++;
      lineStart = i;
      continue;
    }
    const start = i;
    const col = i - lineStart + 1;
    const pm = /^([rRbBuUfF]{0,2})(['"])/.exec(src.slice(i, i + 4));
    if (pm && (pm[1] === '' || /^(r|b|u|f|rb|br|fr|rf)$/i.test(pm[1]!))) {
      const prefix = pm[1]!.toLowerCase();
      const q = pm[2]!;
      i += prefix.length;
      const triple = src.startsWith(q.repeat(3), i);
      const close = triple ? q.repeat(3) : q;
      i += close.length;
      const bodyStart = i;
      const startLine = line;
      for (;;) {
        if (i >= src.length) {
          line = startLine;
          err('an unterminated string', start);
        }
        const d = src[i]!;
        if (d === '\\') {
          if (src[i + 1] === '\n') {
            line++;
            lineStart = i + 2;
          }
          i += 2;
          continue;
        }
        if (d === '\n') {
          if (!triple) err('an unterminated string', start);
          line++;
          lineStart = i + 1;
        }
        if (src.startsWith(close, i)) break;
        i++;
      }
      const body = src.slice(bodyStart, i);
      i += close.length;
      out.push({ type: 'str', value: body, line: startLine, col, start, end: i, prefix });
      continue;
    }
    const nm = /^[A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*/.exec(src.slice(i, i + 256));
    if (nm) {
      i += nm[0].length;
      out.push({ type: 'name', value: nm[0], line, col, start, end: i });
      continue;
    }
    const num = /^(?:0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?[jJ]?)/.exec(src.slice(i, i + 128));
    if (num && num[0] !== '.') {
      i += num[0].length;
      out.push({ type: 'num', value: num[0], line, col, start, end: i });
      continue;
    }
    const op = OPERATORS.find((o) => src.startsWith(o, i));
    if (!op) err(`an unexpected character ${JSON.stringify(c)}`);
    if (op === '(' || op === '[' || op === '{') {
      if (++depth > MAX_DEPTH) err(`brackets nested more than ${MAX_DEPTH} deep`);
    } else if (op === ')' || op === ']' || op === '}') depth = Math.max(0, depth - 1);
    i += op!.length;
    out.push({ type: 'op', value: op!, line, col, start, end: i });
  }
  if (out.length > 0 && out[out.length - 1]!.type !== 'newline') out.push({ type: 'newline', value: '', line, col: 1, start: i, end: i });
  while (indents.length > 1) {
    indents.pop();
    out.push({ type: 'dedent', value: '', line, col: 1, start: i, end: i });
  }
  out.push({ type: 'eof', value: '', line, col: 1, start: i, end: i });
  return out;
}

/** A string literal's value: escapes decoded unless raw. */
function decodeString(body: string, raw: boolean): string {
  if (raw) return body;
  return body.replace(/\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|N\{[^}]*\}|[0-7]{1,3}|\n|.)/g, (m, e: string) => {
    if (e === '\n') return '';
    if (/^[xuU]/.test(e)) return String.fromCodePoint(parseInt(e.slice(1), 16));
    if (/^[0-7]/.test(e)) return String.fromCharCode(parseInt(e, 8));
    const simple: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"', a: '\x07', b: '\b', f: '\f', v: '\v', '0': '\0' };
    return simple[e] ?? m;
  });
}

class Parser {
  private p = 0;
  private depth = 0;
  constructor(
    private readonly toks: Token[],
    private readonly src: string,
    private readonly base: { line: number; col: number; offset: number } = { line: 0, col: 0, offset: 0 },
    private readonly outerDepth = 0,
  ) {}

  private get tok(): Token {
    return this.toks[this.p]!;
  }
  private err(msg: string, t: Token = this.tok): never {
    throw new PythonSyntaxError(msg, t.line + this.base.line, t.col + (t.line === 1 ? this.base.col : 0));
  }
  private pos(t: Token, endTok?: Token): Pos {
    return { line: t.line + this.base.line, col: t.col + (t.line === 1 ? this.base.col : 0), start: t.start + this.base.offset, end: (endTok ?? this.toks[this.p - 1] ?? t).end + this.base.offset };
  }
  private is(type: Token['type'], value?: string): boolean {
    return this.tok.type === type && (value === undefined || this.tok.value === value);
  }
  private isOp(v: string): boolean {
    return this.is('op', v);
  }
  private isKw(v: string): boolean {
    return this.is('name', v);
  }
  private eat(type: Token['type'], value?: string): Token {
    if (!this.is(type, value)) this.err(`expected ${value ?? type}, found ${this.tok.value || this.tok.type}`);
    return this.toks[this.p++]!;
  }
  private enter(): void {
    if (++this.depth + this.outerDepth > MAX_DEPTH) this.err(`expressions or blocks nested more than ${MAX_DEPTH} deep`);
  }
  private leave(): void {
    this.depth--;
  }

  module(): Stmt[] {
    const out: Stmt[] = [];
    while (!this.is('eof')) {
      if (this.is('newline')) {
        this.p++;
        continue;
      }
      out.push(...this.statement());
    }
    return out;
  }

  private block(): Stmt[] {
    this.enter();
    try {
      if (!this.is('newline')) return this.simpleStatements();
      this.eat('newline');
      this.eat('indent');
      const out: Stmt[] = [];
      while (!this.is('dedent') && !this.is('eof')) {
        if (this.is('newline')) {
          this.p++;
          continue;
        }
        out.push(...this.statement());
      }
      if (this.is('dedent')) this.p++;
      return out;
    } finally {
      this.leave();
    }
  }

  private statement(): Stmt[] {
    const t = this.tok;
    if (t.type === 'op' && t.value === '@') {
      const decorators: Expr[] = [];
      while (this.isOp('@')) {
        this.p++;
        decorators.push(this.expr());
        this.eat('newline');
      }
      const s = this.statement();
      const first = s[0];
      if (first && first.t === 'def') first.decorators = decorators;
      return s;
    }
    if (t.type === 'name') {
      switch (t.value) {
        case 'if':
          return [this.ifStatement()];
        case 'for':
          return [this.forStatement()];
        case 'while': {
          this.p++;
          this.expr();
          this.eat('op', ':');
          const body = this.block();
          if (this.isKw('else')) {
            this.p++;
            this.eat('op', ':');
            this.block();
          }
          return [{ t: 'opaque', why: 'a while loop', body, ...this.pos(t) }];
        }
        case 'with':
          return [this.withStatement()];
        case 'def':
          return [this.defStatement()];
        case 'class':
          return [this.classStatement()];
        case 'try':
          return [this.tryStatement()];
        case 'async': {
          this.p++;
          const s = this.statement();
          return s.map((x) => ({ t: 'opaque', why: 'async code', ...this.pos(t) }) as Stmt);
        }
        default:
          break;
      }
    }
    return this.simpleStatements();
  }

  private simpleStatements(): Stmt[] {
    const out: Stmt[] = [this.simple()];
    while (this.isOp(';')) {
      this.p++;
      if (this.is('newline')) break;
      out.push(this.simple());
    }
    if (!this.is('eof')) this.eat('newline');
    return out;
  }

  private skipToEnd(): void {
    let depth = 0;
    while (!this.is('eof')) {
      if (depth === 0 && (this.is('newline') || this.isOp(';'))) return;
      if (this.isOp('(') || this.isOp('[') || this.isOp('{')) depth++;
      if (this.isOp(')') || this.isOp(']') || this.isOp('}')) depth--;
      this.p++;
    }
  }

  private simple(): Stmt {
    const t = this.tok;
    if (t.type === 'name') {
      switch (t.value) {
        case 'pass':
        case 'break':
        case 'continue':
          this.p++;
          return { t: 'pass', ...this.pos(t) };
        case 'return': {
          this.p++;
          if (this.is('newline') || this.isOp(';') || this.is('eof')) return { t: 'return', ...this.pos(t) };
          const value = this.exprList();
          return { t: 'return', value, ...this.pos(t) };
        }
        case 'import':
        case 'from':
        case 'global':
        case 'nonlocal':
        case 'del':
        case 'assert':
        case 'raise':
        case 'yield': {
          this.p++;
          this.skipToEnd();
          return { t: 'opaque', why: `a ${t.value} statement`, ...this.pos(t) };
        }
        default:
          break;
      }
    }
    const first = this.exprList();
    if (this.isOp('=')) {
      const targets = [first];
      let value: Expr = first;
      while (this.isOp('=')) {
        this.p++;
        value = this.exprList();
        targets.push(value);
      }
      targets.pop();
      return { t: 'assign', targets, value, ...this.pos(t) };
    }
    if (this.isOp(':')) {
      // An annotated assignment: the annotation is read and dropped.
      this.p++;
      this.expr();
      if (this.isOp('=')) {
        this.p++;
        return { t: 'assign', targets: [first], value: this.exprList(), ...this.pos(t) };
      }
      return { t: 'pass', ...this.pos(t) };
    }
    if (this.tok.type === 'op' && /^(\+|-|\*|\/|\/\/|%|\*\*|>>|<<|&|\||\^|@)=$/.test(this.tok.value)) {
      const op = this.tok.value.slice(0, -1);
      this.p++;
      return { t: 'assign', targets: [first], value: this.exprList(), op, ...this.pos(t) };
    }
    return { t: 'expr', e: first, ...this.pos(t) };
  }

  private ifStatement(): Stmt {
    const t = this.eat('name', 'if');
    const branches: [Expr, Stmt[]][] = [];
    const test = this.expr();
    this.eat('op', ':');
    branches.push([test, this.block()]);
    let orelse: Stmt[] = [];
    for (;;) {
      if (this.isKw('elif')) {
        this.p++;
        const e = this.expr();
        this.eat('op', ':');
        branches.push([e, this.block()]);
        continue;
      }
      if (this.isKw('else')) {
        this.p++;
        this.eat('op', ':');
        orelse = this.block();
      }
      break;
    }
    return { t: 'if', branches, orelse, ...this.pos(t) };
  }

  private forStatement(): Stmt {
    const t = this.eat('name', 'for');
    const target = this.targetList();
    this.eat('name', 'in');
    const iter = this.exprList();
    this.eat('op', ':');
    const body = this.block();
    let orelse: Stmt[] = [];
    if (this.isKw('else')) {
      this.p++;
      this.eat('op', ':');
      orelse = this.block();
    }
    return { t: 'for', target, iter, body, orelse, ...this.pos(t) };
  }

  /** `a`, `a, b` or `(a, b)` before `in`: parsed below comparisons so that `in` is not taken as an operator. */
  private targetList(): Expr {
    const t = this.tok;
    const items = [this.orExpr(true)];
    while (this.isOp(',')) {
      this.p++;
      if (this.isKw('in')) break;
      items.push(this.orExpr(true));
    }
    return items.length === 1 ? items[0]! : { t: 'tuple', items, ...this.pos(t) };
  }

  private withStatement(): Stmt {
    const t = this.eat('name', 'with');
    const items: [Expr, Expr | undefined][] = [];
    const paren = this.isOp('(') && this.parenthesisedWithItems();
    if (paren) this.p++;
    do {
      if (items.length > 0) this.p++;
      if (paren && this.isOp(')')) break;
      const e = this.expr();
      let as: Expr | undefined;
      if (this.isKw('as')) {
        this.p++;
        as = this.orExpr(true);
      }
      items.push([e, as]);
    } while (this.isOp(','));
    if (paren) this.eat('op', ')');
    this.eat('op', ':');
    return { t: 'with', items, body: this.block(), ...this.pos(t) };
  }

  /** `with (a as b, c):` — a bracket that holds `as` at its own level. */
  private parenthesisedWithItems(): boolean {
    let depth = 0;
    for (let k = this.p; k < this.toks.length; k++) {
      const x = this.toks[k]!;
      if (x.type === 'op' && '([{'.includes(x.value)) depth++;
      else if (x.type === 'op' && ')]}'.includes(x.value)) {
        depth--;
        if (depth === 0) return this.toks[k + 1]?.value === ':';
      } else if (depth === 1 && x.type === 'name' && x.value === 'as') return true;
      if (x.type === 'newline' || x.type === 'eof') return false;
    }
    return false;
  }

  private defStatement(): Stmt {
    const t = this.eat('name', 'def');
    const name = this.eat('name').value;
    this.eat('op', '(');
    const params: string[] = [];
    let depth = 1;
    // Parameters: names only; defaults and annotations are skipped.
    let expectName = true;
    while (depth > 0 && !this.is('eof')) {
      const x = this.tok;
      if (x.type === 'op' && '([{'.includes(x.value)) depth++;
      else if (x.type === 'op' && ')]}'.includes(x.value)) depth--;
      else if (depth === 1 && x.type === 'op' && x.value === ',') expectName = true;
      else if (depth === 1 && expectName && x.type === 'name') {
        params.push(x.value);
        expectName = false;
      }
      this.p++;
    }
    if (this.isOp('->')) {
      this.p++;
      this.expr();
    }
    this.eat('op', ':');
    return { t: 'def', name, params, body: this.block(), decorators: [], ...this.pos(t) };
  }

  private classStatement(): Stmt {
    const t = this.eat('name', 'class');
    const name = this.eat('name').value;
    let bases: Expr[] = [];
    if (this.isOp('(')) {
      const call = this.callArgs();
      bases = call.args;
    }
    this.eat('op', ':');
    return { t: 'class', name, bases, body: this.block(), ...this.pos(t) };
  }

  private tryStatement(): Stmt {
    const t = this.eat('name', 'try');
    this.eat('op', ':');
    const body = this.block();
    const handlers: Stmt[][] = [];
    let orelse: Stmt[] = [];
    let finalbody: Stmt[] = [];
    while (this.isKw('except')) {
      this.p++;
      if (this.isOp('*')) this.p++;
      if (!this.isOp(':')) {
        this.expr();
        if (this.isKw('as')) {
          this.p++;
          this.eat('name');
        }
      }
      this.eat('op', ':');
      handlers.push(this.block());
    }
    if (this.isKw('else')) {
      this.p++;
      this.eat('op', ':');
      orelse = this.block();
    }
    if (this.isKw('finally')) {
      this.p++;
      this.eat('op', ':');
      finalbody = this.block();
    }
    return { t: 'try', body, handlers, orelse, finalbody, ...this.pos(t) };
  }

  /** An expression, or a bare tuple `a, b`. */
  private exprList(): Expr {
    const t = this.tok;
    const first = this.exprOrStar();
    if (!this.isOp(',')) return first;
    const items = [first];
    while (this.isOp(',')) {
      this.p++;
      if (this.is('newline') || this.isOp('=') || this.isOp(')') || this.is('eof') || this.isOp(';')) break;
      items.push(this.exprOrStar());
    }
    return { t: 'tuple', items, ...this.pos(t) };
  }

  private exprOrStar(): Expr {
    if (this.isOp('*') || this.isOp('**')) {
      const t = this.tok;
      this.p++;
      this.expr();
      return { t: 'opaque', why: 'an unpacked argument', ...this.pos(t) };
    }
    return this.expr();
  }

  expr(): Expr {
    this.enter();
    try {
      const t = this.tok;
      if (this.isKw('lambda')) {
        this.p++;
        while (!this.isOp(':') && !this.is('eof')) this.p++;
        this.eat('op', ':');
        this.expr();
        return { t: 'opaque', why: 'a lambda', ...this.pos(t) };
      }
      const body = this.orExpr(false);
      if (this.isKw('if')) {
        this.p++;
        const test = this.orExpr(false);
        this.eat('name', 'else');
        const orelse = this.expr();
        return { t: 'ifexp', test, body, orelse, ...this.pos(t) };
      }
      if (this.isOp(':=')) {
        this.p++;
        this.expr();
        return { t: 'opaque', why: 'an assignment expression', ...this.pos(t) };
      }
      return body;
    } finally {
      this.leave();
    }
  }

  private orExpr(noIn: boolean): Expr {
    const t = this.tok;
    const values = [this.andExpr(noIn)];
    while (this.isKw('or')) {
      this.p++;
      values.push(this.andExpr(noIn));
    }
    return values.length === 1 ? values[0]! : { t: 'bool', op: 'or', values, ...this.pos(t) };
  }

  private andExpr(noIn: boolean): Expr {
    const t = this.tok;
    const values = [this.notExpr(noIn)];
    while (this.isKw('and')) {
      this.p++;
      values.push(this.notExpr(noIn));
    }
    return values.length === 1 ? values[0]! : { t: 'bool', op: 'and', values, ...this.pos(t) };
  }

  private notExpr(noIn: boolean): Expr {
    const t = this.tok;
    if (this.isKw('not')) {
      this.p++;
      this.enter();
      try {
        return { t: 'not', v: this.notExpr(noIn), ...this.pos(t) };
      } finally {
        this.leave();
      }
    }
    return this.comparison(noIn);
  }

  private comparison(noIn: boolean): Expr {
    const t = this.tok;
    const operands = [this.bitOr()];
    const ops: string[] = [];
    for (;;) {
      const x = this.tok;
      let op: string | undefined;
      if (x.type === 'op' && ['<', '>', '==', '>=', '<=', '!='].includes(x.value)) op = x.value;
      else if (!noIn && x.type === 'name' && x.value === 'in') op = 'in';
      else if (x.type === 'name' && x.value === 'not' && this.toks[this.p + 1]?.value === 'in' && !noIn) op = 'not in';
      else if (x.type === 'name' && x.value === 'is') op = this.toks[this.p + 1]?.value === 'not' ? 'is not' : 'is';
      if (!op) break;
      this.p += op.includes(' ') ? 2 : 1;
      ops.push(op);
      operands.push(this.bitOr());
    }
    return ops.length === 0 ? operands[0]! : { t: 'cmp', ops, operands, ...this.pos(t) };
  }

  private binary(next: () => Expr, ops: string[]): Expr {
    const t = this.tok;
    let l = next();
    while (this.tok.type === 'op' && ops.includes(this.tok.value)) {
      const op = this.tok.value;
      this.p++;
      const r = next();
      l = { t: 'bin', op, l, r, ...this.pos(t) };
    }
    return l;
  }

  private bitOr = (): Expr => this.binary(this.bitXor, ['|']);
  private bitXor = (): Expr => this.binary(this.bitAnd, ['^']);
  private bitAnd = (): Expr => this.binary(this.shift, ['&']);
  private shift = (): Expr => this.binary(this.arith, ['<<', '>>']);
  private arith = (): Expr => this.binary(this.term, ['+', '-']);
  private term = (): Expr => this.binary(this.factor, ['*', '/', '//', '%', '@']);

  private factor = (): Expr => {
    const t = this.tok;
    if (this.isOp('-') || this.isOp('+') || this.isOp('~')) {
      const op = t.value;
      this.p++;
      this.enter();
      try {
        const v = this.factor();
        return op === '-' ? { t: 'neg', v, ...this.pos(t) } : op === '+' ? v : { t: 'opaque', why: 'a bitwise not', ...this.pos(t) };
      } finally {
        this.leave();
      }
    }
    const base = this.postfix();
    if (this.isOp('**')) {
      this.p++;
      const r = this.factor();
      return { t: 'bin', op: '**', l: base, r, ...this.pos(t) };
    }
    return base;
  };

  private postfix(): Expr {
    const t = this.tok;
    if (this.isKw('await')) this.p++;
    let e = this.atom();
    for (;;) {
      if (this.isOp('.')) {
        this.p++;
        const name = this.eat('name').value;
        e = { t: 'attr', obj: e, name, ...this.pos(t) };
      } else if (this.isOp('(')) {
        const { args, kwargs } = this.callArgs();
        e = { t: 'call', fn: e, args, kwargs, ...this.pos(t) };
      } else if (this.isOp('[')) {
        this.p++;
        this.enter();
        try {
          const index = this.subscript();
          this.eat('op', ']');
          e = { t: 'sub', obj: e, index, ...this.pos(t) };
        } finally {
          this.leave();
        }
      } else return e;
    }
  }

  private subscript(): Expr {
    const t = this.tok;
    const parts: (Expr | undefined)[] = [];
    let slice = false;
    const one = (): Expr | undefined => (this.isOp(':') || this.isOp(']') || this.isOp(',') ? undefined : this.expr());
    let cur = one();
    while (this.isOp(':')) {
      slice = true;
      this.p++;
      parts.push(cur);
      cur = one();
    }
    if (slice) return { t: 'opaque', why: 'a slice', ...this.pos(t) };
    if (this.isOp(',')) {
      const items = [cur!];
      while (this.isOp(',')) {
        this.p++;
        if (this.isOp(']')) break;
        items.push(this.expr());
      }
      return { t: 'tuple', items, ...this.pos(t) };
    }
    if (!cur) this.err('an empty subscript');
    return cur!;
  }

  private callArgs(): { args: Expr[]; kwargs: [string, Expr][] } {
    this.eat('op', '(');
    this.enter();
    try {
      const args: Expr[] = [];
      const kwargs: [string, Expr][] = [];
      while (!this.isOp(')')) {
        if (this.is('name') && this.toks[this.p + 1]?.value === '=' && this.toks[this.p + 1]?.type === 'op') {
          const name = this.tok.value;
          this.p += 2;
          kwargs.push([name, this.expr()]);
        } else {
          const e = this.exprOrStar();
          if (this.isKw('for')) {
            args.push(this.comprehensionRest(e));
          } else args.push(e);
        }
        if (!this.isOp(',')) break;
        this.p++;
      }
      this.eat('op', ')');
      return { args, kwargs };
    } finally {
      this.leave();
    }
  }

  /** The `for … in … if …` tail of a comprehension: parsed, then opaque. */
  private comprehensionRest(first: Expr): Expr {
    while (this.isKw('for') || this.isKw('if') || this.isKw('async')) {
      if (this.isKw('async')) this.p++;
      if (this.isKw('for')) {
        this.p++;
        this.targetList();
        this.eat('name', 'in');
        this.orExpr(false);
      } else {
        this.p++;
        this.orExpr(false);
      }
    }
    return { t: 'opaque', why: 'a comprehension', line: first.line, col: first.col, start: first.start, end: this.toks[this.p - 1]!.end + this.base.offset };
  }

  private atom(): Expr {
    const t = this.tok;
    switch (t.type) {
      case 'num': {
        this.p++;
        const v = /[jJ]$/.test(t.value) ? NaN : Number(t.value.replace(/_/g, ''));
        return { t: 'num', v, ...this.pos(t) };
      }
      case 'str':
        return this.strings();
      case 'name': {
        if (KEYWORDS.has(t.value) && !['True', 'False', 'None'].includes(t.value)) this.err(`an unexpected keyword ${t.value}`);
        this.p++;
        if (t.value === 'True' || t.value === 'False') return { t: 'const', v: t.value === 'True', ...this.pos(t) };
        if (t.value === 'None') return { t: 'const', v: null, ...this.pos(t) };
        return { t: 'name', id: t.value, ...this.pos(t) };
      }
      case 'op':
        break;
      default:
        this.err(`an unexpected ${t.type === 'newline' ? 'end of line' : t.type}`);
    }
    if (t.value === '...') {
      this.p++;
      return { t: 'const', v: null, ...this.pos(t) };
    }
    if (t.value === '(' || t.value === '[') {
      const close = t.value === '(' ? ')' : ']';
      this.p++;
      this.enter();
      try {
        const items: Expr[] = [];
        let trailingComma = false;
        while (!this.isOp(close)) {
          const e = this.exprOrStar();
          if (this.isKw('for')) {
            const c = this.comprehensionRest(e);
            this.eat('op', close);
            return c;
          }
          items.push(e);
          trailingComma = false;
          if (!this.isOp(',')) break;
          this.p++;
          trailingComma = true;
        }
        this.eat('op', close);
        if (close === ']') return { t: 'list', items, ...this.pos(t) };
        if (items.length === 1 && !trailingComma) return items[0]!;
        return { t: 'tuple', items, ...this.pos(t) };
      } finally {
        this.leave();
      }
    }
    if (t.value === '{') {
      this.p++;
      this.enter();
      try {
        const entries: [Expr, Expr][] = [];
        const items: Expr[] = [];
        while (!this.isOp('}')) {
          if (this.isOp('**')) {
            this.p++;
            this.expr();
            entries.push([{ t: 'opaque', why: 'an unpacked mapping', ...this.pos(t) }, { t: 'opaque', why: 'an unpacked mapping', ...this.pos(t) }]);
          } else {
            const k = this.expr();
            if (this.isKw('for')) {
              const c = this.comprehensionRest(k);
              this.eat('op', '}');
              return c;
            }
            if (this.isOp(':')) {
              this.p++;
              const v = this.expr();
              if (this.isKw('for')) {
                const c = this.comprehensionRest(v);
                this.eat('op', '}');
                return c;
              }
              entries.push([k, v]);
            } else items.push(k);
          }
          if (!this.isOp(',')) break;
          this.p++;
        }
        this.eat('op', '}');
        return items.length > 0 && entries.length === 0 ? { t: 'set', items, ...this.pos(t) } : { t: 'dict', entries, ...this.pos(t) };
      } finally {
        this.leave();
      }
    }
    this.err(`an unexpected ${JSON.stringify(t.value)}`);
  }

  /** Adjacent string literals, concatenated; an f-string part makes the whole an f-string. */
  private strings(): Expr {
    const t = this.tok;
    const parts: (string | Expr)[] = [];
    let isF = false;
    while (this.is('str')) {
      const s = this.tok;
      this.p++;
      const raw = s.prefix?.includes('r') ?? false;
      if (s.prefix?.includes('f')) {
        isF = true;
        parts.push(...this.fstringParts(s, raw));
      } else parts.push(decodeString(s.value, raw));
    }
    if (!isF) return { t: 'str', v: parts.join(''), ...this.pos(t) };
    return { t: 'fstr', parts, ...this.pos(t) };
  }

  private fstringParts(s: Token, raw: boolean): (string | Expr)[] {
    const body = s.value;
    const quoteLen = s.end - s.start - body.length - (s.prefix?.length ?? 0);
    const bodyOffset = s.start + (s.prefix?.length ?? 0) + quoteLen / 2;
    const out: (string | Expr)[] = [];
    let text = '';
    let i = 0;
    while (i < body.length) {
      const c = body[i]!;
      if (c === '{' && body[i + 1] === '{') {
        text += '{';
        i += 2;
        continue;
      }
      if (c === '}' && body[i + 1] === '}') {
        text += '}';
        i += 2;
        continue;
      }
      if (c !== '{') {
        text += c;
        i++;
        continue;
      }
      // The replacement field: up to the matching }, its !conversion and :format dropped.
      let depth = 0;
      let j = i + 1;
      let end = -1;
      let quote: string | undefined;
      for (; j < body.length; j++) {
        const d = body[j]!;
        if (quote) {
          if (d === quote) quote = undefined;
          continue;
        }
        if (d === '"' || d === "'") quote = d;
        else if ('([{'.includes(d)) depth++;
        else if (')]'.includes(d)) depth--;
        else if (d === '}') {
          if (depth === 0) break;
          depth--;
        } else if ((d === '!' && body[j + 1] !== '=') || d === ':') {
          if (depth === 0 && end < 0) end = j;
        }
      }
      if (j >= body.length) throw new PythonSyntaxError('an f-string with an unclosed {', s.line + this.base.line, s.col);
      const inner = body.slice(i + 1, end < 0 ? j : end).replace(/=\s*$/, '');
      if (text) out.push(raw ? text : decodeString(text, false));
      text = '';
      out.push(parseExpression(inner, this.src, bodyOffset + i + 1 + this.base.offset, s.line + this.base.line, this.depth + this.outerDepth + 1));
      i = j + 1;
    }
    if (text) out.push(raw ? text : decodeString(text, false));
    return out;
  }
}

/** One expression (an f-string's replacement field), its positions those of the text it came from. */
function parseExpression(text: string, src: string, offset: number, line: number, depth: number): Expr {
  if (depth > MAX_DEPTH) throw new PythonSyntaxError(`f-strings nested more than ${MAX_DEPTH} deep`, line, 1);
  let toks: Token[];
  try {
    toks = tokenize(`(${text.replace(/\n/g, ' ')})`).filter((t) => t.type !== 'newline' && t.type !== 'indent' && t.type !== 'dedent');
  } catch (err) {
    if (err instanceof PythonSyntaxError) throw new PythonSyntaxError(err.message.replace(/^\d+:\d+: /, ''), line, 1);
    throw err;
  }
  for (const t of toks) {
    t.start -= 1;
    t.end -= 1;
  }
  const p = new Parser(toks, src, { line: line - 1, col: 0, offset }, depth);
  return p.expr();
}

/** A recipe's statements; throws PythonSyntaxError (line and column) for what is not Python or nests too deep. */
export function parsePython(src: string): Stmt[] {
  return new Parser(tokenize(src), src).module();
}
