import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const GITHUB = 'https://github.com';

/**
 * Where the git repository of a GitHub project ("ROCm/rocBLAS") is found.
 * `base` replaces https://github.com: a URL or directory the repository path
 * is appended to (`file:///srv/git` → `file:///srv/git/ROCm/rocBLAS`), or a
 * template naming the parts (`/work/.mirror/{owner}+{repo}/repo`), so bare
 * mirrors laid out any way can stand in for GitHub.
 */
export function repositoryUrl(github: string, base: string = GITHUB): string {
  const [owner, repo] = github.split('/') as [string, string];
  if (/\{(owner|repo)\}/.test(base)) return base.replace(/\{owner\}/g, owner).replace(/\{repo\}/g, repo);
  return `${base.replace(/\/+$/, '')}/${owner}/${repo}`;
}

/** A local path for file:// URLs and plain paths; undefined for network URLs (https, ssh, git). */
export function localPath(url: string): string | undefined {
  if (url.startsWith('file://')) return fileURLToPath(url);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url) || /^[^/]+@[^/]+:/.test(url)) return undefined;
  return path.resolve(url);
}

/** The git directory at a local path (a bare repository, or a work tree's .git), if there is one. */
export async function gitDirAt(dir: string): Promise<string | undefined> {
  for (const candidate of [dir, path.join(dir, '.git')]) {
    try {
      const [head, objects] = await Promise.all([stat(path.join(candidate, 'HEAD')), stat(path.join(candidate, 'objects'))]);
      if (head.isFile() && objects.isDirectory()) return candidate;
    } catch {
      // not this one
    }
  }
  return undefined;
}

/** Longest readable part of a cache name: with the suffixes added to it, it stays far below NAME_MAX (255 bytes). */
const CACHE_NAME_MAX = 120;

/**
 * A directory name for a URL in the cache: readable, and distinct for
 * distinct URLs. A long one (a project name in a release manifest can be any
 * length) keeps its readable start and gets a digest of the whole URL, so the
 * name stays a valid file name and still tells URLs apart.
 */
export function cacheName(url: string): string {
  const readable = url
    .replace(/^[a-z][a-z0-9+.-]*:\/\//i, '')
    .replace(/\.git$/, '')
    .replace(/[^A-Za-z0-9._-]+/g, '+')
    .replace(/^[.+]+/, '');
  if (readable.length <= CACHE_NAME_MAX && readable !== '') return readable;
  return `${readable.slice(0, CACHE_NAME_MAX - 17)}-${createHash('sha256').update(url).digest('hex').slice(0, 16)}`;
}
