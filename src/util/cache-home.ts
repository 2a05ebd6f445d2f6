import os from 'node:os';
import path from 'node:path';

/**
 * $XDG_CACHE_HOME/rocm-ebuild, or ~/.cache/rocm-ebuild: where distfiles, the
 * hash cache, upstream clones and the cache of checked manifests live. A
 * relative XDG_CACHE_HOME is ignored, as the XDG Base Directory spec says.
 */
export function cacheHome(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CACHE_HOME;
  const base = xdg && path.isAbsolute(xdg) ? xdg : path.join(env.HOME || os.homedir(), '.cache');
  return path.join(base, 'rocm-ebuild');
}

/**
 * ROCM_EBUILD_NO_CACHE set to anything but "" or "0": every cache of checked
 * results (manifests, small loaders' results, compiled code) is neither read
 * nor written. The hash cache of distfiles is not affected.
 */
export function cacheDisabled(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = env.ROCM_EBUILD_NO_CACHE;
  return v !== undefined && v !== '' && v !== '0';
}
