/**
 * Distfiles: fetch what the ebuilds need into the distdir, hash it (BLAKE2B and
 * SHA512 in one read), and produce thin-Manifest text. The overlay module
 * writes the Manifests; nothing here touches an overlay.
 */
export type {
  DistfileAttempt,
  DistfileFailureCause,
  DistfileNeed,
  DistfileProgress,
  DistfileResult,
  DistfileStatus,
  EnsureOptions,
  ManifestEntry,
} from './types.js';
export { ensureDistfiles, DEFAULT_JOBS, DEFAULT_MAX_SIZE, DEFAULT_TIMEOUT_MS } from './ensure.js';
export { resolveDistdir, defaultHashCacheFile } from './locations.js';
export { checkDistdir, distdirSource, resolveCheckedDistdir } from './distdir.js';
export { mirrorsFromEnv, parseLayoutConf, layoutPath } from './mirrors.js';
export { hashFiles } from './hash.js';
export { prewarmHashWorkers } from './hash-pool.js';
export { parseManifest, formatManifest, updateManifest, ManifestSyntaxError, isValidDistfileName } from './manifest-file.js';
export { createProgress, silentProgress, type DistfileProgressOptions } from './progress.js';
export { describeProblem, describeProblems, allVerified, hostAdvice } from './report.js';
