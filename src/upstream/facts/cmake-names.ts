import { isBuildFile } from './build-facts.js';
import type { Location } from './cmake-facts.js';
import { parseCMake } from './cmake-lexer.js';
import type { SourceTree } from '../trees/source-tree.js';

/**
 * The cache variable names a project's CMake files define or read, so that a
 * `-DNAME=…` an ebuild passes can be checked against the sources: a name
 * nothing defines or reads is ignored by CMake (it warns "Manually-specified
 * variables were not used") and the ebuild line does nothing.
 *
 * Not an interpreter, like the rest of the CMake reading: every command
 * counts, whichever branch it is in. A name counts as known when it is
 * - defined: option(), cmake_dependent_option(), set(NAME … CACHE …);
 * - read: ${NAME} or $CACHE{NAME} anywhere, a bare word or DEFINED NAME in
 *   if()/elseif()/while(), list(<op> NAME …), foreach(… IN LISTS NAME);
 * - CMake's own, as its documentation names them: CMAKE_*, BUILD_SHARED_LIBS,
 *   BUILD_TESTING, find_package()'s <Pkg>_DIR and <Pkg>_ROOT hints and
 *   CMAKE_{DISABLE,REQUIRE}_FIND_PACKAGE_<Pkg> for a package the project
 *   finds, and the documented hints of the find modules and FetchContent it
 *   uses.
 */
export interface CMakeNames {
  /** Build files read (CMakeLists.txt and *.cmake). */
  files: number;
  /** Names and where each was first defined or read. */
  known: Map<string, { how: 'defined' | 'read'; where: Location; via: string }>;
  /** find_package() names, as written. */
  packages: Set<string>;
  fetchContent: boolean;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_.+-]*$/;
const REF = /\$(?:CACHE)?\{([A-Za-z_][A-Za-z0-9_.+-]*)\}/g;
/** Words of an if() condition that are operators or constants, not variables. */
const CONDITION_WORDS = new Set(
  'NOT AND OR COMMAND POLICY TARGET TEST EXISTS IS_NEWER_THAN IS_DIRECTORY IS_SYMLINK IS_ABSOLUTE IS_READABLE IS_WRITABLE IS_EXECUTABLE MATCHES LESS GREATER EQUAL LESS_EQUAL GREATER_EQUAL STRLESS STRGREATER STREQUAL STRLESS_EQUAL STRGREATER_EQUAL VERSION_LESS VERSION_GREATER VERSION_EQUAL VERSION_LESS_EQUAL VERSION_GREATER_EQUAL PATH_EQUAL IN_LIST DEFINED ON OFF YES NO TRUE FALSE Y N IGNORE NOTFOUND'.split(' '),
);

export async function collectCMakeNames(tree: SourceTree): Promise<CMakeNames> {
  const files = (await tree.files()).filter((f) => isBuildFile(f) && /(^|\/)CMakeLists\.txt$|\.cmake$/.test(f));
  const contents = await tree.read(files);
  const out: CMakeNames = { files: 0, known: new Map(), packages: new Set(), fetchContent: false };
  const add = (name: string | undefined, how: 'defined' | 'read', where: Location, via: string) => {
    if (!name || !NAME.test(name)) return;
    const had = out.known.get(name);
    // A definition is the better witness; otherwise the first place read.
    if (!had || (had.how === 'read' && how === 'defined')) out.known.set(name, { how, where, via });
  };
  for (const file of files) {
    const buf = contents.get(file);
    if (!buf) continue;
    out.files++;
    for (const c of parseCMake(buf.toString('utf8')).commands) {
      const where = { file, line: c.line };
      const raw = c.args.map((a) => a.value);
      for (const a of c.args) for (const m of a.value.matchAll(REF)) add(m[1], 'read', { file, line: a.line }, '${…}');
      switch (c.name) {
        case 'option':
          add(raw[0], 'defined', where, 'option()');
          break;
        case 'cmake_dependent_option':
          add(raw[0], 'defined', where, 'cmake_dependent_option()');
          break;
        case 'set':
          if (raw.includes('CACHE')) add(raw[0], 'defined', where, 'set(… CACHE …)');
          break;
        case 'if':
        case 'elseif':
        case 'while':
          c.args.forEach((a, i) => {
            if (a.kind !== 'unquoted' || CONDITION_WORDS.has(a.value.toUpperCase()) || /^\d/.test(a.value)) return;
            add(a.value, 'read', where, i > 0 && raw[i - 1] === 'DEFINED' ? 'if(DEFINED …)' : 'if()');
          });
          break;
        case 'list':
          add(raw[1], 'read', where, 'list()');
          break;
        case 'foreach': {
          const lists = raw.indexOf('LISTS');
          if (lists > 0) for (const n of raw.slice(lists + 1).filter((x) => x !== 'ITEMS')) add(n, 'read', where, 'foreach(… IN LISTS …)');
          break;
        }
        case 'find_package':
          if (raw[0]) out.packages.add(raw[0]);
          break;
        case 'fetchcontent_declare':
          out.fetchContent = true;
          break;
        case 'include':
          if (raw[0] === 'FetchContent') out.fetchContent = true;
          break;
        default:
          break;
      }
    }
  }
  return out;
}

/** Find modules whose documented hint variables start with a prefix, by the find_package() names that load them. */
const MODULE_HINTS: { prefix: RegExp; packages: string[]; module: string }[] = [
  { prefix: /^BLA_/, packages: ['BLAS', 'LAPACK'], module: 'FindBLAS/FindLAPACK' },
  { prefix: /^Boost_/, packages: ['Boost'], module: 'FindBoost' },
  { prefix: /^OpenGL_GL_PREFERENCE$/, packages: ['OpenGL'], module: 'FindOpenGL' },
  { prefix: /^Python_/, packages: ['Python'], module: 'FindPython' },
  { prefix: /^Python3_/, packages: ['Python3'], module: 'FindPython3' },
];

/** Whether a -D name reaches the project, and the evidence; undefined when nothing in the tree or CMake explains it. */
export function explainName(name: string, names: CMakeNames): string | undefined {
  const hit = names.known.get(name);
  if (hit) return `${hit.via} at ${hit.where.file}:${hit.where.line}`;
  const pkg = /^CMAKE_(?:DISABLE|REQUIRE)_FIND_PACKAGE_(.+)$/.exec(name)?.[1];
  // Stale when the project no longer finds the package: the switch then does nothing.
  if (pkg !== undefined) return names.packages.has(pkg) ? `CMake's own, for find_package(${pkg})` : undefined;
  if (name.startsWith('CMAKE_') || name === 'BUILD_SHARED_LIBS' || name === 'BUILD_TESTING') return "CMake's own";
  const hint = /^(.+)_(DIR|ROOT)$/.exec(name);
  if (hint) {
    const found = [...names.packages].find((p) => p === hint[1] || (hint[2] === 'ROOT' && p.toUpperCase() === hint[1]));
    if (found) return `CMake's own, the ${hint[2] === 'DIR' ? 'config directory' : 'search root'} of find_package(${found})`;
  }
  if (/^FETCHCONTENT_/.test(name) && names.fetchContent) return "CMake's own, FetchContent's";
  for (const m of MODULE_HINTS) {
    if (m.prefix.test(name) && m.packages.some((p) => names.packages.has(p))) return `CMake's own, a documented hint of ${m.module}`;
  }
  return undefined;
}
