import { gitText, runGit } from './git-read.js';

export interface GithubRepo {
  owner: string;
  repo: string;
}

/**
 * The GitHub repository a remote URL points to: https://github.com/o/r(.git),
 * git@github.com:o/r.git, ssh://git@github.com/o/r.git, with or without
 * credentials in the URL.
 */
export function parseGithubUrl(url: string): GithubRepo | undefined {
  const m =
    /^(?:https?|git|ssh):\/\/(?:[^@/]*@)?github\.com(?::\d+)?\/([A-Za-z0-9-]+)\/([A-Za-z0-9._-]+?)(?:\.git)?\/?$/i.exec(url) ??
    /^(?:[^@/]+@)?github\.com:([A-Za-z0-9-]+)\/([A-Za-z0-9._-]+?)(?:\.git)?\/?$/i.exec(url);
  return m ? { owner: m[1]!, repo: m[2]! } : undefined;
}

/** A URL safe to print: a password or token in it is replaced by ***. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)([^@/]*)@/i, (_, scheme: string, userinfo: string) => `${scheme}${userinfo.includes(':') ? `${userinfo.split(':')[0]}:***` : '***'}@`);
}

/**
 * A remote's URL as the user configured it (`git remote get-url` would
 * apply url.*.insteadOf rewrites; the GitHub name is in what was written).
 */
export async function remoteUrl(dir: string, remote: string, push = false): Promise<string | undefined> {
  if (push) {
    const r = await runGit(dir, ['config', '--get', `remote.${remote}.pushurl`], { okCodes: [1] });
    const pushUrl = r.stdout.toString('utf8').trim();
    if (pushUrl) return pushUrl;
  }
  const r = await runGit(dir, ['config', '--get', `remote.${remote}.url`], { okCodes: [1] });
  return r.stdout.toString('utf8').trim() || undefined;
}

export async function remotes(dir: string): Promise<string[]> {
  return (await gitText(dir, ['remote'])).split('\n').filter(Boolean);
}

/** The remote a remote-tracking ref ("upstream/master") belongs to, and the branch. */
export async function splitRemoteRef(dir: string, ref: string | undefined): Promise<{ remote: string; branch: string } | undefined> {
  if (!ref) return undefined;
  const names = (await remotes(dir)).sort((a, b) => b.length - a.length);
  const remote = names.find((r) => ref.startsWith(`${r}/`));
  return remote ? { remote, branch: ref.slice(remote.length + 1) } : undefined;
}
