import { createRequire } from 'node:module';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Ajv as AjvClass, ErrorObject, ValidateFunction } from 'ajv';
import { schemasDir } from '../paths.js';
import { ExitCode } from '../util/exit-codes.js';
import { prError } from './errors.js';

// ajv (40 modules) is loaded when a report is first checked, not by every run that imports this module (test --dry-run).
const ajv = (): typeof AjvClass => (createRequire(import.meta.url)('ajv') as typeof import('ajv')).Ajv;

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

let validator: ValidateFunction | undefined;

async function validate(): Promise<ValidateFunction> {
  if (!validator) {
    const schema = JSON.parse(await readFile(path.join(schemasDir, 'test-report.schema.json'), 'utf8')) as object;
    validator = new (ajv())({ allErrors: true, strict: false }).compile(schema);
  }
  return validator;
}

function describe(e: ErrorObject): string {
  const at = e.instancePath ? `$${e.instancePath.replace(/\/(\d+)/g, '[$1]').replace(/\//g, '.')}` : '$';
  const extra = e.keyword === 'enum' ? `: one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}` : '';
  return `${at}: ${e.message ?? e.keyword}${extra}`;
}

/** Read and validate the reports; two reports for one gfx are refused (which one would count?). */
export async function loadTestReports(files: string[]): Promise<{ file: string; report: TestReport }[]> {
  const check = await validate();
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
