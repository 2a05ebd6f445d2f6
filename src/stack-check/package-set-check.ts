import { parseAtomAsWritten } from '../ebuild/atom.js';
import { extractFacts } from '../lint/facts.js';
import { evaluateRequiredUse } from '../lint/checks/use-flags.js';
import type { LintResult } from '../lint/types.js';
import { profileUseFlags } from '../model/use-flags.js';
import type { StackModel } from '../model/resolve.js';
import { currentYear, renderEbuild } from '../render/index.js';
import { packageSet } from './package-set.js';

/** What Portage reads of one ebuild to resolve it, taken from its text. */
interface Read {
  atom: string;
  version: string;
  file: string;
  /** IUSE of the ebuild itself, with + marking defaults. */
  iuse: string[];
  /** The amdgpu targets it offers: its release's, narrowed by ROCM_SUPPORTED_TARGETS. */
  offered: string[];
  requiredUse: string;
  requiredUseLine?: number;
  deps: { text: string; line: number }[];
}

/** One dependency atom as Portage reads it, with the USE conditions around it. */
interface DepAtom {
  key: string;
  use: string[];
  conditions: string[];
  /** Inside `|| ( )`: another alternative may do. */
  anyOf: boolean;
  line: number;
}

function parseDeps(value: string, firstLine: number): DepAtom[] {
  const out: DepAtom[] = [];
  const open: { condition?: string; anyOf: boolean }[] = [];
  let pending: { condition?: string; anyOf: boolean } | undefined;
  value.split('\n').forEach((text, i) => {
    for (const word of text.replace(/\$\([^)]*\)?/g, ' ').split(/\s+/).filter(Boolean)) {
      if (word === '||') pending = { anyOf: true };
      else if (word.endsWith('?')) pending = { condition: word.slice(0, -1), anyOf: false };
      else if (word === '(') {
        open.push(pending ?? { anyOf: false });
        pending = undefined;
      } else if (word === ')') open.pop();
      else if (!word.startsWith('!') && !word.startsWith('$')) {
        const a = parseAtomAsWritten(word);
        if (!a) continue;
        out.push({
          key: a.key,
          use: a.use.filter(Boolean),
          conditions: open.flatMap((g) => (g.condition ? [g.condition] : [])),
          anyOf: open.some((g) => g.anyOf),
          line: firstLine + i,
        });
      }
    }
  });
  return out;
}

async function readEbuild(model: StackModel, atom: string, text: string): Promise<Read> {
  const c = model.byAtom.get(atom)!;
  const facts = await extractFacts({ file: `${atom}/${c.pn}-${c.version}.ebuild`, atom, version: c.version, text, year: currentYear() });
  try {
    const release = [...model.release.policy.default, ...model.release.policy.optional];
    const rocm = facts.inherits.includes('rocm') && facts.globalMap.get('ROCM_SKIP_GLOBALS')?.value !== '1';
    const supported = facts.globalMap.get('ROCM_SUPPORTED_TARGETS')?.value.replace(/^\(|\)$/g, '').split(/\s+/).filter(Boolean);
    const required = facts.globalMap.get('REQUIRED_USE');
    return {
      atom,
      version: c.version,
      file: `${atom}/${c.pn}-${c.version}.ebuild`,
      iuse: facts.globalMap.get('IUSE')?.value.split(/\s+/).filter(Boolean) ?? [],
      offered: rocm ? release.filter((t) => !supported || supported.includes(t)) : [],
      requiredUse: required?.value ?? '',
      ...(required ? { requiredUseLine: required.line } : {}),
      deps: facts.globals.filter((g) => ['RDEPEND', 'DEPEND', 'BDEPEND', 'PDEPEND'].includes(g.name)).map((g) => ({ text: g.value, line: g.line })),
    };
  } finally {
    facts.tree.delete();
  }
}

/**
 * Checks, for every GPU target of a release, that the package set
 * (`rocm-ebuild set`) resolves as Portage would read the generated ebuilds:
 * with AMDGPU_TARGETS set to that target and default USE, every member's
 * REQUIRED_USE holds (CPU flags the user sets aside), every stack package a
 * member pulls in is a member, and every target a USE dependency ties is
 * one the dependency offers. Also reports a package that no GPU target of
 * the release can use. The set comes from the manifest, the reading from
 * the ebuild texts, so the two are held against each other.
 */
export async function checkPackageSets(model: StackModel, texts?: ReadonlyMap<string, string>): Promise<LintResult[]> {
  const year = currentYear();
  const profile = profileUseFlags(model.manifest.stack.profile?.use_expand);
  const reads = new Map<string, Read>();
  for (const c of model.components) {
    reads.set(c.atom, await readEbuild(model, c.atom, texts?.get(c.atom) ?? renderEbuild(c, model, { year })));
  }
  const results: LintResult[] = [];
  const report = (r: Read, keyword: string, message: string, line?: number) => {
    const [category, pkg] = r.atom.split('/') as [string, string];
    results.push({ category, package: pkg, version: r.version, keyword, level: 'error', message, file: r.file, ...(line !== undefined ? { line } : {}) });
  };
  const usedBySome = new Set<string>();
  for (const target of [...model.release.policy.default, ...model.release.policy.optional]) {
    const set = packageSet(model, [target]);
    const members = new Set(set.atoms);
    for (const atom of set.atoms) {
      usedBySome.add(atom);
      const r = reads.get(atom)!;
      const own = r.iuse.map((w) => w.replace(/^[+-]/, ''));
      const flags = (targets: string[]) =>
        new Set([
          ...r.iuse.filter((w) => w.startsWith('+')).map((w) => w.slice(1)),
          ...own.filter((f) => profile.has(f)),
          ...targets.filter((t) => r.offered.includes(t)).map((t) => `amdgpu_targets_${t}`),
        ]);
      const enabled = flags([target]);
      const expand = (required: string) =>
        required.replace(/\$\{ROCM_REQUIRED_USE\}/g, `|| ( ${r.offered.map((t) => `amdgpu_targets_${t}`).join(' ')} )`).replace(/\$\{PYTHON_REQUIRED_USE\}/g, '');
      const failed = evaluateRequiredUse(expand(r.requiredUse), enabled);
      if (failed && !evaluateRequiredUse(expand(r.requiredUse), flags(r.offered))) {
        report(r, 'PackageSetUnresolvable', `in the package set for ${target}, but REQUIRED_USE fails with AMDGPU_TARGETS="${target}": ${failed}`, r.requiredUseLine);
      }
      for (const dep of r.deps.flatMap((d) => parseDeps(d.text, d.line))) {
        if (!dep.conditions.every((cond) => (cond.startsWith('!') ? !enabled.has(cond.slice(1)) : enabled.has(cond)))) continue;
        const other = reads.get(dep.key);
        if (!other || dep.key === atom) continue;
        if (!members.has(dep.key) && !dep.anyOf) {
          report(r, 'PackageSetUnresolvable', `in the package set for ${target}, but needs ${dep.key}, which is not`, dep.line);
          continue;
        }
        // amdgpu_targets_<t>(-)? ties: a target enabled here must be one the dependency offers.
        const tied = dep.use.flatMap((u) => {
          if (u === '${ROCM_USEDEP}' || u === '${ROCM_USE_DEP}') return [...enabled].filter((f) => f.startsWith('amdgpu_targets_')).map((f) => f.slice('amdgpu_targets_'.length));
          const m = /^amdgpu_targets_([a-z0-9]+)(?:\([+-]\))?\?$/.exec(u);
          return m && enabled.has(`amdgpu_targets_${m[1]}`) ? [m[1]!] : [];
        });
        const lacking = tied.filter((t) => !other.offered.includes(t));
        if (lacking.length > 0) {
          report(r, 'PackageSetUnresolvable', `in the package set for ${target}, but ties ${lacking.map((t) => `amdgpu_targets_${t}`).join(', ')} to ${dep.key}, which does not offer it`, dep.line);
        }
      }
    }
  }
  for (const c of model.components) {
    if (c.spec.platform === 'nvidia' || usedBySome.has(c.atom)) continue;
    report(reads.get(c.atom)!, 'NoUsableTarget', `no GPU target of ROCm ${model.release.version} can use it: it is in no package set`);
  }
  return results;
}
