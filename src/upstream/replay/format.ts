import { markdownCode, markdownText, printable } from '../../util/printable.js';
import type { PatchesReport } from './patches.js';
import type { ReplayStatus } from './replay.js';

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
const STATUS_COLOR: Record<ReplayStatus, number> = { applies: 32, differs: 33, upstream: 36, fails: 31, skipped: 90, unreadable: 35 };

const md = (t: string) => markdownCode(t);
const mt = (t: string | undefined) => markdownText(t ?? '');

export function formatPatchesText(r: PatchesReport, o: FormatOptions): string {
  const out: string[] = [];
  for (const c of r.components) {
    out.push(`${c.component} (${c.atom}) ${r.version}: ${p(c.tree)}${r.against ? `, compared with ${r.against}` : ''}`);
    // A tree that could not be read makes every line say so: once per tree is enough.
    const unreadable = new Map<string, number>();
    for (const l of c.lines) if (l.status === 'unreadable') unreadable.set(l.reason, (unreadable.get(l.reason) ?? 0) + 1);
    for (const [reason, n] of unreadable) {
      out.push(`  ${paint(o.color, STATUS_COLOR.unreadable, 'unreadable'.padEnd(10))} ${n} fix-up${n === 1 ? '' : 's'} not replayed: ${p(reason)}`);
    }
    for (const l of c.lines) {
      if (l.status === 'unreadable') continue;
      const status = paint(o.color, STATUS_COLOR[l.status], l.status.padEnd(10));
      out.push(`  ${status} ${p(l.file)}  ${l.fixup} ${p(l.what)}: ${p(l.reason)}${l.when ? ` (only with USE=${p(l.when)})` : ''}`);
    }
  }
  const k = r.counts;
  out.push(`${k.applies} apply, ${k.differs} apply differently, ${k.upstream} already upstream, ${k.fails} fail, ${k.skipped} not replayed${k.unreadable ? `, ${k.unreadable} unreadable` : ''}`);
  return `${out.join('\n')}\n`;
}

export function formatPatchesMarkdown(r: PatchesReport): string {
  const out: string[] = [`### Fix-ups replayed on ${r.version}${r.against ? ` (compared with ${r.against})` : ''}`, ''];
  for (const c of r.components) {
    const notable = c.lines.filter((l) => l.status !== 'applies');
    if (notable.length === 0) continue;
    out.push(`#### ${c.component} (${md(c.atom)})`, '');
    for (const l of notable) out.push(`- **${l.status}** ${md(l.file)} ${l.fixup} ${md(l.what)}: ${mt(l.reason)}`);
    out.push('');
  }
  const k = r.counts;
  out.push(`${k.applies} apply unchanged, ${k.differs} apply differently, ${k.upstream} already upstream, ${k.fails} fail, ${k.skipped} not replayed.`, '');
  return out.join('\n');
}
