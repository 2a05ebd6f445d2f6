import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Dispatcher } from 'undici';
import { fetchDistfile, type FetchContext } from './fetch-file.js';
import { Hasher } from './hash.js';
import { createDispatcher } from './http.js';
import { Limiter } from '../util/limiter.js';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';
import { checkDistdir } from './distdir.js';
import { lockPath, quarantinePath } from './locations.js';
import { waitForLock } from './lock.js';
import { isValidDistfileName, sameEntry } from './manifest-file.js';
import { HostHealth } from './host-health.js';
import { MirrorSet } from './mirror-set.js';
import { silentProgress } from './progress.js';
import { DEFAULT_RETRY_POLICY, classifyError } from './retry-policy.js';
import type { DistfileAttempt, DistfileNeed, DistfileProgress, DistfileResult, EnsureOptions } from './types.js';
import { mismatch } from './verify.js';

export const DEFAULT_JOBS = 4;
export const DEFAULT_TIMEOUT_MS = 30_000;
/** The size cap on downloads no Manifest sizes yet: ROCm's largest tarballs are a few hundred MiB. */
export const DEFAULT_MAX_SIZE = 4 * 1024 * 1024 * 1024;

type Merged = { need: DistfileNeed; conflict?: string };

/**
 * One need per file name: several packages may share a distfile (the three
 * packages built from llvm-project-rocm), and their Manifests must agree on it.
 */
function mergeNeeds(needs: DistfileNeed[]): Merged[] {
  const byName = new Map<string, Merged>();
  for (const need of needs) {
    const seen = byName.get(need.name);
    if (!seen) {
      byName.set(need.name, { need: { ...need, urls: [...need.urls], neededBy: [...need.neededBy] } });
      continue;
    }
    const m = seen.need;
    if (need.expected) {
      if (!m.expected) m.expected = need.expected;
      else if (!sameEntry(m.expected, need.expected) && !seen.conflict) {
        const who = (d: DistfileNeed) => d.neededBy.map((n) => n.atom).join(', ') || 'one package';
        seen.conflict = `Manifests disagree about ${need.name}: ${who(m)} and ${who(need)} list different size or digests`;
      }
    }
    for (const url of need.urls) if (!m.urls.includes(url)) m.urls.push(url);
    for (const n of need.neededBy) {
      if (!m.neededBy.some((o) => o.atom === n.atom && o.ebuild === n.ebuild)) m.neededBy.push(n);
    }
  }
  return [...byName.values()];
}

function result(need: DistfileNeed, fields: Omit<DistfileResult, 'name' | 'neededBy' | 'attempts'> & { attempts?: DistfileAttempt[] }): DistfileResult {
  return { name: need.name, neededBy: need.neededBy, attempts: [], ...fields };
}

async function statFile(file: string): Promise<{ size: number; isFile: boolean } | undefined> {
  try {
    const st = await fs.stat(file);
    return { size: st.size, isFile: st.isFile() };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** What one run shares between its files: where they go, how they are checked, the network when it is first needed. */
interface Run {
  distdir: string;
  options: EnsureOptions;
  progress: DistfileProgress;
  offline: boolean;
  hasher: Hasher;
  /** Download slots (--jobs). */
  downloads: Limiter;
  /** The network side (dispatcher, mirrors, retry policy, host health), made on the first download. */
  network(): FetchContext;
}

const interrupted = (need: DistfileNeed, prior: DistfileAttempt[]): DistfileResult =>
  result(need, {
    status: 'failed',
    attempts: prior,
    error: `fetching ${need.name} was interrupted`,
    hint: 'Interrupted. Run again: finished files are kept and partial downloads resume.',
  });

/**
 * Checks a file already in the distdir. Returns its result when it is usable
 * (or cannot be), or the attempt describing why it was moved aside.
 */
async function checkPresent(run: Run, need: DistfileNeed, st: { size: number; isFile: boolean }, prior: DistfileAttempt[]): Promise<DistfileResult | DistfileAttempt> {
  const { distdir, hasher, progress } = run;
  const final = path.join(distdir, need.name);
  if (!st.isFile) {
    return result(need, {
      status: 'failed',
      attempts: prior,
      error: `${final} is not a regular file`,
      hint: `Remove or rename ${final}, then run again.`,
    });
  }
  let problem: string | undefined;
  if (need.expected && st.size !== need.expected.size) {
    problem = `size ${st.size}, Manifest ${need.expected.size}`;
  } else {
    progress.hashing(need.name, st.size);
    let hashed = await hasher.hash(final, { name: need.name, refresh: run.options.force ?? false });
    problem = need.expected ? mismatch(hashed.entry, need.expected) : undefined;
    if (problem && hashed.cached) {
      // Never condemn a file on the cache's word alone.
      hasher.forget(final);
      hashed = await hasher.hash(final, { name: need.name, useCache: false });
      problem = mismatch(hashed.entry, need.expected!);
    }
    if (!problem) return result(need, { status: 'present', path: final, entry: hashed.entry, attempts: prior });
  }
  const aside = quarantinePath(distdir, need.name);
  await fs.rename(final, aside);
  hasher.forget(final);
  const attempt = { url: final, outcome: `in the distdir but does not match the Manifest (${problem}); moved to ${aside}` };
  progress.attemptFailed(need.name, attempt);
  if (run.offline) {
    return result(need, {
      status: 'failed',
      attempts: [...prior, attempt],
      error: `${need.name} in the distdir does not match its Manifest entry (${problem})`,
      hint:
        `It was moved to ${aside}. Run without --offline to download a good copy, or, if upstream re-generated ` +
        `the archive, delete its DIST line from the Manifest and run again to record new digests.`,
    });
  }
  return attempt;
}

/** Downloads one file holding its lock in the distdir, which other runs (other hosts sharing it) respect. */
async function fetchLocked(run: Run, need: DistfileNeed, prior: DistfileAttempt[]): Promise<DistfileResult> {
  const { signal } = run.options;
  const lockFile = lockPath(run.distdir, need.name);
  const lock = await waitForLock(lockFile, {
    ...(signal ? { signal } : {}),
    onWait: (holder) => run.progress.waiting?.(need.name, holder),
  });
  if (!lock.acquired && signal?.aborted) return interrupted(need, prior);
  if (!lock.acquired) {
    return result(need, {
      status: 'failed',
      attempts: prior,
      error: `${need.name} is being downloaded by ${lock.holder}`,
      hint: `That run is on another host sharing this distdir: wait for it to finish and run again; if it is no longer running, delete ${lockFile}.`,
    });
  }
  try {
    // Another run may have installed it while we waited for a download slot or for its lock.
    const st = await statFile(path.join(run.distdir, need.name));
    if (st) {
      const checked = await checkPresent(run, need, st, prior);
      if ('status' in checked) return checked;
      prior = [...prior, checked];
    }
    return await fetchDistfile(need, run.network(), prior);
  } finally {
    await lock.release();
  }
}

/** One file: checked if present, else (unless offline) downloaded in a free slot. */
async function settle(run: Run, need: DistfileNeed, known: { size: number; isFile: boolean } | undefined): Promise<DistfileResult> {
  let prior: DistfileAttempt[] = [];
  if (known) {
    const checked = await checkPresent(run, need, known, prior);
    if ('status' in checked) return checked;
    prior = [checked];
  }
  if (run.offline) {
    return result(need, {
      status: 'missing',
      error: `${need.name} is not in ${run.distdir}`,
      hint: `Copy ${need.name} into ${run.distdir}, or run without --offline to download it.`,
    });
  }
  return run.downloads.run(() => (run.options.signal?.aborted ? Promise.resolve(interrupted(need, prior)) : fetchLocked(run, need, prior)));
}

/** settle, with what cannot even be attempted (a bad name, Manifests that disagree) and unexpected errors as the file's own result. */
async function settleSafely(run: Run, m: Merged, known: { size: number; isFile: boolean } | Error | undefined): Promise<DistfileResult> {
  const { need } = m;
  if (!isValidDistfileName(need.name)) {
    return result(need, { status: 'failed', error: `invalid distfile name "${need.name}"`, hint: 'Fix the SRC_URI that produces this name.' });
  }
  if (m.conflict) {
    return result(need, { status: 'failed', error: m.conflict, hint: 'Correct the wrong Manifest entry (or delete it to rehash), then run again.' });
  }
  try {
    if (known instanceof Error) throw known;
    return await settle(run, need, known);
  } catch (err) {
    const c = classifyError(err);
    return result(need, {
      status: 'failed',
      error: `${need.name}: ${c.outcome}`,
      hint: `Check ${run.distdir} (space, permissions), then run again.`,
    });
  }
}

/** The network side of a run, made when the first download needs it; `close` ends its connections. */
function lazyNetwork(distdir: string, options: EnsureOptions, progress: DistfileProgress, hasher: Hasher, jobs: number): { get(): FetchContext; close(): Promise<void> } {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  let dispatcher: Dispatcher | undefined;
  let context: FetchContext | undefined;
  return {
    get() {
      if (context) return context;
      dispatcher = createDispatcher({ connectionsPerOrigin: jobs, timeoutMs });
      const http = { dispatcher, timeoutMs, ...(options.signal ? { signal: options.signal } : {}) };
      const hosts = new HostHealth();
      context = {
        distdir,
        dispatcher,
        hosts,
        maxSize: options.maxSize ?? DEFAULT_MAX_SIZE,
        mirrors: new MirrorSet(options.mirrors ?? [], http, hosts),
        policy: {
          ...DEFAULT_RETRY_POLICY,
          retries: options.retries ?? DEFAULT_RETRY_POLICY.retries,
          baseDelayMs: options.retryDelayMs ?? DEFAULT_RETRY_POLICY.baseDelayMs,
        },
        timeoutMs,
        ...(options.signal ? { signal: options.signal } : {}),
        progress,
        hasher,
      };
      return context;
    },
    close: async () => {
      await dispatcher?.close().catch(() => undefined);
    },
  };
}

/** The distdir usable as a whole (one clear error beats a failure per file), created when downloads may need it. */
async function prepareDistdir(distdir: string, offline: boolean): Promise<void> {
  await checkDistdir(distdir, { offline });
  if (offline) return;
  try {
    await fs.mkdir(distdir, { recursive: true });
  } catch (err) {
    throw new UserError(`cannot create the distdir ${distdir}: ${(err as Error).message}`, ExitCode.invalidInput);
  }
}

/**
 * Makes every needed distfile present and verified in the distdir: files
 * already there are hashed (through the cache) and checked, missing ones are
 * downloaded (unless offline). One result per distinct file name, in the order
 * of first appearance. Never throws for a per-file problem: the result says it;
 * throws (a UserError, exit 2) only when the distdir is unusable as a whole.
 *
 * A file already in the distdir that contradicts its Manifest entry is moved
 * aside to `<name>._checksum_failure_.<random>` (kept, not deleted, so it can be
 * inspected), then fetched again unless offline.
 */
export async function ensureDistfiles(needs: DistfileNeed[], options: EnsureOptions): Promise<DistfileResult[]> {
  const distdir = path.resolve(options.distdir);
  const progress = options.progress ?? silentProgress;
  const offline = options.offline ?? false;
  const jobs = Math.max(1, Math.floor(options.jobs ?? DEFAULT_JOBS));
  const merged = mergeNeeds(needs);
  await prepareDistdir(distdir, offline);
  // A file that cannot even be stat'ed fails on its own, with the error.
  const initial = await Promise.all(merged.map((m) => (isValidDistfileName(m.need.name) ? statFile(path.join(distdir, m.need.name)).catch((err: Error) => err) : undefined)));
  progress.begin({
    files: merged.length,
    downloads: offline
      ? []
      : merged
          .filter((m, i) => initial[i] === undefined && !m.conflict && isValidDistfileName(m.need.name))
          .map((m) => ({ name: m.need.name, ...(m.need.expected ? { size: m.need.expected.size } : {}) })),
  });

  const hasher = await Hasher.open({ cacheFile: options.hashCacheFile });
  const network = lazyNetwork(distdir, options, progress, hasher, jobs);
  const run: Run = { distdir, options, progress, offline, hasher, downloads: new Limiter(jobs), network: network.get };
  try {
    return await Promise.all(
      merged.map(async (m, index) => {
        const r = await settleSafely(run, m, initial[index]);
        progress.finished(r);
        return r;
      }),
    );
  } finally {
    progress.end();
    await hasher.close().catch(() => undefined);
    await network.close();
  }
}
