import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { copyFile, mkdir, readdir, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gitEnv, root } from '../helpers/project.js';

export const fixtures = path.join(root, 'test', 'fixtures', 'upstream');

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = {}, cwd?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: { ...process.env, ...gitEnv(), ...env }, ...(cwd ? { cwd } : {}) });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('close', (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`${cmd} ${args.join(' ')}: ${err}`))));
  });
}

const identity = {
  GIT_AUTHOR_NAME: 'Fixture',
  GIT_AUTHOR_EMAIL: 'fixture@example.org',
  GIT_COMMITTER_NAME: 'Fixture',
  GIT_COMMITTER_EMAIL: 'fixture@example.org',
  GIT_AUTHOR_DATE: '2025-01-01T00:00:00Z',
  GIT_COMMITTER_DATE: '2025-01-01T00:00:00Z',
};

/**
 * A bare repository holding one commit per release, each with exactly the
 * files of a directory, tagged as given (annotated tags, as AMD's are), plus
 * extra lightweight tags on the last commit.
 */
export async function bareRepo(gitDir: string, releases: { tag: string; tree: string }[], extraTags: string[] = []): Promise<void> {
  await mkdir(gitDir, { recursive: true });
  await run('git', ['init', '--bare', '--quiet', gitDir]);
  let parent: string | undefined;
  const index = path.join(gitDir, 'fixture-index');
  for (const r of releases) {
    const env = { ...identity, GIT_DIR: gitDir, GIT_WORK_TREE: r.tree, GIT_INDEX_FILE: index };
    await run('git', ['read-tree', '--empty'], env);
    await run('git', ['add', '-A', '.'], env, r.tree);
    const tree = await run('git', ['write-tree'], env);
    const commit: string = await run('git', ['commit-tree', tree, '-m', r.tag, ...(parent ? ['-p', parent] : [])], env);
    await run('git', ['tag', '-a', '-m', r.tag, r.tag, commit], env);
    parent = commit;
  }
  if (parent) {
    await run('git', ['--git-dir', gitDir, 'update-ref', 'refs/heads/main', parent]);
    await run('git', ['--git-dir', gitDir, 'symbolic-ref', 'HEAD', 'refs/heads/main']);
    for (const t of extraTags) await run('git', ['--git-dir', gitDir, 'tag', t, parent]);
  }
  rmSync(index, { force: true });
}

export async function gitArchive(gitDir: string, tag: string, prefix: string, out: string): Promise<void> {
  await mkdir(path.dirname(out), { recursive: true });
  await run('git', ['--git-dir', gitDir, 'archive', '--format=tar.gz', `--prefix=${prefix}/`, '-o', out, tag]);
}

export interface Universe {
  dir: string;
  /** file:// URL standing in for https://github.com */
  baseUrl: string;
  /** The same repositories as a {owner}/{repo} path template (how local mirrors are given). */
  template: string;
}

let shared: Promise<Universe> | undefined;

/**
 * The upstream of the test stack, built once per test run and shared by the
 * tests that only read it: bare repositories ROCm/<repo> with rocm-6.2.2 and
 * rocm-6.3.3 tags from the fixture trees, ROCm/ROCm with the two release
 * manifests, and ROCm/oldtool answering as ROCm/newtool (a renamed
 * repository, as GitHub redirects them).
 */
export function universe(): Promise<Universe> {
  shared ??= (async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'rocm-ebuild-upstream-'));
    process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
    const repos = path.join(dir, 'git', 'ROCm');
    const trees = path.join(fixtures, 'trees');
    await bareRepo(path.join(repos, 'gpulib'), [
      { tag: 'rocm-6.2.2', tree: path.join(trees, 'gpulib-6.2.2') },
      { tag: 'rocm-6.3.3', tree: path.join(trees, 'gpulib-6.3.3') },
    ]);
    for (const repo of await readdir(path.join(trees, 'small'))) {
      const tags = (await readdir(path.join(trees, 'small', repo))).sort();
      await bareRepo(path.join(repos, repo), tags.map((tag) => ({ tag, tree: path.join(trees, 'small', repo, tag) })));
    }
    // The release repository: default.xml at each release tag.
    const rel = path.join(dir, 'releases');
    for (const v of ['6.2.2', '6.3.3']) {
      await mkdir(path.join(rel, v), { recursive: true });
      await copyFile(path.join(fixtures, 'release-manifests', `stack-${v}.xml`), path.join(rel, v, 'default.xml'));
    }
    await bareRepo(path.join(repos, 'ROCm'), ['6.2.2', '6.3.3'].map((v) => ({ tag: `rocm-${v}`, tree: path.join(rel, v) })));
    // oldtool was renamed newtool: the old name answers with the new repository.
    rmSync(path.join(repos, 'oldtool'), { recursive: true, force: true });
    await symlink('newtool', path.join(repos, 'oldtool'));
    return { dir, baseUrl: `file://${path.join(dir, 'git')}`, template: `${path.join(dir, 'git')}/{owner}/{repo}` };
  })();
  return shared;
}

/** A writable copy of the fixture stack (and, with `valid`, the variant whose 6.3.3 draft validates). */
export function stackCopy(valid = false): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rocm-ebuild-upstream-stack-'));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  cpSync(path.join(fixtures, 'manifest'), dir, { recursive: true });
  if (valid) cpSync(path.join(fixtures, 'manifest-valid'), dir, { recursive: true });
  cpSync(path.join(root, 'manifest', 'targets.yaml'), path.join(dir, 'targets.yaml'));
  return dir;
}
