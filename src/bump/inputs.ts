import { parseBugRef, type BugRef } from '../git/messages.js';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';
import type { BumpOptions } from './types.js';

/** --bug/--closes as trailer refs; a value that is neither a bug number nor an https URL is refused. */
export function bugRefs(o: BumpOptions): { bug: BugRef[]; closes: BugRef[] } {
  const parse = (flag: string, values: string[] = []) =>
    values.map((v) => {
      const r = parseBugRef(v);
      if ('error' in r) throw new UserError(`--${flag}: ${r.error}`, ExitCode.invalidInput);
      return r;
    });
  return { bug: parse('bug', o.bug), closes: parse('closes', o.closes) };
}
