import { ECLASSES, eclassesOfFunction, reachable } from '../eclass-api.js';
import { DEPRECATED_ECLASSES, REMOVED_ECLASSES, eclassExists } from '../gentoo-eclasses.js';
import type { Check, EbuildFacts } from '../types.js';

/** Names of variables an ebuild reads or writes. */
function variablesUsed(f: EbuildFacts): Set<string> {
  return new Set(f.nodes('variable_name').map((n) => n.text));
}

export const inheritCheck: Check = {
  name: 'InheritsCheck',
  keywords: [
    { name: 'MissingInherits', level: 'warning', description: 'a function is used whose eclass is not inherited' },
    { name: 'IndirectInherits', level: 'warning', description: 'a function comes from an eclass inherited only indirectly' },
    { name: 'UnusedInherits', level: 'warning', description: 'an inherited eclass is not used' },
    { name: 'DeprecatedEclass', level: 'warning', description: 'a deprecated or removed eclass is inherited' },
    { name: 'InheritsError', level: 'error', description: 'an inherited eclass does not exist, so the ebuild cannot be sourced' },
  ],
  nodeTypes: { variable_name: 'text' },
  run(f) {
    const out = [];
    const inherited = new Set(f.inherits);
    const direct = new Set<string>(f.inherits);
    const indirect = new Set<string>();
    for (const e of f.inherits) {
      const r = reachable(e);
      for (const p of r.provided) direct.add(p);
      for (const i of r.indirect) indirect.add(i);
    }
    for (const e of f.inherits) {
      const deprecated = DEPRECATED_ECLASSES[e];
      const removed = REMOVED_ECLASSES[e];
      if (deprecated) out.push({ keyword: 'DeprecatedEclass', message: `${e} is deprecated, use ${deprecated}`, line: f.inheritLine });
      else if (removed) out.push({ keyword: 'DeprecatedEclass', message: `${e} was removed from ::gentoo, use ${removed}`, line: f.inheritLine });
      else if (!eclassExists(e, f.input.eclasses)) {
        out.push({ keyword: 'InheritsError', message: `inherit ${e}: no such eclass in ::gentoo or the overlay, so the ebuild cannot be sourced`, line: f.inheritLine });
      }
    }
    const used = new Set<string>();
    const reported = new Set<string>();
    for (const c of f.commands) {
      const candidates = eclassesOfFunction(c.name);
      if (candidates.length === 0) continue;
      for (const e of candidates) used.add(e);
      if (candidates.some((e) => direct.has(e)) || reported.has(c.name)) continue;
      reported.add(c.name);
      const via = candidates.find((e) => indirect.has(e));
      if (via) {
        out.push({ keyword: 'IndirectInherits', message: `${c.name} comes from ${via}, inherited only indirectly`, line: c.line });
      } else {
        out.push({ keyword: 'MissingInherits', message: `${c.name} needs inherit ${candidates.join(' or ')}`, line: c.line });
      }
    }
    // Helpers called inside $( … ) in variable values are commands too (counted above);
    // variables an eclass defines or reads also count as using it.
    const vars = variablesUsed(f);
    for (const e of inherited) {
      const api = ECLASSES[e];
      if (!api || used.has(e)) continue;
      const exportsUnoverridden = api.phases.some((p) => !f.functions.has(p));
      const varUsed = api.variables.some((v) => vars.has(v) || f.globalMap.has(v));
      const providedUsed = [...reachable(e).provided].some((p) => used.has(p));
      if (!exportsUnoverridden && !varUsed && !providedUsed) {
        out.push({ keyword: 'UnusedInherits', message: `nothing from ${e} is used`, line: f.inheritLine });
      }
    }
    return out;
  },
};

/**
 * Helpers that run a build tool the ebuild itself must BDEPEND on: the
 * tool arriving through another package's RDEPEND (clang through hip and
 * hipcc) is an accident that a dependency change or a cross build breaks.
 */
const TOOLS: Record<string, { atom: string; how: string }> = {
  rocm_use_clang: { atom: 'llvm-core/clang', how: "llvm: deps: [{ atom: llvm-core/clang, classes: [BDEPEND] }] (llvm_gen_dep 'llvm-core/clang:${LLVM_SLOT}')" },
};

export const toolDepCheck: Check = {
  name: 'ToolDependencyCheck',
  keywords: [{ name: 'MissingToolDep', level: 'warning', description: 'a helper runs a build tool that BDEPEND does not name' }],
  run(f) {
    const bdepend = f.globalMap.get('BDEPEND')?.value ?? '';
    const out = [];
    const seen = new Set<string>();
    for (const c of f.commands) {
      const tool = TOOLS[c.name];
      if (!tool || seen.has(c.name)) continue;
      seen.add(c.name);
      // Directly or inside an eclass generator such as llvm_gen_dep.
      if (new RegExp(`(^|[\\s'(!<>=~])${tool.atom.replace('/', '\\/')}([:\\[\\s'-]|$)`).test(bdepend)) continue;
      out.push({ keyword: 'MissingToolDep', message: `${c.name} runs ${tool.atom}, which BDEPEND lacks; in the manifest: ${tool.how}`, line: c.line });
    }
    return out;
  },
};
