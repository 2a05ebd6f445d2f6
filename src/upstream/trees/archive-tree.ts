import { lstat, mkdir, mkdtemp, readFile, readlink, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { execFile, lastLine } from './exec.js';
import { sortPaths, TreeError, type SourceTree } from './source-tree.js';

/**
 * A release tarball (a distfile) read as a tree: GNU tar lists it once (the
 * listing is cached next to the other upstream data, keyed by the file's size
 * and mtime) and extracts only the members asked for, into a private
 * temporary directory that is removed afterwards. The archive's single
 * top-level directory (GitHub's `<repo>-<tag>/`) is the root.
 */
export class ArchiveTree implements SourceTree {
  private constructor(
    readonly label: string,
    private readonly archive: string,
    /** Member-name prefix of the root, e.g. "llvm-project-rocm-6.2.4/amd/comgr/". */
    private readonly prefix: string,
    private readonly all: string[],
    private readonly scratch: string,
    private readonly downloaded: number,
  ) {}

  /** `downloaded`: the bytes this run fetched to have the archive (0 when it was in the distdir). */
  static async open(archive: string, label: string, cacheDir: string, subdir?: string, downloaded = 0): Promise<ArchiveTree> {
    const members = await listing(archive, cacheDir);
    const tops = new Set(members.map((m) => m.split('/')[0]));
    let prefix = tops.size === 1 && members.some((m) => m.includes('/')) ? `${[...tops][0]}/` : '';
    if (subdir) {
      prefix += `${subdir.replace(/^\/+|\/+$/g, '')}/`;
      if (!members.some((m) => m.startsWith(prefix))) throw new TreeError(`${label} has no directory ${subdir}`, 'missing');
    }
    const files = sortPaths(
      members
        .filter((m) => m.startsWith(prefix) && !m.endsWith('/'))
        .map((m) => m.slice(prefix.length))
        .filter((m) => m !== '' && !m.split('/').includes('..')),
    );
    return new ArchiveTree(subdir ? `${label}:${subdir}` : label, archive, prefix, files, path.join(cacheDir, 'tmp'), downloaded);
  }

  transferred(): number {
    return this.downloaded;
  }

  files(): Promise<string[]> {
    return Promise.resolve(this.all);
  }

  async read(paths: string[]): Promise<Map<string, Buffer>> {
    const out = new Map<string, Buffer>();
    const known = new Set(this.all);
    const wanted = [...new Set(paths)].filter((p) => known.has(p));
    if (wanted.length === 0) return out;
    await mkdir(this.scratch, { recursive: true });
    const dir = await mkdtemp(path.join(this.scratch, 'x-'));
    try {
      // Names come from stdin, NUL-separated and verbatim: no option or
      // wildcard interpretation. Members are never extracted outside `dir`
      // (no "..", leading "/" stripped by tar) and read without following links.
      const r = await execFile(
        'tar',
        ['-x', '-f', this.archive, '-C', dir, '--no-same-owner', '--no-same-permissions', '--null', '--verbatim-files-from', '-T', '-'],
        { input: wanted.map((p) => `${this.prefix}${p}\0`).join('') },
      );
      if (r.code !== 0) throw new TreeError(`cannot unpack from ${this.label}: ${lastLine(r.stderr)}`, 'unreachable');
      for (const p of wanted) {
        const file = path.join(dir, this.prefix, p);
        try {
          const st = await lstat(file);
          if (st.isSymbolicLink()) out.set(p, Buffer.from(await readlink(file)));
          else if (st.isFile()) out.set(p, await readFile(file));
        } catch {
          // a member tar could not create (e.g. under a path that is a file): absent
        }
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    return out;
  }
}

/** The member names of an archive, from the cache when the file is unchanged. */
async function listing(archive: string, cacheDir: string): Promise<string[]> {
  const st = await stat(archive);
  const cached = path.join(cacheDir, 'listings', `${path.basename(archive)}.${st.size}.${Math.floor(st.mtimeMs)}.list`);
  try {
    return (await readFile(cached, 'utf8')).split('\0').filter((m) => m !== '');
  } catch {
    // not cached yet
  }
  const r = await execFile('tar', ['-t', '-f', archive, '--quoting-style=literal']);
  if (r.code !== 0) throw new TreeError(`cannot list ${path.basename(archive)}: ${lastLine(r.stderr)}`, 'unreachable');
  const members = r.stdout
    .toString('utf8')
    .split('\n')
    .filter((m) => m !== '')
    .map((m) => m.replace(/^\.\//, ''));
  // Written under a temporary name and renamed: a concurrent run reads a whole listing or none.
  await mkdir(path.dirname(cached), { recursive: true });
  const tmp = `${cached}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(tmp, members.join('\0'));
  await rename(tmp, cached);
  return members;
}
