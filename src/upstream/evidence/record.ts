import { isDeepStrictEqual } from 'node:util';
import { isMap, isScalar, isSeq, parseDocument, type Node, type YAMLSeq } from 'yaml';
import type { EvidenceSpec } from '../../manifest/types.js';
import { covers } from '../../model/evidence.js';
import { FACT_ORDER, flowList, lineEnd, lineStart, RecordError, rewriteComponentFile, scalar } from '../records/component-file.js';

/**
 * Writing a `tag` evidence record into a component's YAML file, through the
 * record-writing machinery of records/component-file.ts (text splices that
 * keep every comment, a lock, an atomic rename).
 */

export { checkRecordTarget, RecordError } from '../records/component-file.js';

/** A record for one release, as this command writes them. */
export type TagRecord = EvidenceSpec & { releases: [string]; kind: 'tag' };

function recordLines(r: TagRecord, dash: string, indent: string): string {
  return (
    `${dash}releases: ${flowList(r.releases.map((v) => JSON.stringify(v)))}\n` +
    `${indent}kind: ${r.kind}\n` +
    `${indent}source: ${scalar(r.source)}\n` +
    (r.facts?.length ? `${indent}facts: ${flowList(r.facts)}\n` : '')
  );
}

/**
 * The component file's text with the record in it, or undefined when a
 * record of the same kind and source already covers the release with at
 * least these facts (so a second run changes nothing). A one-release record
 * of the same source with fewer facts has its flow `facts:` list extended;
 * otherwise the record is added after the last one of `evidence:`, or as a
 * new `evidence:` at the end of the file.
 */
export function addEvidenceRecord(text: string, record: TagRecord, file = 'the component file'): string | undefined {
  const doc = parseDocument(text, { version: '1.2' });
  if (doc.errors.length > 0) throw new RecordError(`${file} does not parse: ${doc.errors[0]!.message.split('\n')[0]}`);
  if (!isMap(doc.contents)) throw new RecordError(`${file} is not a mapping`);
  const before = doc.toJS() as Record<string, unknown>;
  const existing = Array.isArray(before.evidence) ? (before.evidence as EvidenceSpec[]) : [];
  const version = record.releases[0];
  const want = record.facts ?? [];
  const evidence = doc.get('evidence', true) as Node | undefined;

  let out: string | undefined;
  let expected: EvidenceSpec[] | undefined;
  for (const [i, r] of existing.entries()) {
    if (r.kind !== record.kind || r.source !== record.source || !covers(r, version)) continue;
    const have = r.facts ?? [];
    if (want.every((f) => have.includes(f))) return undefined;
    const facts = (isSeq(evidence) ? evidence.items[i] : undefined) as Node | undefined;
    const factsNode = isMap(facts) ? (facts.get('facts', true) as Node | undefined) : undefined;
    if (Array.isArray(r.releases) && r.releases.length === 1 && isSeq(factsNode) && factsNode.flow && factsNode.range) {
      const merged = FACT_ORDER.filter((f) => have.includes(f) || want.includes(f));
      out = text.slice(0, factsNode.range[0]) + flowList(merged) + text.slice(factsNode.range[1]);
      expected = existing.map((e, k) => (k === i ? { ...e, facts: merged } : e));
      break;
    }
  }

  if (out === undefined) {
    expected = [...existing, record];
    if (evidence === undefined || (isScalar(evidence) && evidence.value === null)) {
      if (evidence !== undefined) throw new RecordError(`\`evidence:\` in ${file} has no value; write the list or remove the key`);
      out = `${text}${text === '' || text.endsWith('\n') ? '' : '\n'}evidence:\n${recordLines(record, '  - ', '    ')}`;
    } else {
      if (!isSeq(evidence) || evidence.flow || evidence.items.length === 0) {
        throw new RecordError(`\`evidence:\` in ${file} is not a block list of records; add the record by hand`);
      }
      const last = (evidence as YAMLSeq<Node>).items.at(-1)!;
      if (!isMap(last) || last.flow || !last.range) throw new RecordError(`the last \`evidence:\` entry in ${file} is not a block mapping; add the record by hand`);
      const start = last.range[0];
      const prefix = text.slice(lineStart(text, start), start);
      if (!/^ *- +$/.test(prefix)) throw new RecordError(`the \`evidence:\` entries in ${file} are not written one "- key: value" block each; add the record by hand`);
      const at = lineEnd(text, Math.max(start, last.range[1] - 1));
      const tail = text.slice(0, at);
      out = `${tail}${tail.endsWith('\n') ? '' : '\n'}${recordLines(record, prefix, ' '.repeat(prefix.length))}${text.slice(at)}`;
    }
  }

  const after = parseDocument(out, { version: '1.2' });
  const meant = { ...before, evidence: expected };
  if (after.errors.length > 0 || !isDeepStrictEqual(after.toJS(), meant)) {
    throw new RecordError(`adding the record would change more than \`evidence:\` in ${file} (an unusual layout); add it by hand`);
  }
  return out;
}

/** Adds the record to the component file: 'unchanged' when it is already there. */
export function recordEvidence(file: string, manifestDir: string, record: TagRecord, onWait?: (holder: string) => void): Promise<'written' | 'unchanged'> {
  return rewriteComponentFile(file, manifestDir, (text) => addEvidenceRecord(text, record, file), onWait);
}
