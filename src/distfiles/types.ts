/** One thin-Manifest line: `DIST <name> <size> BLAKE2B <hex> SHA512 <hex>`. */
export interface ManifestEntry {
  name: string;
  size: number;
  blake2b: string;
  sha512: string;
}

export interface DistfileNeed {
  /** File name in DISTDIR. */
  name: string;
  /** Upstream URLs, tried in order after the mirrors. */
  urls: string[];
  /** Who needs it, e.g. { atom: 'sci-libs/rocBLAS', ebuild: 'rocBLAS-6.2.2.ebuild' }. */
  neededBy: { atom: string; ebuild: string }[];
  /** From an existing Manifest: the file must match it. */
  expected?: ManifestEntry;
}

export type DistfileStatus = 'present' | 'fetched' | 'missing' | 'failed';

/** Why a distfile failed, as the grouped report reads it (see FailureCause). */
export type DistfileFailureCause =
  | 'dns'
  | 'connect'
  | 'proxy'
  | 'tls'
  | 'network'
  | 'http'
  | 'content'
  | 'too-large'
  | 'local'
  | 'interrupted'
  | 'busy'
  | 'conflict'
  | 'missing'
  | 'other';

export interface DistfileAttempt {
  url: string;
  outcome: string;
  /** Set for failed attempts over the network. */
  cause?: DistfileFailureCause;
}

export interface DistfileResult {
  name: string;
  status: DistfileStatus;
  path?: string;
  /** Only when the file on disk was verified (hashed, and matched `expected` if given). */
  entry?: ManifestEntry;
  /** The URL the file came from (status 'fetched'), after redirects. */
  source?: string;
  attempts: DistfileAttempt[];
  /** What went wrong, and what to do about it. */
  error?: string;
  hint?: string;
  /**
   * The decisive failure, for grouping: its cause, the host it came from (when
   * a network failure) and its short description ("name not resolved", "HTTP 404").
   */
  failure?: { cause: DistfileFailureCause; host?: string; summary: string };
  neededBy: DistfileNeed['neededBy'];
}

/** Receives what the engine does, for display. Every method is optional work for the receiver: it must not throw. */
export interface DistfileProgress {
  /** The run starts: how many distfiles, and those known to need a download (size when a Manifest gives it). */
  begin(plan: { files: number; downloads: { name: string; size?: number }[] }): void;
  /** A download attempt starts; `offset` bytes are already on disk (resume), `size` is the whole file when known. */
  downloading(name: string, info: { url: string; offset: number; size?: number }): void;
  /** `bytes` of `name` have arrived, resumed prefix included. */
  received(name: string, bytes: number): void;
  /** An attempt failed; `retryInMs` is set when the same URL will be tried again after that delay. */
  attemptFailed(name: string, attempt: DistfileAttempt, retryInMs?: number): void;
  /** The file is being read for its digests. */
  hashing(name: string, size: number): void;
  /** Another run on this host holds the file's lock (it is downloading it): this run waits for it. */
  waiting?(name: string, holder: string): void;
  /** The distfile is settled. */
  finished(result: DistfileResult): void;
  /** The run is over: clear live output. */
  end(): void;
}

export interface EnsureOptions {
  distdir: string;
  /** Never touch the network: absent files are 'missing'. */
  offline?: boolean;
  /** Downloads running at once (default 4). */
  jobs?: number;
  /**
   * Mirror directory URLs tried before upstream. A mirror that serves a GLEP 75
   * `layout.conf` is read with that layout, any other as flat `URL/<name>`.
   */
  mirrors?: string[];
  /** Extra attempts of one URL after a transient failure (5xx, reset, timeout); default 3. */
  retries?: number;
  /** Per-attempt idle timeout: no headers or no body bytes for this long aborts the attempt (default 30 s). */
  timeoutMs?: number;
  /**
   * Largest download accepted for a file the Manifest does not size yet
   * (bytes, default 4 GiB): an endless or absurd body from a broken server or
   * a wrong URL must not fill the disk.
   */
  maxSize?: number;
  /** First retry delay; later ones double, with jitter (default 1000 ms). */
  retryDelayMs?: number;
  /** Default under the XDG cache directory; false disables the cache. */
  hashCacheFile?: string | false;
  /**
   * Trust nothing an earlier run recorded: every file already in the distdir
   * is read again, and the hash cache is refreshed from what was read instead
   * of consulted (`manifest --force`).
   */
  force?: boolean;
  progress?: DistfileProgress;
  signal?: AbortSignal;
}
