/**
 * Spack's spec syntax as far as a recipe's `when=` conditions need it: the
 * version constraint of the package itself (`@6.1`, `@6.1:`, `@:7.1`,
 * `@6.1:6.3,7.0:`, `@=7.2.0`) is decided for one version; everything else
 * (variants `+asan`, `~rocm`, `amdgpu_target=…`, `^dependency@…`, `%compiler`,
 * `os=`, `target=`) stays as the condition's residue, which a comparison
 * reports instead of guessing.
 */

/** Spack's version order for the numeric versions ROCm uses; words ("develop", "master") sort above numbers. */
export function compareSpackVersions(a: string, b: string): number {
  const pa = a.split(/[._-]/);
  const pb = b.split(/[._-]/);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i];
    const y = pb[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    const nx = /^\d+$/.test(x);
    const ny = /^\d+$/.test(y);
    if (nx && ny) {
      const d = Number(x) - Number(y);
      if (d !== 0) return d < 0 ? -1 : 1;
    } else if (nx !== ny) return nx ? -1 : 1;
    else if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/** `v` is `prefix` or a version under it (`6.1.2` under `6.1`), as Spack's ranges read their ends. */
function under(v: string, prefix: string): boolean {
  return v === prefix || v.startsWith(`${prefix}.`);
}

/** Whether `version` satisfies a version list such as `6.1:6.3,7.0:` or `=7.2.0`; undefined when it is not a version list. */
export function versionSatisfies(version: string, list: string): boolean | undefined {
  const ranges = list.split(',').map((r) => r.trim());
  let any = false;
  for (const r of ranges) {
    if (!/^=?[A-Za-z0-9._-]*(:[A-Za-z0-9._-]*)?$/.test(r) || r === '') return undefined;
    if (r.startsWith('=')) {
      if (version === r.slice(1)) any = true;
      continue;
    }
    const colon = r.indexOf(':');
    if (colon < 0) {
      if (under(version, r)) any = true;
      continue;
    }
    const lo = r.slice(0, colon);
    const hi = r.slice(colon + 1);
    const aboveLo = lo === '' || compareSpackVersions(version, lo) >= 0 || under(version, lo);
    const belowHi = hi === '' || compareSpackVersions(version, hi) <= 0 || under(version, hi);
    if (aboveLo && belowHi) any = true;
  }
  return any;
}

export type Decided = true | false | { residue: string };

/**
 * A `when=` condition (or a `satisfies()` argument) for one version of the
 * package: true or false when the version decides it, else the parts the
 * version cannot decide, as written.
 */
export function decideSpec(condition: string, version: string): Decided {
  const text = condition.trim();
  if (text === '') return true;
  // What follows the first ^ constrains a dependency, not this package.
  const caret = text.search(/\^/);
  const own = caret < 0 ? text : text.slice(0, caret);
  const deps = caret < 0 ? '' : text.slice(caret).trim();
  const residue: string[] = [];
  let verdict = true;
  // Split "@6.1: +asan ~rocm amdgpu_target=gfx90a" at blanks and before + ~ when they start a variant.
  // "@ 6.1" is "@6.1"; "%gcc@13" is the compiler's version, not the package's.
  const parts = own
    .replace(/(^|\s)@\s+/g, '$1@')
    .replace(/([^\s%^@])([+~])(?=[A-Za-z])/g, '$1 $2')
    .split(/\s+/)
    .filter(Boolean);
  for (const p of parts) {
    if (p.startsWith('@')) {
      const ok = versionSatisfies(version, p.slice(1));
      if (ok === undefined) residue.push(p);
      else if (!ok) verdict = false;
    } else residue.push(p);
  }
  if (!verdict) return false;
  if (deps) residue.push(deps);
  return residue.length === 0 ? true : { residue: residue.join(' ') };
}

/** The package a dependency spec names: "hip@6.1: +rocm" → "hip"; undefined when it names none. */
export function specName(spec: string): string | undefined {
  const m = /^\s*([A-Za-z0-9][A-Za-z0-9._-]*)/.exec(spec);
  return m?.[1];
}

/** The version constraint a dependency spec puts on its package ("hip@6.1:" → "6.1:"). */
export function specVersion(spec: string): string | undefined {
  const m = /^\s*[A-Za-z0-9][A-Za-z0-9._-]*\s*@\s*([^\s+~^%]+)/.exec(spec);
  return m?.[1];
}

/** The parts of a dependency spec after its name and version (variants, ^deps), as written. */
export function specRest(spec: string): string {
  return spec
    .replace(/^\s*[A-Za-z0-9][A-Za-z0-9._-]*(\s*@\s*[^\s+~^%]+)?/, '')
    .trim();
}
