import { releaseEvidence } from '../model/evidence.js';
import type { Plan } from '../plan/plan.js';
import type { Held } from './hold.js';
import type { BumpInputs } from './inputs.js';
import type { BumpPlan } from './plan.js';
import type { PatchFiles } from './patch-files.js';
import type { HandEdits, PackageWork } from './reconcile.js';
import type { BumpOptions, BumpResult, PlannedPackage } from './types.js';

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
    const held = e.component.held ? { held: { release: e.component.release, ...e.component.held } } : {};
    if (r && e.action === 'keep') {
      return [{ atom: e.atom, version: r.write!.version, action: 'revbump' as const, newPackage: false, replaces: r.revbump!.replaces, distfiles: e.distfiles, ...held }];
    }
    return [{ atom: e.atom, version: e.version, action: e.action, newPackage: e.action === 'add' && e.newPackage, distfiles: e.distfiles, ...held }];
  });
}

/** The report once the work is known: what a dry run returns; later stages add branch, distfiles, commits and head. */
export function bumpReport(o: BumpOptions, inputs: BumpInputs, held: Held, planned: BumpPlan, edits: HandEdits, patches: PatchFiles): BumpResult {
  const { dir, model } = inputs;
  const { plan, maintainer } = planned;
  const { works, warnings } = edits;
  const added = (atom: string) => (patches.byAtom.get(atom) ?? []).map((f) => f.name);
  return {
    version: o.version,
    overlay: dir,
    dryRun: o.dryRun,
    committed: false,
    scaffold: plan.scaffold,
    maintainer: { maintainers: maintainer.maintainers, source: maintainer.source },
    evidence: releaseEvidence(model.components),
    packages: plannedPackages(plan, works).map((p) => {
      const c = p.action === 'drop' || p.action === 'treeclean' ? undefined : model.byAtom.get(p.atom);
      return c ? { ...p, evidence: c.evidence.level } : p;
    }),
    left: plan.left.map((l) => {
      const files = planned.treeclean.get(l.atom);
      return { atom: l.atom, versions: l.versions, reason: l.reason, action: l.action, removed: l.remove, ...(files?.length ? { files } : {}) };
    }),
    changes: works
      .filter((w) => w.revbump || w.carried || w.discarded.length > 0 || added(w.atom).length > 0)
      .map((w) => ({
        atom: w.atom,
        version: w.write?.version ?? w.remove.join(', '),
        ...(w.revbump ? { revbump: w.revbump } : {}),
        ...(w.carried ? { carried: w.carried } : {}),
        discarded: w.discarded,
        removedFiles: [],
        addedFiles: added(w.atom),
      })),
    notes: warnings,
    signing: held.signing,
    commits: [],
    distfiles: [],
  };
}

/** Files under files/ the package commits remove, added to each package's change. */
export function addRemovedFiles(result: BumpResult, works: PackageWork[], removedFiles: { atom: string; files: string[] }[]): void {
  for (const r of removedFiles) {
    const change = result.changes.find((c) => c.atom === r.atom);
    if (change) change.removedFiles = r.files;
    else result.changes.push({ atom: r.atom, version: works.find((w) => w.atom === r.atom)?.write?.version ?? '', discarded: [], removedFiles: r.files, addedFiles: [] });
  }
}
