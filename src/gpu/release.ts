import path from 'node:path';
import { resolveManifestPath } from '../manifest/location.js';
import { formatIssue } from '../manifest/issues.js';
import { SchemaValidator } from '../manifest/schema-validator.js';
import type { StackSpec } from '../manifest/types.js';
import { readYamlSource } from '../manifest/yaml-source.js';
import { memoOnContent } from '../util/content-memo.js';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';

/**
 * What `gpu list` needs of a stack manifest: its releases and its target table.
 * Only stack.yaml is read (and checked against its schema): listing GPUs does
 * not need the components, and must stay fast.
 */
export async function stackReleases(manifest: string): Promise<StackReleases> {
  const file = await resolveManifestPath(manifest);
  return memoOnContent('gpu stack releases', null, [file], () => readStackReleases(file));
}

export interface StackReleases {
  file: string;
  targetsFile: string;
  releases: string[];
  verified: string[];
}

async function readStackReleases(file: string): Promise<StackReleases> {
  const read = await readYamlSource(file);
  const issues = read.source ? SchemaValidator.shared().validate('stack.schema.json', read.source) : read.issues;
  if (!read.source || issues.length > 0) {
    throw new UserError(`${file} is not a valid stack manifest:\n${issues.map((i) => formatIssue(i)).join('\n')}`, ExitCode.invalidInput, { issues });
  }
  const stack = read.source.value as StackSpec;
  const releases = Object.keys(stack.releases);
  return {
    file,
    targetsFile: path.resolve(path.dirname(file), stack.targets),
    releases,
    verified: releases.filter((r) => stack.releases[r]!.verified),
  };
}

/** The release a command means when none is given: the newest verified one, else the newest. */
export function defaultRelease(releases: string[], verified: string[]): string | undefined {
  const newest = (list: string[]) =>
    [...list].sort((a, b) => {
      const x = a.split('.').map(Number);
      const y = b.split('.').map(Number);
      for (let i = 0; i < 3; i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (y[i] ?? 0) - (x[i] ?? 0);
      return 0;
    })[0];
  return newest(verified) ?? newest(releases);
}
