import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';
import { IMAGE_REFERENCE_FORMAT, isImageReference, isRunnerLabel } from '../util/names.js';
import { printable } from '../util/printable.js';
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

/**
 * The flags as plan options. Values that reach the generated definitions are
 * checked against what their engines accept: the image is an image
 * reference, runner labels are plain labels (no spaces, no `${{ }}`).
 */
export function matrixOptions(flags: MatrixFlags): MatrixOptions {
  const bad = (message: string) => new UserError(message, ExitCode.invalidInput);
  if (!isImageReference(flags.image)) throw bad(`--image ${printable(JSON.stringify(flags.image))} is not ${IMAGE_REFERENCE_FORMAT}`);
  if (!flags['label-scheme'].includes('{gfx}')) {
    throw bad(`--label-scheme ${printable(flags['label-scheme'], { oneLine: true })}: it must contain {gfx}, e.g. ${DEFAULT_LABEL_SCHEME}`);
  }
  if (!isRunnerLabel(flags['label-scheme'].replace(/\{gfx\}/g, 'gfx90a'))) {
    throw bad(`--label-scheme ${printable(JSON.stringify(flags['label-scheme']))}: a runner label is letters, digits, - _ and . around {gfx}`);
  }
  const baseRunner = flags['base-runner'].split(',').map((s) => s.trim()).filter(Boolean);
  for (const l of baseRunner) if (!isRunnerLabel(l)) throw bad(`--base-runner: ${printable(JSON.stringify(l))} is not a runner label (letters, digits, - _ and .)`);
  return {
    ...(flags.gpu?.length ? { gfx: flags.gpu } : {}),
    tests: flags.tests as TestTier,
    image: flags.image,
    labelScheme: flags['label-scheme'],
    baseRunner,
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
