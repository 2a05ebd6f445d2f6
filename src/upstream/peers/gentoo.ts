import { compareVersions, withoutRevision } from '../../model/version.js';
import type { LocalDir } from '../trees/local-dir.js';
import { evaluateWord, expandWord, parseBash, parseSedArgs, Unevaluable, type EbuildIdentity, type EbuildVars, type Helpers, type Node, type RawAssignment } from './bash.js';
import { openGenerators, parseDepString } from './depstring.js';
import { parseUnifiedDiff, sedEdit } from './edits.js';
import { PeerReadError } from './read-error.js';
import { treeOfUrl, type CmakeFact, type FactKind, type DepFact, type FileEdit, type FixupFact, type PeerRecipe, type SourceFact, type Where } from './recipe.js';

/**
 * Reading an ebuild into a PeerRecipe, as text: tree-sitter-bash parses it
 * and this walks the tree, never sourcing it. Globals are followed through
 * `if [[ ${PV} == … ]]` blocks the version decides; phase functions are
 * walked with the USE conditions around each command (`if use x`, `use x &&`)
 * and the directory it runs in (pushd, cd), to find the sed edits and patches
 * of src_prepare and the CMake options of src_configure. Our own rendered
 * ebuild is read the same way, so both sides of a comparison come from one
 * reader.
 */

const DEP_VARS = ['RDEPEND', 'DEPEND', 'BDEPEND', 'PDEPEND', 'IDEPEND'] as const;
/** Markers for directories words expand to: the work directory, files/, and places outside every source. */
const W = '\u0000W';
const F = '\u0000F';
const O = '\u0000O';
const OUTSIDE = ['D', 'ED', 'T', 'BUILD_DIR', 'HOME', 'DISTDIR', 'ROOT', 'EROOT', 'SYSROOT', 'ESYSROOT', 'BROOT'];
/** How deep the walk goes into nested statements before it calls the ebuild hostile. */
const MAX_NESTING = 200;

export interface EbuildInput {
  text: string;
  /** For messages and facts' `where`: "sci-libs/rocPRIM/rocPRIM-7.2.0.ebuild". */
  file: string;
  category: string;
  pn: string;
  /** With revision. */
  version: string;
  requested: string;
  nearest: boolean;
  peer: PeerRecipe['peer'];
  /** A patch named in PATCHES or eapply, by its path under files/; undefined when it is not there. */
  readPatch(name: string): Promise<string | undefined>;
  /** Where a patch file is shown from ("sci-libs/rocSOLVER/files/x.patch"). */
  patchFile(name: string): string;
}

interface Ctx {
  conds: string[];
  /** The directory commands run in, relative to the work directory ('\0O…' outside it), and pushd's stack: one object for a function, as in bash. */
  loc: { cwd: string; stack: string[] };
  /** Functions of the ebuild being walked (a function calling itself is not followed). */
  calls: string[];
  env: Map<string, string>;
  depth: number;
}

type Cond = { decided: boolean } | { text: string };

class EbuildReader {
  private readonly assignments: RawAssignment[] = [];
  private readonly arrays = new Map<string, Node[]>();
  private readonly functions = new Map<string, Node>();
  private readonly identity: EbuildIdentity;
  private readonly recipe: PeerRecipe;
  private readonly helpers: Helpers;
  private sDir = '';
  private sedGroups = new Map<string, FixupFact>();
  private patchCalls: { name: string; cwd: string; conds: string[]; where: Where }[] = [];

  constructor(private readonly input: EbuildInput) {
    this.identity = { category: input.category, pn: input.pn, version: input.version };
    this.recipe = {
      peer: input.peer,
      file: input.file,
      version: input.version,
      requested: input.requested,
      nearest: input.nearest,
      sources: [],
      unpacked: [],
      deps: [],
      cmake: [],
      fixups: [],
      unreadable: [],
      aside: [],
    };
    this.helpers = {};
  }

  private where(node: Node | number): Where {
    return { file: this.input.file, line: typeof node === 'number' ? node : node.startPosition.row + 1 };
  }

  private unreadable(what: string, why: string, at: Node | number, fact?: FactKind): void {
    this.recipe.unreadable.push({ what, why, where: this.where(at), ...(fact ? { fact } : {}) });
  }

  private vars(): EbuildVars {
    return { assignments: this.assignments };
  }

  /** A global's value expanded (the work directory as its marker), or undefined when it cannot be. */
  private global(name: string): string | undefined {
    if (!this.assignments.some((a) => a.name === name)) return undefined;
    try {
      return expandWord(this.vars(), this.identity, `\${${name}}`, new Map([['WORKDIR', W], ['FILESDIR', F], ...OUTSIDE.map((k): [string, string] => [k, `${O}/${k}`])]));
    } catch (err) {
      if (err instanceof Unevaluable) return undefined;
      throw err;
    }
  }

  async read(): Promise<PeerRecipe> {
    const tree = await parseBash(this.input.text);
    try {
      if (tree.rootNode.hasError) {
        const bad = firstError(tree.rootNode);
        this.unreadable('the ebuild', `bash syntax the parser does not accept near line ${bad}`, bad);
      }
      this.globals(tree.rootNode, 0);
      this.readSources();
      this.readDeps();
      this.readLlvmAndTests();
      const env = this.phaseEnv();
      for (const phase of ['src_unpack', 'src_prepare']) {
        const fn = this.functions.get(phase);
        if (fn) this.walk(fn.childForFieldName('body')!, { conds: [], loc: { cwd: this.sDir, stack: [] }, calls: [], env: new Map(env), depth: 0 }, phase);
      }
      if (!this.functions.has('src_prepare')) this.patchCalls.unshift(...this.globalPatches(env));
      const configure = this.functions.get('src_configure');
      if (configure) this.walk(configure.childForFieldName('body')!, { conds: [], loc: { cwd: this.sDir, stack: [] }, calls: [], env: new Map(env), depth: 0 }, 'src_configure');
      this.recipe.fixups.push(...[...this.sedGroups.values()]);
      await this.readPatches();
      return this.recipe;
    } finally {
      tree.delete();
    }
  }

  /** Top-level statements: assignments in order, function definitions, and the if-blocks the version decides. */
  private globals(node: Node, depth: number): void {
    if (depth > MAX_NESTING) throw new PeerReadError(`statements nested more than ${MAX_NESTING} deep`, this.input.file, node.startPosition.row + 1, node.startPosition.column + 1);
    for (const child of node.namedChildren) {
      if (!child) continue;
      switch (child.type) {
        case 'variable_assignment':
          this.assign(child);
          break;
        case 'declaration_command':
          for (const a of child.namedChildren) if (a?.type === 'variable_assignment') this.assign(a);
          break;
        case 'function_definition': {
          const name = child.childForFieldName('name')?.text;
          if (name) this.functions.set(name, child);
          break;
        }
        case 'if_statement':
          this.globalIf(child, depth + 1);
          break;
        default:
          break;
      }
    }
  }

  private assign(node: Node): void {
    const name = node.childForFieldName('name')?.text ?? '';
    const value = node.childForFieldName('value');
    const append = node.children.some((c) => c?.type === '+=');
    if (value?.type === 'array') {
      const items = value.namedChildren.filter((c): c is Node => !!c && c.type !== 'comment');
      this.arrays.set(name, append ? [...(this.arrays.get(name) ?? []), ...items] : items);
    }
    this.assignments.push({ name, append, raw: value?.text ?? '', line: node.startPosition.row + 1 });
  }

  private globalIf(node: Node, depth: number): void {
    const parts = ifParts(node);
    for (const part of parts) {
      const c = part.condition ? this.condition(part.condition, new Map()) : ({ decided: true } as Cond);
      if ('text' in c) {
        this.unreadable('a global if-block', `its condition ${c.text} is not decided by the version; the block is skipped`, node);
        return;
      }
      if (c.decided) {
        const holder = { namedChildren: part.body } as unknown as Node;
        this.globals(holder, depth);
        return;
      }
    }
  }

  /** A condition: decided (PV tests, true/false) or as text ("test", "!debug", "benchmark || test"). */
  private condition(nodes: Node | Node[], env: Map<string, string>): Cond {
    const list = (Array.isArray(nodes) ? nodes : [nodes]).filter((n) => n && n.type !== 'comment' && n.text !== ';');
    if (list.length !== 1) return { text: list.map((n) => n.text).join(' ') };
    const n = list[0]!;
    if (n.type === 'negated_command') {
      const inner = this.condition(n.namedChildren.filter((c): c is Node => !!c), env);
      return 'decided' in inner ? { decided: !inner.decided } : { text: negate(inner.text) };
    }
    if (n.type === 'list') {
      const [l, r] = n.namedChildren.filter((c): c is Node => !!c);
      const op = n.children.find((c) => c?.type === '&&' || c?.type === '||')?.type;
      if (l && r && op) {
        const a = this.condition(l, env);
        const b = this.condition(r, env);
        if ('decided' in a && 'decided' in b) return { decided: op === '&&' ? a.decided && b.decided : a.decided || b.decided };
        if ('decided' in a) return op === '&&' ? (a.decided ? b : { decided: false }) : a.decided ? { decided: true } : b;
        if ('decided' in b) return op === '&&' ? (b.decided ? a : { decided: false }) : b.decided ? { decided: true } : a;
        return { text: `${a.text} ${op} ${b.text}` };
      }
    }
    if (n.type === 'command') {
      const name = n.childForFieldName('name')?.text;
      const args = n.namedChildren.filter((c): c is Node => !!c && c.type !== 'command_name').map((c) => c.text);
      if ((name === 'use' || name === 'in_iuse') && args.length === 1) return { text: args[0]! };
      if (name === 'true' || name === ':') return { decided: true };
      if (name === 'false') return { decided: false };
    }
    if (n.type === 'test_command') return this.testCondition(n, env);
    return { text: n.text.replace(/\s+/g, ' ') };
  }

  /** `[[ ${PV} == 9999 ]]`, `[[ ${PV} != *9999* ]]`: decided by the version; anything else is text. */
  private testCondition(n: Node, env: Map<string, string>): Cond {
    const e = n.namedChildren.find((c) => c?.type === 'binary_expression');
    if (!e) return { text: n.text };
    const left = e.childForFieldName('left');
    const right = e.childForFieldName('right');
    const op = e.childForFieldName('operator')?.text;
    if (!left || !right || !op || !['==', '=', '!='].includes(op)) return { text: n.text };
    const l = this.word(left.text, env);
    const r = right.text.replace(/^"(.*)"$/, '$1');
    if (l === undefined || /\$/.test(r)) return { text: n.text };
    const re = new RegExp(`^${r.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`);
    const hit = re.test(l);
    return { decided: op === '!=' ? !hit : hit };
  }

  /** A word expanded: first as phase code reads it (helpers, locals), then with the globals' expansions. */
  private word(text: string, env: Map<string, string>): string | undefined {
    const a = evaluateWord(text, env, this.helpers);
    if (a.ok) return a.value;
    try {
      return expandWord(this.vars(), this.identity, text, new Map([...env].filter(([k]) => !this.assignments.some((x) => x.name === k) || k === 'S')));
    } catch (err) {
      if (err instanceof Unevaluable) return undefined;
      throw err;
    }
  }

  private readSources(): void {
    const own = this.assignments.filter((a) => a.name === 'SRC_URI');
    for (const a of own) {
      let text: string;
      try {
        text = expandWord(this.vars(), this.identity, a.raw);
      } catch (err) {
        if (!(err instanceof Unevaluable)) throw err;
        this.unreadable('SRC_URI', err.message, a.line, 'sources');
        continue;
      }
      const words = text.split(/\s+/).filter(Boolean);
      const stack: string[][] = [[]];
      let pending: string | undefined;
      for (let i = 0; i < words.length; i++) {
        const w = words[i]!;
        if (w === '(') {
          stack.push(pending ? [...stack[stack.length - 1]!, pending] : [...stack[stack.length - 1]!]);
          pending = undefined;
        } else if (w === ')') {
          if (stack.length > 1) stack.pop();
        } else if (w.endsWith('?')) pending = w.slice(0, -1);
        else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(w)) {
          let distfile = w.replace(/[?#].*$/, '').split('/').pop()!;
          if (words[i + 1] === '->' && words[i + 2]) {
            distfile = words[i + 2]!;
            i += 2;
          }
          const fact: SourceFact = { url: w, distfile, when: [...stack[stack.length - 1]!], where: this.where(a.line) };
          this.recipe.sources.push(fact);
        }
      }
    }
    const sRaw = this.assignments.filter((a) => a.name === 'S').at(-1);
    let s = `${W}/${this.input.pn}-${withoutRevision(this.input.version)}`;
    if (sRaw) {
      try {
        s = expandWord(this.vars(), this.identity, sRaw.raw, new Map([['WORKDIR', W]]));
      } catch (err) {
        if (!(err instanceof Unevaluable)) throw err;
        this.unreadable('S', err.message, sRaw.line, 'sources');
      }
    }
    this.sDir = s.startsWith(`${W}/`) ? normalise(s.slice(W.length + 1)) : s === W ? '' : s;
    this.recipe.s = { dir: this.sDir, where: this.where(sRaw?.line ?? 1) };
    for (const src of this.recipe.sources) {
      const tree = treeOfUrl(src.url);
      this.recipe.unpacked.push({ dir: tree && !tree.asset ? `${tree.repo.split('/')[1]}-${tree.tag.replace(/^v(?=\d)/, '')}` : (tree?.asset?.replace(/\.(tar\.gz|tar\.bz2|tar\.xz|tgz|zip)$/, '') ?? ''), ...(tree ? { tree } : {}), where: src.where });
    }
  }

  private readDeps(): void {
    const raw = new Map<string, { text: string; line: number }>();
    for (const name of DEP_VARS) {
      const own = this.assignments.filter((a) => a.name === name);
      if (own.length === 0) continue;
      let text = '';
      for (const a of own) text = a.append ? `${text} ${unquoteValue(a.raw)}` : unquoteValue(a.raw);
      raw.set(name, { text, line: own[0]!.line });
    }
    const version = withoutRevision(this.input.version);
    // ${RDEPEND} inside DEPEND, and the other variables ebuilds share between classes.
    const expandRefs = (text: string, seen: Set<string>): string =>
      text.replace(/\$\{?([A-Z_][A-Z0-9_]*)\}?/g, (m, v: string) => {
        // Dependency variables inside others (${RDEPEND} in DEPEND) are opened as dependency text.
        if ((DEP_VARS as readonly string[]).includes(v)) {
          if (seen.has(v) || seen.size > 16) return '';
          const own = this.assignments.filter((a) => a.name === v);
          let value = '';
          for (const a of own) value = a.append ? `${value} ${unquoteValue(a.raw)}` : unquoteValue(a.raw);
          return ` ${expandRefs(value, new Set([...seen, v]))} `;
        }
        if (v === 'PV') return version;
        if (v === 'PYTHON_DEPS') return ' dev-lang/python ';
        // ${SLOT} (and any global such as ${SLOT_NOLIVE}) as the ebuild sets it, so ":${SLOT}" and ":0/7.2" compare equal.
        if (!['LLVM_SLOT', 'PYTHON_USEDEP', 'PYTHON_SINGLE_USEDEP', 'ROCM_REQUIRED_USE', 'ROCM_USEDEP', 'LLVM_USEDEP'].includes(v)) return this.global(v) ?? m;
        return m;
      });
    for (const [name, { text, line }] of raw) {
      const opened = openGenerators(expandRefs(text, new Set([name])));
      const leftover = /\$\([^)]*\)?/.exec(opened);
      if (leftover) this.unreadable(name, `${leftover[0]} is not a helper whose atoms can be read`, line, 'deps');
      const parsed = parseDepString(opened.replace(/\$\([^)]*\)?/g, ' '));
      for (const u of parsed.unknown) if (!/^\$\{/.test(u.word)) this.unreadable(name, `"${u.word}" is not an atom`, line, 'deps');
      for (const a of parsed.atoms) {
        const fact: DepFact = {
          atom: a.key,
          classes: [name],
          when: a.when,
          slot: a.slot,
          ...(a.op || a.version ? { version: `${a.op}${a.version ?? ''}` } : {}),
          ...(a.blocker ? { blocker: true } : {}),
          where: this.where(line),
        };
        this.recipe.deps.push(fact);
      }
    }
  }

  private readLlvmAndTests(): void {
    const compat = this.assignments.filter((a) => a.name === 'LLVM_COMPAT').at(-1);
    if (compat) {
      const items = this.arrays.get('LLVM_COMPAT');
      const slots = (items ?? []).map((n) => n.text).flatMap((t) => (/^\{(\d+)\.\.(\d+)\}$/.test(t) ? range(t) : [t]));
      this.recipe.llvm = { slots, where: this.where(compat.line) };
    } else {
      const max = this.assignments.filter((a) => a.name === 'LLVM_MAX_SLOT').at(-1);
      if (max) this.recipe.llvm = { slots: [unquoteValue(max.raw)], where: this.where(max.line) };
    }
    const restrict = this.assignments.filter((a) => a.name === 'RESTRICT');
    if (restrict.length > 0) {
      const value = restrict.map((a) => unquoteValue(a.raw)).join(' ');
      const words = value.split(/\s+/).filter(Boolean);
      let r = '';
      if (/!test\?\s*\(\s*test\s*\)/.test(value)) r = '!test? ( test )';
      else if (words.includes('test')) r = 'test';
      this.recipe.tests = { restrict: r, where: this.where(restrict[0]!.line) };
    } else this.recipe.tests = { restrict: '', where: this.where(1) };
  }

  /** Variables phase code may use, with markers for directories. */
  private phaseEnv(): Map<string, string> {
    const v = withoutRevision(this.input.version);
    const env = new Map<string, string>([
      ['PV', v],
      ['PN', this.input.pn],
      ['P', `${this.input.pn}-${v}`],
      ['PF', `${this.input.pn}-${this.input.version}`],
      ['CATEGORY', this.input.category],
      ['EPREFIX', ''],
      ['WORKDIR', W],
      ['FILESDIR', F],
      ['S', this.sDir.startsWith(O) ? this.sDir : `${W}/${this.sDir}`.replace(/\/$/, '')],
      ...OUTSIDE.map((k): [string, string] => [k, `${O}/${k}`]),
    ]);
    if (this.recipe.llvm?.slots.length === 1) env.set('LLVM_SLOT', this.recipe.llvm.slots[0]!);
    for (const a of this.assignments) {
      if (env.has(a.name) || a.raw.startsWith('(')) continue;
      const value = this.global(a.name);
      if (value !== undefined) env.set(a.name, value);
    }
    const slot = env.get('LLVM_SLOT');
    const llvm = slot ? `/usr/lib/llvm/${slot}` : '/usr/lib/llvm/${LLVM_SLOT}';
    Object.assign(this.helpers, { get_libdir: 'lib64', get_llvm_prefix: llvm, 'get_llvm_prefix -b': llvm, 'get_llvm_prefix -d': llvm, makeopts_jobs: '1' });
    return env;
  }

  /** A path word, expanded, relative to the work directory ('\0O…' when outside every source). */
  private path(text: string, ctx: Ctx): string | undefined {
    const v = this.word(text, ctx.env);
    if (v === undefined) return undefined;
    if (v.startsWith(O)) return `/${v.slice(O.length + 1)}`;
    if (v.startsWith(`${W}/`)) return normalise(v.slice(W.length + 1));
    if (v === W) return '';
    if (v.startsWith(F)) return `${F}${v.slice(F.length)}`;
    if (v.startsWith('/')) return v;
    return normalise(ctx.loc.cwd ? `${ctx.loc.cwd}/${v}` : v);
  }

  /**
   * One statement (and what it holds) under its USE conditions and in its
   * directory: records sed edits, patches and CMake options. Each branch of
   * an if is walked with its own condition; assignments inside a branch
   * leave the environment as the branch found it.
   */
  private walk(node: Node, ctx: Ctx, phase: string): void {
    if (ctx.depth > MAX_NESTING) throw new PeerReadError(`statements nested more than ${MAX_NESTING} deep`, this.input.file, node.startPosition.row + 1, node.startPosition.column + 1);
    const inner = { ...ctx, depth: ctx.depth + 1 };
    switch (node.type) {
      case 'compound_statement':
      case 'do_group':
      case 'program':
      case 'subshell':
        for (const c of node.namedChildren) if (c) this.walk(c, inner, phase);
        return;
      case 'redirected_statement': {
        const body = node.childForFieldName('body');
        if (body) this.walk(body, inner, phase);
        return;
      }
      case 'negated_command':
        for (const c of node.namedChildren) if (c) this.walk(c, inner, phase);
        return;
      case 'list': {
        const [l, r] = node.namedChildren.filter((c): c is Node => !!c);
        const op = node.children.find((c) => c?.type === '&&' || c?.type === '||')?.type;
        if (!l || !r) return;
        if (isCondition(l)) {
          const c = this.condition(l, ctx.env);
          if ('decided' in c) {
            if (c.decided === (op === '&&')) this.walk(r, inner, phase);
            return;
          }
          this.walk(r, { ...inner, conds: [...ctx.conds, ...conjuncts(op === '&&' ? c.text : negate(c.text))] }, phase);
          return;
        }
        this.walk(l, inner, phase);
        // `cmd || die` — the right side only runs when the left fails.
        if (!(op === '||' && /^(die|eerror)\b/.test(r.text))) this.walk(r, inner, phase);
        return;
      }
      case 'if_statement': {
        const negs: string[] = [];
        for (const part of ifParts(node)) {
          const c = part.condition ? this.condition(part.condition, ctx.env) : ({ decided: true } as Cond);
          // One environment per branch: an assignment in it reaches the branch's later commands, not the code after the if.
          if ('decided' in c) {
            if (c.decided) {
              const branch = { ...inner, conds: [...ctx.conds, ...negs], env: new Map(ctx.env) };
              for (const s of part.body) this.walk(s, branch, phase);
              return;
            }
            continue;
          }
          const branch = { ...inner, conds: [...ctx.conds, ...negs, ...conjuncts(c.text)], env: new Map(ctx.env) };
          for (const s of part.body) this.walk(s, branch, phase);
          negs.push(negate(c.text));
        }
        return;
      }
      case 'for_statement':
      case 'c_style_for_statement':
      case 'while_statement': {
        const body = node.childForFieldName('body');
        if (body) this.walk(body, { ...inner, conds: [...ctx.conds, `loop at line ${node.startPosition.row + 1}`] }, phase);
        return;
      }
      case 'case_statement':
        this.unreadable('a case statement', `${phase}: its branches are not followed`, node, phaseFact(phase));
        return;
      case 'variable_assignment':
        this.phaseAssign(node, ctx, phase);
        return;
      case 'declaration_command':
        for (const c of node.namedChildren) if (c?.type === 'variable_assignment') this.phaseAssign(c, ctx, phase);
        return;
      case 'command':
        this.command(node, ctx, phase);
        return;
      default:
        return;
    }
  }

  private phaseAssign(node: Node, ctx: Ctx, phase: string): void {
    const name = node.childForFieldName('name')?.text ?? '';
    const value = node.childForFieldName('value');
    const append = node.children.some((c) => c?.type === '+=');
    if (name === 'mycmakeargs' && value?.type === 'array') {
      for (const item of value.namedChildren) if (item && item.type !== 'comment') this.cmakeArg(item, ctx);
      return;
    }
    if (name === 'PATCHES' && value?.type === 'array') {
      for (const item of value.namedChildren) {
        if (!item || item.type === 'comment') continue;
        const p = this.path(item.text, ctx);
        if (p === undefined || !p.startsWith(F)) {
          this.unreadable('PATCHES', `${phase}: cannot tell the file of ${item.text}`, item, 'fixups');
          continue;
        }
        this.patchCalls.push({ name: p.slice(F.length + 1), cwd: ctx.loc.cwd, conds: ctx.conds, where: this.where(item) });
      }
      return;
    }
    if (!value) {
      ctx.env.set(name, '');
      return;
    }
    const v = value.type === 'array' ? undefined : this.word(value.text, ctx.env);
    if (v === undefined) ctx.env.delete(name);
    else ctx.env.set(name, append ? (ctx.env.get(name) ?? '') + v : v);
  }

  private command(node: Node, ctx: Ctx, phase: string): void {
    const name = node.childForFieldName('name')?.text ?? '';
    const args = node.namedChildren.filter((c): c is Node => !!c && c.type !== 'command_name' && !c.type.endsWith('redirect') && c.type !== 'comment');
    switch (name) {
      case 'pushd':
      case 'cd': {
        const target = args.filter((a) => !a.text.startsWith('-')).at(-1);
        const p = target ? this.path(target.text, ctx) : undefined;
        if (name === 'pushd') ctx.loc.stack.push(ctx.loc.cwd);
        if (p === undefined) {
          ctx.loc.cwd = `${O}/unknown`;
          if (target) this.unreadable(name, `${phase}: cannot tell the directory ${target.text}`, node, phaseFact(phase));
        } else ctx.loc.cwd = p;
        return;
      }
      case 'popd':
        ctx.loc.cwd = ctx.loc.stack.pop() ?? this.sDir;
        return;
      case 'sed':
        if (phase !== 'src_configure') this.sed(node, args, ctx);
        return;
      case 'eapply': {
        for (const a of args) {
          if (a.text.startsWith('-')) continue;
          const p = this.path(a.text, ctx);
          if (p === undefined || !p.startsWith(F)) {
            this.unreadable('eapply', `${phase}: cannot tell the file of ${a.text}`, a, 'fixups');
            continue;
          }
          this.patchCalls.push({ name: p.slice(F.length + 1), cwd: ctx.loc.cwd, conds: ctx.conds, where: this.where(a) });
        }
        return;
      }
      default: {
        // default and the eclasses' <eclass>_src_prepare apply PATCHES (unless the call empties it: PATCHES='' cmake_src_prepare).
        if (name === 'default' || /_src_prepare$/.test(name)) {
          const emptied = node.namedChildren.some((c) => c?.type === 'variable_assignment' && c.childForFieldName('name')?.text === 'PATCHES');
          if (phase === 'src_prepare' && !this.appliedGlobal && !emptied) {
            this.appliedGlobal = true;
            this.patchCalls.push(...this.globalPatches(ctx.env, ctx.loc.cwd, ctx.conds));
          }
          return;
        }
        // A function of the ebuild called here (a wrapper around cmake_src_prepare, say) is walked in place.
        const fn = this.functions.get(name);
        if (fn && !ctx.calls.includes(name) && ctx.depth < MAX_NESTING) {
          this.walk(fn.childForFieldName('body')!, { ...ctx, calls: [...ctx.calls, name], depth: ctx.depth + 1 }, phase);
          // Its arguments may be a command to run (hip_test_wrapper cmake_src_prepare).
          const first = args[0]?.text;
          if (first && ['cmake_src_prepare', 'eapply'].includes(first) && phase === 'src_prepare' && !this.appliedGlobal) {
            this.appliedGlobal = true;
            this.patchCalls.push(...this.globalPatches(ctx.env, ctx.loc.cwd, ctx.conds));
          }
        }
        return;
      }
    }
  }

  private appliedGlobal = false;

  /** The global PATCHES, applied where cmake_src_prepare (or default) runs. */
  private globalPatches(env: Map<string, string>, cwd = this.sDir, conds: string[] = []): EbuildReader['patchCalls'] {
    const out: EbuildReader['patchCalls'] = [];
    for (const item of this.arrays.get('PATCHES') ?? []) {
      const v = this.word(item.text, env);
      if (v === undefined || !v.startsWith(F)) {
        this.unreadable('PATCHES', `cannot tell the file of ${item.text}`, item, 'fixups');
        continue;
      }
      out.push({ name: v.slice(F.length + 1), cwd, conds, where: this.where(item) });
    }
    return out;
  }

  private sed(node: Node, args: Node[], ctx: Ctx): void {
    const words: string[] = [];
    for (const a of args) {
      const v = this.word(a.text, ctx.env);
      if (v === undefined) {
        // The script is not read, but the file it edits usually is: the comparison still knows which file that is.
        const last = args.at(-1);
        const file = last && last !== a ? this.word(last.text, ctx.env) : undefined;
        if (file !== undefined && !file.startsWith('-')) {
          const p = this.relative(file, ctx);
          this.addSed(`sed ${this.shown(p)}`, ctx, node, [{ path: p, removes: [], adds: [] }], `cannot expand ${a.text}`);
        } else this.addSed(`sed ${last?.text ?? '?'}`, ctx, node, [], `cannot expand ${a.text}`);
        return;
      }
      words.push(v);
    }
    const call = parseSedArgs(words);
    if (call === undefined) return;
    if ('error' in call) {
      this.addSed(`sed ${args.at(-1)?.text ?? '?'}`, ctx, node, [], call.error);
      return;
    }
    const change = sedEdit(call.scripts, call.extended);
    for (const file of call.files) {
      const p = this.relative(file, ctx);
      const edit: FileEdit = { path: p, removes: change.removes, adds: change.adds };
      this.addSed(`sed ${this.shown(p)}`, ctx, node, [edit], change.opaque.length > 0 && change.removes.length === 0 && change.adds.length === 0 ? `sed commands whose change is not read: ${change.opaque.join(' ')}` : undefined);
    }
  }

  /** A file operand relative to the work directory. */
  private relative(file: string, ctx: Ctx): string {
    if (file.startsWith(O)) return `/${file.slice(O.length + 1)}`;
    if (file.startsWith(`${W}/`)) return normalise(file.slice(W.length + 1));
    if (file.startsWith('/')) return file;
    if (ctx.loc.cwd.startsWith(O)) return `/${ctx.loc.cwd.slice(O.length + 1)}/${file}`;
    return normalise(ctx.loc.cwd ? `${ctx.loc.cwd}/${file}` : file);
  }

  /** A work-directory path as a fix-up's name shows it: relative to S when inside it. */
  private shown(p: string): string {
    if (p.startsWith('/')) return p;
    if (this.sDir && p.startsWith(`${this.sDir}/`)) return p.slice(this.sDir.length + 1);
    return `\${WORKDIR}/${p}`;
  }

  private addSed(id: string, ctx: Ctx, node: Node, edits: FileEdit[], unreadable?: string): void {
    const have = this.sedGroups.get(id);
    if (have) {
      have.edits.push(...edits);
      if (unreadable && !have.unreadable) have.unreadable = unreadable;
      return;
    }
    this.sedGroups.set(id, { id, kind: 'sed', when: [...ctx.conds], where: this.where(node), edits, ...(unreadable ? { unreadable } : {}) });
  }

  private cmakeArg(item: Node, ctx: Ctx): void {
    const text = item.text;
    const m = /^"?-D([A-Za-z_][A-Za-z0-9_.+-]*)(?::[A-Z]+)?=(.*?)"?$/s.exec(text);
    const fact: CmakeFact = m
      ? { name: m[1]!, value: normaliseValue(m[2]!), when: [...ctx.conds], where: this.where(item) }
      : { name: text.replace(/^"|"$/g, ''), value: '', when: [...ctx.conds], where: this.where(item) };
    this.recipe.cmake.push(fact);
  }

  private async readPatches(): Promise<void> {
    const seen = new Set<string>();
    for (const call of this.patchCalls) {
      const base = call.name.split('/').pop()!;
      if (seen.has(call.name)) continue;
      seen.add(call.name);
      const id = `patch ${base}`;
      const fact: FixupFact = { id, kind: 'patch', when: call.conds, where: call.where, edits: [] };
      const text = await this.input.readPatch(call.name);
      if (text === undefined) {
        fact.unreadable = `${this.input.patchFile(call.name)} is not in the tree`;
      } else {
        const files = parseUnifiedDiff(text);
        if (files.length === 0) fact.unreadable = `${this.input.patchFile(call.name)} holds no unified diff`;
        for (const f of files) {
          const p = call.cwd.startsWith(O) ? `/${call.cwd.slice(O.length + 1)}/${f.path}` : normalise(call.cwd ? `${call.cwd}/${f.path}` : f.path);
          fact.edits.push({ path: p, removes: f.removes, adds: f.adds, ...(f.whole ? { whole: f.whole } : {}) });
        }
      }
      this.recipe.fixups.push(fact);
    }
  }
}

/** The fact a phase's code decides: src_configure's options, src_prepare's (and src_unpack's) edits. */
function phaseFact(phase: string): FactKind {
  return phase === 'src_configure' ? 'cmake' : 'fixups';
}

/** An if-statement's branches: the condition nodes and the body statements of if, each elif and else. */
function ifParts(node: Node): { condition?: Node[]; body: Node[] }[] {
  const parts: { condition?: Node[]; body: Node[] }[] = [];
  const collect = (n: Node, hasCondition: boolean) => {
    const cond: Node[] = [];
    const body: Node[] = [];
    let inBody = !hasCondition;
    for (const c of n.children) {
      if (!c) continue;
      if (c.type === 'then') {
        inBody = true;
        continue;
      }
      if (['if', 'elif', 'else', 'fi', ';', 'elif_clause', 'else_clause', 'comment'].includes(c.type)) continue;
      if (!c.isNamed) continue;
      (inBody ? body : cond).push(c);
    }
    parts.push({ ...(hasCondition ? { condition: cond } : {}), body });
  };
  collect(node, true);
  for (const c of node.namedChildren) {
    if (c?.type === 'elif_clause') collect(c, true);
    if (c?.type === 'else_clause') collect(c, false);
  }
  return parts;
}

function isCondition(n: Node): boolean {
  if (n.type === 'test_command') return true;
  if (n.type === 'negated_command') return n.namedChildren.some((c) => !!c && isCondition(c));
  if (n.type === 'command') return ['use', 'in_iuse', 'true', 'false'].includes(n.childForFieldName('name')?.text ?? '');
  if (n.type === 'list') return n.namedChildren.every((c) => !!c && isCondition(c));
  return false;
}

/** "test && !foo" as its two conditions; anything with || or parentheses stays whole. */
function conjuncts(text: string): string[] {
  return /[()|]/.test(text) ? [text] : text.split(' && ');
}

function negate(text: string): string {
  if (/^!?[A-Za-z0-9_+@-]+$/.test(text)) return text.startsWith('!') ? text.slice(1) : `!${text}`;
  return `!( ${text} )`;
}

function firstError(n: Node): number {
  const stack = [n];
  while (stack.length) {
    const x = stack.pop()!;
    if (x.type === 'ERROR' || x.isMissing) return x.startPosition.row + 1;
    for (let i = x.childCount - 1; i >= 0; i--) {
      const c = x.child(i);
      if (c && c.hasError) stack.push(c);
    }
  }
  return n.startPosition.row + 1;
}

/** "a/./b/../c/" → "a/c". */
export function normalise(p: string): string {
  const out: string[] = [];
  for (const part of p.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') out.pop();
    else out.push(part);
  }
  return out.join('/');
}

/** The text inside a value's quotes, with \$ and \" as bash reads them in double quotes. */
export function unquoteValue(raw: string): string {
  if (raw.startsWith('"') && raw.endsWith('"') && raw.length >= 2) return raw.slice(1, -1).replace(/\\([$`"\\])/g, '$1');
  if (raw.startsWith("'") && raw.endsWith("'") && raw.length >= 2) return raw.slice(1, -1);
  return raw;
}

const TRUE_WORDS = new Set(['on', 'true', 'yes', 'y', '1']);
const FALSE_WORDS = new Set(['off', 'false', 'no', 'n', '0']);

/** A CMake value as both sides can be compared: quotes gone, booleans ON/OFF, $(usex f) spelled $(usex f ON OFF). */
export function normaliseValue(v: string): string {
  let x = v.replace(/"/g, '').trim();
  x = x.replace(/\$\(usex\s+(\S+)(?:\s+(\S+))?(?:\s+(\S+))?\s*\)/g, (_m, f: string, on?: string, off?: string) => `$(usex ${f} ${bool(on ?? 'yes')} ${bool(off ?? 'no')})`);
  return bool(x);
}

function bool(x: string): string {
  const l = x.toLowerCase();
  if (TRUE_WORDS.has(l)) return 'ON';
  if (FALSE_WORDS.has(l)) return 'OFF';
  return x;
}

function range(t: string): string[] {
  const [, a, b] = /^\{(\d+)\.\.(\d+)\}$/.exec(t)!;
  const out: string[] = [];
  for (let i = Number(a); i <= Number(b) && out.length < 64; i++) out.push(String(i));
  return out;
}

/** Reads an ebuild's text into a recipe. */
export function readEbuild(input: EbuildInput): Promise<PeerRecipe> {
  return new EbuildReader(input).read();
}

/** The ebuild of `version` in a Gentoo repository's package directory, else the nearest lower one; live (9999) ebuilds never. */
export async function findEbuild(tree: LocalDir, atom: string, version: string): Promise<{ file: string; version: string; nearest: boolean } | undefined> {
  const [category, pn] = atom.split('/') as [string, string];
  const entries = await tree.list(`${category}/${pn}`);
  if (!entries) return undefined;
  const versions: string[] = [];
  for (const e of entries) {
    if (!e.name.startsWith(`${pn}-`) || !e.name.endsWith('.ebuild')) continue;
    // An ebuild's name on a FIFO, a device or a directory is not skipped quietly: reading it says what it is.
    if (e.kind !== 'file') await tree.readText(`${category}/${pn}/${e.name}`);
    const v = e.name.slice(pn.length + 1, -'.ebuild'.length);
    if (/^9999(-r\d+)?$/.test(v) || /(^|\.)9999/.test(v)) continue;
    try {
      compareVersions(v, '0');
      versions.push(v);
    } catch {
      // not a version: another package's ebuild with a longer name, or a stray file
    }
  }
  const same = versions.filter((v) => withoutRevision(v) === version).sort(compareVersions);
  if (same.length > 0) return { file: `${category}/${pn}/${pn}-${same.at(-1)!}.ebuild`, version: same.at(-1)!, nearest: false };
  const lower = versions.filter((v) => compareVersions(withoutRevision(v), version) < 0).sort(compareVersions);
  if (lower.length === 0) return undefined;
  const v = lower.at(-1)!;
  return { file: `${category}/${pn}/${pn}-${v}.ebuild`, version: v, nearest: true };
}
