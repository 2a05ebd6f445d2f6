import type { LoadedComponent, Manifest } from '../../manifest/load.js';
import { Limiter } from '../../util/limiter.js';
import type { Progress } from '../../util/progress.js';
import { collectBuildFacts } from './build-facts.js';
import { diffFacts, type Change } from './changes.js';
import { TreeError } from '../trees/source-tree.js';
import { resolveAt, sourceLabel, sourceRefs, type SourceRef, type TreeProvider } from '../trees/sources.js';

export interface SourceDiff {
  /** "ROCm/rocPRIM", or the distfile of a non-GitHub source. */
  source: string;
  from?: string;
  to?: string;
  /** pinned: the same fixed tag or URL in both; added/removed: a source only one release has. */
  status: 'compared' | 'pinned' | 'added' | 'removed' | 'error';
  changes: Change[];
  /** Build files read in each tree. */
  files?: { from: number; to: number };
  /** Bytes fetched from the network to read each tree (a monorepo's project: its trees and the files read). */
  bytes?: { from: number; to: number };
  /** Build files that could not be read completely. */
  problems: string[];
  error?: string;
}

export interface ComponentDiff {
  component: string;
  atom: string;
  /** Set when the component exists in only one of the two releases. */
  note?: string;
  sources: SourceDiff[];
}

export interface DiffReport {
  from: string;
  to: string;
  components: ComponentDiff[];
  /** Sources that could not be read (unreachable, no such tag). */
  failures: number;
}

export interface DiffOptions {
  from: string;
  to: string;
  components: LoadedComponent[];
  provider: TreeProvider;
  jobs: number;
  progress: Progress;
}

/**
 * For each component, what changed between two releases in its build files,
 * source by source. A source that cannot be read is reported in its place;
 * the others are still compared.
 */
export async function diffReleases(manifest: Manifest, o: DiffOptions): Promise<DiffReport> {
  const plans: { diff: ComponentDiff; pairs: { a: SourceRef; b: SourceRef; out: SourceDiff }[] }[] = [];
  for (const loaded of o.components) {
    const a = resolveAt(manifest, loaded, o.from);
    const b = resolveAt(manifest, loaded, o.to);
    const diff: ComponentDiff = { component: loaded.spec.name, atom: loaded.spec.atom, sources: [] };
    plans.push({ diff, pairs: [] });
    if (!a || !b) {
      diff.note = !a && !b ? `in neither ${o.from} nor ${o.to}` : `only in ${a ? o.from : o.to} (releases: in the component's data)`;
      continue;
    }
    const ra = sourceRefs(manifest, a);
    const rb = sourceRefs(manifest, b);
    for (const [i, refB] of rb.entries()) {
      const refA = ra[i];
      const source = refB.github ?? refB.distfile;
      if (!refA) {
        diff.sources.push({ source, to: sourceLabel(refB), status: 'added', changes: [], problems: [] });
        continue;
      }
      if (!refB.versioned && refA.url === refB.url) {
        diff.sources.push({ source, from: sourceLabel(refA), to: sourceLabel(refB), status: 'pinned', changes: [], problems: [] });
        continue;
      }
      const out: SourceDiff = { source, from: sourceLabel(refA), to: sourceLabel(refB), status: 'compared', changes: [], problems: [] };
      diff.sources.push(out);
      plans.at(-1)!.pairs.push({ a: refA, b: refB, out });
    }
    for (const refA of ra.slice(rb.length)) {
      diff.sources.push({ source: refA.github ?? refA.distfile, from: sourceLabel(refA), status: 'removed', changes: [], problems: [] });
    }
  }

  const pairs = plans.flatMap((p) => p.pairs);
  // Archive mode: every tarball in one run of the distfiles engine (parallel, resumable).
  await o.provider.prepare(pairs.flatMap((p) => [p.a, p.b]));
  const limiter = new Limiter(Math.max(1, o.jobs));
  let done = 0;
  await Promise.all(
    pairs.map((p) =>
      limiter.run(async () => {
        try {
          const [ta, tb] = await Promise.all([o.provider.open(p.a), o.provider.open(p.b)]);
          const [fa, fb] = await Promise.all([collectBuildFacts(ta), collectBuildFacts(tb)]);
          p.out.changes = diffFacts(fa, fb);
          p.out.files = { from: fa.files.length, to: fb.files.length };
          p.out.bytes = { from: ta.transferred(), to: tb.transferred() };
          p.out.problems = fb.problems.map((x) => `${x.file}${x.line ? `:${x.line}` : ''}: ${x.message}`);
        } catch (err) {
          if (!(err instanceof TreeError)) throw err;
          p.out.status = 'error';
          p.out.error = err.message;
        }
        o.progress.step(++done, pairs.length, `${p.a.component}: ${p.out.source}`);
      }),
    ),
  );
  o.progress.done();
  const components = plans.map((p) => p.diff);
  return { from: o.from, to: o.to, components, failures: components.flatMap((c) => c.sources).filter((s) => s.status === 'error').length };
}
