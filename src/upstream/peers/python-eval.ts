import type { Expr, Stmt } from './python-parse.js';
import { compareSpackVersions, decideSpec } from './spack-spec.js';

/**
 * A symbolic walk over a package.py for one version of the package: what the
 * recipe would do, without running it. Literals, lists, f-strings, the
 * version's comparisons and `self.spec.satisfies("@…")` are computed; what
 * depends on anything else (a variant, a dependency's prefix, the compiler,
 * an imported helper) becomes an unknown value or, in a test, a condition
 * kept as the text it was written as. Both branches of an undecided `if` are
 * walked under that condition, so a CMake option added only `if "+asan" in
 * self.spec` is recorded as conditional rather than lost or taken as always.
 * Side effects that matter are recorded: the class body's directives
 * (version, depends_on, patch, resource, variant …, under their `with
 * when(…)` blocks) and filter_file calls. Nothing is imported, opened or
 * executed; names the walk does not know are unknown values. A step budget
 * bounds the walk.
 */

export type Val =
  | { k: 'str'; v: string }
  | { k: 'num'; v: number }
  | { k: 'bool'; v: boolean }
  | { k: 'none' }
  | { k: 'list'; items: Item[]; tuple?: boolean }
  | { k: 'dict'; entries: [Val, Val][] }
  | { k: 'version'; v: string }
  | { k: 'cond'; text: string }
  | { k: 'unknown'; text: string }
  | { k: 'define'; name: string; value: Val }
  | { k: 'func'; def: Extract<Stmt, { t: 'def' }>; bound: boolean }
  | { k: 'builtin'; name: string; self?: Val }
  | { k: 'obj'; kind: 'self' | 'spec' | 'stage' | 'module'; name?: string }
  | { k: 'ctx'; kind: 'when' | 'working_dir' | 'default_args' | 'other'; arg?: Val; kwargs?: Record<string, Val> };

export interface Item {
  v: Val;
  conds: string[];
}

export interface Directive {
  name: string;
  args: Val[];
  kwargs: Record<string, Val>;
  /** The `with when(…)` conditions around it (outermost first), as strings. */
  whens: string[];
  /** Undecided conditions of `if` statements around it. */
  conds: string[];
  line: number;
}

export interface FilterFileCall {
  args: Val[];
  kwargs: Record<string, Val>;
  /** The working directory (relative to the stage) of a `with working_dir(…)` around it. */
  cwd: string;
  conds: string[];
  line: number;
  method: string;
}

const DIRECTIVES = new Set(['version', 'depends_on', 'patch', 'resource', 'variant', 'extends', 'conflicts', 'requires', 'provides', 'license', 'maintainers', 'build_system', 'redistribute', 'can_splice']);
export const STAGE = '\u0000STAGE';
const unknown = (text: string): Val => ({ k: 'unknown', text });
const MAX_STEPS = 200_000;
const MAX_CALL_DEPTH = 12;

class Return {
  constructor(readonly value: Val) {}
}
class BudgetExceeded extends Error {}

/** Python truthiness of a value: a boolean, or the condition it stands for. */
function truth(v: Val, text: string): boolean | string {
  switch (v.k) {
    case 'bool':
      return v.v;
    case 'none':
      return false;
    case 'num':
      return v.v !== 0;
    case 'str':
      return v.v !== '';
    case 'list':
      return v.items.length > 0 ? (v.items.every((i) => i.conds.length === 0) ? true : text) : false;
    case 'dict':
      return v.entries.length > 0;
    case 'cond':
      return v.text;
    case 'version':
    case 'func':
    case 'builtin':
    case 'obj':
    case 'define':
    case 'ctx':
      return true;
    default:
      return text;
  }
}

/** A value as text inside a string (an f-string field, str(), join): unknown parts show as {their source}. */
export function show(v: Val): string {
  switch (v.k) {
    case 'str':
      return v.v;
    case 'num':
      return String(v.v);
    case 'bool':
      return v.v ? 'True' : 'False';
    case 'none':
      return 'None';
    case 'version':
      return v.v;
    case 'list':
      return `[${v.items.map((i) => show(i.v)).join(', ')}]`;
    case 'define':
      return `-D${v.name}=${show(v.value)}`;
    case 'cond':
    case 'unknown':
      return `{${v.text}}`;
    default:
      return `{${v.k}}`;
  }
}

function equal(a: Val, b: Val): boolean {
  if (a === b) return true;
  if (a.k !== b.k) return false;
  if ((a.k === 'str' || a.k === 'num' || a.k === 'bool' || a.k === 'version') && a.v === (b as typeof a).v) return true;
  if (a.k === 'none') return true;
  if ((a.k === 'cond' || a.k === 'unknown') && a.text === (b as typeof a).text) return true;
  return false;
}

export interface EvalOptions {
  /** The version the recipe is read for. */
  version: string;
  source: string;
}

export class SpackEvaluator {
  readonly directives: Directive[] = [];
  readonly filterFiles: FilterFileCall[] = [];
  /** Top-level names of the module (imports are unknown). */
  readonly module = new Map<string, Val>();
  /** The package class's attributes and methods, with those of the base classes walked before it. */
  readonly classAttrs = new Map<string, Val>();
  private steps = 0;
  private callDepth = 0;
  private conds: string[] = [];
  private whens: string[] = [];
  private cwd: string[] = [];
  private defaults: Record<string, Val>[] = [];
  private currentMethod = '';
  /** Set when a walk ran out of its budget. */
  budgetExceeded = false;

  constructor(private readonly o: EvalOptions) {}

  private text(e: { start: number; end: number }): string {
    return this.o.source.slice(e.start, e.end).replace(/\s+/g, ' ').slice(0, 200);
  }

  private step(): void {
    if (++this.steps > MAX_STEPS) throw new BudgetExceeded();
  }

  /** Runs the module's top level: definitions and classes (their bodies, which hold the directives). */
  runModule(stmts: Stmt[], pickClass: (name: string, bases: Expr[]) => boolean, base?: (name: string) => Stmt[] | undefined): string | undefined {
    let chosen: string | undefined;
    try {
      for (const s of stmts) {
        if (s.t === 'class') {
          if (!pickClass(s.name, s.bases)) {
            this.module.set(s.name, unknown(s.name));
            continue;
          }
          chosen = s.name;
          // Base classes of the tree's build systems add their directives first (ROCmPackage's variants).
          for (const b of s.bases) {
            if (b.t !== 'name' || !base) continue;
            const body = base(b.id);
            if (body) this.execBlock(body, this.classAttrs);
          }
          this.execBlock(s.body, this.classAttrs);
        } else if (s.t === 'def') this.module.set(s.name, { k: 'func', def: s, bound: false });
        else if (s.t === 'assign') this.exec(s, this.module);
      }
    } catch (err) {
      if (err instanceof BudgetExceeded) this.budgetExceeded = true;
      else throw err;
    }
    return chosen;
  }

  /** Calls a method of the package class (cmake_args, url_for_version, patch …) with the given arguments. */
  callMethod(name: string, args: Val[] = []): Val | undefined {
    const m = this.classAttrs.get(name);
    if (!m || m.k !== 'func') return undefined;
    const saved = this.currentMethod;
    this.currentMethod = name;
    try {
      return this.call(m, args, {}, name);
    } catch (err) {
      if (err instanceof BudgetExceeded) {
        this.budgetExceeded = true;
        return unknown(`${name}() ran out of the walk's budget`);
      }
      throw err;
    } finally {
      this.currentMethod = saved;
    }
  }

  /** A class attribute (a property's value when it is one). */
  attribute(name: string): Val | undefined {
    const v = this.classAttrs.get(name);
    if (v?.k === 'func' && v.def.decorators.some((d) => d.t === 'name' && d.id === 'property')) return this.callMethod(name);
    return v;
  }

  /** Methods of the class that Spack runs around the build phases (@run_before / @run_after), and patch(). */
  hookMethods(): string[] {
    const out: string[] = [];
    for (const [name, v] of this.classAttrs) {
      if (v.k !== 'func') continue;
      if (name === 'patch' || v.def.decorators.some((d) => d.t === 'call' && d.fn.t === 'name' && (d.fn.id === 'run_before' || d.fn.id === 'run_after'))) out.push(name);
    }
    return out;
  }

  private execBlock(stmts: Stmt[], scope: Map<string, Val>): void {
    for (const s of stmts) this.exec(s, scope);
  }

  /** Runs a block under an undecided condition: its assignments that change a name make that name unknown afterwards. */
  private branch(stmts: Stmt[], scope: Map<string, Val>, cond: string): Map<string, Val> {
    const copy = new Map(scope);
    this.conds.push(cond);
    try {
      this.execBlock(stmts, copy);
    } catch (err) {
      // A return in an undecided branch: the function's result depends on it.
      if (!(err instanceof Return)) throw err;
      copy.set('\u0000return', err.value);
    } finally {
      this.conds.pop();
    }
    return copy;
  }

  private merge(scope: Map<string, Val>, branches: Map<string, Val>[], cond: string): void {
    const names = new Set(branches.flatMap((b) => [...b.keys()]));
    for (const n of names) {
      const values = branches.map((b) => b.get(n) ?? scope.get(n));
      const first = values[0];
      if (first !== undefined && values.every((v) => v !== undefined && equal(v, first))) scope.set(n, first);
      else if (n === '\u0000return') scope.set(n, unknown(`a result that depends on ${cond}`));
      else scope.set(n, unknown(`${n} (depends on ${cond})`));
    }
  }

  private exec(s: Stmt, scope: Map<string, Val>): void {
    this.step();
    switch (s.t) {
      case 'expr':
        this.eval(s.e, scope);
        return;
      case 'assign': {
        const v = this.eval(s.value, scope);
        for (const target of s.targets) {
          if (s.op) {
            const old = this.eval(target, scope);
            if (s.op === '+' && old.k === 'list' && v.k === 'list') {
              old.items.push(...v.items.map((i) => ({ v: i.v, conds: [...this.conds, ...i.conds] })));
              continue;
            }
            this.bind(target, this.binop(s.op, old, v, s.value), scope);
          } else this.bind(target, v, scope);
        }
        return;
      }
      case 'if':
        this.execIf(s, scope);
        return;
      case 'for':
        this.execFor(s, scope);
        return;
      case 'with':
        this.execWith(s, scope);
        return;
      case 'def':
        scope.set(s.name, { k: 'func', def: s, bound: scope === this.classAttrs });
        return;
      case 'class':
        scope.set(s.name, unknown(s.name));
        return;
      case 'return':
        throw new Return(s.value ? this.eval(s.value, scope) : { k: 'none' });
      case 'try':
        this.execBlock(s.body, scope);
        this.execBlock(s.orelse, scope);
        this.execBlock(s.finalbody, scope);
        return;
      default:
        return;
    }
  }

  /** An if/elif/else: a decided test runs its branch; undecided ones run each branch on a copy and merge what they bind. */
  private execIf(s: Extract<Stmt, { t: 'if' }>, scope: Map<string, Val>): void {
    const branches: Map<string, Val>[] = [];
    const negs: string[] = [];
    for (const [test, body] of s.branches) {
      const t = truth(this.eval(test, scope), this.text(test));
      if (t === true) {
        if (branches.length === 0) {
          this.execBlock(body, scope);
          return;
        }
        branches.push(this.branch(body, scope, negs.join(' and ')));
        this.merge(scope, branches, this.text(s));
        return;
      }
      if (t === false) continue;
      branches.push(this.branch(body, scope, [...negs, t].join(' and ')));
      negs.push(`not (${t})`);
    }
    if (branches.length === 0) {
      this.execBlock(s.orelse, scope);
      return;
    }
    branches.push(this.branch(s.orelse, scope, negs.join(' and ')));
    this.merge(scope, branches, this.text(s));
    const ret = scope.get('\u0000return');
    if (ret) {
      scope.delete('\u0000return');
      // Every path returned: the result is the merged one.
      if (branches.every((b) => b.has('\u0000return'))) throw new Return(ret);
    }
  }

  /** A for loop over a known list (each item under its own conditions) or dict; over anything else the body once. */
  private execFor(s: Extract<Stmt, { t: 'for' }>, scope: Map<string, Val>): void {
    const it = this.eval(s.iter, scope);
    if (it.k === 'list') {
      for (const item of it.items) {
        this.step();
        this.bind(s.target, item.v, scope);
        if (item.conds.length > 0) {
          this.conds.push(...item.conds);
          try {
            this.execBlock(s.body, scope);
          } finally {
            this.conds.splice(this.conds.length - item.conds.length);
          }
        } else this.execBlock(s.body, scope);
      }
      return;
    }
    if (it.k === 'dict') {
      for (const [key] of it.entries) {
        this.bind(s.target, key, scope);
        this.execBlock(s.body, scope);
      }
      return;
    }
    // Over something unknown: the body once, its loop variable unknown.
    this.bindUnknown(s.target, scope);
    this.execBlock(s.body, scope);
  }

  /** A with block: `when(…)`, `working_dir(…)` and `default_args(…)` apply to the directives inside it. */
  private execWith(s: Extract<Stmt, { t: 'with' }>, scope: Map<string, Val>): void {
    const entered: Val[] = [];
    for (const [e, as] of s.items) {
      const v = this.eval(e, scope);
      entered.push(v);
      if (v.k === 'ctx' && v.kind === 'when') this.whens.push(v.arg && v.arg.k === 'str' ? v.arg.v : show(v.arg ?? unknown('?')));
      else if (v.k === 'ctx' && v.kind === 'working_dir') this.cwd.push(v.arg ? show(v.arg) : '{?}');
      else if (v.k === 'ctx' && v.kind === 'default_args') this.defaults.push(v.kwargs ?? {});
      if (as) this.bindUnknown(as, scope);
    }
    try {
      this.execBlock(s.body, scope);
    } finally {
      for (const v of entered.reverse()) {
        if (v.k === 'ctx' && v.kind === 'when') this.whens.pop();
        else if (v.k === 'ctx' && v.kind === 'working_dir') this.cwd.pop();
        else if (v.k === 'ctx' && v.kind === 'default_args') this.defaults.pop();
      }
    }
  }

  private bind(target: Expr, v: Val, scope: Map<string, Val>): void {
    if (target.t === 'name') scope.set(target.id, v);
    else if (target.t === 'tuple' || target.t === 'list') {
      const items = v.k === 'list' ? v.items.map((i) => i.v) : [];
      target.items.forEach((t, i) => this.bind(t, items[i] ?? unknown(this.text(t)), scope));
    } else if (target.t === 'sub') {
      const obj = this.eval(target.obj, scope);
      if (obj.k === 'dict') {
        const key = this.eval(target.index, scope);
        const at = obj.entries.findIndex(([k]) => equal(k, key));
        if (at >= 0) obj.entries[at] = [key, v];
        else obj.entries.push([key, v]);
      }
    }
  }

  private bindUnknown(target: Expr, scope: Map<string, Val>): void {
    if (target.t === 'name') scope.set(target.id, unknown(target.id));
    else if (target.t === 'tuple' || target.t === 'list') for (const t of target.items) this.bindUnknown(t, scope);
  }

  private lookup(name: string, scope: Map<string, Val>): Val {
    const v = scope.get(name) ?? this.module.get(name);
    if (v) return v;
    if (name === 'self' || name === 'cls') return { k: 'obj', kind: 'self' };
    if (DIRECTIVES.has(name) || BUILTINS.has(name)) return { k: 'builtin', name };
    return unknown(name);
  }

  eval(e: Expr, scope: Map<string, Val>): Val {
    this.step();
    switch (e.t) {
      case 'str':
        return { k: 'str', v: e.v };
      case 'fstr':
        return { k: 'str', v: e.parts.map((p) => (typeof p === 'string' ? p : show(this.eval(p, scope)))).join('') };
      case 'num':
        return { k: 'num', v: e.v };
      case 'const':
        return e.v === null ? { k: 'none' } : { k: 'bool', v: e.v };
      case 'name':
        return this.lookup(e.id, scope);
      case 'list':
      case 'tuple':
      case 'set':
        return { k: 'list', items: e.items.map((i) => ({ v: this.eval(i, scope), conds: [] })), ...(e.t === 'tuple' ? { tuple: true } : {}) };
      case 'dict':
        return { k: 'dict', entries: e.entries.map(([k, v]) => [this.eval(k, scope), this.eval(v, scope)]) };
      case 'attr':
        return this.attr(this.eval(e.obj, scope), e.name, e);
      case 'sub': {
        const obj = this.eval(e.obj, scope);
        const idx = this.eval(e.index, scope);
        if (obj.k === 'list' && idx.k === 'num') return obj.items.at(idx.v)?.v ?? unknown(this.text(e));
        if (obj.k === 'dict') return obj.entries.find(([k]) => equal(k, idx))?.[1] ?? unknown(this.text(e));
        return unknown(this.text(e));
      }
      case 'call':
        return this.callExpr(e, scope);
      case 'bin':
        return this.binop(e.op, this.eval(e.l, scope), this.eval(e.r, scope), e);
      case 'cmp':
        return this.compare(e, scope);
      case 'bool': {
        // and/or: decided operands fold; undecided ones become the condition's text.
        const texts: string[] = [];
        for (const x of e.values) {
          const v = this.eval(x, scope);
          const t = truth(v, this.text(x));
          if (t === (e.op === 'or')) return e.op === 'or' && v.k !== 'bool' && v.k !== 'cond' ? v : { k: 'bool', v: e.op === 'or' };
          if (typeof t === 'string') texts.push(t);
          else if (e.values.length === 1) return v;
        }
        if (texts.length === 0) return { k: 'bool', v: e.op === 'and' };
        return { k: 'cond', text: texts.join(` ${e.op} `) };
      }
      case 'not': {
        const t = truth(this.eval(e.v, scope), this.text(e.v));
        return typeof t === 'boolean' ? { k: 'bool', v: !t } : { k: 'cond', text: `not (${t})` };
      }
      case 'neg': {
        const v = this.eval(e.v, scope);
        return v.k === 'num' ? { k: 'num', v: -v.v } : unknown(this.text(e));
      }
      case 'ifexp': {
        const t = truth(this.eval(e.test, scope), this.text(e.test));
        if (t === true) return this.eval(e.body, scope);
        if (t === false) return this.eval(e.orelse, scope);
        const a = this.eval(e.body, scope);
        const b = this.eval(e.orelse, scope);
        return equal(a, b) ? a : unknown(this.text(e));
      }
      default:
        return unknown(this.text(e));
    }
  }

  private binop(op: string, l: Val, r: Val, e: { start: number; end: number }): Val {
    if (op === '+') {
      if (l.k === 'str' && r.k === 'str') return { k: 'str', v: l.v + r.v };
      if (l.k === 'num' && r.k === 'num') return { k: 'num', v: l.v + r.v };
      if (l.k === 'list' && r.k === 'list') return { k: 'list', items: [...l.items, ...r.items] };
    }
    if (op === '-' && l.k === 'num' && r.k === 'num') return { k: 'num', v: l.v - r.v };
    if (op === '*' && l.k === 'num' && r.k === 'num') return { k: 'num', v: l.v * r.v };
    if (op === '%' && l.k === 'str') {
      const args = r.k === 'list' ? r.items.map((i) => i.v) : [r];
      let n = 0;
      return { k: 'str', v: l.v.replace(/%[sdr]/g, () => show(args[n++] ?? unknown('?'))) };
    }
    if (op === '/' && (l.k === 'str' || l.k === 'unknown') && r.k === 'str') return { k: 'str', v: `${show(l)}/${r.v}` };
    return unknown(this.text(e));
  }

  private compare(e: Extract<Expr, { t: 'cmp' }>, scope: Map<string, Val>): Val {
    let left = this.eval(e.operands[0]!, scope);
    const undecided: string[] = [];
    for (let i = 0; i < e.ops.length; i++) {
      const op = e.ops[i]!;
      const right = this.eval(e.operands[i + 1]!, scope);
      const r = this.compareOne(op, left, right);
      if (r === false) return { k: 'bool', v: false };
      if (typeof r === 'string') undecided.push(r);
      else if (r === undefined) undecided.push(this.text(e));
      left = right;
    }
    return undecided.length === 0 ? { k: 'bool', v: true } : { k: 'cond', text: undecided.join(' and ') };
  }

  /** One comparison: true, false, a condition's text, or undefined (not decided, shown as written). */
  private compareOne(op: string, l: Val, r: Val): boolean | string | undefined {
    if ((op === 'in' || op === 'not in') && r.k === 'obj' && r.kind === 'spec' && l.k === 'str') {
      const d = decideSpec(l.v, this.o.version);
      const yes = d === true ? true : d === false ? false : d.residue;
      if (typeof yes === 'boolean') return op === 'in' ? yes : !yes;
      return op === 'in' ? yes : `not (${yes})`;
    }
    if ((op === 'in' || op === 'not in') && r.k === 'list' && l.k !== 'unknown' && l.k !== 'cond' && r.items.every((i) => i.v.k !== 'unknown' && i.conds.length === 0)) {
      const hit = r.items.some((i) => equal(i.v, l));
      return op === 'in' ? hit : !hit;
    }
    if ((op === 'in' || op === 'not in') && l.k === 'str' && r.k === 'str') return op === 'in' ? r.v.includes(l.v) : !r.v.includes(l.v);
    const lv = l.k === 'version' ? l.v : l.k === 'str' && r.k === 'version' ? l.v : undefined;
    const rv = r.k === 'version' ? r.v : r.k === 'str' && l.k === 'version' ? r.v : undefined;
    if (lv !== undefined && rv !== undefined && ['<', '<=', '>', '>=', '==', '!='].includes(op)) {
      const c = compareSpackVersions(lv, rv);
      return op === '<' ? c < 0 : op === '<=' ? c <= 0 : op === '>' ? c > 0 : op === '>=' ? c >= 0 : op === '==' ? c === 0 : c !== 0;
    }
    if ((op === '==' || op === '!=' || op === 'is' || op === 'is not') && l.k !== 'unknown' && r.k !== 'unknown' && l.k !== 'cond' && r.k !== 'cond' && ['str', 'num', 'bool', 'none'].includes(l.k) && ['str', 'num', 'bool', 'none'].includes(r.k)) {
      const same = equal(l, r);
      return op === '==' || op === 'is' ? same : !same;
    }
    if (l.k === 'num' && r.k === 'num' && ['<', '<=', '>', '>='].includes(op)) return op === '<' ? l.v < r.v : op === '<=' ? l.v <= r.v : op === '>' ? l.v > r.v : l.v >= r.v;
    return undefined;
  }

  private attr(obj: Val, name: string, e: Expr): Val {
    if (obj.k === 'obj' && obj.kind === 'self') {
      switch (name) {
        case 'spec':
          return { k: 'obj', kind: 'spec' };
        case 'version':
          return { k: 'version', v: this.o.version };
        case 'run_tests':
          return { k: 'cond', text: 'self.run_tests' };
        case 'stage':
          return { k: 'obj', kind: 'stage' };
        case 'define':
        case 'define_from_variant':
          return { k: 'builtin', name };
        default: {
          const v = this.classAttrs.get(name);
          if (v?.k === 'func') {
            if (v.def.decorators.some((d) => d.t === 'name' && d.id === 'property')) return this.call(v, [], {}, name);
            return { ...v, bound: true };
          }
          return v ?? unknown(this.text(e));
        }
      }
    }
    if (obj.k === 'obj' && obj.kind === 'spec') {
      if (name === 'version') return { k: 'version', v: this.o.version };
      if (name === 'satisfies') return { k: 'builtin', name: 'satisfies' };
      return unknown(this.text(e));
    }
    if (obj.k === 'obj' && obj.kind === 'stage' && name === 'source_path') return { k: 'str', v: STAGE };
    if (obj.k === 'str' || obj.k === 'version' || obj.k === 'list' || obj.k === 'dict') return { k: 'builtin', name: `.${name}`, self: obj };
    if (obj.k === 'unknown' && obj.text === 'os.path' && name === 'join') return { k: 'builtin', name: 'join_path' };
    return unknown(this.text(e));
  }

  private callExpr(e: Extract<Expr, { t: 'call' }>, scope: Map<string, Val>): Val {
    const fn = this.eval(e.fn, scope);
    const args = e.args.map((a) => this.eval(a, scope));
    const kwargs: Record<string, Val> = {};
    for (const [k, v] of e.kwargs) kwargs[k] = this.eval(v, scope);
    if (fn.k === 'func') return this.call(fn, args, kwargs, this.text(e.fn));
    if (fn.k === 'builtin') return this.builtin(fn, args, kwargs, e);
    return unknown(this.text(e));
  }

  private call(fn: Extract<Val, { k: 'func' }>, args: Val[], kwargs: Record<string, Val>, label: string): Val {
    if (this.callDepth >= MAX_CALL_DEPTH) return unknown(`${label}(…) (calls nested too deep)`);
    const scope = new Map<string, Val>();
    const params = fn.def.params.filter((p) => p !== 'self' && p !== 'cls');
    params.forEach((p, i) => scope.set(p, args[i] ?? kwargs[p] ?? unknown(p)));
    this.callDepth++;
    const savedConds = this.conds;
    this.conds = [...this.conds];
    try {
      this.execBlock(fn.def.body, scope);
      return { k: 'none' };
    } catch (err) {
      if (err instanceof Return) return err.value;
      throw err;
    } finally {
      this.callDepth--;
      this.conds = savedConds;
    }
  }

  private directive(name: string, args: Val[], kwargs: Record<string, Val>, e: Expr): Val {
    const merged = Object.assign({}, ...this.defaults, kwargs) as Record<string, Val>;
    this.directives.push({ name, args, kwargs: merged, whens: [...this.whens], conds: [...this.conds], line: e.line });
    return { k: 'none' };
  }

  private builtin(fn: Extract<Val, { k: 'builtin' }>, args: Val[], kwargs: Record<string, Val>, e: Expr): Val {
    const s = (v: Val | undefined) => (v && v.k === 'str' ? v.v : undefined);
    if (DIRECTIVES.has(fn.name)) return this.directive(fn.name, args, kwargs, e);
    switch (fn.name) {
      case 'when':
        return { k: 'ctx', kind: 'when', ...(args[0] ? { arg: args[0] } : {}) };
      case 'working_dir':
        return { k: 'ctx', kind: 'working_dir', ...(args[0] ? { arg: args[0] } : {}) };
      case 'default_args':
        return { k: 'ctx', kind: 'default_args', kwargs };
      case 'satisfies': {
        const c = s(args[0]);
        if (c === undefined) return { k: 'cond', text: this.text(e) };
        const d = decideSpec(c, this.o.version);
        return typeof d === 'boolean' ? { k: 'bool', v: d } : { k: 'cond', text: `satisfies("${d.residue}")` };
      }
      case 'Version':
        return s(args[0]) !== undefined ? { k: 'version', v: s(args[0])! } : args[0]?.k === 'version' ? args[0] : unknown(this.text(e));
      case 'str':
        return args[0] && args[0].k !== 'unknown' ? { k: 'str', v: show(args[0]) } : unknown(this.text(e));
      case 'len':
        return args[0]?.k === 'list' ? { k: 'num', v: args[0].items.length } : args[0]?.k === 'str' ? { k: 'num', v: args[0].v.length } : unknown(this.text(e));
      case 'list':
      case 'tuple':
      case 'sorted':
        return args[0]?.k === 'list' ? { k: 'list', items: [...args[0].items] } : unknown(this.text(e));
      case 'join_path':
        return args.every((a) => a.k === 'str') ? { k: 'str', v: args.map((a) => (a as { v: string }).v).join('/') } : { k: 'str', v: args.map(show).join('/') };
      case 'define':
        if (s(args[0]) !== undefined) return { k: 'define', name: s(args[0])!, value: args[1] ?? { k: 'none' } };
        return unknown(this.text(e));
      case 'define_from_variant': {
        const name = s(args[0]);
        if (name === undefined) return unknown(this.text(e));
        const variant = s(args[1]) ?? name.toLowerCase();
        return { k: 'define', name, value: { k: 'unknown', text: `variant:${variant}` } };
      }
      case 'filter_file':
        this.filterFiles.push({ args, kwargs, cwd: this.cwd.join('/'), conds: [...this.conds], line: e.line, method: this.currentMethod });
        return { k: 'none' };
      default:
        break;
    }
    if (fn.name.startsWith('.') && fn.self) return this.method(fn.name.slice(1), fn.self, args, e);
    return unknown(this.text(e));
  }

  /** Methods of strings, versions and lists that recipes use. */
  private method(name: string, self: Val, args: Val[], e: Expr): Val {
    if (self.k === 'str') {
      switch (name) {
        case 'format':
          return { k: 'str', v: self.v.replace(/\{(\d*)(?:[:!][^}]*)?\}/g, (_m, n: string, _o: number) => show(args[n === '' ? 0 : Number(n)] ?? unknown('?'))) };
        case 'join':
          return args[0]?.k === 'list' ? { k: 'str', v: args[0].items.map((i) => show(i.v)).join(self.v) } : unknown(this.text(e));
        case 'replace':
          return args[0]?.k === 'str' && args[1]?.k === 'str' ? { k: 'str', v: self.v.split(args[0].v).join(args[1].v) } : unknown(this.text(e));
        case 'lower':
          return { k: 'str', v: self.v.toLowerCase() };
        case 'upper':
          return { k: 'str', v: self.v.toUpperCase() };
        case 'strip':
          return { k: 'str', v: self.v.trim() };
        case 'startswith':
          return args[0]?.k === 'str' ? { k: 'bool', v: self.v.startsWith(args[0].v) } : unknown(this.text(e));
        case 'endswith':
          return args[0]?.k === 'str' ? { k: 'bool', v: self.v.endsWith(args[0].v) } : unknown(this.text(e));
        case 'split':
          return { k: 'list', items: self.v.split(args[0]?.k === 'str' ? args[0].v : /\s+/).map((v) => ({ v: { k: 'str', v }, conds: [] })) };
        default:
          return unknown(this.text(e));
      }
    }
    if (self.k === 'version') {
      const parts = self.v.split('.');
      switch (name) {
        case 'up_to':
          return args[0]?.k === 'num' ? { k: 'version', v: parts.slice(0, args[0].v).join('.') } : unknown(this.text(e));
        case 'dotted':
        case 'string':
          return { k: 'str', v: self.v };
        case 'underscored':
          return { k: 'str', v: parts.join('_') };
        case 'dashed':
          return { k: 'str', v: parts.join('-') };
        case 'joined':
          return { k: 'str', v: parts.join('') };
        default:
          return unknown(this.text(e));
      }
    }
    if (self.k === 'list') {
      if (name === 'append') {
        if (args[0]) self.items.push({ v: args[0], conds: [...this.conds] });
        return { k: 'none' };
      }
      if (name === 'extend') {
        if (args[0]?.k === 'list') self.items.push(...args[0].items.map((i) => ({ v: i.v, conds: [...this.conds, ...i.conds] })));
        else if (args[0]) self.items.push({ v: unknown(`the items of ${show(args[0])}`), conds: [...this.conds] });
        return { k: 'none' };
      }
      if (name === 'insert' && args[1]) {
        self.items.splice(args[0]?.k === 'num' ? args[0].v : 0, 0, { v: args[1], conds: [...this.conds] });
        return { k: 'none' };
      }
    }
    if (self.k === 'dict' && name === 'get') {
      return self.entries.find(([k]) => args[0] && equal(k, args[0]))?.[1] ?? args[1] ?? { k: 'none' };
    }
    return unknown(this.text(e));
  }
}

const BUILTINS = new Set(['when', 'working_dir', 'default_args', 'Version', 'str', 'len', 'list', 'tuple', 'sorted', 'join_path', 'filter_file', 'define', 'define_from_variant']);
