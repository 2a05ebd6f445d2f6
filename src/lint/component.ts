import type { Progress } from '../util/progress.js';
import { inRelease, knownReleases, upstreamRepos, type ResolvedComponent, type StackModel } from '../model/resolve.js';
import { currentYear, renderEbuild, renderMetadata } from '../render/index.js';
import { bashSyntax, bashSyntaxAll, shellcheck, shellcheckAll, type ToolFinding } from './external-tools.js';
import { lintEbuild, type EbuildInput, type LintResult } from './index.js';
import type { StackPackage } from './types.js';
import type { OverlayIndex } from '../ebuild/dependencies.js';
import { profileUseFlags } from '../model/use-flags.js';

/** The IUSE and REQUIRED_USE rocm.eclass gives this package in its release. */
export function rocmEclassView(c: ResolvedComponent, model: StackModel): Pick<EbuildInput, 'eclassIuse' | 'rocmRequiredUse'> {
  const mode = c.spec.targets.mode;
  if (mode !== 'full' && mode !== 'subset') return {};
  const defaults = new Set(model.release.policy.default);
  return {
    eclassIuse: c.targets.map((t) => `${defaults.has(t) ? '+' : ''}amdgpu_targets_${t}`),
    rocmRequiredUse: `|| ( ${c.targets.map((t) => `amdgpu_targets_${t}`).join(' ')} )`,
  };
}

/** The IUSE a stack package's ebuild gets in this release: its flags, test, and rocm.eclass's targets. */
export function stackIuse(c: ResolvedComponent): Set<string> {
  const iuse = new Set(Object.keys(c.spec.use ?? {}));
  if (c.spec.tests && !c.spec.tests.restrict) iuse.add('test');
  for (const t of c.targets) iuse.add(`amdgpu_targets_${t}`);
  return iuse;
}

const freeSets = new WeakMap<StackModel, ReadonlySet<string>>();

/** stack.yaml's licenses.free as a set, built once per model. */
function freeLicenses(model: StackModel): ReadonlySet<string> {
  let set = freeSets.get(model);
  if (!set) freeSets.set(model, (set = new Set(model.manifest.stack.licenses?.free ?? [])));
  return set;
}

const profileSets = new WeakMap<StackModel, ReadonlySet<string>>();

/** stack.yaml's profile.use_expand as flags, built once per model. */
function profileFlags(model: StackModel): ReadonlySet<string> {
  let set = profileSets.get(model);
  if (!set) profileSets.set(model, (set = profileUseFlags(model.manifest.stack.profile?.use_expand)));
  return set;
}

const stackViews = new WeakMap<StackModel, Map<string, StackPackage>>();

/**
 * What the dependency checks know of the packages an ebuild may name: the
 * stack's (IUSE in this release, and the versions of every release the
 * manifest generates) and the external list's (versions where recorded).
 */
export function stackView(model: StackModel): Map<string, StackPackage> {
  const cached = stackViews.get(model);
  if (cached) return cached;
  const view = new Map<string, StackPackage>();
  for (const [atom, e] of Object.entries(model.manifest.external.packages)) {
    const pkg: StackPackage = e.versions ? { versions: e.versions } : {};
    if (e.iuse) {
      pkg.iuse = new Set(e.iuse.map((f) => f.replace(/^\+/, '')));
      pkg.enabled = new Set(e.iuse.filter((f) => f.startsWith('+')).map((f) => f.slice(1)));
    }
    view.set(atom, pkg);
  }
  const releases = knownReleases(model.manifest);
  for (const c of model.components) {
    const versions = releases.filter((v) => inRelease(c.loaded, v));
    view.set(c.atom, { iuse: stackIuse(c), versions, ...(c.usableTargets ? { usableTargets: c.usableTargets } : {}) });
  }
  stackViews.set(model, view);
  return view;
}

export interface ComponentLint {
  atom: string;
  file: string;
  results: LintResult[];
  tools: ToolFinding[];
}

/**
 * Lint one package as `bump` would write it (or the given text): our
 * pkgcheck-style checks, plus real `bash -n` and shellcheck when asked.
 */
export async function lintComponent(
  c: ResolvedComponent,
  model: StackModel,
  options: { year?: number; text?: string; metadata?: string; tools?: { shellcheck: boolean } | undefined; overlay?: OverlayIndex } = {},
): Promise<ComponentLint> {
  const year = options.year ?? currentYear();
  const text = options.text ?? renderEbuild(c, model, { year });
  const file = `${c.atom}/${c.pn}-${c.version}.ebuild`;
  const results = await lintEbuild({
    file,
    atom: c.atom,
    version: c.version,
    text,
    metadata: options.metadata ?? renderMetadata(c, model),
    upstreamRepos: upstreamRepos(c),
    year,
    python: { current: model.manifest.stack.python.current, default: model.manifest.stack.python.default },
    ...(model.manifest.stack.licenses ? { freeLicenses: freeLicenses(model) } : {}),
    profileFlags: profileFlags(model),
    releaseTargets: [...model.release.policy.default, ...model.release.policy.optional],
    stack: stackView(model),
    rocm: true,
    ...(options.overlay ? { overlay: options.overlay } : {}),
    ...rocmEclassView(c, model),
  });
  // Findings a reviewer accepted for this package, with the reason, stay visible but do not fail.
  for (const a of c.spec.qa?.accept ?? []) {
    for (const r of results) {
      if (r.keyword === a.keyword && r.level !== 'info') {
        r.level = 'info';
        r.message = `${r.message} (accepted: ${a.reason})`;
      }
    }
  }
  const tools: ToolFinding[] = [];
  if (options.tools) {
    tools.push(...(await bashSyntax(text)));
    if (options.tools.shellcheck) tools.push(...(await shellcheck(text)));
  }
  return { atom: c.atom, file, results, tools };
}

/**
 * Lint many packages at once: our checks for each, then bash -n and
 * shellcheck once for all of them (each tool is one process, not one per
 * ebuild). Results keep the input order.
 */
export async function lintComponents(
  components: ResolvedComponent[],
  model: StackModel,
  options: (c: ResolvedComponent) => Parameters<typeof lintComponent>[2],
  progress?: Progress,
): Promise<ComponentLint[]> {
  const year = currentYear();
  const steps = 2;
  progress?.step(1, steps, `rendering and checking ${components.length} ebuild${components.length === 1 ? '' : 's'}`);
  const inputs = components.map((c) => {
    const o = options(c) ?? {};
    return { c, o, text: o.text ?? renderEbuild(c, model, { year: o.year ?? year }) };
  });
  const wanted = inputs.filter(({ o }) => o.tools);
  // bash and shellcheck are separate processes: started first, they run while our checks do.
  const texts = wanted.map((w) => w.text);
  const external =
    wanted.length === 0
      ? undefined
      : Promise.all([bashSyntaxAll(texts), wanted.some((w) => w.o.tools!.shellcheck) ? shellcheckAll(texts) : texts.map(() => [])]);
  // Awaited in any case, so a failing tool never leaves a rejection unhandled.
  const settled = external?.then(
    (r) => ({ ok: true as const, r }),
    (err: unknown) => ({ ok: false as const, err }),
  );
  const lints = await Promise.all(inputs.map(({ c, o, text }) => lintComponent(c, model, { ...o, text, tools: undefined }))).finally(() => settled);
  if (!settled) {
    progress?.done();
    return lints;
  }
  progress?.step(2, steps, `bash -n${wanted.some((w) => w.o.tools!.shellcheck) ? ' and shellcheck' : ''} on ${wanted.length} ebuild${wanted.length === 1 ? '' : 's'}`);
  const done = await settled.finally(() => progress?.done());
  if (!done.ok) throw done.err;
  const [syntax, style] = done.r;
  wanted.forEach((w, i) => {
    const lint = lints[inputs.indexOf(w)]!;
    lint.tools.push(...syntax[i]!, ...(w.o.tools!.shellcheck ? style[i]! : []));
  });
  return lints;
}
