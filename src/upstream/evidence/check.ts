import type { LoadedComponent, Manifest } from '../../manifest/load.js';
import type { EvidenceSpec } from '../../manifest/types.js';
import { CHECKED_FACTS, type CheckedFact, type FactCheck, type FactDetail, type FactStatus } from './fact.js';
import type { ResolvedComponent } from '../../model/resolve.js';
import { Limiter } from '../../util/limiter.js';
import type { Progress } from '../../util/progress.js';
import { collectCMakeNames, explainName, type CMakeNames } from '../facts/cmake-names.js';
import { hasFixups, treesOf } from '../replay/patches.js';
import { classify, replayFixups, type Measurement } from '../replay/replay.js';
import { checkOffline } from './offline.js';
import { hasPath, TreeError, type SourceTree } from '../trees/source-tree.js';
import { resolveAt, sourceLabel, sourceRefs, type SourceRef, type TreeProvider } from '../trees/sources.js';

/**
 * Which of a component's facts hold at the real upstream tag of a release,
 * checked mechanically on the same trees `upstream diff` and `upstream
 * patches` read:
 * - sources: every source's tag (or release asset) exists, and the directory
 *   S points at holds the build files (CMakeLists.txt, pyproject.toml or
 *   setup.py);
 * - fixups: every fix-up applies, replayed as `upstream patches` does;
 * - cmake: every -D name the ebuild passes is one the project's CMake files
 *   define or read, or CMake's own (facts/cmake-names.ts);
 * - offline: with those options, the CMake of the tree the fix-ups leave
 *   reaches no download (offline.ts).
 * The other facts (deps, targets, tests…) need judgment and are not checked.
 */

export { CHECKED_FACTS, type CheckedFact } from './fact.js';

export type { FactCheck, FactDetail, FactStatus } from './fact.js';

export interface ComponentEvidence {
  component: string;
  atom: string;
  /** The component's YAML file. */
  file: string;
  /** Set when the component is not part of the release, or has nothing to check. */
  note?: string;
  /** What was read: "ROCm/rocBLAS at rocm-6.3.3". */
  source?: string;
  facts: FactCheck[];
  /** The record these checks justify; absent when a fact failed or a tree could not be read. */
  record?: EvidenceSpec;
  /** Why no record is justified. */
  noRecord?: string;
  /** What --record did (or, without it, would do). */
  recorded?: 'written' | 'unchanged' | 'would-write';
  /** Why the justified record could not be written into the file (its layout, a link, another writer). */
  recordError?: string;
}

export interface EvidenceReport {
  version: string;
  components: ComponentEvidence[];
  counts: Record<FactStatus, number>;
  records: { written: number; unchanged: number; wouldWrite: number; refused: number };
}

export interface EvidenceOptions {
  version: string;
  components: LoadedComponent[];
  provider: TreeProvider;
  jobs: number;
  progress: Progress;
}

/** "ROCm/rocBLAS at rocm-6.3.3", "ROCm/rocm-libraries at rocm-7.2.0 (projects/rocblas)". */
export function refSource(ref: SourceRef): string | undefined {
  if (!ref.github || !ref.tag) return undefined;
  return `${ref.github} at ${ref.tag}${ref.path ? ` (${ref.path})` : ''}`;
}

/** The files S must hold for the component's build system. */
function buildFilesAt(files: readonly string[], build: ResolvedComponent['spec']['build']): string | undefined {
  const wanted = build === 'cmake' ? ['CMakeLists.txt'] : build === 'python' ? ['pyproject.toml', 'setup.py'] : [];
  if (wanted.length === 0) return files.length > 0 ? `${files.length} files` : undefined;
  return wanted.find((f) => files.includes(f));
}

/**
 * The main tree, as S is: the first source at its subdir, or with `s:` the
 * directory it names below ${WORKDIR}, placed in the source unpacking there.
 */
function mainRef(c: ResolvedComponent, refs: SourceRef[]): SourceRef | { unchecked: string } {
  const main = refs[0];
  if (!main) return { unchecked: 'the component has no source in this release' };
  if (!c.spec.s) return main;
  const s = c.spec.s.replace(/\$\{PV\}/g, c.version).replace(/\$\{PN\}/g, c.pn).replace(/\$\{P\}/g, `${c.pn}-${c.version}`);
  const ref = refs.find((r) => s === r.dir || s.startsWith(`${r.dir}/`));
  if (!ref) return { unchecked: `S (${c.spec.s}) is in none of the component's sources` };
  const rest = s.slice(ref.dir.length + 1);
  return { ...ref, ...(rest ? { subdir: rest } : {}) };
}

/** The -D names the ebuild passes, with where the manifest says each. */
export function passedNames(c: ResolvedComponent): Map<string, string> {
  const names = new Map<string, string>();
  const add = (name: string, where: string) => {
    if (!names.has(name)) names.set(name, where);
  };
  const cm = c.spec.cmake ?? {};
  for (const n of Object.keys(cm.defines ?? {})) add(n, 'cmake.defines');
  (cm.when ?? []).forEach((w, i) => {
    for (const n of [...Object.keys(w.defines), ...Object.keys(w.otherwise ?? {})]) add(n, `cmake.when[${i}]`);
  });
  for (const t of cm.target_defines ?? []) add(t.name, 'cmake.target_defines');
  for (const f of cm.flags ?? []) {
    const m = /^-D([A-Za-z_][A-Za-z0-9_.+-]*)(?::[A-Za-z]+)?=/.exec(f);
    if (m) add(m[1]!, 'cmake.flags');
  }
  if (c.spec.targets.mode !== 'none') for (const v of c.spec.targets.cmake_vars ?? []) add(v, 'targets.cmake_vars');
  return names;
}

const summarize = (fact: CheckedFact, details: FactDetail[], held: string): FactCheck => {
  for (const status of ['unreadable', 'failed', 'unchecked'] as const) {
    const first = details.find((d) => d.status === status);
    if (first) {
      const n = details.filter((d) => d.status === status).length;
      return { fact, status, reason: `${first.subject}: ${first.reason}${n > 1 ? ` (and ${n - 1} more)` : ''}`, details };
    }
  }
  return { fact, status: 'held', reason: held, details };
};

async function open(provider: TreeProvider, ref: SourceRef): Promise<SourceTree | FactDetail> {
  try {
    return await provider.open(ref);
  } catch (err) {
    if (!(err instanceof TreeError)) throw err;
    return { subject: sourceLabel(ref), status: err.kind === 'missing' ? 'failed' : 'unreadable', reason: err.message };
  }
}

async function checkSources(c: ResolvedComponent, refs: SourceRef[], provider: TreeProvider): Promise<{ check: FactCheck; tree?: SourceTree }> {
  const details: FactDetail[] = [];
  const main = mainRef(c, refs);
  let tree: SourceTree | undefined;
  if ('unchecked' in main) {
    details.push({ subject: 'S', status: 'unchecked', reason: main.unchecked });
  } else if (!main.github && provider.access.kind === 'git') {
    details.push({ subject: main.distfile, status: 'unchecked', reason: 'not a tagged repository: read it from its distfile (without --base-url)' });
  } else {
    const t = await open(provider, main);
    if ('status' in t) details.push(t);
    else {
      tree = t;
      const files = await t.files();
      const found = buildFilesAt(files, c.spec.build);
      const where = `S (${sourceLabel(main)}${main.subdir ? `/${main.subdir}` : ''})`;
      details.push(
        found
          ? { subject: where, status: 'held', reason: `holds ${found}` }
          : { subject: where, status: 'failed', reason: files.length === 0 ? 'is empty' : `holds no ${c.spec.build === 'python' ? 'pyproject.toml or setup.py' : 'CMakeLists.txt'}` },
      );
      if (!main.github) details.push({ subject: main.distfile, status: 'unchecked', reason: 'not a tagged repository: no upstream tag to name' });
    }
  }
  for (const ref of refs.slice(1)) {
    if (!ref.github && provider.access.kind === 'git') {
      details.push({ subject: ref.distfile, status: 'unchecked', reason: 'not a tagged repository: read it from its distfile (without --base-url)' });
      continue;
    }
    if (!ref.versioned && ref.tag && /^[0-9a-f]{40}$/.test(ref.tag) && provider.access.kind === 'git') {
      details.push({ subject: sourceLabel(ref), status: 'unchecked', reason: 'pinned to a commit, which git reads only at tags: read it from its distfile (without --base-url)' });
      continue;
    }
    const t = await open(provider, ref);
    details.push('status' in t ? t : { subject: sourceLabel(ref), status: 'held', reason: (await t.files()).length > 0 ? 'exists' : 'exists (empty)' });
  }
  return { check: summarize('sources', details, details.map((d) => `${d.subject} ${d.reason}`).join('; ')), ...(tree ? { tree } : {}) };
}

/** What a fact that reads S is when S did not open: as undecided as the sources were. */
function withoutTree(fact: CheckedFact, sources: FactCheck): FactCheck {
  return { fact, status: sources.status === 'unreadable' ? 'unreadable' : 'unchecked', reason: `S could not be read (${sources.reason})`, details: [] };
}

/**
 * find_package() names whose CMake modules a component of the stack installs:
 * a -D name those modules read reaches the build although the project's own
 * files never mention it (rocm-cmake's ROCM_SYMLINK_LIBS).
 */
const MODULE_PROVIDERS: Record<string, string> = { ROCM: 'dev-build/rocm-cmake', ROCmCMakeBuildTools: 'dev-build/rocm-cmake' };

/** The names of the CMake modules of a stack component, at the same release; read once per run. */
type ModuleNames = (atom: string) => Promise<{ label: string; names: CMakeNames } | { error: string } | undefined>;

function moduleReader(manifest: Manifest, version: string, provider: TreeProvider): ModuleNames {
  const cache = new Map<string, ReturnType<ModuleNames>>();
  return (atom) => {
    let hit = cache.get(atom);
    if (!hit) {
      hit = (async () => {
        const loaded = manifest.components.find((c) => c.spec.atom === atom);
        const c = loaded ? resolveAt(manifest, loaded, version) : undefined;
        const ref = c ? sourceRefs(manifest, c)[0] : undefined;
        if (!ref) return undefined;
        const tree = await open(provider, ref);
        if ('status' in tree) return { error: `${atom} could not be read: ${tree.reason}` };
        return { label: sourceLabel(ref), names: await collectCMakeNames(tree) };
      })();
      cache.set(atom, hit);
    }
    return hit;
  };
}

async function checkCMake(c: ResolvedComponent, main: { check: FactCheck; tree?: SourceTree }, modules: ModuleNames): Promise<FactCheck | undefined> {
  if (c.spec.build !== 'cmake') return undefined;
  const passed = passedNames(c);
  if (passed.size === 0) return undefined;
  const tree = main.tree;
  if (!tree) return withoutTree('cmake', main.check);
  const names = await collectCMakeNames(tree);
  const providers = [...new Set([...names.packages].map((p) => MODULE_PROVIDERS[p]).filter((a): a is string => a !== undefined && a !== c.atom))];
  const details: FactDetail[] = [];
  for (const [name, where] of passed) {
    const how = explainName(name, names);
    if (how) {
      details.push({ subject: name, status: 'held', reason: how });
      continue;
    }
    const unread: string[] = [];
    let found: string | undefined;
    for (const atom of providers) {
      const m = await modules(atom);
      if (m && 'error' in m) unread.push(m.error);
      const hit = m && 'names' in m ? m.names.known.get(name) : undefined;
      if (m && 'names' in m && hit) {
        found = `${hit.via} in ${atom}'s CMake modules (${m.label}, ${hit.where.file}:${hit.where.line}), which the project loads with find_package`;
        break;
      }
    }
    details.push(
      found
        ? { subject: name, status: 'held', reason: found }
        : {
            subject: name,
            // Undecided when a provider's modules could not be read: they may well read it.
            status: unread.length ? 'unreadable' : 'failed',
            reason: `passed by ${where}, but neither defined nor read by ${names.files === 1 ? 'the CMake file' : `the ${names.files} CMake files`} of S${providers.length ? ` or the CMake modules of ${providers.join(', ')}` : ''}, nor CMake's own${unread.length ? ` (${unread.join('; ')})` : ''}`,
          },
    );
  }
  return summarize('cmake', details, `${passed.size} -D name${passed.size === 1 ? '' : 's'}, each defined or read by the project or CMake's own`);
}

function checkFixups(c: ResolvedComponent, measurements: Measurement[], main: { check: FactCheck; tree?: SourceTree }): FactCheck | undefined {
  if (!hasFixups(c) && !(c.spec.patches ?? []).length) return undefined;
  if (!main.tree) return withoutTree('fixups', main.check);
  // The replay applies the release's patches first (a patch fetched by URL is unchecked), then measures the fix-ups.
  const details: FactDetail[] = [];
  for (const l of measurements.map((m) => classify(m, undefined))) {
    // An edit of the installed image or a temporary file is not a fix-up of the sources.
    if (l.status === 'skipped' && OUTSIDE_SOURCES.test(l.file)) continue;
    const status: FactStatus = l.status === 'applies' || l.status === 'differs' ? 'held' : l.status === 'skipped' ? 'unchecked' : l.status === 'unreadable' ? 'unreadable' : 'failed';
    const why = l.status === 'upstream' ? `already upstream (${l.reason}): the fix-up has nothing to do` : l.reason;
    details.push({ subject: `${l.fixup} ${l.file}`, status, reason: `${l.what}: ${why}${l.when ? ` (only with USE=${l.when})` : ''}` });
  }
  const n = details.length;
  if (n === 0) return undefined;
  return summarize('fixups', details, n === 1 ? '1 fix-up applies' : `${n} fix-ups apply`);
}

/** Paths fix-ups may edit that are not in the sources: ${ED}, ${D}, ${T}… (as replay/replay.ts skips them). */
const OUTSIDE_SOURCES = /^["']?\$\{?(ED|D|T|BUILD_DIR|HOME|FILESDIR|DISTDIR)\b/;

/** The versioned sources read, main first: the record's `source`. */
function recordSource(refs: SourceRef[]): string | undefined {
  const main = refs[0];
  const first = main && main.versioned ? refSource(main) : undefined;
  if (!first) return undefined;
  const rest = refs.slice(1).filter((r) => r.versioned).map(refSource).filter((s): s is string => s !== undefined);
  return [...new Set([first, ...rest])].join('; ');
}

export async function checkComponent(manifest: Manifest, loaded: LoadedComponent, version: string, provider: TreeProvider, modules = moduleReader(manifest, version, provider)): Promise<ComponentEvidence> {
  const base = { component: loaded.spec.name, atom: loaded.spec.atom, file: loaded.source.file, facts: [] as FactCheck[] };
  const c = resolveAt(manifest, loaded, version);
  if (!c) return { ...base, note: `not part of ${version} (releases: in the component's data)` };
  const refs = sourceRefs(manifest, c);
  const source = recordSource(refs);
  const sources = await checkSources(c, refs, provider);
  const cmake = await checkCMake(c, sources, modules);
  // The fix-ups replayed once: their measurements, and the trees as they leave them, which the build reads.
  const replayed = sources.tree ? await replayFixups(c, treesOf(manifest, c, provider)) : undefined;
  const fixups = checkFixups(c, replayed?.measurements ?? [], sources);
  const offline = replayed ? await checkOffline(c, replayed.trees) : c.spec.build === 'cmake' ? withoutTree('offline', sources.check) : undefined;
  const facts = [sources.check, ...(cmake ? [cmake] : []), ...(fixups ? [fixups] : []), ...(offline ? [offline] : [])];
  const out: ComponentEvidence = { ...base, ...(source ? { source } : {}), facts };
  const bad = facts.filter((f) => f.status === 'failed' || f.status === 'unreadable');
  if (bad.length > 0) out.noRecord = bad.map((f) => `${f.fact} ${f.status === 'failed' ? 'failed' : 'could not be read'}`).join(', ');
  else if (!source) out.noRecord = "its main source is not the release's tag of a repository (a fixed tag or a URL)";
  else if (sources.check.status !== 'held') out.noRecord = `sources not checked (${sources.check.reason})`;
  else {
    const held = facts.filter((f) => f.status === 'held').map((f) => f.fact);
    out.record = { releases: [version], kind: 'tag', source, facts: CHECKED_FACTS.filter((f) => held.includes(f)) };
  }
  return out;
}

/** Every component's facts checked at the release's tags; trees are read `jobs` components at a time. */
export async function checkEvidence(manifest: Manifest, o: EvidenceOptions): Promise<EvidenceReport> {
  const resolved = o.components.map((l) => resolveAt(manifest, l, o.version)).filter((c): c is ResolvedComponent => c !== undefined);
  await o.provider.prepare(resolved.flatMap((c) => sourceRefs(manifest, c)));
  const limiter = new Limiter(Math.max(1, o.jobs));
  const modules = moduleReader(manifest, o.version, o.provider);
  let done = 0;
  const components = await Promise.all(
    o.components.map((l) =>
      limiter.run(async () => {
        const r = await checkComponent(manifest, l, o.version, o.provider, modules);
        o.progress.step(++done, o.components.length, l.spec.name);
        return r;
      }),
    ),
  );
  o.progress.done();
  const counts: Record<FactStatus, number> = { held: 0, failed: 0, unchecked: 0, unreadable: 0 };
  for (const c of components) for (const f of c.facts) counts[f.status]++;
  return { version: o.version, components, counts, records: { written: 0, unchanged: 0, wouldWrite: 0, refused: 0 } };
}
