import { spawn } from 'node:child_process';
import path from 'node:path';
import { RECORD_REF, RECORD_REMOTE_REF } from '../git/generated-record.js';
import { hasTool } from '../lint/external-tools.js';
import { commandLine } from '../util/argv.js';
import { ExitCode } from '../util/exit-codes.js';
import { printable } from '../util/printable.js';
import { prError } from './errors.js';
import { resultLine } from './format.js';
import type { SignatureSummary } from './signature-check.js';
import { gitText, resolveCommit, runGit } from './git-read.js';
import { preparePullRequest, type PrepareOptions, type Prepared } from './prepare.js';
import { requireRepository } from './range.js';
import { parseGithubUrl, redactUrl, remotes, remoteUrl, type GithubRepo } from './remote.js';
import { TEMPLATES } from './templates.js';
import type { PrResult } from './types.js';

/**
 * `pr push`: check, push the branch with the user's own git (their remote,
 * their credentials: nothing is stored or configured), then open the pull
 * request with `gh pr create`, or print what to paste when gh is missing.
 */

export interface PushOptions extends PrepareOptions {
  /** The remote to push to (the fork). */
  remote?: string;
  /** The branch name on that remote. */
  branch?: string;
  /** The repository and branch the pull request goes to (default: where the range's base comes from). */
  repo?: string;
  base?: string;
  draft: boolean;
  dryRun: boolean;
  force: boolean;
}

export interface PushResult {
  dryRun: boolean;
  title: string;
  body: string;
  remote: string;
  branch: string;
  /** The commands, as argument vectors, in the order they run (or would). */
  commands: string[][];
  pushed: boolean;
  /** The pull request gh opened. */
  url?: string;
  /** Without gh: the page where GitHub opens the pull request from the pushed branch. */
  compareUrl?: string;
  /** Error-level results pushed anyway with --force. */
  forced: PrResult[];
  /** The range's signed commits, as pr check counted and verified them. */
  signatures: SignatureSummary;
  warnings: string[];
}

/** Tokens and passwords in URLs git or gh print are not echoed. */
function redactText(text: string): string {
  // What git and gh print may quote the remote's own messages ("remote: …"): shown, never acted on.
  return printable(text).replace(/[a-z][a-z0-9+.-]*:\/\/[^\s'"]+/gi, (u) => redactUrl(u));
}

async function configValue(dir: string, key: string): Promise<string | undefined> {
  const r = await runGit(dir, ['config', '--get', key], { okCodes: [1] });
  return r.stdout.toString('utf8').trim() || undefined;
}

/** A name git accepts for a remote: refs/remotes/<name>/… must be a valid ref (as `git remote add` checks). */
async function validRemoteName(dir: string, name: string): Promise<boolean> {
  if (name === '' || /[\x00-\x1f\x7f]/.test(name)) return false;
  const r = await runGit(dir, ['check-ref-format', `refs/remotes/${name}/HEAD`], { okCodes: [1, 128] });
  return r.code === 0;
}

/** A branch name git accepts (`git check-ref-format --branch`), and not one that reads as an option. */
async function validBranchName(dir: string, name: string): Promise<boolean> {
  if (name === '' || name.startsWith('-') || /[\x00-\x1f\x7f]/.test(name)) return false;
  const r = await runGit(dir, ['check-ref-format', '--branch', name], { okCodes: [1, 128] });
  return r.code === 0;
}

/** The remote git itself would push the current branch to: pushRemote, pushDefault, the branch's remote, origin. */
async function pushRemote(dir: string, branch: string | undefined): Promise<string> {
  return (
    (branch ? await configValue(dir, `branch.${branch}.pushRemote`) : undefined) ??
    (await configValue(dir, 'remote.pushDefault')) ??
    (branch ? await configValue(dir, `branch.${branch}.remote`) : undefined) ??
    'origin'
  );
}

function run(cmd: string, args: string[], cwd: string, input?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // stdin is a pipe even without input: git and gh must not wait for a prompt we cannot answer.
    const child = spawn(cmd, args, { cwd, env: { ...process.env, GIT_TERMINAL_PROMPT: process.env.GIT_TERMINAL_PROMPT ?? '0', GH_PROMPT_DISABLED: '1' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', (e) => resolve({ code: null, stdout, stderr: e.message }));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.on('error', () => {});
    child.stdin.end(input ?? '');
  });
}

/** Where the push goes, checked before anything else: a typo in a flag must not cost a whole check. */
async function pushTargets(o: PushOptions): Promise<{ dir: string; remote: string; branch: string; repo?: GithubRepo }> {
  const dir = path.resolve(o.overlay);
  await requireRepository(dir);
  const current = (await gitText(dir, ['symbolic-ref', '--short', '-q', 'HEAD']).catch(() => '')).trim() || undefined;
  // From --remote or from the repository's config (branch.<name>.pushRemote): either way a name git
  // itself accepts for a remote, and one that is configured, never a URL or anything else.
  const fromConfig = o.remote === undefined;
  const remote = o.remote ?? (await pushRemote(dir, current));
  const where = fromConfig ? ` (the push remote git's config names for ${current ?? 'HEAD'})` : '';
  if (!(await validRemoteName(dir, remote))) {
    throw prError(`${printable(JSON.stringify(remote))}${where} is not a valid remote name`, ExitCode.invalidInput, 'name a configured remote with --remote (git remote -v lists them)');
  }
  const known = await remotes(dir);
  if (!known.includes(remote)) {
    throw prError(`no remote "${remote}" in ${dir}${where}`, ExitCode.invalidInput, known.length ? `remotes: ${known.map((k) => printable(k, { oneLine: true })).join(', ')}; choose one with --remote` : 'add your fork: git remote add fork https://github.com/<you>/<repo>.git');
  }
  const branch = o.branch ?? current;
  if (!branch) throw prError('HEAD is detached: name the branch to push with --branch', ExitCode.invalidInput);
  if (!(await validBranchName(dir, branch))) throw prError(`${printable(JSON.stringify(branch))} is not a valid branch name`, ExitCode.invalidInput);
  if (o.base !== undefined && !(await validBranchName(dir, o.base))) throw prError(`--base ${printable(JSON.stringify(o.base))} is not a valid branch name`, ExitCode.invalidInput);
  let repo: GithubRepo | undefined;
  if (o.repo) {
    const m = /^([A-Za-z0-9-]+)\/([A-Za-z0-9._-]+)$/.exec(o.repo);
    if (!m) throw prError(`--repo ${printable(o.repo, { oneLine: true })}: expected OWNER/REPO`, ExitCode.invalidInput);
    repo = { owner: m[1]!, repo: m[2]! };
  }

  return { dir, remote, branch, ...(repo ? { repo } : {}) };
}

export async function runPush(o: PushOptions): Promise<PushResult & { prepared: Prepared }> {
  const { dir, remote, branch, repo } = await pushTargets(o);
  const prepared = await preparePullRequest(o);
  const { ctx, report, body, markdown } = prepared;
  if (report.range.commits === 0) {
    throw prError(`${report.range.label}: no commits, nothing to push`, ExitCode.invalidInput, 'commit the changes first (rocm-ebuild bump commits them), or give --range');
  }
  const errors = report.results.filter((r) => r.level === 'error');
  const short = (sha: string) => sha.slice(0, 12);
  if (errors.length > 0 && !o.force) {
    const lines = errors.slice(0, 30).map((r) => `  ${resultLine(r, short)}`);
    if (errors.length > 30) lines.push(`  … and ${errors.length - 30} more`);
    throw prError(
      `pr check found ${errors.length} error${errors.length === 1 ? '' : 's'}; nothing was pushed:\n${lines.join('\n')}`,
      ExitCode.qaFailed,
      'fix the commits (git rebase -i), or push anyway with --force',
      { errors },
    );
  }
  const warnings: string[] = [];
  if (errors.length > 0) warnings.push(`pushing despite ${errors.length} error${errors.length === 1 ? '' : 's'} from pr check (--force)`);

  const head = ctx.range.head;
  const source = head === (await resolveCommit(dir, 'HEAD')) ? 'HEAD' : head;
  // The user's own git and its configuration (hooks, the remote's receive-pack) run as always;
  // what this command adds is only operands, after `--`.
  // The record of what bump generated goes along: a second clone (or a co-maintainer) fetching the
  // fork gets it, and bump there tells hand edits from an older manifest. It is never part of the pull request.
  const record = (await resolveCommit(dir, RECORD_REF)) !== undefined;
  const push = commandLine(['git', 'push'], [], [remote, `${source}:refs/heads/${branch}`, ...(record ? [`${RECORD_REF}:${RECORD_REMOTE_REF}`] : [])]);

  // Where the pull request goes, and from which repository.
  const base: GithubRepo | undefined = repo ?? prepared.target?.github;
  const baseBranch = o.base ?? (prepared.target?.branch && prepared.target.branch !== 'HEAD' ? prepared.target.branch : undefined) ?? TEMPLATES[body.template.name].baseBranch ?? 'master';
  const forkUrl = await remoteUrl(dir, remote, true);
  const fork = forkUrl ? parseGithubUrl(forkUrl) : undefined;
  const headSpec = fork && base && (fork.owner !== base.owner || fork.repo !== base.repo) ? `${fork.owner}:${branch}` : branch;
  // gh takes no operands here: every value is joined to its flag (--title=-x stays a title).
  const gh =
    base && hasTool('gh')
      ? commandLine(['gh', 'pr', 'create'], [['--repo', `${base.owner}/${base.repo}`], ['--base', baseBranch], ['--head', headSpec], ['--title', body.title], ['--body-file', '-'], ...(o.draft ? ['--draft'] : [])])
      : undefined;
  const compareUrl = base ? `https://github.com/${base.owner}/${base.repo}/compare/${encodeURIComponent(baseBranch)}...${fork ? `${fork.owner}:` : ''}${encodeURIComponent(branch)}?expand=1` : undefined;
  if (!base) warnings.push(`the pull request's repository is not known (the range's base ${ctx.range.baseRef ?? 'is no remote branch'}${prepared.target ? ` on a remote that is not on GitHub` : ''}): give --repo OWNER/REPO, or open it by hand with the text below`);
  else if (!gh) warnings.push('gh (GitHub CLI) is not installed: open the pull request from the URL below and paste the title and text');

  const result: PushResult & { prepared: Prepared } = {
    prepared,
    dryRun: o.dryRun,
    title: body.title,
    body: markdown,
    remote,
    branch,
    commands: gh ? [push, gh] : [push],
    pushed: false,
    ...(compareUrl && !gh ? { compareUrl } : {}),
    forced: errors,
    signatures: report.signatures,
    warnings,
  };
  if (o.dryRun) return result;

  const pushed = await run(push[0]!, push.slice(1), dir);
  if (pushed.code !== 0) {
    throw prError(`git push failed (exit ${pushed.code}): ${redactText(pushed.stderr.trim())}`, ExitCode.fetchFailed, 'if the branch exists on the remote with other commits, push it yourself with git push --force-with-lease, then run pr push again');
  }
  result.pushed = true;
  if (gh) {
    const created = await run(gh[0]!, gh.slice(1), dir, markdown);
    if (created.code !== 0) {
      throw prError(`gh pr create failed (exit ${created.code}): ${redactText(created.stderr.trim())}; the branch ${branch} was pushed to ${remote}`, ExitCode.fetchFailed, compareUrl ? `open the pull request at ${compareUrl}` : undefined);
    }
    const url = created.stdout.split('\n').map((l) => l.trim()).reverse().find((l) => /^https:\/\/\S+$/.test(l));
    if (url) result.url = url;
  }
  return result;
}
