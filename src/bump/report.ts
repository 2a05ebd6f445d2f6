import type { Plan } from '../plan/plan.js';
import type { PackageWork } from './reconcile.js';
import type { PlannedPackage } from './types.js';

/** What a bump reports (--json, and the command's text), from the plan and the reconciled work. */

/** The plan as --json shows it: drops expanded to one entry per ebuild version. */
export function plannedPackages(plan: Plan, works: PackageWork[] = []): PlannedPackage[] {
  const revbumps = new Map(works.filter((w) => w.revbump).map((w) => [w.atom, w]));
  return plan.entries.flatMap<PlannedPackage>((e) => {
    if (e.action === 'drop') {
      const action = e.left?.treeclean ? ('treeclean' as const) : ('drop' as const);
      return (e.versions ?? []).map((v) => ({ atom: e.atom, version: v, action, newPackage: false, distfiles: [] }));
    }
    const r = revbumps.get(e.atom);
    if (r && e.action === 'keep') {
      return [{ atom: e.atom, version: r.write!.version, action: 'revbump' as const, newPackage: false, replaces: r.revbump!.replaces, distfiles: e.distfiles }];
    }
    return [{ atom: e.atom, version: e.version, action: e.action, newPackage: e.action === 'add' && e.newPackage, distfiles: e.distfiles }];
  });
}
