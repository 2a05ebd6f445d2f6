import type { Manifest } from '../manifest/load.js';
import type { Progress } from '../util/progress.js';
import { gatherBody, renderBody, type BodyData } from './body.js';
import { checkRange, openRange, type CheckReport, type RangeContext } from './check.js';
import { gitText } from './git-read.js';
import { parseGithubUrl, remotes, remoteUrl, splitRemoteRef, type GithubRepo } from './remote.js';
import type { RangeOptions } from './range.js';
import { loadTestReports } from './test-reports.js';
import { templateFor, type TemplateName } from './templates.js';

export interface PrepareOptions extends RangeOptions {
  overlay: string;
  manifest?: Manifest;
  /** Undefined: chosen from the repository the pull request goes to. */
  template?: TemplateName;
  tests?: string[];
  pkgcheck?: boolean;
  progress?: Progress;
}

export interface Prepared {
  ctx: RangeContext;
  report: CheckReport;
  body: BodyData;
  markdown: string;
  /** The repository the range's base comes from, when it is a GitHub remote. */
  target?: { remote: string; branch: string; github?: GithubRepo };
}

/**
 * Where the pull request goes: the remote and branch of the range's base
 * ("upstream/master"), else origin and its default branch (a range given as
 * commit ids still goes to the repository the clone came from).
 */
export async function baseTarget(ctx: RangeContext): Promise<Prepared['target']> {
  const split = (await splitRemoteRef(ctx.dir, ctx.range.baseRef)) ?? ((await remotes(ctx.dir)).includes('origin') ? { remote: 'origin', branch: 'HEAD' } : undefined);
  if (!split) return undefined;
  const url = await remoteUrl(ctx.dir, split.remote);
  const github = url ? parseGithubUrl(url) : undefined;
  let branch = split.branch;
  if (branch === 'HEAD') {
    // <remote>/HEAD names the remote's default branch.
    const full = (await gitText(ctx.dir, ['symbolic-ref', '-q', `refs/remotes/${split.remote}/HEAD`]).catch(() => '')).trim();
    branch = full ? full.replace(`refs/remotes/${split.remote}/`, '') : branch;
  }
  return { remote: split.remote, branch, ...(github ? { github } : {}) };
}

/** Check the range and write the pull request's text: what `pr body` prints and `pr push` sends. */
export async function preparePullRequest(o: PrepareOptions): Promise<Prepared> {
  const tests = o.tests?.length ? (await loadTestReports(o.tests)).map((t) => t.report) : undefined;
  const ctx = await openRange(o.overlay, { ...(o.range ? { range: o.range } : {}), ...(o.root ? { root: o.root } : {}) });
  try {
    const report = await checkRange(ctx, {
      ...(o.manifest ? { manifest: o.manifest } : {}),
      ...(o.pkgcheck !== undefined ? { pkgcheck: o.pkgcheck } : {}),
      ...(o.progress ? { progress: o.progress } : {}),
    });
    const target = await baseTarget(ctx);
    const repoName = (await ctx.objects.text(`${ctx.range.head}:profiles/repo_name`))?.trim();
    const template = o.template ?? templateFor(target?.github, repoName);
    const body = await gatherBody(ctx, report, { template, ...(o.manifest ? { manifest: o.manifest } : {}), ...(tests ? { tests } : {}) });
    return { ctx, report, body, markdown: renderBody(body), ...(target ? { target } : {}) };
  } finally {
    ctx.objects.close();
  }
}
