import path from 'node:path';
import type { Manifest } from '../manifest/load.js';
import type { Progress } from '../util/progress.js';
import { ObjectReader, readCommits } from './git-read.js';
import { lintRange, lintTargets, StackModels } from './lint-range.js';
import { checkMessage } from './message-check.js';
import { droppedLocalChanges } from './dropped-check.js';
import { checkTreeclean } from './treeclean-check.js';
import { signatureChecks, type SignatureSummary } from './signature-check.js';
import { gentooChecks, isGentoo } from './gentoo-check.js';
import { PackageChecker } from './package-check.js';
import { foldPkgcheck, runPkgcheck } from './pkgcheck.js';
import { resolveRange, type RangeOptions } from './range.js';
import type { CommitInfo, Level, PrResult, ResolvedRange } from './types.js';
import { ebuildOf } from './overlay-paths.js';
import { printable } from '../util/printable.js';
import { byCodePoint } from '../util/order.js';

/** The commits of a range and a reader for their objects: what check and body share. */
export interface RangeContext {
  dir: string;
  range: ResolvedRange;
  commits: CommitInfo[];
  objects: ObjectReader;
}

export async function openRange(overlay: string, options: RangeOptions): Promise<RangeContext> {
  const dir = path.resolve(overlay);
  const range = await resolveRange(dir, options);
  const commits = await readCommits(dir, range.revArgs);
  return { dir, range, commits, objects: new ObjectReader(dir) };
}

export interface CheckOptions {
  manifest?: Manifest;
  /** Run pkgcheck when it is installed (default true). */
  pkgcheck?: boolean;
  /** Run shellcheck (default: when installed). */
  shellcheck?: boolean;
  progress?: Progress;
}

export interface CommitSummary {
  sha: string;
  short: string;
  summary: string;
  author: string;
  committer: string;
  date: string;
  merge: boolean;
  files: number;
}

export interface CheckReport {
  overlay: string;
  range: { label: string; origin: ResolvedRange['origin']; base: string | null; head: string; commits: number };
  commits: CommitSummary[];
  results: PrResult[];
  counts: Record<Level, number>;
  ebuildsLinted: number;
  /** Signed commits: how many, and (where layout.conf requires signing) what verifying them found. */
  signatures: SignatureSummary;
  tools: {
    pkgcheck: { installed: boolean; ran: boolean; args?: string[]; reason?: string; results: number };
    shellcheck: boolean;
  };
  notes: string[];
}

const LEVEL_ORDER: Record<Level, number> = { error: 0, warning: 1, style: 2, info: 3 };

export function countLevels(results: PrResult[]): Record<Level, number> {
  const counts: Record<Level, number> = { error: 0, warning: 0, style: 0, info: 0 };
  for (const r of results) counts[r.level]++;
  return counts;
}

export function summarize(c: CommitInfo): CommitSummary {
  return {
    sha: c.sha,
    short: c.short,
    summary: c.message.split('\n', 1)[0] ?? '',
    author: `${c.author.name} <${c.author.email}>`,
    committer: `${c.committer.name} <${c.committer.email}>`,
    date: c.committer.date,
    merge: c.parents.length > 1,
    files: c.changes.length,
  };
}

/** Every check over the range's commits, pkgcheck's results folded in. */
export async function checkRange(ctx: RangeContext, options: CheckOptions = {}): Promise<CheckReport> {
  const { commits, objects } = ctx;
  const results: PrResult[] = [];
  const notes: string[] = [];
  const packages = new PackageChecker(objects);
  const addedInRange = new Set<string>();
  const objectType = async (id: string) => (await objects.read(id))?.type;
  let n = 0;
  for (const c of commits) {
    options.progress?.step(++n, commits.length, `checking ${c.short} ${printable(c.message.split('\n', 1)[0] ?? '')}`);
    results.push(...(await checkMessage(c, { objectType })));
    if (c.parents.length > 1) continue;
    results.push(...(await checkTreeclean(c, c.message.split('\n', 1)[0] ?? '', objects)));
    results.push(...(await packages.check(c, addedInRange)));
    for (const ch of c.changes) if (ch.status !== 'D' && ch.status !== 'M' && ch.status !== 'T' && ebuildOf(ch.path)) addedInRange.add(ch.path);
  }
  const signatures = await signatureChecks(ctx.dir, ctx.range.head, commits, objects, ctx.range.baseRef ?? ctx.range.base);
  results.push(...signatures.results);
  const targets = lintTargets(commits);
  const models = options.manifest ? new StackModels(options.manifest) : undefined;
  results.push(...(await droppedLocalChanges(commits, objects, models)));
  if (commits.length > 0 && (await isGentoo(objects, ctx.range.head))) results.push(...gentooChecks(commits));
  const lint = await lintRange(targets, objects, models, {
    ...(options.shellcheck !== undefined ? { shellcheck: options.shellcheck } : {}),
    onEbuild: (done, total, file) => options.progress?.step(done, total, `lint ${printable(file)}`),
  });
  results.push(...lint.results);
  if (!lint.shellcheck && targets.length > 0) notes.push('shellcheck is not installed: the ebuilds were checked with bash -n and rocm-ebuild\'s checks only');

  options.progress?.done();
  const pk = commits.length > 0 ? await runPkgcheck(ctx.dir, ctx.range, { enabled: options.pkgcheck ?? true, onStart: () => options.progress?.step(1, 1, 'pkgcheck scan --commits') }) : { installed: false, ran: false, reason: 'no commits to scan', results: [] };
  options.progress?.done();
  if (pk.results.length > 0) {
    const { outside } = foldPkgcheck(results, pk.results, commits);
    if (outside > 0) notes.push(`pkgcheck reported ${outside} result${outside === 1 ? '' : 's'} about commits outside the range (it checks <remote>/HEAD..HEAD); left out`);
  }
  if (pk.reason && commits.length > 0) notes.push(pk.reason);

  const order = new Map(commits.map((c, i) => [c.sha, i]));
  results.sort(
    (a, b) =>
      (order.get(a.commit ?? '') ?? commits.length) - (order.get(b.commit ?? '') ?? commits.length) ||
      byCodePoint(a.category ?? '', b.category ?? '') ||
      byCodePoint(a.package ?? '', b.package ?? '') ||
      LEVEL_ORDER[a.level] - LEVEL_ORDER[b.level] ||
      byCodePoint(a.keyword, b.keyword) ||
      (a.line ?? 0) - (b.line ?? 0),
  );
  return {
    overlay: ctx.dir,
    range: { label: ctx.range.label, origin: ctx.range.origin, base: ctx.range.base ?? null, head: ctx.range.head, commits: commits.length },
    commits: commits.map(summarize),
    results,
    counts: countLevels(results),
    ebuildsLinted: lint.ebuilds,
    signatures: signatures.summary,
    tools: {
      pkgcheck: { installed: pk.installed, ran: pk.ran, ...(pk.args ? { args: pk.args } : {}), ...(pk.reason ? { reason: pk.reason } : {}), results: pk.results.length },
      shellcheck: lint.shellcheck,
    },
    notes,
  };
}
