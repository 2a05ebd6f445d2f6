import path from 'node:path';
import { defaultTargetsPath } from '../paths.js';
import { memoOnContent } from '../util/content-memo.js';
import { formatIssue, type ManifestIssue } from '../manifest/issues.js';
import { SchemaValidator } from '../manifest/schema-validator.js';
import { jsonPath, locate, parseYamlSource, readYamlSource, type YamlSource } from '../manifest/yaml-source.js';
import { compareTriples, parseTriple, type Triple } from './version.js';

/** One gfx target of manifest/targets.yaml. */
export interface TargetInfo {
  name: string;
  /** The KFD topology's number for the target: major*10000 + minor*100 + stepping. */
  gfxTargetVersion: number;
  /** Its line in amdgpu_targets.desc, after "<name> - ". */
  description: string;
}

/** The targets rocm.eclass offers for one ROCm release series. */
export interface TargetPolicy {
  /** As the support matrix names it: "6.2", "6.4.0-6.4.2", "6.4.3+". */
  series: string;
  /** First version of the series (inclusive), X.Y.Z. */
  from: string;
  /** First version after the series (exclusive), X.Y.Z. */
  until: string;
  /** +amdgpu_targets_<t> in IUSE, in table order. */
  defaultOn: string[];
  /** amdgpu_targets_<t> in IUSE, in table order. */
  optional: string[];
}

/** manifest/targets.yaml, validated. */
export interface TargetTable {
  /** Absolute path it was read from ("<memory>" for text). */
  file: string;
  /** Every target, ordered by gfxTargetVersion. */
  targets: TargetInfo[];
  /** Oldest first. */
  policies: TargetPolicy[];
  /** The series ROCM_VERSION=9999 uses. */
  live: string;
}

/** One problem in targets.yaml: where, what, and what to do (the manifest's issue shape). */
export type TargetTableIssue = ManifestIssue;

export class TargetTableError extends Error {
  constructor(readonly issues: TargetTableIssue[]) {
    super(
      `${issues.length} problem${issues.length === 1 ? '' : 's'} in the target table:\n` +
        issues.map((i) => `  ${formatIssue(i)}`).join('\n'),
    );
    this.name = 'TargetTableError';
  }
}

/** The KFD gfx_target_version of a target name: gfx90a -> 90010, gfx1030 -> 100300. */
export function gfxTargetVersionOf(name: string): number | undefined {
  const m = /^gfx([0-9]{1,2})([0-9a-f])([0-9a-f])$/.exec(name);
  if (!m) return undefined;
  return Number(m[1]) * 10000 + parseInt(m[2]!, 16) * 100 + parseInt(m[3]!, 16);
}

/** Read and validate manifest/targets.yaml (or another file). Throws TargetTableError. */
export async function loadTargetTable(file: string = defaultTargetsPath): Promise<TargetTable> {
  const read = await readYamlSource(path.resolve(file), 'give the path of a targets.yaml, by default manifest/targets.yaml of rocm-ebuild');
  if (!read.source) throw new TargetTableError(read.issues);
  return tableFrom(read.source);
}

/**
 * loadTargetTable's result, kept between runs while the file's content (and
 * rocm-ebuild) stays the same: parsing and checking targets.yaml is 50 ms of
 * YAML and schema work that gpu list and bump would otherwise pay every run.
 */
export function checkedTargetTable(file: string = defaultTargetsPath): Promise<TargetTable> {
  return memoOnContent('target table', null, [path.resolve(file)], () => loadTargetTable(file));
}

/** Validate targets.yaml text. Throws TargetTableError listing every problem. */
export function parseTargetTable(text: string, file = '<memory>'): TargetTable {
  const parsed = parseYamlSource(file, text);
  if (!parsed.source) throw new TargetTableError(parsed.issues);
  return tableFrom(parsed.source);
}

function tableFrom(source: YamlSource): TargetTable {
  const file = source.file;
  const schemaIssues = SchemaValidator.shared().validate('targets.schema.json', source);
  if (schemaIssues.length > 0) throw new TargetTableError(schemaIssues);

  const raw = source.value as RawTable;
  const issues = semanticIssues(raw, source);
  if (issues.length > 0) throw new TargetTableError(issues);

  const order = new Map(raw.targets.map((t, i) => [t.name, i]));
  const byOrder = (a: string, b: string) => order.get(a)! - order.get(b)!;
  return {
    file,
    targets: raw.targets.map((t) => ({ name: t.name, gfxTargetVersion: t.gfx_target_version, description: t.description })),
    policies: raw.policies.map((p) => ({
      series: p.series,
      from: p.from,
      until: p.until,
      defaultOn: [...p.default_on].sort(byOrder),
      optional: [...p.optional].sort(byOrder),
    })),
    live: raw.live,
  };
}

interface RawTable {
  targets: { name: string; gfx_target_version: number; description: string }[];
  policies: { series: string; from: string; until: string; default_on: string[]; optional: string[] }[];
  live: string;
}

function issueAt(source: YamlSource, segments: (string | number)[], message: string, hint?: string): TargetTableIssue {
  return { file: source.file, ...locate(source, segments), path: jsonPath(segments), message, ...(hint ? { hint } : {}) };
}

/** What the schema cannot say: order, references, derived numbers, contiguity. */
function semanticIssues(raw: RawTable, source: YamlSource): TargetTableIssue[] {
  const issues: TargetTableIssue[] = [];
  const names = new Map<string, number>();
  raw.targets.forEach((t, i) => {
    if (names.has(t.name)) {
      issues.push(issueAt(source, ['targets', i, 'name'], `target ${t.name} is listed twice (first at $.targets[${names.get(t.name)}])`, 'keep one entry'));
    } else {
      names.set(t.name, i);
    }
    const expected = gfxTargetVersionOf(t.name);
    if (expected !== undefined && expected !== t.gfx_target_version) {
      issues.push(
        issueAt(source, ['targets', i, 'gfx_target_version'], `${t.gfx_target_version} does not match ${t.name}`, `write ${expected} (major*10000 + minor*100 + stepping, minor and stepping hexadecimal)`),
      );
    }
    const prev = raw.targets[i - 1];
    if (prev && prev.gfx_target_version >= t.gfx_target_version) {
      issues.push(issueAt(source, ['targets', i], `${t.name} is not ordered by gfx_target_version (it follows ${prev.name})`, 'order the targets by gfx_target_version'));
    }
  });

  const series = new Map<string, number>();
  let prevUntil: Triple | undefined;
  raw.policies.forEach((p, i) => {
    if (series.has(p.series)) {
      issues.push(issueAt(source, ['policies', i, 'series'], `series ${p.series} is listed twice`, 'give each series one entry'));
    }
    series.set(p.series, i);
    const from = parseTriple(p.from)!;
    const until = parseTriple(p.until)!;
    if (compareTriples(from, until) >= 0) {
      issues.push(issueAt(source, ['policies', i, 'until'], `until ${p.until} is not after from ${p.from}`, 'until is the first version after the series'));
    }
    const prev = raw.policies[i - 1];
    if (prev && prevUntil) {
      // Gaps are allowed (AMD released no 7.3 to 7.8): a version in one takes the series before it, with a QA notice.
      if (compareTriples(from, prevUntil) < 0) {
        issues.push(issueAt(source, ['policies', i, 'from'], `series ${p.series} starts at ${p.from}, before ${prev.series} ends (${prev.until})`, 'list the series oldest first without overlap'));
      }
    }
    prevUntil = until;
    for (const key of ['default_on', 'optional'] as const) {
      p[key].forEach((t, j) => {
        if (!names.has(t)) {
          issues.push(issueAt(source, ['policies', i, key, j], `target ${t} is not listed under targets`, 'add it to targets with its gfx_target_version and description'));
        }
      });
    }
    p.optional.forEach((t, j) => {
      if (p.default_on.includes(t)) {
        issues.push(issueAt(source, ['policies', i, 'optional', j], `target ${t} is both default_on and optional`, 'keep it in one of the two lists'));
      }
    });
    if (p.default_on.length === 0) {
      issues.push(issueAt(source, ['policies', i, 'default_on'], 'no default-on target: default USE flags would not satisfy ROCM_REQUIRED_USE', 'enable at least one target by default'));
    }
  });
  if (!series.has(raw.live)) {
    issues.push(issueAt(source, ['live'], `live names series ${raw.live}, which is not under policies`, `name one of: ${[...series.keys()].join(', ')}`));
  }
  return issues;
}
