import path from 'node:path';
import { resolveManifestPath } from '../manifest/location.js';
import { formatIssue } from '../manifest/issues.js';
import { SchemaValidator } from '../manifest/schema-validator.js';
import type { StackSpec } from '../manifest/types.js';
import { readYamlSource } from '../manifest/yaml-source.js';
import { memoOnContent } from '../util/content-memo.js';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';
import { compareVersions } from '../model/version.js';

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
  };
}

/**
 * The release a command means when none is given: the newest. (How far each
 * release was checked is its components' evidence, which `gpu list` does not
 * read; `bump` and `lint` show it.)
 */
export function defaultRelease(releases: string[]): string | undefined {
  return [...releases].sort(compareVersions).at(-1);
}
