import { parse as parseToml } from 'smol-toml';

/** One Python requirement a source tree declares for building or running it. */
export interface PythonRequirement {
  /** PEP 503 normalized name: lower case, runs of "-_." as "-". */
  name: string;
  /** The version specifier and markers as written, e.g. ">=1.21; python_version>='3.9'". */
  spec: string;
  /** Where it is declared, e.g. "pyproject.toml [build-system]". */
  source: string;
}

export function normalizeName(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, '-');
}

/** "numpy>=1.21 ; python_version<'3.12'" → { name: "numpy", spec: ">=1.21; python_version<'3.12'" } */
export function parseRequirement(text: string, source: string): PythonRequirement | undefined {
  const m = /^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*?)\s*$/.exec(text);
  if (!m) return undefined;
  const spec = (m[3] ?? '').replace(/\s*;\s*/, '; ').replace(/\s+/g, ' ');
  return { name: normalizeName(m[1]!), spec: `${m[2] ?? ''}${spec}`, source };
}

/** requirements.txt: one requirement a line; options (-r, -e, --hash), URLs and comments skipped. */
export function requirementsTxt(text: string, file: string): PythonRequirement[] {
  const out: PythonRequirement[] = [];
  for (const raw of text.replace(/\\\r?\n/g, ' ').split(/\r?\n/)) {
    const line = raw.replace(/(^|\s)#.*$/, '').trim();
    if (line === '' || line.startsWith('-') || /^[a-z+]+:\/\//i.test(line)) continue;
    const r = parseRequirement(line.replace(/\s--hash=\S+/g, ''), file);
    if (r) out.push(r);
  }
  return out;
}

/** pyproject.toml: [build-system] requires and [project] dependencies. */
export function pyprojectToml(text: string, file: string): { requirements: PythonRequirement[]; error?: string } {
  let doc: Record<string, unknown>;
  try {
    doc = parseToml(text) as Record<string, unknown>;
  } catch (err) {
    return { requirements: [], error: `not valid TOML: ${(err as Error).message.split('\n')[0]}` };
  }
  const out: PythonRequirement[] = [];
  const list = (v: unknown, source: string) => {
    if (!Array.isArray(v)) return;
    for (const item of v) if (typeof item === 'string') {
      const r = parseRequirement(item, source);
      if (r) out.push(r);
    }
  };
  const build = doc['build-system'] as Record<string, unknown> | undefined;
  list(build?.requires, `${file} [build-system]`);
  const project = doc.project as Record<string, unknown> | undefined;
  list(project?.dependencies, `${file} [project]`);
  return { requirements: out };
}

/**
 * setup.py: the string literals of `install_requires=[…]` and
 * `setup_requires=[…]`. A regular reading of literal lists only; lists built
 * in code are reported as not understood rather than guessed.
 */
export function setupPy(text: string, file: string): { requirements: PythonRequirement[]; opaque: string[] } {
  const out: PythonRequirement[] = [];
  const opaque: string[] = [];
  for (const key of ['setup_requires', 'install_requires']) {
    const re = new RegExp(`\\b${key}\\s*=\\s*`, 'g');
    for (let m = re.exec(text); m; m = re.exec(text)) {
      const rest = text.slice(m.index + m[0].length);
      const list = /^\[([^\]]*)\]/.exec(rest);
      if (!list) {
        opaque.push(key);
        continue;
      }
      for (const s of list[1]!.matchAll(/(["'])(.*?)\1/g)) {
        const r = parseRequirement(s[2]!, `${file} ${key}`);
        if (r) out.push(r);
      }
    }
  }
  return { requirements: out, opaque };
}

/** setup.cfg: [options] install_requires / setup_requires, one requirement a line. */
export function setupCfg(text: string, file: string): PythonRequirement[] {
  const out: PythonRequirement[] = [];
  let section = '';
  let key = '';
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/\s[#;].*$/, '');
    const sec = /^\[(.+)\]\s*$/.exec(line);
    if (sec) {
      section = sec[1]!.trim();
      key = '';
      continue;
    }
    if (section !== 'options') continue;
    const kv = /^([A-Za-z_]+)\s*=\s*(.*)$/.exec(line);
    if (kv) {
      key = kv[1]!;
      if (kv[2]!.trim() !== '' && (key === 'install_requires' || key === 'setup_requires')) {
        for (const item of kv[2]!.split(';').length > 1 ? [kv[2]!] : kv[2]!.split(',')) {
          const r = parseRequirement(item, `${file} ${key}`);
          if (r) out.push(r);
        }
      }
      continue;
    }
    if (/^\s+\S/.test(line) && (key === 'install_requires' || key === 'setup_requires')) {
      const r = parseRequirement(line.trim(), `${file} ${key}`);
      if (r) out.push(r);
    }
  }
  return out;
}
