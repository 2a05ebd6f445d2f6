import path from 'node:path';
import { readCMakeFacts, type CMakeFacts, type CMakeFile } from './cmake-facts.js';
import { parseCMake } from './cmake-lexer.js';
import { pyprojectToml, requirementsTxt, setupCfg, setupPy, type PythonRequirement } from './python-requirements.js';
import type { SourceTree } from '../trees/source-tree.js';

export interface BuildFacts extends CMakeFacts {
  /** Build files read: CMakeLists.txt, *.cmake, and the Python build files. */
  files: string[];
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

/** Read a tree's build files and extract what matters to an ebuild. */
export async function collectBuildFacts(tree: SourceTree): Promise<BuildFacts> {
  const files = (await tree.files()).filter(isBuildFile).sort(byDepth);
  const contents = await tree.read(files);
  const python: PythonRequirement[] = [];
  const problems: BuildFacts['problems'] = [];
  const cmake: CMakeFile[] = [];
  for (const file of files) {
    const buf = contents.get(file);
    if (!buf) continue;
    const text = buf.toString('utf8');
    const base = path.posix.basename(file);
    if (base === 'CMakeLists.txt' || base.endsWith('.cmake')) {
      const p = parseCMake(text);
      for (const e of p.errors) problems.push({ file, line: e.line, message: e.message });
      cmake.push({ file, commands: p.commands });
    } else {
      readPythonFile(file, base, text, python, problems);
    }
  }
  return { files, ...readCMakeFacts(cmake), python, problems };
}

/** The requirements a Python build file declares, and what in it could not be read as a literal. */
function readPythonFile(file: string, base: string, text: string, python: PythonRequirement[], problems: BuildFacts['problems']): void {
  if (base === 'pyproject.toml') {
    const r = pyprojectToml(text, file);
    python.push(...r.requirements);
    if (r.error) problems.push({ file, message: r.error });
  } else if (base === 'setup.py') {
    const r = setupPy(text, file);
    python.push(...r.requirements);
    for (const k of r.opaque) problems.push({ file, message: `${k} is computed, not a literal list: read it by hand` });
  } else if (base === 'setup.cfg') {
    python.push(...setupCfg(text, file));
  } else {
    python.push(...requirementsTxt(text, file));
  }
}
