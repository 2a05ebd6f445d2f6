import { extractFacts, type NodeWants } from './facts.js';
import { headerCheck, lineLengthCheck, syntaxCheck, whitespaceCheck } from './checks/layout.js';
import { descriptionCheck, eclassVarCheck, variableOrderCheck } from './checks/variables.js';
import { inheritCheck, toolDepCheck } from './checks/inherits.js';
import { pythonCompatCheck, useFlagCheck } from './checks/use-flags.js';
import { dieCheck, gpuAccessCheck, quotingCheck } from './checks/commands.js';
import { metadataCheck } from './checks/metadata.js';
import { dependencyCheck } from './checks/dependencies.js';
import { overlayDependencyCheck } from './checks/overlay-dependencies.js';
import { licenseCheck } from './checks/license.js';
import { targetsCheck } from './checks/targets.js';
import { llvmMaskCheck } from './checks/llvm-mask.js';
import type { Check, EbuildInput, Keyword, LintResult } from './types.js';
import { byCodePoint } from '../util/order.js';

export type { EbuildInput, LintResult, Keyword, Check } from './types.js';
export { hasTool } from './external-tools.js';

/** Every check, pkgcheck-style: independent, each declaring the keywords it may emit. */
export const CHECKS: Check[] = [
  syntaxCheck,
  headerCheck,
  whitespaceCheck,
  lineLengthCheck,
  variableOrderCheck,
  eclassVarCheck,
  descriptionCheck,
  licenseCheck,
  inheritCheck,
  toolDepCheck,
  useFlagCheck,
  pythonCompatCheck,
  dieCheck,
  quotingCheck,
  gpuAccessCheck,
  metadataCheck,
  dependencyCheck,
  overlayDependencyCheck,
  targetsCheck,
  llvmMaskCheck,
];

/**
 * Keywords of the checks over a whole release rather than one ebuild
 * (stack-check/package-set-check.ts: `lint --version` without atoms).
 */
export const RELEASE_KEYWORDS: Keyword[] = [
  {
    name: 'PackageSetUnresolvable',
    level: 'error',
    description: "a package of a GPU target's package set cannot be merged with AMDGPU_TARGETS set to that target, as its ebuild reads",
  },
  { name: 'NoUsableTarget', level: 'error', description: 'no GPU target of the release can use the package: it is in no package set' },
];

export const KEYWORDS: Map<string, Keyword> = new Map([...CHECKS.flatMap((c) => c.keywords), ...RELEASE_KEYWORDS].map((k) => [k.name, k] as const));

/** The node types the checks asked for, collected in the one walk of each tree. */
const NODE_WANTS: NodeWants = (() => {
  const wants = new Map<string, 'node' | 'text'>();
  for (const c of CHECKS) for (const [type, want] of Object.entries(c.nodeTypes ?? {})) if (wants.get(type) !== 'node') wants.set(type, want);
  return wants;
})();

export async function lintEbuild(input: EbuildInput): Promise<LintResult[]> {
  const facts = await extractFacts(input, NODE_WANTS);
  const [category, pkg] = input.atom.split('/') as [string, string];
  const results: LintResult[] = [];
  // The tree lives in the WebAssembly heap, which JavaScript's GC never frees.
  try {
    runChecks(facts, results, category, pkg, input);
  } finally {
    facts.tree.delete();
  }
  return results.sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || byCodePoint(a.keyword, b.keyword));
}

function runChecks(facts: Awaited<ReturnType<typeof extractFacts>>, results: LintResult[], category: string, pkg: string, input: EbuildInput): void {
  for (const check of CHECKS) {
    for (const r of check.run(facts)) {
      const keyword = KEYWORDS.get(r.keyword);
      if (!keyword) throw new Error(`${check.name} emitted undeclared keyword ${r.keyword}`);
      results.push({
        category,
        package: pkg,
        version: input.version,
        keyword: r.keyword,
        level: keyword.level,
        message: r.message,
        file: input.file,
        ...(r.line !== undefined ? { line: r.line } : {}),
      });
    }
  }
}

/** pkgcheck's default text output: one line per result under a package header. */
export function formatText(results: LintResult[]): string {
  const lines: string[] = [];
  let current = '';
  for (const r of results) {
    const head = `${r.category}/${r.package}`;
    if (head !== current) {
      lines.push(head);
      current = head;
    }
    lines.push(`  ${r.keyword}: version ${r.version}: ${r.message}`);
  }
  return lines.length ? `${lines.join('\n')}\n` : '';
}

/** Results that fail a run: errors and warnings; style and info are reported only. */
export function failing(results: LintResult[]): LintResult[] {
  return results.filter((r) => r.level === 'error' || r.level === 'warning');
}
