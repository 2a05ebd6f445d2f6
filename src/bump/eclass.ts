import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { eclassApiNames, eclassPath, usedApiNames, withMaintainersOf } from '../eclass/index.js';
import { commitMessage, SUMMARY_MAX } from '../git/messages.js';
import { gitIdentity, gitSignatures, OverlayRepo, type Person } from '../git/repo.js';
import { commitSigning, type CommitSigning } from '../git/signing.js';
import { unifiedDiff } from '../git/text-merge.js';
import { refuseLinksOut } from '../overlay/paths.js';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';
import { Session } from './hold.js';
import type { OverlayRead } from './read.js';
import type { PackageWork } from './reconcile.js';

/** ::gentoo's eclass changes go to this list for review before they are merged (the eclass policy). */
export const GENTOO_DEV = 'gentoo-dev@lists.gentoo.org';
const ECLASS = 'eclass/rocm.eclass';

/** The names of our eclass the new ebuilds use that `tree` (the repository's eclass, undefined: none) lacks, sorted. */
export function missingEclassNames(tree: string | undefined, ours: string, writes: readonly PackageWork[]): string[] {
  const api = eclassApiNames(ours);
  const have = tree === undefined ? new Set<string>() : eclassApiNames(tree);
  const used = new Set(writes.filter((w) => w.write).flatMap((w) => usedApiNames(w.write!.text, api)));
  return [...used].filter((n) => !have.has(n)).sort();
}

/**
 * ::gentoo's rocm.eclass is never changed by a bump: an eclass change there is
 * reviewed on gentoo-dev first, so it is a step of its own (`eclass update`).
 * When the new ebuilds use names it lacks, the bump stops here, before
 * anything is written, and a dry run says the same.
 */
export function refuseGentooEclassGap(dir: string, version: string, read: OverlayRead, works: readonly PackageWork[]): void {
  if (!read.gentoo) return;
  const missing = missingEclassNames(read.state.eclass, read.ourEclass, works);
  if (missing.length === 0) return;
  const what = read.state.eclass === undefined ? `has no ${ECLASS}` : `its ${ECLASS} lacks ${missing.join(', ')}`;
  throw new UserError(
    `${dir} is ::gentoo and ${what}, which the ROCm ${version} ebuilds use; a bump never changes ::gentoo's eclass (eclass changes are reviewed on gentoo-dev first); nothing was written\n` +
      `hint: update the eclass first, in its own commit, and send the review mail it writes:\n` +
      `  rocm-ebuild eclass update --overlay ${dir} --dry-run\n` +
      `  rocm-ebuild eclass update --overlay ${dir} --mail rocm-eclass.patch\n` +
      `then run the bump again`,
    ExitCode.overlayRefused,
    { eclass: { missing, command: `rocm-ebuild eclass update --overlay ${dir}` } },
  );
}

export interface EclassUpdateOptions {
  overlay: string;
  dryRun: boolean;
  /** Where the review mail goes: a file, '-' for stdout (the command prints it), undefined for none. */
  mail?: string;
  warn(message: string): void;
}

export interface EclassUpdateResult {
  overlay: string;
  gentoo: boolean;
  dryRun: boolean;
  /** false: the repository's eclass is already ours. */
  changed: boolean;
  /** API names ours has and the repository's lacks, and the other way round. */
  added: string[];
  removed: string[];
  subject?: string;
  diff: string;
  signing?: CommitSigning;
  committed: boolean;
  head?: string;
  /** The gentoo-dev review mail (format-patch style); written to `mailFile` when one was named. */
  mail?: string;
  mailFile?: string;
}

/**
 * `rocm-ebuild eclass update`: the repository's rocm.eclass replaced by the
 * one the ebuilds are generated for, as one commit of its own (signed as a
 * bump's are), with the diff and the review mail ::gentoo's eclass policy
 * asks for. An overlay keeps its copy's @MAINTAINER block.
 */
export async function runEclassUpdate(o: EclassUpdateOptions): Promise<EclassUpdateResult> {
  const dir = path.resolve(o.overlay);
  const repo = new OverlayRepo(dir);
  if (!(await repo.isRepository())) throw new UserError(`${dir} is not the top of a git repository; eclass update commits there`, ExitCode.overlayRefused);
  await refuseLinksOut(dir, [ECLASS, 'profiles/repo_name']);
  const repoName = (await readFile(path.join(dir, 'profiles/repo_name'), 'utf8').catch(() => '')).trim();
  const gentoo = repoName === 'gentoo';
  const before = await readFile(path.join(dir, ECLASS), 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  const raw = await readFile(eclassPath, 'utf8');
  const after = gentoo || before === undefined ? raw : withMaintainersOf(raw, before);
  const ours = eclassApiNames(after);
  const theirs = before === undefined ? new Set<string>() : eclassApiNames(before);
  const added = [...ours].filter((n) => !theirs.has(n)).sort();
  const removed = [...theirs].filter((n) => !ours.has(n)).sort();
  const result: EclassUpdateResult = { overlay: dir, gentoo, dryRun: o.dryRun, changed: before !== after, added, removed, diff: '', committed: false };
  if (!result.changed) return result;
  result.diff = before === undefined ? await unifiedDiff('', after, { before: ECLASS, after: ECLASS }) : await unifiedDiff(before, after, { before: ECLASS, after: ECLASS });

  const identity: Person = o.dryRun ? await gitIdentity(dir).catch(() => ({ name: 'Your Name', email: 'you@example.org' })) : await gitIdentity(dir);
  const message = updateMessage(added, removed, before === undefined, identity);
  result.subject = message.split('\n')[0]!;
  result.signing = await commitSigning(dir, { repository: true, commit: true, dryRun: o.dryRun });
  result.mail = reviewMail(message, identity, result.diff);
  if (!o.dryRun) {
    const session = await Session.open(repo, o.warn);
    try {
      const branch = await repo.branch();
      await repo.requireClean();
      const parent = await repo.head();
      const tip = await session.builder!.build(parent, [{ message, changes: [{ path: ECLASS, content: after }] }], await gitSignatures(dir), { sign: result.signing.sign });
      session.landing = true;
      await session.builder!.land(branch, parent, tip);
      result.committed = true;
      result.head = tip;
    } finally {
      await session.close();
    }
  }
  return result;
}

/** The commit message: what the eclass gains and loses, and why it goes to review. */
function updateMessage(added: string[], removed: string[], created: boolean, identity: Person): string {
  const listed = `rocm.eclass: add ${added.join(', ')}`;
  const summary = created
    ? 'rocm.eclass: new eclass'
    : added.length > 0 && listed.length - 'rocm.eclass: '.length <= SUMMARY_MAX
      ? listed
      : added.length > 0
        ? `rocm.eclass: add ${added.length} variables and functions`
        : 'rocm.eclass: update to the eclass rocm-ebuild generates for';
  const body = [
    created
      ? 'The eclass the ROCm ebuilds of rocm-ebuild are generated for.'
      : `Brings the eclass to the one the ROCm ebuilds of rocm-ebuild are generated for` +
        (added.length > 0 ? `: those ebuilds use ${added.join(', ')}, which it does not have` : ': the code of its functions changes, its names stay') +
        (removed.length > 0 ? `; ${removed.join(', ')} go, which no ebuild rocm-ebuild writes uses (check the tree's other users first)` : '') +
        '.',
    'Eclass changes are posted to the gentoo-dev mailing list for review before they are merged.',
  ];
  return commitMessage(summary, identity, body);
}

/**
 * The review mail, as `git format-patch --to` writes one: headers, the
 * commit message's body, a diffstat line, the diff.
 */
export function reviewMail(message: string, identity: Person, diff: string): string {
  const [subject = '', ...rest] = message.replace(/\n+$/, '').split('\n');
  const body = rest.join('\n').replace(/^\n+/, '');
  const plus = diff.split('\n').filter((l) => l.startsWith('+') && !l.startsWith('+++')).length;
  const minus = diff.split('\n').filter((l) => l.startsWith('-') && !l.startsWith('---')).length;
  return [
    `From: ${identity.name} <${identity.email}>`,
    `To: ${GENTOO_DEV}`,
    `Subject: [PATCH] ${subject}`,
    '',
    body,
    '---',
    ` ${ECLASS} | ${plus + minus} ${'+'.repeat(Math.min(plus, 40))}${'-'.repeat(Math.min(minus, 40))}`,
    ` 1 file changed, ${plus} insertion${plus === 1 ? '' : 's'}(+), ${minus} deletion${minus === 1 ? '' : 's'}(-)`,
    '',
    `diff --git a/${ECLASS} b/${ECLASS}`,
    diff.replace(/\n?$/, '\n'),
  ].join('\n');
}
