import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { SaxesParser } from 'saxes';
import { byCodePoint } from '../util/order.js';
import { readBounded } from '../util/bounded-read.js';

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

/**
 * Parse one gtest XML report; undefined when it is not one. The parser is
 * strict: a report truncated by a killed test binary is not well-formed and
 * is dropped whole rather than counted as the cases it happened to finish.
 */
export function parseGtestXml(xml: string, file: string): GtestReport | undefined {
  const parser = new SaxesParser({ xmlns: false });
  const suites: GtestSuite[] = [];
  let sawRoot = false;
  let suite: GtestSuite | undefined;
  let testcase: (GtestCase & { failures: string[] }) | undefined;
  let failure: string | undefined;
  let failed = false;
  parser.on('error', () => {
    failed = true;
  });
  parser.on('opentag', (tag) => {
    const a = tag.attributes as Record<string, string>;
    switch (tag.name) {
      case 'testsuites':
        sawRoot = true;
        break;
      case 'testsuite':
        sawRoot = true;
        suite = { name: a.name ?? '', cases: [] };
        suites.push(suite);
        break;
      case 'testcase':
        testcase = {
          name: a.name ?? '',
          classname: a.classname ?? suite?.name ?? '',
          seconds: Number(a.time ?? 0) || 0,
          skipped: a.result === 'skipped' || a.status === 'notrun',
          failures: [],
        };
        break;
      case 'failure':
      case 'error':
        if (testcase) failure = a.message ?? '';
        break;
      case 'skipped':
        if (testcase) testcase.skipped = true;
        break;
      default:
        break;
    }
  });
  const body = (t: string) => {
    if (failure !== undefined && t.trim() !== '') failure += `\n${t}`;
  };
  parser.on('text', body);
  parser.on('cdata', body);
  parser.on('closetag', (tag) => {
    if ((tag.name === 'failure' || tag.name === 'error') && testcase && failure !== undefined) {
      testcase.failures.push(failure);
      failure = undefined;
    } else if (tag.name === 'testcase' && testcase) {
      const { failures, ...c } = testcase;
      (suite ?? (suites[0] ??= { name: '', cases: [] })).cases.push(
        failures.length > 0 ? { ...c, failure: failures.join('\n').trim() } : c,
      );
      testcase = undefined;
    } else if (tag.name === 'testsuite') {
      suite = undefined;
    }
  });
  try {
    parser.write(xml).close();
  } catch {
    return undefined;
  }
  if (failed || !sawRoot) return undefined;
  return { file, suites };
}

const GTEST_XML_MAX_BYTES = 256 * 1024 * 1024;

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
    // Written by the test programs inside the container: a FIFO or an endless file there must not hang the report.
    const read = await readBounded(file, GTEST_XML_MAX_BYTES);
    if (!read.ok) continue;
    const parsed = parseGtestXml(read.data.toString('utf8'), path.relative(relativeTo, file));
    if (parsed) out.push(parsed);
  }
  return out.sort((a, b) => byCodePoint(a.file, b.file));
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
