import type { Check } from '../types.js';
import { describeProvided, restrictedDeps, unmet } from '../../ebuild/dependencies.js';

/**
 * A dependency on a package of the overlay that no ebuild of the overlay
 * meets at the slot or version asked for: what pkgcheck reports as
 * NonexistentDeps once it scans the repository, checked here because CI
 * runs without pkgcheck. Only `lint --overlay` knows the overlay; a render
 * of one release has nothing to check it against.
 */
export const overlayDependencyCheck: Check = {
  name: 'OverlayDependencyCheck',
  keywords: [
    {
      name: 'NonexistentDeps',
      level: 'error',
      description: 'a dependency on a package of the overlay asks for a slot or version no ebuild of the overlay provides',
    },
  ],
  run(f) {
    const index = f.input.overlay;
    if (!index) return [];
    const pn = f.input.atom.split('/')[1]!;
    return unmet(restrictedDeps(f.globals, pn, f.input.version), index).map((d) => ({
      keyword: 'NonexistentDeps',
      message:
        `${d.text}${d.text !== d.expanded ? ` (${d.expanded})` : ''}: no ebuild of ${d.key} in the overlay provides it ` +
        `(it holds ${describeProvided(index.get(d.key)!)}); bump ${f.input.atom} to a release the overlay holds, ` +
        `or remove this version (rocm-ebuild bump --drop-old removes a package that left the stack, in a "${f.input.atom}: treeclean" commit)`,
      line: d.line,
    }));
  },
};
