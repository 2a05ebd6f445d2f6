import type { Person } from './repo.js';

/** pkgcheck's limit on the summary after the "cat/pkg: " prefix. */
export const SUMMARY_MAX = 69;

/**
 * A commit message as Gentoo's tools expect: summary, blank line, optional
 * body wrapped at 80 columns, blank line, the GLEP 76 sign-off.
 */
export function commitMessage(summary: string, identity: Person, body?: string | (string | { verbatim: string[] })[]): string {
  const parts = [summary];
  const paragraphs = body === undefined ? [] : typeof body === 'string' ? [body] : body;
  for (const p of paragraphs) {
    if (typeof p === 'string') {
      if (p) parts.push('', wrap(p, 80));
    } else if (p.verbatim.length > 0) {
      // Lines shown as they are (changed ebuild lines), each cut to fit the 80 columns.
      parts.push('', p.verbatim.map((l) => (l.length > 80 ? `${l.slice(0, 79)}…` : l)).join('\n'));
    }
  }
  parts.push('', `Signed-off-by: ${identity.name} <${identity.email}>`);
  return `${parts.join('\n')}\n`;
}

/** "cat/pkg: add 6.2.2" / "cat/pkg: new package, add 6.2.2". */
export function addSummary(atom: string, version: string, newPackage: boolean): string {
  return `${atom}: ${newPackage ? 'new package, ' : ''}add ${version}`;
}

/**
 * One commit for a release move, pkgdev's way: "cat/pkg: add 6.3.3, drop
 * 6.2.2" (the drop part shortened to a count when the summary would not fit).
 */
export function moveSummary(atom: string, added: string, newPackage: boolean, dropped: string[]): string {
  const add = addSummary(atom, added, newPackage);
  if (dropped.length === 0) return add;
  const listed = `${add}, drop ${dropped.join(', ')}`;
  if (listed.length - atom.length - 2 <= SUMMARY_MAX) return listed;
  return `${add}, drop ${dropped.length} old versions`;
}

/** "cat/pkg: drop 6.1.1, 6.1.2", shortened to a count when it would not fit. */
export function dropSummary(atom: string, versions: string[]): string {
  const listed = `drop ${versions.join(', ')}`;
  return `${atom}: ${listed.length <= SUMMARY_MAX ? listed : `drop ${versions.length} old versions`}`;
}

function wrap(text: string, width: number): string {
  return text
    .split('\n')
    .map((para) => {
      const words = para.split(/\s+/).filter(Boolean);
      const lines: string[] = [];
      let line = '';
      for (const w of words) {
        if (line && line.length + 1 + w.length > width) {
          lines.push(line);
          line = w;
        } else line = line ? `${line} ${w}` : w;
      }
      lines.push(line);
      return lines.join('\n');
    })
    .join('\n');
}

/** A bug for `bump --bug/--closes`: a URL, optionally tied to one package ("cat/pkg=123456"). */
export interface BugRef {
  atom?: string;
  url: string;
}

/**
 * "123456" → https://bugs.gentoo.org/123456; an https URL is kept as it is;
 * "cat/pkg=…" ties either to that package's commits. Returns an error
 * message for anything else: the value becomes a commit trailer line, so
 * nothing but a plain URL may reach it.
 */
export function parseBugRef(text: string): BugRef | { error: string } {
  const m = /^([A-Za-z0-9+_][A-Za-z0-9+_.-]*\/[A-Za-z0-9+_][A-Za-z0-9+_-]*)=(.*)$/.exec(text);
  const atom = m?.[1];
  const value = (m ? m[2]! : text).trim();
  if (/^[1-9]\d{0,9}$/.test(value)) return { ...(atom ? { atom } : {}), url: `https://bugs.gentoo.org/${value}` };
  let url: URL | undefined;
  try {
    url = /^https:\/\/[^\s\x00-\x1f\x7f]+$/.test(value) ? new URL(value) : undefined;
  } catch {
    url = undefined;
  }
  if (!url || !url.hostname) return { error: `${JSON.stringify(text)} is neither a bug number nor an https URL (optionally as cat/pkg=N)` };
  return { ...(atom ? { atom } : {}), url: value };
}

const PACKAGE_PREFIX = /^((?:[A-Za-z0-9+_][A-Za-z0-9+_.]*-[A-Za-z0-9+_.-]*|virtual)\/[A-Za-z0-9+_][A-Za-z0-9+_-]*): /;

/**
 * Add Bug:/Closes: trailers (before the sign-off) to a bump's commits: a
 * package's own refs to its commits; unqualified Bug: to every package
 * commit; an unqualified Closes: to the last commit, the one that completes
 * the bump.
 */
export function applyBugTrailers(commits: { message: string }[], refs: { bug: BugRef[]; closes: BugRef[] }): void {
  commits.forEach((c, i) => {
    const atom = PACKAGE_PREFIX.exec(c.message)?.[1];
    const last = i === commits.length - 1;
    const lines = [
      ...refs.bug.filter((r) => (r.atom ? r.atom === atom : atom !== undefined)).map((r) => `Bug: ${r.url}`),
      ...refs.closes.filter((r) => (r.atom ? r.atom === atom : last)).map((r) => `Closes: ${r.url}`),
    ];
    if (lines.length === 0) return;
    const at = c.message.lastIndexOf('\nSigned-off-by: ');
    c.message = `${c.message.slice(0, at + 1)}${[...new Set(lines)].join('\n')}\n${c.message.slice(at + 1)}`;
  });
}
