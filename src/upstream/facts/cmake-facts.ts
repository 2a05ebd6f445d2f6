import path from 'node:path';
import { evaluateArgs, type CMakeCommand } from './cmake-lexer.js';

export interface Location {
  file: string;
  line: number;
}

export interface PackageFact {
  /** find_package's package name, or the pkg-config module name. */
  name: string;
  via: 'find_package' | 'pkg-config';
  /** Minimum versions asked for, in the order found (several calls may ask differently). */
  versions: string[];
  required: boolean;
  where: Location[];
}

export interface OptionFact {
  name: string;
  /** Defaults as declared (a name may be declared in several places). */
  defaults: string[];
  via: 'option' | 'cmake_dependent_option' | 'cache';
  where: Location;
}

export interface TargetsFact {
  /** The variable holding the default GPU target list, e.g. GPU_TARGETS or DEFAULT_AMDGPU_TARGETS. */
  variable: string;
  /** Every list it is set to, as written after expansion. */
  values: string[];
  where: Location;
}

export interface DownloadFact {
  name: string;
  via: 'FetchContent' | 'ExternalProject' | 'download_project' | 'CPM' | 'file(DOWNLOAD)';
  /** What it fetches: "git <url> <tag>", "url <url>", "dir <path>". */
  sources: string[];
  where: Location;
}

/** What a project's CMake commands declare that matters to an ebuild. */
export interface CMakeFacts {
  cmakeMinimum?: { value: string; where: Location };
  project?: { name: string; version?: string; languages: string[]; where: Location };
  /** rocm_setup_version(VERSION …), the version ROCm's packaging reports. */
  setupVersion?: { value: string; where: Location };
  sonames: { target: string; version?: string; soversion?: string; where: Location }[];
  packages: PackageFact[];
  options: OptionFact[];
  gpuTargets: TargetsFact[];
  downloads: DownloadFact[];
}

/** One CMake file's commands, as parsed. */
export interface CMakeFile {
  file: string;
  commands: CMakeCommand[];
}

const VERSION_RE = /^v?\d+(\.\d+)*(\.\.\.<?\d+(\.\d+)*)?$/;
const TARGET_VAR = /(TARGETS|ARCHITECTURES|_ARCHS?)$/i;
const mentionsTargets = (v: string) => /\bgfx[0-9a-f]+|^all$/i.test(v);

/**
 * What the commands of a project's CMake files say, in two passes: the
 * variables first, so that a version or a target list kept in one resolves,
 * then every command that declares something an ebuild depends on. `files`
 * come root first: the first declaration found is the one reported.
 */
export function readCMakeFacts(files: readonly CMakeFile[]): CMakeFacts {
  const vars = plainVariables(files);
  const found = new Found();
  for (const { file, commands } of files) {
    const top = file === 'CMakeLists.txt';
    for (const c of commands) {
      const read = READERS.get(c.name);
      if (read) read(evaluateArgs(c.args, vars), { file, line: c.line }, found, { top, command: c.name });
    }
  }
  return found.facts;
}

/**
 * Variables: the first plain value each is set to anywhere, root first.
 * Enough to resolve version strings and target lists kept in variables.
 */
function plainVariables(files: readonly CMakeFile[]): Map<string, string> {
  const vars = new Map<string, string>();
  for (const { commands } of files) {
    for (const c of commands) {
      if (c.name === 'set' && c.args.length >= 2) {
        const name = c.args[0]!.value;
        if (vars.has(name) || name.includes('$')) continue;
        const cache = c.args.findIndex((a) => a.kind === 'unquoted' && a.value === 'CACHE');
        const values = evaluateArgs(c.args.slice(1, cache < 0 ? undefined : cache), vars);
        vars.set(name, values.join(';'));
      } else if (c.name === 'project' && c.args.length >= 1) {
        // project(name VERSION x) defines PROJECT_VERSION and <name>_VERSION, which SOVERSIONs often use.
        const args = evaluateArgs(c.args, vars);
        if (args[0] && !vars.has('PROJECT_NAME')) vars.set('PROJECT_NAME', args[0]);
        const v = args[args.indexOf('VERSION') + 1];
        if (args.includes('VERSION') && v) {
          for (const name of ['PROJECT_VERSION', `${args[0]}_VERSION`]) if (!vars.has(name)) vars.set(name, v);
          const [major, minor, patch] = v.split('.');
          if (major !== undefined && !vars.has('PROJECT_VERSION_MAJOR')) vars.set('PROJECT_VERSION_MAJOR', major);
          if (minor !== undefined && !vars.has('PROJECT_VERSION_MINOR')) vars.set('PROJECT_VERSION_MINOR', minor);
          if (patch !== undefined && !vars.has('PROJECT_VERSION_PATCH')) vars.set('PROJECT_VERSION_PATCH', patch);
        }
      } else if (c.name === 'rocm_check_target_ids' && c.args.length >= 3) {
        const args = evaluateArgs(c.args, vars);
        const t = args.indexOf('TARGETS');
        if (t > 0 && !vars.has(args[0]!)) vars.set(args[0]!, args.slice(t + 1).join(';'));
      }
    }
  }
  return vars;
}

/** The facts found so far: a name declared in several places is one fact, with every version, default or source it was given. */
class Found {
  private readonly packages = new Map<string, PackageFact>();
  private readonly options = new Map<string, OptionFact>();
  private readonly targets = new Map<string, TargetsFact>();
  private readonly downloads = new Map<string, DownloadFact>();
  /** The facts declared once (the first declaration wins) and the sonames, in the order found. */
  readonly declared: Omit<CMakeFacts, 'packages' | 'options' | 'gpuTargets' | 'downloads'> = { sonames: [] };

  addPackage(name: string, via: PackageFact['via'], version: string | undefined, required: boolean, where: Location): void {
    const key = `${via}:${name}`;
    const p = this.packages.get(key) ?? { name, via, versions: [], required: false, where: [] };
    if (version && !p.versions.includes(version)) p.versions.push(version);
    p.required ||= required;
    p.where.push(where);
    this.packages.set(key, p);
  }

  addOption(name: string, value: string, via: OptionFact['via'], where: Location): void {
    const o = this.options.get(name);
    if (o) {
      if (!o.defaults.includes(value)) o.defaults.push(value);
    } else {
      this.options.set(name, { name, defaults: [value], via, where });
    }
  }

  addTargets(variable: string, value: string, where: Location): void {
    const t = this.targets.get(variable) ?? { variable, values: [], where };
    if (!t.values.includes(value)) t.values.push(value);
    this.targets.set(variable, t);
  }

  addDownload(name: string, via: DownloadFact['via'], source: string, where: Location): void {
    const d = this.downloads.get(`${via}:${name}`) ?? { name, via, sources: [], where };
    if (source && !d.sources.includes(source)) d.sources.push(source);
    this.downloads.set(`${via}:${name}`, d);
  }

  get facts(): CMakeFacts {
    return {
      ...this.declared,
      packages: [...this.packages.values()],
      options: [...this.options.values()],
      gpuTargets: [...this.targets.values()],
      downloads: [...this.downloads.values()],
    };
  }
}

/**
 * What one command declares, from its arguments with variables expanded.
 * `top`: the command is in the root CMakeLists.txt, the only place whose
 * cmake_minimum_required() and project() describe the whole package.
 */
type Reader = (args: string[], where: Location, found: Found, at: { top: boolean; command: string }) => void;

/** Top-level declarations: the CMake version the package needs, its name, version and languages. */
const projectReaders: [string, Reader][] = [
  [
    'cmake_minimum_required',
    (args, where, found, { top }) => {
      const v = args[args.indexOf('VERSION') + 1];
      if (top && v && !found.declared.cmakeMinimum) found.declared.cmakeMinimum = { value: v, where };
    },
  ],
  [
    'project',
    (args, where, found, { top }) => {
      if (!top || found.declared.project || !args[0]) return;
      const vi = args.indexOf('VERSION');
      const li = args.indexOf('LANGUAGES');
      const keywords = new Set(['VERSION', 'DESCRIPTION', 'HOMEPAGE_URL', 'LANGUAGES']);
      let languages: string[] = [];
      if (li >= 0) {
        languages = [];
        for (const a of args.slice(li + 1)) {
          if (keywords.has(a)) break;
          languages.push(a);
        }
      } else if (vi < 0 && args.length > 1) {
        languages = args.slice(1).filter((a) => !keywords.has(a));
      }
      found.declared.project = { name: args[0], ...(vi >= 0 && args[vi + 1] ? { version: args[vi + 1]! } : {}), languages, where };
    },
  ],
  [
    'enable_language',
    (args, _where, found, { top }) => {
      const project = found.declared.project;
      if (top && project) for (const l of args.filter((a) => a !== 'OPTIONAL')) if (!project.languages.includes(l)) project.languages.push(l);
    },
  ],
  [
    'rocm_setup_version',
    (args, where, found) => {
      const v = args[args.indexOf('VERSION') + 1];
      if (args.includes('VERSION') && v && !found.declared.setupVersion) found.declared.setupVersion = { value: v, where };
    },
  ],
];

/** Dependencies: find_package() and pkg-config modules, with the minimum versions asked for. */
const pkgConfig: Reader = (args, where, found) => {
  const flags = new Set(['REQUIRED', 'QUIET', 'NO_CMAKE_PATH', 'NO_CMAKE_ENVIRONMENT_PATH', 'IMPORTED_TARGET', 'GLOBAL']);
  for (const spec of args.slice(1).filter((a) => !flags.has(a))) {
    const m = /^([A-Za-z0-9_.+-]+?)\s*(>=|<=|=|>|<)\s*(\S+)$/.exec(spec);
    found.addPackage(m ? m[1]! : spec, 'pkg-config', m ? `${m[2] === '>=' ? '' : m[2]}${m[3]}` : undefined, args.includes('REQUIRED'), where);
  }
};
const dependencyReaders: [string, Reader][] = [
  [
    'find_package',
    (args, where, found) => {
      if (!args[0]) return;
      const version = args[1] && VERSION_RE.test(args[1]) ? args[1] : undefined;
      found.addPackage(args[0], 'find_package', version, args.includes('REQUIRED'), where);
    },
  ],
  ['pkg_check_modules', pkgConfig],
  ['pkg_search_module', pkgConfig],
];

/** Options a user sets with -D (option(), cmake_dependent_option(), BOOL cache entries) and default GPU target lists. */
const optionReaders: [string, Reader][] = [
  [
    'option',
    (args, where, found) => {
      if (args[0]) found.addOption(args[0], args[2] ?? 'OFF', 'option', where);
    },
  ],
  [
    'cmake_dependent_option',
    (args, where, found) => {
      if (args[0] && args[2] !== undefined) found.addOption(args[0], args[2], 'cmake_dependent_option', where);
    },
  ],
  [
    'set',
    (args, where, found) => {
      const name = args[0];
      if (!name) return;
      const cache = args.indexOf('CACHE');
      const value = args.slice(1, cache < 0 ? undefined : cache).join(';');
      if (cache > 0 && args[cache + 1] === 'BOOL') found.addOption(name, value, 'cache', where);
      if (TARGET_VAR.test(name) && mentionsTargets(value)) found.addTargets(name, value, where);
    },
  ],
  [
    'list',
    (args, where, found) => {
      // list(APPEND GPU_TARGETS gfx1200 …)
      if (args[0] === 'APPEND' && args[1] && TARGET_VAR.test(args[1]) && args.slice(2).some(mentionsTargets)) {
        found.addTargets(args[1], `+${args.slice(2).join(';')}`, where);
      }
    },
  ],
  [
    'rocm_check_target_ids',
    (args, where, found) => {
      const t = args.indexOf('TARGETS');
      if (t > 0) found.addTargets(args[0]!, args.slice(t + 1).join(';'), where);
    },
  ],
];

/** Shared library versions: VERSION and SOVERSION target properties. */
const sonameReaders: [string, Reader][] = [
  [
    'set_target_properties',
    (args, where, found) => {
      const p = args.indexOf('PROPERTIES');
      if (p < 0) return;
      const props = new Map<string, string>();
      for (let i = p + 1; i + 1 < args.length; i += 2) props.set(args[i]!, args[i + 1]!);
      if (props.has('VERSION') || props.has('SOVERSION')) {
        for (const target of args.slice(0, p)) {
          found.declared.sonames.push({ target, ...(props.has('VERSION') ? { version: props.get('VERSION')! } : {}), ...(props.has('SOVERSION') ? { soversion: props.get('SOVERSION')! } : {}), where });
        }
      }
    },
  ],
  [
    'rocm_set_soversion',
    (args, where, found) => {
      if (args[0] && args[1]) found.declared.sonames.push({ target: args[0], soversion: args[1], where });
    },
  ],
];

/** What the build downloads for itself (FetchContent, ExternalProject, CPM, file(DOWNLOAD)): a network sandbox stops each. */
const fetchDeclaration: Reader = (args, where, found, { command }) => {
  if (args[0]) found.addDownload(args[0], command === 'fetchcontent_declare' ? 'FetchContent' : 'ExternalProject', describeFetch(args.slice(1)), where);
};
const downloadReaders: [string, Reader][] = [
  ['fetchcontent_declare', fetchDeclaration],
  ['externalproject_add', fetchDeclaration],
  [
    'download_project',
    (args, where, found) => {
      const n = args[args.indexOf('PROJ') + 1];
      if (args.includes('PROJ') && n) found.addDownload(n, 'download_project', describeFetch(args), where);
    },
  ],
  [
    'cpmaddpackage',
    (args, where, found) => {
      const named = args.indexOf('NAME');
      const name = named >= 0 ? args[named + 1] : /^(?:gh|gl|bb):[^/]+\/([^@#]+)/.exec(args[0] ?? '')?.[1] ?? args[0];
      if (name) found.addDownload(name, 'CPM', named >= 0 ? describeFetch(args) : args[0]!, where);
    },
  ],
  [
    'file',
    (args, where, found) => {
      if (args[0] === 'DOWNLOAD' && args[1] && args[2]) found.addDownload(path.posix.basename(args[2]), 'file(DOWNLOAD)', `url ${args[1]}`, where);
    },
  ],
];

/** The commands read, by their lower-case name (a Map: a command named `constructor` is not a reader). */
const READERS = new Map<string, Reader>([...projectReaders, ...dependencyReaders, ...optionReaders, ...sonameReaders, ...downloadReaders]);

/** The source of a FetchContent/ExternalProject declaration, in one line. */
function describeFetch(args: string[]): string {
  const value = (k: string) => {
    const i = args.indexOf(k);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const repo = value('GIT_REPOSITORY');
  if (repo) return `git ${repo}${value('GIT_TAG') ? ` ${value('GIT_TAG')}` : ''}`;
  const url = value('URL');
  if (url) return `url ${url}`;
  const dir = value('SOURCE_DIR');
  if (dir) return `dir ${dir}`;
  return '';
}
