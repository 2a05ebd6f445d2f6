import { isDeepStrictEqual } from 'node:util';
import { isMap, isPair, isScalar, isSeq, parseDocument, type Node, type Pair, type YAMLMap, type YAMLSeq } from 'yaml';
import type { EvidenceSpec } from '../../manifest/types.js';
import { covers } from '../../model/evidence.js';
import { compareVersions } from '../../model/version.js';
import { flowList, lineEnd, lineStart, RecordError, scalar } from './component-file.js';

/**
 * A release's `peer` record of one peer, set to what a comparison computed:
 * every record of that peer (its source starts with the peer's label) that
 * covers the release loses it (a record left with no release goes), and the
 * computed record takes it — added to a record of the same source, facts,
 * note and findings when there is one (so a peer's records of many releases
 * stay one list), else appended. With no computed record the release is only
 * taken out. Edits are text splices: comments and other bytes stay as they
 * were, and the result is parsed again and compared with what was meant.
 */

export type PeerRecord = EvidenceSpec & { releases: [string]; kind: 'peer' };

const q = (v: string) => JSON.stringify(v);

function recordLines(r: PeerRecord, dash: string, indent: string): string {
  return (
    `${dash}releases: ${flowList(r.releases.map(q))}\n` +
    `${indent}kind: ${r.kind}\n` +
    `${indent}source: ${scalar(r.source)}\n` +
    (r.facts?.length ? `${indent}facts: ${flowList(r.facts)}\n` : '') +
    (r.note ? `${indent}note: ${scalar(r.note)}\n` : '') +
    (r.lacks?.length ? `${indent}lacks: ${flowList(r.lacks.map(q))}\n` : '')
  );
}

const sameContent = (a: EvidenceSpec, b: EvidenceSpec) =>
  a.kind === b.kind && a.source === b.source && isDeepStrictEqual(a.facts ?? [], b.facts ?? []) && (a.note ?? '') === (b.note ?? '') && isDeepStrictEqual(a.lacks ?? [], b.lacks ?? []);

const byVersion = (a: string, b: string) => {
  try {
    return compareVersions(a, b);
  } catch {
    return a < b ? -1 : a > b ? 1 : 0;
  }
};

interface Splice {
  at: number;
  end: number;
  text: string;
}

/**
 * The component file's text with `version`'s record of the peer whose
 * sources start with `family` ("::gentoo ", "Spack ") set to `record` (or
 * removed when it is undefined); undefined when the file already says that.
 */
export function setPeerRecord(text: string, version: string, family: string, record: PeerRecord | undefined, file = 'the component file'): string | undefined {
  const doc = parseDocument(text, { version: '1.2' });
  if (doc.errors.length > 0) throw new RecordError(`${file} does not parse: ${doc.errors[0]!.message.split('\n')[0]}`);
  if (!isMap(doc.contents)) throw new RecordError(`${file} is not a mapping`);
  const before = doc.toJS() as Record<string, unknown>;
  const existing = Array.isArray(before.evidence) ? (before.evidence as EvidenceSpec[]) : [];
  const mine = (r: EvidenceSpec) => r.kind === 'peer' && r.source.startsWith(family) && covers(r, version);

  // What the list should become.
  const target = record ? existing.findIndex((r) => sameContent(r, record) && Array.isArray(r.releases)) : -1;
  const wanted: (EvidenceSpec | undefined)[] = existing.map((r, i) => {
    if (i === target) return Array.isArray(r.releases) && r.releases.includes(version) ? r : { ...r, releases: [...(r.releases as string[]), version].sort(byVersion) };
    if (!mine(r)) return r;
    if (!Array.isArray(r.releases)) throw new RecordError(`${file}: a peer record covers ${version} with a range of releases (${r.source}); narrow it to a list by hand, then record again`);
    const rest = r.releases.filter((v) => v !== version);
    return rest.length > 0 ? { ...r, releases: rest } : undefined;
  });
  const appended = record && target < 0 ? record : undefined;
  const expected = [...wanted.filter((r): r is EvidenceSpec => r !== undefined), ...(appended ? [appended] : [])];
  if (isDeepStrictEqual(expected, existing)) return undefined;

  const evidence = doc.get('evidence', true) as Node | undefined;
  const splices: Splice[] = [];
  if (evidence === undefined || (isScalar(evidence) && evidence.value === null)) {
    if (evidence !== undefined) throw new RecordError(`\`evidence:\` in ${file} has no value; write the list or remove the key`);
    if (!appended) return undefined;
    const out = `${text}${text === '' || text.endsWith('\n') ? '' : '\n'}evidence:\n${recordLines(appended, '  - ', '    ')}`;
    return checked(out, before, expected, file);
  }
  if (!isSeq(evidence) || evidence.flow || evidence.items.length === 0) throw new RecordError(`\`evidence:\` in ${file} is not a block list of records; edit it by hand`);
  const items = (evidence as YAMLSeq<Node>).items;
  let prefix = '';
  items.forEach((node, i) => {
    const want = wanted[i];
    const had = existing[i]!;
    if (!isMap(node) || node.flow || !node.range) throw new RecordError(`an \`evidence:\` entry of ${file} is not a block mapping; edit it by hand`);
    const start = node.range[0];
    const dash = text.slice(lineStart(text, start), start);
    if (!/^ *- +$/.test(dash)) throw new RecordError(`the \`evidence:\` entries in ${file} are not written one "- key: value" block each; edit it by hand`);
    prefix = dash;
    if (want === had) return;
    if (want === undefined) {
      splices.push({ at: lineStart(text, start), end: lineEnd(text, Math.max(start, node.range[1] - 1)), text: '' });
      return;
    }
    const rel = (node as YAMLMap).items.find((p): p is Pair<Node, Node> => isPair(p) && isScalar(p.key) && p.key.value === 'releases');
    const list = rel?.value;
    if (!isSeq(list) || !list.flow || !list.range) throw new RecordError(`the releases of a peer record in ${file} are not a flow list ["…"]; edit it by hand`);
    splices.push({ at: list.range[0], end: list.range[1], text: flowList((want.releases as string[]).map(q)) });
  });
  if (appended) {
    const last = items.at(-1)!;
    const at = lineEnd(text, Math.max(last.range![0], last.range![1] - 1));
    splices.push({ at, end: at, text: `${text.slice(0, at).endsWith('\n') ? '' : '\n'}${recordLines(appended, prefix, ' '.repeat(prefix.length))}` });
  }
  let out = text;
  // From the end, so earlier offsets stay valid; an insertion at the end of a removed entry goes in first.
  for (const s of splices.sort((a, b) => b.at - a.at || (a.end === a.at ? -1 : 1))) out = out.slice(0, s.at) + s.text + out.slice(s.end);
  if (expected.length === 0) {
    // Nothing left: the key goes too, since an empty `evidence:` is not a list.
    const pair = (doc.contents as YAMLMap).items.find((p): p is Pair<Node, Node> => isPair(p) && isScalar(p.key) && p.key.value === 'evidence')!;
    const keyStart = lineStart(text, pair.key!.range![0]);
    const rest = out.slice(keyStart);
    const m = /^evidence:[^\n]*\n((?:[ \t]+[^\n]*\n|\n)*)/.exec(rest);
    if (m) out = out.slice(0, keyStart) + rest.slice(m[0].length);
  }
  return checked(out, before, expected, file);
}

function checked(out: string, before: Record<string, unknown>, expected: EvidenceSpec[], file: string): string {
  const after = parseDocument(out, { version: '1.2' });
  const meant: Record<string, unknown> = { ...before };
  if (expected.length > 0) meant.evidence = expected;
  else delete meant.evidence;
  if (after.errors.length > 0 || !isDeepStrictEqual(after.toJS(), meant)) {
    throw new RecordError(`setting the peer record would change more than \`evidence:\` in ${file} (an unusual layout); edit it by hand`);
  }
  return out;
}
