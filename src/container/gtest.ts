import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { XMLParser } from 'fast-xml-parser';

/** One test case of a googletest XML report (--gtest_output=xml / GTEST_OUTPUT). */
export interface GtestCase {
  name: string;
  classname: string;
  seconds: number;
  /** The failure text, when it failed. */
  failure?: string;
  skipped: boolean;
}

export interface GtestSuite {
  name: string;
  cases: GtestCase[];
}

export interface GtestReport {
  /** Relative to the directory it was read from. */
  file: string;
  suites: GtestSuite[];
}

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  textNodeName: '#text',
  cdataPropName: '#cdata',
  isArray: (name) => name === 'testsuite' || name === 'testcase' || name === 'failure' || name === 'error',
});

type Node = Record<string, unknown>;
const list = (v: unknown): Node[] => (Array.isArray(v) ? (v as Node[]) : v ? [v as Node] : []);
const text = (n: Node): string => String(n.message ?? '') + (n['#cdata'] ? `\n${String(n['#cdata'])}` : n['#text'] ? `\n${String(n['#text'])}` : '');

/** Parse one gtest XML report; undefined when it is not one (a truncated file from a killed test). */
export function parseGtestXml(xml: string, file: string): GtestReport | undefined {
  let doc: Node;
  try {
    doc = parser.parse(xml) as Node;
  } catch {
    return undefined;
  }
  const root = (doc.testsuites as Node | undefined) ?? (doc.testsuite ? { testsuite: doc.testsuite } : undefined);
  if (!root) return undefined;
  const suites = list(root.testsuite).map((s) => ({
    name: String(s.name ?? ''),
    cases: list(s.testcase).map((c) => {
      const failures = [...list(c.failure), ...list(c.error)];
      return {
        name: String(c.name ?? ''),
        classname: String(c.classname ?? s.name ?? ''),
        seconds: Number(c.time ?? 0) || 0,
        ...(failures.length > 0 ? { failure: failures.map(text).join('\n').trim() } : {}),
        skipped: c.result === 'skipped' || c.status === 'notrun' || 'skipped' in c,
      };
    }),
  }));
  return { file, suites };
}

/** Every gtest XML report under `dir` (recursively), by relative path. */
export async function readGtestReports(dir: string, relativeTo: string): Promise<GtestReport[]> {
  const out: GtestReport[] = [];
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true, recursive: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    if (!e.isFile() || !e.name.endsWith('.xml')) continue;
    const file = path.join(e.parentPath ?? (e as unknown as { path: string }).path, e.name);
    const parsed = parseGtestXml(await readFile(file, 'utf8'), path.relative(relativeTo, file));
    if (parsed) out.push(parsed);
  }
  return out.sort((a, b) => a.file.localeCompare(b.file));
}

export function gtestCounts(reports: readonly GtestReport[]): { total: number; failed: number; skipped: number } {
  let total = 0;
  let failed = 0;
  let skipped = 0;
  for (const r of reports)
    for (const s of r.suites)
      for (const c of s.cases) {
        total++;
        if (c.failure !== undefined) failed++;
        else if (c.skipped) skipped++;
      }
  return { total, failed, skipped };
}
