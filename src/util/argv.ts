/**
 * Command lines of programs that reach other machines or hand out devices
 * (git push, gh, podman and docker, the git and rocm-ebuild calls written
 * into CI definitions). Built in one place, so that no value the tool read
 * or was given can become an option of the program: options are ours and
 * written `--name=value` (a value that starts with "-" stays the value), and
 * operands — remote names, refspecs, image references, URLs — come after
 * `--`, which ends the options of every program built here.
 */

/** An option of ours: a bare flag, or a flag and the value it takes. */
export type Option = string | readonly [flag: string, value: string];

const FLAG = /^--?[A-Za-z0-9][A-Za-z0-9-]*$/;

/**
 * `program options -- operands`. `program` is the executable and its
 * subcommands (["git", "push"], ["podman", "image", "exists"]). A flag that
 * is not an option name is a bug here, not the user's input: it throws.
 * `endOfOptions: false` is only for programs that take no `--` (none today
 * among those that get operands from outside).
 */
export function commandLine(program: readonly string[], options: readonly Option[], operands: readonly string[] = [], o: { endOfOptions?: boolean } = {}): string[] {
  const out = [...program];
  for (const opt of options) {
    const [flag, value] = typeof opt === 'string' ? [opt, undefined] : opt;
    if (!FLAG.test(flag)) throw new Error(`not an option name: ${JSON.stringify(flag)}`);
    out.push(value === undefined ? flag : `${flag}=${value}`);
  }
  if (operands.length > 0 && o.endOfOptions !== false) out.push('--');
  out.push(...operands);
  return out;
}

/** One word as a POSIX shell reads it back: left bare when it is plain, else single-quoted. */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** An argv as one shell line, for --dry-run, messages and generated CI steps. */
export function shellLine(argv: readonly string[]): string {
  return argv.map(shellWord).join(' ');
}
