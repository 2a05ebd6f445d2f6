import type { ErrorObject, ValidateFunction } from 'ajv';
import { SchemaValidator, TEST_REPORT_SCHEMA } from '../manifest/schema-validator.js';
import { readBounded } from '../util/bounded-read.js';
import { ExitCode } from '../util/exit-codes.js';
import { prError } from './errors.js';

/**
 * GPU test reports (schemas/test-report.schema.json: one container run, one
 * release, one gfx), read for the pull-request body's results table.
 */

export interface TestAtom {
  atom: string;
  version?: string;
  tested: boolean;
  phase: string;
  result: 'passed' | 'failed' | 'skipped' | 'not-run';
  binpkg?: boolean;
  seconds: number;
  failureClass: string | null;
  message?: string;
  logs: string[];
  testCounts?: { total: number; failed: number; skipped: number };
}

export interface TestReport {
  schemaVersion: 1;
  release: string;
  gfx: string;
  amdgpuTargets?: string;
  device?: { gfx: string; renderNode: string; name?: string; computeUnits?: number; vramBytes?: number };
  engine: { name: 'podman' | 'docker' | 'none'; version?: string };
  image: string;
  tests: 'none' | 'smoke' | 'full';
  started: string;
  ended: string;
  result: 'passed' | 'failed' | 'interrupted' | 'error';
  atoms: TestAtom[];
}

/** Far above any report `rocm-ebuild test` writes (a few KiB per package). */
const REPORT_MAX_BYTES = 16 * 1024 * 1024;

/** The schema's validation code: the build's generated one when current (manifest/schema-validator.ts). */
function validate(): ValidateFunction {
  return SchemaValidator.shared().validatorOf(TEST_REPORT_SCHEMA) as ValidateFunction;
}

function describe(e: ErrorObject): string {
  const at = e.instancePath ? `$${e.instancePath.replace(/\/(\d+)/g, '[$1]').replace(/\//g, '.')}` : '$';
  const extra = e.keyword === 'enum' ? `: one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}` : '';
  return `${at}: ${e.message ?? e.keyword}${extra}`;
}

/** Read and validate the reports; two reports for one gfx are refused (which one would count?). */
export async function loadTestReports(files: string[]): Promise<{ file: string; report: TestReport }[]> {
  const check = validate();
  const out: { file: string; report: TestReport }[] = [];
  for (const file of files) {
    let data: unknown;
    const hint = 'give the report.json `rocm-ebuild test` wrote (<dir>/<gfx>/report.json)';
    // A report is a file someone hands over: a FIFO or /dev/zero under its name must not hang the command.
    const read = await readBounded(file, REPORT_MAX_BYTES);
    if (!read.ok) throw prError(`--tests ${file}: ${read.reason}`, ExitCode.invalidInput, hint);
    try {
      data = JSON.parse(read.data.toString('utf8'));
    } catch (err) {
      throw prError(`--tests ${file}: ${(err as Error).message}`, ExitCode.invalidInput, hint);
    }
    if (!check(data)) {
      const problems = (check.errors ?? []).slice(0, 10).map((e) => `  ${describe(e)}`);
      throw prError(`--tests ${file} is not a test report (schemas/test-report.schema.json):\n${problems.join('\n')}`, ExitCode.invalidInput);
    }
    const report = data as TestReport;
    const twin = out.find((o) => o.report.gfx === report.gfx);
    if (twin) throw prError(`--tests ${file} and ${twin.file} both report ${report.gfx}`, ExitCode.invalidInput, 'give one report per GPU architecture');
    out.push({ file, report });
  }
  return out.sort((a, b) => a.report.gfx.localeCompare(b.report.gfx, 'en', { numeric: true }));
}
