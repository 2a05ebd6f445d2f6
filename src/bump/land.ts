import { gitSignatures } from '../git/repo.js';
import { RECORD_REF } from '../git/generated-record.js';
import type { CommitSpec } from '../git/transaction.js';
import type { MaintainerSetting } from '../overlay/settings.js';
import type { Checked } from './check.js';
import type { BumpInputs } from './inputs.js';
import type { OverlayRead } from './read.js';
import { ebuildPath, type HandEdits } from './reconcile.js';
import type { Session } from './hold.js';
import { saveConfigSetting } from './settings.js';
import type { Committer } from './write.js';
import type { BumpOptions } from './types.js';

/**
 * The last stage: the commits built off the branch through one git
 * fast-import (with the record of what was generated), then the branch moved
 * once, from the commit the plan was made from (or, with --no-commit, the
 * worktree brought to the new tip while the branch stays).
 */
export interface LandInput {
  o: BumpOptions;
  inputs: BumpInputs;
  read: OverlayRead;
  edits: HandEdits;
  checked: Checked;
  session: Session;
  commits: CommitSpec[];
  /** Each commit's subject, for the progress line. */
  subjects: string[];
  committer: Committer;
  branch: string;
  /** ::gentoo: the maintainer setting to save in the clone's git config once the bump landed. */
  configSetting: MaintainerSetting | undefined;
  /** Sign the commits (git commit-tree -S after fast-import), as hold.ts decided. */
  sign: boolean;
}

/** The new tip, when the branch moved to it (undefined with --no-commit). */
export async function landCommits(input: LandInput): Promise<{ head: string | undefined }> {
  const { o, inputs, session, commits, subjects, configSetting } = input;
  const { planned } = input.read;
  const { recordAt } = input.edits;
  const builder = session.builder!;
  const recordFiles = input.checked.writes.map((w) => ({ path: ebuildPath(w.atom, w.write!.version), content: w.write!.generated }));
  const tip = await builder.build(planned, commits, input.committer.signatures ?? (await gitSignatures(inputs.dir)), {
    onCommit: (done, total) => o.progress.step(done, total, subjects[done - 1]!),
    record: { parent: recordAt, message: `rocm-ebuild: generated for ROCm ${o.version}\n`, files: recordFiles },
    sign: input.sign,
  });
  o.progress.done();
  session.landing = true;
  const branchRef = `refs/heads/${input.branch}`;
  const recordRef = { ref: RECORD_REF, old: recordAt };
  let head: string | undefined;
  if (o.commit) {
    await builder.land(branchRef, planned, tip, recordRef);
    head = tip;
  } else {
    await builder.applyToWorktree(branchRef, planned, tip, recordRef);
  }
  if (configSetting) await saveConfigSetting(inputs.repo, configSetting);
  return { head };
}
