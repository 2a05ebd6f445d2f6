import path from 'node:path';
import { isVersion } from '../model/version.js';
import { printable } from '../util/printable.js';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';

/**
 * An overlay's name as PMS allows it (profiles/repo_name): the characters
 * [A-Za-z0-9_-], not starting with a hyphen, and not ending in a hyphen
 * followed by something that reads as a version ("rocm-1.0" could be a
 * package's PN-PV). The name reaches sets.conf as an INI section and a
 * ${repository:…} reference, and `::name` in every atom of the sets: nothing
 * else may pass.
 */
export function repoNameProblem(name: string): string | undefined {
  if (name === '') return 'it is empty';
  if (!/^[A-Za-z0-9_][A-Za-z0-9_-]*$/.test(name)) return 'a repository name holds only A-Z a-z 0-9 _ - and does not start with a hyphen';
  const dash = [...name.matchAll(/-/g)].map((m) => m.index).find((i) => isVersion(name.slice(i + 1)));
  if (dash !== undefined) return `it ends in "${name.slice(dash)}", which reads as a version`;
  return undefined;
}

/**
 * Refuse (exit 4) a profiles/repo_name that is not one line holding a name
 * PMS allows, naming its file:line, before anything is written.
 */
export function checkRepoNameFile(dir: string, text: string): void {
  const file = path.join(dir, 'profiles/repo_name');
  const lines = text.replace(/\n$/, '').split('\n');
  const name = lines[0]!.trim();
  const problem = repoNameProblem(name);
  const fix = 'hint: write the overlay\'s name alone on the first line, e.g. "rocm" (the name Portage knows it by), and commit it';
  if (problem) {
    throw new UserError(`${file}:1: "${printable(lines[0]!)}" is not a repository name PMS allows: ${problem}; nothing was written\n${fix}`, ExitCode.overlayRefused);
  }
  const extra = lines.findIndex((l, i) => i > 0 && l.trim() !== '');
  if (extra > 0) {
    throw new UserError(`${file}:${extra + 1}: "${printable(lines[extra]!)}": profiles/repo_name holds one line, the name; nothing was written\n${fix}`, ExitCode.overlayRefused);
  }
}
