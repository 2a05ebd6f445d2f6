import { SUMMARY_MAX } from '../git/messages.js';
import { ours } from './keywords.js';
import { ebuildOf, eclassOf, packageOf } from './overlay-paths.js';
import type { CommitInfo, PrResult } from './types.js';

/**
 * What pkgcheck's GitCommitMessageCheck says about one commit, plus the
 * one-package-per-commit and no-merge rules of a ROCm pull request. Our own
 * reading of Gentoo's rules (devmanual "git commit message format", GLEP 66
 * trailers, GLEP 76 sign-off), not pkgcheck's code.
 */

const TAG_RE = /^([a-zA-Z0-9_-]+): (.*)$/;
/** Categories whose new ebuilds need no version in the summary (pkgcheck's list). */
const NO_VERSION_CATEGORIES = new Set(['acct-group', 'acct-user', 'virtual']);
const BODY_WIDTH = 80;

export interface MessageContext {
  /** The object type a (possibly abbreviated) id names in the repository, or undefined. */
  objectType(id: string): Promise<string | undefined>;
}

export interface Trailer {
  tag: string;
  value: string;
  line: number;
}

/** A message split the way reviewers read it: summary, body lines, trailers. */
export interface ParsedMessage {
  summary: string;
  body: { text: string; line: number }[];
  trailers: Trailer[];
  problems: string[];
}

const blank = (l: string) => l.trim() === '';
const width = (l: string) => [...l].length;

export function parseMessage(message: string): ParsedMessage {
  const lines = message.replace(/\r\n/g, '\n').replace(/\s+$/, '').split('\n');
  const problems: string[] = [];
  const summary = lines[0] ?? '';
  const rest = lines.slice(1);
  const lineNo = (k: number) => k + 2;
  // The footer: the last paragraph when it starts with a trailer, or the
  // trailers closing the last paragraph; earlier paragraphs made only of
  // trailers belong to it too (with an "empty line in footer" problem).
  let footerStart = rest.length;
  if (rest.length > 0) {
    let start = rest.length - 1;
    while (start > 0 && !blank(rest[start - 1]!)) start--;
    if (TAG_RE.test(rest[start]!)) footerStart = start;
    else {
      let j = rest.length - 1;
      while (j >= start && TAG_RE.test(rest[j]!)) j--;
      if (j < rest.length - 1) {
        footerStart = j + 1;
        problems.push('missing empty line before tags');
      }
    }
    for (;;) {
      if (footerStart === rest.length || footerStart < 2 || !blank(rest[footerStart - 1]!)) break;
      let s = footerStart - 1;
      while (s > 0 && blank(rest[s - 1]!)) s--;
      let p = s - 1;
      if (p < 0) break;
      while (p > 0 && !blank(rest[p - 1]!)) p--;
      const para = rest.slice(p, s);
      if (para.length === 0 || !para.every((l) => TAG_RE.test(l))) break;
      for (let k = s; k < footerStart; k++) problems.push(`empty line ${lineNo(k)} in footer`);
      footerStart = p;
    }
  }
  if (rest.length > 0 && !blank(rest[0]!)) {
    problems.push(footerStart === 0 ? 'missing empty line before tags' : 'missing empty line before body');
  }
  const body: ParsedMessage['body'] = [];
  for (let k = 0; k < footerStart; k++) body.push({ text: rest[k]!, line: lineNo(k) });
  const trailers: Trailer[] = [];
  for (let k = footerStart; k < rest.length; k++) {
    const line = rest[k]!;
    if (blank(line)) continue;
    const m = TAG_RE.exec(line);
    if (m) trailers.push({ tag: m[1]!, value: m[2]!.trim(), line: lineNo(k) });
    else problems.push(`non-tag in footer, line ${lineNo(k)}: ${JSON.stringify(line)}`);
  }
  for (const b of body) {
    if (b.text.trim().split(/\s+/).length > 1 && width(b.text) > BODY_WIDTH) {
      problems.push(`line ${b.line} is ${width(b.text)} columns long (at most ${BODY_WIDTH}): ${JSON.stringify(b.text)}`);
    }
  }
  return { summary, body, trailers, problems: [...new Set(problems)] };
}

/** The packages (cat/pn) a commit touches, by category, and the other paths. */
export function touched(c: CommitInfo): { packages: Map<string, Set<string>>; others: string[] } {
  const packages = new Map<string, Set<string>>();
  const others: string[] = [];
  for (const change of c.changes) {
    for (const p of [change.path, change.oldPath]) {
      if (p === undefined) continue;
      const pkg = packageOf(p);
      if (!pkg) {
        if (!others.includes(p)) others.push(p);
        continue;
      }
      const set = packages.get(pkg.category) ?? new Set<string>();
      set.add(pkg.pn);
      packages.set(pkg.category, set);
    }
  }
  return { packages, others };
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Does one of the summary's prefix items ("profiles, metadata: …") name this non-package path? */
function prefixCovers(item: string, path: string): boolean {
  if (item === path || path.startsWith(`${item.replace(/\/\*$/, '')}/`)) return true;
  const eclass = eclassOf(path);
  return eclass !== undefined && (item === `${eclass}.eclass` || item === 'eclass');
}

/** The prefix a path would be named by in a summary. */
function prefixFor(path: string): string {
  const eclass = eclassOf(path);
  if (eclass) return `${eclass}.eclass`;
  const parts = path.split('/');
  return parts.length > 2 ? `${parts[0]}/${parts[1]}` : parts[0]!;
}

export async function checkMessage(c: CommitInfo, ctx: MessageContext): Promise<PrResult[]> {
  const out: PrResult[] = [];
  const at = { commit: c.sha };
  if (c.parents.length > 1) {
    out.push(ours('MergeCommit', `merge of ${c.parents.length} parents: ::gentoo keeps a linear history, rebase the branch onto its base (git rebase) so that every commit is checked on its own`, at));
  }
  if (!c.utf8) {
    out.push(ours('InvalidCommitMessage', 'the message is not valid UTF-8 and declares no encoding git can convert: rewrite it in UTF-8 (git commit --amend)', at));
  }
  if (c.message.trim() === '') {
    out.push(ours('InvalidCommitMessage', 'no commit message', at));
    return out;
  }
  const parsed = parseMessage(c.message);
  const summary = parsed.summary;
  const afterPrefix = summary.includes(': ') ? summary.slice(summary.indexOf(': ') + 2) : summary;
  if (width(afterPrefix) > SUMMARY_MAX) {
    out.push(ours('InvalidCommitMessage', `summary is too long: ${width(afterPrefix)} characters after the prefix, at most ${SUMMARY_MAX}`, at));
  }
  for (const p of parsed.problems) out.push(ours('InvalidCommitMessage', p, at));

  if (c.parents.length <= 1) out.push(...summaryPrefix(c, summary, at));

  const values = (tag: string) => parsed.trailers.filter((t) => t.tag === tag).map((t) => t.value);
  const signed = new Set(values('Signed-off-by'));
  const required = [...new Set([`${c.author.name} <${c.author.email}>`, `${c.committer.name} <${c.committer.email}>`])];
  const missing = required.filter((r) => !signed.has(r)).sort();
  if (missing.length > 0) {
    out.push(ours('MissingSignOff', `missing sign-off${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}`, at));
  }
  for (const v of values('Gentoo-Bug')) out.push(ours('InvalidCommitTag', `tag "Gentoo-Bug: ${v}": Gentoo-Bug is retired, use Bug: https://bugs.gentoo.org/N`, at));
  for (const tag of ['Bug', 'Closes']) {
    for (const v of values(tag)) {
      let url: URL | undefined;
      try {
        url = /^[a-z][a-z0-9+.-]*:/i.test(v) ? new URL(v) : undefined;
      } catch {
        url = undefined;
      }
      if (!url) out.push(ours('InvalidCommitTag', `tag "${tag}: ${v}": value isn't a URL (a bug number N is written https://bugs.gentoo.org/N)`, at));
      else if (url.protocol !== 'https:') out.push(ours('InvalidCommitTag', `tag "${tag}: ${v}": invalid protocol; should be https`, at));
    }
  }
  for (const tag of ['Fixes', 'Reverts']) {
    for (const v of values(tag)) {
      const m = /^([0-9a-fA-F]{4,64})( \(.+?\))?\.?$/.exec(v);
      if (!m) {
        out.push(ours('InvalidCommitTag', `tag "${tag}: ${v}": invalid format, expected a commit id`, at));
        continue;
      }
      const type = await ctx.objectType(m[1]!);
      if (type !== 'commit') out.push(ours('InvalidCommitTag', `tag "${tag}: ${v}": ${type ? `a ${type}, not a commit` : 'no such commit in this repository'}`, at));
    }
  }
  return out;
}

function summaryPrefix(c: CommitInfo, summary: string, at: { commit: string }): PrResult[] {
  const out: PrResult[] = [];
  const { packages, others } = touched(c);
  const count = [...packages.values()].reduce((n, s) => n + s.size, 0);
  if (count === 1) {
    const [category, pns] = [...packages][0]!;
    const key = `${category}/${[...pns][0]!}`;
    if (!new RegExp(`^${escapeRe(key)}: `).test(summary)) out.push(ours('BadCommitSummary', `summary missing '${key}' package prefix: ${JSON.stringify(summary)}`, at));
    const added = c.changes.filter((ch) => ch.status === 'A' || ch.status === 'R' || ch.status === 'C').map((ch) => ebuildOf(ch.path)).filter((e) => e !== undefined);
    if (added.length === 1 && !NO_VERSION_CATEGORIES.has(category)) {
      const e = added[0]!;
      if (e.revision === 0 && !new RegExp(`^.+\\bv?${escapeRe(e.version)}\\b`).test(summary)) {
        out.push(ours('BadCommitSummary', `summary missing package version '${e.version}': ${JSON.stringify(summary)}`, at));
      }
    }
  } else if (count > 1) {
    const names = [...packages].flatMap(([cat, pns]) => [...pns].map((pn) => `${cat}/${pn}`)).sort();
    const categoryForm = packages.size === 1 && new RegExp(`^${escapeRe([...packages.keys()][0]!)}(/\\*)?: `).test(summary);
    if (packages.size === 1 && !categoryForm) {
      const cat = [...packages.keys()][0]!;
      out.push(ours('BadCommitSummary', `summary missing '${cat}/*' (or '${cat}') category prefix: ${JSON.stringify(summary)}`, at));
    }
    if (!categoryForm) {
      out.push(ours('MultiplePackagesCommit', `${names.length} packages in one commit (${names.join(', ')}): split it, one commit per package`, at));
    }
  } else if (others.length > 0) {
    const colon = summary.indexOf(': ');
    const items = colon > 0 ? summary.slice(0, colon).split(/,\s*/) : [];
    const uncovered = [...new Set(others.filter((p) => !items.some((i) => prefixCovers(i, p))).map(prefixFor))];
    if (uncovered.length > 0) {
      out.push(ours('BadCommitSummary', `summary missing '${uncovered.join(', ')}' prefix for the files it changes: ${JSON.stringify(summary)}`, at));
    }
  }
  return out;
}
