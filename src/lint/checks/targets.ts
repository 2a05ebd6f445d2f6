import type { Check, EbuildFacts } from '../types.js';

const DEP_VARS = ['RDEPEND', 'DEPEND', 'BDEPEND'];

/**
 * The package atoms a build always pulls in: those of RDEPEND, DEPEND and
 * BDEPEND outside any `flag? ( )` and `|| ( )` group, with their lines.
 * Eclass-generated text ($(llvm_gen_dep …)) and ${VAR} references are skipped.
 */
export function unconditionalAtoms(f: EbuildFacts): { key: string; line: number }[] {
  const out: { key: string; line: number }[] = [];
  for (const g of f.globals) {
    if (!DEP_VARS.includes(g.name)) continue;
    // Kinds of the open groups: a conditional or any-of group makes what it holds optional.
    const open: boolean[] = [];
    let pendingOptional: boolean | undefined;
    g.value.split('\n').forEach((text, i) => {
      for (const word of text.replace(/\$\([^)]*\)?/g, ' ').split(/\s+/).filter(Boolean)) {
        if (word === '||' || word.endsWith('?')) {
          pendingOptional = true;
        } else if (word === '(') {
          open.push(pendingOptional ?? false);
          pendingOptional = undefined;
        } else if (word === ')') {
          open.pop();
        } else if (!word.startsWith('!') && !word.startsWith('$') && !open.includes(true)) {
          const m = /^(?:[<>=~]=?)?([A-Za-z0-9][A-Za-z0-9+_.-]*\/[A-Za-z0-9+_-]+?)(?:-\d[^:[\s]*)?(?::[^[\s]*)?(?:\[[^\]]*\])?$/.exec(word);
          if (m) out.push({ key: m[1]!, line: g.line + i });
        }
      }
    });
  }
  return out;
}

/** The amdgpu_targets the ebuild offers: its release's targets, narrowed by ROCM_SUPPORTED_TARGETS, when it takes rocm.eclass's globals. */
function offeredTargets(f: EbuildFacts): string[] {
  if (!f.inherits.includes('rocm') || f.globalMap.get('ROCM_SKIP_GLOBALS')?.value === '1') return [];
  const release =
    f.input.releaseTargets ??
    (f.input.eclassIuse ?? []).map((w) => w.replace(/^[+-]/, '')).filter((w) => w.startsWith('amdgpu_targets_')).map((w) => w.slice('amdgpu_targets_'.length));
  const supported = f.globalMap.get('ROCM_SUPPORTED_TARGETS');
  if (!supported) return release;
  const listed = new Set(supported.value.replace(/^\(|\)$/g, '').split(/\s+/).filter(Boolean));
  return release.filter((t) => listed.has(t));
}

/**
 * A target offered by a package that needs, whatever its USE flags, a
 * library that cannot be built for that target: with only that target
 * enabled neither can be merged, and Portage names the library, not the
 * package. The targets each stack package can be merged with come from the
 * manifest (model/target-closure.ts); an ebuild must offer no more.
 */
export const targetsCheck: Check = {
  name: 'TargetsCheck',
  keywords: [
    {
      name: 'UnmergeableTargets',
      level: 'error',
      description: 'amdgpu_targets a package offers but a library it always needs cannot be built for',
    },
  ],
  run(f) {
    const stack = f.input.stack;
    if (!stack) return [];
    const offered = offeredTargets(f);
    if (offered.length === 0) return [];
    const out = [];
    const seen = new Set<string>();
    for (const a of unconditionalAtoms(f)) {
      const usable = stack.get(a.key)?.usableTargets;
      if (!usable || seen.has(a.key) || a.key === f.input.atom) continue;
      seen.add(a.key);
      const missing = offered.filter((t) => !usable.includes(t));
      if (missing.length === 0) continue;
      out.push({
        keyword: 'UnmergeableTargets',
        message:
          `offers ${missing.map((t) => `amdgpu_targets_${t}`).join(', ')}, but ${a.key}, needed whatever USE says, is built for ${usable.join(' ')} only: ` +
          'offer the intersection (ROCM_SUPPORTED_TARGETS), or make the dependency optional',
        line: a.line,
      });
    }
    return out;
  },
};
