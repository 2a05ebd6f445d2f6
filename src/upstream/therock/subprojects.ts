import path from 'node:path';
import { parseCMake, splitList, type CMakeCommand } from '../facts/cmake-lexer.js';
import { evaluateBounded, ExpansionBudget, ExpansionLimit, expandBounded, Scope, withBuiltins, withoutSelfReference, type VariableLookup } from './cmake-values.js';
import { printable, shown, treePathProblem, type Submodule } from './gitmodules.js';
import { SubmoduleIndex } from './submodule-index.js';

/**
 * The components TheRock builds, read from its CMake files: every
 * `therock_cmake_subproject_declare(<name> … EXTERNAL_SOURCE_DIR <dir> …
 * BUILD_DEPS … RUNTIME_DEPS … COMPILER_TOOLCHAIN …)`, with the source
 * directory resolved to a submodule and a subdirectory of it.
 *
 * Not an interpreter: control flow is not followed (a declaration under
 * `if(WIN32)` is listed like any other), and a variable is known only where
 * CMake's directory scoping makes it visible — set in the same CMakeLists.txt
 * or in one of the directories above it (add_subdirectory inherits the
 * parent's variables). A variable set in several branches contributes every
 * value to a dependency list; as a source directory it must have one value.
 * Variables that cannot be resolved so are reported, never guessed.
 *
 * Reading costs time linear in the bytes read: variable expansion is
 * bounded per file (EXPANSION_LIMITS, cmake-values.ts) and a file whose
 * expansion would exceed it is read up to that command and reported cut.
 */

export type SourceKind = 'submodule' | 'tree' | 'build' | 'unresolved';

export interface SubprojectSource {
  /**
   * submodule: in a pinned repository (`submodule`, `dir` below its root);
   * tree: in TheRock's own tree (`dir`); build: under the build directory
   * (downloaded or generated while building: TheRock's bundled third-party
   * code); unresolved: see `why`.
   */
  kind: SourceKind;
  /** EXTERNAL_SOURCE_DIR as written. */
  written: string;
  submodule?: string;
  dir?: string;
  why?: string;
  /** A directory of TheRock's tree that holds one submodule (rocgdb's wrapper around debug-tools/rocgdb/source): that submodule. */
  wraps?: string;
  /** An unresolved source that is wrong rather than unknown (escapes the tree, an absolute path): a problem. */
  refused?: boolean;
}

export interface SubprojectDep {
  name: string;
  /** BUILD_DEPS, RUNTIME_DEPS, or the subproject COMPILER_TOOLCHAIN implies. */
  kind: 'build' | 'runtime' | 'toolchain';
  /** Set only when it came from a variable (a dependency some configurations add). */
  via?: string;
}

export interface Subproject {
  name: string;
  /** Where it is declared: TheRock's file and line. */
  file: string;
  line: number;
  source: SubprojectSource;
  deps: SubprojectDep[];
  toolchain?: string;
  /** The artifacts build_tools/artifact_subprojects.json lists it under, when TheRock has that file. */
  artifacts?: string[];
}

export interface SubprojectsRead {
  subprojects: Subproject[];
  /** Malformed input (a CMake file CMake would reject, a source directory escaping the tree). */
  problems: string[];
  /** What could not be resolved without configuring TheRock: variables, computed names. */
  unresolved: string[];
}

export const DECLARE = 'therock_cmake_subproject_declare';

/**
 * The keywords of therock_cmake_subproject_declare as TheRock 7.14 parses
 * them: used only when the tree's own definition (its cmake_parse_arguments
 * call) cannot be found.
 */
const FALLBACK_KEYWORDS = [
  'ACTIVATE', 'USE_DIST_AMDGPU_TARGETS', 'USE_TEST_AMDGPU_TARGETS', 'DISABLE_AMDGPU_TARGETS', 'EXCLUDE_FROM_ALL', 'BACKGROUND_BUILD',
  'NO_MERGE_COMPILE_COMMANDS', 'OUTPUT_ON_FAILURE', 'NO_INSTALL_RPATH', 'FPRINT_SOURCE_HASH', 'EXTERNAL_SOURCE_DIR', 'BINARY_DIR', 'DIR_PREFIX',
  'INSTALL_DESTINATION', 'COMPILER_TOOLCHAIN', 'INTERFACE_PROGRAM_DIRS', 'CMAKE_LISTS_RELPATH', 'INTERFACE_PKG_CONFIG_DIRS',
  'INSTALL_RPATH_EXECUTABLE_DIR', 'INSTALL_RPATH_LIBRARY_DIR', 'LOGICAL_TARGET_NAME', 'FPRINT_SOURCE_DIR', 'BUILD_DEPS', 'RUNTIME_DEPS',
  'CMAKE_ARGS', 'TEST_SUBPROJECTS', 'CMAKE_INCLUDES', 'INTERFACE_INCLUDE_DIRS', 'INTERFACE_LINK_DIRS', 'IGNORE_PACKAGES', 'EXTRA_DEPENDS',
  'INSTALL_RPATH_DIRS', 'INTERFACE_INSTALL_RPATH_DIRS', 'DEFAULT_GPU_TARGETS', 'FPRINT_FILE_GLOBS', 'INSTALL_OPTIONAL_COMPONENTS',
];

/**
 * What each COMPILER_TOOLCHAIN makes a subproject depend on, as TheRock's
 * _therock_cmake_subproject_setup_toolchain does: "amd-hip" takes its
 * compiler configuration from hip-clr's dist tree, "amd-llvm" from amd-llvm's.
 */
const TOOLCHAIN_SUBPROJECT: Record<string, string> = { 'amd-hip': 'hip-clr', 'amd-llvm': 'amd-llvm' };

/** A file's directory in TheRock's tree ('' for the root). */
const dirOf = (file: string) => (path.posix.dirname(file) === '.' ? '' : path.posix.dirname(file));

/**
 * The root of TheRock's tree while expanding: a NUL never appears in a CMake
 * file that is read (files holding one are refused as binary), so a value
 * that starts with it came from THEROCK_SOURCE_DIR or CMAKE_CURRENT_SOURCE_DIR,
 * not from a literal absolute path.
 */
const ROOT = '\0';
const BUILD_VARIABLES = ['CMAKE_CURRENT_BINARY_DIR', 'CMAKE_BINARY_DIR', 'THEROCK_BINARY_DIR', 'PROJECT_BINARY_DIR'];

/**
 * What expanding a file's variables may produce, in characters: a floor for
 * small files that use long lists, plus a few times the file's own size. A
 * real TheRock file expands to a fraction of this; a hostile one stops here.
 */
export const EXPANSION_LIMITS = { floor: 64 * 1024, perByte: 8 };

const budgetFor = (text: string) => new ExpansionBudget(EXPANSION_LIMITS.floor + EXPANSION_LIMITS.perByte * text.length);

function builtins(file: string): Map<string, string> {
  const dir = dirOf(file);
  const here = dir === '' ? ROOT : `${ROOT}/${dir}`;
  // project(THEROCK) makes THEROCK_SOURCE_DIR the top of the tree.
  const out: [string, string][] = [['THEROCK_SOURCE_DIR', ROOT], ['CMAKE_SOURCE_DIR', ROOT], ['CMAKE_CURRENT_LIST_DIR', here]];
  // CMAKE_CURRENT_SOURCE_DIR is the directory of the CMakeLists.txt being processed; in an included .cmake file it is the includer's, unknown here.
  if (path.posix.basename(file) === 'CMakeLists.txt') out.push(['CMAKE_CURRENT_SOURCE_DIR', here]);
  return new Map(out);
}

/** The values a `set(...)` call gives: the arguments before CACHE or PARENT_SCOPE. */
function setValues(args: string[]): string[] {
  const end = args.findIndex((a) => a === 'CACHE' || a === 'PARENT_SCOPE');
  return end < 0 ? args : args.slice(0, end);
}

interface ParsedFile {
  file: string;
  commands: CMakeCommand[];
  budget: ExpansionBudget;
  /** The line at which reading stopped, its expansion limit reached. */
  cutAt?: number;
}

export interface CMakeInput {
  /** CMake files of the tree (CMakeLists.txt and *.cmake), path → text. */
  files: Map<string, string>;
  submodules: Submodule[];
}

export function readSubprojects(input: CMakeInput): SubprojectsRead {
  const problems: string[] = [];
  const unresolved: string[] = [];
  const parsed = new Map<string, ParsedFile>();
  for (const [file, text] of [...input.files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (text.includes('\0')) {
      problems.push(`${file}: holds NUL bytes (not a CMake file); not read`);
      continue;
    }
    const p = parseCMake(text);
    // CMake stops at the first syntax error; so does this reading, keeping the commands before it.
    for (const e of p.errors) problems.push(`${file}:${e.line}: ${e.message}; the rest of the file is not read`);
    parsed.set(file, { file, commands: p.commands, budget: budgetFor(text) });
  }
  const keywords = new Set(declareKeywords(parsed) ?? FALLBACK_KEYWORDS);
  const submodules = new SubmoduleIndex(input.submodules);
  /** Runs `step` for one command of `f`; false once the file's expansion limit is reached (reported once). */
  const within = (f: ParsedFile, c: CMakeCommand, step: () => void): boolean => {
    if (f.cutAt !== undefined) return c.line < f.cutAt;
    try {
      step();
      return true;
    } catch (err) {
      if (!(err instanceof ExpansionLimit)) throw err;
      f.cutAt = c.line;
      problems.push(`${f.file}:${c.line}: ${err.message}, the most a file of its size may; the rest of the file is not read`);
      return false;
    }
  };

  // Directory scopes, top down: a CMakeLists.txt sees what the nearest CMakeLists.txt above it set.
  const scopes = new Map<string, Scope>();
  const scopeOf = (dir: string): Scope => {
    const have = scopes.get(dir);
    if (have) return have;
    let parent: Scope | undefined;
    if (dir !== '') {
      let up = dirOf(dir);
      for (;;) {
        if (parsed.has(up === '' ? 'CMakeLists.txt' : `${up}/CMakeLists.txt`)) {
          parent = scopeOf(up);
          break;
        }
        if (up === '') break;
        up = dirOf(up);
      }
    }
    const scope = new Scope(parent);
    const own = parsed.get(dir === '' ? 'CMakeLists.txt' : `${dir}/CMakeLists.txt`);
    if (own) {
      const vars = withBuiltins(scope, builtins(own.file));
      for (const c of outsideFunctions(own.commands)) if (!within(own, c, () => assign(scope, vars, c, own.budget))) break;
    }
    scopes.set(dir, scope);
    return scope;
  };

  const subprojects: Subproject[] = [];
  for (const f of parsed.values()) {
    const { file, commands } = f;
    const isLists = path.posix.basename(file) === 'CMakeLists.txt';
    const vars = withBuiltins(isLists ? scopeOf(dirOf(file)) : new Scope(), builtins(file));
    for (const { command, inFunction } of withFunctions(commands)) {
      if (command.name !== DECLARE) continue;
      if (inFunction !== undefined) {
        if (f.cutAt !== undefined && command.line >= f.cutAt) break;
        unresolved.push(`${file}:${command.line}: ${DECLARE} inside function ${shown(inFunction)}: its callers are not followed`);
        continue;
      }
      let s: Subproject | undefined;
      if (!within(f, command, () => (s = declaration(command, file, vars, keywords, submodules, problems, unresolved, f.budget)))) break;
      if (s) subprojects.push(s);
    }
  }
  const seen = new Map<string, Subproject>();
  for (const s of subprojects) {
    const first = seen.get(s.name);
    if (first) unresolved.push(`${s.file}:${s.line}: ${shown(s.name)} is declared again (first at ${first.file}:${first.line}); configurations pick one`);
    else seen.set(s.name, s);
  }
  return { subprojects: [...seen.values()].sort((a, b) => (a.name.toLowerCase() < b.name.toLowerCase() ? -1 : a.name.toLowerCase() > b.name.toLowerCase() ? 1 : 0)), problems, unresolved };
}

/** The keyword lists of the declare function, from its own cmake_parse_arguments call in the tree. */
function declareKeywords(parsed: Map<string, ParsedFile>): string[] | undefined {
  for (const { commands } of parsed.values()) {
    const at = commands.findIndex((c) => c.name === 'function' && c.args[0]?.value === DECLARE);
    if (at < 0) continue;
    for (const c of commands.slice(at + 1)) {
      if (c.name === 'endfunction') break;
      if (c.name !== 'cmake_parse_arguments') continue;
      // cmake_parse_arguments(PARSE_ARGV <n> <prefix> <options> <one_value> <multi_value>) or (<prefix> <options> <one> <multi> args…)
      const values = c.args.map((a) => a.value);
      const lists = values[0] === 'PARSE_ARGV' ? values.slice(3, 6) : values.slice(1, 4);
      const words = lists.flatMap((l) => splitList(l));
      if (words.length > 0 && words.every((w) => /^[A-Z][A-Z0-9_]*$/.test(w))) return words;
    }
  }
  return undefined;
}

/** Commands with the function or macro body they sit in (a declare there is a template, not a declaration). */
function* withFunctions(commands: CMakeCommand[]): Generator<{ command: CMakeCommand; inFunction?: string }> {
  let inside: string | undefined;
  for (const c of commands) {
    if (c.name === 'function' || c.name === 'macro') {
      inside ??= c.args[0]?.value ?? '?';
      continue;
    }
    if (c.name === 'endfunction' || c.name === 'endmacro') {
      inside = undefined;
      continue;
    }
    yield inside !== undefined ? { command: c, inFunction: inside } : { command: c };
  }
}

function outsideFunctions(commands: CMakeCommand[]): CMakeCommand[] {
  return [...withFunctions(commands)].filter((c) => c.inFunction === undefined).map((c) => c.command);
}

/** What one command does to the variables of its scope, expanded where it stands (as CMake expands at `set` time). */
function assign(scope: Scope, vars: VariableLookup, c: CMakeCommand, budget: ExpansionBudget): void {
  const nameAt = c.name === 'set' ? 0 : c.name === 'list' && c.args[0]?.value === 'APPEND' ? 1 : -1;
  if (nameAt >= 0 && c.args.length > nameAt) {
    const [name, ...extra] = evaluateBounded([c.args[nameAt]!], vars, budget);
    if (name === undefined || name.includes('${')) return;
    // `set(L ${L} more)` adds to L what L has: the reference is not expanded (cmake-values.ts).
    const rest = c.args.slice(nameAt + 1).flatMap((a) => withoutSelfReference(a, name) ?? []);
    const values = [...extra, ...evaluateBounded(rest, vars, budget)];
    scope.add(name, (c.name === 'set' ? setValues(values) : values).join(';'), budget);
  } else if (c.name === 'therock_enable_external_source' && c.args.length >= 2) {
    // TheRock's cmake/therock_external_source.cmake: THEROCK_<NAME>_SOURCE_DIR
    // is the given default unless the user points THEROCK_USE_EXTERNAL_<NAME> elsewhere.
    const [pkg, dflt] = evaluateBounded(c.args, vars, budget);
    if (pkg === undefined || dflt === undefined || pkg.includes('${')) return;
    scope.add(`THEROCK_${pkg.toUpperCase().replace(/-/g, '_')}_SOURCE_DIR`, dflt, budget);
  }
}

/** Variable names still referenced in an expanded value, printable. */
function references(value: string): string[] {
  return [...new Set([...value.matchAll(/\$\{([^${}]*)\}/g)].map((m) => printable(m[1]!)))];
}

function declaration(
  c: CMakeCommand,
  file: string,
  vars: VariableLookup,
  keywords: Set<string>,
  submodules: SubmoduleIndex,
  problems: string[],
  unresolved: string[],
  budget: ExpansionBudget,
): Subproject | undefined {
  const at = `${file}:${c.line}`;
  const nameArg = c.args[0];
  if (!nameArg) {
    problems.push(`${at}: ${DECLARE} without a name`);
    return undefined;
  }
  const name = expandBounded(nameArg.value, vars, budget);
  if (name.includes('${') || !/^[A-Za-z0-9_.+-]+$/.test(name)) {
    unresolved.push(`${at}: ${DECLARE} ${shown(nameArg.value)}: the name is not a literal subproject name`);
    return undefined;
  }
  // Arguments grouped by keyword; each kept with what it was before expansion.
  const groups = new Map<string, { raw: string; values: string[] }[]>();
  let current: string | undefined;
  for (const a of c.args.slice(1)) {
    if (a.kind === 'unquoted' && keywords.has(a.value)) {
      current = a.value;
      groups.set(current, groups.get(current) ?? []);
      continue;
    }
    if (current === undefined) continue;
    groups.get(current)!.push({ raw: a.value, values: evaluateBounded([a], vars, budget) });
  }
  const sourceArg = groups.get('EXTERNAL_SOURCE_DIR')?.[0];
  const source: SubprojectSource = sourceArg ? locate(sourceArg.raw, file, vars, submodules, budget) : { kind: 'unresolved', written: '', why: 'is not given' };
  if (source.kind === 'unresolved') {
    const what = `${at}: ${name}: EXTERNAL_SOURCE_DIR${source.written ? ` ${shown(source.written)}` : ''} ${source.why}`;
    (source.refused ? problems : unresolved).push(what);
  }
  const deps: SubprojectDep[] = [];
  const have = new Set<string>();
  for (const [keyword, kind] of [['BUILD_DEPS', 'build'], ['RUNTIME_DEPS', 'runtime']] as const) {
    for (const a of groups.get(keyword) ?? []) {
      const via = a.raw.includes('${') ? printable(a.raw) : undefined;
      for (const v of a.values) {
        const refs = references(v);
        if (refs.length > 0) {
          unresolved.push(`${at}: ${name}: ${keyword} ${shown(a.raw)}: \${${refs.join('}, ${')}} not known here`);
          continue;
        }
        if (!/^[A-Za-z0-9_.+-]+$/.test(v)) continue;
        if (have.has(`${kind} ${v}`)) continue;
        have.add(`${kind} ${v}`);
        deps.push({ name: v, kind, ...(via ? { via } : {}) });
      }
    }
  }
  const toolchain = groups.get('COMPILER_TOOLCHAIN')?.[0]?.values[0];
  const implied = toolchain ? TOOLCHAIN_SUBPROJECT[toolchain] : undefined;
  if (implied && implied !== name && !deps.some((d) => d.name === implied)) deps.push({ name: implied, kind: 'toolchain' });
  return { name, file, line: c.line, source, deps, ...(toolchain ? { toolchain } : {}) };
}

/** Where an EXTERNAL_SOURCE_DIR points: a submodule's subdirectory, TheRock's own tree, the build tree, or unresolved. */
export function locate(written: string, file: string, vars: VariableLookup, submodules: SubmoduleIndex, budget: ExpansionBudget): SubprojectSource {
  const known: VariableLookup = { get: (name) => (BUILD_VARIABLES.includes(name) ? undefined : vars.get(name)) };
  const value = expandBounded(written, known, budget);
  if (BUILD_VARIABLES.some((b) => value.startsWith(`\${${b}}`))) return { kind: 'build', written };
  const refs = references(value);
  if (refs.length > 0) return { kind: 'unresolved', written, why: `needs \${${refs.join('}, ${')}}, which is not set where it is declared` };
  if (value.includes(';')) return { kind: 'unresolved', written, why: 'has more than one possible value' };
  let full: string;
  if (value.startsWith(ROOT)) full = value.slice(ROOT.length);
  else if (value.startsWith('/')) return { kind: 'unresolved', written, why: 'is an absolute path outside the tree', refused: true };
  else {
    if (path.posix.basename(file) !== 'CMakeLists.txt') return { kind: 'unresolved', written, why: 'is relative to the including directory, unknown in a .cmake file' };
    full = `${dirOf(file)}/${value}`;
  }
  const parts: string[] = [];
  for (const part of full.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (parts.length === 0) return { kind: 'unresolved', written, why: 'escapes the tree', refused: true };
      parts.pop();
    } else parts.push(part);
  }
  const rel = parts.join('/');
  if (rel !== '' && treePathProblem(rel)) return { kind: 'unresolved', written, why: `resolves to ${shown(rel)}, which ${treePathProblem(rel)}`, refused: true };
  const sub = submodules.holding(rel);
  if (sub) return { kind: 'submodule', written, submodule: sub.name, dir: rel.slice(sub.path.length + 1) };
  const wrapped = submodules.under(rel);
  return { kind: 'tree', written, dir: rel, ...(wrapped.count === 1 ? { wraps: wrapped.first!.name } : {}) };
}
