import { constants } from 'node:fs';
import { access, lstat, readlink, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { notWritable } from '../git/lock.js';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';

/** The nearest of `p` and its parents that exists. */
async function nearestExisting(p: string): Promise<string> {
  for (let cur = p; ; cur = path.dirname(cur)) {
    try {
      await stat(cur);
      return cur;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if ((code !== 'ENOENT' && code !== 'ENOTDIR') || path.dirname(cur) === cur) throw err;
    }
  }
}

/**
 * Check `--overlay` before any work: an existing directory, or a path that
 * can be created as one (its nearest existing parent is a directory we may
 * write to, when `create`). One line, exit 2 for a path that cannot be an
 * overlay, exit 4 for one we may not create.
 */
export async function checkOverlayPath(dir: string, options: { create: boolean }): Promise<'exists' | 'missing'> {
  const at = await nearestExisting(dir);
  if (!(await stat(at)).isDirectory()) {
    throw new UserError(`--overlay ${dir}: ${at} is not a directory`, ExitCode.invalidInput);
  }
  if (at === dir) return 'exists';
  if (options.create) {
    try {
      await access(at, constants.W_OK);
    } catch (err) {
      const why = notWritable(err);
      if (!why) throw err;
      throw new UserError(`cannot create the overlay ${dir}: ${at} is not writable (${why})`, ExitCode.overlayRefused);
    }
  }
  return 'missing';
}

function inside(root: string, p: string): boolean {
  const rel = path.relative(root, p);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * The real path a write to `rel` inside the overlay would reach, refusing
 * (exit 4, naming the link) when a symlink on the way, or the file itself,
 * leads outside the overlay. Parts that do not exist yet are created inside.
 */
export async function realPathInside(root: string, rel: string): Promise<string> {
  const realRoot = await realpath(root);
  const parts = rel.split('/').filter(Boolean);
  let cur = realRoot;
  for (const [i, part] of parts.entries()) {
    const p = path.join(cur, part);
    let st;
    try {
      st = await lstat(p);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return path.join(p, ...parts.slice(i + 1));
      throw err;
    }
    if (st.isSymbolicLink()) {
      // A dangling link still says where a write would go.
      const target = await realpath(p).catch(async () => path.resolve(path.dirname(p), await readlink(p)));
      if (!inside(realRoot, target)) {
        throw new UserError(
          `${parts.slice(0, i + 1).join('/')}: a symlink to ${target}, outside the overlay; refusing to write through it`,
          ExitCode.overlayRefused,
        );
      }
      cur = target;
    } else {
      cur = p;
    }
  }
  return cur;
}

/**
 * The directories among those that writing `files` (paths relative to the
 * overlay) would change that this process may not write, with the reason.
 * A file's directory counts, or for a new file its nearest existing parent.
 */
export async function unwritableDirs(root: string, files: string[]): Promise<{ dir: string; why: string }[]> {
  const dirs = new Set<string>();
  for (const f of files) dirs.add(await nearestExisting(path.join(root, path.dirname(f))));
  const found: { dir: string; why: string }[] = [];
  for (const dir of dirs) {
    try {
      await access(dir, constants.W_OK);
    } catch (err) {
      const why = notWritable(err);
      if (!why) throw err;
      found.push({ dir: path.relative(root, dir) || '.', why });
    }
  }
  return found;
}

/**
 * Refuse (exit 4, naming the first) an overlay in which one of the paths a
 * command reads or writes — a committed package directory, eclass/, a file of
 * profiles/ — is a symlink leading outside the overlay: what it reads there is
 * not the overlay's, and what it would write there is not the user's to lose.
 */
export async function refuseLinksOut(root: string, rels: readonly string[]): Promise<void> {
  for (const rel of rels) {
    try {
      await realPathInside(root, rel);
    } catch (err) {
      if (!(err instanceof UserError)) throw err;
      throw new UserError(
        `${err.message.replace(/; refusing to write through it$/, '')}; rocm-ebuild reads and writes only inside the overlay\n` +
          'hint: replace the link with the directory it points to (git rm the link, copy the files in, commit), then run again',
        ExitCode.overlayRefused,
      );
    }
  }
}

/**
 * Refuse (exit 4, naming the first) an overlay in which a directory a
 * command writes into or removes from — a category, a package directory,
 * metadata/sets — is a symlink, wherever it points: git tracks a link as
 * one file, so the files a commit would add or remove behind it are not the
 * overlay's to git (a treeclean of a linked package would remove nothing).
 * Links leading outside are refuseLinksOut's (same exit, its message).
 */
export async function refuseLinkedDirs(root: string, dirs: readonly string[]): Promise<void> {
  const seen = new Set<string>();
  for (const dir of dirs) {
    const parts = dir.split('/').filter(Boolean);
    for (let i = 1; i <= parts.length; i++) {
      const rel = parts.slice(0, i).join('/');
      if (seen.has(rel)) continue;
      seen.add(rel);
      const st = await lstat(path.join(root, rel)).catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return undefined;
        throw err;
      });
      if (!st) break;
      if (!st.isSymbolicLink()) continue;
      throw new UserError(
        `${rel}: a symlink to ${await readlink(path.join(root, rel))}; git tracks a link as one file, so rocm-ebuild cannot add or remove the files behind it; nothing was written\n` +
          'hint: replace the link with the directory it points to (git rm the link, git mv the directory to its place, commit), then run again',
        ExitCode.overlayRefused,
      );
    }
  }
}
