import { constants, promises as fs } from 'node:fs';
import path from 'node:path';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';
import { resolveDistdir } from './locations.js';

/** How the user named the distdir, for messages: the flag, the variable, or neither. */
export function distdirSource(flag?: string, env: NodeJS.ProcessEnv = process.env): string {
  if (flag) return '--distdir';
  if (env.DISTDIR) return '$DISTDIR';
  return 'the default distdir';
}

/**
 * Refuses, in one line and before any work, a distdir that can never hold a
 * file: a path that is (or runs through) something other than a directory,
 * or, when downloading, one that cannot be written or created. An absent
 * distdir is fine: downloads create it, and offline runs report every file
 * missing.
 */
export async function checkDistdir(dir: string, options: { offline?: boolean; source?: string } = {}): Promise<void> {
  const label = `${options.source ?? 'the distdir'} ${dir}`;
  let probe = path.resolve(dir);
  for (;;) {
    let st;
    try {
      st = await fs.stat(probe);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      const parent = path.dirname(probe);
      // ENOTDIR: a component further up is a file; the walk finds which.
      if ((code === 'ENOENT' || code === 'ENOTDIR') && parent !== probe) {
        probe = parent;
        continue;
      }
      throw new UserError(`${label}: ${(err as Error).message}`, ExitCode.invalidInput);
    }
    if (!st.isDirectory()) {
      throw new UserError(
        probe === path.resolve(dir) ? `${label} is a file, not a directory` : `${label} is not a directory: ${probe} is a file`,
        ExitCode.invalidInput,
      );
    }
    if (!options.offline) {
      try {
        await fs.access(probe, constants.W_OK | constants.X_OK);
      } catch {
        const what = probe === path.resolve(dir) ? 'is not writable' : `cannot be created: ${probe} is not writable`;
        throw new UserError(`${label} ${what}`, ExitCode.invalidInput);
      }
    }
    return;
  }
}

/** resolveDistdir, then checkDistdir with the source named as the user gave it. */
export async function resolveCheckedDistdir(
  flag: string | undefined,
  options: { offline?: boolean; env?: NodeJS.ProcessEnv } = {},
): Promise<string> {
  const env = options.env ?? process.env;
  const dir = resolveDistdir(flag, env);
  await checkDistdir(dir, { offline: options.offline ?? false, source: distdirSource(flag, env) });
  return dir;
}
