/**
 * The stack as a whole: the checks that need resolved releases, the target
 * policy, the build graph and lint's keyword list, on top of manifest/'s
 * reading and schema validation; and loading a checked manifest and one
 * release of it as the commands and workflows need them (problems become user
 * errors, exit 2).
 */
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';
import { defaultManifestPath } from '../paths.js';
import { formatIssue, ManifestError, sortIssues, type ManifestIssue } from '../manifest/issues.js';
import type { BrokenParts, Manifest, ReadOptions } from '../manifest/load.js';
import { resolveManifestPath } from '../manifest/location.js';
import { knownReleases, releaseModel, resolveStack, type StackModel } from '../model/resolve.js';
import { loadPolicies, releasePolicies, type Policies } from '../model/targets.js';
import { cacheDisabled, computeKey, readCachedManifest, writeCachedManifest } from './cache.js';

const NO_POLICY = { default: [], optional: [] };

/**
 * Checks a schema cannot express, in every release the stack knows (overrides
 * change components per release). Parts that failed to read or validate are
 * left out, and so is every check that depends on them.
 */
export async function checkStack(manifest: Manifest, broken: BrokenParts, options: ReadOptions = {}): Promise<ManifestIssue[]> {
  // Imported here, not at the top: a run that takes the manifest from the
  // cache (validate, graph, render, test, bump, warm) never loads the checks.
  const [{ checkContext }, { checkDistfiles }, { checkFiles }, { checkPatchFiles, checkPatchTotals }, { checkProjects }, { checkRelease }, { checkPhaseSyntax, phasePieces }, { checkPeerFindings }] = await Promise.all([
    import('./context.js'),
    import('./distfiles.js'),
    import('./files.js'),
    import('./patch-files.js'),
    import('./projects.js'),
    import('./release.js'),
    import('./values.js'),
    import('./peer-findings.js'),
  ]);
  const ctx = checkContext(manifest, broken);
  const issues: ManifestIssue[] = checkFiles(ctx);
  const patchFiles = await checkPatchFiles(manifest);
  issues.push(...patchFiles.issues);
  issues.push(...checkPeerFindings(ctx));

  const targetsKnown = !broken.stackKeys.has('targets');
  const policies = targetsKnown ? await releasePolicies(manifest, options.readSource) : { byRelease: new Map(), issues: [] };
  issues.push(...policies.issues);

  const perRelease = new Map<string, { issue: ManifestIssue; releases: string[] }>();
  const releases = knownReleases(manifest);
  const models: StackModel[] = [];
  for (const version of releases) {
    // Without its target policy a release is still checked, except for what the policy decides.
    const policy = policies.byRelease.get(version);
    const model = resolveStack(manifest, releaseModel(manifest, version, policy ?? NO_POLICY)!);
    models.push(model);
    const found = await checkRelease(model, ctx, policy !== undefined);
    if (!broken.stackKeys.has('defaults')) found.push(...checkDistfiles(model));
    found.push(...checkPatchTotals(model, patchFiles.sizes));
    for (const issue of found) {
      const key = `${issue.file}:${issue.line}:${issue.column}:${issue.path}:${issue.message}`;
      const seen = perRelease.get(key);
      if (seen) seen.releases.push(version);
      else perRelease.set(key, { issue, releases: [version] });
    }
  }
  for (const { issue, releases: where } of perRelease.values()) {
    issues.push(where.length === releases.length ? issue : { ...issue, message: `${issue.message} (in ${where.join(', ')})` });
  }
  issues.push(...checkProjects(models, ctx));
  // Phase code is checked once however many releases share it.
  const pieces = new Map(models.flatMap((m) => m.components.flatMap(phasePieces)).map((p) => [`${p.c.loaded.source.file}\u0000${p.c.provenance.sourcePath(p.at).join('.')}\u0000${p.text}`, p]));
  issues.push(...(await checkPhaseSyntax([...pieces.values()])));
  return issues;
}

/** Every problem of a manifest in one pass: read and schema problems, and all the checks still possible. */
export async function validateManifest(file: string, options: ReadOptions = {}): Promise<{ manifest?: Manifest; issues: ManifestIssue[] }> {
  // The reader and its schema validator, loaded only when a manifest is really read (not served by the cache).
  const { readManifest } = await import('../manifest/load.js');
  const read = await readManifest(file, options);
  const issues = [...read.issues];
  if (read.manifest) issues.push(...(await checkStack(read.manifest, read.broken, options)));
  if (issues.length > 0) return { issues: sortIssues(issues) };
  return { manifest: read.manifest!, issues: [] };
}

/** Read, validate and check a whole manifest; throws ManifestError listing every problem. */
export async function loadManifest(file: string, options: ReadOptions = {}): Promise<Manifest> {
  const { manifest, issues } = await validateManifest(file, options);
  if (!manifest) throw new ManifestError(issues);
  return manifest;
}

function userError(err: ManifestError): UserError {
  return new UserError(`${err.message}:\n${err.issues.map((i) => formatIssue(i)).join('\n')}`, ExitCode.invalidInput, { issues: err.issues });
}

/** Target policies that came with a cached manifest, for stackFor. */
const cachedPolicies = new WeakMap<Manifest, Policies>();

/** The manifest's target policies: those stored with it in the cache, else read from its targets.yaml. */
export async function policiesOf(manifest: Manifest): ReturnType<typeof loadPolicies> {
  return cachedPolicies.get(manifest) ?? loadPolicies(manifest);
}

/**
 * loadManifest through the cache of checked manifests (stack-check/cache.ts):
 * a manifest unchanged since a run that found it valid is not read, validated
 * and checked again. ROCM_EBUILD_NO_CACHE=1 turns the cache off (see cacheDisabled).
 */
async function loadManifestCached(file: string): Promise<Manifest> {
  const stackFile = await resolveManifestPath(file);
  const hit = await readCachedManifest(stackFile);
  if (hit) {
    cachedPolicies.set(hit.manifest, hit.policies);
    return hit.manifest;
  }
  const before = await computeKey(stackFile);
  const manifest = await loadManifest(stackFile);
  if (before) {
    const policies = await loadPolicies(manifest);
    if (!('issues' in policies)) await writeCachedManifest(stackFile, { manifest, policies }, { before, after: await computeKey(stackFile) });
  }
  return manifest;
}

/** Load a manifest (default: the shipped one), turning every problem into one user error (exit 2). */
export async function loadManifestOrFail(file: string | undefined, options: ReadOptions = {}): Promise<Manifest> {
  try {
    // A caller's own reader (tests sharing parsed files) bypasses the cache.
    if (!options.readSource && !cacheDisabled()) return await loadManifestCached(file ?? defaultManifestPath);
    return await loadManifest(file ?? defaultManifestPath, options);
  } catch (err) {
    if (err instanceof ManifestError) throw userError(err);
    throw err;
  }
}

/** The stack model of one release; an unknown release is a user error naming the known ones. */
export async function stackFor(manifest: Manifest, version: string): Promise<StackModel> {
  const known = knownReleases(manifest);
  if (!known.includes(version)) {
    throw new UserError(`release ${version} is not in the manifest ${manifest.file}; it knows ${known.join(', ')}`, ExitCode.invalidInput, { known });
  }
  const policies = await policiesOf(manifest);
  if ('issues' in policies) throw userError(new ManifestError(policies.issues));
  return resolveStack(manifest, releaseModel(manifest, version, policies.byRelease.get(version)!)!);
}
