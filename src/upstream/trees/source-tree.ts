/**
 * A release's source tree, read without unpacking it whole: a list of file
 * paths and the contents of the few files asked for. Two kinds exist — a tag
 * in a git repository (git-tree.ts) and a release tarball from the distfiles
 * engine (archive-tree.ts) — and everything above reads them alike.
 */
export interface SourceTree {
  /** For people: "ROCm/rocPRIM rocm-6.3.3" or the distfile's name. */
  readonly label: string;
  /** Every file (and symlink) under the tree's root, relative to it, sorted. */
  files(): Promise<string[]>;
  /** The contents of these files; paths that are not files of the tree are absent from the map. */
  read(paths: string[]): Promise<Map<string, Buffer>>;
  /** Bytes fetched from the network to read this tree in this run, so far (0 when it was at hand). */
  transferred(): number;
}

/** Problems reaching or reading a tree: reported per source, never fatal to a whole run. */
export class TreeError extends Error {
  constructor(
    message: string,
    /** 'unreachable': the repository or file could not be fetched; 'missing': it has no such tag or directory. */
    readonly kind: 'unreachable' | 'missing',
  ) {
    super(message);
    this.name = 'TreeError';
  }
}

/** Does the tree have this path, as a file or as a directory? */
export function hasPath(files: readonly string[], p: string): 'file' | 'dir' | undefined {
  const clean = p.replace(/\/+$/, '');
  if (binaryIncludes(files, clean)) return 'file';
  const prefix = `${clean}/`;
  const i = lowerBound(files, prefix);
  return files[i]?.startsWith(prefix) ? 'dir' : undefined;
}

function lowerBound(sorted: readonly string[], key: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function binaryIncludes(sorted: readonly string[], key: string): boolean {
  return sorted[lowerBound(sorted, key)] === key;
}

/** Sorted by UTF-16 code units, the order the binary searches above assume. */
export function sortPaths(paths: string[]): string[] {
  return paths.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
