import type { DifferenceSpec, EvidenceFact } from '../../manifest/types.js';
import { inRange } from '../../model/version.js';
import { itemMatches } from '../../model/peer-items.js';
import { carries, describeSignature, signature } from './edits.js';
import { normalise } from './gentoo.js';
import { GENTOO_ATOMS } from './names.js';
import type { OurSide } from './ours.js';
import { PEER_LABEL, treeLabel, type DepFact, type FactKind, type FileEdit, type FixupFact, type PeerKind, type PeerRecipe, type TreeRef, type Unpacked, type Where } from './recipe.js';

/**
 * Sets a peer's recipe beside ours, fact by fact. Each item (a source, a
 * dependency, a CMake option, a fix-up, the LLVM slot, the test restriction)
 * agrees, differs (both sides shown) or could not be read. A difference our
 * data argues (a `differences:` entry for that peer, fact and item) stays a
 * difference in the report but does not keep its fact out of the evidence
 * record. A peer fix-up on a file of our source that we carry no equivalent
 * edit for is a finding: it is listed as `lacks` in the record, and the
 * manifest's checks fail until it is argued.
 */

export type Status = 'agrees' | 'differs' | 'unreadable';

export interface ItemResult {
  fact: FactKind;
  item: string;
  status: Status;
  ours?: string;
  peer?: string;
  note?: string;
  /** Why ours is right, from the component's `differences:` (a difference only). */
  argued?: string;
  oursWhere?: Where;
  peerWhere?: Where;
  /** A peer fix-up on a file of our source that no edit of ours makes. */
  finding?: boolean;
}

export type FactState = 'agrees' | 'argued' | 'differs' | 'unreadable';

export interface Comparison {
  items: ItemResult[];
  /** Per fact: agrees (every item), argued (every difference argued), differs, unreadable; absent when the peer states no such fact. */
  facts: Partial<Record<FactKind, FactState>>;
  /** Peer fix-ups on our source with no equivalent edit of ours (findings), by id. */
  lacks: string[];
  /** The evidence facts a record may name: those that agree or whose differences are all argued. */
  recordFacts: EvidenceFact[];
  /** Peer facts of builds we do not offer (a fix-up under a USE flag ours lacks): not compared. */
  aside: PeerRecipe['aside'];
}

export interface CompareInput {
  peer: PeerRecipe;
  ours: OurSide;
  kind: PeerKind;
  version: string;
  differences: readonly DifferenceSpec[];
}

const joinList = (xs: Iterable<string>) => [...xs].sort().join(', ') || '—';
const condText = (when: readonly string[]) => (when.length ? `${[...when].sort().join(' ')}? ` : '');

function argue(input: CompareInput, fact: FactKind, item: string): string | undefined {
  return input.differences.find((d) => d.peer === input.kind && d.fact === fact && itemMatches(d.item, item) && (d.releases === undefined || inRange(input.version, d.releases)))?.why;
}

/** "https://github.com/O/R/archive/refs/tags/T.tar.gz" and ".../archive/T.tar.gz" are one archive. */
function normaliseUrl(url: string): string {
  return url.replace(/^(https:\/\/github\.com\/[^/]+\/[^/]+\/archive\/)refs\/tags\//, '$1');
}

function compareSources(input: CompareInput, out: ItemResult[]): void {
  const { peer, ours } = input;
  if (input.kind === 'gentoo') {
    const show = (r: PeerRecipe) => r.sources.map((s) => `${condText(s.when)}${normaliseUrl(s.url)}${s.distfile ? ` -> ${s.distfile}` : ''}`).sort();
    const a = show(ours.recipe);
    const b = show(peer);
    out.push({
      fact: 'sources',
      item: 'SRC_URI',
      status: a.join('\n') === b.join('\n') ? 'agrees' : 'differs',
      ours: a.join('; ') || '—',
      peer: b.join('; ') || '—',
      ...(ours.recipe.sources[0] ? { oursWhere: ours.recipe.sources[0].where } : {}),
      ...(peer.sources[0] ? { peerWhere: peer.sources[0].where } : {}),
    });
    if (peer.s && ours.recipe.s) {
      out.push({ fact: 'sources', item: 'S', status: peer.s.dir === ours.recipe.s.dir ? 'agrees' : 'differs', ours: `\${WORKDIR}/${ours.recipe.s.dir}`, peer: `\${WORKDIR}/${peer.s.dir}`, oursWhere: ours.recipe.s.where, peerWhere: peer.s.where });
    }
    return;
  }
  // Spack: the trees both build from (repository and tag, a monorepo's project directory) and the directory CMake starts in.
  const trees = (u: readonly Unpacked[]) => u.map((x) => x.tree).filter((t): t is TreeRef => t !== undefined);
  const ourTrees = trees(ours.recipe.unpacked);
  const theirs = trees(peer.unpacked);
  const within = (inner: TreeRef, outer: TreeRef) => inner.repo.toLowerCase() === outer.repo.toLowerCase() && inner.tag === outer.tag && (outer.dir === undefined || (inner.dir ?? '') === outer.dir || (inner.dir ?? '').startsWith(`${outer.dir}/`));
  const related = (x: TreeRef, ys: TreeRef[]) => ys.some((y) => within(x, y) || within(y, x));
  const agree = theirs.length > 0 && peer.unpacked.every((u) => u.tree) && ourTrees.every((t) => related(t, theirs)) && theirs.every((t) => related(t, ourTrees));
  out.push({
    fact: 'sources',
    item: 'trees',
    status: peer.unpacked.some((u) => !u.tree) ? 'unreadable' : agree ? 'agrees' : 'differs',
    ours: ourTrees.map(treeLabel).join('; ') || '—',
    peer: peer.sources.map((s) => normaliseUrl(s.url)).join('; ') || '—',
    ...(peer.sources[0] ? { peerWhere: peer.sources[0].where } : {}),
  });
  const root = (r: PeerRecipe, base: readonly Unpacked[]): string | undefined => {
    if (!r.s) return undefined;
    const at = locate(r.s.dir, base);
    return typeof at === 'object' && 'tree' in at ? `${at.tree.repo} ${at.tree.tag}:${at.repoPath || '.'}` : undefined;
  };
  const a = root(ours.recipe, ours.recipe.unpacked);
  const b = root(peer, peer.unpacked);
  out.push({
    fact: 'sources',
    item: 'S',
    status: a === undefined || b === undefined ? 'unreadable' : a === b ? 'agrees' : 'differs',
    ours: a ?? `\${WORKDIR}/${ours.recipe.s?.dir ?? '?'}`,
    peer: b ?? peer.s?.dir ?? '?',
    ...(peer.s ? { peerWhere: peer.s.where } : {}),
  });
}

interface DepSide {
  forms: Set<string>;
  slots: Set<string>;
  where: Where;
  names: Set<string>;
}

function depSides(deps: readonly DepFact[], kind: PeerKind, mapAtom: (a: string) => string): Map<string, DepSide> {
  const out = new Map<string, DepSide>();
  for (const d of deps) {
    const key = d.atom ? `${d.blocker ? '!' : ''}${mapAtom(d.atom)}` : `unmapped:${d.peerName}`;
    const side = out.get(key) ?? { forms: new Set<string>(), slots: new Set<string>(), where: d.where, names: new Set<string>() };
    // ::gentoo: each class with its USE conditions; Spack's classes are another model, so only the conditions count.
    if (kind === 'gentoo') for (const c of d.classes) side.forms.add(`${c}${d.when.length ? `[${[...d.when].sort().join(' ')}]` : ''}`);
    else side.forms.add(d.when.length ? [...d.when].sort().join(' ') : 'always');
    side.slots.add(d.slot);
    if (d.peerName) side.names.add(d.peerName);
    out.set(key, side);
  }
  return out;
}

function compareDeps(input: CompareInput, out: ItemResult[]): void {
  const { peer, ours, kind } = input;
  const reverse = new Map(Object.entries(GENTOO_ATOMS).map(([a, b]) => [b, a]));
  // Spack builds with ROCm's LLVM, which an ebuild replaces with Gentoo's LLVM slot: those are the llvm fact, ::gentoo only.
  const ourDeps = kind === 'spack' ? ours.recipe.deps.filter((d) => !/^llvm-(core|runtimes)\//.test(d.atom ?? '')) : ours.recipe.deps;
  const a = depSides(ourDeps, kind, (x) => x);
  const b = depSides(peer.deps, kind, (x) => reverse.get(x) ?? x);
  const keys = [...new Set([...a.keys(), ...b.keys()])].sort();
  for (const key of keys) {
    const o = a.get(key);
    const p = b.get(key);
    const describe = (s: DepSide) => `${[...s.forms].sort().join(' ')}${kind === 'gentoo' && [...s.slots].some(Boolean) ? ` ${[...s.slots].filter(Boolean).join(' ')}` : ''}`;
    if (key.startsWith('unmapped:')) {
      out.push({ fact: 'deps', item: key.slice('unmapped:'.length), status: 'unreadable', peer: describe(p!), note: `no Gentoo atom is known for Spack's ${key.slice(9)} (add it to peers/names.ts)`, peerWhere: p!.where });
      continue;
    }
    if (o && p) {
      const same = describe(o) === describe(p);
      out.push({ fact: 'deps', item: key, status: same ? 'agrees' : 'differs', ours: describe(o), peer: describe(p), oursWhere: o.where, peerWhere: p.where });
      continue;
    }
    if (p) {
      const via = ours.through.get(key.replace(/^!/, ''));
      if (via && !key.startsWith('!')) {
        out.push({ fact: 'deps', item: key, status: 'agrees', ours: `through ${via}`, peer: describe(p), note: `ours has it through ${via}`, peerWhere: p.where });
        continue;
      }
      out.push({ fact: 'deps', item: key, status: 'differs', ours: '—', peer: `${describe(p)}${p.names.size ? ` (${[...p.names].join(', ')})` : ''}`, peerWhere: p.where });
      continue;
    }
    out.push({ fact: 'deps', item: key, status: 'differs', ours: describe(o!), peer: '—', oursWhere: o!.where });
  }
}

function compareCmake(input: CompareInput, out: ItemResult[]): void {
  const { peer, ours } = input;
  const side = (r: PeerRecipe) => {
    const m = new Map<string, { values: Set<string>; where: Where }>();
    for (const c of r.cmake) {
      const s = m.get(c.name) ?? { values: new Set<string>(), where: c.where };
      s.values.add(`${condText(c.when)}${c.value}`);
      m.set(c.name, s);
    }
    return m;
  };
  const a = side(ours.recipe);
  const b = side(peer);
  for (const name of [...new Set([...a.keys(), ...b.keys()])].sort()) {
    const o = a.get(name);
    const p = b.get(name);
    const show = (s?: { values: Set<string> }) => (s ? [...s.values].sort().join(' | ') || '(set)' : '—');
    const unknownValue = p && [...p.values].some((v) => /\{[^}]*\}/.test(v) && !/\$\{/.test(v));
    const status: Status = o && p ? (show(o) === show(p) ? 'agrees' : unknownValue ? 'unreadable' : 'differs') : 'differs';
    out.push({ fact: 'cmake', item: name, status, ours: show(o), peer: show(p), ...(o ? { oursWhere: o.where } : {}), ...(p ? { peerWhere: p.where } : {}) });
  }
}

type Place = { tree: TreeRef; repoPath: string } | { outside: true } | { unknown: string };

/** Where a work-directory path lies: a tree and its path in the repository, outside every source, or unknown. */
function locate(p: string, unpacked: readonly Unpacked[]): Place {
  if (p.startsWith('/')) return { outside: true };
  let best: Unpacked | undefined;
  for (const u of unpacked) {
    if (u.dir === '' || p === u.dir || p.startsWith(`${u.dir}/`)) {
      if (!best || u.dir.length > best.dir.length) best = u;
    }
  }
  if (!best) return { unknown: `\${WORKDIR}/${p} is in none of the unpacked sources` };
  if (!best.tree) return { unknown: `${best.dir || 'the stage'} is not a GitHub tree` };
  const rest = best.dir === '' ? p : p.slice(best.dir.length + 1);
  return { tree: best.tree, repoPath: normalise(`${best.tree.dir ?? ''}/${rest}`) };
}

/** The path in our work directory of a repository path of a tree, if one of our sources holds it. */
function ourPath(place: { tree: TreeRef; repoPath: string }, ours: readonly Unpacked[]): { path: string } | { no: string } | { unknown: string } {
  const sameRepo = ours.filter((u) => u.tree && u.tree.repo.toLowerCase() === place.tree.repo.toLowerCase());
  const sameTag = sameRepo.filter((u) => u.tree!.tag === place.tree.tag);
  if (sameTag.length === 0) {
    if (sameRepo.length > 0) return { unknown: `the peer's tree is ${place.tree.repo} ${place.tree.tag}, ours ${sameRepo[0]!.tree!.tag}: not read` };
    return { no: `${place.tree.repo} is not one of our sources` };
  }
  let best: Unpacked | undefined;
  for (const u of sameTag) {
    const d = u.tree!.dir;
    if (d === undefined || place.repoPath === d || place.repoPath.startsWith(`${d}/`)) {
      if (!best || (d ?? '').length > (best.tree!.dir ?? '').length) best = u;
    }
  }
  if (!best) {
    if (place.tree.dirGuessed) return { unknown: `the peer's ${place.tree.asset} is not one of our sources, and its directory in ${place.tree.repo} is a guess` };
    return { no: `${place.repoPath} is outside our sources' directories of ${place.tree.repo}` };
  }
  const d = best.tree!.dir;
  const rest = d === undefined ? place.repoPath : place.repoPath.slice(d.length + 1);
  return { path: normalise(`${best.dir}/${rest}`) };
}

/** The peer's trees, with a tarball both fetch by the same URL taken as ours (its directory and project are known to our data). */
function peerUnpacked(peer: PeerRecipe, ours: OurSide): Unpacked[] {
  const byUrl = new Map<string, Unpacked>();
  ours.recipe.sources.forEach((s, i) => {
    const u = ours.recipe.unpacked[i];
    if (u) byUrl.set(normaliseUrl(s.url), u);
  });
  return peer.unpacked.map((u, i) => {
    const s = peer.sources[i];
    const mine = s ? byUrl.get(normaliseUrl(s.url)) : undefined;
    return mine && peer.peer === 'gentoo' ? { ...u, dir: mine.dir, ...(mine.tree ? { tree: mine.tree } : {}) } : u;
  });
}

function compareFixups(input: CompareInput, out: ItemResult[], lacks: string[], aside: PeerRecipe['aside']): void {
  const { peer, ours } = input;
  const theirs = peerUnpacked(peer, ours);
  const ourEdits = new Map<string, { edit: FileEdit; fixup: FixupFact }[]>();
  for (const f of ours.recipe.fixups) for (const e of f.edits) ourEdits.set(e.path, [...(ourEdits.get(e.path) ?? []), { edit: e, fixup: f }]);
  // Our paths the peer touches, and whether every peer edit could be placed.
  const touched = new Map<string, FileEdit[]>();
  let unplaced: string | undefined;
  const label = PEER_LABEL[input.kind];
  for (const f of peer.fixups) {
    // Under a USE flag ours does not have, the edit serves a build we do not offer.
    const foreign = input.kind === 'gentoo' ? f.when.flatMap((w) => w.split(/\s+/)).find((w) => /^[A-Za-z0-9][A-Za-z0-9_+@-]*$/.test(w) && !ours.useFlags.has(w)) : undefined;
    if (foreign) {
      aside.push({ what: f.id, why: `applied only with USE=${foreign}, which ours does not offer`, where: f.where });
      continue;
    }
    if (f.unreadable) {
      // Its change is unknown; where its files are known, ours on them are not "ours only".
      const places = f.edits.map((e) => ({ e, at: locate(e.path, theirs) }));
      for (const { at } of places) {
        if (!('tree' in at)) continue;
        const mine = ourPath(at, ours.recipe.unpacked);
        if ('path' in mine) touched.set(mine.path, touched.get(mine.path) ?? []);
      }
      if (places.length === 0 || places.some(({ at }) => 'unknown' in at)) unplaced ??= `${f.id}: ${f.unreadable}`;
      out.push({ fact: 'fixups', item: f.id, status: 'unreadable', peer: f.unreadable, peerWhere: f.where });
      continue;
    }
    const files: string[] = [];
    let carried = 0;
    let unknown = 0;
    let missing = 0;
    let otherwise = 0;
    const oursShown: string[] = [];
    const byPath = new Map<string, FileEdit[]>();
    for (const e of f.edits) byPath.set(e.path, [...(byPath.get(e.path) ?? []), e]);
    for (const [p, edits] of byPath) {
      const place = locate(p, theirs);
      if ('outside' in place) {
        files.push(`${p} (outside the sources)`);
        continue;
      }
      if ('unknown' in place) {
        unknown++;
        unplaced ??= place.unknown;
        files.push(`${p} (${place.unknown})`);
        continue;
      }
      const mine = ourPath(place, ours.recipe.unpacked);
      if ('no' in mine) {
        files.push(`${place.repoPath} (not in our source: ${mine.no})`);
        continue;
      }
      if ('unknown' in mine) {
        unknown++;
        unplaced ??= mine.unknown;
        files.push(`${place.repoPath} (${mine.unknown})`);
        continue;
      }
      touched.set(mine.path, [...(touched.get(mine.path) ?? []), ...edits]);
      const have = ourEdits.get(mine.path) ?? [];
      const sig = signature(edits);
      if (have.length > 0 && carries(signature(have.map((h) => h.edit)), sig)) {
        carried++;
        oursShown.push(`${[...new Set(have.map((h) => h.fixup.id))].join(', ')}`);
      } else if (have.length > 0) {
        otherwise++;
        oursShown.push(`${[...new Set(have.map((h) => h.fixup.id))].join(', ')} changes ${mine.path} otherwise (${describeSignature(signature(have.map((h) => h.edit)))})`);
      } else {
        missing++;
        oursShown.push(`nothing on ${mine.path}`);
      }
      files.push(`${mine.path}: ${describeSignature(sig)}`);
    }
    const peerText = `${condText(f.when)}${files.join('; ')}`;
    if (missing + otherwise > 0) {
      const why = argue(input, 'fixups', f.id);
      lacks.push(f.id);
      out.push({ fact: 'fixups', item: f.id, status: 'differs', ours: oursShown.join('; '), peer: peerText, finding: true, ...(why ? { argued: why } : {}), note: `${label}'s fix-up changes our source; we carry no equivalent edit`, peerWhere: f.where });
    } else if (unknown > 0) {
      out.push({ fact: 'fixups', item: f.id, status: 'unreadable', peer: peerText, note: 'whether its files are in our source was not decided', peerWhere: f.where });
    } else if (carried > 0) {
      out.push({ fact: 'fixups', item: f.id, status: 'agrees', ours: oursShown.join('; '), peer: peerText, peerWhere: f.where });
    } else {
      out.push({ fact: 'fixups', item: f.id, status: 'agrees', ours: '—', peer: peerText, note: 'not in our source', peerWhere: f.where });
    }
  }
  compareOurFixups(input, out, touched, unplaced);
}

/** Ours that the peer does not make: argued by their own reason or a differences entry. */
function compareOurFixups(input: CompareInput, out: ItemResult[], touched: ReadonlyMap<string, FileEdit[]>, unplaced: string | undefined): void {
  const { ours } = input;
  const label = PEER_LABEL[input.kind];
  for (const f of ours.recipe.fixups) {
    const paths = [...new Set(f.edits.map((e) => e.path))];
    const alone = paths.filter((p) => !touched.has(p));
    if (paths.length > 0 && alone.length === 0) continue;
    const why = argue(input, 'fixups', f.id) ?? f.reason;
    if (f.unreadable) {
      out.push({ fact: 'fixups', item: f.id, status: 'unreadable', ours: f.unreadable, oursWhere: f.where });
      continue;
    }
    if (unplaced) {
      out.push({ fact: 'fixups', item: f.id, status: 'unreadable', ours: alone.join(', '), note: `ours; whether ${label} edits these files was not decided (${unplaced})`, oursWhere: f.where });
      continue;
    }
    out.push({ fact: 'fixups', item: f.id, status: 'differs', ours: `${condText(f.when)}${alone.join(', ')}`, peer: '—', note: `ours only`, ...(why ? { argued: why } : {}), oursWhere: f.where });
  }
}

function compareGentooOnly(input: CompareInput, out: ItemResult[]): void {
  const { peer, ours } = input;
  if (peer.llvm || ours.recipe.llvm) {
    const a = ours.recipe.llvm?.slots.join(' ') ?? '—';
    const b = peer.llvm?.slots.join(' ') ?? '—';
    out.push({ fact: 'llvm', item: 'LLVM_COMPAT', status: a === b ? 'agrees' : 'differs', ours: a, peer: b, ...(ours.recipe.llvm ? { oursWhere: ours.recipe.llvm.where } : {}), ...(peer.llvm ? { peerWhere: peer.llvm.where } : {}) });
  }
  const a = ours.recipe.tests?.restrict ?? '';
  const b = peer.tests?.restrict ?? '';
  out.push({ fact: 'tests', item: 'RESTRICT', status: a === b ? 'agrees' : 'differs', ours: a || '(none)', peer: b || '(none)', ...(ours.recipe.tests ? { oursWhere: ours.recipe.tests.where } : {}), ...(peer.tests ? { peerWhere: peer.tests.where } : {}) });
}

const RECORD_FACT: Record<FactKind, EvidenceFact> = { sources: 'sources', deps: 'deps', llvm: 'deps', cmake: 'cmake', fixups: 'fixups', tests: 'tests' };
const EVIDENCE_ORDER: EvidenceFact[] = ['sources', 'deps', 'cmake', 'fixups', 'tests'];

export function compareRecipes(input: CompareInput): Comparison {
  const items: ItemResult[] = [];
  const lacks: string[] = [];
  compareSources(input, items);
  compareDeps(input, items);
  compareCmake(input, items);
  const aside: PeerRecipe['aside'] = [];
  compareFixups(input, items, lacks, aside);
  if (input.kind === 'gentoo') compareGentooOnly(input, items);
  for (const it of items) if (it.status === 'differs' && it.argued === undefined) {
    const why = argue(input, it.fact, it.item);
    if (why) it.argued = why;
  }
  const kinds: FactKind[] = input.kind === 'gentoo' ? ['sources', 'deps', 'cmake', 'fixups', 'llvm', 'tests'] : ['sources', 'deps', 'cmake', 'fixups'];
  const facts: Partial<Record<FactKind, FactState>> = {};
  const wholeUnreadable = [...input.peer.unreadable, ...input.ours.recipe.unreadable].some((u) => u.fact === undefined);
  for (const k of kinds) {
    const mine = items.filter((i) => i.fact === k);
    if (k === 'llvm' && mine.length === 0) continue;
    const readFail = wholeUnreadable || [...input.peer.unreadable, ...input.ours.recipe.unreadable].some((u) => u.fact === k);
    if (readFail || mine.some((i) => i.status === 'unreadable')) facts[k] = 'unreadable';
    else if (mine.some((i) => i.status === 'differs' && !i.argued)) facts[k] = 'differs';
    else if (mine.some((i) => i.status === 'differs')) facts[k] = 'argued';
    else facts[k] = 'agrees';
  }
  const ok = (k: FactKind) => facts[k] === 'agrees' || facts[k] === 'argued';
  const recordFacts = EVIDENCE_ORDER.filter((f) => {
    const parts = kinds.filter((k) => RECORD_FACT[k] === f && (k !== 'llvm' || facts.llvm !== undefined));
    return parts.length > 0 && parts.every(ok);
  });
  return { items, facts, lacks, recordFacts, aside };
}

