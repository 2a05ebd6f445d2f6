import type { TargetTable } from './table.js';

export const TABLE_BEGIN = '# ---- BEGIN GENERATED AMDGPU TARGET TABLE ----';
export const TABLE_END = '# ---- END GENERATED AMDGPU TARGET TABLE ----';

/** Columns a line may use, counting a tab as 4 as Gentoo's editors do. */
const WIDTH = 80;

/** Words joined by spaces into lines that fit WIDTH after `tabs` leading tabs. */
function wrap(words: readonly string[], tabs: number): string[] {
  const room = WIDTH - 4 * tabs;
  const lines: string[] = [];
  let line = '';
  for (const word of words) {
    if (line && line.length + 1 + word.length > room) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) lines.push(line);
  const indent = '\t'.repeat(tabs);
  return lines.map((l) => indent + l);
}

/**
 * The generated section of rocm.eclass, markers included: the target list,
 * the KFD version map, the per-series policies and the live series, each with
 * its eclassdoc.
 */
export function renderEclassTable(table: TargetTable): string {
  const names = table.targets.map((t) => t.name);
  const order = new Map(names.map((n, i) => [n, i]));
  const out: string[] = [
    TABLE_BEGIN,
    '# Written by "rocm-ebuild eclass" from manifest/targets.yaml of rocm-ebuild:',
    '# edit that file and regenerate this section instead of editing it.',
    '',
    '# @ECLASS_VARIABLE: _ROCM_ALL_TARGETS',
    '# @INTERNAL',
    '# @DESCRIPTION:',
    '# Every AMDGPU target the table knows, ordered by gfx_target_version.',
    '# Generated lists and get_amdgpu_flags follow this order.',
    '_ROCM_ALL_TARGETS=(',
    ...wrap(names, 1),
    ')',
    '',
    '# @ECLASS_VARIABLE: _ROCM_KFD_TARGETS',
    '# @INTERNAL',
    '# @DESCRIPTION:',
    "# The gfx target of each gfx_target_version, as the kernel's KFD topology",
    '# reports it (/sys/class/kfd/kfd/topology/nodes/<n>/properties).',
    '_ROCM_KFD_TARGETS=(',
    ...wrap(
      table.targets.map((t) => `[${t.gfxTargetVersion}]=${t.name}`),
      1,
    ),
    ')',
    '',
    '# @ECLASS_VARIABLE: _ROCM_POLICIES',
    '# @INTERNAL',
    '# @DESCRIPTION:',
    '# The target policy of each ROCm release series, oldest first.  The first',
    '# line of an entry is "<series> <from> <until>": the policy applies from',
    '# version <from> (inclusive) until <until> (exclusive).  The other words',
    '# are its targets, "+" marking those enabled by default.',
    '_ROCM_POLICIES=(',
  ];
  for (const p of table.policies) {
    const offered = [...p.defaultOn, ...p.optional].sort((a, b) => order.get(a)! - order.get(b)!);
    const words = offered.map((t) => (p.defaultOn.includes(t) ? `+${t}` : t));
    const body = wrap(words, 2);
    out.push(`\t"${p.series} ${p.from} ${p.until}`);
    body.forEach((line, i) => out.push(i === body.length - 1 ? `${line}"` : line));
  }
  out.push(
    ')',
    '',
    '# @ECLASS_VARIABLE: _ROCM_LIVE_POLICY',
    '# @INTERNAL',
    '# @DESCRIPTION:',
    '# The series whose policy ROCM_VERSION=9999 uses.',
    `_ROCM_LIVE_POLICY=${table.live}`,
    TABLE_END,
  );
  return out.join('\n');
}

export class EclassTableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EclassTableError';
  }
}

/** Where the generated section sits in eclass text: [start, end) offsets, markers included. */
export function findEclassTable(text: string): { start: number; end: number } {
  const lines = text.split('\n');
  const begin = lines.findIndex((l) => l === TABLE_BEGIN);
  const end = lines.findIndex((l) => l === TABLE_END);
  if (begin < 0 || end < 0 || end < begin || lines.filter((l) => l === TABLE_BEGIN || l === TABLE_END).length !== 2) {
    throw new EclassTableError(
      `the eclass must contain exactly one line "${TABLE_BEGIN}" followed by one line "${TABLE_END}"; restore them around the generated table`,
    );
  }
  const offsetOf = (line: number) => lines.slice(0, line).reduce((n, l) => n + l.length + 1, 0);
  return { start: offsetOf(begin), end: offsetOf(end) + TABLE_END.length };
}

/** The eclass text with its generated section replaced by the table's. */
export function spliceEclassTable(eclassText: string, table: TargetTable): string {
  const { start, end } = findEclassTable(eclassText);
  return eclassText.slice(0, start) + renderEclassTable(table) + eclassText.slice(end);
}
