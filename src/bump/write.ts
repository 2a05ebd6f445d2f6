import { applyBugTrailers } from '../git/messages.js';
import { gitIdentityAndSignatures, type OverlayRepo, type Person } from '../git/repo.js';
import type { CommitSpec } from '../git/transaction.js';
import type { ManifestEntry } from '../distfiles/index.js';
import type { Checked } from './check.js';
import type { BumpInputs } from './inputs.js';
import { packageCommits } from './package-commits.js';
import { packageSetsCommit } from './package-sets.js';
import type { PatchFiles } from './patch-files.js';
import type { BumpPlan } from './plan.js';
import type { OverlayRead } from './read.js';
import type { HandEdits } from './reconcile.js';
import { isDescCommit, scaffoldCommits } from './scaffold.js';
import type { Held } from './hold.js';
import { settingsCommit } from './settings.js';
import type { BumpOptions } from './types.js';

/** Who the commits name: the identity git gives in the overlay itself (its config may set one), read once it exists. */
export interface Committer {
  identity: Person;
  /** A new overlay's author and committer lines, read with its identity; undefined: read when the commits are built. */
  signatures: { author: string; committer: string } | undefined;
}

export async function committer(inputs: BumpInputs, held: Held): Promise<Committer> {
  // Commits carry the identity git gives in the overlay itself (its config may set one).
  const fresh = inputs.isRepo ? undefined : await gitIdentityAndSignatures(inputs.dir);
  return { identity: fresh?.identity ?? held.identity!, signatures: fresh?.signatures };
}

/**
 * The eighth stage: every commit of the bump, in order, as files to write
 * or delete. The package commits (package-commits.ts) with the scaffolding's
 * around them (::gentoo's rocm.eclass is never among them: `eclass update`):
 * the repository, amdgpu_targets.desc and eclass, new package sets, the
 * settings, then the packages, then a desc that only loses targets, and
 * last changed package sets: the one commit without --bug/--closes trailers.
 */
export interface WriteInput {
  o: BumpOptions;
  inputs: BumpInputs;
  read: OverlayRead;
  planned: BumpPlan;
  edits: HandEdits;
  /** Our patch files each package's commit adds to its files/. */
  patches: PatchFiles;
  checked: Checked;
  /** Hashed distfiles, by name. */
  entries: ReadonlyMap<string, ManifestEntry>;
  /** A settings commit: the overlay has no settings file and --maintainer or the identity chose one. */
  saveSettings: boolean;
  identity: Person;
  /** The commits are signed (hold.ts decided, with a test signature): a new overlay's layout.conf says so. */
  sign: boolean;
}

export interface Written {
  commits: CommitSpec[];
  /** What each package commit removed from files/, for the report. */
  removedFiles: { atom: string; files: string[] }[];
  /** What bump could not decide alone and reports. */
  notes: string[];
}

export async function composeCommits(input: WriteInput): Promise<Written> {
  const { o, inputs, read, planned, edits, checked, saveSettings, identity: signer } = input;
  const { model } = inputs;
  const { state } = read;
  const { plan, sets, refs, creating, maintainer, descShrinks } = planned;
  const { works, year } = edits;
  const { metadata } = checked;
  const notes: string[] = [];
  const packages = await packageCommits({
    works,
    state,
    model,
    entries: input.entries,
    metadata,
    identity: signer,
    separateDrops: o.separateDrops ?? false,
    addFiles: input.patches.byAtom,
    treeclean: planned.treeclean,
  });
  const scaffold = await scaffoldCommits(plan, model, signer, year, creating ? maintainer.save : undefined, maintainer.maintainers, input.sign);
  // A desc that only loses targets changes after the drops, so that every
  // commit still describes the targets its ebuilds offer.
  const descStep = plan.scaffold.find((s) => s.what === 'targets-desc');
  const lateDesc = descStep?.action === 'update' && descShrinks ? scaffold.splice(scaffold.findIndex(isDescCommit), 1) : [];
  // New sets are scaffolding, as the desc file is; changed ones come after
  // the packages they name, and carry no bug trailers.
  const setsCommit = sets ? [packageSetsCommit(sets, signer)] : [];
  const newSets = plan.scaffold.some((s) => s.what === 'package-sets' && s.action === 'add');
  const commits = [
    ...scaffold,
    ...(newSets ? setsCommit : []),
    ...(saveSettings ? [settingsCommit(maintainer.save!, signer)] : []),
    ...packages.commits,
    ...lateDesc,
  ];
  applyBugTrailers(commits, refs);
  if (!newSets) commits.push(...setsCommit);
  await noteIgnored(inputs.repo, commits, o);
  return { commits, removedFiles: packages.removedFiles, notes };
}

/**
 * Files bump writes are committed whatever the ignore rules say (fast-import
 * does not read them); say so, since a later `git add` of such a file would
 * need -f, and with --no-commit `git add -A` would leave them out.
 */
async function noteIgnored(repo: OverlayRepo, commits: CommitSpec[], o: BumpOptions): Promise<void> {
  const written = [...new Set(commits.flatMap((c) => c.changes.filter((x) => x.content !== null).map((x) => x.path)))];
  const ignored = await repo.ignoreRules(written);
  if (ignored.length === 0) return;
  const n = ignored.length;
  const first = `${ignored[0]!.path}, by ${ignored[0]!.rule}`;
  o.warn(
    o.commit
      ? `${n} committed file${n === 1 ? '' : 's'} match the overlay's ignore rules (e.g. ${first}); they are tracked now`
      : `${n} file${n === 1 ? '' : 's'} written match the overlay's ignore rules (e.g. ${first}): \`git add\` skips them, \`git add -f\` does not`,
  );
}
