import type { LoadedComponent, Manifest } from '../../manifest/load.js';
import type { EvidenceSpec } from '../../manifest/types.js';
import type { StackModel } from '../../model/resolve.js';
import type { LocalDir } from '../trees/local-dir.js';
import { compareRecipes, type Comparison } from './compare.js';
import { findEbuild, readEbuild } from './gentoo.js';
import { GENTOO_ATOMS, SPACK_ATOMS, SPACK_IMPLICIT, SPACK_PACKAGES } from './names.js';
import { ourSide } from './ours.js';
import { FACT_KINDS, PEER_LABEL, type FactKind, type PeerKind, type PeerRecipe } from './recipe.js';
import { readSpackRecipe } from './spack.js';

/**
 * `upstream peer`: for each component of a release, the peers' recipes of
 * that version read and compared with ours, and the evidence record each
 * comparison supports. Every recipe is read before anything is written, so
 * a peer tree that cannot be read stops the run with nothing changed.
 */

export interface PeerComponentReport extends Partial<Comparison> {
  component: string;
  atom: string;
  peer: PeerKind;
  /** The recipe compared, relative to the peer tree. */
  file?: string;
  /** The recipe's version (gentoo: with revision), when it is not the release's. */
  peerVersion?: string;
  nearest?: boolean;
  /** Why nothing was compared (the peer has no recipe of this package or version). */
  missing?: string;
  /** Facts the peer's build sets aside (Spack's non-default variants, conditions on a compiler or OS). */
  aside?: PeerRecipe['aside'];
  unreadable?: PeerRecipe['unreadable'];
  /** The evidence record the comparison supports; undefined when no fact agrees, or when it is withheld. */
  record?: EvidenceSpec & { releases: [string]; kind: 'peer' };
  /** Why no record is written although facts agree: peer fix-ups on our source that we lack and do not argue. */
  withheld?: string;
  /** For --record: written, unchanged, would-write, or the reason it was refused. */
  recorded?: 'written' | 'unchanged' | 'would-write' | 'removed' | 'would-remove';
  recordError?: string;
  /** The component's YAML file. */
  yaml: string;
}

export interface PeerReport {
  version: string;
  peers: { kind: PeerKind; root: string }[];
  components: PeerComponentReport[];
  counts: { agrees: number; differs: number; argued: number; unreadable: number; findings: number; unargued: number; compared: number; missing: number };
  records: { written: number; unchanged: number; wouldWrite: number; removed: number; refused: number };
}

export interface PeerOptions {
  version: string;
  components: LoadedComponent[];
  model: StackModel;
  gentoo?: LocalDir;
  spack?: LocalDir;
}

/** Maps Spack's dependency names to Gentoo atoms: ours first, then the explicit table, then a package name our data uses. */
export function spackDepMapper(manifest: Manifest): (name: string) => { atom: string } | { implicit: string } | { unmapped: true } {
  const byPackage = new Map(Object.entries(SPACK_PACKAGES).map(([component, pkg]) => [pkg, manifest.components.find((c) => c.spec.name === component)?.spec.atom]));
  const known = new Map<string, Set<string>>();
  const add = (atom: string) => {
    const pn = atom.split('/')[1]?.toLowerCase().replace(/_/g, '-');
    if (!pn) return;
    known.set(pn, new Set([...(known.get(pn) ?? []), atom]));
  };
  for (const c of manifest.components) {
    add(c.spec.atom);
    for (const d of c.spec.deps ?? []) add(d.atom);
    for (const o of c.spec.overrides ?? []) for (const d of o.set.deps ?? []) add(d.atom);
  }
  for (const atom of Object.keys(manifest.external.packages)) add(atom);
  return (name) => {
    if (SPACK_IMPLICIT[name]) return { implicit: SPACK_IMPLICIT[name] };
    const ours = byPackage.get(name);
    if (ours) return { atom: ours };
    if (SPACK_ATOMS[name]) return { atom: SPACK_ATOMS[name] };
    const hit = known.get(name.toLowerCase());
    if (hit && hit.size === 1) return { atom: [...hit][0]! };
    return { unmapped: true };
  };
}

/**
 * The record a comparison supports. None when no fact agrees; none either
 * while a peer fix-up on our source is neither carried nor argued: such a
 * record would not validate, and the finding must be answered first.
 */
function recordFor(kind: PeerKind, recipe: PeerRecipe, comparison: Comparison): { record?: PeerComponentReport['record']; withheld?: string } {
  if (comparison.recordFacts.length === 0) return {};
  const open = comparison.items.filter((i) => i.finding && !i.argued).map((i) => i.item);
  if (open.length > 0) return { withheld: `${open.length} ${PEER_LABEL[kind]} fix-up${open.length === 1 ? '' : 's'} on our source we lack, not argued: ${open.join(', ')}` };
  // Worded without the release, so that the records of several releases compared with one lower recipe stay one entry.
  const note = recipe.nearest
    ? kind === 'gentoo'
      ? `::gentoo has no ebuild of these releases; its ${recipe.version} ebuild, the nearest lower version, was read as its copy to each`
      : `Spack's recipe has no version() of these releases; compared with its version("${recipe.version}"), the nearest lower one`
    : undefined;
  return {
    record: {
      releases: [recipe.requested],
      kind: 'peer',
      source: `${PEER_LABEL[kind]} ${recipe.file}`,
      facts: comparison.recordFacts,
      ...(note ? { note } : {}),
      ...(comparison.lacks.length > 0 ? { lacks: [...comparison.lacks].sort() } : {}),
    },
  };
}

export async function comparePeers(manifest: Manifest, o: PeerOptions): Promise<PeerReport> {
  const chosen = new Set(o.components.map((c) => c.spec.name));
  const mapDep = spackDepMapper(manifest);
  const out: PeerComponentReport[] = [];
  for (const c of o.model.components) {
    if (!chosen.has(c.name)) continue;
    const ours = await ourSide(manifest, o.model, c);
    const base = { component: c.name, atom: c.atom, yaml: c.loaded.source.file };
    const differences = c.loaded.spec.differences ?? [];
    const peers: [PeerKind, LocalDir | undefined][] = [
      ['gentoo', o.gentoo],
      ['spack', o.spack],
    ];
    for (const [kind, tree] of peers) {
      if (!tree) continue;
      let recipe: PeerRecipe | undefined;
      let missing: string | undefined;
      if (kind === 'gentoo') {
        const atom = GENTOO_ATOMS[c.atom] ?? c.atom;
        const found = await findEbuild(tree, atom, o.version);
        if (!found) missing = `no ebuild of ${atom} at or below ${o.version}`;
        else {
          const [category, pn] = atom.split('/') as [string, string];
          // A lower version's ebuild is read as its copy to this version would read (how ::gentoo bumps a point release).
          recipe = await readEbuild({
            text: await tree.readText(found.file),
            file: found.file,
            category,
            pn,
            version: found.nearest ? o.version : found.version,
            requested: o.version,
            nearest: found.nearest,
            peer: 'gentoo',
            readPatch: async (name) => ((await tree.exists(`${atom}/files/${name}`)) ? tree.readText(`${atom}/files/${name}`) : undefined),
            patchFile: (name) => `${atom}/files/${name}`,
          });
          recipe.version = found.version;
        }
      } else {
        // The table first; else Spack's own convention, the name in lower case.
        const name = SPACK_PACKAGES[c.name] ?? c.name.toLowerCase().replace(/_/g, '-');
        {
          recipe = await readSpackRecipe({ tree, name, requested: o.version, useFlags: ours.useFlags, mapDep });
          if (!recipe) missing = `no Spack recipe ${name} with a version at or below ${o.version}`;
        }
      }
      if (!recipe) {
        out.push({ ...base, peer: kind, missing: missing! });
        continue;
      }
      const comparison = compareRecipes({ peer: recipe, ours, kind, version: o.version, differences });
      out.push({
        ...base,
        peer: kind,
        file: recipe.file,
        ...(recipe.version !== o.version ? { peerVersion: recipe.version } : {}),
        nearest: recipe.nearest,
        ...comparison,
        aside: [...recipe.aside, ...comparison.aside],
        unreadable: [...recipe.unreadable, ...ours.recipe.unreadable.map((u) => ({ ...u, what: `ours: ${u.what}` }))],
        ...recordFor(kind, recipe, comparison),
      });
    }
  }
  const counts = { agrees: 0, differs: 0, argued: 0, unreadable: 0, findings: 0, unargued: 0, compared: 0, missing: 0 };
  for (const r of out) {
    if (r.missing) {
      counts.missing++;
      continue;
    }
    counts.compared++;
    for (const i of r.items ?? []) {
      if (i.status === 'agrees') counts.agrees++;
      else if (i.status === 'unreadable') counts.unreadable++;
      else if (i.argued) counts.argued++;
      else counts.differs++;
      if (i.finding) {
        counts.findings++;
        if (!i.argued) counts.unargued++;
      }
    }
  }
  return {
    version: o.version,
    peers: [...(o.gentoo ? [{ kind: 'gentoo' as const, root: o.gentoo.label }] : []), ...(o.spack ? [{ kind: 'spack' as const, root: o.spack.label }] : [])],
    components: out,
    counts,
    records: { written: 0, unchanged: 0, wouldWrite: 0, removed: 0, refused: 0 },
  };
}

/** Items per fact and status of one comparison, for summaries. */
export function factCounts(r: PeerComponentReport): Record<FactKind, { agrees: number; differs: number; unreadable: number }> {
  const out = Object.fromEntries(FACT_KINDS.map((k) => [k, { agrees: 0, differs: 0, unreadable: 0 }])) as Record<FactKind, { agrees: number; differs: number; unreadable: number }>;
  for (const i of r.items ?? []) out[i.fact][i.status]++;
  return out;
}
