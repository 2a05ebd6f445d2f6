import { splitList, type CMakeArgument } from '../facts/cmake-lexer.js';

/**
 * Variable expansion for reading TheRock's CMake files, bounded: TheRock's
 * tree is whatever repository the user points the command at, and CMake
 * expansion is not linear in what it reads. A variable doubled forty times
 * (`set(A ${A}${A})`) is a terabyte; `${` nested fifty thousand deep overflowed
 * the recursive reader's stack. Here expansion is iterative (any depth) and
 * every character a reference substitutes is charged to a budget the caller
 * sizes from the bytes it read; when it runs out, ExpansionLimit stops the
 * reading of that file, which the caller reports. A reference to no known
 * variable stays as written and costs nothing: it only repeats the file.
 */

/** Thrown when expanding would exceed what the file being read may cost. */
export class ExpansionLimit extends Error {
  constructor(readonly limit: number) {
    super(`expanding its variables would produce more than ${limit} characters`);
    this.name = 'ExpansionLimit';
  }
}

/** Characters of substituted text a reading may produce. */
export class ExpansionBudget {
  private used = 0;
  constructor(readonly limit: number) {}

  charge(characters: number): void {
    this.used += characters;
    if (this.used > this.limit) throw new ExpansionLimit(this.limit);
  }
}

/** The variables visible where a command stands: a value, or undefined when the name is unknown. */
export interface VariableLookup {
  get(name: string): string | undefined;
}

/**
 * `${NAME}` references replaced from `vars`, innermost first as CMake does
 * (`${${prefix}_VERSION}`); unknown variables and `$ENV{…}` stay as written,
 * and so does a `${` that is never closed (with the references inside it
 * expanded), as the lexer's reader does. One pass over the text: each open
 * `${` is a frame on a stack, not a call.
 */
export function expandBounded(value: string, vars: VariableLookup, budget: ExpansionBudget): string {
  if (!value.includes('${')) return value;
  // frames[0] is the text outside any reference; each further frame the name being read after a `${`,
  // and whether an unknown reference inside it already makes it a name no variable has.
  const frames: { text: string; unknown: boolean }[] = [{ text: '', unknown: false }];
  let i = 0;
  while (i < value.length) {
    const c = value[i]!;
    if (c === '$' && value[i + 1] === '{') {
      frames.push({ text: '', unknown: false });
      i += 2;
      continue;
    }
    if (c === '}' && frames.length > 1) {
      const { text: name, unknown } = frames.pop()!;
      const into = frames[frames.length - 1]!;
      // No variable's name holds `${`: a name with an unknown reference inside is not looked up.
      const known = unknown ? undefined : vars.get(name);
      if (known === undefined) {
        // The reference as written (what it holds was paid for when it was substituted): nothing new is produced.
        into.text += `\${${name}}`;
        into.unknown = true;
      } else {
        budget.charge(known.length);
        into.text += known;
      }
      i++;
      continue;
    }
    // Plain text up to the next character that matters, in one piece.
    let j = i + 1;
    while (j < value.length && value[j] !== '$' && value[j] !== '}') j++;
    frames[frames.length - 1]!.text += value.slice(i, j);
    i = j;
  }
  // References never closed are literal text: their `${`, then what was read inside them.
  let out = frames[0]!.text;
  for (let f = 1; f < frames.length; f++) out += `\${${frames[f]!.text}`;
  return out;
}

/**
 * A command's arguments as CMake would pass them after expansion: unquoted
 * arguments split into list elements, quoted and bracket ones kept whole
 * (the lexer's evaluateArgs, through the bounded expansion).
 */
export function evaluateBounded(args: readonly CMakeArgument[], vars: VariableLookup, budget: ExpansionBudget): string[] {
  const out: string[] = [];
  for (const a of args) {
    if (a.kind === 'bracket') out.push(a.value);
    else if (a.kind === 'quoted') out.push(expandBounded(a.value, vars, budget).replace(/\\;/g, ';'));
    else out.push(...splitList(expandBounded(a.value, vars, budget)));
  }
  return out;
}

/**
 * A variable's values in one directory scope, as this reading keeps them:
 * every list element any `set` or `list(APPEND)` may give it (the branches
 * of an if() are not told apart), in first-seen order, without repeats. The
 * joined text is made once per change, not once per command that reads it.
 */
class Values {
  readonly elements: Set<string>;
  private joined: string | undefined;
  constructor(from?: Values) {
    this.elements = new Set(from?.elements);
  }
  add(list: string): number {
    let added = 0;
    for (const e of splitList(list)) {
      if (this.elements.has(e)) continue;
      this.elements.add(e);
      added += e.length + 1;
      this.joined = undefined;
    }
    return added;
  }
  text(): string {
    this.joined ??= [...this.elements].join(';');
    return this.joined;
  }
}

/**
 * A directory's variables: its own, over those of the directory above it
 * (add_subdirectory inherits the parent's), copied on first write so that a
 * subdirectory's scope costs what it changes, not what it inherits.
 */
export class Scope implements VariableLookup {
  private readonly own = new Map<string, Values>();
  constructor(private readonly parent?: Scope) {}

  private find(name: string): Values | undefined {
    return this.own.get(name) ?? this.parent?.find(name);
  }

  get(name: string): string | undefined {
    return this.find(name)?.text();
  }

  /** Adds a value's list elements to the name's; what it costs (an inherited list copied, new elements) is charged. */
  add(name: string, value: string, budget: ExpansionBudget): void {
    let mine = this.own.get(name);
    if (!mine) {
      const inherited = this.parent?.find(name);
      if (inherited) budget.charge(inherited.elements.size);
      mine = new Values(inherited);
      this.own.set(name, mine);
    }
    budget.charge(mine.add(value));
  }
}

/** A scope with fixed variables in front (the builtins of one file: where it is). */
export function withBuiltins(scope: VariableLookup, builtins: ReadonlyMap<string, string>): VariableLookup {
  return { get: (name) => builtins.get(name) ?? scope.get(name) };
}

/**
 * An argument of `set(NAME …)` or `list(APPEND NAME …)` without its list
 * elements that are exactly `${NAME}`: the growing-list idiom
 * `set(L ${L} more)`. Since a variable here is the union of every value it
 * may have, `${NAME}` as a whole element adds only what NAME already has:
 * dropping it reads the idiom in time linear in the file, where expanding it
 * would copy the whole list at every line.
 */
export function withoutSelfReference(arg: CMakeArgument, name: string): CMakeArgument | undefined {
  if (arg.kind === 'bracket' || !arg.value.includes(`\${${name}}`)) return arg;
  const self = `\${${name}}`;
  const kept: string[] = [];
  let cur = '';
  for (let i = 0; i < arg.value.length; i++) {
    if (arg.value[i] === '\\' && arg.value[i + 1] === ';') {
      cur += '\\;';
      i++;
    } else if (arg.value[i] === ';') {
      if (cur !== self) kept.push(cur);
      cur = '';
    } else cur += arg.value[i];
  }
  if (cur !== self) kept.push(cur);
  const value = kept.filter((k) => k !== '').join(';');
  return value === '' ? undefined : { ...arg, value };
}
