import { signatureOf } from '../git/signing.js';
import { parseLayoutConf } from '../overlay/scan.js';
import { printable } from '../util/printable.js';
import { gitText, type ObjectReader } from './git-read.js';
import { ours } from './keywords.js';
import type { CommitInfo, PrResult } from './types.js';

/**
 * Commit signatures, where the repository requires them (metadata/layout.conf
 * at the range's end says `sign-commits = true`, as ::gentoo's does): every
 * commit must carry one, and it must verify. Whether a commit is signed is
 * read from the commit object itself; verifying is git's (`%G?`, which runs
 * gpg, gpgsm or ssh-keygen with the user's keyring or allowed signers).
 * pkgcheck has no check of its own for signatures, so the keywords are ours.
 */

export interface SignatureSummary {
  /** metadata/layout.conf at the range's end says sign-commits = true. */
  required: boolean;
  commits: number;
  signed: number;
  /** Checked only when required: signatures that verified, that failed, that could not be checked here. */
  good?: number;
  bad?: number;
  unverified?: number;
}

/** What %G? says, in words, for a signature that does not pass. */
const BAD: Record<string, string> = {
  B: 'the signature does not match the commit (changed after it was signed, or forged)',
  X: 'the signature has expired',
  Y: 'the key that made the signature has expired',
  R: 'the key that made the signature has been revoked',
};

export async function signatureChecks(dir: string, head: string, commits: CommitInfo[], objects: ObjectReader, base?: string): Promise<{ results: PrResult[]; summary: SignatureSummary }> {
  const layout = commits.length > 0 ? await objects.text(`${head}:metadata/layout.conf`) : undefined;
  const required = layout !== undefined && parseLayoutConf(layout).get('sign-commits')?.toLowerCase() === 'true';
  const signed = new Set<string>();
  for (const c of commits) {
    const o = await objects.read(c.sha);
    if (o?.type === 'commit' && signatureOf(o.content.toString('utf8'))) signed.add(c.sha);
  }
  const summary: SignatureSummary = { required, commits: commits.length, signed: signed.size };
  if (!required) return { results: [], summary };

  const verdicts = new Map<string, { code: string; key: string; signer: string }>();
  if (signed.size > 0) {
    // One git for the whole range: the signed commits on standard input, each verified once.
    const out = await gitText(dir, ['log', '--no-walk=unsorted', '--stdin', '--format=%H%x1f%G?%x1f%GK%x1f%GS'], { input: `${[...signed].join('\n')}\n` });
    for (const line of out.split('\n')) {
      const [sha, code = 'E', key = '', signer = ''] = line.split('\x1f');
      if (sha) verdicts.set(sha, { code, key, signer });
    }
  }
  const results: PrResult[] = [];
  let good = 0;
  let bad = 0;
  let unverified = 0;
  for (const c of commits) {
    const at = { commit: c.sha };
    if (!signed.has(c.sha)) {
      results.push(
        ours(
          'UnsignedCommit',
          `not signed, and metadata/layout.conf requires signed commits (sign-commits = true): sign the range again with your key, e.g. git rebase --force-rebase --gpg-sign ${base ?? '<base>'} (rocm-ebuild bump signs its commits when git can)`,
          at,
        ),
      );
      continue;
    }
    const v = verdicts.get(c.sha) ?? { code: 'E', key: '', signer: '' };
    const by = [v.key ? `key ${printable(v.key, { oneLine: true })}` : '', v.signer ? printable(v.signer, { oneLine: true }) : ''].filter(Boolean).join(', ');
    if (v.code === 'G' || v.code === 'U') {
      good++;
    } else if (BAD[v.code]) {
      bad++;
      results.push(ours('BadCommitSignature', `${BAD[v.code]}${by ? ` (${by})` : ''}: sign the commit again`, at));
    } else {
      unverified++;
      results.push(
        ours(
          'UnverifiedCommitSignature',
          `signed${by ? ` (${by})` : ''}, but the signature cannot be checked here: import the signer's public key (gpg --recv-keys, or gpg --import), or for an SSH signature list the key in gpg.ssh.allowedSignersFile`,
          at,
        ),
      );
    }
  }
  return { results, summary: { ...summary, good, bad, unverified } };
}

/** One line for the report: how many commits are signed, and what checking them found. */
export function describeSignatures(s: SignatureSummary): string {
  const of = `${s.signed} of ${s.commits} commit${s.commits === 1 ? '' : 's'} signed`;
  if (!s.required) return `signatures: ${of} (not checked: metadata/layout.conf does not require signed commits)`;
  const found = [`${s.good ?? 0} verified`, ...(s.bad ? [`${s.bad} bad`] : []), ...(s.unverified ? [`${s.unverified} not verifiable here`] : [])].join(', ');
  return `signatures: ${of}, ${found} (metadata/layout.conf requires signed commits)`;
}
