import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runGitFor } from './run.js';

/**
 * Diffs and three-way merges of texts, by git itself (`git diff --no-index`,
 * `git merge-file`): the same algorithm, hunks and conflict markers a
 * maintainer sees in git, and nothing of ours to get wrong. The texts go to
 * a private temporary directory, never into the overlay or its .git: a dry
 * run and a refused bump leave the repository byte for byte as it was.
 */

/** git with no repository involved: GIT_DIR and friends are dropped, and the user's diff drivers and colours do not apply. */
const git = (args: string[], cwd: string, ok: (code: number) => boolean) =>
  runGitFor(cwd, args, ok, { env: { GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' } });

async function withFiles<T>(texts: Record<string, string>, run: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'rocm-ebuild-merge-'));
  try {
    for (const [name, text] of Object.entries(texts)) await writeFile(path.join(dir, name), text);
    return await run(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * A unified diff from `before` to `after`, with `a/<label>` and `b/<label>`
 * headers as git prints them ('' when the texts are equal).
 */
export async function unifiedDiff(before: string, after: string, labels: { before: string; after: string }, context = 3): Promise<string> {
  if (before === after) return '';
  return withFiles({ before, after }, async (dir) => {
    const r = await git(['diff', '--no-index', '--no-color', '--no-ext-diff', `-U${context}`, '--', 'before', 'after'], dir, (c) => c === 0 || c === 1);
    // git names the temporary files; the reader wants the ebuilds'.
    return r.stdout
      .replace(/^diff --git a\/before b\/after\n(?:index .*\n)?/, '')
      .replace(/^--- a\/before$/m, `--- a/${labels.before}`)
      .replace(/^\+\+\+ b\/after$/m, `+++ b/${labels.after}`);
  });
}

/** The lines a diff adds and removes, without headers and context: what a commit body lists. */
export function changedLines(diff: string): { added: string[]; removed: string[] } {
  const added: string[] = [];
  const removed: string[] = [];
  for (const line of diff.split('\n')) {
    if (line.startsWith('+++ ') || line.startsWith('--- ')) continue;
    if (line.startsWith('+')) added.push(line.slice(1));
    else if (line.startsWith('-')) removed.push(line.slice(1));
  }
  return { added, removed };
}

export interface MergeResult {
  /** The merged text, with conflict markers where `conflicts` > 0. */
  text: string;
  conflicts: number;
}

/**
 * Three-way merge: the change from `base` to `theirs` applied to `ours`
 * (git merge-file ours base theirs). Conflicts are counted, and marked in
 * the text with the labels given.
 */
export async function mergeTexts(
  base: string,
  ours: string,
  theirs: string,
  labels: { base: string; ours: string; theirs: string },
): Promise<MergeResult> {
  return withFiles({ base, ours, theirs }, async (dir) => {
    const r = await git(
      ['merge-file', '-p', '-L', labels.ours, '-L', labels.base, '-L', labels.theirs, 'ours', 'base', 'theirs'],
      dir,
      // The exit code is the number of conflicts (capped at 127); negative (255) on error.
      (c) => c >= 0 && c < 128,
    );
    return { text: r.stdout, conflicts: r.code };
  });
}
