import { printable } from '../../util/printable.js';
import type { EvidenceReport, FactStatus } from './check.js';

/** Names, paths and git's messages come from repositories: printed through the terminal-safe printer. */
const p = (s: string | undefined): string => printable(s ?? '', { oneLine: true });
const paint = (on: boolean, code: number, text: string) => (on ? `\x1b[${code}m${text}\x1b[0m` : text);
const COLOR: Record<FactStatus, number> = { held: 32, failed: 31, unchecked: 90, unreadable: 35 };

export function formatEvidenceText(r: EvidenceReport, o: { color: boolean; record: boolean }): string {
  const out: string[] = [];
  for (const c of r.components) {
    out.push(`${c.component} (${c.atom}) ${r.version}${c.source ? `: ${p(c.source)}` : ''}`);
    if (c.note) {
      out.push(`  ${c.note}`);
      continue;
    }
    for (const f of c.facts) {
      out.push(`  ${f.fact.padEnd(8)} ${paint(o.color, COLOR[f.status], f.status.padEnd(10))} ${p(f.reason)}`);
      // Every detail that did not hold, so the data can be fixed in one pass (one is already the reason).
      const open = f.details.filter((x) => x.status !== 'held');
      if (open.length > 1) for (const d of open) out.push(`           ${paint(o.color, COLOR[d.status], d.status.padEnd(10))} ${p(d.subject)}: ${p(d.reason)}`);
    }
    if (c.recordError) {
      out.push(`  record   ${paint(o.color, COLOR.failed, 'refused')}: ${p(c.recordError)}`);
    } else if (c.record) {
      const what = `tag (${(c.record.facts ?? []).join(', ')})`;
      out.push(`  record   ${c.recorded === 'written' ? `written: ${what}` : c.recorded === 'unchanged' ? `already recorded: ${what}` : `would write ${what} (with --record)`}`);
    } else {
      out.push(`  record   none: ${c.noRecord ?? 'nothing to check'}`);
    }
  }
  const k = r.counts;
  const rec = r.records;
  out.push(
    `${r.components.length} component${r.components.length === 1 ? '' : 's'}: ${k.held} facts held, ${k.failed} failed, ${k.unchecked} not checked${k.unreadable ? `, ${k.unreadable} unreadable` : ''}; ` +
      (o.record ? `${rec.written} record${rec.written === 1 ? '' : 's'} written, ${rec.unchanged} already there${rec.refused ? `, ${rec.refused} refused` : ''}` : `${rec.wouldWrite} record${rec.wouldWrite === 1 ? '' : 's'} to write with --record`),
  );
  return `${out.join('\n')}\n`;
}
