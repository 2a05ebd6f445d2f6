import { parseBash, walk, type Node } from '../../ebuild/bash-parser.js';
import type { InsertSpec, PHASES, PrepareOp } from '../../manifest/types.js';
import { patchesOf } from '../../model/patches.js';
import type { ResolvedComponent } from '../../model/resolve.js';
import { evaluateWord, globToRegExp, type Helpers } from './bash-words.js';
import { changedLines, onlyDeletes, parseSedArgs, runSed, type SedCall } from './sed-command.js';
import { applyDiffFile, type DiffFile } from '../../util/unified-diff.js';
import { hasPath, type SourceTree } from '../trees/source-tree.js';
import type { SourceRef } from '../trees/sources.js';

/**
 * Replays a component's fix-ups on a source tree without running anything
 * from the manifest: `replace` counts the literal text, `delete_lines` and
 * `sed -i` calls found in phase code run through GNU sed in sandbox mode on
 * a copy of the file's text, `remove` checks the path.
 */

export type ReplayStatus = 'applies' | 'differs' | 'upstream' | 'fails' | 'skipped' | 'unreadable';

/** One fix-up on one file, measured on one tree. */
export interface Measurement {
  /** Identifies the same check across releases: "prepare[2] bin/hipvars.pm". */
  key: string;
  /** Where the manifest says it: "prepare[2]" or "phases.src_prepare.after, line 4". */
  fixup: string;
  op: 'replace' | 'delete_lines' | 'insert' | 'remove' | 'sed' | 'patch';
  /** The operation in a few words, for people. */
  what: string;
  /** The file as the manifest writes it. */
  file: string;
  when?: string;
  state: 'measured' | 'no-file' | 'skipped' | 'error' | 'unreadable';
  /** Matches (replace), lines changed (delete_lines, sed), 1 for a path present (remove). */
  count?: number;
  /** The fix-up allows the file to be absent (`skip_missing`): the ebuild goes on without it. */
  optional?: boolean;
  /** With no match: the fix-up's aim is visible in the tree (its replacement text is there, the lines are gone). */
  aimMet?: boolean;
  reason?: string;
}

export interface ReplayLine extends Measurement {
  status: ReplayStatus;
  reason: string;
  /** The count in the release compared against, when it was measured. */
  previous?: number;
}

/** The sources of a component in one release; trees are opened when a fix-up first reaches them. */
export interface ReplayTrees {
  version: string;
  llvmSlot: number;
  refs: SourceRef[];
  /** The tree of a source, or why it cannot be read. */
  tree(index: number): Promise<SourceTree | { error: string }>;
  /** One of the component's patch files (patches/<component>/), parsed, or why it cannot be read. */
  patch?(file: string): Promise<{ diff: DiffFile[] } | { error: string }>;
}

const MARK = (name: string) => `\u0000${name}\u0000`;
const OUTSIDE = ['ED', 'D', 'T', 'BUILD_DIR', 'HOME', 'FILESDIR', 'DISTDIR'];

/** The variables and helper outputs words are expanded with: EPREFIX empty, the release's PV and LLVM slot, marks for paths outside the sources. */
export function replayEnvironment(c: ResolvedComponent, t: ReplayTrees): { env: Map<string, string>; helpers: Helpers } {
  const env = new Map<string, string>([
    ['EPREFIX', ''],
    ['EROOT', ''],
    ['ESYSROOT', ''],
    ['BROOT', ''],
    ['PV', t.version],
    ['PN', c.pn],
    ['P', `${c.pn}-${t.version}`],
    ['PF', `${c.pn}-${t.version}`],
    ['SLOT', `0/${t.version.split('.').slice(0, 2).join('.')}`],
    ['LLVM_SLOT', String(t.llvmSlot)],
    ['CHOST', 'x86_64-pc-linux-gnu'],
    ['CBUILD', 'x86_64-pc-linux-gnu'],
    ['S', MARK('S')],
    ['WORKDIR', MARK('WORKDIR')],
    ...OUTSIDE.map((v): [string, string] => [v, MARK(v)]),
  ]);
  const llvm = `/usr/lib/llvm/${t.llvmSlot}`;
  return {
    env,
    helpers: { get_libdir: 'lib64', get_llvm_prefix: llvm, 'get_llvm_prefix -b': llvm, 'get_llvm_prefix -d': llvm, makeopts_jobs: '1' },
  };
}

/**
 * A source tree as the ebuild leaves it after the fix-ups so far: each
 * measured fix-up's result (a replacement, sed's output, a removed path) is
 * written here, so the next one on the same file meets that text, as in the
 * ebuild, not the release's. A USE-conditional fix-up counts as applied.
 */
export class WorkingTree implements SourceTree {
  private readonly edited = new Map<string, Buffer | null>();
  private removed: string[] = [];
  constructor(private readonly base: SourceTree) {}
  get label(): string {
    return this.base.label;
  }
  transferred(): number {
    return this.base.transferred();
  }
  private gone(rel: string): boolean {
    return this.edited.get(rel) === null || this.removed.some((r) => rel === r || rel.startsWith(`${r}/`));
  }
  async files(): Promise<string[]> {
    return (await this.base.files()).filter((f) => !this.gone(f));
  }
  async read(paths: string[]): Promise<Map<string, Buffer>> {
    const out = new Map<string, Buffer>();
    const fromBase = paths.filter((p) => !this.gone(p) && !this.edited.has(p));
    const base = fromBase.length > 0 ? await this.base.read(fromBase) : new Map<string, Buffer>();
    for (const p of paths) {
      const v = this.gone(p) ? undefined : (this.edited.get(p) ?? base.get(p));
      if (v) out.set(p, v);
    }
    return out;
  }
  write(rel: string, content: Buffer): void {
    this.edited.set(rel, content);
  }
  /** `rm -r`: the path and everything under it. */
  remove(rel: string): void {
    this.removed.push(rel);
    for (const k of this.edited.keys()) if (k === rel || k.startsWith(`${rel}/`)) this.edited.set(k, null);
  }
}

/** The working tree to record a fix-up's result in (every tree measureFixups opens is one). */
function edit(tree: SourceTree): WorkingTree | undefined {
  return tree instanceof WorkingTree ? tree : undefined;
}

/** The trees of `t`, each wrapped once in a WorkingTree, so fix-ups see those before them. */
function working(t: ReplayTrees): ReplayTrees {
  const opened = new Map<number, Promise<SourceTree | { error: string }>>();
  return {
    ...t,
    tree(index) {
      let tree = opened.get(index);
      if (!tree) opened.set(index, (tree = t.tree(index).then((r) => ('error' in r ? r : new WorkingTree(r)))));
      return tree;
    },
  };
}

/** A path as fix-ups write it, placed in one of the component's trees. */
async function place(p: string, t: ReplayTrees): Promise<{ tree: SourceTree; rel: string } | { skip: string; unreadable?: boolean }> {
  for (const v of OUTSIDE) if (p.startsWith(MARK(v))) return { skip: `\${${v}} is not a source tree` };
  let ref: SourceRef | undefined;
  let rel: string;
  if (p.startsWith(`${MARK('WORKDIR')}/`)) {
    const [dir, ...rest] = p.slice(MARK('WORKDIR').length + 1).split('/');
    ref = t.refs.find((r) => r.dir === dir);
    if (!ref) return { skip: `\${WORKDIR}/${dir} is none of the component's sources` };
    rel = rest.join('/');
    if (ref.subdir) {
      if (!rel.startsWith(`${ref.subdir}/`)) return { skip: `outside ${ref.subdir}, the part of ${dir} that was read` };
      rel = rel.slice(ref.subdir.length + 1);
    }
  } else if (p.startsWith(MARK('S'))) {
    ref = t.refs[0];
    rel = p.slice(MARK('S').length).replace(/^\/+/, '');
  } else if (p.startsWith('/')) {
    return { skip: 'an absolute path is not in the source tree' };
  } else {
    ref = t.refs[0];
    rel = p;
  }
  if (!ref) return { skip: 'the component has no sources' };
  const tree = await t.tree(ref.index);
  if ('error' in tree) return { skip: tree.error, unreadable: true };
  return { tree, rel: rel.replace(/^\.\//, '').replace(/\/+$/, '') };
}

/** ${VAR} in a manifest path value (not bash: no quoting), from the replay's environment. */
function expandPath(p: string, env: Map<string, string>): string {
  return p.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (m, name: string) => env.get(name) ?? m);
}

const show = (text: string, max = 48) => {
  const one = text.replace(/\n/g, '\\n');
  return JSON.stringify(one.length > max ? `${one.slice(0, max - 1)}…` : one);
};

function occurrences(haystack: string, needle: string): number {
  if (needle === '') return 0;
  let n = 0;
  for (let i = haystack.indexOf(needle); i >= 0; i = haystack.indexOf(needle, i + needle.length)) n++;
  return n;
}

/**
 * Measure every fix-up of a component on one release's trees, in the order
 * the ebuild runs them (src_prepare's code before, the prepare list, its code
 * after; then the later phases), each on the text the ones before it left.
 * The lines keep the manifest's order.
 */
export async function measureFixups(c: ResolvedComponent, trees: ReplayTrees): Promise<Measurement[]> {
  return (await replayFixups(c, trees)).measurements;
}

/** The fix-ups measured, and the trees as the ebuild leaves them after src_prepare (for facts read after it). */
export async function replayFixups(c: ResolvedComponent, trees: ReplayTrees): Promise<{ measurements: Measurement[]; trees: ReplayTrees }> {
  const t = working(trees);
  const { env, helpers } = replayEnvironment(c, t);
  const phases = (c.spec.phases ?? {}) as Partial<Record<(typeof PHASES)[number], Record<string, string | undefined>>>;
  const steps: { order: number; run: () => Promise<Measurement[]> }[] = [];
  // PATCHES apply before the fix-ups (the build system's default src_prepare runs eapply).
  steps.push({ order: -0.5, run: () => measurePatches(c, t) });
  (c.spec.prepare ?? []).forEach((op, i) => steps.push({ order: 0, run: () => measureOp(op, i, env, helpers, t) }));
  for (const [phase, code] of Object.entries(phases) as [(typeof PHASES)[number], Record<string, string | undefined>][]) {
    (['before', 'replace', 'after'] as const).forEach((part, k) => {
      const text = code[part];
      if (!text) return;
      // src_prepare's own code around the prepare list; other phases after it, in the order Portage runs them.
      const order = phase === 'src_prepare' ? k - 1 : (PHASE_ORDER.indexOf(phase) - PHASE_ORDER.indexOf('src_prepare')) * 10 + k;
      steps.push({ order, run: () => measurePhaseCode(text, `phases.${phase}.${part}`, env, helpers, t) });
    });
  }
  const measured = new Map<(typeof steps)[number], Measurement[]>();
  for (const step of [...steps].sort((a, b) => a.order - b.order)) measured.set(step, await step.run());
  return { measurements: steps.flatMap((step) => measured.get(step)!), trees: t };
}

/**
 * PATCHES, in the order the ebuild applies them (before every other fix-up):
 * our own patch files are applied to the working tree as `git apply` would
 * (exact context, any offset, no fuzz: util/unified-diff.ts), one line per
 * file a patch touches; one that applies backwards is already upstream. A
 * patch fetched by URL is a distfile the replay has no copy of (it reads the
 * sources only, and may be offline): said, never silently left out.
 */
async function measurePatches(c: ResolvedComponent, t: ReplayTrees): Promise<Measurement[]> {
  const out: Measurement[] = [];
  for (const p of patchesOf(c.spec.patches, c.pn, c.version, c.release)) {
    const base = { fixup: `patches[${p.at}]`, op: 'patch' as const };
    if (p.kind === 'url') {
      out.push({ ...base, key: `patches[${p.at}] ${p.name}`, what: `patch ${p.name}`, file: p.name, state: 'skipped', reason: `cannot replay a patch fetched by URL offline (${p.url}); the ebuild's prepare phase checks that it applies` });
      continue;
    }
    const what = `patch ${p.file}`;
    const read = t.patch ? await t.patch(p.file) : { error: 'no patch files are known to this replay' };
    if ('error' in read) {
      out.push({ ...base, key: `patches[${p.at}] ${p.file}`, what, file: p.file, state: 'error', reason: read.error });
      continue;
    }
    for (const df of read.diff) {
      const rel = (df.oldPath ?? df.newPath)!;
      const m = { ...base, key: `patches[${p.at}] ${p.file} ${rel}`, what, file: rel };
      const where = await place(rel, t);
      if ('skip' in where) {
        out.push({ ...m, state: where.unreadable ? 'unreadable' : 'skipped', reason: where.skip });
        continue;
      }
      const text = (await where.tree.read([where.rel])).get(where.rel)?.toString('utf8');
      if (text === undefined && df.oldPath !== null) {
        out.push({ ...m, state: 'no-file', reason: 'the file is gone (the patch would fail)' });
        continue;
      }
      const r = applyDiffFile(text, df);
      if (r.ok) {
        if (df.newPath === null) edit(where.tree)?.remove(where.rel);
        else edit(where.tree)?.write(where.rel, Buffer.from(r.text));
        const moved = r.offsets.map((o, k) => (o === 0 ? '' : `hunk ${k + 1} at ${o > 0 ? '+' : ''}${o} lines`)).filter(Boolean);
        out.push({ ...m, state: 'measured', count: df.hunks.length, ...(moved.length ? { reason: moved.join(', ') } : {}) });
        continue;
      }
      const back = applyDiffFile(text, df, true);
      if (back.ok) out.push({ ...m, state: 'measured', count: 0, aimMet: true, reason: 'the change is already there (the patch applies backwards)' });
      else out.push({ ...m, state: 'error', reason: r.reason });
    }
  }
  return out;
}

/** Phases in the order Portage runs them; src_prepare is placed by hand (its code wraps the prepare list). */
const PHASE_ORDER: readonly string[] = ['pkg_pretend', 'pkg_setup', 'src_unpack', 'src_prepare', 'src_configure', 'src_compile', 'src_test', 'src_install', 'pkg_preinst', 'pkg_postinst'];

async function measureOp(op: PrepareOp, i: number, env: Map<string, string>, helpers: Helpers, t: ReplayTrees): Promise<Measurement[]> {
  const fixup = `prepare[${i}]`;
  const base = { fixup, ...(op.when ? { when: op.when } : {}) };
  const out: Measurement[] = [];
  if ('remove' in op) {
    for (const file of op.remove) {
      const where = await place(expandPath(file, env), t);
      const m = { ...base, key: `${fixup} ${file}`, op: 'remove' as const, what: 'remove', file };
      if ('skip' in where) out.push({ ...m, state: where.unreadable ? 'unreadable' : 'skipped', reason: where.skip });
      else if (hasPath(await where.tree.files(), where.rel)) {
        out.push({ ...m, state: 'measured', count: 1 });
        edit(where.tree)?.remove(where.rel);
      } else out.push({ ...m, state: 'no-file' });
    }
    return out;
  }
  if ('replace' in op) {
    const r = op.replace;
    // As bash reads the double-quoted replacement: `\$` is a dollar sign, other quotes literal.
    const to = evaluateWord(`"${r.to.replace(/["`]|\\(?!\$)/g, '\\$&')}"`, env, helpers);
    const optional = r.skip_missing ? { optional: true } : {};
    for (const file of r.files) {
      const m = { ...base, ...optional, key: `${fixup} ${file}`, op: 'replace' as const, what: `replace ${show(r.from)}${r.first ? ' (first)' : ''}`, file };
      const where = await place(expandPath(file, env), t);
      if ('skip' in where) {
        out.push({ ...m, state: where.unreadable ? 'unreadable' : 'skipped', reason: where.skip });
        continue;
      }
      const text = (await where.tree.read([where.rel])).get(where.rel)?.toString('utf8');
      if (text === undefined) {
        out.push({ ...m, state: 'no-file' });
        continue;
      }
      const count = occurrences(text, r.from);
      // The next fix-up meets the replaced text (sed's s|from|to|g, literal on both sides; the first only with `first`).
      if (count > 0 && to.ok) {
        const replaced = r.first ? text.replace(r.from, () => to.value) : text.split(r.from).join(to.value);
        edit(where.tree)?.write(where.rel, Buffer.from(replaced));
      }
      const aimMet = count === 0 && (r.to === '' || (to.ok && to.value.trim() !== '' && text.includes(to.value)));
      out.push({ ...m, state: 'measured', count, aimMet, ...(count === 0 && aimMet ? { reason: r.to === '' ? 'the text it removes is gone' : `${show(to.ok ? to.value : r.to)} is already there` } : {}) });
    }
    return out;
  }
  if ('insert' in op) return measureInsert(op.insert, { ...base, ...(op.insert.skip_missing ? { optional: true } : {}) }, fixup, env, helpers, t);
  // delete_lines: the same sed script the ebuild runs.
  const call = { scripts: [`\\|${op.delete_lines.matching}|d`], extended: false, quiet: false, nullData: false, separate: false };
  for (const file of op.delete_lines.files) {
    const optional = op.delete_lines.skip_missing ? { optional: true } : {};
    const m = { ...base, ...optional, key: `${fixup} ${file}`, op: 'delete_lines' as const, what: `delete_lines ${show(op.delete_lines.matching)}`, file };
    out.push(await measureSedOnFile(m, call, expandPath(file, env), t));
  }
  return out;
}

/**
 * `insert`: the lines matching the address are counted with GNU sed (the
 * address is a basic regular expression), and the insertion itself runs
 * through sed as the ebuild's does, on the text the fix-ups before it left.
 * With no matching line, the aim is met when the lines are already there.
 */
async function measureInsert(
  spec: InsertSpec,
  base: { fixup: string; when?: string; optional?: boolean },
  fixup: string,
  env: Map<string, string>,
  helpers: Helpers,
  t: ReplayTrees,
): Promise<Measurement[]> {
  const re = spec.after ?? spec.before!;
  const address = `\\|${re}|`;
  const out: Measurement[] = [];
  const lines: string[] = [];
  for (const l of spec.lines) {
    const v = evaluateWord(`"${l.replace(/["`]|\\(?!\$)/g, '\\$&')}"`, env, helpers);
    if (!v.ok) {
      for (const file of spec.files) out.push({ ...base, key: `${fixup} ${file}`, op: 'insert', what: `insert ${spec.after !== undefined ? 'after' : 'before'} ${show(re)}`, file, state: 'skipped', reason: `cannot replay: ${v.reason}` });
      return out;
    }
    lines.push(v.value);
  }
  // The script as sed reads it after bash: a\ (or i\) and the lines, each but the last continued.
  const text = lines.map((l, i) => (i < lines.length - 1 ? `${l}\\` : l)).join('\n');
  const command = `${address}${spec.after !== undefined ? 'a' : 'i'}\\\n${text}`;
  const script = spec.first ? `0,${address}{\n${command}\n}` : command;
  const call = { scripts: [script], extended: false, quiet: false, nullData: false, separate: false };
  for (const file of spec.files) {
    const m = { ...base, key: `${fixup} ${file}`, op: 'insert' as const, what: `insert ${spec.after !== undefined ? 'after' : 'before'} ${show(re)}${spec.first ? ' (first)' : ''}`, file };
    const where = await place(expandPath(file, env), t);
    if ('skip' in where) {
      out.push({ ...m, state: where.unreadable ? 'unreadable' : 'skipped', reason: where.skip });
      continue;
    }
    const before = (await where.tree.read([where.rel])).get(where.rel);
    if (!before) {
      out.push({ ...m, state: 'no-file' });
      continue;
    }
    const matching = await runSed({ scripts: [`${address}p`], extended: false, quiet: true, nullData: false, separate: false }, before);
    if ('error' in matching) {
      out.push({ ...m, state: 'error', reason: matching.error });
      continue;
    }
    const found = matching.output.toString('utf8').split('\n').length - 1;
    const count = spec.first ? Math.min(found, 1) : found;
    if (count > 0) {
      const r = await runSed(call, before);
      if ('error' in r) {
        out.push({ ...m, state: 'error', reason: r.error });
        continue;
      }
      edit(where.tree)?.write(where.rel, r.output);
    }
    const aimMet = count === 0 && holdsLines(before.toString('utf8'), lines);
    out.push({ ...m, state: 'measured', count, aimMet, ...(aimMet ? { reason: 'the lines are already there' } : {}) });
  }
  return out;
}

/** Whether `text` holds `lines` as consecutive whole lines. */
function holdsLines(text: string, lines: string[]): boolean {
  const all = text.split('\n');
  for (let i = 0; i + lines.length <= all.length; i++) if (lines.every((l, k) => all[i + k] === l)) return true;
  return false;
}

async function measureSedOnFile(
  m: Omit<Measurement, 'state'>,
  call: Omit<SedCall, 'files'>,
  path: string,
  t: ReplayTrees,
): Promise<Measurement> {
  const where = await place(path, t);
  if ('skip' in where) return { ...m, state: where.unreadable ? 'unreadable' : 'skipped', reason: where.skip };
  let rels = [where.rel];
  if (/[*?[]/.test(where.rel)) {
    const re = globToRegExp(where.rel);
    rels = (await where.tree.files()).filter((f) => re.test(f));
    if (rels.length === 0) return { ...m, state: 'no-file', reason: 'the pattern matches no file' };
  }
  const contents = await where.tree.read(rels);
  let count = 0;
  for (const rel of rels) {
    const before = contents.get(rel);
    if (!before) return { ...m, state: 'no-file', ...(rels.length > 1 ? { reason: `${rel} is gone` } : {}) };
    const r = await runSed(call, before);
    if ('error' in r) return { ...m, state: 'error', reason: r.error };
    count += changedLines(before.toString('utf8'), r.output.toString('utf8'));
    if (!r.output.equals(before)) edit(where.tree)?.write(rel, r.output);
  }
  const aimMet = count === 0 && onlyDeletes(call.scripts);
  return { ...m, state: 'measured', count, aimMet, ...(aimMet ? { reason: 'the lines it deletes are gone' } : {}) };
}

/** Words of a command node, evaluated; the first failure is returned as the reason. */
function commandWords(node: Node, env: Map<string, string>, helpers: Helpers): { words: string[] } | { reason: string } {
  const words: string[] = [];
  for (const child of node.namedChildren) {
    if (!child || child.type === 'command_name' || child.type.endsWith('redirect')) continue;
    const w = evaluateWord(child.text, env, helpers);
    if (!w.ok) return { reason: w.reason };
    words.push(w.value);
  }
  return { words };
}

async function measurePhaseCode(text: string, where: string, env0: Map<string, string>, helpers: Helpers, t: ReplayTrees): Promise<Measurement[]> {
  const env = new Map(env0);
  const tree = await parseBash(text);
  const out: Measurement[] = [];
  let nth = 0;
  try {
    for (const node of walk(tree.rootNode)) {
      // Plain assignments (`local tests="${WORKDIR}/…"`) feed later words.
      if (node.type === 'variable_assignment' && node.parent?.type !== 'command') {
        const name = node.childForFieldName('name')?.text;
        const value = node.childForFieldName('value');
        if (!name) continue;
        const v = value ? evaluateWord(value.text, env, helpers) : ({ ok: true, value: '', glob: false } as const);
        if (v.ok) env.set(name, v.value);
        else env.delete(name);
        continue;
      }
      if (node.type !== 'command' || node.childForFieldName('name')?.text !== 'sed') continue;
      const line = node.startPosition.row + 1;
      const fixup = `${where}, line ${line}`;
      nth++;
      const words = commandWords(node, env, helpers);
      const raw = node.namedChildren.filter((c) => c && c.type !== 'command_name').map((c) => c!.text);
      const base = { fixup, op: 'sed' as const, what: `sed (${where.replace(/^phases\./, '')})` };
      if ('reason' in words) {
        out.push({ ...base, key: `${where}#${nth}`, file: raw.at(-1) ?? '', state: 'skipped', reason: `cannot replay: ${words.reason}` });
        continue;
      }
      const call = parseSedArgs(words.words);
      if (call === undefined) continue; // sed as a filter, not editing files
      if ('error' in call) {
        out.push({ ...base, key: `${where}#${nth}`, file: raw.at(-1) ?? '', state: 'skipped', reason: call.error });
        continue;
      }
      const what = `sed ${call.scripts.map((s) => `-e ${show(s, 40)}`).join(' ')}`;
      // Each file operand keeps the word as written, for people and as the key.
      const operandWords = raw.slice(raw.length - call.files.length);
      for (const [k, file] of call.files.entries()) {
        const label = operandWords[k] ?? file;
        out.push(await measureSedOnFile({ ...base, what, key: `${where}#${nth} ${label}`, file: label }, call, file, t));
      }
    }
  } finally {
    tree.delete();
  }
  return out;
}

/** Status of a fix-up in the new release, compared with the release it was written for. */
export function classify(now: Measurement, before: Measurement | undefined): ReplayLine {
  const prev = before?.state === 'measured' ? before.count : undefined;
  const withPrev = prev !== undefined ? { previous: prev } : {};
  switch (now.state) {
    case 'skipped':
      return { ...now, status: 'skipped', reason: now.reason ?? 'not replayed' };
    case 'unreadable':
      return { ...now, status: 'unreadable', reason: now.reason ?? 'the tree could not be read' };
    case 'error':
      return { ...now, status: 'fails', reason: now.reason ?? 'error', ...withPrev };
    case 'no-file':
      if (now.optional) return { ...now, status: 'skipped', reason: 'the file is absent; skip_missing lets the ebuild go on without it', ...withPrev };
      if (now.op === 'remove') return { ...now, status: 'upstream', reason: 'the path is gone: drop the fix-up (rm -r would die)', ...withPrev };
      return { ...now, status: 'fails', reason: now.reason ?? `the file is gone (sed -i would die)`, ...withPrev };
    case 'measured': {
      const n = now.count ?? 0;
      const unit = now.op === 'replace' ? 'match' : now.op === 'remove' ? 'path' : now.op === 'insert' ? 'matching line' : now.op === 'patch' ? 'hunk' : 'line';
      const plural = (k: number) => `${k} ${unit}${k === 1 ? '' : unit === 'match' ? 'es' : 's'}`;
      if (now.op === 'remove') return { ...now, status: 'applies', reason: 'the path exists', ...withPrev };
      if (n > 0) {
        if (prev !== undefined && prev !== n) return { ...now, status: 'differs', reason: `${plural(n)}, ${prev} before`, ...withPrev };
        if (now.op === 'patch') return { ...now, status: 'applies', reason: `${plural(n)} ${n === 1 ? 'applies' : 'apply'}${now.reason ? ` (${now.reason})` : ''}`, ...withPrev };
        return { ...now, status: 'applies', reason: now.op === 'replace' || now.op === 'insert' ? plural(n) : `${plural(n)} changed`, ...withPrev };
      }
      if (now.aimMet) return { ...now, status: 'upstream', reason: now.reason ?? 'already done upstream', ...withPrev };
      return {
        ...now,
        status: 'fails',
        reason: prev !== undefined && prev > 0 ? `no match (${plural(prev)} before): the code changed` : 'no match',
        ...withPrev,
      };
    }
  }
}
