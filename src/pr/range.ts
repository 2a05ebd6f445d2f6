import { prError } from './errors.js';
import { ExitCode } from '../util/exit-codes.js';
import { gitText, resolveCommit, runGit } from './git-read.js';
import type { ResolvedRange } from './types.js';

export interface RangeOptions {
  /** "A..B", or "A" for A..HEAD (pkgcheck's --commits convention). */
  range?: string;
  /** Every commit reachable from the range's end, the root commit included. */
  root?: boolean;
}

/** The overlay must be the top of a git work tree with at least one commit. */
export async function requireRepository(dir: string): Promise<void> {
  let top: string;
  try {
    top = (await gitText(dir, ['rev-parse', '--show-toplevel'])).trim();
  } catch {
    throw prError(`${dir} is not a git repository`, ExitCode.overlayRefused, 'give the overlay with --overlay DIR (the directory holding profiles/ and the category directories)');
  }
  if (!top) throw prError(`${dir} is not inside a git work tree`, ExitCode.overlayRefused);
  if (!(await resolveCommit(dir, 'HEAD'))) {
    throw prError(`${dir} has no commits yet: there is nothing to check`, ExitCode.invalidInput, 'run `rocm-ebuild bump <version> --overlay DIR` first, or commit your changes');
  }
}

async function mustResolve(dir: string, rev: string): Promise<string> {
  const id = await resolveCommit(dir, rev);
  if (!id) throw prError(`unknown revision "${rev}" in ${dir}`, ExitCode.invalidInput, 'give a branch, tag or commit id, e.g. --range origin/master..HEAD');
  return id;
}

/**
 * The commits a pull request would carry. Given: `A..B` or `A` (= A..HEAD).
 * Otherwise, in order: the current branch's upstream, origin/HEAD, every
 * commit not on any remote-tracking branch. `--root` takes every commit
 * reachable from the end instead (a new overlay that was never pushed).
 */
export async function resolveRange(dir: string, options: RangeOptions = {}): Promise<ResolvedRange> {
  await requireRepository(dir);
  const spec = options.range?.trim();
  if (spec !== undefined && spec !== '') {
    if (spec.includes('...')) {
      throw prError(`--range ${spec}: a symmetric difference (A...B) is not a pull request's commits`, ExitCode.invalidInput, 'use A..B: the commits reachable from B that A does not have');
    }
    if (options.root) {
      if (spec.includes('..')) throw prError('--root takes the range end only (e.g. --range HEAD --root), not A..B', ExitCode.invalidInput);
      const head = await mustResolve(dir, spec);
      return { label: `${spec} (every commit)`, origin: 'root', headRef: spec, head, revArgs: [head] };
    }
    const [a, b] = spec.includes('..') ? (spec.split('..', 2) as [string, string]) : [spec, ''];
    if (!a) throw prError(`--range ${spec}: the start is missing (A..B)`, ExitCode.invalidInput, 'to check every commit up to B, use --range B --root');
    const headRef = b || 'HEAD';
    const [base, head] = await Promise.all([mustResolve(dir, a), mustResolve(dir, headRef)]);
    return { label: `${a}..${headRef}`, origin: 'given', baseRef: a, base, headRef, head, revArgs: [head, '--not', base] };
  }
  const head = await mustResolve(dir, 'HEAD');
  if (options.root) return { label: 'HEAD (every commit)', origin: 'root', headRef: 'HEAD', head, revArgs: [head] };

  const upstream = await runGit(dir, ['rev-parse', '--abbrev-ref', '--symbolic-full-name', '@{upstream}'], { okCodes: [128] });
  const upstreamRef = upstream.code === 0 ? upstream.stdout.toString('utf8').trim() : '';
  if (upstreamRef) {
    const base = await mustResolve(dir, upstreamRef);
    return { label: `${upstreamRef}..HEAD`, origin: 'upstream', baseRef: upstreamRef, base, headRef: 'HEAD', head, revArgs: [head, '--not', base] };
  }
  const originHead = await resolveCommit(dir, 'refs/remotes/origin/HEAD');
  if (originHead) {
    const name = (await gitText(dir, ['rev-parse', '--abbrev-ref', 'refs/remotes/origin/HEAD'])).trim() || 'origin/HEAD';
    return { label: `${name}..HEAD`, origin: 'origin-head', baseRef: name, base: originHead, headRef: 'HEAD', head, revArgs: [head, '--not', originHead] };
  }
  const remotes = (await gitText(dir, ['for-each-ref', '--format=%(refname)', 'refs/remotes'])).split('\n').filter(Boolean);
  if (remotes.length > 0) {
    return {
      label: 'HEAD, commits on no remote branch',
      origin: 'unpushed',
      headRef: 'HEAD',
      head,
      revArgs: [head, '--not', ...remotes],
      excluded: remotes.map((r) => r.replace(/^refs\/remotes\//, '')),
    };
  }
  throw prError(
    `cannot tell which commits of ${dir} are new: the branch has no upstream, there is no origin/HEAD and no remote-tracking branch`,
    ExitCode.invalidInput,
    'give the range (--range origin/master..HEAD), fetch the repository the pull request goes to ' +
      '(git remote add origin https://github.com/gentoo/gentoo.git && git fetch origin), ' +
      'or check every commit of a new overlay with --root',
  );
}
