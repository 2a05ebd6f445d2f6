import path from 'node:path';
import { evaluateCondition, truthOf, UNKNOWN, type CondArg, type CondScope, type Value } from './cmake-condition.js';
import { parseCMake, splitList, type CMakeArgument, type CMakeCommand } from './cmake-lexer.js';
import type { Location } from './cmake-facts.js';

/**
 * Whether a project's CMake, configured with the -D values an ebuild passes,
 * reaches a download: FetchContent, ExternalProject, CPM, download_project,
 * file(DOWNLOAD), or git/curl/wget run by execute_process or a custom
 * command. Portage builds with network-sandbox, where each of these fails.
 *
 * Unlike the rest of facts/ this follows control flow, as CMake would: if()
 * with the values known from the -D options and the project's own set(),
 * option() and cmake_dependent_option(); add_subdirectory() and include() of
 * the project's files; its functions and macros. What the configure step
 * computes (find_package results, file system tests, targets) is unknown: a
 * branch on it is followed both ways, and a download reached only so is
 * reported as not certain. A FetchContent dependency the ebuild redirects
 * (FETCHCONTENT_SOURCE_DIR_<NAME>, FETCHCONTENT_TRY_FIND_PACKAGE_MODE=ALWAYS)
 * or that the project declares with FIND_PACKAGE_ARGS finds the system's copy
 * first, and is reported as avoided.
 */

/** Where the project's files come from: virtual absolute paths ("/WORKDIR/hipblaslt/CMakeLists.txt"). */
export interface ReachSource {
  /** The project's top directory (S). */
  root: string;
  /** A file's text; undefined when absent; an error when its tree cannot be read there. */
  read(abs: string): Promise<string | undefined | { error: string }>;
}

export interface NetworkUse {
  via: 'FetchContent' | 'ExternalProject' | 'CPM' | 'download_project' | 'file(DOWNLOAD)' | 'execute_process' | 'custom command';
  name: string;
  where: Location;
  /** Reached whatever the unknown values are; false when only some branch of an unknown condition reaches it. */
  certain: boolean;
  detail: string;
}

export interface AvoidedUse {
  via: NetworkUse['via'];
  name: string;
  where: Location;
  how: string;
}

export interface ReachReport {
  downloads: NetworkUse[];
  avoided: AvoidedUse[];
  /** What could not be followed (a file outside the trees read, a limit), with where. */
  unread: { where?: Location; reason: string }[];
  files: number;
}

const MAX_STEPS = 200_000;
const MAX_DEPTH = 64;

/** A scope of normal variables; the cache is shared by all. */
class Scope implements CondScope {
  readonly vars = new Map<string, Value>();
  constructor(
    readonly cache: Map<string, Value>,
    readonly parent?: Scope,
    /** A macro's scope: only its parameters are its own, every other write goes to the caller's. */
    readonly macroOf?: { caller: Scope; own: Set<string> },
  ) {
    if (parent) for (const [k, v] of parent.vars) this.vars.set(k, v);
  }
  get(name: string): Value | undefined {
    if (this.vars.has(name)) return this.vars.get(name);
    return this.cache.get(name);
  }
  cached(name: string): Value | undefined {
    return this.cache.get(name);
  }
  set(name: string, value: Value): void {
    this.vars.set(name, value);
    if (this.macroOf && !this.macroOf.own.has(name)) this.macroOf.caller.set(name, value);
  }
  unset(name: string): void {
    this.vars.delete(name);
    if (this.macroOf && !this.macroOf.own.has(name)) this.macroOf.caller.unset(name);
  }
}

/** The commands of a file, with their blocks matched. */
type Node =
  | { kind: 'command'; c: CMakeCommand }
  | { kind: 'if'; branches: { cond?: CMakeArgument[]; body: Node[] }[]; line: number }
  | { kind: 'loop'; c: CMakeCommand; body: Node[] }
  | { kind: 'define'; macro: boolean; c: CMakeCommand; body: Node[] }
  | { kind: 'block'; body: Node[] };

const OPENERS: Record<string, string> = { if: 'endif', foreach: 'endforeach', while: 'endwhile', function: 'endfunction', macro: 'endmacro', block: 'endblock' };

/** Commands into blocks; an unmatched end or a missing one is an error CMake would report too. */
function structure(commands: CMakeCommand[]): { nodes: Node[] } | { error: string; line: number } {
  let i = 0;
  const parse = (end: string | undefined): Node[] | { error: string; line: number } => {
    const out: Node[] = [];
    while (i < commands.length) {
      const c = commands[i]!;
      if (end && (c.name === end || (end === 'endif' && (c.name === 'elseif' || c.name === 'else')))) return out;
      if (Object.values(OPENERS).includes(c.name) || c.name === 'elseif' || c.name === 'else') return { error: `${c.name}() without its opening command`, line: c.line };
      i++;
      const close = OPENERS[c.name];
      if (!close) {
        out.push({ kind: 'command', c });
        continue;
      }
      if (c.name === 'if') {
        const branches: { cond?: CMakeArgument[]; body: Node[] }[] = [];
        let cond: CMakeArgument[] | undefined = c.args;
        for (;;) {
          const body = parse('endif');
          if ('error' in body) return body;
          branches.push({ ...(cond ? { cond } : {}), body });
          const at = commands[i];
          if (!at) return { error: 'if() without endif()', line: c.line };
          i++;
          if (at.name === 'endif') break;
          cond = at.name === 'elseif' ? at.args : undefined;
        }
        out.push({ kind: 'if', branches, line: c.line });
        continue;
      }
      const body = parse(close);
      if ('error' in body) return body;
      if (commands[i]?.name !== close) return { error: `${c.name}() without ${close}()`, line: c.line };
      i++;
      if (c.name === 'function' || c.name === 'macro') out.push({ kind: 'define', macro: c.name === 'macro', c, body });
      else if (c.name === 'block') out.push({ kind: 'block', body });
      else out.push({ kind: 'loop', c, body });
    }
    return end ? { error: `missing ${end}()`, line: commands.at(-1)?.line ?? 1 } : out;
  };
  const nodes = parse(undefined);
  return 'error' in nodes ? nodes : { nodes };
}

/** `${NAME}`, `$CACHE{NAME}` and `$ENV{NAME}` expanded; UNKNOWN when any reference is. */
function expand(text: string, scope: Scope): Value {
  let unknown = false;
  const read = (s: string, i: number): { text: string; end: number } | undefined => {
    let name = '';
    while (i < s.length && s[i] !== '}') {
      if (s[i] === '$' && /^(\{|CACHE\{|ENV\{)/.test(s.slice(i + 1))) {
        const inner = ref(s, i);
        if (!inner) return undefined;
        name += inner.text;
        i = inner.end;
        continue;
      }
      name += s[i++];
    }
    return i < s.length ? { text: name, end: i + 1 } : undefined;
  };
  const ref = (s: string, i: number): { text: string; end: number } | undefined => {
    const kind = s.startsWith('${', i) ? '' : s.startsWith('$CACHE{', i) ? 'CACHE' : s.startsWith('$ENV{', i) ? 'ENV' : undefined;
    if (kind === undefined) return undefined;
    const r = read(s, i + kind.length + 2);
    if (!r) return undefined;
    const v = kind === 'ENV' ? UNKNOWN : kind === 'CACHE' ? scope.cached(r.text) : scope.get(r.text);
    if (v === UNKNOWN) unknown = true;
    return { text: v === UNKNOWN || v === undefined ? '' : v, end: r.end };
  };
  let out = '';
  for (let i = 0; i < text.length; ) {
    if (text[i] === '$') {
      const r = ref(text, i);
      if (r) {
        out += r.text;
        i = r.end;
        continue;
      }
    }
    out += text[i++];
  }
  return unknown ? UNKNOWN : out;
}

/** A command's arguments after expansion; an unquoted one that is UNKNOWN stays one unknown argument. */
function evaluate(args: CMakeArgument[], scope: Scope): CondArg[] {
  const out: CondArg[] = [];
  for (const a of args) {
    if (a.kind === 'bracket') out.push({ value: a.value, quoted: true });
    else if (a.kind === 'quoted') {
      const v = expand(a.value, scope);
      out.push({ value: v === UNKNOWN ? v : v.replace(/\\;/g, ';'), quoted: true });
    } else {
      const v = expand(a.value, scope);
      if (v === UNKNOWN) out.push({ value: UNKNOWN, quoted: false });
      else for (const p of splitList(v)) out.push({ value: p, quoted: false });
    }
  }
  return out;
}

const str = (v: Value | undefined): string | undefined => (v === UNKNOWN ? undefined : v);
const isName = (v: Value | undefined): v is string => typeof v === 'string' && /^[A-Za-z_][A-Za-z0-9_.+-]*$/.test(v);

interface Declaration {
  where: Location;
  args: Value[];
}

/** Why execution stops: return() (ends the file or function) or message(FATAL_ERROR) (ends configure). */
class Stop {
  constructor(readonly kind: 'return' | 'fatal') {}
}

interface Frame {
  scope: Scope;
  /** The current directory's source path, for include() and add_subdirectory(). */
  dir: string;
  file: string;
  certain: boolean;
  depth: number;
  /** Shared by a file's or function's commands: a return() may have run in a branch not certain to run. */
  exit: { maybe: boolean };
  /** Inside a function or macro of the project: where the outermost call was made (what a reviewer looks for). */
  calledFrom?: Location;
}

/** The values a condition or a command sees when its frame may already have returned. */
const uncertain = (f: Frame): Frame => ({ ...f, certain: false });

class Reach {
  readonly report: ReachReport = { downloads: [], avoided: [], unread: [], files: 0 };
  private steps = 0;
  private readonly functions = new Map<string, { macro: boolean; params: string[]; body: Node[]; file: string }>();
  private readonly declarations = new Map<string, Declaration>();
  readonly populated = new Set<string>();
  private readonly parsed = new Map<string, Promise<{ nodes: Node[] } | { error: string; line?: number } | undefined>>();
  /** Writes made where execution is not certain: unknown once the uncertain part is left. */
  private pending: { scope: Scope; name: string; cache: boolean }[] = [];
  /** A fatal error may have happened in a branch not certain to run: nothing after it is certain. */
  private mayHaveFailed = false;

  constructor(
    private readonly src: ReachSource,
    private readonly cache: Map<string, Value>,
  ) {}

  /** A path for people: relative to S, or ${WORKDIR}/… for another source. */
  label(abs: string): string {
    if (abs === this.src.root || abs.startsWith(`${this.src.root}/`)) return path.posix.relative(this.src.root, abs) || '.';
    return abs.replace(/^\/WORKDIR\//, '${WORKDIR}/');
  }

  private async load(abs: string): Promise<{ nodes: Node[] } | { error: string; line?: number } | undefined> {
    let p = this.parsed.get(abs);
    if (!p) {
      p = (async () => {
        const text = await this.src.read(abs);
        if (text === undefined) return undefined;
        if (typeof text !== 'string') return text;
        this.report.files++;
        const parse = parseCMake(text);
        if (parse.errors.length > 0) return { error: parse.errors[0]!.message, line: parse.errors[0]!.line };
        return structure(parse.commands);
      })();
      this.parsed.set(abs, p);
    }
    return p;
  }

  async run(): Promise<ReachReport> {
    const scope = new Scope(this.cache);
    for (const [k, v] of [
      ['CMAKE_SOURCE_DIR', this.src.root],
      ['CMAKE_CURRENT_SOURCE_DIR', this.src.root],
      ['PROJECT_SOURCE_DIR', this.src.root],
      ['CMAKE_BINARY_DIR', '/BUILD'],
      ['CMAKE_CURRENT_BINARY_DIR', '/BUILD'],
      ['UNIX', '1'],
      ['LINUX', '1'],
      ['CMAKE_SYSTEM_NAME', 'Linux'],
      ['CMAKE_HOST_SYSTEM_NAME', 'Linux'],
    ] as const) {
      if (scope.get(k) === undefined) scope.set(k, v);
    }
    try {
      await this.runFile(`${this.src.root}/CMakeLists.txt`, { scope, dir: this.src.root, file: `${this.src.root}/CMakeLists.txt`, certain: true, depth: 0, exit: { maybe: false } }, true);
    } catch (err) {
      if (!(err instanceof Stop)) throw err;
    }
    return this.report;
  }

  /** Runs a file in `frame` (include() and the top file) or a new directory scope (add_subdirectory). */
  private async runFile(abs: string, frame: Frame, required: boolean, where?: Location): Promise<void> {
    if (frame.depth > MAX_DEPTH) {
      this.report.unread.push({ ...(where ? { where } : {}), reason: `more than ${MAX_DEPTH} nested files or calls: not followed` });
      return;
    }
    const loaded = await this.load(abs);
    if (loaded === undefined) {
      if (required) this.report.unread.push({ ...(where ? { where } : {}), reason: `${this.label(abs)} is not in the sources read` });
      return;
    }
    if ('error' in loaded) {
      this.report.unread.push({ where: { file: this.label(abs), line: loaded.line ?? 1 }, reason: loaded.error });
      return;
    }
    try {
      await this.block(loaded.nodes, { ...frame, file: abs, exit: { maybe: false } });
    } catch (err) {
      // return() ends the file (an include's or a directory's), nothing more.
      if (!(err instanceof Stop) || err.kind === 'fatal') throw err;
    }
  }

  private location(frame: Frame, line: number): Location {
    return { file: this.label(frame.file), line };
  }

  /** A variable set (in the cache with `cache`); unknown once the uncertain part it was set in is left. */
  write(frame: Frame, name: string, value: Value, cache = false): void {
    if (cache) this.cache.set(name, value);
    else frame.scope.set(name, value);
    if (!this.isCertain(frame)) this.pending.push({ scope: frame.scope, name, cache });
  }

  private isCertain(frame: Frame): boolean {
    return frame.certain && !frame.exit.maybe && !this.mayHaveFailed;
  }

  /** A branch that may not run has thrown: a return() may have ended the file or function, a fatal error configure. */
  private stoppedMaybe(err: unknown, frame: Frame): void {
    if (!(err instanceof Stop)) throw err;
    if (err.kind === 'fatal') this.mayHaveFailed = true;
    else frame.exit.maybe = true;
  }

  /** Leaving the part that was not certain: what it wrote is unknown from here on. */
  private settle(frame: Frame): void {
    if (!this.isCertain(frame)) return;
    for (const p of this.pending) {
      if (p.cache) this.cache.set(p.name, UNKNOWN);
      else p.scope.set(p.name, UNKNOWN);
    }
    this.pending = [];
  }

  private async block(nodes: Node[], frame: Frame): Promise<void> {
    for (const node of nodes) {
      if (++this.steps > MAX_STEPS) {
        this.report.unread.push({ reason: `more than ${MAX_STEPS} commands: the rest is not followed` });
        throw new Stop('fatal');
      }
      const f = this.isCertain(frame) ? frame : uncertain(frame);
      switch (node.kind) {
        case 'command':
          await this.command(node.c, f);
          break;
        case 'if':
          await this.conditional(node, f);
          break;
        case 'loop':
          await this.loop(node, f);
          break;
        case 'define': {
          const [name, ...params] = evaluate(node.c.args, f.scope).map((a) => str(a.value) ?? '');
          if (name) this.functions.set(name.toLowerCase(), { macro: node.macro, params, body: node.body, file: f.file });
          break;
        }
        case 'block': {
          const inner = { ...f, scope: new Scope(this.cache, f.scope) };
          await this.block(node.body, inner);
          break;
        }
      }
    }
  }

  /** if/elseif/else: the first branch whose condition holds; with an unknown condition, every branch that may run. */
  private async conditional(node: Extract<Node, { kind: 'if' }>, frame: Frame): Promise<void> {
    let certain = frame.certain;
    for (const b of node.branches) {
      const truth = b.cond ? evaluateCondition(evaluate(b.cond, frame.scope), frame.scope) : true;
      if (truth === false) continue;
      const inner = truth === UNKNOWN || !certain ? uncertain(frame) : frame;
      try {
        await this.block(b.body, inner);
      } catch (err) {
        // A return() or fatal error in a branch that may not run: what follows may not run either.
        if (inner.certain) throw err;
        this.stoppedMaybe(err, frame);
      }
      if (truth === true) break;
      certain = false;
    }
    this.settle(frame);
  }

  /** foreach over a known short list runs per item; any other loop runs its body once, not certainly. */
  private async loop(node: Extract<Node, { kind: 'loop' }>, frame: Frame): Promise<void> {
    const args = evaluate(node.c.args, frame.scope);
    const var0 = str(args[0]?.value);
    if (node.c.name === 'foreach' && var0 && args.every((a) => a.value !== UNKNOWN)) {
      const rest = args.slice(1).map((a) => a.value as string);
      let items: string[] | undefined;
      if (rest[0] === 'IN') {
        const lists = rest.indexOf('LISTS');
        const itemsAt = rest.indexOf('ITEMS');
        if (lists < 0 && itemsAt >= 0) items = rest.slice(itemsAt + 1);
        else if (lists >= 0 && itemsAt < 0) {
          const values = rest.slice(lists + 1).map((n) => frame.scope.get(n));
          if (values.every((v) => v !== UNKNOWN)) items = values.flatMap((v) => splitList((v as string | undefined) ?? ''));
        }
      } else if (rest[0] !== 'RANGE') items = rest;
      if (items && items.length <= 64) {
        for (const item of items) {
          frame.scope.set(var0, item);
          await this.block(node.body, frame);
        }
        return;
      }
    }
    if (var0 && node.c.name === 'foreach') frame.scope.set(var0, UNKNOWN);
    try {
      await this.block(node.body, uncertain(frame));
    } catch (err) {
      this.stoppedMaybe(err, frame);
    }
    this.settle(frame);
  }

  private async command(c: CMakeCommand, frame: Frame): Promise<void> {
    const name = c.name;
    const args = evaluate(c.args, frame.scope);
    const values = args.map((a) => a.value);
    const where = this.location(frame, c.line);
    const user = this.functions.get(name);
    if (user) return this.call(user, values, frame, where);
    const handler = BUILTINS[name];
    if (handler) await handler.call(this, values, frame, where, c);
  }

  private async call(fn: { macro: boolean; params: string[]; body: Node[]; file: string }, values: Value[], frame: Frame, where: Location): Promise<void> {
    const own = new Set<string>(['ARGC', 'ARGV', 'ARGN', ...fn.params, ...values.map((_, i) => `ARGV${i}`)]);
    const scope = fn.macro ? new Scope(this.cache, frame.scope, { caller: frame.scope, own }) : new Scope(this.cache, frame.scope);
    const list = (vs: Value[]): Value => (vs.some((v) => v === UNKNOWN) ? UNKNOWN : (vs as string[]).join(';'));
    scope.vars.set('ARGC', String(values.length));
    scope.vars.set('ARGV', list(values));
    scope.vars.set('ARGN', list(values.slice(fn.params.length)));
    values.forEach((v, i) => scope.vars.set(`ARGV${i}`, v));
    fn.params.forEach((p, i) => scope.vars.set(p, values[i] ?? ''));
    if (frame.depth >= MAX_DEPTH) {
      this.report.unread.push({ where, reason: `calls nested more than ${MAX_DEPTH} deep: not followed` });
      return;
    }
    try {
      await this.block(fn.body, { ...frame, file: fn.file, scope, depth: frame.depth + 1, exit: { maybe: false }, calledFrom: frame.calledFrom ?? where });
    } catch (err) {
      if (!(err instanceof Stop) || err.kind === 'fatal') throw err;
    }
  }

  /** A use of the network where it is reached, certain or not. */
  download(use: Omit<NetworkUse, 'certain'>, frame: Frame): void {
    const call = frame.calledFrom ? `; called from ${frame.calledFrom.file}:${frame.calledFrom.line}` : '';
    this.report.downloads.push({ ...use, detail: `${use.detail}${call}`, certain: this.isCertain(frame) });
  }

  // The commands, as methods BUILTINS binds by name.

  set(values: Value[], frame: Frame): void {
    const name = str(values[0]);
    if (!name) return;
    const cacheAt = values.indexOf('CACHE');
    const parent = values.at(-1) === 'PARENT_SCOPE';
    const rest = values.slice(1, cacheAt >= 0 ? cacheAt : parent ? -1 : undefined);
    const value: Value = rest.some((v) => v === UNKNOWN) ? UNKNOWN : (rest as string[]).join(';');
    if (cacheAt >= 0) {
      // A cache entry never overrides one already there (the -D value), unless FORCE.
      if (values.includes('FORCE') || this.cache.get(name) === undefined) this.write(frame, name, value, true);
      // CMP0126 NEW: the normal variable of that name stays as it is.
      return;
    }
    if (parent) {
      if (frame.scope.parent) frame.scope.parent.set(name, value);
      return;
    }
    if (rest.length === 0) frame.scope.unset(name);
    else this.write(frame, name, value);
  }

  option(values: Value[], frame: Frame): void {
    const name = str(values[0]);
    if (!name || this.cache.get(name) !== undefined || frame.scope.vars.has(name)) return;
    this.write(frame, name, values[2] ?? 'OFF', true);
  }

  dependentOption(values: Value[], frame: Frame): void {
    const [n, , def, depends, force] = values;
    const name = str(n);
    if (!name) return;
    // Each element of the list is a condition of its own (its words split on spaces), all of which must hold.
    let deps: boolean | typeof UNKNOWN = depends === UNKNOWN || depends === undefined ? UNKNOWN : true;
    for (const d of typeof depends === 'string' ? splitList(depends) : []) {
      const t = evaluateCondition(d.split(/\s+/).filter(Boolean).map((w) => ({ value: w, quoted: false })), frame.scope);
      if (t === false) deps = false;
      else if (t === UNKNOWN && deps === true) deps = UNKNOWN;
    }
    if (deps === UNKNOWN) this.write(frame, name, UNKNOWN);
    else if (deps) {
      const have = this.cache.get(name);
      this.write(frame, name, have ?? def ?? 'OFF');
    } else this.write(frame, name, force ?? 'OFF');
  }

  async include(values: Value[], frame: Frame, where: Location): Promise<void> {
    const target = values[0];
    if (target === UNKNOWN) {
      this.report.unread.push({ where, reason: 'include() of a file whose name is computed at configure time' });
      return;
    }
    if (!target) return;
    const optional = values.includes('OPTIONAL');
    if (target.includes('/') || target.endsWith('.cmake')) {
      const abs = path.posix.isAbsolute(target) ? target : path.posix.join(frame.dir, target);
      // A module outside the sources (an installed package's) is none of the project's own code.
      if (!abs.startsWith('/WORKDIR/')) return;
      await this.runFile(abs, { ...frame, file: abs, depth: frame.depth + 1 }, !optional, where);
      return;
    }
    const modulePath = frame.scope.get('CMAKE_MODULE_PATH');
    for (const dir of modulePath === UNKNOWN || modulePath === undefined ? [] : splitList(modulePath)) {
      const abs = path.posix.join(path.posix.isAbsolute(dir) ? dir : path.posix.join(frame.dir, dir), `${target}.cmake`);
      if (!abs.startsWith('/WORKDIR/')) continue;
      const text = await this.src.read(abs);
      if (typeof text === 'string') {
        await this.runFile(abs, { ...frame, file: abs, depth: frame.depth + 1 }, true, where);
        return;
      }
    }
    // Otherwise one of CMake's modules (FetchContent, GNUInstallDirs…) or an installed package's.
  }

  async subdirectory(values: Value[], frame: Frame, where: Location): Promise<void> {
    const dir = values[0];
    if (dir === UNKNOWN) {
      this.report.unread.push({ where, reason: 'add_subdirectory() of a directory computed at configure time' });
      return;
    }
    if (!dir) return;
    const abs = path.posix.normalize(path.posix.isAbsolute(dir) ? dir : path.posix.join(frame.dir, dir));
    const scope = new Scope(this.cache, frame.scope);
    scope.set('CMAKE_CURRENT_SOURCE_DIR', abs);
    scope.set('CMAKE_CURRENT_LIST_DIR', abs);
    const file = `${abs}/CMakeLists.txt`;
    await this.runFile(file, { scope, dir: abs, file, certain: this.isCertain(frame), depth: frame.depth + 1, exit: { maybe: false } }, true, where);
  }

  declare(values: Value[], where: Location): void {
    const name = str(values[0]);
    if (!name) return;
    const key = name.toLowerCase();
    // The first declaration of a name wins, as FetchContent has it.
    if (!this.declarations.has(key)) this.declarations.set(key, { where, args: values.slice(1) });
  }

  /** FetchContent_MakeAvailable / FetchContent_Populate of declared names. */
  makeAvailable(names: Value[], frame: Frame, where: Location): void {
    for (const n of names) {
      const name = str(n);
      if (!name) {
        this.report.unread.push({ where, reason: 'FetchContent of a name computed at configure time' });
        continue;
      }
      const key = name.toLowerCase();
      if (this.populated.has(key)) continue;
      this.populated.add(key);
      frame.scope.set(`${key}_POPULATED`, 'TRUE');
      const decl = this.declarations.get(key);
      if (!decl) {
        this.report.unread.push({ where, reason: `FetchContent_MakeAvailable(${name}) without a FetchContent_Declare() this reading reached` });
        continue;
      }
      const args = decl.args;
      const at = (k: string) => {
        const i = args.indexOf(k);
        return i >= 0 ? args[i + 1] : undefined;
      };
      const upper = name.toUpperCase().replace(/[^A-Z0-9_]/g, '_');
      const local = frame.scope.get(`FETCHCONTENT_SOURCE_DIR_${upper}`);
      const mode = frame.scope.get('FETCHCONTENT_TRY_FIND_PACKAGE_MODE');
      const source = at('GIT_REPOSITORY') ?? at('URL') ?? at('SVN_REPOSITORY') ?? at('HG_REPOSITORY');
      const detail = typeof source === 'string' ? source : 'its declared source';
      if (typeof local === 'string' && local !== '') {
        this.report.avoided.push({ via: 'FetchContent', name, where: decl.where, how: `FETCHCONTENT_SOURCE_DIR_${upper} points at local sources` });
      } else if (mode === 'ALWAYS') {
        this.report.avoided.push({ via: 'FetchContent', name, where: decl.where, how: `FETCHCONTENT_TRY_FIND_PACKAGE_MODE=ALWAYS: find_package(${name}) first, the installed copy` });
      } else if (args.includes('FIND_PACKAGE_ARGS') && mode !== 'NEVER') {
        this.report.avoided.push({ via: 'FetchContent', name, where: decl.where, how: `declared with FIND_PACKAGE_ARGS: find_package(${name}) first, the installed copy` });
      } else if (source === undefined && at('SOURCE_DIR') !== undefined) {
        this.report.avoided.push({ via: 'FetchContent', name, where: decl.where, how: 'its SOURCE_DIR is in the sources: nothing to download' });
      } else if (truthOf(frame.scope.get('FETCHCONTENT_FULLY_DISCONNECTED') ?? '') === true) {
        this.download({ via: 'FetchContent', name, where: decl.where, detail: `${detail}: FETCHCONTENT_FULLY_DISCONNECTED stops the download, and configure then fails for want of the sources` }, frame);
      } else {
        this.download({ via: 'FetchContent', name, where: decl.where, detail: `downloads ${detail} (made available at ${where.file}:${where.line})` }, frame);
      }
    }
  }

  externalProject(values: Value[], frame: Frame, where: Location): void {
    const name = str(values[0]) ?? '?';
    const at = (k: string) => {
      const i = values.indexOf(k);
      return i >= 0 ? values[i + 1] : undefined;
    };
    if (values.includes('DOWNLOAD_COMMAND') && (at('DOWNLOAD_COMMAND') === '' || at('DOWNLOAD_COMMAND') === undefined)) return;
    const source = at('GIT_REPOSITORY') ?? at('URL') ?? at('SVN_REPOSITORY') ?? at('HG_REPOSITORY') ?? at('CVS_REPOSITORY');
    if (source === undefined) return;
    if (typeof source === 'string' && (source.startsWith('/') || source.startsWith('file://'))) return;
    this.download({ via: 'ExternalProject', name, where, detail: `downloads ${typeof source === 'string' ? source : 'a computed URL'} at build time` }, frame);
  }

  /** git clone/fetch/pull/submodule, curl and wget in a command line, run at configure or build time. */
  commands(values: Value[], frame: Frame, where: Location, via: 'execute_process' | 'custom command'): void {
    const runs: Value[][] = [];
    values.forEach((v, i) => {
      if (v === 'COMMAND') runs.push(values.slice(i + 1, (values.indexOf('COMMAND', i + 1) + 1 || values.length + 1) - 1));
    });
    for (const run of runs) {
      const prog = run[0];
      const base = typeof prog === 'string' ? path.posix.basename(prog) : undefined;
      const sub = run.slice(1).find((a) => typeof a === 'string' && !a.startsWith('-'));
      // An unknown program followed by clone/fetch is ${GIT_EXECUTABLE} (find_package(Git)).
      const git = base === 'git' || base === 'git.exe' || (prog === UNKNOWN && typeof sub === 'string' && /^(clone|fetch|pull|submodule|ls-remote)$/.test(sub));
      const net = git ? typeof sub === 'string' && /^(clone|fetch|pull|submodule|ls-remote)$/.test(sub) && !(sub === 'submodule' && !run.includes('update')) : base === 'curl' || base === 'wget';
      if (net) this.download({ via, name: git ? `git ${String(sub)}` : base!, where, detail: `runs ${run.map((a) => (a === UNKNOWN ? '<computed>' : String(a))).join(' ')}` }, frame);
    }
    for (const k of ['RESULT_VARIABLE', 'RESULTS_VARIABLE', 'OUTPUT_VARIABLE', 'ERROR_VARIABLE']) {
      const i = values.indexOf(k);
      const n = i >= 0 ? values[i + 1] : undefined;
      if (isName(n)) this.write(frame, n, UNKNOWN);
    }
  }

  /** A command whose output variable is computed at configure time: unknown from here on. */
  unknownAt(values: Value[], frame: Frame, index: number): void {
    const n = values[index];
    if (isName(n) && this.cache.get(n) === undefined) this.write(frame, n, UNKNOWN);
  }
}

type Builtin = (this: Reach, values: Value[], frame: Frame, where: Location, c: CMakeCommand) => void | Promise<void>;

const STRING_OUT: Record<string, number> = { TOLOWER: 2, TOUPPER: 2, LENGTH: 2, STRIP: 2, FIND: 3, SUBSTRING: 4, JOIN: 2, TIMESTAMP: 1, MAKE_C_IDENTIFIER: 2, CONFIGURE: 2, GENEX_STRIP: 2, REPEAT: 3, UUID: 1, SHA256: 1, SHA1: 1, MD5: 1, JSON: 1, RANDOM: -1 };
const FILE_OUT: Record<string, number> = { READ: 2, STRINGS: 2, GLOB: 1, GLOB_RECURSE: 1, RELATIVE_PATH: 1, TO_CMAKE_PATH: 2, TO_NATIVE_PATH: 2, REAL_PATH: 2, SIZE: 2, READ_SYMLINK: 2, TIMESTAMP: 2, MD5: 2, SHA256: 2, SHA1: 2 };

const BUILTINS: Record<string, Builtin> = {
  set(values, frame) {
    this.set(values, frame);
  },
  unset(values, frame) {
    const n = str(values[0]);
    if (!n) return;
    if (values.includes('CACHE')) frame.scope.cache.delete(n);
    else frame.scope.unset(n);
  },
  option(values, frame) {
    this.option(values, frame);
  },
  cmake_dependent_option(values, frame) {
    this.dependentOption(values, frame);
  },
  list(values, frame) {
    const [op, n, ...rest] = values;
    if (!isName(n)) return;
    const have = frame.scope.get(n);
    if (op === 'APPEND' || op === 'PREPEND') {
      if (have === UNKNOWN || rest.some((r) => r === UNKNOWN)) return this.write(frame, n, UNKNOWN);
      const items = [...splitList(have ?? ''), ...(rest as string[])];
      const ordered = op === 'APPEND' ? items : [...(rest as string[]), ...splitList(have ?? '')];
      this.write(frame, n, ordered.join(';'));
    } else if (op === 'LENGTH' || op === 'GET' || op === 'FIND' || op === 'JOIN' || op === 'SUBLIST') {
      this.unknownAt(values, frame, values.length - 1);
    } else this.write(frame, n, UNKNOWN);
  },
  string(values, frame) {
    const op = str(values[0]);
    if (!op) return;
    if (op === 'APPEND' || op === 'PREPEND' || op === 'CONCAT') return this.unknownAt(values, frame, 1);
    if (op === 'REPLACE') return this.unknownAt(values, frame, 3);
    if (op === 'REGEX') return this.unknownAt(values, frame, values[1] === 'REPLACE' ? 4 : 3);
    if (op === 'COMPARE') return this.unknownAt(values, frame, 4);
    const i = STRING_OUT[op];
    if (i !== undefined) this.unknownAt(values, frame, i < 0 ? values.length - 1 : i);
  },
  math(values, frame) {
    this.unknownAt(values, frame, 1);
  },
  get_filename_component(values, frame) {
    this.unknownAt(values, frame, 0);
  },
  get_property(values, frame) {
    this.unknownAt(values, frame, 0);
  },
  get_target_property(values, frame) {
    this.unknownAt(values, frame, 0);
  },
  get_directory_property(values, frame) {
    this.unknownAt(values, frame, 0);
  },
  find_program(values, frame) {
    this.unknownAt(values, frame, 0);
  },
  find_library(values, frame) {
    this.unknownAt(values, frame, 0);
  },
  find_path(values, frame) {
    this.unknownAt(values, frame, 0);
  },
  find_file(values, frame) {
    this.unknownAt(values, frame, 0);
  },
  find_package(values, frame) {
    const n = str(values[0]);
    if (!n) return;
    for (const v of [`${n}_FOUND`, `${n.toUpperCase()}_FOUND`, `${n}_VERSION`]) this.write(frame, v, UNKNOWN);
    // FindGit's result, which projects run git through.
    if (n === 'Git' && frame.scope.get('GIT_EXECUTABLE') === undefined) this.write(frame, 'GIT_EXECUTABLE', UNKNOWN);
  },
  cmake_parse_arguments(values, frame) {
    // Every <prefix>_<keyword> a parse can set is unknown afterwards (the arguments are rarely known).
    const argv = values[0] === 'PARSE_ARGV';
    const prefix = str(values[argv ? 2 : 0]);
    if (!prefix) return;
    for (const list of values.slice(argv ? 3 : 1, argv ? 6 : 4)) for (const k of splitList(str(list) ?? '')) this.write(frame, `${prefix}_${k}`, UNKNOWN);
    this.write(frame, `${prefix}_UNPARSED_ARGUMENTS`, UNKNOWN);
  },
  project(values, frame) {
    const n = str(values[0]);
    if (n) this.write(frame, 'PROJECT_NAME', n);
    frame.scope.set('PROJECT_SOURCE_DIR', frame.dir);
  },
  async include(values, frame, where) {
    await this.include(values, frame, where);
  },
  async add_subdirectory(values, frame, where) {
    await this.subdirectory(values, frame, where);
  },
  return() {
    throw new Stop('return');
  },
  message(values) {
    // Configure stops here: nothing after it runs.
    if (values[0] === 'FATAL_ERROR') throw new Stop('fatal');
  },
  fetchcontent_declare(values, _frame, where) {
    this.declare(values, where);
  },
  fetchcontent_makeavailable(values, frame, where) {
    this.makeAvailable(values, frame, where);
  },
  fetchcontent_populate(values, frame, where) {
    // The old form with a name only populates a declaration; with details it downloads them directly.
    if (values.length > 1 && values.some((v) => v === 'GIT_REPOSITORY' || v === 'URL')) this.declare(values, where);
    this.makeAvailable(values.slice(0, 1), frame, where);
  },
  fetchcontent_getproperties(values, frame) {
    const n = str(values[0]);
    if (n && !this.populated.has(n.toLowerCase())) frame.scope.set(`${n.toLowerCase()}_POPULATED`, 'FALSE');
  },
  externalproject_add(values, frame, where) {
    this.externalProject(values, frame, where);
  },
  cpmaddpackage(values, frame, where) {
    const local = ['CPM_USE_LOCAL_PACKAGES', 'CPM_LOCAL_PACKAGES_ONLY'].some((k) => truthOf(frame.scope.get(k) ?? '') === true);
    const name = str(values[values.indexOf('NAME') + 1]) ?? str(values[0]) ?? '?';
    if (local) this.report.avoided.push({ via: 'CPM', name, where, how: 'CPM_USE_LOCAL_PACKAGES: find_package first' });
    else this.download({ via: 'CPM', name, where, detail: 'CPM downloads it' }, frame);
  },
  download_project(values, frame, where) {
    this.download({ via: 'download_project', name: str(values[values.indexOf('PROJ') + 1]) ?? '?', where, detail: 'downloads at configure time' }, frame);
  },
  file(values, frame, where) {
    const op = str(values[0]);
    if (op === 'DOWNLOAD') {
      const url = values[1];
      if (typeof url === 'string' && url.startsWith('file://')) return;
      this.download({ via: 'file(DOWNLOAD)', name: typeof url === 'string' ? url : '<computed URL>', where, detail: 'downloads at configure time' }, frame);
      return;
    }
    const i = op ? FILE_OUT[op] : undefined;
    if (i !== undefined) this.unknownAt(values, frame, i);
  },
  execute_process(values, frame, where) {
    this.commands(values, frame, where, 'execute_process');
  },
  add_custom_command(values, frame, where) {
    this.commands(values, frame, where, 'custom command');
  },
  add_custom_target(values, frame, where) {
    this.commands(values, frame, where, 'custom command');
  },
};

/**
 * Where the project's CMake, configured with `cache` (the -D values; UNKNOWN
 * for a value the ebuild computes), downloads.
 */
export async function reachNetwork(src: ReachSource, cache: ReadonlyMap<string, Value>): Promise<ReachReport> {
  return new Reach(src, new Map(cache)).run();
}
