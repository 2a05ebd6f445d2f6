import path from 'node:path';
import { evaluateArgs, parseCMake, type CMakeCommand } from './cmake-lexer.js';
import { pyprojectToml, requirementsTxt, setupCfg, setupPy, type PythonRequirement } from './python-requirements.js';
import type { SourceTree } from '../trees/source-tree.js';

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

export interface BuildFacts {
  /** Build files read: CMakeLists.txt, *.cmake, and the Python build files. */
  files: string[];
  cmakeMinimum?: { value: string; where: Location };
  project?: { name: string; version?: string; languages: string[]; where: Location };
  /** rocm_setup_version(VERSION …), the version ROCm's packaging reports. */
  setupVersion?: { value: string; where: Location };
  sonames: { target: string; version?: string; soversion?: string; where: Location }[];
  packages: PackageFact[];
  options: OptionFact[];
  gpuTargets: TargetsFact[];
  downloads: DownloadFact[];
  python: PythonRequirement[];
  /** Files that could not be read completely, and why. */
  problems: { file: string; line?: number; message: string }[];
}

const PYTHON_FILES = new Set(['pyproject.toml', 'setup.py', 'setup.cfg']);

/**
 * The build files a reviewer reads: every CMakeLists.txt and *.cmake, and the
 * Python build declarations, except documentation trees (their requirements
 * build the docs, not the package) and CI configuration.
 */
export function isBuildFile(p: string): boolean {
  const parts = p.split('/');
  if (parts.slice(0, -1).some((d) => /^(docs?|\.github|\.gitlab|\.azuredevops|\.jenkins)$/i.test(d))) return false;
  const base = parts.at(-1)!;
  return base === 'CMakeLists.txt' || base.endsWith('.cmake') || PYTHON_FILES.has(base) || /^requirements[\w.-]*\.txt$/.test(base);
}

/** Root first, then by path: the order in which a first definition of a variable is most likely the one CMake sees. */
function byDepth(a: string, b: string): number {
  const da = a.split('/').length;
  const db = b.split('/').length;
  return da - db || (a < b ? -1 : a > b ? 1 : 0);
}

const VERSION_RE = /^v?\d+(\.\d+)*(\.\.\.<?\d+(\.\d+)*)?$/;
const TARGET_VAR = /(TARGETS|ARCHITECTURES|_ARCHS?)$/i;
const mentionsTargets = (v: string) => /\bgfx[0-9a-f]+|^all$/i.test(v);

/** Read a tree's build files and extract what matters to an ebuild. */
export async function collectBuildFacts(tree: SourceTree): Promise<BuildFacts> {
  const files = (await tree.files()).filter(isBuildFile).sort(byDepth);
  const contents = await tree.read(files);
  const facts: BuildFacts = { files, sonames: [], packages: [], options: [], gpuTargets: [], downloads: [], python: [], problems: [] };

  const parsed: { file: string; commands: CMakeCommand[] }[] = [];
  for (const file of files) {
    const buf = contents.get(file);
    if (!buf) continue;
    const text = buf.toString('utf8');
    const base = path.posix.basename(file);
    if (base === 'CMakeLists.txt' || base.endsWith('.cmake')) {
      const p = parseCMake(text);
      for (const e of p.errors) facts.problems.push({ file, line: e.line, message: e.message });
      parsed.push({ file, commands: p.commands });
    } else if (base === 'pyproject.toml') {
      const r = pyprojectToml(text, file);
      facts.python.push(...r.requirements);
      if (r.error) facts.problems.push({ file, message: r.error });
    } else if (base === 'setup.py') {
      const r = setupPy(text, file);
      facts.python.push(...r.requirements);
      for (const k of r.opaque) facts.problems.push({ file, message: `${k} is computed, not a literal list: read it by hand` });
    } else if (base === 'setup.cfg') {
      facts.python.push(...setupCfg(text, file));
    } else {
      facts.python.push(...requirementsTxt(text, file));
    }
  }

  // Variables: the first plain value each is set to anywhere, root first.
  // Enough to resolve version strings and target lists kept in variables.
  const vars = new Map<string, string>();
  for (const { commands } of parsed) {
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

  const packages = new Map<string, PackageFact>();
  const options = new Map<string, OptionFact>();
  const targets = new Map<string, TargetsFact>();
  const downloads = new Map<string, DownloadFact>();
  const addPackage = (name: string, via: PackageFact['via'], version: string | undefined, required: boolean, where: Location) => {
    const key = `${via}:${name}`;
    const p = packages.get(key) ?? { name, via, versions: [], required: false, where: [] };
    if (version && !p.versions.includes(version)) p.versions.push(version);
    p.required ||= required;
    p.where.push(where);
    packages.set(key, p);
  };
  const addOption = (name: string, value: string, via: OptionFact['via'], where: Location) => {
    const o = options.get(name);
    if (o) {
      if (!o.defaults.includes(value)) o.defaults.push(value);
    } else {
      options.set(name, { name, defaults: [value], via, where });
    }
  };
  const addTargets = (variable: string, value: string, where: Location) => {
    const t = targets.get(variable) ?? { variable, values: [], where };
    if (!t.values.includes(value)) t.values.push(value);
    targets.set(variable, t);
  };
  const addDownload = (name: string, via: DownloadFact['via'], source: string, where: Location) => {
    const d = downloads.get(`${via}:${name}`) ?? { name, via, sources: [], where };
    if (source && !d.sources.includes(source)) d.sources.push(source);
    downloads.set(`${via}:${name}`, d);
  };

  for (const { file, commands } of parsed) {
    const top = file === 'CMakeLists.txt';
    for (const c of commands) {
      const where = { file, line: c.line };
      const args = evaluateArgs(c.args, vars);
      switch (c.name) {
        case 'cmake_minimum_required': {
          const v = args[args.indexOf('VERSION') + 1];
          if (top && v && !facts.cmakeMinimum) facts.cmakeMinimum = { value: v, where };
          break;
        }
        case 'project': {
          if (!top || facts.project || !args[0]) break;
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
          facts.project = { name: args[0], ...(vi >= 0 && args[vi + 1] ? { version: args[vi + 1]! } : {}), languages, where };
          break;
        }
        case 'enable_language':
          if (top && facts.project) for (const l of args.filter((a) => a !== 'OPTIONAL')) if (!facts.project.languages.includes(l)) facts.project.languages.push(l);
          break;
        case 'rocm_setup_version': {
          const v = args[args.indexOf('VERSION') + 1];
          if (args.includes('VERSION') && v && !facts.setupVersion) facts.setupVersion = { value: v, where };
          break;
        }
        case 'find_package': {
          if (!args[0]) break;
          const version = args[1] && VERSION_RE.test(args[1]) ? args[1] : undefined;
          addPackage(args[0], 'find_package', version, args.includes('REQUIRED'), where);
          break;
        }
        case 'pkg_check_modules':
        case 'pkg_search_module': {
          const flags = new Set(['REQUIRED', 'QUIET', 'NO_CMAKE_PATH', 'NO_CMAKE_ENVIRONMENT_PATH', 'IMPORTED_TARGET', 'GLOBAL']);
          for (const spec of args.slice(1).filter((a) => !flags.has(a))) {
            const m = /^([A-Za-z0-9_.+-]+?)\s*(>=|<=|=|>|<)\s*(\S+)$/.exec(spec);
            addPackage(m ? m[1]! : spec, 'pkg-config', m ? `${m[2] === '>=' ? '' : m[2]}${m[3]}` : undefined, args.includes('REQUIRED'), where);
          }
          break;
        }
        case 'option':
          if (args[0]) addOption(args[0], args[2] ?? 'OFF', 'option', where);
          break;
        case 'cmake_dependent_option':
          if (args[0] && args[2] !== undefined) addOption(args[0], args[2], 'cmake_dependent_option', where);
          break;
        case 'set': {
          const name = args[0];
          if (!name) break;
          const cache = args.indexOf('CACHE');
          const value = args.slice(1, cache < 0 ? undefined : cache).join(';');
          if (cache > 0 && args[cache + 1] === 'BOOL') addOption(name, value, 'cache', where);
          if (TARGET_VAR.test(name) && mentionsTargets(value)) addTargets(name, value, where);
          break;
        }
        case 'list': {
          // list(APPEND GPU_TARGETS gfx1200 …)
          if (args[0] === 'APPEND' && args[1] && TARGET_VAR.test(args[1]) && args.slice(2).some(mentionsTargets)) {
            addTargets(args[1], `+${args.slice(2).join(';')}`, where);
          }
          break;
        }
        case 'rocm_check_target_ids': {
          const t = args.indexOf('TARGETS');
          if (t > 0) addTargets(args[0]!, args.slice(t + 1).join(';'), where);
          break;
        }
        case 'set_target_properties': {
          const p = args.indexOf('PROPERTIES');
          if (p < 0) break;
          const props = new Map<string, string>();
          for (let i = p + 1; i + 1 < args.length; i += 2) props.set(args[i]!, args[i + 1]!);
          if (props.has('VERSION') || props.has('SOVERSION')) {
            for (const target of args.slice(0, p)) {
              facts.sonames.push({ target, ...(props.has('VERSION') ? { version: props.get('VERSION')! } : {}), ...(props.has('SOVERSION') ? { soversion: props.get('SOVERSION')! } : {}), where });
            }
          }
          break;
        }
        case 'rocm_set_soversion':
          if (args[0] && args[1]) facts.sonames.push({ target: args[0], soversion: args[1], where });
          break;
        case 'fetchcontent_declare':
        case 'externalproject_add':
          if (args[0]) addDownload(args[0], c.name === 'fetchcontent_declare' ? 'FetchContent' : 'ExternalProject', describeFetch(args.slice(1)), where);
          break;
        case 'download_project': {
          const n = args[args.indexOf('PROJ') + 1];
          if (args.includes('PROJ') && n) addDownload(n, 'download_project', describeFetch(args), where);
          break;
        }
        case 'cpmaddpackage': {
          const named = args.indexOf('NAME');
          const name = named >= 0 ? args[named + 1] : /^(?:gh|gl|bb):[^/]+\/([^@#]+)/.exec(args[0] ?? '')?.[1] ?? args[0];
          if (name) addDownload(name, 'CPM', named >= 0 ? describeFetch(args) : args[0]!, where);
          break;
        }
        case 'file':
          if (args[0] === 'DOWNLOAD' && args[1] && args[2]) addDownload(path.posix.basename(args[2]), 'file(DOWNLOAD)', `url ${args[1]}`, where);
          break;
        default:
          break;
      }
    }
  }
  facts.packages = [...packages.values()];
  facts.options = [...options.values()];
  facts.gpuTargets = [...targets.values()];
  facts.downloads = [...downloads.values()];
  return facts;
}

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
