import type { BrokenParts, Manifest } from '../manifest/load.js';

/**
 * What the stack-wide checks know about the parts set aside after schema
 * errors: a check that would need one of them is skipped, so it neither
 * reports a false problem nor hides the real ones elsewhere.
 */
export interface CheckContext {
  manifest: Manifest;
  broken: BrokenParts;
  /** Atoms of broken components (known to exist, contents unknown). */
  brokenAtoms: Set<string>;
  /** Some component or external file is too broken to know what it provides. */
  unknownProviders: boolean;
}

export function checkContext(manifest: Manifest, broken: BrokenParts): CheckContext {
  const brokenAtoms = new Set(broken.components.map((c) => c.atom).filter((a): a is string => a !== undefined));
  return {
    manifest,
    broken,
    brokenAtoms,
    unknownProviders: broken.externalUnknown || broken.components.some((c) => c.atom === undefined),
  };
}

/** Whether nothing can be said about `atom` because the part that may define it is broken. */
export function unknowable(ctx: CheckContext, atom: string): boolean {
  return ctx.unknownProviders || ctx.brokenAtoms.has(atom) || ctx.broken.externalAtoms.has(atom);
}
