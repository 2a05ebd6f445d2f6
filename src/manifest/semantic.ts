import { access } from 'node:fs/promises';
import path from 'node:path';
import type { Manifest } from './load.js';
import type { ManifestIssue } from './issues.js';
import type { DefineValue } from './types.js';
import { SchemaValidator } from './schema-validator.js';
import { checkBashValue } from '../model/bash-value.js';
import { needsLocalDescription } from '../model/use-flags.js';
import { KEYWORDS } from '../lint/index.js';
import { issueAt, knownReleases, releaseModel, resolveStack, type ResolvedComponent, type StackModel } from '../model/resolve.js';
import { loadPolicies } from '../model/targets.js';
import { jsonPath, locate } from './yaml-source.js';
import { closest } from './schema-validator.js';
import { inRange } from '../model/version.js';
import { buildGraph } from '../plan/graph.js';

/**
 * Checks a schema cannot express: references between components, target
 * coherence, declared USE flags, values that reach bash, and that AMD's
 * release manifest is fully accounted for. Runs on every release the stack
 * knows, because overrides change components per release.
 */
export async function checkManifest(manifest: Manifest): Promise<ManifestIssue[]> {
  const issues: ManifestIssue[] = [];
  issues.push(...checkUnique(manifest));
  issues.push(...(await checkPatches(manifest)));

  const policies = await loadPolicies(manifest);
  if ('issues' in policies) return [...issues, ...policies.issues];

  const perRelease = new Map<string, { issue: ManifestIssue; releases: string[] }>();
  const releases = knownReleases(manifest);
  const models: StackModel[] = [];
  for (const version of releases) {
    const release = releaseModel(manifest, version, policies.byRelease.get(version)!)!;
    const model = resolveStack(manifest, release);
    models.push(model);
    for (const issue of checkRelease(model)) {
      const key = `${issue.file}:${issue.line}:${issue.column}:${issue.path}:${issue.message}`;
      const seen = perRelease.get(key);
      if (seen) seen.releases.push(version);
      else perRelease.set(key, { issue, releases: [version] });
    }
  }
  for (const { issue, releases: where } of perRelease.values()) {
    issues.push(
      where.length === releases.length ? issue : { ...issue, message: `${issue.message} (in ${where.join(', ')})` },
    );
  }
  issues.push(...checkProjects(models));
  return issues;
}

function checkUnique(manifest: Manifest): ManifestIssue[] {
  const issues: ManifestIssue[] = [];
  for (const field of ['name', 'atom'] as const) {
    const seen = new Map<string, string>();
    for (const c of manifest.components) {
      const v = c.spec[field];
      const first = seen.get(v);
      if (first) {
        const pos = locate(c.source, [field]);
        issues.push({
          file: c.source.file,
          ...pos,
          path: `$.${field}`,
          message: `${field} ${JSON.stringify(v)} is already used by ${path.basename(first)}`,
          hint: field === 'atom' ? 'one component per package: describe per-release differences with `overrides`' : 'give each component a unique name',
        });
      } else {
        seen.set(v, c.source.file);
      }
    }
  }
  return issues;
}

async function checkPatches(manifest: Manifest): Promise<ManifestIssue[]> {
  const issues: ManifestIssue[] = [];
  for (const c of manifest.components) {
    const lists: { at: (string | number)[]; patches: string[] }[] = [{ at: ['patches'], patches: c.spec.patches ?? [] }];
    (c.spec.overrides ?? []).forEach((o, i) => lists.push({ at: ['overrides', i, 'set', 'patches'], patches: o.set.patches ?? [] }));
    for (const { at, patches } of lists) {
      for (const [i, p] of patches.entries()) {
        const file = path.join(manifest.dir, 'patches', c.spec.name, p);
        try {
          await access(file);
        } catch {
          const pos = locate(c.source, [...at, i]);
          issues.push({
            file: c.source.file,
            ...pos,
            path: jsonPath([...at, i]),
            message: `patch ${p} not found`,
            hint: `put it at ${path.relative(process.cwd(), file)}`,
          });
        }
      }
    }
  }
  return issues;
}

function declaredFlags(c: ResolvedComponent): Set<string> {
  const flags = new Set(Object.keys(c.spec.use ?? {}));
  if (c.spec.tests && !c.spec.tests.restrict) flags.add('test');
  if (c.spec.python?.when) flags.add(c.spec.python.when);
  return flags;
}

function checkRelease(model: StackModel): ManifestIssue[] {
  const issues: ManifestIssue[] = [];
  const validator = SchemaValidator.shared();
  const external = model.manifest.external.packages;
  for (const c of model.components) {
    // Overrides can remove or replace required parts: the merged result must still be whole.
    issues.push(...validator.validate('component.schema.json', c.loaded.source, c.spec, [], `as resolved for ${c.version}`));
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
    c.spec.sources.forEach((s, i) => checkFlag(s.when, ['sources', i, 'when']));
    for (const m of c.spec.license.matchAll(/(\S+)\?/g)) checkFlag(m[1], ['license']);
    (c.spec.deps ?? []).forEach((d, i) => checkFlag(d.when, ['deps', i, 'when']));
    (c.spec.python?.deps ?? []).forEach((d, i) => checkFlag(d.when, ['python', 'deps', i, 'when']));
    (c.spec.cmake?.when ?? []).forEach((w, i) => checkFlag(w.use, ['cmake', 'when', i, 'use']));
    (c.spec.llvm?.deps ?? []).forEach((d, i) => checkFlag(d.when, ['llvm', 'deps', i, 'when']));
    (c.spec.prepare ?? []).forEach((op, i) => checkFlag(op.when, ['prepare', i, 'when']));
    if (c.spec.tests && !c.spec.tests.restrict && c.spec.tests.gpu === undefined) {
      issues.push(issueAt(c, ['tests'], 'tests need `gpu: true` or `gpu: false`', 'say whether the tests need an AMD GPU (check_amdgpu), or set restrict: true'));
    }
    (c.spec.targets.required_use_when ?? []).forEach((w, i) => checkFlag(w, ['targets', 'required_use_when', i]));
    const eachDefine = (defines: Record<string, DefineValue> | undefined, at: (string | number)[]) => {
      for (const [name, v] of Object.entries(defines ?? {})) {
        if (typeof v === 'object') checkFlag(v.use, [...at, name, 'use']);
        else if (typeof v === 'string') bash(v, [...at, name]);
      }
    };
    const bash = (v: unknown, at: (string | number)[], quotesEscaped = false) => {
      if (typeof v !== 'string') return;
      const problem = checkBashValue(v, { quotesEscaped });
      if (problem) issues.push(issueAt(c, at, problem.message, problem.hint));
    };
    eachDefine(c.spec.cmake?.defines, ['cmake', 'defines']);
    (c.spec.cmake?.when ?? []).forEach((w, i) => {
      eachDefine(w.defines, ['cmake', 'when', i, 'defines']);
      eachDefine(w.otherwise, ['cmake', 'when', i, 'otherwise']);
    });
    for (const [k, v] of Object.entries(c.spec.globals ?? {})) bash(v, ['globals', k]);
    for (const [k, v] of Object.entries(c.spec.tests?.env ?? {})) bash(v, ['tests', 'env', k]);
    const cmd = c.spec.tests?.command;
    if (cmd) {
      bash(cmd.dir, ['tests', 'command', 'dir']);
      cmd.argv.forEach((a, i) => bash(a, ['tests', 'command', 'argv', i]));
      for (const [k, v] of Object.entries(cmd.env ?? {})) bash(v, ['tests', 'command', 'env', k]);
    }
    (c.spec.prepare ?? []).forEach((op, i) => {
      if ('replace' in op) bash(op.replace.to, ['prepare', i, 'replace', 'to'], true);
    });

    // Build system and sections must agree.
    if (c.spec.cmake && c.spec.build !== 'cmake') {
      issues.push(issueAt(c, ['cmake'], `a \`cmake:\` section with build: ${c.spec.build}`, 'set `build: cmake` or remove the section'));
    }
    if (c.spec.build === 'python' && c.spec.python?.eclass !== 'distutils-r1') {
      issues.push(issueAt(c, ['build'], 'build: python needs python.eclass: distutils-r1', 'add `python: { eclass: distutils-r1 }`'));
    }
    if (c.spec.compiler === 'hip-lang' && c.spec.build !== 'cmake') {
      issues.push(issueAt(c, ['compiler'], 'compiler: hip-lang is CMake\'s HIP language and needs build: cmake'));
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
    if (gpuMode && c.targets.length === 0) {
      issues.push(
        issueAt(c, ['targets', 'supported'], `none of these targets is offered by the ${c.version} target policy`, 'check manifest/targets.yaml for this release'),
      );
    }
    if (!gpuMode) {
      for (const key of ['cmake_vars', 'join', 'required_use_when'] as const) {
        if (c.spec.targets[key] !== undefined) {
          issues.push(issueAt(c, ['targets', key], `targets.${key} needs mode full or subset`));
        }
      }
      if (c.spec.cmake?.target_defines?.length) {
        issues.push(issueAt(c, ['cmake', 'target_defines'], 'target_defines need targets.mode full or subset'));
      }
      if (c.spec.compiler === 'hip-lang') {
        issues.push(issueAt(c, ['compiler'], 'compiler: hip-lang compiles device code and needs targets.mode full or subset'));
      }
    }

    // Dependencies: exist, bind to slots correctly, and keep GPU targets coherent.
    (c.spec.deps ?? []).forEach((d, i) => {
      const at = ['deps', i];
      const inStack = model.byAtom.get(d.atom);
      const ext = external[d.atom];
      if (!inStack && !ext) {
        const everywhere = model.manifest.components.some((o) => o.spec.atom === d.atom);
        if (everywhere) {
          issues.push(issueAt(c, [...at, 'atom'], `${d.atom} is not part of the stack in ${c.version}`, 'limit this dependency to the releases that have it with `overrides`'));
        } else {
          const near = closest(d.atom, [...model.byAtom.keys(), ...Object.keys(external)]);
          issues.push(
            issueAt(
              c,
              [...at, 'atom'],
              `NonexistentDeps: ${d.atom} is neither a stack component nor listed in ${'the external package list'}`,
              near ? `did you mean ${near}?` : 'add it to an external package file if ::gentoo has it',
            ),
          );
        }
        return;
      }
      const linked = d.classes.some((k) => k === 'DEPEND' || k === 'RDEPEND');
      if (ext && d.slot === 'same') {
        issues.push(issueAt(c, [...at, 'slot'], 'slot: same binds to this release\'s SLOT and only fits stack packages', 'use "=" for a sub-slotted ::gentoo package, or remove it'));
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
        if (!external[d.atom] && !model.byAtom.has(d.atom)) {
          issues.push(issueAt(c, [...at, i, 'atom'], `NonexistentDeps: ${d.atom} is not listed in ${'the external package list'}`, 'add it to the external package list'));
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

/**
 * Every project in AMD's release manifests must be packaged or excluded with a
 * reason. Reported once per project, naming the releases concerned.
 */
function checkProjects(models: StackModel[]): ManifestIssue[] {
  if (models.length === 0) return [];
  const { stack, stackSource } = models[0]!.manifest;
  const missing = new Map<string, string[]>();
  const unknown = new Map<string, { c: ResolvedComponent; releases: string[] }>();
  for (const model of models) {
    const listed = stack.projects?.[model.release.version];
    if (!listed) continue;
    const packaged = new Map<string, ResolvedComponent>();
    for (const c of model.components) for (const p of c.spec.projects ?? [c.name]) packaged.set(p, c);
    const excluded = new Set(
      (stack.excluded ?? []).filter((e) => inRange(model.release.version, e.releases)).map((e) => e.project),
    );
    for (const p of listed) {
      if (!packaged.has(p) && !excluded.has(p)) missing.set(p, [...(missing.get(p) ?? []), model.release.version]);
    }
    for (const [p, c] of packaged) {
      if (!listed.includes(p)) {
        const seen = unknown.get(p) ?? { c, releases: [] };
        seen.releases.push(model.release.version);
        unknown.set(p, seen);
      }
    }
  }
  const issues: ManifestIssue[] = [];
  const all = models.map((m) => m.release.version);
  const where = (releases: string[]) => (releases.length === all.length ? '' : ` (in ${releases.join(', ')})`);
  for (const [p, releases] of missing) {
    const first = releases[0]!;
    const at = ['projects', first, stack.projects![first]!.indexOf(p)];
    issues.push({
      file: stackSource.file,
      ...locate(stackSource, at),
      path: jsonPath(at),
      message: `AMD project ${p} is neither packaged by a component nor excluded${where(releases)}`,
      hint: "add it to a component's `projects:` or to `excluded:` with the reason",
    });
  }
  for (const [p, { c, releases }] of unknown) {
    issues.push(issueAt(c, ['projects'], `project ${p} is not in AMD's manifest${where(releases)}`, 'check the spelling against the release manifest'));
  }
  return issues;
}
