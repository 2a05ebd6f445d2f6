import { execFile, lastLine } from '../trees/exec.js';

/** A `sed -i` invocation from phase code, its options understood as GNU sed reads them. */
export interface SedCall {
  scripts: string[];
  files: string[];
  extended: boolean;
  quiet: boolean;
  nullData: boolean;
  separate: boolean;
}

/**
 * GNU sed's command line: clustered short options (`-Ei`, `-i.bak`, `-ne`),
 * long options with `=` or a separate value, `--`, and the first operand as
 * the script when no -e is given. Returns undefined for a sed that does not
 * edit in place (it only filters a pipe), and an error for what the replay
 * cannot do (`-f script-file`).
 */
export function parseSedArgs(words: string[]): SedCall | { error: string } | undefined {
  const call: SedCall = { scripts: [], files: [], extended: false, quiet: false, nullData: false, separate: false };
  let inPlace = false;
  const operands: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (w === '--') {
      operands.push(...words.slice(i + 1));
      break;
    }
    if (w.startsWith('--')) {
      const [name, value] = w.includes('=') ? [w.slice(0, w.indexOf('=')), w.slice(w.indexOf('=') + 1)] : [w, undefined];
      switch (name) {
        case '--in-place':
          inPlace = true;
          break;
        case '--expression': {
          const v = value ?? words[++i];
          if (v === undefined) return { error: '--expression without a script' };
          call.scripts.push(v);
          break;
        }
        case '--file':
          return { error: 'sed -f reads its script from a file, which is not replayed' };
        case '--regexp-extended':
          call.extended = true;
          break;
        case '--quiet':
        case '--silent':
          call.quiet = true;
          break;
        case '--null-data':
          call.nullData = true;
          break;
        case '--separate':
          call.separate = true;
          break;
        case '--line-length':
          if (value === undefined) i++;
          break;
        default:
          break; // --posix, --debug, --follow-symlinks, --sandbox, --unbuffered: no effect on the result
      }
      continue;
    }
    if (w.startsWith('-') && w.length > 1) {
      for (let j = 1; j < w.length; j++) {
        const o = w[j]!;
        const rest = w.slice(j + 1);
        if (o === 'i') {
          inPlace = true; // the rest of the cluster is the backup suffix
          break;
        }
        if (o === 'e' || o === 'f' || o === 'l') {
          const v = rest !== '' ? rest : words[++i];
          if (v === undefined) return { error: `-${o} without a value` };
          if (o === 'e') call.scripts.push(v);
          if (o === 'f') return { error: 'sed -f reads its script from a file, which is not replayed' };
          break;
        }
        if (o === 'E' || o === 'r') call.extended = true;
        else if (o === 'n') call.quiet = true;
        else if (o === 'z') call.nullData = true;
        else if (o === 's') call.separate = true;
      }
      continue;
    }
    operands.push(w);
  }
  if (!inPlace) return undefined;
  if (call.scripts.length === 0) {
    const script = operands.shift();
    if (script === undefined) return { error: 'sed without a script' };
    call.scripts.push(script);
  }
  call.files = operands;
  return call;
}

/**
 * The text after the sed call, computed by GNU sed itself in sandbox mode
 * (no `e`, `r` or `w` commands: a script cannot run programs or touch files).
 */
export async function runSed(call: Omit<SedCall, 'files'>, input: Buffer): Promise<{ output: Buffer } | { error: string }> {
  const args = ['--sandbox'];
  if (call.extended) args.push('-E');
  if (call.quiet) args.push('-n');
  if (call.nullData) args.push('-z');
  for (const s of call.scripts) args.push('-e', s);
  const r = await execFile('sed', args, { input, env: { ...process.env, LC_ALL: 'C' } });
  if (r.code !== 0) return { error: `sed: ${lastLine(r.stderr)}` };
  return { output: r.stdout };
}

/** Lines that differ between two texts (as a multiset: a changed line counts once, a deleted one once). */
export function changedLines(before: string, after: string): number {
  if (before === after) return 0;
  const a = before.split('\n');
  const b = after.split('\n');
  if (a.length === b.length) return a.filter((l, i) => l !== b[i]).length;
  const counts = new Map<string, number>();
  for (const l of b) counts.set(l, (counts.get(l) ?? 0) + 1);
  let gone = 0;
  for (const l of a) {
    const n = counts.get(l) ?? 0;
    if (n > 0) counts.set(l, n - 1);
    else gone++;
  }
  const added = [...counts.values()].reduce((s, n) => s + n, 0);
  return Math.max(gone, added);
}

/** Does the script only delete lines (`/re/d`, `\|re|d`, `Nd`)? Then a script that changes nothing means the lines are gone. */
export function onlyDeletes(scripts: string[]): boolean {
  const deletion = /^(?:\s*(?:\\(.).*?\1|\/.*?\/|\d+(?:,\d+)?|\$)I?\s*d\s*(?:;|$))+$/;
  return scripts.every((s) => s.split('\n').every((line) => line.trim() === '' || deletion.test(line.trim())));
}
