import type { Manifest } from '../../manifest/load.js';
import { projectKey } from '../../model/sources/index.js';
import type { ResolvedComponent } from '../../model/resolve.js';
import { inRange } from '../../model/version.js';
import { resolveAt } from '../trees/sources.js';
import type { Submodule } from './gitmodules.js';
import type { TheRockRelease } from './release.js';
import type { Subproject } from './subprojects.js';

/**
 * TheRock's composition against one release of the manifest: which of
 * TheRock's subprojects each package corresponds to (by where its source
 * lives first, by name second), what TheRock builds that the manifest lacks,
 * what the manifest packages that TheRock does not build (and where such a
 * package's version must then come from), packages whose source moved, and
 * the dependencies one side has that the other lacks.
 */

/** A place in a repository: owner/name (or a URL for non-GitHub submodules) and a directory ('' for the root). */
export interface Place {
  repo: string;
  dir: string;
}

export const showPlace = (p: Place) => (p.dir ? `${p.repo}:${p.dir}` : p.repo);

export type MatchHow = 'location' | 'within' | 'contains' | 'name';

export interface Match {
  subproject: string;
  atom: string;
  /** location: the same directory; within: TheRock's directory is inside ours; contains: ours is inside TheRock's; name: only the names agree. */
  how: MatchHow;
  theirs: Place;
  ours?: Place;
}

export interface Moved {
  atom: string;
  subproject: string;
  ours: Place;
  theirs: Place;
  /** The commit TheRock pins. */
  commit: string;
}

export interface Gone {
  atom: string;
  ours?: Place;
  /** Where its versions must come from instead, for people. */
  versionSource: string;
}

export interface NewComponent {
  subproject: string;
  theirs: Place;
  commit: string;
  /** An exclusion of the manifest covering it, by name. */
  excluded?: string;
}

export interface DepDifference {
  from: string;
  to: string;
  /** TheRock's side: the subprojects and the kind of dependency; ours: the dependency classes. */
  detail: string;
}

export interface Ambiguous {
  subproject: string;
  atoms: string[];
}

export interface TheRockComparison {
  /** The manifest release compared with. */
  release: string;
  matches: Match[];
  ambiguous: Ambiguous[];
  new: NewComponent[];
  /** TheRock's subprojects from its own tree or the build tree (bundled third-party code, helpers): Gentoo packages stand in. */
  bundled: string[];
  gone: Gone[];
  moved: Moved[];
  /** TheRock has them, the manifest's data lacks them (not even through other packages). */
  depsTheirsOnly: DepDifference[];
  /** The manifest has them, TheRock's subprojects do not (not even through others). */
  depsOursOnly: DepDifference[];
}

interface Ours {
  c: ResolvedComponent;
  places: Place[];
  /** Names it is known by: name, PN, projects, source repositories and release assets, subdirectory basenames. */
  keys: Set<string>;
  /** Words of its own name and PN, for breaking ties ("hip" in hip-clr). */
  words: Set<string>;
}

const words = (s: string) => s.toLowerCase().split(/[^a-z0-9]+/).filter(Boolean);
const base = (dir: string) => dir.split('/').filter(Boolean).at(-1) ?? '';
const inside = (inner: string, outer: string) => outer === '' || inner === outer || inner.startsWith(`${outer}/`);

function ours(c: ResolvedComponent): Ours {
  const places: Place[] = [];
  const keys = new Set<string>([projectKey(c.name), projectKey(c.pn), ...(c.spec.projects ?? []).map(projectKey)]);
  for (const s of c.sources) {
    const l = s.location;
    if (!l.repo) continue;
    const dir = (l.path ?? s.spec.subdir ?? '').replace(/^\/+|\/+$/g, '');
    places.push({ repo: l.repo, dir });
    if (l.project) keys.add(projectKey(l.project));
    if (dir) keys.add(projectKey(base(dir)));
  }
  keys.delete('');
  return { c, places, keys, words: new Set([...words(c.name), ...words(c.pn)]) };
}

/** TheRock's place of a subproject: its submodule's repository and the directory below it. */
export function placeOf(s: Subproject, submodules: readonly Submodule[]): { place: Place; commit: string } | undefined {
  if (s.source.kind !== 'submodule' && s.source.wraps === undefined) return undefined;
  const sub = byName(submodules).get((s.source.submodule ?? s.source.wraps)!);
  if (!sub) return undefined;
  // A wrapper directory of TheRock's tree builds the whole submodule it holds.
  return { place: { repo: sub.github ?? sub.url, dir: s.source.kind === 'submodule' ? (s.source.dir ?? '') : '' }, commit: sub.commit };
}

/** Submodules by name, made once per list: placeOf is asked for every subproject. */
const indexes = new WeakMap<readonly Submodule[], Map<string, Submodule>>();
function byName(submodules: readonly Submodule[]): Map<string, Submodule> {
  let index = indexes.get(submodules);
  if (!index) {
    index = new Map();
    for (const m of submodules) if (!index.has(m.name)) index.set(m.name, m);
    indexes.set(submodules, index);
  }
  return index;
}

/** What score() needs of a subproject, worked out once per subproject rather than once per package. */
interface Theirs {
  key: string;
  dirKey?: string;
  words: string[];
}

function score(t: Theirs, theirs: Place | undefined, o: Ours): { score: number; how: MatchHow; ours?: Place } | undefined {
  let loc = 0;
  let how: MatchHow = 'name';
  let at: Place | undefined;
  if (theirs) {
    for (const p of o.places) {
      if (p.repo !== theirs.repo) continue;
      const here = p.dir === theirs.dir ? 3 : inside(theirs.dir, p.dir) ? 2 : inside(p.dir, theirs.dir) ? 1 : 0;
      if (here > loc) {
        loc = here;
        at = p;
        how = here === 3 ? 'location' : here === 2 ? 'within' : 'contains';
      }
    }
  }
  let name = 0;
  if (o.keys.has(t.key)) name = 2;
  else if (t.dirKey !== undefined && o.keys.has(t.dirKey)) name = 1;
  if (t.words.some((w) => o.words.has(w))) name += 0.5;
  // A name alone must be the subproject's own name or its directory's.
  if (loc === 0 && name < 1) return undefined;
  return { score: loc * 10 + name, how, ...(at ? { ours: at } : { ours: o.places[0] }) };
}

export function compareWithManifest(manifest: Manifest, version: string, release: TheRockRelease): TheRockComparison {
  const components = manifest.components.map((l) => resolveAt(manifest, l, version)).filter((c): c is ResolvedComponent => c !== undefined);
  const all = components.map(ours);
  const { matches, ambiguous } = matchSubprojects(all, release);
  const atomOf = new Map(matches.map((m) => [m.subproject, m.atom]));
  const { fresh, bundled } = unmatchedSubprojects(manifest, version, release, atomOf, ambiguous);
  const gone = goneComponents(all, matches, ambiguous, version, release);
  const moved = movedPackages(matches, release);
  const { theirsOnly, oursOnly } = compareDeps(components, matches, atomOf, release);
  const byEdge = (a: DepDifference, b: DepDifference) => (`${a.from} ${a.to}` < `${b.from} ${b.to}` ? -1 : 1);
  return {
    release: version,
    matches,
    ambiguous,
    new: fresh.sort((a, b) => (a.subproject.toLowerCase() < b.subproject.toLowerCase() ? -1 : 1)),
    bundled: bundled.sort(),
    gone,
    moved: moved.sort((a, b) => (a.atom < b.atom ? -1 : 1)),
    depsTheirsOnly: [...theirsOnly.values()].sort(byEdge),
    depsOursOnly: oursOnly.sort(byEdge),
  };
}

/** Each of TheRock's subprojects matched to the one package with the strongest evidence, or to several (ambiguous). */
function matchSubprojects(all: Ours[], release: TheRockRelease): { matches: Match[]; ambiguous: Ambiguous[] } {
  const candidates = release.subprojects.map((s) => {
    const at = placeOf(s, release.submodules);
    const t: Theirs = { key: projectKey(s.name), words: words(s.name), ...(at?.place.dir ? { dirKey: projectKey(base(at.place.dir)) } : {}) };
    const scored = all
      .map((o) => ({ o, r: score(t, at?.place, o) }))
      .filter((x): x is { o: Ours; r: NonNullable<ReturnType<typeof score>> } => x.r !== undefined)
      .sort((a, b) => b.r.score - a.r.score);
    return { s, at, scored, best: scored[0]?.r.score ?? 0 };
  });
  // Strongest evidence first, so a weaker candidate can tell which packages are already someone's.
  candidates.sort((a, b) => b.best - a.best);
  const matches: Match[] = [];
  const ambiguous: Ambiguous[] = [];
  const claimed = new Set<string>();
  for (const { s, at, scored, best } of candidates) {
    // TheRock's own or bundled code: a name that happens to match is not a package of the same thing.
    if (!at && (s.source.kind === 'tree' || s.source.kind === 'build')) continue;
    let top = scored.filter((x) => x.r.score === best);
    if (top.length > 1) {
      const free = top.filter((x) => !claimed.has(x.o.c.atom));
      if (free.length >= 1) top = free;
    }
    if (top.length === 0) continue;
    if (top.length > 1) {
      ambiguous.push({ subproject: s.name, atoms: top.map((x) => x.o.c.atom).sort() });
      continue;
    }
    const { o, r } = top[0]!;
    claimed.add(o.c.atom);
    matches.push({ subproject: s.name, atom: o.c.atom, how: r.how, theirs: at?.place ?? { repo: 'ROCm/TheRock', dir: s.source.dir ?? '' }, ...(r.ours ? { ours: r.ours } : {}) });
  }
  matches.sort((a, b) => (a.subproject.toLowerCase() < b.subproject.toLowerCase() ? -1 : 1));
  return { matches, ambiguous };
}

/** TheRock's subprojects no package matched: new ones from a pinned submodule, and TheRock's own or bundled code. */
function unmatchedSubprojects(
  manifest: Manifest,
  version: string,
  release: TheRockRelease,
  atomOf: ReadonlyMap<string, string>,
  ambiguous: readonly Ambiguous[],
): { fresh: NewComponent[]; bundled: string[] } {
  const ambiguousNames = new Set(ambiguous.map((a) => a.subproject));
  const exclusions = (manifest.stack.excluded ?? []).filter((e) => inRange(version, e.releases));
  const fresh: NewComponent[] = [];
  const bundled: string[] = [];
  for (const s of release.subprojects) {
    if (atomOf.has(s.name) || ambiguousNames.has(s.name)) continue;
    const at = placeOf(s, release.submodules);
    if (!at) {
      if (s.source.kind === 'tree' || s.source.kind === 'build') bundled.push(s.name);
      continue;
    }
    const keys = [projectKey(s.name), projectKey(base(at.place.dir))];
    const excluded = exclusions.find((e) => keys.includes(projectKey(e.project)))?.reason.replace(/\s+/g, ' ').trim();
    fresh.push({ subproject: s.name, theirs: at.place, commit: at.commit, ...(excluded !== undefined ? { excluded } : {}) });
  }
  return { fresh, bundled };
}

/** Our packages no subproject matched, with where their version comes from instead. */
function goneComponents(all: readonly Ours[], matches: readonly Match[], ambiguous: readonly Ambiguous[], version: string, release: TheRockRelease): Gone[] {
  const matchedAtoms = new Set(matches.map((m) => m.atom));
  const pinnedRepos = new Set(release.submodules.map((m) => m.github ?? m.url));
  return all
    .filter((o) => !matchedAtoms.has(o.c.atom) && !ambiguous.some((a) => a.atoms.includes(o.c.atom)))
    .map((o) => {
      const main = o.places[0];
      const tag = o.c.sources[0]?.location.tag;
      let versionSource: string;
      if (!main) versionSource = 'its own download (no repository); TheRock pins no version of it';
      else if (pinnedRepos.has(main.repo)) {
        versionSource = `TheRock pins ${main.repo} but builds nothing from ${showPlace(main)}: the pinned commit's tree has it, or take ${main.repo}'s own tags`;
      } else versionSource = `its own repository's tags (${main.repo}${tag ? `, ${tag} in ${version}` : ''}): TheRock pins no version of it`;
      return { atom: o.c.atom, ...(main ? { ours: main } : {}), versionSource };
    })
    .sort((a, b) => (a.atom < b.atom ? -1 : 1));
}

/** Packages matched by name whose subproject TheRock builds from another place than ours. */
function movedPackages(matches: readonly Match[], release: TheRockRelease): Moved[] {
  const moved: Moved[] = [];
  const subprojectNamed = new Map(release.subprojects.map((s) => [s.name, s]));
  const placed = (x: Match) => x.how === 'location' || x.how === 'within' || x.how === 'contains';
  const placedIn = new Set(matches.filter(placed).map((x) => `${x.atom} ${x.theirs.repo}`));
  const movedAtoms = new Set<string>();
  for (const m of matches) {
    if (placed(m) || !m.ours) continue;
    const at = placeOf(subprojectNamed.get(m.subproject)!, release.submodules);
    if (!at) continue;
    if (m.ours.repo === at.place.repo && m.ours.dir === at.place.dir) continue;
    // A package matched through a test subproject moved with its main one: report it once.
    if (movedAtoms.has(m.atom)) continue;
    // Nor did it move when its main subproject is where the package already
    // takes it from in the same pinned repository: the tests are a sibling
    // directory of the tree it fetches (hip-tests next to clr in rocm-systems).
    if (placedIn.has(`${m.atom} ${at.place.repo}`)) continue;
    movedAtoms.add(m.atom);
    moved.push({ atom: m.atom, subproject: m.subproject, ours: m.ours, theirs: at.place, commit: at.commit });
  }
  return moved;
}

/** Every node reachable from `from` over `edges`. */
function reach<T extends { to: string }>(edges: Map<string, T[]>, from: readonly string[]): Set<string> {
  const seen = new Set<string>();
  const stack = [...from];
  while (stack.length) {
    for (const e of edges.get(stack.pop()!) ?? []) {
      if (!seen.has(e.to)) {
        seen.add(e.to);
        stack.push(e.to);
      }
    }
  }
  return seen;
}

/**
 * Dependencies: each side's direct edges checked against the other side's
 * transitive closure, so a dependency one side states directly and the
 * other gets through a third package is not reported.
 */
function compareDeps(
  components: readonly ResolvedComponent[],
  matches: readonly Match[],
  atomOf: ReadonlyMap<string, string>,
  release: TheRockRelease,
): { theirsOnly: Map<string, DepDifference>; oursOnly: DepDifference[] } {
  const atoms = new Set(components.map((c) => c.atom));
  const theirEdges = new Map<string, { to: string; kind: string }[]>();
  for (const s of release.subprojects) theirEdges.set(s.name, s.deps.map((d) => ({ to: d.name, kind: d.kind })));
  const ourEdges = new Map<string, { to: string; classes: string }[]>();
  for (const c of components) {
    ourEdges.set(
      c.atom,
      (c.spec.deps ?? []).filter((d) => !d.blocker && atoms.has(d.atom) && d.atom !== c.atom).map((d) => ({ to: d.atom, classes: d.classes.join('+') })),
    );
  }
  const subsOf = new Map<string, string[]>();
  for (const m of matches) {
    const have = subsOf.get(m.atom);
    if (have) have.push(m.subproject);
    else subsOf.set(m.atom, [m.subproject]);
  }

  // A dependency on a subproject our package is only a part of (amd-llvm,
  // which holds device-libs but is above all the compiler, vanilla LLVM in
  // Gentoo) says nothing about that part: not compared.
  const partial = new Set(matches.filter((m) => m.how === 'contains').map((m) => m.subproject));
  const theirsOnly = new Map<string, DepDifference>();
  for (const s of release.subprojects) {
    const from = atomOf.get(s.name);
    if (!from) continue;
    const ourReach = reach(ourEdges, [from]);
    for (const d of s.deps) {
      const to = atomOf.get(d.name);
      if (!to || to === from || ourReach.has(to) || partial.has(d.name)) continue;
      const key = `${from} ${to}`;
      const detail = `${s.name} → ${d.name} (${d.kind}${d.via ? `, through ${d.via}` : ''})`;
      const have = theirsOnly.get(key);
      if (have) have.detail += `; ${detail}`;
      else theirsOnly.set(key, { from, to, detail });
    }
  }
  const oursOnly: DepDifference[] = [];
  for (const c of components) {
    const fromSubs = subsOf.get(c.atom);
    if (!fromSubs) continue;
    // What any of the package's subprojects reaches: one walk from all of them.
    const theirReach = reach(theirEdges, fromSubs);
    const own = new Set(fromSubs);
    for (const e of ourEdges.get(c.atom) ?? []) {
      const toSubs = subsOf.get(e.to);
      if (!toSubs || toSubs.some((t) => theirReach.has(t) || own.has(t))) continue;
      oursOnly.push({ from: c.atom, to: e.to, detail: e.classes });
    }
  }
  return { theirsOnly, oursOnly };
}
