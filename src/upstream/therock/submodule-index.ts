import type { Submodule } from './gitmodules.js';

/**
 * TheRock's submodules by where they sit, for the questions a declaration
 * asks of its source directory — which submodule holds it, which submodules
 * lie under it — answered by walking the directory's own path, not every
 * submodule: a tree with thousands of declarations and thousands of
 * submodules is read in time linear in its size.
 */
export class SubmoduleIndex {
  private readonly byPath = new Map<string, Submodule>();
  /** Every directory that is a submodule's path or one of its ancestors ('' for the root): how many submodules lie there, and the first. */
  private readonly below = new Map<string, { count: number; first: Submodule }>();

  constructor(submodules: readonly Submodule[]) {
    for (const s of submodules) {
      this.byPath.set(s.path, s);
      const parts = s.path.split('/');
      for (let n = 0; n <= parts.length; n++) {
        const dir = parts.slice(0, n).join('/');
        const have = this.below.get(dir);
        if (have) have.count++;
        else this.below.set(dir, { count: 1, first: s });
      }
    }
  }

  /** The submodule whose tree holds `dir` (the deepest, when submodules nest), if any. */
  holding(dir: string): Submodule | undefined {
    const parts = dir.split('/');
    for (let n = parts.length; n > 0; n--) {
      const s = this.byPath.get(parts.slice(0, n).join('/'));
      if (s) return s;
    }
    return undefined;
  }

  /** The submodules at or below `dir` ('' for the whole tree). */
  under(dir: string): { count: number; first?: Submodule } {
    return this.below.get(dir) ?? { count: 0 };
  }
}
