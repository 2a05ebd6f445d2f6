import { Flags } from '@oclif/core';
import { UserError } from './errors.js';
import { ExitCode } from './exit-codes.js';
import { defaultManifestPath } from '../paths.js';
import { loadManifest, type Manifest } from '../manifest/load.js';
import { formatIssue, ManifestError } from '../manifest/issues.js';
import { knownReleases, releaseModel, resolveStack, type StackModel } from '../model/resolve.js';
import { loadPolicies } from '../model/targets.js';

export const manifestFlag = Flags.string({
  char: 'm',
  description: 'stack manifest: a stack.yaml or the directory holding it (default: the one shipped with rocm-ebuild)',
  helpValue: 'PATH',
});

/** Load a manifest, turning every validation problem into one user error (exit 2). */
export async function loadManifestOrFail(file: string | undefined): Promise<Manifest> {
  try {
    return await loadManifest(file ?? defaultManifestPath);
  } catch (err) {
    if (err instanceof ManifestError) {
      throw new UserError(
        `${err.message}:\n${err.issues.map((i) => formatIssue(i)).join('\n')}`,
        ExitCode.invalidInput,
        { issues: err.issues },
      );
    }
    throw err;
  }
}

/** The stack model of one release; an unknown release is a user error naming the known ones. */
export async function stackFor(manifest: Manifest, version: string): Promise<StackModel> {
  const known = knownReleases(manifest);
  if (!known.includes(version)) {
    throw new UserError(
      `release ${version} is not in the manifest ${manifest.file}; it knows ${known.join(', ')}`,
      ExitCode.invalidInput,
      { known },
    );
  }
  const policies = await loadPolicies(manifest);
  if ('issues' in policies) throw new ManifestError(policies.issues);
  return resolveStack(manifest, releaseModel(manifest, version, policies.byRelease.get(version)!)!);
}
