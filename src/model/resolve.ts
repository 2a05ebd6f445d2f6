import type { LoadedComponent, Manifest } from '../manifest/load.js';
import type { ManifestIssue } from '../manifest/issues.js';
import type { ComponentSpec, SourceSpec, TargetsSpec } from '../manifest/types.js';
import { jsonPath, locate } from '../manifest/yaml-source.js';
import { mergeWithProvenance, type Provenance } from './merge.js';
import { inRange } from './version.js';
import { evidenceFor, type PackageEvidence } from './evidence.js';
import { STREAMS } from './streams.js';
import { locateSource, sourcesOf, type SourceLocation } from './sources/index.js';
import { patchesOf } from './patches.js';
import { limitTargets, type FlagLimit, type TargetLimit } from './target-closure.js';

/** The GPU targets a release offers: default-on and optional. */
export interface TargetPolicy {
  default: string[];
  optional: string[];
}

export interface ReleaseModel {
  version: string;
  llvmSlot: number;
  pythonCompat: string;
  policy: TargetPolicy;
}

export interface Distfile {
  /** The file name in DISTDIR. */
  name: string;
  /** Where upstream serves it, with the version filled in. */
  urls: string[];
  /** The SRC_URI entry as the ebuild writes it, e.g. "https://…/rocm-${PV}.tar.gz -> ${P}.tar.gz". */
  uri: string;
  /** USE condition under which it is needed. */
  when?: string;
}

/** One source of a package in a release, and where it comes from. */
export interface ResolvedSource {
  spec: SourceSpec;
  /** Its index in the `sources` list as written (for error locations). */
  at: number;
  location: SourceLocation;
}

/** A component as it stands in one release: overrides applied, defaults filled. */
export interface ResolvedComponent {
  name: string;
  atom: string;
  category: string;
  pn: string;
  /** The package's version (PV): the release's, or its own where the release holds it at another (`version`). */
  version: string;
  /** The stack release this resolution is part of. */
  release: string;
  /**
   * Set when the release holds the package at its own version (PV is not
   * the release): why, as the override that sets `version` says.
   */
  held?: { reason?: string };
  spec: ComponentSpec & { targets: TargetsSpec; compiler: NonNullable<ComponentSpec['compiler']>; keywords: string };
  /** The sources that serve this release (their era holds it), in order; the first is the main tree. */
  sources: ResolvedSource[];
  distfiles: Distfile[];
  /** S, in ebuild form (with ${WORKDIR} and ${PV}). */
  sourceDir: string;
  /**
   * The targets this package offers as amdgpu_targets_* flags in this release
   * (resolveStack narrows them to what its unconditional dependencies allow).
   */
  targets: string[];
  /** How this release's facts were established (the component's evidence records that cover it). */
  evidence: PackageEvidence;
  /** Set by resolveStack: the unconditional dependencies that narrowed `targets`. */
  targetLimits?: TargetLimit[];
  /** Set by resolveStack: the targets the package can be merged with at all; undefined when any will do. */
  usableTargets?: string[];
  /** Set by resolveStack: USE flags pulling in a target-limited package, and the targets one of which they need. */
  flagLimits?: FlagLimit[];
  loaded: LoadedComponent;
  provenance: Provenance;
}

export interface StackModel {
  manifest: Manifest;
  release: ReleaseModel;
  /** Components available in this release, in manifest (file name) order. */
  components: ResolvedComponent[];
  byAtom: Map<string, ResolvedComponent>;
}

export function knownReleases(manifest: Manifest): string[] {
  return Object.keys(manifest.stack.releases);
}

export function releaseModel(manifest: Manifest, version: string, policy: TargetPolicy): ReleaseModel | undefined {
  const r = manifest.stack.releases[version];
  if (!r) return undefined;
  // PYTHON_COMPAT follows Gentoo's profiles, not the ROCm release: one value for every release.
  return { version, llvmSlot: r.llvm_slot, pythonCompat: manifest.stack.python.compat, policy };
}

/** Substitute ${PV}, ${PN}, ${P} and $(ver_cut …) as Portage would. */
export { expand } from './sources/index.js';

/**
 * The tag scheme of a release's sources: what a source without its own `tag`
 * is cut from. The release's own `tag`, else its stream's (TheRock:
 * `therock-$(ver_cut 1-2)`), else the legacy stream's as the stack's
 * defaults give it (`rocm-${PV}`).
 */
export function releaseTag(manifest: Manifest, version: string): string {
  const r = manifest.stack.releases[version];
  if (r?.tag !== undefined) return r.tag;
  if (r?.stream !== undefined && r.stream !== 'legacy') return STREAMS[r.stream].tagFor(version);
  return manifest.stack.defaults?.tag ?? STREAMS.legacy.tagFor(version);
}

/** The commit of each repository a release pins (stack.yaml `pins`). */
export function releasePins(manifest: Manifest, version: string): Readonly<Record<string, string>> {
  return manifest.stack.releases[version]?.pins ?? {};
}

/**
 * The tag scheme of a package held at its own version in another release:
 * that of the release its version names when the manifest has it (7.2.4's
 * rocm-${PV}), else the stack's default.
 */
function ownVersionTag(manifest: Manifest, version: string): string {
  return manifest.stack.releases[version] ? releaseTag(manifest, version) : (manifest.stack.defaults?.tag ?? STREAMS.legacy.tagFor(version));
}

/**
 * The distfile of one source of a package in a release: its name in DISTDIR,
 * the URL it is fetched from, its SRC_URI entry and the directory it unpacks
 * to (ebuild form). `index` is its place among the release's sources.
 */
export function sourceDistfile(
  manifest: Manifest,
  src: SourceSpec,
  index: number,
  pn: string,
  version: string,
): { name: string; url: string; uri: string; dir: string } {
  const l = locateSource(src, { pn, version, releaseTag: releaseTag(manifest, version), index, pins: releasePins(manifest, version) });
  return { name: l.name, url: l.url, uri: l.uri, dir: l.dir };
}

/**
 * Whether a component is in a release: what resolveComponent answers with
 * undefined or not, without resolving the rest. Overrides may change
 * `releases` too, so the key is merged exactly as the full merge would.
 * (lint's view of the stack asks this for every component and release.)
 */
export function inRelease(loaded: LoadedComponent, version: string): boolean {
  const base = loaded.spec;
  if (!inRange(version, base.releases)) return false;
  const patches = (base.overrides ?? [])
    .filter((o) => inRange(version, o.versions) && o.set !== null && typeof o.set === 'object' && 'releases' in o.set)
    .map((o) => ({ value: { releases: (o.set as { releases?: unknown }).releases } as unknown, at: [] as (string | number)[] }));
  if (patches.length === 0) return true;
  const merged = mergeWithProvenance({ releases: base.releases }, patches).value as { releases?: ComponentSpec['releases'] };
  return inRange(version, merged.releases);
}

export function resolveComponent(
  manifest: Manifest,
  loaded: LoadedComponent,
  release: ReleaseModel,
): ResolvedComponent | undefined {
  const base = loaded.spec;
  if (!inRange(release.version, base.releases)) return undefined;
  const patches = (base.overrides ?? [])
    .map((o, i) => ({ o, i }))
    .filter(({ o }) => inRange(release.version, o.versions))
    .map(({ o, i }) => ({ value: o.set as unknown, at: ['overrides', i, 'set'] as (string | number)[] }));
  const { overrides: _ignored, evidence: _evidence, ...withoutOverrides } = base;
  const merged = mergeWithProvenance(withoutOverrides, patches);
  const spec = merged.value as ComponentSpec;
  if (!inRange(release.version, spec.releases)) return undefined;

  const [category, pn] = spec.atom.split('/') as [string, string];
  // A release may hold a package at its own version: PV is that version, its
  // sources follow that version's tags, and everything else is the release's.
  const held = spec.version !== undefined && spec.version !== release.version;
  const version = held ? spec.version! : release.version;
  const distfiles: Distfile[] = [];
  const tag = held ? ownVersionTag(manifest, version) : releaseTag(manifest, version);
  const pins = releasePins(manifest, release.version);
  const sources: ResolvedSource[] = sourcesOf(spec.sources, release.version).map(({ src, at }, index) => ({
    spec: src,
    at,
    location: locateSource(src, { pn, version, releaseTag: tag, index, pins }),
  }));
  for (const { spec: src, location: l } of sources) {
    if (!distfiles.some((d) => d.name === l.name)) distfiles.push({ name: l.name, urls: [l.url], uri: l.uri, ...(src.when ? { when: src.when } : {}) });
  }
  // Upstream's patches fetched by URL are distfiles too: SRC_URI, the Manifest's DIST lines, the fetcher.
  for (const p of patchesOf(spec.patches, pn, version, release.version)) {
    if (p.kind === 'url' && !distfiles.some((d) => d.name === p.name)) distfiles.push({ name: p.name, urls: [p.url], uri: p.uri });
  }
  const main = sources[0];
  // A component with no source for this release is reported by validate (checkSources); S stays empty.
  let sourceDir = main ? `\${WORKDIR}/${main.location.dir}${main.spec.subdir ? `/${main.spec.subdir}` : ''}` : '';
  if (spec.s) sourceDir = `\${WORKDIR}/${spec.s}`;

  const targetsSpec: TargetsSpec = spec.targets ?? { mode: 'none' };
  const all = [...release.policy.default, ...release.policy.optional];
  let targets: string[] = [];
  if (targetsSpec.mode === 'full') targets = all;
  if (targetsSpec.mode === 'subset') targets = all.filter((t) => targetsSpec.supported?.includes(t));

  return {
    name: spec.name,
    atom: spec.atom,
    category,
    pn,
    version,
    release: release.version,
    ...(held ? { held: { ...heldReason(base, merged.provenance) } } : {}),
    spec: {
      ...spec,
      targets: targetsSpec,
      compiler: spec.compiler ?? 'host',
      keywords: spec.keywords ?? manifest.stack.defaults?.keywords ?? '~amd64',
    },
    sources,
    distfiles,
    sourceDir,
    targets,
    // Evidence is about the component as written, release by release: never taken from an override.
    evidence: evidenceFor(base.evidence, release.version),
    loaded,
    provenance: merged.provenance,
  };
}

/** The reason the override that sets a component's own version gives. */
function heldReason(base: ComponentSpec, provenance: Provenance): { reason?: string } {
  const at = provenance.sourcePath(['version']);
  const reason = at[0] === 'overrides' && typeof at[1] === 'number' ? base.overrides?.[at[1]]?.reason : undefined;
  return reason ? { reason: reason.replace(/\s+/g, ' ').trim() } : {};
}

/**
 * Every package of any release, by atom in order of first appearance, as
 * resolved in the last release that has it: what resolving every release's
 * stack in turn and keeping the last of each atom gives, with one resolution
 * per atom (membership is asked of inRelease; only a component whose
 * overrides rename it is resolved in each of its releases).
 */
export function packagesOfEveryRelease(manifest: Manifest, releaseOf: (version: string) => ReleaseModel): Map<string, ResolvedComponent> {
  const last = new Map<string, { c: LoadedComponent; v: string }>();
  for (const v of knownReleases(manifest)) {
    for (const c of manifest.components) {
      if (!inRelease(c, v)) continue;
      const renamed = c.spec.overrides?.some((o) => o.set !== null && typeof o.set === 'object' && 'atom' in o.set);
      const atom = renamed ? resolveComponent(manifest, c, releaseOf(v))?.atom : c.spec.atom;
      if (atom) last.set(atom, { c, v });
    }
  }
  const all = new Map<string, ResolvedComponent>();
  for (const [atom, { c, v }] of last) {
    const resolved = resolveComponent(manifest, c, releaseOf(v));
    if (resolved) all.set(atom, resolved);
  }
  return all;
}

export function resolveStack(manifest: Manifest, release: ReleaseModel): StackModel {
  const components = manifest.components
    .map((c) => resolveComponent(manifest, c, release))
    .filter((c): c is ResolvedComponent => c !== undefined);
  const byAtom = new Map(components.map((c) => [c.atom, c]));
  limitTargets(components, byAtom);
  return { manifest, release, components, byAtom };
}

/**
 * The evidence the manifest records for one version of a package (an ebuild's
 * version, revision ignored), or undefined when the manifest does not know that
 * release or package. Only what is recorded is read: no target policy needed.
 */
export function evidenceOf(manifest: Manifest, atom: string, version: string): PackageEvidence | undefined {
  const release = version.replace(/-r\d+$/, '');
  const model = releaseModel(manifest, release, { default: [], optional: [] });
  if (!model) return undefined;
  for (const loaded of manifest.components) {
    if (!inRelease(loaded, release)) continue;
    const c = resolveComponent(manifest, loaded, model);
    if (c?.atom === atom) return c.evidence;
  }
  return undefined;
}

/** The GitHub repositories a package's sources of this release come from (metadata.xml's remote-ids), in source order. */
export function upstreamRepos(c: ResolvedComponent): string[] {
  return [...new Set(c.sources.map((s) => s.location.repo).filter((r): r is string => r !== undefined))];
}

/** An issue about a resolved component, placed where the user wrote the value. */
export function issueAt(
  c: ResolvedComponent,
  path: (string | number)[],
  message: string,
  hint?: string,
): ManifestIssue {
  const sourcePath = c.provenance.sourcePath(path);
  const pos = locate(c.loaded.source, sourcePath);
  return {
    file: c.loaded.source.file,
    line: pos.line,
    column: pos.column,
    path: jsonPath(sourcePath),
    message,
    ...(hint ? { hint } : {}),
  };
}
