/**
 * Bash word expansion for the words of a manifest's phase code, done here
 * rather than by bash: replaying a fix-up must never run the code it reads.
 * Quotes, backslashes and ${VAR}/$VAR from a fixed environment are expanded;
 * anything that would run code or depends on state the replay does not
 * have (command substitution, ${VAR:-…} operators, arithmetic, unknown
 * variables) makes the word unevaluable, with the reason.
 */

export type WordResult = { ok: true; value: string; glob: boolean } | { ok: false; reason: string };

/** `$(helper)` substitutions whose output is fixed for the replay. */
export type Helpers = Readonly<Record<string, string>>;

type Failure = Extract<WordResult, { ok: false }>;
const fail = (reason: string): Failure => ({ ok: false, reason });

/** The `$…` expansion at `text[i]`: its value and where the text goes on, or why it cannot be replayed. */
function expansion(text: string, i: number, env: ReadonlyMap<string, string>, helpers: Helpers): { value: string; next: number } | Failure {
  const next = text[i + 1];
  if (next === '{') {
    const end = text.indexOf('}', i + 2);
    if (end < 0) return fail('unterminated ${');
    const name = text.slice(i + 2, end);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return fail(`\${${name}} uses an expansion operator`);
    const v = env.get(name);
    if (v === undefined) return fail(`\${${name}} is not known to the replay`);
    return { value: v, next: end + 1 };
  }
  if (next === '(') {
    const end = text.indexOf(')', i + 2);
    const inner = end < 0 ? '' : text.slice(i + 2, end).trim();
    if (end >= 0 && !text.slice(i + 2, end).includes('(') && Object.prototype.hasOwnProperty.call(helpers, inner)) {
      return { value: helpers[inner]!, next: end + 1 };
    }
    return fail(`$(${inner || '…'}) runs a command`);
  }
  if (next !== undefined && /[A-Za-z_]/.test(next)) {
    const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i + 1))!;
    const v = env.get(m[0]);
    if (v === undefined) return fail(`$${m[0]} is not known to the replay`);
    return { value: v, next: i + 1 + m[0].length };
  }
  if (next === "'") return fail("$'…' quoting is not replayed");
  if (next !== undefined && /[0-9#?@*!$-]/.test(next)) return fail(`$${next} is a shell parameter`);
  return { value: '$', next: i + 1 };
}

export function evaluateWord(text: string, env: ReadonlyMap<string, string>, helpers: Helpers = {}): WordResult {
  let out = '';
  let glob = false;
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '\\') {
      if (text[i + 1] === '\n') i += 2;
      else {
        out += text[i + 1] ?? '';
        i += 2;
      }
    } else if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) return fail('unterminated single quote');
      out += text.slice(i + 1, end);
      i = end + 1;
    } else if (c === '"') {
      i++;
      let closed = false;
      while (i < text.length) {
        const d = text[i]!;
        if (d === '"') {
          closed = true;
          i++;
          break;
        }
        if (d === '\\') {
          const e = text[i + 1];
          if (e === '\n') i += 2;
          else if (e !== undefined && '$`"\\'.includes(e)) {
            out += e;
            i += 2;
          } else {
            out += d;
            i++;
          }
        } else if (d === '$') {
          const v = expansion(text, i, env, helpers);
          if (!('value' in v)) return v;
          out += v.value;
          i = v.next;
        } else if (d === '`') {
          return fail('`…` runs a command');
        } else {
          out += d;
          i++;
        }
      }
      if (!closed) return fail('unterminated double quote');
    } else if (c === '$') {
      const v = expansion(text, i, env, helpers);
      if (!('value' in v)) return v;
      out += v.value;
      i = v.next;
    } else if (c === '`') {
      return fail('`…` runs a command');
    } else if (c === '{' && /\{[^}]*,[^}]*\}/.test(text.slice(i))) {
      return fail('brace expansion is not replayed');
    } else {
      if (c === '*' || c === '?' || c === '[') glob = true;
      out += c;
      i++;
    }
  }
  return { ok: true, value: out, glob };
}

/** A shell glob (`*`, `?`, `[…]`) as a regular expression over paths; `*` does not cross "/". */
export function globToRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '[') {
      const end = glob.indexOf(']', i + 1);
      if (end < 0) re += '\\[';
      else {
        re += `[${glob.slice(i + 1, end).replace(/^!/, '^').replace(/\\/g, '\\\\')}]`;
        i = end;
      }
    } else re += c.replace(/[.+^${}()|\\/]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}
