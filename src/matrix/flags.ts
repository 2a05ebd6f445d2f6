import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';
import { DEFAULT_BASE_RUNNER, DEFAULT_CI_IMAGE, DEFAULT_LABEL_SCHEME, type MatrixOptions } from './plan.js';
import type { TestTier } from '../container/plan.js';

/** The flags `matrix` and `ci` share, as parsed by oclif. */
export interface MatrixFlags {
  gpu?: string[];
  tests: string;
  image: string;
  'label-scheme': string;
  'base-runner': string;
  timeout: number;
}

export function matrixOptions(flags: MatrixFlags): MatrixOptions {
  if (!flags['label-scheme'].includes('{gfx}')) {
    throw new UserError(`--label-scheme ${flags['label-scheme']}: it must contain {gfx}, e.g. ${DEFAULT_LABEL_SCHEME}`, ExitCode.invalidInput);
  }
  return {
    ...(flags.gpu?.length ? { gfx: flags.gpu } : {}),
    tests: flags.tests as TestTier,
    image: flags.image,
    labelScheme: flags['label-scheme'],
    baseRunner: flags['base-runner'].split(',').map((s) => s.trim()).filter(Boolean),
    timeoutMinutes: flags.timeout,
  };
}

export const MATRIX_DEFAULTS = { image: DEFAULT_CI_IMAGE, labelScheme: DEFAULT_LABEL_SCHEME, baseRunner: DEFAULT_BASE_RUNNER.join(','), timeout: 720 };

/** Write a generated file whole or not at all. */
export async function writeOutput(file: string, text: string): Promise<string> {
  const abs = path.resolve(file);
  await mkdir(path.dirname(abs), { recursive: true });
  const tmp = `${abs}.${process.pid}.tmp`;
  await writeFile(tmp, text);
  await rename(tmp, abs);
  return abs;
}
