import type { EbuildFacts } from './types.js';

/**
 * Bash brace expansion of one word, as PYTHON_COMPAT is written:
 * "python3_{11..14}" -> python3_11 … python3_14, "python3_{12,13}" -> two.
 */
export function braceExpand(word: string): string[] {
  const m = /^(.*?)\{([^{}]*)\}(.*)$/.exec(word);
  if (!m) return [word];
  const [, pre, body, post] = m as unknown as [string, string, string, string];
  const range = /^(\d+)\.\.(\d+)$/.exec(body);
  let parts: string[];
  if (range) {
    const [a, b] = [Number(range[1]), Number(range[2])];
    const step = a <= b ? 1 : -1;
    parts = [];
    for (let i = a; step > 0 ? i <= b : i >= b; i += step) parts.push(String(i));
  } else if (body.includes(',')) {
    parts = body.split(',');
  } else {
    return [word];
  }
  return parts.flatMap((p) => braceExpand(`${pre}${p}${post}`));
}

/** The implementations an ebuild's PYTHON_COMPAT names, or undefined without one. */
export function pythonCompat(f: EbuildFacts): string[] | undefined {
  const g = f.globalMap.get('PYTHON_COMPAT');
  if (!g) return undefined;
  const body = g.value.replace(/^\(\s*/, '').replace(/\s*\)$/, '');
  return body.split(/\s+/).filter(Boolean).flatMap(braceExpand);
}

/** "python3_13" -> 13, for ordering CPython versions. */
function minor(impl: string): number {
  return Number(/^python3_(\d+)$/.exec(impl)?.[1] ?? -1);
}

/**
 * PYTHON_REQUIRED_USE as the python eclasses compute it from PYTHON_COMPAT:
 * one of python_single_target_* (python-single-r1, distutils-r1 with
 * DISTUTILS_SINGLE_IMPL), at least one of python_targets_* (python-r1,
 * distutils-r1). Empty for python-any-r1, which sets none.
 */
export function pythonRequiredUse(f: EbuildFacts, compat: string[]): string {
  const single = f.inherits.includes('python-single-r1') || (f.inherits.includes('distutils-r1') && f.globalMap.has('DISTUTILS_SINGLE_IMPL'));
  if (single) return `^^ ( ${compat.map((i) => `python_single_target_${i}`).join(' ')} )`;
  if (f.inherits.includes('python-r1') || f.inherits.includes('distutils-r1')) return `|| ( ${compat.map((i) => `python_targets_${i}`).join(' ')} )`;
  return '';
}

/** The python_targets_* and python_single_target_* flags Gentoo's profiles enable. */
export function profilePythonFlags(defaults: string[]): string[] {
  return defaults.flatMap((d) => [`python_targets_${d}`, `python_single_target_${d}`]);
}

/** The newest current implementation missing from PYTHON_COMPAT, if newer than all it names. */
export function pythonCompatUpdate(compat: string[], current: string[]): string[] {
  const newest = Math.max(...compat.map(minor));
  return current.filter((c) => minor(c) > newest).sort((a, b) => minor(a) - minor(b));
}
