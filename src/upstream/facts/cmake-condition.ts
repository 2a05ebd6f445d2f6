/**
 * CMake's if() conditions (cmake-commands(7) "if"), evaluated in three
 * values: true, false, or unknown when the answer needs something this
 * reading has not (a variable the configure step computes, a target, a file
 * system test). Policies are taken as NEW (CMP0054: quoted arguments are not
 * dereferenced, CMP0012: constants are recognised).
 */

/** A value, or UNKNOWN when it depends on what is not known here. */
export const UNKNOWN: unique symbol = Symbol('unknown');
export type Value = string | typeof UNKNOWN;
export type Truth = boolean | typeof UNKNOWN;

/** One argument of if() after variable references were expanded. */
export interface CondArg {
  value: Value;
  /** Quoted or bracket arguments are never taken as variable names. */
  quoted: boolean;
}

export interface CondScope {
  /** A variable's value (normal, then cache), undefined when not defined. */
  get(name: string): Value | undefined;
  /** DEFINED CACHE{…}: the cache alone. */
  cached(name: string): Value | undefined;
}

const TRUE_CONST = /^(1|ON|YES|TRUE|Y)$/i;
const FALSE_CONST = /^(0|OFF|NO|FALSE|N|IGNORE|NOTFOUND|)$/i;

/** A constant's truth, or undefined when the string is not a constant (then it may name a variable). */
function constant(s: string): boolean | undefined {
  if (TRUE_CONST.test(s)) return true;
  if (FALSE_CONST.test(s) || /-NOTFOUND$/i.test(s)) return false;
  if (/^[+-]?(\d+(\.\d*)?|\.\d+)$/.test(s)) return Number(s) !== 0;
  return undefined;
}

/** if(<value>): a string's truth as the value of a variable. */
export function truthOf(v: Value): Truth {
  if (v === UNKNOWN) return UNKNOWN;
  return constant(v) ?? true;
}

const not = (t: Truth): Truth => (t === UNKNOWN ? UNKNOWN : !t);
function and(a: Truth, b: Truth): Truth {
  if (a === false || b === false) return false;
  return a === UNKNOWN || b === UNKNOWN ? UNKNOWN : true;
}
function or(a: Truth, b: Truth): Truth {
  if (a === true || b === true) return true;
  return a === UNKNOWN || b === UNKNOWN ? UNKNOWN : false;
}

const UNARY = new Set(['EXISTS', 'COMMAND', 'DEFINED', 'TARGET', 'POLICY', 'TEST', 'IS_DIRECTORY', 'IS_SYMLINK', 'IS_ABSOLUTE', 'IS_READABLE', 'IS_WRITABLE', 'IS_EXECUTABLE']);
const BINARY = new Set([
  'EQUAL', 'LESS', 'GREATER', 'LESS_EQUAL', 'GREATER_EQUAL',
  'STREQUAL', 'STRLESS', 'STRGREATER', 'STRLESS_EQUAL', 'STRGREATER_EQUAL',
  'VERSION_EQUAL', 'VERSION_LESS', 'VERSION_GREATER', 'VERSION_LESS_EQUAL', 'VERSION_GREATER_EQUAL',
  'MATCHES', 'IN_LIST', 'PATH_EQUAL', 'IS_NEWER_THAN',
]);

/** An operand of a comparison: a variable's value when an unquoted word names one, else the word. */
function operand(a: CondArg, scope: CondScope): Value {
  if (a.value === UNKNOWN || a.quoted) return a.value;
  return scope.get(a.value) ?? a.value;
}

function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map((x) => Number.parseInt(x, 10) || 0);
  const pb = b.split('.').map((x) => Number.parseInt(x, 10) || 0);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

function binary(op: string, l: Value, r: Value, scope: CondScope): Truth {
  if (l === UNKNOWN || r === UNKNOWN) return UNKNOWN;
  switch (op) {
    case 'STREQUAL':
    case 'PATH_EQUAL':
      return l === r;
    case 'STRLESS':
      return l < r;
    case 'STRGREATER':
      return l > r;
    case 'STRLESS_EQUAL':
      return l <= r;
    case 'STRGREATER_EQUAL':
      return l >= r;
    case 'MATCHES': {
      try {
        return new RegExp(r).test(l);
      } catch {
        return UNKNOWN;
      }
    }
    case 'IN_LIST': {
      const list = scope.get(r);
      if (list === UNKNOWN) return UNKNOWN;
      return (list ?? '').split(';').includes(l);
    }
    case 'IS_NEWER_THAN':
      return UNKNOWN;
    default: {
      if (op.startsWith('VERSION_')) {
        const d = compareVersions(l, r);
        return { VERSION_EQUAL: d === 0, VERSION_LESS: d < 0, VERSION_GREATER: d > 0, VERSION_LESS_EQUAL: d <= 0, VERSION_GREATER_EQUAL: d >= 0 }[op] ?? UNKNOWN;
      }
      const a = Number(l);
      const b = Number(r);
      if (!Number.isFinite(a) || !Number.isFinite(b) || l.trim() === '' || r.trim() === '') return false;
      return { EQUAL: a === b, LESS: a < b, GREATER: a > b, LESS_EQUAL: a <= b, GREATER_EQUAL: a >= b }[op] ?? UNKNOWN;
    }
  }
}

type Item = CondArg | Truth;
const isArg = (x: Item): x is CondArg => typeof x === 'object' && x !== null && 'quoted' in x;

/** A lone argument: a constant, or a variable's truth (a name not defined is false). */
function single(a: CondArg, scope: CondScope): Truth {
  if (a.value === UNKNOWN) return UNKNOWN;
  if (a.quoted) return constant(a.value) ?? false;
  const c = constant(a.value);
  if (c !== undefined) return c;
  const v = scope.get(a.value);
  return v === undefined ? false : truthOf(v);
}

/**
 * The condition's truth. Evaluated as CMake does: innermost parentheses
 * first, then unary tests, binary tests, NOT, AND, OR, each left to right.
 */
export function evaluateCondition(args: CondArg[], scope: CondScope): Truth {
  const items: Item[] = [...args];
  return reduce(items, scope);
}

function reduce(items: Item[], scope: CondScope): Truth {
  // Parentheses.
  for (;;) {
    const close = items.findIndex((x) => isArg(x) && !x.quoted && x.value === ')');
    if (close < 0) break;
    let open = close - 1;
    while (open >= 0 && !(isArg(items[open]!) && !(items[open] as CondArg).quoted && (items[open] as CondArg).value === '(')) open--;
    if (open < 0) return UNKNOWN;
    const inner = reduce(items.slice(open + 1, close), scope);
    items.splice(open, close - open + 1, inner);
  }
  const word = (x: Item | undefined): string | undefined => (x !== undefined && isArg(x) && !x.quoted && x.value !== UNKNOWN ? x.value : undefined);
  // Unary tests.
  for (let i = 0; i < items.length; i++) {
    const op = word(items[i]);
    const next = items[i + 1];
    if (!op || !UNARY.has(op) || next === undefined || !isArg(next)) continue;
    let t: Truth = UNKNOWN;
    if (op === 'DEFINED' && next.value !== UNKNOWN) {
      const cache = /^CACHE\{(.+)\}$/.exec(next.value);
      const env = /^ENV\{(.+)\}$/.test(next.value);
      t = env ? UNKNOWN : cache ? scope.cached(cache[1]!) !== undefined : scope.get(next.value) !== undefined;
    }
    items.splice(i, 2, t);
  }
  // Binary tests.
  for (let i = 1; i + 1 < items.length; i++) {
    const op = word(items[i]);
    const l = items[i - 1];
    const r = items[i + 1];
    if (!op || !BINARY.has(op) || l === undefined || r === undefined || !isArg(l) || !isArg(r)) continue;
    items.splice(i - 1, 3, binary(op, operand(l, scope), op === 'IN_LIST' ? r.value : operand(r, scope), scope));
    i--;
  }
  const truth = (x: Item): Truth => (isArg(x) ? single(x, scope) : x);
  // NOT, right to left so that NOT NOT x works.
  for (let i = items.length - 2; i >= 0; i--) {
    if (word(items[i]) === 'NOT') items.splice(i, 2, not(truth(items[i + 1]!)));
  }
  for (const [name, fn] of [['AND', and], ['OR', or]] as const) {
    for (let i = 1; i + 1 < items.length; i++) {
      if (word(items[i]) !== name) continue;
      items.splice(i - 1, 3, fn(truth(items[i - 1]!), truth(items[i + 1]!)));
      i--;
    }
  }
  if (items.length !== 1) return UNKNOWN;
  return truth(items[0]!);
}
