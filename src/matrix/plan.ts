import { releaseEvidence, type ReleaseEvidence } from '../model/evidence.js';
import type { StackModel } from '../model/resolve.js';
import { buildGraph } from '../plan/graph.js';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';
import type { TestTier } from '../container/plan.js';
import { DEFAULT_IMAGE } from '../container/command.js';
import { isGfxName } from '../gpu/gfx.js';
import { RENDER_NODE_PLACEHOLDER } from './gpu-access.js';

/** One job of a CI pipeline. */
export interface MatrixJob {
  /** "base", "gfx90a", or "gfx90a-miopen-2-of-4" for a test shard. */
  id: string;
  /** null for the base job. */
  gfx: string | null;
  /** What the job builds, in build order (for a shard: the sharded package). */
  atoms: string[];
  needs: string[];
  /** Labels a runner must carry. */
  runner: string[];
  image: string;
  /** Device nodes the job's container needs; base: none. A GPU job's render node is the one of its GPU, chosen on the host that runs it. */
  devices: string[];
  /** GPUs the job uses: 0 or 1. */
  gpus: 0 | 1;
  timeoutMinutes: number;
  /** Packages whose tests run in shard jobs instead (gtest sharding, from tests.shards). */
  shards: { atom: string; total: number }[];
  /** A shard job: which share of which package. */
  shard?: { atom: string; index: number; total: number };
  /** Packages of the release left out of this gfx job, and why. */
  excluded: { atom: string; reason: string }[];
  /** The arguments of `rocm-ebuild test` this job runs (after the atoms). */
  testArgs: string[];
}

export interface Matrix {
  version: string;
  /** How far the release's facts were checked: the weakest of its packages' evidence. */
  evidence: ReleaseEvidence;
  tests: TestTier;
  gfx: string[];
  jobs: MatrixJob[];
}

export interface MatrixOptions {
  /** Default: the release's default-on targets. */
  gfx?: string[];
  tests: TestTier;
  image: string;
  /** The runner label of a gfx job; {gfx} is replaced. */
  labelScheme: string;
  baseRunner: string[];
  timeoutMinutes: number;
}

export const DEFAULT_LABEL_SCHEME = 'rocm-{gfx}';
export const DEFAULT_BASE_RUNNER = ['self-hosted', 'linux', 'x64'];
/** The same stage3 image `rocm-ebuild test` uses by default. */
export const DEFAULT_CI_IMAGE = DEFAULT_IMAGE;

/**
 * The engine-neutral plan of a CI pipeline: one base job building every
 * package that needs no GPU target (nor depends on one) once, as binary
 * packages, then one job per gfx building the target-specific packages for
 * it in build order and running their tests; long suites (tests.shards) get
 * shard jobs of their own. Not package × target: the jobs stay few and no
 * dependency is built twice.
 */
export function matrixPlan(model: StackModel, options: MatrixOptions): Matrix {
  const policy = model.release.policy;
  const offered = [...policy.default, ...policy.optional];
  const gfxList = options.gfx?.length ? [...new Set(options.gfx)] : [...policy.default];
  for (const g of gfxList) {
    if (!isGfxName(g)) throw new UserError(`--gpu ${g}: expected a gfx name such as gfx90a`, ExitCode.invalidInput);
    if (!offered.includes(g)) {
      throw new UserError(`${g} is not in ROCm ${model.release.version}'s target policy (default-on: ${policy.default.join(' ')}; optional: ${policy.optional.join(' ')})`, ExitCode.invalidInput);
    }
  }
  const graph = buildGraph(model);
  const deps = new Map<string, string[]>();
  for (const e of graph.edges) deps.set(e.from, [...(deps.get(e.from) ?? []), e.to]);
  // gfx-side: offers amdgpu_targets, or needs (through any edge) a package that does.
  const gfxSide = new Set<string>();
  for (const atom of graph.order) {
    const c = model.byAtom.get(atom)!;
    if (c.targets.length > 0 || (deps.get(atom) ?? []).some((d) => gfxSide.has(d))) gfxSide.add(atom);
  }
  const base = graph.order.filter((a) => !gfxSide.has(a));
  const common = ['--version', model.release.version, '--tests', options.tests];
  const jobs: MatrixJob[] = [
    {
      id: 'base',
      gfx: null,
      atoms: base,
      needs: [],
      runner: options.baseRunner,
      image: options.image,
      devices: [],
      gpus: 0,
      timeoutMinutes: options.timeoutMinutes,
      shards: [],
      excluded: [],
      testArgs: [...common, '--gpu', 'none'],
    },
  ];
  for (const gfx of gfxList) {
    const excluded: { atom: string; reason: string }[] = [];
    const left = new Set<string>();
    for (const atom of graph.order.filter((a) => gfxSide.has(a))) {
      const c = model.byAtom.get(atom)!;
      if (c.targets.length > 0 && !c.targets.includes(gfx)) {
        excluded.push({ atom, reason: `does not support ${gfx} (targets: ${c.targets.join(' ')})` });
        left.add(atom);
        continue;
      }
      const missing = (deps.get(atom) ?? []).find((d) => left.has(d));
      if (missing) {
        excluded.push({ atom, reason: `needs ${missing}, which is left out for ${gfx}` });
        left.add(atom);
      }
    }
    const atoms = graph.order.filter((a) => gfxSide.has(a) && !left.has(a));
    const shards = atoms
      .map((atom) => ({ atom, total: model.byAtom.get(atom)!.spec.tests?.shards ?? 0 }))
      .filter((s) => s.total > 1 && options.tests !== 'none' && !model.byAtom.get(s.atom)!.spec.tests?.restrict);
    const runner = [...DEFAULT_BASE_RUNNER, options.labelScheme.replace(/\{gfx\}/g, gfx)];
    const gpuJob = { gfx, runner, image: options.image, devices: ['/dev/kfd', RENDER_NODE_PLACEHOLDER], gpus: 1 as const, timeoutMinutes: options.timeoutMinutes, excluded: [] as { atom: string; reason: string }[] };
    jobs.push({
      ...gpuJob,
      id: gfx,
      atoms,
      needs: ['base'],
      shards,
      excluded,
      testArgs: [...common, '--gpu', gfx, ...shards.flatMap((s) => ['--skip-tests', s.atom])],
    });
    for (const s of shards) {
      for (let k = 1; k <= s.total; k++) {
        jobs.push({
          ...gpuJob,
          id: `${gfx}-${s.atom.split('/')[1]!.toLowerCase()}-${k}-of-${s.total}`,
          atoms: [s.atom],
          needs: [gfx],
          shards: [],
          shard: { atom: s.atom, index: k, total: s.total },
          testArgs: [...common, '--gpu', gfx, '--shard', `${k}/${s.total}`],
        });
      }
    }
  }
  return { version: model.release.version, evidence: releaseEvidence(model.components), tests: options.tests, gfx: gfxList, jobs };
}

/** The matrix as text: one line per job. */
export function formatMatrix(m: Matrix): string {
  const lines = [`ROCm ${m.version} (evidence: ${m.evidence.level}), ${m.tests} tests, ${m.jobs.length} jobs:`];
  for (const j of m.jobs) {
    const what = j.shard ? `${j.shard.atom} tests, shard ${j.shard.index}/${j.shard.total}` : `${j.atoms.length} packages`;
    lines.push(`  ${j.id.padEnd(28)} ${what}${j.needs.length ? `  (after ${j.needs.join(', ')})` : ''}  on [${j.runner.join(', ')}]`);
    for (const x of j.excluded) lines.push(`    - ${x.atom}: ${x.reason}`);
  }
  return `${lines.join('\n')}\n`;
}
