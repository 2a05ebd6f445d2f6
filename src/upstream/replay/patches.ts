import type { LoadedComponent, Manifest } from '../../manifest/load.js';
import type { ResolvedComponent } from '../../model/resolve.js';
import { Limiter } from '../../util/limiter.js';
import type { Progress } from '../../util/progress.js';
import { classify, measureFixups, type Measurement, type ReplayLine, type ReplayStatus, type ReplayTrees } from './replay.js';
import { PatchFileError, readPatchFile } from '../../stack-check/patch-files.js';
import { TreeError, type SourceTree } from '../trees/source-tree.js';
import { dataRelease, resolveAt, sourceLabel, sourceRefs, type TreeProvider } from '../trees/sources.js';

export interface ComponentReplay {
  component: string;
  atom: string;
  /** The main tree the fix-ups were replayed on. */
  tree: string;
  lines: ReplayLine[];
}

export interface PatchesReport {
  version: string;
  /** The release the counts are compared with. */
  against?: string;
  components: ComponentReplay[];
  counts: Record<ReplayStatus, number>;
}

export interface PatchesOptions {
  version: string;
  against?: string;
  components: LoadedComponent[];
  provider: TreeProvider;
  jobs: number;
  progress: Progress;
}

/** Whether a component has fix-ups to replay: prepare operations or sed calls in phase code. */
export function hasFixups(c: ResolvedComponent): boolean {
  return (c.spec.prepare ?? []).length > 0 || Object.values(c.spec.phases ?? {}).some((p) => /\bsed\b/.test(`${p.before ?? ''}${p.replace ?? ''}${p.after ?? ''}`));
}

/** A component's trees for the replay, each opened once, when a fix-up first reaches it. */
export function treesOf(manifest: Manifest, c: ResolvedComponent, provider: TreeProvider): ReplayTrees {
  const refs = sourceRefs(manifest, c);
  const opened = new Map<number, Promise<SourceTree | { error: string }>>();
  const release = manifest.stack.releases[dataRelease(manifest, c.version)]!;
  return {
    version: c.version,
    llvmSlot: release.llvm_slot,
    refs,
    tree(index) {
      let t = opened.get(index);
      if (!t) {
        t = provider.open(refs[index]!).catch((err: unknown) => {
          if (err instanceof TreeError) return { error: err.message };
          throw err;
        });
        opened.set(index, t);
      }
      return t;
    },
    async patch(file) {
      try {
        return await readPatchFile(manifest.dir, c.name, file);
      } catch (err) {
        if (err instanceof PatchFileError) return { error: err.message };
        throw err;
      }
    },
  };
}

/**
 * Replays every component's fix-ups on a release's sources and compares the
 * match counts with the release the data was written for.
 */
export async function replayPatches(manifest: Manifest, o: PatchesOptions): Promise<PatchesReport> {
  const against = o.against;
  const work: { now: ResolvedComponent; before?: ResolvedComponent }[] = [];
  const sourceless: ComponentReplay[] = [];
  for (const loaded of o.components) {
    const now = resolveAt(manifest, loaded, o.version);
    // A component with only patches is replayed too, not passed over.
    if (!now || (!hasFixups(now) && (now.spec.patches ?? []).length === 0)) continue;
    const before = against ? resolveAt(manifest, loaded, against) : undefined;
    // A release can leave a component without a source: its sources' release ranges end before it
    // (a pinned source of 10.0.0 alone, a release not drafted yet). No tree, nothing replayed: said so.
    if (sourceRefs(manifest, now).length === 0) {
      sourceless.push({ component: now.name, atom: now.atom, tree: `no source in ${o.version} (the release ranges of its sources end before it)`, lines: [] });
      continue;
    }
    work.push({ now, ...(before && sourceRefs(manifest, before).length > 0 ? { before } : {}) });
  }
  // Main trees of both releases in one run of the distfiles engine.
  await o.provider.prepare(work.flatMap((w) => [w.now, ...(w.before ? [w.before] : [])].map((c) => sourceRefs(manifest, c)[0]!)));

  const limiter = new Limiter(Math.max(1, o.jobs));
  let done = 0;
  const components = await Promise.all(
    work.map((w) =>
      limiter.run(async (): Promise<ComponentReplay> => {
        const now = await measureFixups(w.now, treesOf(manifest, w.now, o.provider));
        let before = new Map<string, Measurement>();
        if (w.before) {
          const m = await measureFixups(w.before, treesOf(manifest, w.before, o.provider));
          before = new Map(m.map((x) => [x.key, x]));
        }
        o.progress.step(++done, work.length, w.now.name);
        return {
          component: w.now.name,
          atom: w.now.atom,
          tree: sourceLabel(sourceRefs(manifest, w.now)[0]!),
          lines: now.map((m) => classify(m, before.get(m.key))),
        };
      }),
    ),
  );
  o.progress.done();
  components.push(...sourceless);
  const counts: Record<ReplayStatus, number> = { applies: 0, differs: 0, upstream: 0, fails: 0, skipped: 0, unreadable: 0 };
  for (const c of components) for (const l of c.lines) counts[l.status]++;
  return { version: o.version, ...(against ? { against } : {}), components, counts };
}
