import { slotOf } from '../ebuild/dependencies.js';
import { packageSlot } from '../model/held.js';
import type { ResolvedComponent, StackModel } from '../model/resolve.js';
import { buildGraph, type BuildGraph } from '../plan/graph.js';
import { requirePackageNames } from '../model/package-names.js';

/** How much of each package's test suite runs. */
export type TestTier = 'none' | 'smoke' | 'full';
export const TEST_TIERS: readonly TestTier[] = ['none', 'smoke', 'full'];

export interface PlannedAtom {
  atom: string;
  /** PV as this release holds it: a component held at its own version has its own (MIGraphX 7.2.4 in ROCm 10.0.0). */
  version: string;
  /** SLOT/sub-slot of this release's ebuild (model/held.ts: "0/10.0" for a held one, PV's "0/7.2" otherwise). */
  slot: string;
  /** FEATURES=test for it (in this tier). */
  runTests: boolean;
  /** Why its tests do not run, when they do not. */
  noTests?: string;
  /** Its tests need a GPU (check_amdgpu). */
  gpuTests: boolean;
  /** Environment its src_test gets in this tier (GTEST_FILTER and the smoke tier's env). */
  testEnv: Record<string, string>;
  /** Built per GPU target (offers amdgpu_targets_* flags). */
  targets: string[];
  /** Atoms under test it needs, directly or through other packages: it is not run when one of them failed. */
  needs: string[];
}

export interface TestPlan {
  release: string;
  /** The release's LLVM slot (LLVM_COMPAT of its ebuilds). */
  llvmSlot: number;
  tier: TestTier;
  /** The atoms under test, in build order. */
  atoms: PlannedAtom[];
  /** Every package of the release (their keywords are accepted in the container). */
  stack: string[];
  graph: BuildGraph;
}

/**
 * category/PN from category/PN or PN (or the component's name), as Portage
 * atoms may also write them (`=sci-libs/rocBLAS-6.2.2::rocm`): the one package
 * name resolver every command uses, with its suggestions for a typo.
 */
export function resolveAtoms(model: StackModel, names: readonly string[]): string[] {
  const bare = names.map((name) => {
    const b = name.replace(/^=/, '').replace(/-[0-9][^/]*$/, '').replace(/::.*$/, '');
    return model.components.find((x) => x.name === b && !model.components.some((y) => y.pn === b))?.atom ?? b;
  });
  return requirePackageNames(bare, model.components.map((c) => c.atom), `ROCm ${model.release.version}`);
}

function testsOf(c: ResolvedComponent, tier: TestTier): Pick<PlannedAtom, 'runTests' | 'noTests' | 'gpuTests' | 'testEnv'> {
  const tests = c.spec.tests;
  const gpuTests = Boolean(tests?.gpu);
  if (!tests) return { runTests: false, noTests: 'the package has no test suite', gpuTests, testEnv: {} };
  if (tests.restrict) return { runTests: false, noTests: 'its tests cannot run from Portage (RESTRICT="test")', gpuTests, testEnv: {} };
  if (tier === 'none') return { runTests: false, noTests: '--tests none', gpuTests, testEnv: {} };
  if (tier === 'smoke') {
    if (!tests.smoke) return { runTests: false, noTests: 'no smoke tier in the manifest (tests.smoke)', gpuTests, testEnv: {} };
    return {
      runTests: true,
      gpuTests,
      testEnv: { ...(tests.smoke.gtest_filter ? { GTEST_FILTER: tests.smoke.gtest_filter } : {}), ...(tests.smoke.env ?? {}) },
    };
  }
  return { runTests: true, gpuTests, testEnv: {} };
}

/**
 * The atoms a test run builds and tests, in build order, each with the atoms
 * under test it depends on (through any path of the build graph, test-only
 * edges included: a test that needs a failed package cannot pass either).
 * `selection` undefined means the whole release.
 */
/** The SLOT/sub-slot this release's ebuild of `c` has, $(ver_cut) expanded. */
function ebuildSlot(c: ResolvedComponent): string {
  const s = slotOf(packageSlot(c), c.pn, c.version)!;
  return s.subslot ? `${s.slot}/${s.subslot}` : s.slot;
}

export function testPlan(model: StackModel, selection: readonly string[] | undefined, tier: TestTier, options: { skipTests?: readonly string[] } = {}): TestPlan {
  const graph = buildGraph(model);
  const chosen = new Set(selection ?? graph.order);
  const deps = new Map<string, string[]>();
  for (const e of graph.edges) deps.set(e.from, [...(deps.get(e.from) ?? []), e.to]);
  const reach = new Map<string, Set<string>>();
  const reachable = (atom: string): Set<string> => {
    const known = reach.get(atom);
    if (known) return known;
    const out = new Set<string>();
    reach.set(atom, out); // a cycle (test-only edges) ends here instead of looping
    for (const d of deps.get(atom) ?? []) {
      out.add(d);
      for (const x of reachable(d)) out.add(x);
    }
    return out;
  };
  const atoms = graph.order
    .filter((a) => chosen.has(a))
    .map((atom) => {
      const c = model.byAtom.get(atom)!;
      const tests = options.skipTests?.includes(atom) ? { ...testsOf(c, 'none'), noTests: 'built only, tested elsewhere (--skip-tests)' } : testsOf(c, tier);
      return {
        atom,
        version: c.version,
        slot: ebuildSlot(c),
        ...tests,
        targets: c.targets,
        needs: graph.order.filter((a) => a !== atom && chosen.has(a) && reachable(atom).has(a)),
      };
    });
  return { release: model.release.version, llvmSlot: model.release.llvmSlot, tier, atoms, stack: graph.order, graph };
}
