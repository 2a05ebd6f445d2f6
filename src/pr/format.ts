import type { CheckReport } from './check.js';
import type { Level, PrResult } from './types.js';
import { printable } from '../util/printable.js';
import { describeSignatures } from './signature-check.js';

const COLORS: Record<Level, string> = { error: '31', warning: '33', style: '36', info: '32' };

/** "cat/pkg-1.0", "cat/pkg", "commit abc", "rocm.eclass": what a result is about. */
export function subject(r: PrResult, short: (sha: string) => string): string {
  if (r.category && r.package) return `${r.category}/${r.package}${r.version ? `-${r.version}` : ''}`;
  if (r.category) return r.category;
  // Results name the eclass's file ("rocm.eclass", see types.ts); a bare name gets the suffix.
  if (r.eclass) return r.eclass.endsWith('.eclass') ? r.eclass : `${r.eclass}.eclass`;
  return r.commit ? `commit ${short(r.commit)}` : 'repository';
}

/** One pkgcheck-style line: `cat/pkg-1.0: Keyword: message [level, commit, tool]`. */
export function resultLine(r: PrResult, short: (sha: string) => string, color = false): string {
  const level = color ? `\x1b[${COLORS[r.level]}m${r.level}\x1b[0m` : r.level;
  const line = r.line !== undefined && !/\bline \d/.test(r.message) ? ` (line ${r.line})` : '';
  const tags = [level, ...(r.commit ? [short(r.commit)] : []), ...(r.sources.includes('pkgcheck') ? [r.sources.length > 1 ? 'rocm-ebuild+pkgcheck' : 'pkgcheck'] : [])];
  return `${printable(subject(r, short))}: ${r.keyword}: ${printable(r.message)}${line} [${tags.join(', ')}]`;
}

export function countsLine(counts: Record<Level, number>): string {
  const plural = (n: number, w: string) => `${n} ${w}${n === 1 ? '' : 's'}`;
  return `${plural(counts.error, 'error')}, ${plural(counts.warning, 'warning')}, ${counts.style} style, ${counts.info} info`;
}

/** The whole report as text: results grouped under their commit, then the totals. */
export function formatCheckText(report: CheckReport, options: { color?: boolean } = {}): string {
  const short = (sha: string) => sha.slice(0, 12);
  const lines: string[] = [];
  const byCommit = new Map<string, PrResult[]>();
  for (const r of report.results) {
    const k = r.commit ?? '';
    byCommit.set(k, [...(byCommit.get(k) ?? []), r]);
  }
  for (const c of report.commits) {
    const rs = byCommit.get(c.sha);
    if (!rs) continue;
    lines.push(`${c.short} ${printable(c.summary)}`);
    for (const r of rs) lines.push(`  ${resultLine(r, short, options.color)}`);
  }
  const loose = byCommit.get('');
  if (loose) {
    lines.push('not tied to a commit of the range:');
    for (const r of loose) lines.push(`  ${resultLine(r, short, options.color)}`);
  }
  for (const n of report.notes) lines.push(`note: ${n}`);
  if (report.range.commits > 0) lines.push(describeSignatures(report.signatures));
  const pk = report.tools.pkgcheck;
  const by = pk.ran ? 'rocm-ebuild and pkgcheck' : 'rocm-ebuild';
  lines.push(
    `${report.range.label}: ${report.range.commits} commit${report.range.commits === 1 ? '' : 's'}, ${report.ebuildsLinted} ebuild${report.ebuildsLinted === 1 ? '' : 's'} linted (${by}): ${countsLine(report.counts)}`,
  );
  return `${lines.join('\n')}\n`;
}
