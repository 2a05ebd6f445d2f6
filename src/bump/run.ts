import { resolveDistdir } from '../distfiles/index.js';
import { checkWrites } from './check.js';
import { downloadSize, ensureAllDistfiles } from './distfiles.js';
import { refuseGentooEclassGap } from './eclass.js';
import { checkInputs, type BumpInputs } from './inputs.js';
import { landCommits } from './land.js';
import { ourPatchFiles } from './patch-files.js';
import { planBump } from './plan.js';
import { readOverlay } from './read.js';
import { reconcileWithOverlay } from './reconcile.js';
import { addRemovedFiles, bumpReport } from './report.js';
import { createOverlay, exitIfInterrupted, exitOnSignalUntilHeld, holdOverlay, type Held } from './hold.js';
import { saveConfigSetting, settingsSaves } from './settings.js';
import type { BumpOptions, BumpResult } from './types.js';
import { committer, composeCommits } from './write.js';

export type { BumpOptions, BumpResult, PackageChange, PlannedPackage } from './types.js';

/**
 * Move an overlay to a ROCm release: plan, render and lint, make sure every
 * distfile is at hand and hashed, then build one commit per package off the
 * branch and move the branch once, at the end. Any failure before that last
 * step leaves the overlay exactly as it was.
 *
 * Each stage is a module of its own, with its input and output types:
 * inputs → hold (the lock) → read → plan → reconcile → patch files → check →
 * distfiles → write → land. docs/ARCHITECTURE.md draws them.
 */
export async function runBump(o: BumpOptions): Promise<BumpResult> {
  const listening = exitOnSignalUntilHeld();
  let inputs: BumpInputs;
  let held: Held;
  try {
    // Everything that needs no work first: paths, flags, the manifest.
    inputs = await checkInputs(o);
    // Then the overlay's git state, read-only, and the lock before the overlay is read.
    held = await holdOverlay(o, inputs);
  } finally {
    listening();
  }
  try {
    return await bumpHeld(o, inputs, held);
  } finally {
    await held.session?.close();
  }
}

async function bumpHeld(o: BumpOptions, inputs: BumpInputs, held: Held): Promise<BumpResult> {
  const { repo, isRepo } = inputs;
  const read = await readOverlay(o, inputs);
  const planned = await planBump(o, inputs, held, read);
  // Render every new ebuild, then read what the overlay holds of the planned packages:
  // revisions to bump, hand edits to carry forward or refuse to lose.
  const edits = await reconcileWithOverlay(o, inputs, read, planned.plan);
  // ::gentoo's eclass is never a bump's side effect: one lacking names the ebuilds use stops the bump, dry run or not.
  refuseGentooEclassGap(inputs.dir, o.version, read, edits.works);
  // Our patch files go into files/ with the ebuilds that apply them; a different file already there stops the bump here.
  const patches = await ourPatchFiles(inputs, read, edits);
  const result = bumpReport(o, inputs, held, planned, edits, patches);
  for (const w of edits.warnings) o.warn(w);
  if (o.dryRun) {
    result.download = downloadSize(edits.works, read.state, resolveDistdir(o.distdir));
    return result;
  }
  if (isRepo) result.branch = (await repo.branch()).replace(/^refs\/heads\//, '');
  const { saveSettings, configSetting } = settingsSaves(planned.maintainer, planned.creating, read.gentoo);
  if (edits.works.length === 0 && !planned.creating && !saveSettings && planned.plan.scaffold.every((s) => s.action === 'keep')) {
    if (configSetting) await saveConfigSetting(repo, configSetting);
    return result;
  }

  const checked = await checkWrites(inputs, read, planned, edits, saveSettings);
  result.qa = checked.qa;
  const fetched = await ensureAllDistfiles(checked.writes, read.state, o);
  result.distfiles = fetched.results.map((r) => ({ name: r.name, status: r.status, ...(r.entry ? { size: r.entry.size } : {}) }));

  let session = held.session;
  if (!isRepo) {
    session = await createOverlay(o, inputs);
    result.branch = (await repo.branch()).replace(/^refs\/heads\//, '');
  }
  try {
    const by = await committer(inputs, held);
    const written = await composeCommits({ o, inputs, read, planned, edits, patches, checked, entries: fetched.entries, saveSettings, identity: by.identity, sign: held.signing.sign });
    addRemovedFiles(result, edits.works, written.removedFiles);
    result.notes.push(...written.notes);
    result.commits = written.commits.map((c) => ({ subject: c.message.split('\n')[0]!, files: c.changes.map((x) => x.path) }));
    const landed = await landCommits({
      o,
      inputs,
      read,
      edits,
      checked,
      session: session!,
      commits: written.commits,
      subjects: result.commits.map((c) => c.subject),
      committer: by,
      branch: result.branch!,
      configSetting,
      sign: held.signing.sign,
    });
    if (landed.head !== undefined) {
      result.committed = true;
      result.head = landed.head;
    }
    // A signal that came while the branch moved: the session is closed (the lock released) once, there, and the run exits.
    await exitIfInterrupted(session!);
  } finally {
    if (!isRepo) await session?.close();
  }
  return result;
}
