import type { LocalDir } from '../trees/local-dir.js';
import { parseUnifiedDiff, regexLiteral } from './edits.js';
import { normalise, normaliseValue } from './gentoo.js';
import { SPACK_VARIANTS } from './names.js';
import { SpackEvaluator, STAGE, show, type Directive, type Val } from './python-eval.js';
import { parsePython, PythonSyntaxError, type Stmt } from './python-parse.js';
import { PeerReadError } from './read-error.js';
import { compareSpackVersions, decideSpec, specName, specRest, specVersion } from './spack-spec.js';
import { treeOfUrl, type CmakeFact, type DepFact, type FileEdit, type FixupFact, type PeerRecipe, type TreeRef, type Where } from './recipe.js';

/**
 * Reading a Spack package.py into a PeerRecipe for one version: parsed by
 * python-parse.ts, walked by python-eval.ts (never run). The version's
 * `when=` conditions are decided; the variants a condition names are
 * decided by our USE flags where they stand for one (SPACK_VARIANTS, or a
 * flag of the same name) and by the variant's default otherwise, so the
 * recipe read is Spack's default build of that version. What hangs on
 * anything else (a dependency's version, the compiler, the OS) is set aside
 * as not comparable, with the condition.
 */

const PACKAGE_DIRS = ['repos/spack_repo/builtin/packages', 'var/spack/repos/builtin/packages', 'packages', ''];

export interface SpackInput {
  tree: LocalDir;
  /** Spack's package name ("rocprim"). */
  name: string;
  requested: string;
  /** Our component's USE flags, to decide variants that stand for one. */
  useFlags: ReadonlySet<string>;
  /** Maps a Spack dependency name to a Gentoo atom, or says why it is not compared. */
  mapDep(name: string): { atom: string } | { implicit: string } | { unmapped: true };
}

/** Where the package's directory is in a spack-packages checkout (either layout), or undefined. */
export async function spackPackageDir(tree: LocalDir, dir: string): Promise<string | undefined> {
  for (const base of PACKAGE_DIRS) {
    const rel = base ? `${base}/${dir}` : dir;
    if (await tree.exists(`${rel}/package.py`)) return rel;
  }
  return undefined;
}

function parse(text: string, file: string): Stmt[] {
  try {
    return parsePython(text);
  } catch (err) {
    if (err instanceof PythonSyntaxError) throw new PeerReadError(err.message.replace(/^\d+:\d+: /, ''), file, err.line, err.column);
    throw err;
  }
}

const str = (v: Val | undefined): string | undefined => (v?.k === 'str' ? v.v : undefined);

/** The base classes a recipe imports from the tree's build_systems/ (ROCmPackage and friends), by class name. */
async function baseClasses(tree: LocalDir, pkgDir: string, source: string): Promise<Map<string, Stmt[]>> {
  const out = new Map<string, Stmt[]>();
  const root = pkgDir.replace(/packages\/[^/]+$/, '');
  for (const m of source.matchAll(/^from\s+spack_repo\.builtin\.build_systems\.(\w+)\s+import\s+([\w, ]+)$/gm)) {
    const file = `${root}build_systems/${m[1]}.py`;
    if (!(await tree.exists(file))) continue;
    const stmts = parse(await tree.readText(file), tree.display(file));
    for (const name of m[2]!.split(',').map((x) => x.trim())) {
      const cls = stmts.find((s): s is Extract<Stmt, { t: 'class' }> => s.t === 'class' && s.name === name);
      if (cls) out.set(name, cls.body);
    }
  }
  return out;
}

interface Run {
  ev: SpackEvaluator;
  versions: { v: string; line: number; kwargs: Record<string, Val> }[];
}

function run(stmts: Stmt[], source: string, version: string, bases: Map<string, Stmt[]>): Run {
  const ev = new SpackEvaluator({ version, source });
  ev.runModule(stmts, (_name, b) => b.some((x) => (x.t === 'name' && /Package$/.test(x.id)) || x.t === 'attr'), (n) => (n === 'ROCmPackage' || n === 'CudaPackage' ? bases.get(n) : undefined));
  const versions = ev.directives
    .filter((d) => d.name === 'version' && str(d.args[0]) !== undefined)
    .map((d) => ({ v: str(d.args[0])!, line: d.line, kwargs: d.kwargs }));
  return { ev, versions };
}

/** The version a recipe offers for `requested`: itself, else the nearest lower numeric one. */
function pickVersion(versions: Run['versions'], requested: string): Run['versions'][number] | undefined {
  const same = versions.find((v) => v.v === requested);
  if (same) return same;
  return versions
    .filter((v) => /^\d+(\.\d+)*$/.test(v.v) && compareSpackVersions(v.v, requested) < 0)
    .sort((a, b) => compareSpackVersions(a.v, b.v))
    .at(-1);
}

/** A URL with the version it was written for replaced (Spack's extrapolation for a version without its own url). */
function substituteVersion(url: string, version: string): string {
  const m = /(\d+\.\d+(?:\.\d+)*)(?=[^/]*$)/.exec(url.replace(/\.(tar\.gz|tar\.bz2|tar\.xz|tgz|zip)$/, ''));
  return m ? url.split(m[1]!).join(version) : url;
}

/** The repository of a git URL ("https://github.com/ROCm/rocm-libraries.git" → "ROCm/rocm-libraries"). */
function gitRepo(url: string): string | undefined {
  return /^https:\/\/github\.com\/([^/]+\/[^/]+?)(?:\.git)?\/?$/.exec(url)?.[1];
}

/** Reads the recipe of `requested` (or the nearest lower version); undefined when the package offers no such version. */
export async function readSpackRecipe(input: SpackInput): Promise<PeerRecipe | undefined> {
  const dirName = input.name.replace(/-/g, '_');
  const pkgDir = await spackPackageDir(input.tree, dirName);
  if (!pkgDir) return undefined;
  const file = `${pkgDir}/package.py`;
  const shown = input.tree.display(file);
  const source = await input.tree.readText(file);
  const stmts = parse(source, shown);
  const bases = await baseClasses(input.tree, pkgDir, source);
  let r = run(stmts, source, input.requested, bases);
  const picked = pickVersion(r.versions, input.requested);
  if (!picked) return undefined;
  if (picked.v !== input.requested) r = run(stmts, source, picked.v, bases);
  const version = picked.v;
  const ev = r.ev;
  const at = (line: number): Where => ({ file, line });
  const recipe: PeerRecipe = {
    peer: 'spack',
    file,
    version,
    requested: input.requested,
    nearest: version !== input.requested,
    sources: [],
    unpacked: [],
    deps: [],
    cmake: [],
    fixups: [],
    unreadable: [],
    aside: [],
  };
  if (ev.budgetExceeded) recipe.unreadable.push({ what: 'the recipe', why: 'the walk ran out of its step budget; facts after that point are missing', where: at(1) });

  const defaults = variantDefaults(ev);
  const decide: Decide = (texts) => decideResidues(texts, version, input.useFlags, defaults);
  readSources(ev, picked, version, source, decide, recipe, at);
  readDeps(input, ev, decide, recipe, at);
  readCmakeArgs(input, ev, source, defaults, decide, recipe, at);
  await readFixups(input, ev, pkgDir, decide, recipe, at);
  return recipe;
}

/** Decides a fact's conditions: the USE flags it needs, why it is left aside, or false when it does not apply. */
type Decide = (texts: string[]) => { when: string[] } | { skip: string } | false;

/** Variants and their defaults decide conditions our USE flags do not. */
function variantDefaults(ev: SpackEvaluator): Map<string, boolean | string> {
  const defaults = new Map<string, boolean | string>();
  for (const d of ev.directives) {
    if (d.name !== 'variant' || !str(d.args[0])) continue;
    const def = d.kwargs.default;
    if (def?.k === 'bool') defaults.set(str(d.args[0])!, def.v);
    else if (def?.k === 'str') defaults.set(str(d.args[0])!, def.v);
  }
  return defaults;
}

/** Sources: the version's URL (its own, url_for_version, or the class url extrapolated), git tags, resources. */
function readSources(ev: SpackEvaluator, picked: Run['versions'][number], version: string, source: string, decide: Decide, recipe: PeerRecipe, at: (line: number) => Where): void {
  const main = sourceOf(ev, picked, version);
  if ('url' in main) {
    recipe.sources.push({ url: main.url, when: [], where: at(picked.line) });
    const tree = treeOfUrl(main.url);
    recipe.unpacked.push({ dir: '', ...(tree ? { tree } : {}), where: at(picked.line) });
  } else if ('tree' in main) {
    recipe.sources.push({ url: `git+https://github.com/${main.tree.repo} ${main.tree.tag}`, when: [], where: at(picked.line) });
    recipe.unpacked.push({ dir: '', tree: main.tree, where: at(picked.line) });
  } else recipe.unreadable.push({ what: 'the source', why: main.why, where: at(picked.line), fact: 'sources' });
  for (const d of ev.directives) {
    if (d.name !== 'resource') continue;
    const ok = decide(conditionsOf(d));
    if (ok === false || 'skip' in ok) continue;
    const url = str(d.kwargs.url);
    if (!url) {
      recipe.unreadable.push({ what: 'a resource', why: `its url is ${show(d.kwargs.url ?? { k: 'none' })}`, where: at(d.line), fact: 'sources' });
      continue;
    }
    const placement = str(d.kwargs.placement) ?? str(d.kwargs.name) ?? '';
    const destination = str(d.kwargs.destination) ?? '';
    recipe.sources.push({ url, when: ok.when, where: at(d.line) });
    const tree = treeOfUrl(url);
    recipe.unpacked.push({ dir: normalise(`${destination}/${placement}`), ...(tree ? { tree } : {}), where: at(d.line) });
  }
  const root = ev.attribute('root_cmakelists_dir');
  const rootDir = str(root) ?? (root === undefined ? '.' : undefined);
  if (rootDir !== undefined) recipe.s = { dir: normalise(rootDir), where: at(lineOf(source, 'root_cmakelists_dir') ?? 1) };
  else recipe.unreadable.push({ what: 'root_cmakelists_dir', why: `it is ${show(root!)}`, where: at(lineOf(source, 'root_cmakelists_dir') ?? 1), fact: 'sources' });
}

/** Dependencies: depends_on and extends, their conditions decided. */
function readDeps(input: SpackInput, ev: SpackEvaluator, decide: Decide, recipe: PeerRecipe, at: (line: number) => Where): void {
  for (const d of ev.directives) {
    if (d.name !== 'depends_on' && d.name !== 'extends') continue;
    const spec = str(d.args[0]);
    if (!spec) {
      recipe.unreadable.push({ what: 'a dependency', why: `its spec is ${show(d.args[0] ?? { k: 'none' })}`, where: at(d.line), fact: 'deps' });
      continue;
    }
    const name = specName(spec);
    if (!name) continue;
    const ok = decide(conditionsOf(d));
    if (ok === false) continue;
    const types = typesOf(d.kwargs.type, d.name === 'extends' ? ['build', 'run'] : ['build', 'link']);
    const classes = [...new Set(types.flatMap((t) => (t === 'run' ? ['RDEPEND'] : t === 'link' ? ['DEPEND', 'RDEPEND'] : t === 'test' ? ['DEPEND'] : ['BDEPEND'])))].sort();
    const when = 'skip' in ok ? [] : [...ok.when, ...(types.length === 1 && types[0] === 'test' ? ['test'] : [])];
    const mapped = input.mapDep(name);
    const fact: DepFact = {
      ...('atom' in mapped ? { atom: mapped.atom } : {}),
      peerName: name,
      classes,
      when,
      slot: '',
      ...(specVersion(spec) ? { version: `@${specVersion(spec)}` } : {}),
      where: at(d.line),
    };
    if ('skip' in ok) {
      recipe.aside.push({ what: `dependency ${name}`, why: `only ${ok.skip}`, where: at(d.line) });
      continue;
    }
    if ('implicit' in mapped) continue;
    if (specRest(spec) && /\^/.test(specRest(spec))) fact.when.push(`(${specRest(spec)})`);
    recipe.deps.push(fact);
  }
}

/** CMake options: cmake_args() walked for this version. */
function readCmakeArgs(
  input: SpackInput,
  ev: SpackEvaluator,
  source: string,
  defaults: ReadonlyMap<string, boolean | string>,
  decide: Decide,
  recipe: PeerRecipe,
  at: (line: number) => Where,
): void {
  const args = ev.callMethod('cmake_args');
  const argsLine = lineOf(source, 'def cmake_args') ?? 1;
  if (args?.k === 'list') {
    for (const item of args.items) {
      const ok = decide(item.conds);
      if (ok === false) continue;
      if ('skip' in ok) {
        recipe.aside.push({ what: 'a CMake option', why: `${show(item.v)} only ${ok.skip}`, where: at(argsLine) });
        continue;
      }
      const fact = cmakeFact(item.v, ok.when, at(argsLine), input.useFlags, defaults);
      if (fact) recipe.cmake.push(fact);
      else recipe.unreadable.push({ what: 'a CMake option', why: `cannot read ${show(item.v)}`, where: at(argsLine), fact: 'cmake' });
    }
  } else if (args !== undefined) recipe.unreadable.push({ what: 'cmake_args()', why: `it returns ${show(args)}`, where: at(argsLine), fact: 'cmake' });
}

function lineOf(source: string, needle: string): number | undefined {
  const i = source.indexOf(needle);
  return i < 0 ? undefined : source.slice(0, i).split('\n').length;
}

/** A directive's conditions: its `with when(…)` blocks, its `when=`, and undecided ifs around it. */
function conditionsOf(d: Directive): string[] {
  const w = str(d.kwargs.when);
  return [...d.whens, ...(w !== undefined ? [w] : d.kwargs.when ? [show(d.kwargs.when)] : []), ...d.conds];
}

function typesOf(v: Val | undefined, fallback: string[]): string[] {
  if (!v) return fallback;
  if (v.k === 'str') return [v.v];
  if (v.k === 'list') return v.items.map((i) => str(i.v)).filter((x): x is string => x !== undefined);
  return fallback;
}

function sourceOf(ev: SpackEvaluator, picked: Run['versions'][number], version: string): { url: string } | { tree: TreeRef } | { why: string } {
  const own = str(picked.kwargs.url);
  if (own) return { url: own };
  const tag = str(picked.kwargs.tag);
  if (tag) {
    const git = str(ev.classAttrs.get('git'));
    const repo = git ? gitRepo(git) : undefined;
    if (repo) return { tree: { repo, tag } };
  }
  if (ev.classAttrs.get('url_for_version')?.k === 'func') {
    const v = ev.callMethod('url_for_version', [{ k: 'version', v: version }]);
    if (v?.k === 'str' && !v.v.includes('{')) return { url: v.v };
    return { why: `url_for_version(${version}) gives ${v ? show(v) : 'nothing'}` };
  }
  const url = str(ev.classAttrs.get('url'));
  if (url) return { url: substituteVersion(url, version) };
  return { why: 'the recipe states no url for this version' };
}

/**
 * Conditions left after the version: variants that stand for a USE flag of
 * ours become that flag, other variants take their default, amdgpu_target=…
 * is the target selection (compared elsewhere) and holds; anything else
 * (a dependency, the compiler, the platform) makes the fact not comparable.
 * Returns false when a condition is false in that build.
 */
export function decideResidues(texts: readonly string[], version: string, useFlags: ReadonlySet<string>, defaults: ReadonlyMap<string, boolean | string>): { when: string[] } | { skip: string } | false {
  const when: string[] = [];
  for (const raw of texts) {
    let text = raw.trim();
    if (text === 'self.run_tests') {
      when.push('test');
      continue;
    }
    if (text === 'not (self.run_tests)') {
      when.push('!test');
      continue;
    }
    // `"auto" not in self.spec.variants["amdgpu_target"]`: the target selection, which the targets fact compares.
    if (/variants\[["']amdgpu_target["']\]/.test(text)) continue;
    const negated = /^not \((.*)\)$/.exec(text);
    const inner = negated ? negated[1]! : text;
    const sat = /^satisfies\("(.*)"\)$/.exec(inner);
    text = sat ? sat[1]! : inner;
    if (!sat && !/^[@+~^%\w=:., {}-]+$/.test(text)) return { skip: `under the condition \`${raw}\`` };
    const d = decideSpec(text, version);
    if (d === true || d === false) {
      if (d === !!negated) return false;
      continue;
    }
    const parts = d.residue.split(/\s+/).filter(Boolean);
    const decided: (boolean | string)[] = [];
    for (const p of parts) {
      const v = /^([+~])([A-Za-z0-9_-]+)$/.exec(p) ?? /^([A-Za-z0-9_-]+)==?(.+)$/.exec(p);
      if (!v) return { skip: `under \`${raw}\`` };
      if (v[1] === '+' || v[1] === '~') {
        const name = v[2]!;
        const on = v[1] === '+';
        const map = SPACK_VARIANTS[name];
        if (map && useFlags.has(map.use)) decided.push(on ? map.use : `!${map.use}`);
        else if (map) decided.push(map.otherwise === on);
        else if (useFlags.has(name)) decided.push(on ? name : `!${name}`);
        else if (typeof defaults.get(name) === 'boolean') decided.push(defaults.get(name) === on);
        else return { skip: `under \`${raw}\` (variant ${name} has no boolean default)` };
      } else {
        const [name, value] = [v[1]!, v[2]!];
        if (name === 'amdgpu_target') {
          decided.push(true);
          continue;
        }
        if (['os', 'target', 'platform', 'arch', 'build_system', 'generator', 'build_type'].includes(name)) return { skip: `under \`${raw}\`` };
        const def = defaults.get(name);
        if (def === undefined) return { skip: `under \`${raw}\` (variant ${name} is not declared)` };
        decided.push(String(def) === value);
      }
    }
    // All parts hold together (a space in a spec is "and").
    if (negated) {
      if (decided.every((x) => x === true)) return false;
      if (decided.some((x) => x === false)) continue;
      const flags = decided.filter((x): x is string => typeof x === 'string');
      if (flags.length === 1) when.push(flags[0]!.startsWith('!') ? flags[0]!.slice(1) : `!${flags[0]}`);
      else return { skip: `under \`${raw}\`` };
      continue;
    }
    if (decided.some((x) => x === false)) return false;
    when.push(...decided.filter((x): x is string => typeof x === 'string'));
  }
  return { when };
}

/** A cmake_args() item as an option: define()/define_from_variant() or a "-DNAME=value" string. */
function cmakeFact(v: Val, when: string[], where: Where, useFlags: ReadonlySet<string>, defaults: ReadonlyMap<string, boolean | string>): CmakeFact | undefined {
  if (v.k === 'define') return { name: v.name, value: cmakeValue(v.value, useFlags, defaults), when, where };
  if (v.k === 'str') {
    const m = /^-D([A-Za-z_][A-Za-z0-9_.+-]*)(?::[A-Z]+)?=(.*)$/s.exec(v.v);
    if (m) return { name: m[1]!, value: normaliseValue(m[2]!).split(STAGE).join('{stage}'), when, where };
    return { name: v.v, value: '', when, where };
  }
  return undefined;
}

/** A define()'s value in the form our ebuilds write it, where there is one. */
function cmakeValue(v: Val, useFlags: ReadonlySet<string>, defaults: ReadonlyMap<string, boolean | string>): string {
  return cmakeValueOf(v, useFlags, defaults).split(STAGE).join('{stage}');
}

function cmakeValueOf(v: Val, useFlags: ReadonlySet<string>, defaults: ReadonlyMap<string, boolean | string>): string {
  switch (v.k) {
    case 'bool':
      return v.v ? 'ON' : 'OFF';
    case 'str':
      return normaliseValue(v.v);
    case 'num':
      return normaliseValue(String(v.v));
    case 'cond':
      if (v.text === 'self.run_tests') return '$(usex test ON OFF)';
      if (v.text === 'not (self.run_tests)') return '$(usex test OFF ON)';
      return `{${v.text}}`;
    case 'list':
      return v.items.map((i) => show(i.v)).join(';');
    case 'unknown': {
      const variant = /^variant:(.+)$/.exec(v.text)?.[1];
      if (!variant) return `{${v.text}}`;
      if (variant === 'amdgpu_target') return '$(get_amdgpu_flags)';
      const map = SPACK_VARIANTS[variant];
      if (map && useFlags.has(map.use)) return `$(usex ${map.use} ON OFF)`;
      if (useFlags.has(variant)) return `$(usex ${variant} ON OFF)`;
      const def = defaults.get(variant);
      if (typeof def === 'boolean') return def ? 'ON' : 'OFF';
      if (typeof def === 'string') return normaliseValue(def);
      return `{variant ${variant}}`;
    }
    default:
      return `{${show(v)}}`;
  }
}

/** patch() directives (their files read from the package directory) and filter_file calls of the hooks Spack runs. */
async function readFixups(
  input: SpackInput,
  ev: SpackEvaluator,
  pkgDir: string,
  decide: Decide,
  recipe: PeerRecipe,
  at: (line: number) => Where,
): Promise<void> {
  for (const d of ev.directives) {
    if (d.name !== 'patch') continue;
    const ok = decide(conditionsOf(d));
    if (ok === false) continue;
    const name = str(d.args[0]);
    if (!name) {
      recipe.unreadable.push({ what: 'a patch', why: `its name is ${show(d.args[0] ?? { k: 'none' })}`, where: at(d.line), fact: 'fixups' });
      continue;
    }
    const base = name.replace(/[?#].*$/, '').split('/').pop()!;
    if ('skip' in ok) {
      recipe.aside.push({ what: `patch ${base}`, why: `applied only ${ok.skip}`, where: at(d.line) });
      continue;
    }
    const fact: FixupFact = { id: `patch ${base}`, kind: 'patch', when: ok.when, where: at(d.line), edits: [] };
    const workingDir = str(d.kwargs.working_dir) ?? '.';
    const level = d.kwargs.level?.k === 'num' ? d.kwargs.level.v : 1;
    if (/^https?:\/\//.test(name)) {
      fact.unreadable ??= `fetched from ${name}; its text is not in the tree`;
    } else {
      const rel = `${pkgDir}/${name}`;
      if (!(await input.tree.exists(rel))) fact.unreadable ??= `${input.tree.display(rel)} is not in the tree`;
      else {
        const files = parseUnifiedDiff(await input.tree.readText(rel), level);
        if (files.length === 0) fact.unreadable ??= `${input.tree.display(rel)} holds no unified diff`;
        for (const f of files) fact.edits.push({ path: normalise(`${workingDir}/${f.path}`), removes: f.removes, adds: f.adds, ...(f.whole ? { whole: f.whole } : {}) });
      }
    }
    recipe.fixups.push(fact);
  }
  for (const hook of ev.hookMethods()) ev.callMethod(hook);
  const groups = new Map<string, FixupFact>();
  for (const call of ev.filterFiles) {
    const ok = decide(call.conds);
    if (ok === false) continue;
    if ('skip' in ok) {
      recipe.aside.push({ what: `filter_file in ${call.method}()`, why: `applied only ${ok.skip}`, where: at(call.line) });
      continue;
    }
    const [regex, repl, ...files] = call.args;
    const literal = call.kwargs.string?.k === 'bool' && call.kwargs.string.v;
    const removes = regex?.k === 'str' ? [literal ? regex.v : regexLiteral(regex.v, true)] : [show(regex ?? { k: 'none' })];
    const adds = repl ? [show(repl)] : [];
    for (const f of files) {
      const path = f.k === 'str' ? filterPath(f.v, call.cwd) : `/${show(f)}`;
      const id = `filter_file ${path}`;
      const edit: FileEdit = { path, removes, adds };
      const have = groups.get(id);
      if (have) {
        have.edits.push(edit);
        continue;
      }
      const fact: FixupFact = { id, kind: 'filter_file', when: ok.when, where: at(call.line), edits: [edit] };
      if (f.k !== 'str') fact.unreadable = `the file is ${show(f)}`;
      groups.set(id, fact);
    }
  }
  recipe.fixups.push(...groups.values());
}

/** A filter_file path relative to the stage, or '/…' when it names a place outside the sources (a prefix, the build directory). */
function filterPath(p: string, cwd: string): string {
  if (p.startsWith(STAGE)) return normalise(p.slice(STAGE.length));
  if (p.startsWith('/') || p.startsWith('{')) return p.startsWith('/') ? p : `/${p}`;
  const base = cwd.startsWith(STAGE) ? cwd.slice(STAGE.length) : cwd;
  if (/\{/.test(base)) return `/${base}/${p}`;
  return normalise(base ? `${base}/${p}` : p);
}
