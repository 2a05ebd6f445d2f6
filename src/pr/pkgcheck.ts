import { spawn } from 'node:child_process';
import type { Level } from '../lint/types.js';
import { hasTool } from '../lint/external-tools.js';
import { gitText, resolveCommit } from './git-read.js';
import { remotes } from './remote.js';
import type { CommitInfo, PrResult, ResolvedRange } from './types.js';
import { touched } from './message-check.js';

/**
 * pkgcheck, when the user has it: `pkgcheck scan --commits A..B` with the
 * git checks selected on top of its defaults, read through its JsonReporter
 * (one JSON object per line, nested category → package → version → "_level"
 * → keyword → message). Never required: without it, the report says so.
 */

export const PKGCHECK_CHECKS = '+GitCommitMessageCheck,+GitPkgCommitsCheck';

export interface PkgcheckResult {
  keyword: string;
  level: Level;
  message: string;
  category?: string;
  package?: string;
  version?: string;
  /** For commit results: the (abbreviated) commit id pkgcheck names in its message. */
  commit?: string;
}

export interface PkgcheckRun {
  /** installed: found on PATH; ran: it ran and its output was read. */
  installed: boolean;
  ran: boolean;
  args?: string[];
  /** Why it did not run, or what went wrong. */
  reason?: string;
  results: PkgcheckResult[];
}

const LEVELS = new Set(['error', 'warning', 'style', 'info']);

/** Every result in JsonReporter output; lines that are not its JSON are ignored. */
export function parseJsonReporter(text: string): PkgcheckResult[] {
  const out: PkgcheckResult[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim().startsWith('{')) continue;
    let data: unknown;
    try {
      data = JSON.parse(line);
    } catch {
      continue;
    }
    walk(data, [], out);
  }
  return out;
}

function walk(node: unknown, path: string[], out: PkgcheckResult[]): void {
  if (!node || typeof node !== 'object') return;
  for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
    if (key.startsWith('_') && LEVELS.has(key.slice(1)) && value && typeof value === 'object') {
      for (const [keyword, message] of Object.entries(value as Record<string, unknown>)) {
        const text = String(message);
        const [category, pkg, version] = path;
        const commit = path.length === 0 ? /^commit ([0-9a-f]{4,64})\b/.exec(text)?.[1] : undefined;
        out.push({
          keyword,
          level: key.slice(1) as Level,
          message: text,
          ...(category ? { category } : {}),
          ...(pkg ? { package: pkg } : {}),
          ...(version ? { version } : {}),
          ...(commit ? { commit } : {}),
        });
      }
    } else if (path.length < 3) {
      walk(value, [...path, key], out);
    }
  }
}

/** The remote a ref like "upstream/master" belongs to, if it is a remote-tracking ref. */
async function remoteOf(dir: string, ref: string | undefined): Promise<string | undefined> {
  if (!ref) return undefined;
  return (await remotes(dir)).sort((a, b) => b.length - a.length).find((r) => ref === r || ref.startsWith(`${r}/`));
}

export async function runPkgcheck(dir: string, range: ResolvedRange, options: { enabled: boolean; onStart?: () => void }): Promise<PkgcheckRun> {
  const installed = hasTool('pkgcheck');
  if (!options.enabled) return { installed, ran: false, reason: 'disabled with --no-pkgcheck', results: [] };
  if (!installed) return { installed, ran: false, reason: 'pkgcheck is not installed: only rocm-ebuild\'s checks ran', results: [] };
  if (!range.base) return { installed, ran: false, reason: `pkgcheck needs a base commit to compare with (the range is ${range.label})`, results: [] };
  if (range.head !== (await resolveCommit(dir, 'HEAD'))) {
    return { installed, ran: false, reason: `pkgcheck scans the checked-out tree, and the range ends at ${range.headRef}, not HEAD`, results: [] };
  }
  // pkgcheck --commits stashes uncommitted and untracked files while it scans, and a
  // stash it cannot re-apply stays behind: never hand it a worktree with work in it.
  const dirty = (await gitText(dir, ['status', '--porcelain', '--untracked-files=normal'])).split('\n').filter(Boolean);
  if (dirty.length > 0) {
    return {
      installed,
      ran: false,
      reason: `pkgcheck did not run: the worktree has ${dirty.length} uncommitted or untracked path${dirty.length === 1 ? '' : 's'}, which pkgcheck --commits would stash while it scans; commit or stash them first`,
      results: [],
    };
  }
  const remote = await remoteOf(dir, range.baseRef);
  // pkgcheck's git checks compare <remote>/HEAD..HEAD; name the remote the range starts from.
  const args = ['scan', '--commits', `${range.base}..${range.head}`, '-c', PKGCHECK_CHECKS, '-R', 'JsonReporter', ...(remote ? ['--git-remote', remote] : [])];
  options.onStart?.();
  const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn('pkgcheck', args, { cwd: dir, env: process.env });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', (e) => resolve({ code: null, stdout: out, stderr: e.message }));
    child.on('close', (c) => resolve({ code: c, stdout: out, stderr: err }));
  });
  const results = parseJsonReporter(stdout);
  // Exit 1 means "results at the failing level were found": the output is still whole.
  if ((code !== 0 && code !== 1) || /pkgcheck scan: error:/.test(stderr)) {
    const first = stderr.split('\n').find((l) => /error/i.test(l)) ?? stderr.split('\n').find((l) => l.trim()) ?? `exit ${code}`;
    const stash = /stash/.test(first) ? ' (pkgcheck stashes uncommitted files while it scans: look at `git stash list`)' : '';
    return { installed, ran: false, args, reason: `pkgcheck failed: ${first.trim()}${stash}`, results };
  }
  return { installed, ran: true, args, results };
}

/**
 * Fold pkgcheck's results into ours. A finding both tools made (same
 * keyword, commit and package) becomes one result listing both; commit
 * results name their commit, package results go to the last commit of the
 * range that touched the package. Returns how many commit results were
 * about commits outside the range (pkgcheck looks at <remote>/HEAD..HEAD).
 */
export function foldPkgcheck(results: PrResult[], found: PkgcheckResult[], commits: CommitInfo[]): { outside: number } {
  let outside = 0;
  const lastTouching = new Map<string, string>();
  for (const c of commits) for (const [cat, pns] of touched(c).packages) for (const pn of pns) lastTouching.set(`${cat}/${pn}`, c.sha);
  for (const f of found) {
    let commit: string | undefined;
    if (f.commit) {
      commit = commits.find((c) => c.sha.startsWith(f.commit!))?.sha;
      if (!commit) {
        outside++;
        continue;
      }
    } else if (f.category && f.package) {
      commit = lastTouching.get(`${f.category}/${f.package}`);
    }
    const same = results.find(
      (r) =>
        r.keyword === f.keyword &&
        r.commit === commit &&
        r.category === f.category &&
        r.package === f.package &&
        (r.version === undefined || f.version === undefined || r.version === f.version) &&
        !r.sources.includes('pkgcheck'),
    );
    if (same) {
      same.sources.push('pkgcheck');
      same.pkgcheckMessage = f.message;
      continue;
    }
    results.push({
      keyword: f.keyword,
      level: f.level,
      message: f.message,
      sources: ['pkgcheck'],
      ...(commit ? { commit } : {}),
      ...(f.category ? { category: f.category } : {}),
      ...(f.package ? { package: f.package } : {}),
      ...(f.version ? { version: f.version } : {}),
    });
  }
  return { outside };
}
