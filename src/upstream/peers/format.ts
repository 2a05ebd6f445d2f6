import { printable } from '../../util/printable.js';
import type { ItemResult } from './compare.js';
import type { PeerComponentReport, PeerReport } from './peer-report.js';
import { FACT_KINDS, PEER_LABEL } from './recipe.js';

/** Peer recipes are someone else's text: everything from them goes through the terminal-safe printer. */
const p = (s: string | undefined): string => printable(s ?? '', { oneLine: true });
const paint = (on: boolean, code: number, text: string) => (on ? `\x1b[${code}m${text}\x1b[0m` : text);
const STATE_COLOR: Record<string, number> = { agrees: 32, argued: 36, differs: 31, unreadable: 35 };
const MAX_SIDE = 160;

function side(text: string | undefined): string {
  const t = p(text);
  return t.length > MAX_SIDE ? `${t.slice(0, MAX_SIDE - 1)}…` : t;
}

function itemLine(i: ItemResult, peerLabel: string, color: boolean): string {
  const mark = i.status === 'agrees' ? '=' : i.status === 'unreadable' ? '?' : i.argued ? '≈' : '≠';
  const where = i.peerWhere ? ` (${p(i.peerWhere.file)}:${i.peerWhere.line})` : '';
  const tag = i.finding ? paint(color, 31, i.argued ? ' [finding, argued]' : ' [finding]') : '';
  const argued = i.argued ? `\n               argued: ${side(i.argued)}` : '';
  const note = i.note && !i.finding ? ` — ${p(i.note)}` : '';
  return `      ${mark} ${p(i.item)}${tag}: ours ${side(i.ours ?? '—')}; ${peerLabel} ${side(i.peer ?? '—')}${where}${note}${argued}`;
}

function component(c: PeerComponentReport, o: { color: boolean; record: boolean; all: boolean }): string[] {
  const label = PEER_LABEL[c.peer];
  const out: string[] = [];
  if (c.missing) {
    out.push(`  ${label}: nothing compared (${p(c.missing)})`);
    return out;
  }
  out.push(`  ${label} ${p(c.file)}${c.nearest ? ` (the nearest lower version, ${p(c.peerVersion)})` : ''}`);
  for (const f of FACT_KINDS) {
    const state = c.facts?.[f];
    if (!state) continue;
    const items = (c.items ?? []).filter((i) => i.fact === f);
    const n = (s: string) => items.filter((i) => i.status === s).length;
    const argued = items.filter((i) => i.status === 'differs' && i.argued).length;
    const counts = [`${n('agrees')} agree`, `${n('differs')} differ${argued ? ` (${argued} argued)` : ''}`, ...(n('unreadable') ? [`${n('unreadable')} unreadable`] : [])].join(', ');
    out.push(`    ${f.padEnd(8)} ${paint(o.color, STATE_COLOR[state] ?? 0, state.padEnd(10))} ${counts}`);
    for (const i of items) if (o.all || i.status !== 'agrees') out.push(itemLine(i, label, o.color));
  }
  for (const u of c.unreadable ?? []) out.push(`    unreadable ${p(u.what)} (${p(u.where.file)}:${u.where.line}): ${p(u.why)}`);
  if (o.all) for (const a of c.aside ?? []) out.push(`    not compared ${p(a.what)} (${p(a.where.file)}:${a.where.line}): ${p(a.why)}`);
  else if ((c.aside ?? []).length > 0) out.push(`    not compared: ${c.aside!.length} fact${c.aside!.length === 1 ? '' : 's'} of builds we do not make (--all lists them)`);
  if (c.recordError) out.push(`    record   ${paint(o.color, 31, 'refused')}: ${p(c.recordError)}`);
  else if (c.record) {
    const what = `peer (${(c.record.facts ?? []).join(', ')})${c.record.lacks?.length ? `, lacks ${c.record.lacks.length}` : ''}`;
    const done = c.recorded === 'written' ? `written: ${what}` : c.recorded === 'unchanged' ? `already recorded: ${what}` : `would write ${what}${o.record ? '' : ' (with --record)'}`;
    out.push(`    record   ${done}`);
  } else if (c.withheld) out.push(`    record   ${paint(o.color, 31, 'withheld')}: ${p(c.withheld)}${c.recorded === 'removed' ? '; the release was taken out of the old records' : c.recorded === 'would-remove' ? '; --record takes the release out of the old records' : ''}`);
  else out.push(`    record   none: no fact agrees or is argued${c.recorded === 'removed' ? '; the release was taken out of the old records' : c.recorded === 'would-remove' ? '; --record takes the release out of the old records' : ''}`);
  return out;
}

export function formatPeerText(r: PeerReport, o: { color: boolean; record: boolean; all: boolean }): string {
  const out: string[] = [];
  const byComponent = new Map<string, PeerComponentReport[]>();
  for (const c of r.components) byComponent.set(c.component, [...(byComponent.get(c.component) ?? []), c]);
  for (const [name, list] of byComponent) {
    out.push(`${p(name)} (${p(list[0]!.atom)}) ${r.version}`);
    for (const c of list) out.push(...component(c, o));
  }
  const k = r.counts;
  const rec = r.records;
  out.push(
    `${byComponent.size} component${byComponent.size === 1 ? '' : 's'}, ${k.compared} recipe${k.compared === 1 ? '' : 's'} compared${k.missing ? ` (${k.missing} without one)` : ''}: ` +
      `${k.agrees} facts agree, ${k.differs + k.argued} differ (${k.argued} argued), ${k.unreadable} unreadable; ` +
      `${k.findings} peer fix-up${k.findings === 1 ? '' : 's'} we lack (${k.unargued} not argued); ` +
      (o.record
        ? `${rec.written} record${rec.written === 1 ? '' : 's'} written, ${rec.unchanged} already there${rec.removed ? `, ${rec.removed} release${rec.removed === 1 ? '' : 's'} taken out of old records` : ''}${rec.refused ? `, ${rec.refused} refused` : ''}`
        : `${rec.wouldWrite} record${rec.wouldWrite === 1 ? '' : 's'} to write with --record`),
  );
  return `${out.join('\n')}\n`;
}
