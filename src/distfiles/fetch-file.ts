import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Dispatcher } from 'undici';
import { downloadAttempt, type AttemptResult, type PartialMeta } from './download.js';
import { sameContentStamp, stampOf } from './file-stamp.js';
import { RACY_MARGIN_MS } from './hash-cache.js';
import type { Hasher } from './hash.js';
import { hostOf, type HostHealth } from './host-health.js';
import { partialMetaPath, partialPath } from './locations.js';
import type { Candidate, MirrorSet } from './mirror-set.js';
import { hostAdvice } from './report.js';
import { backoffDelay, classifyError, HOST_CAUSES, MAX_PROGRESS_RETRIES, type FailureKind, type RetryPolicy } from './retry-policy.js';
import { sleep } from './sleep.js';
import type { DistfileAttempt, DistfileFailureCause, DistfileNeed, DistfileProgress, DistfileResult, ManifestEntry } from './types.js';
import { formatBytes } from './units.js';
import { mismatch } from './verify.js';

export interface FetchContext {
  distdir: string;
  dispatcher: Dispatcher;
  mirrors: MirrorSet;
  policy: RetryPolicy;
  timeoutMs: number;
  signal?: AbortSignal;
  progress: DistfileProgress;
  hasher: Hasher;
  hosts: HostHealth;
  /** Cap on downloads without a Manifest entry, in bytes. */
  maxSize?: number;
}

/** Mirrors are a shortcut, not the source of truth: one retry there, then on to the next URL. */
const MIRROR_RETRIES = 1;

interface Failure {
  kind: FailureKind | 'mismatch';
  url: string;
  outcome: string;
  summary: string;
  cause: DistfileFailureCause;
}

async function readMeta(file: string): Promise<PartialMeta | undefined> {
  try {
    const meta = JSON.parse(await fs.readFile(file, 'utf8')) as Partial<PartialMeta>;
    if (typeof meta.url !== 'string' || typeof meta.validator !== 'string') return undefined;
    const size = Number.isSafeInteger(meta.size) && meta.size! >= 0 ? meta.size : undefined;
    return { url: meta.url, validator: meta.validator, ...(size !== undefined ? { size } : {}) };
  } catch {
    return undefined;
  }
}

async function sizeOf(file: string): Promise<number> {
  try {
    return (await fs.stat(file)).size;
  } catch {
    return 0;
  }
}

async function discard(...files: string[]): Promise<void> {
  await Promise.all(files.map((f) => fs.rm(f, { force: true })));
}

async function syncDirectory(dir: string): Promise<void> {
  let handle: fs.FileHandle | undefined;
  try {
    handle = await fs.open(dir, 'r');
    await handle.sync();
  } catch {
    // Some file systems cannot fsync a directory; the rename is still atomic there.
  } finally {
    await handle?.close();
  }
}

/**
 * How much of the partial file the next request may keep. Only a distfile the
 * Manifest describes is resumed: the Manifest's size and hashes check the
 * result, whatever the server did in between. A new distfile (no Manifest
 * entry yet) is fetched from its first byte every time: its Manifest line is
 * made from these bytes, and a server can change a file and keep its ETag and
 * length (a re-generated archive behind a cache), so no check short of the
 * whole file tells a resumed download from one stitched of two versions.
 */
async function resumePoint(
  partial: string,
  metaFile: string,
  url: string,
  expected: ManifestEntry | undefined,
): Promise<{ from: number; validator?: string }> {
  // Only a regular file of ours is resumed: a symlink (or anything else) under
  // the partial's name is removed, never followed (the distdir may be shared).
  const st = await fs.lstat(partial).catch(() => undefined);
  if (st && !st.isFile()) {
    await discard(partial, metaFile);
    return { from: 0 };
  }
  const size = st?.size ?? 0;
  if (size === 0) return { from: 0 };
  const meta = (await fs.lstat(metaFile).catch(() => undefined))?.isFile() ? await readMeta(metaFile) : undefined;
  const validator = meta && meta.url === url ? meta.validator : undefined;
  if (!expected || size > expected.size) {
    await discard(partial, metaFile);
    return { from: 0 };
  }
  return { from: size, ...(validator ? { validator } : {}) };
}

/** An mtime safely older than the racy window, so the hash cache can trust the entry it is about to get. */
function settledMtime(lastModifiedMs: number | undefined): Date {
  const latest = Date.now() - 2 * RACY_MARGIN_MS;
  return new Date(lastModifiedMs !== undefined && lastModifiedMs < latest ? lastModifiedMs : latest);
}

function hintFor(failures: Failure[], need: DistfileNeed, ctx: FetchContext, partialBytes: number): string {
  const ebuilds = [...new Set(need.neededBy.map((n) => n.ebuild))].join(', ') || 'the ebuild';
  const atoms = [...new Set(need.neededBy.map((n) => n.atom))];
  const last = failures[failures.length - 1];
  if (!last) {
    return `No URL is known for ${need.name}: check SRC_URI of ${ebuilds}, or copy the file into ${ctx.distdir} and run again.`;
  }
  if (ctx.signal?.aborted) return 'Interrupted. Run again: finished files are kept and partial downloads resume.';
  if (HOST_CAUSES.has(last.cause as never)) return hostAdvice(last.cause, hostOf(last.url), last.summary, ctx.distdir);
  if (last.cause === 'too-large' && ctx.maxSize !== undefined) {
    return (
      `${need.name} is larger than the ${formatBytes(ctx.maxSize)} accepted for a distfile no Manifest lists yet. If it really ` +
      `is that large, run again with a larger --max-size (in MiB); otherwise the URL serves something else: check SRC_URI of ${ebuilds}.`
    );
  }
  if (last.kind === 'fatal') {
    return `Fix the distdir (${ctx.distdir}): free space or permissions, or choose another with --distdir, then run again.`;
  }
  if (failures.some((f) => f.kind === 'mismatch')) {
    const manifests = atoms.map((a) => `${a}/Manifest`).join(', ');
    return (
      `What the server sends differs from the Manifest entry, so it was not kept. If upstream re-generated ` +
      `the archive, delete the DIST ${need.name} line from ${manifests} and run again to record the new ` +
      `digests after checking the change; otherwise the Manifest is right and another mirror may have the file.`
    );
  }
  if (failures.every((f) => f.kind === 'wrong-url' && /^HTTP 4/.test(f.outcome))) {
    return (
      `No URL has ${need.name}: check SRC_URI of ${ebuilds} (a renamed tag or release file?), ` +
      `or copy the file into ${ctx.distdir} and run again.`
    );
  }
  const kept = partialBytes > 0 ? ` ${partialBytes} bytes already downloaded are kept and will be resumed.` : '';
  return (
    `Network trouble. Run again: files already fetched are not fetched again.${kept} ` +
    `Check the connection or HTTP(S)_PROXY, raise --timeout, or add a --mirror.`
  );
}

/** One distfile's fetch as it goes: where its bytes are written, and what each URL did. */
interface FetchRun {
  need: DistfileNeed;
  ctx: FetchContext;
  final: string;
  partial: string;
  metaFile: string;
  attempts: DistfileAttempt[];
  failures: Failure[];
}

/** Record a failed attempt (and tell the progress display, with the wait before the next one). */
function noteFailure(
  run: FetchRun,
  url: string,
  what: { outcome: string; summary?: string; cause: DistfileFailureCause },
  kind: Failure['kind'],
  retryInMs?: number,
): void {
  const attempt: DistfileAttempt = { url, outcome: what.outcome, cause: what.cause };
  run.attempts.push(attempt);
  run.failures.push({ kind, url, outcome: what.outcome, summary: what.summary ?? what.outcome, cause: what.cause });
  run.ctx.progress.attemptFailed(run.need.name, attempt, retryInMs);
}

/**
 * Fetches one distfile into `<distdir>/<name>`: mirrors first, then upstream,
 * each URL retried with backoff on transient failures, partial data resumed.
 * The file appears under its final name only after it was hashed and, when a
 * Manifest entry exists, matched it.
 */
export async function fetchDistfile(
  need: DistfileNeed,
  ctx: FetchContext,
  priorAttempts: DistfileAttempt[] = [],
): Promise<DistfileResult> {
  const { name } = need;
  const run: FetchRun = {
    need,
    ctx,
    final: path.join(ctx.distdir, name),
    partial: partialPath(ctx.distdir, name),
    metaFile: partialMetaPath(ctx.distdir, name),
    attempts: [...priorAttempts],
    failures: [],
  };

  const { candidates: mirrorCandidates, skipped } = await ctx.mirrors.candidatesFor(name);
  run.attempts.push(...skipped);
  const seen = new Set<string>();
  const candidates: Candidate[] = [...mirrorCandidates, ...need.urls.map((url) => ({ url }))].filter((c) => {
    if (seen.has(c.url)) return false;
    seen.add(c.url);
    return true;
  });

  for (const candidate of candidates) {
    const down = ctx.hosts.check(candidate.url);
    if (down) {
      noteFailure(run, candidate.url, { outcome: `skipped: ${down.host} failed earlier in this run (${down.summary})`, summary: down.summary, cause: down.cause }, 'wrong-url');
      continue;
    }
    const fetched = await fetchFrom(run, candidate);
    if (fetched) return fetched;
    if (ctx.signal?.aborted) break;
    if (run.failures[run.failures.length - 1]?.kind === 'fatal') break;
  }
  return failedResult(run, candidates.length);
}

/**
 * Tries one URL until the file is installed (its result), or the URL is given up (undefined):
 * transient failures retried with backoff, a resumed download that does not match the
 * Manifest downloaded once more whole.
 */
async function fetchFrom(run: FetchRun, candidate: Candidate): Promise<DistfileResult | undefined> {
  const { need, ctx, partial, metaFile } = run;
  const { name, expected } = need;
  const isMirror = candidate.mirror !== undefined;
  const retries = isMirror ? Math.min(MIRROR_RETRIES, ctx.policy.retries) : ctx.policy.retries;
  let failuresInARow = 0;
  let progressRetries = 0;
  let restartedAfterMismatch = false;
  while (!ctx.signal?.aborted) {
    const resume = await resumePoint(partial, metaFile, candidate.url, expected);
    const result = await attemptFrom(run, candidate, resume);

    if (result.ok) {
      let installed: Awaited<ReturnType<typeof install>>;
      try {
        installed = await install(run, result);
      } catch (err) {
        const c = classifyError(err);
        noteFailure(run, candidate.url, { outcome: `could not verify or install the download: ${c.outcome}`, summary: c.summary, cause: 'local' }, 'fatal');
        return undefined;
      }
      if ('entry' in installed) {
        run.attempts.push({ url: result.url, outcome: result.resumedFrom > 0 ? `ok (resumed at ${result.resumedFrom} bytes)` : 'ok' });
        return { name, status: 'fetched', path: run.final, entry: installed.entry, source: result.url, attempts: run.attempts, neededBy: need.neededBy };
      }
      await discard(partial, metaFile);
      if (result.resumedFrom > 0 && !restartedAfterMismatch) {
        // The old prefix may be what was wrong: one clean download from this URL decides.
        restartedAfterMismatch = true;
        noteFailure(
          run,
          candidate.url,
          { outcome: `resumed download does not match the Manifest (${installed.problem}); downloading it whole`, summary: 'content does not match the Manifest', cause: 'content' },
          'mismatch',
          0,
        );
        continue;
      }
      noteFailure(run, result.url, { outcome: `content does not match the Manifest (${installed.problem})`, summary: 'content does not match the Manifest', cause: 'content' }, 'mismatch');
      return undefined;
    }

    if (result.discardPartial) await discard(partial, metaFile);
    if (result.kind === 'fatal') {
      noteFailure(run, result.url, result, 'fatal');
      return undefined;
    }
    if (result.kind === 'wrong-url') {
      noteFailure(run, result.url, result, 'wrong-url');
      ctx.hosts.report(result.url, result);
      return undefined;
    }
    // Bytes only count as progress if the next attempt can build on them.
    const resumable = expected !== undefined;
    const madeProgress = resumable && result.bytes > resume.from;
    if (madeProgress && progressRetries < MAX_PROGRESS_RETRIES) {
      progressRetries++;
      failuresInARow = 0;
    } else {
      failuresInARow++;
    }
    if (failuresInARow > retries) {
      noteFailure(run, result.url, result, 'transient');
      // Only a host that could not be talked to at all is skipped by the other files; an HTTP error is per file.
      ctx.hosts.report(result.url, result);
      return undefined;
    }
    const delay = backoffDelay(ctx.policy, Math.max(1, failuresInARow), result.retryAfterMs);
    noteFailure(run, result.url, result, 'transient', delay);
    await sleep(delay, ctx.signal);
  }
  return undefined;
}

/** One download from a URL, resumed where the partial file ends (or nothing to download, when it is whole). */
async function attemptFrom(run: FetchRun, candidate: Candidate, resume: Awaited<ReturnType<typeof resumePoint>>): Promise<AttemptResult> {
  const { ctx, need, partial, metaFile } = run;
  const { name, expected } = need;
  if (expected && resume.from === expected.size) {
    // An earlier run got every byte but stopped before installing it.
    return { ok: true, url: candidate.url, bytes: resume.from, resumedFrom: resume.from };
  }
  return downloadAttempt({
    url: candidate.url,
    partial,
    metaFile,
    resumeFrom: resume.from,
    ...(resume.validator ? { validator: resume.validator } : {}),
    ...(expected ? { expectedSize: expected.size } : {}),
    ...(ctx.maxSize !== undefined ? { maxSize: ctx.maxSize } : {}),
    dispatcher: ctx.dispatcher,
    timeoutMs: ctx.timeoutMs,
    ...(ctx.signal ? { signal: ctx.signal } : {}),
    onStart: (info) => ctx.progress.downloading(name, info),
    onBytes: (bytes) => ctx.progress.received(name, bytes),
  });
}

/** Hash the finished partial, check it, and move it into place. */
async function install(
  run: FetchRun,
  result: Extract<AttemptResult, { ok: true }>,
): Promise<{ entry: ManifestEntry } | { problem: string }> {
  const { ctx, partial, final, metaFile } = run;
  const { name, expected } = run.need;
  const mtime = settledMtime(result.lastModifiedMs);
  await fs.utimes(partial, mtime, mtime);
  ctx.progress.hashing(name, result.bytes);
  const hashed = await ctx.hasher.hash(partial, { name, useCache: false });
  const problem = expected ? mismatch(hashed.entry, expected) : undefined;
  if (problem) return { problem };
  await fs.rename(partial, final);
  await syncDirectory(ctx.distdir);
  await discard(metaFile);
  const after = stampOf(await fs.stat(final, { bigint: true }));
  // Our rename moved ctime and nothing else; anything more means someone else wrote the file meanwhile.
  if (hashed.readStartMs !== undefined && sameContentStamp(hashed.stamp, after)) {
    ctx.hasher.record(final, after, hashed.entry, hashed.readStartMs);
  }
  return { entry: hashed.entry };
}

/** The result of a fetch no URL served: the last outcome, the decisive failure, and what to do. */
async function failedResult(run: FetchRun, candidateCount: number): Promise<DistfileResult> {
  const { need, ctx, attempts, failures } = run;
  const { name } = need;
  const last = attempts[attempts.length - 1];
  const decisive = failures[failures.length - 1];
  const partialBytes = await sizeOf(run.partial);
  const error = ctx.signal?.aborted
    ? `fetching ${name} was interrupted`
    : !last
      ? `no URL to fetch ${name} from`
      : `could not fetch ${name}: ${last.outcome} (${last.url})${candidateCount > 1 ? `, after trying ${candidateCount} URLs` : ''}`;
  return {
    name,
    status: 'failed',
    attempts,
    error,
    hint: hintFor(failures, need, ctx, partialBytes),
    ...(ctx.signal?.aborted
      ? { failure: { cause: 'interrupted' as const, summary: 'interrupted' } }
      : decisive
        ? { failure: { cause: decisive.cause, host: hostOf(decisive.url), summary: decisive.summary } }
        : { failure: { cause: 'other' as const, summary: 'no URL to fetch from' } }),
    neededBy: need.neededBy,
  };
}
