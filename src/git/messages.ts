import type { Person } from './repo.js';

/** pkgcheck's limit on the summary after the "cat/pkg: " prefix. */
export const SUMMARY_MAX = 69;

/**
 * A commit message as Gentoo's tools expect: summary, blank line, optional
 * body wrapped at 80 columns, blank line, the GLEP 76 sign-off.
 */
export function commitMessage(summary: string, identity: Person, body?: string): string {
  const parts = [summary];
  if (body) parts.push('', wrap(body, 80));
  parts.push('', `Signed-off-by: ${identity.name} <${identity.email}>`);
  return `${parts.join('\n')}\n`;
}

/** "cat/pkg: add 6.2.2" / "cat/pkg: new package, add 6.2.2". */
export function addSummary(atom: string, version: string, newPackage: boolean): string {
  return `${atom}: ${newPackage ? 'new package, ' : ''}add ${version}`;
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
