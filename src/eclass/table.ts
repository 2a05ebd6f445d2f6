import { readFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv, type AnySchemaObject, type ErrorObject } from 'ajv';
import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import { defaultTargetsPath, schemasDir } from '../paths.js';
import { compareTriples, parseTriple, type Triple } from './version.js';

type AjvInstance = InstanceType<typeof Ajv>;

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

/** One problem in targets.yaml: where, what, and what to do. */
export interface TargetTableIssue {
  file: string;
  line: number;
  column: number;
  /** JSON path such as "$.policies[2].until". */
  path: string;
  message: string;
  hint?: string;
}

export class TargetTableError extends Error {
  constructor(readonly issues: TargetTableIssue[]) {
    super(
      `${issues.length} problem${issues.length === 1 ? '' : 's'} in the target table:\n` +
        issues.map((i) => `  ${formatTargetTableIssue(i)}`).join('\n'),
    );
    this.name = 'TargetTableError';
  }
}

export function formatTargetTableIssue(issue: TargetTableIssue): string {
  const where = issue.line > 0 ? `${issue.file}:${issue.line}:${issue.column}` : issue.file;
  return `${where}: ${issue.path}: ${issue.message}${issue.hint ? ` (${issue.hint})` : ''}`;
}

/** The KFD gfx_target_version of a target name: gfx90a -> 90010, gfx1030 -> 100300. */
export function gfxTargetVersionOf(name: string): number | undefined {
  const m = /^gfx([0-9]{1,2})([0-9a-f])([0-9a-f])$/.exec(name);
  if (!m) return undefined;
  return Number(m[1]) * 10000 + parseInt(m[2]!, 16) * 100 + parseInt(m[3]!, 16);
}

/** Read and validate manifest/targets.yaml (or another file). Throws TargetTableError. */
export async function loadTargetTable(file: string = defaultTargetsPath): Promise<TargetTable> {
  const abs = path.resolve(file);
  let text: string;
  try {
    text = await readFile(abs, 'utf8');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new TargetTableError([
      {
        file: abs,
        line: 0,
        column: 0,
        path: '$',
        message: e.code === 'ENOENT' ? 'file not found' : `cannot read file: ${e.message}`,
        hint: 'give the path of a targets.yaml, by default manifest/targets.yaml of rocm-ebuild',
      },
    ]);
  }
  return parseTargetTable(text, abs);
}

interface Source {
  file: string;
  doc: Document.Parsed;
  lines: LineCounter;
}

/** Validate targets.yaml text. Throws TargetTableError listing every problem. */
export function parseTargetTable(text: string, file = '<memory>'): TargetTable {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true, version: '1.2' });
  if (doc.errors.length > 0) {
    throw new TargetTableError(
      doc.errors.map((e) => {
        const pos = lines.linePos(e.pos[0]);
        return { file, line: pos.line, column: pos.col, path: '$', message: `YAML syntax: ${e.message.split('\n')[0]}`, hint: 'fix the YAML syntax at this position' };
      }),
    );
  }
  const source: Source = { file, doc, lines };
  const value: unknown = doc.toJS();

  const validate = validator();
  if (!validate(value)) throw new TargetTableError(schemaIssues(validate.errors ?? [], source));

  const raw = value as RawTable;
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

let compiled: ReturnType<AjvInstance['compile']> | undefined;

function validator(): ReturnType<AjvInstance['compile']> {
  if (!compiled) {
    const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
    ajv.addKeyword({ keyword: 'x-hint', schemaType: 'string' });
    const schema = JSON.parse(readFileSync(path.join(schemasDir, 'targets.schema.json'), 'utf8')) as AnySchemaObject;
    compiled = ajv.compile(schema);
  }
  return compiled;
}

function segmentsOf(pointer: string): (string | number)[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

function jsonPath(segments: readonly (string | number)[]): string {
  return segments.reduce<string>((out, s) => (typeof s === 'number' ? `${out}[${s}]` : `${out}.${s}`), '$');
}

/** Line and column of the node at `segments` (or of `key` inside that mapping). */
function locate(source: Source, segments: readonly (string | number)[], key?: string): { line: number; column: number } {
  let node: unknown = source.doc.contents;
  for (const seg of segments) {
    if (isMap(node)) {
      const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(seg));
      if (!pair) break;
      node = pair.value;
    } else if (isSeq(node) && typeof seg === 'number' && node.items[seg] !== undefined) {
      node = node.items[seg];
    } else {
      break;
    }
  }
  let offset = (node as Node | undefined)?.range?.[0];
  if (key !== undefined && isMap(node)) {
    const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === key);
    const k = pair?.key as Node | undefined;
    if (k?.range) offset = k.range[0];
  }
  if (offset === undefined) return { line: 1, column: 1 };
  const pos = source.lines.linePos(offset);
  return { line: pos.line, column: pos.col };
}

function issueAt(source: Source, segments: (string | number)[], message: string, hint?: string, key?: string): TargetTableIssue {
  return { file: source.file, ...locate(source, segments, key), path: jsonPath(key ? [...segments, key] : segments), message, ...(hint ? { hint } : {}) };
}

/** The schema's x-hint for the failing keyword, if any. */
function hintOf(error: ErrorObject): string | undefined {
  const own = (error.parentSchema as { 'x-hint'?: string } | undefined)?.['x-hint'];
  return own;
}

function schemaIssues(errors: ErrorObject[], source: Source): TargetTableIssue[] {
  const out: TargetTableIssue[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    const segments = segmentsOf(e.instancePath);
    let message = e.message ?? 'is invalid';
    let key: string | undefined;
    if (e.keyword === 'additionalProperties') {
      key = String((e.params as { additionalProperty: string }).additionalProperty);
      message = `unknown key "${key}"`;
    } else if (e.keyword === 'required') {
      message = `missing key "${String((e.params as { missingProperty: string }).missingProperty)}"`;
    } else if (e.keyword === 'pattern' || e.keyword === 'type' || e.keyword === 'minimum' || e.keyword === 'maximum') {
      message = `${JSON.stringify(e.data)} ${e.message ?? 'is invalid'}`;
    }
    const issue = issueAt(source, segments, message, key ? 'remove it or check its spelling' : hintOf(e), key);
    const id = `${issue.path}:${issue.message}`;
    if (!seen.has(id)) {
      seen.add(id);
      out.push(issue);
    }
  }
  return out;
}

/** What the schema cannot say: order, references, derived numbers, contiguity. */
function semanticIssues(raw: RawTable, source: Source): TargetTableIssue[] {
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
      const prevFrom = parseTriple(prev.from)!;
      if (compareTriples(from, prevUntil) < 0) {
        issues.push(issueAt(source, ['policies', i, 'from'], `series ${p.series} starts at ${p.from}, before ${prev.series} ends (${prev.until})`, 'list the series oldest first without overlap'));
      } else if (from[0] === prevFrom[0] && compareTriples(from, prevUntil) !== 0) {
        issues.push(
          issueAt(source, ['policies', i, 'from'], `series ${p.series} starts at ${p.from}, but ${prev.series} ends at ${prev.until}: ROCm ${from[0]}.x would have a gap`, `start ${p.series} at ${prev.until} or end ${prev.series} at ${p.from}`),
        );
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
