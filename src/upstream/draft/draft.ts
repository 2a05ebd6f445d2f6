import { isDeepStrictEqual } from 'node:util';
import { isMap, isScalar, isSeq, parseDocument, type Document, type Node, type Pair } from 'yaml';

/** A release entry derived from a known one, as `bump --derive-from` writes it into stack.yaml. */
export interface DraftRelease {
  version: string;
  from: string;
  llvmSlot: number;
  /** The release stream, when not the legacy one (a release derived from TheRock's pins). */
  stream?: 'therock';
  /** AMD's project list of the release; omitted when the stack keeps no project lists. */
  projects?: string[];
  /** Projects new in the release that nothing packages or excludes yet. */
  newProjects: string[];
  /** TheRock's commit of each repository the release derived from pins (stack.yaml `pins:`), read from its tree. */
  pins?: Record<string, string>;
}

export class DraftError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DraftError';
  }
}

export const draftReason = (version: string) => `new in ${version}, not packaged yet`;

/** A plain YAML scalar when that reads back as the same string, else double-quoted. */
function scalar(text: string): string {
  return /^[A-Za-z_][A-Za-z0-9_.-]*$/.test(text) && !/^(true|false|null|yes|no|on|off|~)$/i.test(text) ? text : JSON.stringify(text);
}

function lineStart(text: string, offset: number): number {
  return text.lastIndexOf('\n', offset - 1) + 1;
}

function lineEnd(text: string, offset: number): number {
  const nl = text.indexOf('\n', offset);
  return nl < 0 ? text.length : nl + 1;
}

/** Where a block collection's last entry ends (the end of its line, trailing comments on it included), and its indentation. */
function afterLast(text: string, items: readonly (Pair | Node)[]): { at: number; indent: string } {
  const last = items.at(-1)!;
  const node = (isMap(last) || isSeq(last) || isScalar(last) ? last : (last as Pair).value ?? (last as Pair).key) as Node;
  const first = (isMap(last) || isSeq(last) || isScalar(last) ? last : (last as Pair).key) as Node;
  const end = node.range![2];
  const start = first.range![0];
  const indent = text.slice(lineStart(text, start), start).replace(/[^ ]/g, ' ');
  return { at: lineEnd(text, Math.max(start, end - 1)), indent };
}

/** A flow sequence wrapped the way the shipped stack.yaml writes project lists. */
function flowList(items: string[], indent: string, width = 100): string {
  const lines: string[] = [];
  let line = `${indent}[`;
  items.forEach((item, i) => {
    const word = `${scalar(item)}${i === items.length - 1 ? ']' : ','}`;
    if (line.length + 1 + word.length > width && line.trim() !== '[') {
      lines.push(line);
      line = `${indent} ${word}`;
    } else {
      line += line.endsWith('[') ? word : ` ${word}`;
    }
  });
  if (items.length === 0) line += ']';
  lines.push(line);
  return `${lines.join('\n')}\n`;
}

/**
 * stack.yaml with the draft release added, every other byte as it was: the
 * yaml Document API locates the collections (and checks they are block
 * style), the new entries are spliced in as text after their last entry, and
 * the result is parsed again and compared with what was intended.
 */
export function applyDraft(text: string, d: DraftRelease): string {
  const doc = parseDocument(text, { version: '1.2' });
  if (doc.errors.length > 0) throw new DraftError(`stack.yaml does not parse: ${doc.errors[0]!.message}`);
  const root = doc.contents;
  if (!isMap(root)) throw new DraftError('stack.yaml is not a mapping');
  const edits: { at: number; text: string }[] = [];
  const block = (key: string) => {
    const node = doc.get(key, true) as Node | undefined;
    if (node === undefined) return undefined;
    if (!(isMap(node) || isSeq(node)) || node.flow) throw new DraftError(`\`${key}:\` in stack.yaml is not a block collection; add the ${d.version} entry by hand`);
    if (node.items.length === 0) throw new DraftError(`\`${key}:\` in stack.yaml is empty; add the ${d.version} entry by hand`);
    return node;
  };

  const releases = block('releases')!;
  if ((releases as { has(key: unknown): boolean }).has(d.version)) throw new DraftError(`release ${d.version} is already there`);
  const r = afterLast(text, releases.items as Pair[]);
  const comment = `  # draft derived from ${d.from}: no evidence yet; llvm_slot carried over, check it`;
  const pins = Object.entries(d.pins ?? {});
  edits.push({
    at: r.at,
    // With pins, the block form 10.0.0 has; without, one line.
    text:
      pins.length > 0
        ? `${r.indent}"${d.version}":${comment}\n${r.indent}  llvm_slot: ${d.llvmSlot}\n${d.stream ? `${r.indent}  stream: ${d.stream}\n` : ''}${r.indent}  pins:\n` +
          pins.map(([repo, commit]) => `${r.indent}    ${scalar(repo)}: ${scalar(commit)}\n`).join('')
        : `${r.indent}"${d.version}": { llvm_slot: ${d.llvmSlot}${d.stream ? `, stream: ${d.stream}` : ''} }${comment}\n`,
  });

  if (d.projects) {
    const projects = block('projects');
    if (projects) {
      const p = afterLast(text, projects.items as Pair[]);
      edits.push({ at: p.at, text: `${p.indent}"${d.version}":\n${flowList(d.projects, `${p.indent}  `)}` });
    }
  }

  if (d.newProjects.length > 0) {
    const entries = (indent: string) =>
      d.newProjects
        .map((name) => `${indent}- project: ${scalar(name)}\n${indent}  releases: { from: "${d.version}" }\n${indent}  reason: ${draftReason(d.version)}\n`)
        .join('');
    const excluded = block('excluded');
    if (excluded) {
      const e = afterLast(text, excluded.items as Node[]);
      edits.push({ at: e.at, text: entries(e.indent.replace(/ {2}$/, '')) });
    } else {
      edits.push({ at: text.length, text: `${text.endsWith('\n') || text === '' ? '' : '\n'}excluded:\n${entries('  ')}` });
    }
  }

  let out = text;
  for (const e of edits.sort((a, b) => b.at - a.at)) out = out.slice(0, e.at) + e.text + out.slice(e.at);
  check(doc, out, d);
  return out;
}

/** The spliced text must mean exactly the old document plus the draft. */
function check(before: Document, out: string, d: DraftRelease): void {
  const after = parseDocument(out, { version: '1.2' });
  if (after.errors.length > 0) throw new DraftError(`the draft would not parse (${after.errors[0]!.message}); add it by hand`);
  const want = before.toJS() as Record<string, unknown>;
  (want.releases as Record<string, unknown>)[d.version] = { llvm_slot: d.llvmSlot, ...(d.stream ? { stream: d.stream } : {}), ...(d.pins && Object.keys(d.pins).length > 0 ? { pins: d.pins } : {}) };
  if (d.projects && want.projects) (want.projects as Record<string, unknown>)[d.version] = d.projects;
  if (d.newProjects.length > 0) {
    want.excluded = [
      ...((want.excluded as unknown[]) ?? []),
      ...d.newProjects.map((project) => ({ project, releases: { from: d.version }, reason: draftReason(d.version) })),
    ];
  }
  if (!isDeepStrictEqual(after.toJS(), want)) throw new DraftError('the draft would change more than the new release (unusual layout of stack.yaml); add it by hand');
}
