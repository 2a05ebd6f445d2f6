import { existsSync } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { projectRoot } from '../paths.js';
import { UserError } from './errors.js';
import { ExitCode } from './exit-codes.js';

/**
 * Whether rocm-ebuild runs from a source checkout (a git work tree of its own, not under
 * node_modules): there, its eclass and desc file are the project's to regenerate. An installed
 * copy's files belong to the package manager, and a reinstall would undo an edit.
 */
export function runsFromCheckout(root = projectRoot): boolean {
  return existsSync(path.join(root, '.git')) && !root.split(path.sep).includes('node_modules');
}

/**
 * An output directory named by the user: one that exists, or one to create in a directory that
 * exists. Nothing else is created: a typo deep in a path is refused rather than built, and the
 * directories are made one level at a time (Node's recursive mkdir never returns under /proc).
 */
export async function outputDirectory(dir: string, flag = '--output'): Promise<{ dir: string; exists: boolean }> {
  const abs = path.resolve(dir);
  const here = await stat(abs).catch((e: NodeJS.ErrnoException) => e);
  if (!(here instanceof Error)) {
    if (!here.isDirectory()) throw new UserError(`${flag} ${dir}: not a directory`, ExitCode.invalidInput);
    return { dir: abs, exists: true };
  }
  if (here.code !== 'ENOENT') throw new UserError(`${flag} ${dir}: ${here.message}`, ExitCode.invalidInput);
  const parent = await stat(path.dirname(abs)).catch(() => undefined);
  if (!parent?.isDirectory()) {
    throw new UserError(`${flag} ${dir}: ${path.dirname(abs)} is not an existing directory; create it first, or name a directory in one`, ExitCode.invalidInput);
  }
  return { dir: abs, exists: false };
}

/** `rel` under `base`, one directory at a time, each an error of the user's when it cannot be made. */
export async function makeDirectories(base: string, rel: string): Promise<void> {
  let at = base;
  for (const part of ['', ...rel.split(path.sep).filter(Boolean)]) {
    at = part ? path.join(at, part) : at;
    try {
      await mkdir(at);
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      if (err.code === 'EEXIST' && (await stat(at)).isDirectory()) continue;
      throw new UserError(`cannot create ${at}: ${err.code === 'EEXIST' ? 'a file is in the way' : err.message}`, ExitCode.invalidInput);
    }
  }
}
