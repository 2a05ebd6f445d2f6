import type { ManifestIssue } from '../manifest/issues.js';
import { SchemaValidator, closest } from '../manifest/schema-validator.js';
import { needsLocalDescription } from '../model/use-flags.js';
import { inRange } from '../model/version.js';
import { issueAt, type ResolvedComponent, type StackModel } from '../model/resolve.js';
import { buildGraph } from '../plan/graph.js';
import { KEYWORDS } from '../lint/index.js';
import { unknowable, type CheckContext } from './context.js';
import { checkPhaseCode, checkValues } from './values.js';
import { checkPinnedSources } from './pinned-sources.js';

function declaredFlags(c: ResolvedComponent): Set<string> {
  const flags = new Set(Object.keys(c.spec.use ?? {}));
  if (c.spec.tests && !c.spec.tests.restrict) flags.add('test');
  if (c.spec.python?.when) flags.add(c.spec.python.when);
  return flags;
}

/**
 * Everything that can only be judged in one release, with overrides applied:
 * the merged component is whole, flags are declared, sections agree with the
 * build system, dependencies exist and keep GPU targets coherent, values that
 * reach bash are safe, and the build order has no cycle.
 */
export async function checkRelease(model: StackModel, ctx: CheckContext, policyKnown: boolean): Promise<ManifestIssue[]> {
  const issues: ManifestIssue[] = [];
  const validator = SchemaValidator.shared();
  const external = model.manifest.external.packages;
  for (const c of model.components) {
    // Overrides can remove or replace required parts: the merged result must still be whole.
    // (Without an override in this release it is the validated file plus defaults.)
    if ((c.loaded.spec.overrides ?? []).some((o) => inRange(c.release, o.versions))) {
      const whole = validator.validate('component.schema.json', c.loaded.source, c.spec, [], `as resolved for ${c.release}`);
      issues.push(...whole);
      if (whole.length > 0) continue;
    }
    if (c.sources.length === 0) {
      issues.push(
        issueAt(
          c,
          ['sources'],
          `no source serves ${c.release}: every source's \`releases\` range leaves it out`,
          'widen a source\'s `releases` range (a source without one serves every release), or limit the component\'s own `releases`',
        ),
      );
      continue;
    }
    issues.push(...checkValues(c), ...(await checkPhaseCode(c)), ...checkPinnedSources(c));
    const flags = declaredFlags(c);
    for (const [flag, f] of Object.entries(c.spec.use ?? {})) {
      if (f.description === undefined && needsLocalDescription(flag)) {
        issues.push(issueAt(c, ['use', flag], `local USE flag "${flag}" has no description`, 'add `description:` (it goes into metadata.xml)'));
      }
    }
    for (const [i, a] of (c.spec.qa?.accept ?? []).entries()) {
      if (!KEYWORDS.has(a.keyword)) {
        const near = closest(a.keyword, [...KEYWORDS.keys()]);
        issues.push(issueAt(c, ['qa', 'accept', i, 'keyword'], `${a.keyword} is not a lint keyword`, near ? `did you mean ${near}?` : 'see `rocm-ebuild lint --keywords`'));
      }
    }
    const checkFlag = (flag: string | undefined, at: (string | number)[]) => {
      if (flag === undefined) return;
      const name = flag.replace(/^!/, '');
      if (flags.has(name)) return;
      const near = closest(name, [...flags]);
      issues.push(
        issueAt(
          c,
          at,
          `USE flag "${name}" is not declared`,
          near ? `did you mean "${near}"?` : name === 'test' ? 'add a `tests:` section' : `declare it under \`use:\` with a description`,
        ),
      );
    };
    for (const s of c.sources) checkFlag(s.spec.when, ['sources', s.at, 'when']);
    // The USE conditionals of LICENSE ("flag? ( … )"), by words: a regex that backtracks over one long word took quadratic time.
    for (const word of c.spec.license.split(/\s+/)) if (word.length > 1 && word.endsWith('?')) checkFlag(word.slice(0, -1), ['license']);
    (c.spec.deps ?? []).forEach((d, i) => checkFlag(d.when, ['deps', i, 'when']));
    (c.spec.python?.deps ?? []).forEach((d, i) => checkFlag(d.when, ['python', 'deps', i, 'when']));
    (c.spec.cmake?.when ?? []).forEach((w, i) => checkFlag(w.use, ['cmake', 'when', i, 'use']));
    for (const [at, defines] of [
      [['cmake', 'defines'], c.spec.cmake?.defines],
      ...(c.spec.cmake?.when ?? []).flatMap((w, i) => [
        [['cmake', 'when', i, 'defines'], w.defines],
        [['cmake', 'when', i, 'otherwise'], w.otherwise],
      ]),
    ] as [(string | number)[], Record<string, unknown> | undefined][]) {
      for (const [name, v] of Object.entries(defines ?? {})) {
        if (typeof v === 'object' && v !== null) checkFlag((v as { use: string }).use, [...at, name, 'use']);
      }
    }
    (c.spec.llvm?.deps ?? []).forEach((d, i) => checkFlag(d.when, ['llvm', 'deps', i, 'when']));
    (c.spec.prepare ?? []).forEach((op, i) => checkFlag(op.when, ['prepare', i, 'when']));
    if (c.spec.tests && !c.spec.tests.restrict && c.spec.tests.gpu === undefined) {
      issues.push(issueAt(c, ['tests'], 'tests need `gpu: true` or `gpu: false`', 'say whether the tests need an AMD GPU (check_amdgpu), or set restrict: true'));
    }
    (c.spec.targets.required_use_when ?? []).forEach((w, i) => checkFlag(w, ['targets', 'required_use_when', i]));

    // Build system and sections must agree.
    if (c.spec.cmake && c.spec.build !== 'cmake') {
      issues.push(issueAt(c, ['cmake'], `a \`cmake:\` section with build: ${c.spec.build}`, 'set `build: cmake` or remove the section'));
    }
    if (c.spec.build === 'python' && c.spec.python?.eclass !== 'distutils-r1') {
      issues.push(issueAt(c, ['build'], 'build: python needs python.eclass: distutils-r1', 'add `python: { eclass: distutils-r1 }`'));
    }
    if (c.spec.compiler === 'hip-lang' && c.spec.build !== 'cmake') {
      issues.push(issueAt(c, ['compiler'], "compiler: hip-lang is CMake's HIP language and needs build: cmake", 'set `build: cmake`, or use compiler: hipcc or clang'));
    }
    const mode = c.spec.targets.mode;
    const gpuMode = mode === 'full' || mode === 'subset';
    if (c.spec.tests?.gpu && !c.spec.tests.restrict && mode === 'none') {
      issues.push(
        issueAt(c, ['tests', 'gpu'], 'tests need a GPU but the package does not inherit rocm.eclass (targets.mode: none)', 'set targets.mode to skip-globals to get check_amdgpu'),
      );
    }
    if (mode === 'subset' && !c.spec.targets.supported) {
      issues.push(issueAt(c, ['targets'], 'targets.mode: subset needs targets.supported', 'list the gfx targets the library supports'));
    }
    if (mode !== 'subset' && c.spec.targets.supported) {
      issues.push(issueAt(c, ['targets', 'supported'], 'targets.supported only applies with mode: subset', 'set mode: subset or remove the list'));
    }
    if (gpuMode && policyKnown && c.targets.length === 0) {
      issues.push(
        issueAt(c, ['targets', 'supported'], `none of these targets is offered by the ${c.release} target policy`, 'check manifest/targets.yaml for this release'),
      );
    }
    if (!gpuMode) {
      for (const key of ['cmake_vars', 'join', 'required_use_when'] as const) {
        if (c.spec.targets[key] !== undefined) {
          issues.push(issueAt(c, ['targets', key], `targets.${key} needs mode full or subset`, 'set targets.mode to full or subset, or remove the key'));
        }
      }
      if (c.spec.cmake?.target_defines?.length) {
        issues.push(issueAt(c, ['cmake', 'target_defines'], 'target_defines need targets.mode full or subset', 'set targets.mode to full or subset, or remove target_defines'));
      }
      if (c.spec.compiler === 'hip-lang') {
        issues.push(issueAt(c, ['compiler'], 'compiler: hip-lang compiles device code and needs targets.mode full or subset', 'set targets.mode to full or subset'));
      }
    }

    // Dependencies: exist, bind to slots correctly, and keep GPU targets coherent.
    (c.spec.deps ?? []).forEach((d, i) => {
      const at = ['deps', i];
      if (d.atom === c.atom) {
        issues.push(
          issueAt(
            c,
            [...at, 'atom'],
            d.blocker ? `${c.atom} blocks itself` : `${c.atom} depends on itself`,
            d.blocker ? 'remove this entry: a package that blocks itself can never be installed' : 'remove this dependency: a package cannot need itself to build or run',
          ),
        );
        return;
      }
      const inStack = model.byAtom.get(d.atom);
      // An atom both generated and listed as external is reported once, at the external entry.
      const ext = inStack ? undefined : external[d.atom];
      if (!inStack && !ext) {
        if (unknowable(ctx, d.atom)) return;
        const everywhere = model.manifest.components.some((o) => o.spec.atom === d.atom);
        // Blocking a package that left the stack in this release is what
        // keeps its older versions, still installed, from colliding.
        if (everywhere && d.blocker) return;
        if (everywhere) {
          issues.push(issueAt(c, [...at, 'atom'], `${d.atom} is not part of the stack in ${c.release}`, 'limit this dependency to the releases that have it with `overrides`'));
        } else {
          const near = closest(d.atom, [...model.byAtom.keys(), ...Object.keys(external)]);
          issues.push(
            issueAt(
              c,
              [...at, 'atom'],
              `NonexistentDeps: ${d.atom} is neither a stack component nor listed in the external package list`,
              near ? `did you mean ${near}?` : 'add it to an external package file if ::gentoo has it',
            ),
          );
        }
        return;
      }
      const linked = d.classes.some((k) => k === 'DEPEND' || k === 'RDEPEND');
      if (ext && d.slot === 'same') {
        issues.push(issueAt(c, [...at, 'slot'], "slot: same binds to this release's SLOT and only fits stack packages", 'use "=" for a sub-slotted ::gentoo package, or remove it'));
      }
      if (ext?.subslot && linked && d.slot === undefined && !d.blocker) {
        issues.push(
          issueAt(c, [...at, 'atom'], `MissingSlotDep: ${d.atom} has sub-slots; a library linked against it must rebuild when it changes`, 'add `slot: "="`'),
        );
      }
      if (d.gpu && inStack && !['full', 'subset'].includes(inStack.spec.targets.mode)) {
        issues.push(issueAt(c, [...at, 'gpu'], `${d.atom} has no amdgpu_targets flags, so gpu: true adds nothing`, 'remove `gpu: true`'));
      }
      if (d.gpu && ext) {
        issues.push(issueAt(c, [...at, 'gpu'], `${d.atom} is not a stack package with amdgpu_targets flags`, 'remove `gpu: true`'));
      }
      if (d.gpu && !gpuMode) {
        issues.push(issueAt(c, [...at, 'gpu'], 'gpu: true needs this package to have amdgpu_targets flags (targets.mode full or subset)', 'set targets.mode, or remove `gpu: true`'));
      }
      if (inStack && gpuMode && ['full', 'subset'].includes(inStack.spec.targets.mode) && d.gpu === undefined && !d.blocker) {
        issues.push(
          issueAt(
            c,
            [...at, 'atom'],
            `target coherence: ${d.atom} holds device code for selected GPU targets`,
            'add `gpu: true` so the dependency is built for the same targets, or `gpu: false` when no device code is linked',
          ),
        );
      }
    });
    for (const [list, at] of [
      [c.spec.python?.deps ?? [], ['python', 'deps']],
      [c.spec.llvm?.deps ?? [], ['llvm', 'deps']],
    ] as const) {
      list.forEach((d, i) => {
        if (!external[d.atom] && !model.byAtom.has(d.atom) && !unknowable(ctx, d.atom)) {
          issues.push(issueAt(c, [...at, i, 'atom'], `NonexistentDeps: ${d.atom} is not listed in the external package list`, 'add it to the external package list'));
        }
      });
    }
  }
  const graph = buildGraph(model);
  for (const cycle of graph.cycles) {
    const first = model.byAtom.get(cycle[0]!)!;
    issues.push(
      issueAt(first, ['deps'], `dependency cycle: ${cycle.join(' → ')} → ${cycle[0]}`, 'make one of these dependencies test-only (when: test) or PDEPEND'),
    );
  }
  return issues;
}
