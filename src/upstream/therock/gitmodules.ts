import { printable as printableText } from '../../util/printable.js';

/**
 * TheRock's submodules as its `.gitmodules` and gitlinks state them, read as
 * data: nothing here clones, fetches or runs what a submodule entry says.
 * An entry that could make git run a command or touch files outside the tree
 * if someone did (a transport-helper URL such as `ext::`, a local `file:` URL,
 * an option-like `-…` value, a path with `..`, an `update = !cmd`) is
 * reported as a problem and left out of the composition.
 */

export interface Submodule {
  /** The entry's name (`[submodule "rocm-libraries"]`). */
  name: string;
  /** Where it sits in TheRock's tree. */
  path: string;
  url: string;
  /** owner/name when the URL is a GitHub repository. */
  github?: string;
  /** The branch `.gitmodules` says it follows (information only: the gitlink is what is pinned). */
  branch?: string;
  /** The commit TheRock pins (the gitlink at `path`). */
  commit: string;
}

export interface SubmodulesRead {
  submodules: Submodule[];
  /** Entries refused or inconsistent with the tree, one sentence each. */
  problems: string[];
}

/**
 * A printable rendering of untrusted text for a problem line: quoted, and
 * every character a terminal would act on escaped by the project's printer
 * (controls, line and paragraph separators, bidirectional overrides).
 */
export function shown(text: string, max = 120): string {
  return printableText(JSON.stringify(text.length > max ? `${text.slice(0, max)}…` : text), { oneLine: true });
}

/** Text as it is when it is plain printable ASCII, else quoted and escaped by shown(). */
export function printable(text: string): string {
  return /^[\x20-\x7e]*$/.test(text) ? text : shown(text);
}

/** What a path, name or URL of .gitmodules may not hold: controls, and what a terminal would act on (line separators, bidirectional controls). */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]/;

/**
 * Why a path inside TheRock's tree cannot be used, or undefined when it can:
 * relative, normalised (no empty, `.` or `..` components), no component
 * starting with `-` (an option to whatever reads it) and no `.git` component
 * (git refuses those in submodule paths too).
 */
export function treePathProblem(p: string): string | undefined {
  if (p === '') return 'is empty';
  if (p.length > 4096) return 'is longer than 4096 characters';
  if (CONTROL.test(p)) return 'holds control characters';
  if (p.includes('\\')) return 'holds a backslash';
  if (p.startsWith('/')) return 'is absolute';
  const parts = p.split('/');
  if (parts.some((c) => c === '..')) return 'escapes the tree (..)';
  if (parts.some((c) => c === '' || c === '.')) return 'is not normalised';
  if (parts.some((c) => c.startsWith('-'))) return 'has a component starting with "-"';
  if (parts.some((c) => c.toLowerCase() === '.git')) return 'has a .git component';
  return undefined;
}

const HOST = '[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?';
const URL_PATH = "[A-Za-z0-9._~!$&'()*+,;=:@%/-]*";
const SCHEME_URL = new RegExp(`^(?:https?|git|ssh)://(?:[A-Za-z0-9._~%-]+@)?${HOST}(?::[0-9]{1,5})?(/${URL_PATH})?$`);
const SCP_URL = new RegExp(`^[A-Za-z0-9._][A-Za-z0-9._-]*@${HOST}:(?!-)${URL_PATH}$`);

/**
 * Why a submodule URL is refused, or undefined when it is a plain network
 * URL (https, http, git, ssh, or scp-like user@host:path). Refused: transport
 * helpers (`ext::sh -c …` runs a command, `fd::`), `file:` and local paths
 * (they reach the machine's own repositories), relative URLs (they resolve
 * against wherever TheRock was cloned from), anything option-like.
 */
export function urlProblem(url: string): string | undefined {
  if (url === '') return 'is empty';
  if (url.startsWith('-')) return 'starts with "-" (an option to git)';
  if (url.includes('::')) return 'names a git transport helper (<transport>::<address>), which runs a program';
  if (/^file:/i.test(url)) return 'is a local file: URL';
  if (CONTROL.test(url) || /\s/.test(url)) return 'holds whitespace or control characters';
  if (url.startsWith('./') || url.startsWith('../')) return 'is relative to the superproject\'s remote';
  if (url.startsWith('/')) return 'is a local path';
  if (SCHEME_URL.test(url) || SCP_URL.test(url)) return undefined;
  return 'is not an https, http, git or ssh URL';
}

/** owner/name of a GitHub URL in any of its spellings, else undefined. */
export function githubRepo(url: string): string | undefined {
  const m =
    /^(?:https?|git):\/\/github\.com\/([A-Za-z0-9-]+)\/([A-Za-z0-9._-]+?)(?:\.git)?\/?$/.exec(url) ??
    /^ssh:\/\/git@github\.com\/([A-Za-z0-9-]+)\/([A-Za-z0-9._-]+?)(?:\.git)?\/?$/.exec(url) ??
    /^git@github\.com:([A-Za-z0-9-]+)\/([A-Za-z0-9._-]+?)(?:\.git)?\/?$/.exec(url);
  if (!m || m[2] === '.' || m[2] === '..') return undefined;
  return `${m[1]}/${m[2]}`;
}

/**
 * The submodules from `git config --list` of `.gitmodules` (key/value pairs
 * such as `submodule.half.url`) and the tree's gitlinks (path → commit).
 * Every entry must have a safe path with a gitlink and a safe URL; a gitlink
 * with no entry is reported too (nothing says where its commit lives).
 */
export function readSubmodules(entries: [string, string][], gitlinks: ReadonlyMap<string, string>): SubmodulesRead {
  const byName = new Map<string, Map<string, string[]>>();
  for (const [key, value] of entries) {
    // submodule.<name>.<variable>: the name may itself hold dots.
    const m = /^submodule\.([\s\S]+)\.([A-Za-z][A-Za-z0-9-]*)$/.exec(key);
    if (!m) continue;
    const vars = byName.get(m[1]!) ?? new Map<string, string[]>();
    const variable = m[2]!.toLowerCase();
    const values = vars.get(variable);
    if (values) values.push(value);
    else vars.set(variable, [value]);
    byName.set(m[1]!, vars);
  }
  const problems: string[] = [];
  const submodules: Submodule[] = [];
  const seenPaths = new Set<string>();
  for (const [name, vars] of byName) {
    const label = `.gitmodules: submodule ${shown(name)}`;
    const one = (v: string): string | undefined => {
      const values = vars.get(v) ?? [];
      if (values.length > 1) problems.push(`${label}: ${v} is given ${values.length} times; the entry is not used`);
      return values.length === 1 ? values[0] : undefined;
    };
    const p = one('path');
    const url = one('url');
    const update = vars.get('update') ?? [];
    const issues: string[] = [];
    if (CONTROL.test(name) || name.split(/[/\\]/).includes('..')) issues.push('its name holds control characters or ".."');
    if (p === undefined) issues.push('has no path');
    else {
      const why = treePathProblem(p);
      if (why) issues.push(`path ${shown(p)} ${why}`);
      else if (seenPaths.has(p)) issues.push(`path ${shown(p)} is used by another entry`);
      else if (!gitlinks.has(p)) issues.push(`path ${shown(p)} has no gitlink in the tree (nothing is pinned there)`);
    }
    if (url === undefined) issues.push('has no url');
    else {
      const why = urlProblem(url);
      if (why) issues.push(`url ${shown(url)} ${why}`);
    }
    if (update.some((u) => u.startsWith('!'))) issues.push('its update setting runs a command ("!…")');
    if (issues.length > 0) {
      problems.push(`${label}: ${issues.join('; ')}; refused`);
      continue;
    }
    seenPaths.add(p!);
    const branch = one('branch');
    const github = githubRepo(url!);
    submodules.push({
      name,
      path: p!,
      url: url!,
      ...(github ? { github } : {}),
      ...(branch !== undefined && !CONTROL.test(branch) ? { branch } : {}),
      commit: gitlinks.get(p!)!,
    });
  }
  const named = new Set([...byName.values()].map((v) => v.get('path')?.[0]));
  for (const [p] of gitlinks) {
    if (!named.has(p)) problems.push(`gitlink ${shown(p)} has no .gitmodules entry: its repository is unknown`);
  }
  submodules.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { submodules, problems };
}
