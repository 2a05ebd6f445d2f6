import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { cacheHome } from '../util/cache-home.js';

export { cacheHome };

/** --distdir, else $DISTDIR (as Portage exports it), else a directory under the user's cache. */
export function resolveDistdir(flag?: string, env: NodeJS.ProcessEnv = process.env): string {
  if (flag) return path.resolve(flag);
  if (env.DISTDIR) return path.resolve(env.DISTDIR);
  return path.join(cacheHome(env), 'distfiles');
}

export function defaultHashCacheFile(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(cacheHome(env), 'hash-cache.json');
}

/** Names of the files a download leaves next to its target while it is not finished. */
export function partialPath(distdir: string, name: string): string {
  return path.join(distdir, `${name}.partial`);
}

export function partialMetaPath(distdir: string, name: string): string {
  return path.join(distdir, `${name}.partial.json`);
}

export function lockPath(distdir: string, name: string): string {
  return path.join(distdir, `${name}.partial.lock`);
}

/**
 * Where a distfile that fails verification is moved: kept for inspection rather
 * than deleted, under the name Portage uses for the same situation so Gentoo
 * users recognise it.
 */
export function quarantinePath(distdir: string, name: string): string {
  return path.join(distdir, `${name}._checksum_failure_.${randomBytes(4).toString('hex')}`);
}
