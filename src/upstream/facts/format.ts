import { formatBytes } from '../../distfiles/units.js';
import { markdownCode, markdownText, printable } from '../../util/printable.js';
import type { Change } from './changes.js';
import type { DiffReport } from './diff.js';

/**
 * Everything in these reports that comes from a repository nobody here wrote
 * (names, versions, paths, git's messages) passes through the terminal-safe
 * printer: an ESC in a CMake file must not reach the user's terminal.
 */
const p = (s: string | undefined): string => printable(s ?? '', { oneLine: true });

/** Text for people, in the order they act on it. `color` wraps status words in ANSI colours (off with NO_COLOR). */
export interface FormatOptions {
  color: boolean;
}

const paint = (on: boolean, code: number, text: string) => (on ? `\x1b[${code}m${text}\x1b[0m` : text);
const SIGN: Record<Change['kind'], string> = { added: '+', removed: '-', changed: '~' };

function describe(c: Change): string {
  if (c.kind === 'changed') return `${p(c.subject)}: ${p(c.from)} → ${p(c.to)}${c.detail && c.area === 'gpu-targets' ? ` (${p(c.detail)})` : ''}`;
  if (c.kind === 'added') return `${p(c.subject)}${c.to ? ` ${p(c.to)}` : ''}`;
  return `${p(c.subject)}${c.from ? ` (was ${p(c.from)})` : ''}`;
}

/** Where a change was found, as read (not yet made printable). */
const where = (c: Change) => (c.where ? (c.where.line > 0 ? `${c.where.file}:${c.where.line}` : c.where.file) : '');

export function formatDiffText(r: DiffReport, o: FormatOptions): string {
  const out: string[] = [];
  for (const c of r.components) {
    out.push(`${c.component} (${c.atom}) ${r.from} → ${r.to}`);
    if (c.note) {
      out.push(`  ${c.note}`);
      continue;
    }
    for (const s of c.sources) {
      if (s.status === 'pinned') continue;
      if (s.status === 'added') {
        out.push(`  ${p(s.to)}: a source new in ${r.to}; read it by hand`);
        continue;
      }
      if (s.status === 'removed') {
        out.push(`  ${p(s.from)}: no longer a source in ${r.to}`);
        continue;
      }
      if (s.status === 'error') {
        out.push(`  ${p(s.source)}: ${paint(o.color, 31, 'not compared')}: ${p(s.error)}`);
        continue;
      }
      // The same repository is named once; a move (into a monorepo) shows both.
      const sameRepo = s.from!.split(' ')[0] === s.to!.split(' ')[0];
      const head = `  ${p(s.from)} → ${p(sameRepo ? s.to!.split(' ').slice(1).join(' ') || s.to : s.to)}`;
      const fetched = (s.bytes?.from ?? 0) + (s.bytes?.to ?? 0);
      out.push(`${head} (${s.files!.from} → ${s.files!.to} build files${fetched > 0 ? `, ${formatBytes(fetched)} fetched` : ''})`);
      if (s.changes.length === 0) out.push('    nothing that matters to an ebuild changed');
      const width = Math.min(60, Math.max(0, ...s.changes.map((ch) => `${ch.area} ${SIGN[ch.kind]} ${describe(ch)}`.length)));
      for (const ch of s.changes) {
        const text = `${ch.area} ${SIGN[ch.kind]} ${describe(ch)}`;
        const loc = p(where(ch));
        out.push(`    ${loc ? `${text.padEnd(width)}  ${loc}` : text}`);
      }
      for (const x of s.problems) out.push(`    ${paint(o.color, 33, 'warning')}: ${p(x)}`);
    }
  }
  const compared = r.components.flatMap((c) => c.sources).filter((s) => s.status === 'compared').length;
  out.push(`${r.components.length} component${r.components.length === 1 ? '' : 's'}, ${compared} source${compared === 1 ? '' : 's'} compared${r.failures ? `, ${r.failures} could not be read` : ''}`);
  return `${out.join('\n')}\n`;
}

const md = (t: string) => markdownCode(t);
const mt = (t: string | undefined) => markdownText(t ?? '');

/** Markdown for a pull request's technical notes (`pr body` can include it). */
export function formatDiffMarkdown(r: DiffReport): string {
  const out: string[] = [`### Upstream build changes ${r.from} → ${r.to}`, ''];
  for (const c of r.components) {
    const sources = c.sources.filter((s) => s.status !== 'pinned');
    const changed = sources.some((s) => s.status !== 'compared' || s.changes.length > 0) || c.note;
    if (!changed) continue;
    out.push(`#### ${c.component} (${md(c.atom)})`, '');
    if (c.note) out.push(`- ${mt(c.note)}`);
    for (const s of sources) {
      if (s.status === 'error') out.push(`- ${md(s.source)}: not compared: ${mt(s.error)}`);
      else if (s.status === 'added') out.push(`- ${md(s.to!)}: new source, read by hand`);
      else if (s.status === 'removed') out.push(`- ${md(s.from!)}: no longer a source`);
      else {
        for (const ch of s.changes) {
          const change = ch.kind === 'changed' ? `${md(ch.from!)} → ${md(ch.to!)}${ch.detail && ch.area === 'gpu-targets' ? ` (${mt(ch.detail)})` : ''}` : ch.kind === 'added' ? `added${ch.to ? ` ${md(ch.to)}` : ''}` : `removed${ch.from ? ` (was ${md(ch.from)})` : ''}`;
          out.push(`- ${ch.area} ${md(ch.subject)}: ${change}${where(ch) ? ` — ${md(where(ch))}` : ''}${sources.length > 1 ? ` (${md(s.source)})` : ''}`);
        }
      }
    }
    out.push('');
  }
  const unchanged = r.components.filter((c) => !c.note && c.sources.every((s) => s.status === 'pinned' || (s.status === 'compared' && s.changes.length === 0)));
  if (unchanged.length > 0) out.push(`No build changes: ${unchanged.map((c) => c.component).join(', ')}.`, '');
  return out.join('\n');
}
