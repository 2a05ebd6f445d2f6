import type { LoadedComponent, Manifest } from '../manifest/load.js';
import { closest } from '../manifest/schema-validator.js';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';

/**
 * Components named on the command line, by name (rocPRIM), atom
 * (sci-libs/rocPRIM), package name or AMD project (llvm-project selects the
 * three packages built from it); none named means all. An unknown name is an
 * input error suggesting the nearest one.
 */
export function selectComponents(manifest: Manifest, selectors: string[]): LoadedComponent[] {
  if (selectors.length === 0) return manifest.components;
  const chosen = new Set<LoadedComponent>();
  for (const sel of selectors) {
    const lower = sel.toLowerCase();
    const hits = manifest.components.filter((c) => {
      const s = c.spec;
      return [s.name, s.atom, s.atom.split('/')[1]!, ...(s.projects ?? [])].some((n) => n.toLowerCase() === lower);
    });
    if (hits.length === 0) {
      const names = manifest.components.flatMap((c) => [c.spec.name, c.spec.atom]);
      const near = closest(sel, names);
      throw new UserError(`no component ${sel} in ${manifest.file}${near ? `; did you mean ${near}?` : ''}`, ExitCode.invalidInput);
    }
    for (const h of hits) chosen.add(h);
  }
  return manifest.components.filter((c) => chosen.has(c));
}
