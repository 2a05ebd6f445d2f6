import { constants, promises as fs, writevSync } from 'node:fs';
import path from 'node:path';
import type { Dispatcher } from 'undici';
import { BodyAbandoned, get, headerValue, type HttpResponse } from './http.js';
import { classifyError, classifyResponse, parseRetryAfter, type FailureCause, type FailureKind } from './retry-policy.js';
import { formatBytes } from './units.js';

/** What a download may resume from: written next to `<name>.partial` when the server offers a validator. */
export interface PartialMeta {
  url: string;
  /** A strong ETag or a Last-Modified date, sent back as If-Range. */
  validator: string;
  /** The whole file's size as the server gave it, when it did: a resume that finds another size starts over. */
  size?: number;
}

export interface AttemptRequest {
  url: string;
  partial: string;
  metaFile: string;
  /** Bytes at the start of the partial file worth keeping; 0 starts over. */
  resumeFrom: number;
  /** Sent as If-Range so a server whose file changed answers with all of it instead of the rest. */
  validator?: string;
  /** From the Manifest: a body that would make the file any other size is refused before or while it arrives. */
  expectedSize?: number;
  /** Without `expectedSize`: a body larger than this is refused before or while it arrives (--max-size). */
  maxSize?: number;
  dispatcher: Dispatcher;
  timeoutMs: number;
  signal?: AbortSignal;
  onStart(info: { url: string; offset: number; size?: number }): void;
  /** Bytes received so far, resumed prefix included (up to a batch of them may not be written yet). */
  onBytes(bytes: number): void;
}

export type AttemptResult =
  | { ok: true; url: string; bytes: number; resumedFrom: number; lastModifiedMs?: number }
  | {
      ok: false;
      url: string;
      kind: FailureKind;
      outcome: string;
      /** The outcome without this failure's details, to group failures by. */
      summary: string;
      cause: FailureCause;
      retryAfterMs?: number;
      /** Bytes of the partial file now on disk. */
      bytes: number;
      /** The partial file is no use and must be discarded before the next attempt. */
      discardPartial?: boolean;
    };

const CONTENT_RANGE = /^bytes (\d+)-(\d+)\/(\d+|\*)$/;
const WRITE_BATCH = 1 << 20;

function via(res: HttpResponse): string {
  return res.redirected ? ` (redirected to ${res.url})` : '';
}

function strongValidator(res: HttpResponse): string | undefined {
  const etag = headerValue(res.headers, 'etag');
  if (etag && !etag.startsWith('W/')) return etag;
  return headerValue(res.headers, 'last-modified');
}

/**
 * Writes a small file by creating a new one and renaming it over the name:
 * the rename replaces whatever is there (a symlink too) instead of writing
 * through it.
 */
async function writeReplacing(file: string, text: string): Promise<void> {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${Math.random().toString(36).slice(2)}`);
  try {
    await fs.writeFile(tmp, text, { flag: 'wx' });
    await fs.rename(tmp, file);
  } finally {
    await fs.rm(tmp, { force: true });
  }
}

/** writev until every byte is on disk: a regular file may take less than asked. */
function writeAllSync(fd: number, chunks: Buffer[], position: number): void {
  let rest = chunks;
  let at = position;
  while (rest.length > 0) {
    let n = writevSync(fd, rest, at);
    at += n;
    const left: Buffer[] = [];
    for (const c of rest) {
      if (n >= c.length) {
        n -= c.length;
        continue;
      }
      left.push(n > 0 ? c.subarray(n) : c);
      n = 0;
    }
    rest = left;
  }
}

type Failed = Extract<AttemptResult, { ok: false }>;

/** A failed attempt from `req`, with `bytes` of the partial file on disk. */
function failure(
  req: AttemptRequest,
  bytes: number,
  c: { kind: FailureKind; outcome: string; summary?: string; cause: FailureCause },
  extra: Partial<Failed> = {},
): Failed {
  return { ok: false, url: req.url, kind: c.kind, outcome: c.outcome, summary: c.summary ?? c.outcome, cause: c.cause, bytes, ...extra };
}

/** Without a Manifest size, the --max-size cap a body may not pass; undefined when the Manifest sizes the file. */
function capOf(req: AttemptRequest): number | undefined {
  return req.expectedSize === undefined ? req.maxSize : undefined;
}

function capText(limit: number): string {
  return `the ${formatBytes(limit)} cap on downloads the Manifest does not size yet (--max-size)`;
}

/**
 * One GET of one URL into the partial file. Never throws for network or HTTP
 * trouble: the result says what happened and what it means for the next try.
 */
export async function downloadAttempt(req: AttemptRequest): Promise<AttemptResult> {
  const headers: { [name: string]: string } = {};
  if (req.resumeFrom > 0) {
    headers.range = `bytes=${req.resumeFrom}-`;
    if (req.validator) headers['if-range'] = req.validator;
  }
  let res: HttpResponse;
  try {
    res = await get(req.url, { dispatcher: req.dispatcher, timeoutMs: req.timeoutMs, headers, ...(req.signal ? { signal: req.signal } : {}) });
  } catch (err) {
    const c = classifyError(err);
    // A redirect target that failed is the host to blame, not the URL we started from.
    const at = (err as { requestUrl?: string })?.requestUrl;
    return failure(req, req.resumeFrom, c, at && at !== req.url ? { url: at } : {});
  }

  const extent = await bodyExtent(req, res);
  if ('ok' in extent) return extent;
  const { offset, total } = extent;

  const validator = strongValidator(res);
  if (validator) {
    const meta: PartialMeta = { url: req.url, validator, ...(total !== undefined ? { size: total } : {}) };
    await writeReplacing(req.metaFile, JSON.stringify(meta));
  } else {
    await fs.rm(req.metaFile, { force: true });
  }
  return receiveBody(req, res, offset, total);
}

/**
 * Where the body the server answered with goes in the file (after the kept prefix, or from the
 * start) and how long the whole file is, when it says; or why the answer is no use, its body dumped.
 */
async function bodyExtent(req: AttemptRequest, res: HttpResponse): Promise<{ offset: number; total: number | undefined } | Failed> {
  const fail = (c: Parameters<typeof failure>[2], extra: Partial<Failed> = {}) => failure(req, req.resumeFrom, c, extra);
  let offset: number;
  let total: number | undefined;
  if (res.statusCode === 206 && req.resumeFrom > 0) {
    const m = CONTENT_RANGE.exec(headerValue(res.headers, 'content-range') ?? '');
    if (!m || Number(m[1]) !== req.resumeFrom) {
      await res.body.dump();
      return fail(
        { kind: 'transient', outcome: `server sent a range other than the one asked for${via(res)}`, summary: 'wrong range', cause: 'content' },
        { bytes: 0, discardPartial: true },
      );
    }
    offset = req.resumeFrom;
    total = m[3] === '*' ? undefined : Number(m[3]);
  } else if (res.statusCode === 200) {
    // No range support, or If-Range said the file changed: the whole file follows.
    offset = 0;
    const length = headerValue(res.headers, 'content-length');
    total = length !== undefined && /^\d+$/.test(length) ? Number(length) : undefined;
  } else if (res.statusCode === 416 && req.resumeFrom > 0) {
    await res.body.dump();
    return fail(
      { kind: 'transient', outcome: `range not satisfiable: the partial file is not a prefix of this one${via(res)}`, summary: 'range not satisfiable', cause: 'content' },
      { bytes: 0, discardPartial: true },
    );
  } else {
    await res.body.dump().catch(() => undefined);
    const c = classifyResponse(res.statusCode, res.headers);
    const retryAfterMs = parseRetryAfter(headerValue(res.headers, 'retry-after'));
    return fail({ ...c, outcome: `${c.outcome}${via(res)}` }, { url: res.url, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) });
  }

  const capped = capOf(req);
  if (req.expectedSize !== undefined && total !== undefined && total !== req.expectedSize) {
    await res.body.dump().catch(() => undefined);
    return fail({
      kind: 'wrong-url',
      outcome: `serves ${total} bytes, the Manifest says ${req.expectedSize}${via(res)}`,
      summary: 'size differs from the Manifest',
      cause: 'content',
    });
  }
  if (capped !== undefined && total !== undefined && total > capped) {
    await res.body.dump().catch(() => undefined);
    return fail({ kind: 'wrong-url', outcome: `serves ${formatBytes(total)}, more than ${capText(capped)}${via(res)}`, summary: 'larger than --max-size', cause: 'too-large' });
  }
  return { offset, total };
}

/** Stream the body into the partial file from `offset`, refusing it once it outgrows the Manifest's size or the cap. */
async function receiveBody(req: AttemptRequest, res: HttpResponse, offset: number, total: number | undefined): Promise<AttemptResult> {
  const capped = capOf(req);
  let bytes = offset;
  req.onStart({ url: res.url, offset, ...(total !== undefined ? { size: total } : {}) });
  let handle: fs.FileHandle | undefined;
  // Chunks are gathered and written with one writev per MiB: one write per
  // 64 KiB socket read costs more CPU than the copy it saves. The writes are
  // synchronous because the body must never wait (see http.ts): while the disk
  // takes a batch, the socket is not read, which is the backpressure.
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const flush = () => {
    if (pendingBytes === 0 || !handle) return;
    const size = pendingBytes;
    writeAllSync(handle.fd, pending, bytes);
    pending = [];
    pendingBytes = 0;
    bytes += size;
  };
  let refused: { outcome: string; summary: string; cause: FailureCause } | undefined;
  try {
    // O_NOFOLLOW: a distdir is often shared (group portage), and a symlink planted
    // under the partial's name must not make us write into the file it points to.
    handle = await fs.open(
      req.partial,
      (offset > 0 ? constants.O_RDWR : constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC) | constants.O_NOFOLLOW,
      0o644,
    );
    if (offset > 0) await handle.truncate(offset);
    await res.body.pipeTo((chunk) => {
      const size = bytes + pendingBytes + chunk.length;
      if (req.expectedSize !== undefined && size > req.expectedSize) {
        refused = { outcome: `sends more than the ${req.expectedSize} bytes the Manifest says${via(res)}`, summary: 'size differs from the Manifest', cause: 'content' };
        throw new BodyAbandoned(refused.outcome);
      }
      if (capped !== undefined && size > capped) {
        refused = { outcome: `sends more than ${capText(capped)}${via(res)}`, summary: 'larger than --max-size', cause: 'too-large' };
        throw new BodyAbandoned(refused.outcome);
      }
      pending.push(chunk);
      pendingBytes += chunk.length;
      req.onBytes(bytes + pendingBytes);
      if (pendingBytes >= WRITE_BATCH) flush();
    });
    flush();
    if (total !== undefined && bytes !== total) {
      return failure(req, bytes, { kind: 'transient', outcome: `body ended after ${bytes} of ${total} bytes${via(res)}`, summary: 'body cut short', cause: 'network' });
    }
    // On disk before the rename makes it a distfile: a crash must not leave a short file under the final name.
    await handle.datasync();
  } catch (err) {
    res.body.destroy();
    if (refused !== undefined) return failure(req, bytes, { kind: 'wrong-url', ...refused }, { discardPartial: true });
    // What did arrive is worth keeping for the resume.
    try {
      flush();
    } catch {
      // The disk error that stopped us is the one to report.
    }
    const c = classifyError(err);
    return failure(req, bytes, { ...c, outcome: `${c.outcome} after ${bytes} bytes${via(res)}` }, { url: res.url });
  } finally {
    await handle?.close();
  }
  const lastModified = Date.parse(headerValue(res.headers, 'last-modified') ?? '');
  return {
    ok: true,
    url: res.url,
    bytes,
    resumedFrom: offset,
    ...(Number.isNaN(lastModified) ? {} : { lastModifiedMs: lastModified }),
  };
}
