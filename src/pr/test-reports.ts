import { readFile } from 'node:fs/promises';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { SchemaValidator, TEST_REPORT_SCHEMA } from '../manifest/schema-validator.js';
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
    try {
      data = JSON.parse(await readFile(file, 'utf8'));
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      throw prError(`--tests ${file}: ${e.code === 'ENOENT' ? 'no such file' : e.message}`, ExitCode.invalidInput, 'give the report.json `rocm-ebuild test` wrote (<dir>/<gfx>/report.json)');
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
