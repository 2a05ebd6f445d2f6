import { strict as assert } from 'node:assert';
import type { DepSpec, TargetsSpec } from '../../src/manifest/types.js';
import { limitTargets, type TargetNode } from '../../src/model/target-closure.js';
import { loadManifest } from '../../src/stack-check/index.js';
import { loadPolicies } from '../../src/model/targets.js';
import { knownReleases, releaseModel, resolveStack } from '../../src/model/resolve.js';
import { unconditionalDeps } from '../../src/model/target-closure.js';
import { shippedManifest } from '../helpers/project.js';

const ALL = ['gfx906', 'gfx90a', 'gfx942', 'gfx1030', 'gfx1100'];

function node(atom: string, targets: TargetsSpec, own: string[], deps: Partial<DepSpec>[] = []): TargetNode {
  return { atom, targets: own, spec: { targets, deps: deps.map((d) => ({ classes: ['RDEPEND', 'DEPEND'], ...d }) as DepSpec) } };
}

function close(nodes: TargetNode[]): Map<string, TargetNode> {
  const byAtom = new Map(nodes.map((n) => [n.atom, n]));
  limitTargets(nodes, byAtom);
  return byAtom;
}

describe('model: a package offers only the targets of what it always needs', () => {
  it('intersects with every target-limited library needed unconditionally, through packages without targets', () => {
    const got = close([
      node('app/tool', { mode: 'full' }, ALL, [{ atom: 'lib/glue' }, { atom: 'lib/full' }]),
      node('lib/glue', { mode: 'none' }, [], [{ atom: 'lib/gemm' }]),
      node('lib/gemm', { mode: 'subset', supported: ['gfx90a', 'gfx942', 'gfx1100'] }, ['gfx90a', 'gfx942', 'gfx1100']),
      node('lib/full', { mode: 'full' }, ALL),
    ]);
    assert.deepEqual(got.get('app/tool')!.targets, ['gfx90a', 'gfx942', 'gfx1100']);
    assert.deepEqual(got.get('app/tool')!.targetLimits, [{ atom: 'lib/glue', targets: ['gfx90a', 'gfx942', 'gfx1100'] }]);
    // A package without targets of its own is as mergeable as what it needs.
    assert.deepEqual(got.get('lib/glue')!.usableTargets, ['gfx90a', 'gfx942', 'gfx1100']);
    assert.deepEqual(got.get('lib/full')!.targets, ALL);
    assert.equal(got.get('lib/full')!.targetLimits, undefined);
  });

  it('two limited libraries leave their common targets', () => {
    const got = close([
      node('app/tool', { mode: 'full' }, ALL, [{ atom: 'lib/a' }, { atom: 'lib/b', classes: ['BDEPEND'] }]),
      node('lib/a', { mode: 'subset', supported: ['gfx90a', 'gfx942'] }, ['gfx90a', 'gfx942']),
      node('lib/b', { mode: 'subset', supported: ['gfx942', 'gfx1100'] }, ['gfx942', 'gfx1100']),
    ]);
    assert.deepEqual(got.get('app/tool')!.targets, ['gfx942']);
    assert.deepEqual(got.get('app/tool')!.targetLimits!.map((l) => l.atom), ['lib/a', 'lib/b']);
  });

  it('leaves alone what a USE flag pulls in, blockers, post-dependencies, and libraries that need targets only under a flag', () => {
    const gemm = ['gfx90a'];
    const got = close([
      node('app/tool', { mode: 'full' }, ALL, [
        { atom: 'lib/gemm', when: 'gemm' },
        { atom: 'lib/gemm', blocker: 'weak' },
        { atom: 'lib/gemm', classes: ['PDEPEND'] },
        { atom: 'lib/headers' },
      ]),
      node('lib/gemm', { mode: 'subset', supported: gemm }, gemm),
      // Header-only: REQUIRED_USE asks for a target only with USE=test.
      node('lib/headers', { mode: 'full', required_use_when: ['test'] }, ALL),
    ]);
    assert.deepEqual(got.get('app/tool')!.targets, ALL);
    assert.equal(got.get('lib/headers')!.usableTargets, undefined);
  });

  it('a USE flag that pulls in a limited library needs one of the targets both offer (or stays off when they share none)', () => {
    const got = close([
      node('app/tool', { mode: 'full' }, ALL, [
        { atom: 'lib/gemm', when: 'gemm', gpu: true },
        { atom: 'lib/none', when: 'odd' },
        { atom: 'lib/ck', when: 'ck' },
      ]),
      node('lib/gemm', { mode: 'subset', supported: ['gfx90a', 'gfx942', 'gfx950'] }, ['gfx90a', 'gfx942']),
      node('lib/none', { mode: 'subset', supported: ['gfx950'] }, []),
      node('lib/ck', { mode: 'subset', supported: ['gfx90a'] }, ['gfx90a']),
    ]);
    const tool = got.get('app/tool')!;
    // Its own targets stay: the flag is off by default.
    assert.deepEqual(tool.targets, ALL);
    assert.deepEqual(tool.flagLimits, [
      { flag: 'gemm', atom: 'lib/gemm', targets: ['gfx90a', 'gfx942'] },
      { flag: 'odd', atom: 'lib/none', targets: [] },
      { flag: 'ck', atom: 'lib/ck', targets: ['gfx90a'] },
    ]);
    // A clause the manifest writes for the flag wins over the computed one.
    const own = node('app/own', { mode: 'full' }, ALL, [{ atom: 'lib/ck', when: 'ck' }]);
    own.spec.required_use = ['ck? ( || ( amdgpu_targets_gfx90a ) )'];
    const mine = close([own, node('lib/ck', { mode: 'subset', supported: ['gfx90a'] }, ['gfx90a'])]);
    assert.equal(mine.get('app/own')!.flagLimits, undefined);
  });

  it('survives a dependency cycle', () => {
    const got = close([
      node('a/a', { mode: 'full' }, ALL, [{ atom: 'b/b' }]),
      node('b/b', { mode: 'subset', supported: ['gfx90a'] }, ['gfx90a'], [{ atom: 'a/a' }]),
    ]);
    assert.deepEqual(got.get('a/a')!.targets, ['gfx90a']);
  });

  it('holds for every package of every release of the shipped stack', async function () {
    this.timeout(60_000);
    const manifest = await loadManifest(shippedManifest);
    const policies = await loadPolicies(manifest);
    if ('issues' in policies) throw new Error('bad policies');
    const problems: string[] = [];
    let narrowed = 0;
    for (const v of knownReleases(manifest)) {
      const model = resolveStack(manifest, releaseModel(manifest, v, policies.byRelease.get(v)!)!);
      for (const c of model.components) {
        if (c.targetLimits) narrowed++;
        for (const d of unconditionalDeps(c)) {
          const usable = model.byAtom.get(d.atom)?.usableTargets;
          const outside = usable ? c.targets.filter((t) => !usable.includes(t)) : [];
          if (outside.length) problems.push(`${v} ${c.atom}: ${outside.join(' ')} not in ${d.atom}`);
        }
      }
    }
    assert.deepEqual(problems, []);
    // rocm-validation-suite links hipBLASLt from 6.3.0: four releases narrow it.
    assert.ok(narrowed >= 4, `${narrowed} packages narrowed`);
  });
});
