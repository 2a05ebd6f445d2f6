import { formatBytes } from '../../distfiles/units.js';
import { printable } from '../../util/printable.js';
import { showPlace, type TheRockComparison } from './compare.js';
import type { TheRockRelease } from './release.js';
import type { Submodule } from './gitmodules.js';
import type { Subproject } from './subprojects.js';

/** What `upstream therock` reports: TheRock's composition, and how the manifest compares. */
export interface TheRockReport {
  therock: TheRockRelease;
  comparison: TheRockComparison;
  /** Counts for people and scripts. */
  summary: TheRockSummary;
}

export interface TheRockSummary {
  repositories: number;
  subprojects: number;
  /** Subprojects built from a pinned repository (the rest are TheRock's own or bundled third-party code). */
  fromRepositories: number;
  dependencies: number;
  artifactGroups: number;
  artifacts: number;
  matchedPackages: number;
  new: number;
  gone: number;
  moved: number;
  depsTheirsOnly: number;
  depsOursOnly: number;
}

export function summarize(t: TheRockRelease, c: TheRockComparison): TheRockSummary {
  return {
    repositories: t.submodules.length,
    subprojects: t.subprojects.length,
    fromRepositories: t.subprojects.filter((s) => s.source.kind === 'submodule' || s.source.wraps !== undefined).length,
    dependencies: t.subprojects.reduce((n, s) => n + s.deps.length, 0),
    artifactGroups: t.topology?.groups.length ?? 0,
    artifacts: t.topology?.artifacts.length ?? 0,
    matchedPackages: new Set(c.matches.map((m) => m.atom)).size,
    new: c.new.length,
    gone: c.gone.length,
    moved: c.moved.length,
    depsTheirsOnly: c.depsTheirsOnly.length,
    depsOursOnly: c.depsOursOnly.length,
  };
}

const short = (commit: string) => commit.slice(0, 12);
const pad = (rows: string[][]): string[] => {
  const widths = rows.reduce<number[]>((w, r) => r.map((c, i) => Math.max(w[i] ?? 0, c.length)), []);
  return rows.map((r) => `  ${r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')}`.trimEnd());
};

function where(s: Subproject, submodules: ReadonlyMap<string, Submodule>): string {
  const src = s.source;
  if (src.kind === 'submodule') {
    const sub = submodules.get(src.submodule!);
    return showPlace({ repo: sub?.github ?? sub?.url ?? src.submodule!, dir: src.dir ?? '' });
  }
  if (src.kind === 'tree') return `TheRock:${src.dir || '.'}${src.wraps ? ` (wraps ${src.wraps})` : ''}`;
  if (src.kind === 'build') return 'downloaded while building';
  return `unresolved: ${src.why}`;
}

function deps(s: Subproject): string {
  const list = (kind: string) =>
    s.deps
      .filter((d) => d.kind === kind)
      .map((d) => `${d.name}${d.via ? '*' : ''}`)
      .join(' ');
  const parts = [['build', list('build')], ['runtime', list('runtime')], ['toolchain', list('toolchain')]].filter(([, v]) => v !== '');
  return parts.map(([k, v]) => `${k}: ${v}`).join('; ');
}

export function formatTheRockText(r: TheRockReport): string {
  const t = r.therock;
  const c = r.comparison;
  const out: string[] = [];
  const kind = t.fullRef.startsWith('refs/tags/') ? 'tag' : 'branch';
  out.push(`TheRock ${t.ref} (${kind}, commit ${short(t.commit)}): ROCm ${t.version ?? 'version unknown'}${t.bytes > 0 ? `; ${formatBytes(t.bytes)} fetched` : ''}`);
  out.push('');
  out.push(`${t.submodules.length} repositories pinned:`);
  out.push(...pad(t.submodules.map((m) => [m.name, m.github ?? m.url, short(m.commit), m.path])));
  out.push('');
  out.push(`${t.subprojects.length} subprojects (${r.summary.fromRepositories} from pinned repositories; * only in some configurations):`);
  const submodules = new Map(t.submodules.map((m) => [m.name, m]));
  out.push(...pad(t.subprojects.map((s) => [s.name, where(s, submodules), deps(s)])));
  if (t.topology) {
    out.push('');
    out.push(`${t.topology.groups.length} artifact groups, ${t.topology.artifacts.length} artifacts (BUILD_TOPOLOGY.toml):`);
    const inGroup = new Map<string, string[]>();
    for (const a of t.topology.artifacts) {
      if (a.group === undefined) continue;
      const have = inGroup.get(a.group);
      if (have) have.push(a.name);
      else inGroup.set(a.group, [a.name]);
    }
    out.push(
      ...pad(
        t.topology.groups.map((g) => {
          const arts = inGroup.get(g.name) ?? [];
          return [g.name, g.type ?? '', `after: ${g.deps.join(' ') || '-'}`, `artifacts: ${arts.join(' ') || '-'}`];
        }),
      ),
    );
  }
  out.push('');
  out.push(`Against the manifest's ${c.release}:`);
  out.push(`  ${r.summary.matchedPackages} packages correspond to ${c.matches.length} subprojects:`);
  out.push(...pad(c.matches.map((m) => [`  ${m.subproject}`, m.atom, m.how === 'location' ? 'same place' : m.how === 'name' ? 'by name' : m.how === 'within' ? 'TheRock builds part of ours' : 'ours is part of it'])));
  for (const a of c.ambiguous) out.push(`  ${a.subproject}: could be any of ${a.atoms.join(', ')}; not matched`);
  out.push(`  New in TheRock, not packaged (${c.new.length}):`);
  out.push(...pad(c.new.map((n) => [`  ${n.subproject}`, showPlace(n.theirs), short(n.commit), n.excluded ? `excluded: ${n.excluded}` : 'decide: package or exclude'])));
  out.push(`  Packaged, not built by TheRock (${c.gone.length}): their versions come from elsewhere`);
  out.push(...pad(c.gone.map((g) => [`  ${g.atom}`, g.versionSource])));
  out.push(`  Moved (${c.moved.length}): our source → the one TheRock pins`);
  out.push(...pad(c.moved.map((m) => [`  ${m.atom}`, `${showPlace(m.ours)} → ${showPlace(m.theirs)} @ ${short(m.commit)}`])));
  out.push(`  Dependencies TheRock has that the manifest lacks (${c.depsTheirsOnly.length}; not even through other packages):`);
  out.push(...pad(c.depsTheirsOnly.map((d) => [`  ${d.from} → ${d.to}`, d.detail])));
  out.push(`  Dependencies the manifest has that TheRock lacks (${c.depsOursOnly.length}):`);
  out.push(...pad(c.depsOursOnly.map((d) => [`  ${d.from} → ${d.to}`, d.detail])));
  if (c.bundled.length) out.push(`  Bundled by TheRock (${c.bundled.length}; Gentoo's own packages stand in): ${c.bundled.join(' ')}`);
  if (t.unresolved.length) {
    out.push('');
    out.push(`Not resolved without configuring TheRock (${t.unresolved.length}):`);
    for (const u of t.unresolved) out.push(`  ${u}`);
  }
  if (t.problems.length) {
    out.push('');
    out.push(`Problems in TheRock's files (${t.problems.length}; left out of the report):`);
    for (const p of t.problems) out.push(`  ${p}`);
  }
  out.push('');
  const s = r.summary;
  out.push(
    `${t.ref}: ${s.repositories} repositories, ${s.subprojects} subprojects (${s.fromRepositories} from them), ${s.dependencies} dependencies; ` +
      `against ${c.release}: ${s.matchedPackages} packages matched, ${s.new} new, ${s.gone} not built by TheRock, ${s.moved} moved, ` +
      `${s.depsTheirsOnly} dependencies only TheRock has, ${s.depsOursOnly} only ours`,
  );
  // Every name, path, URL and message above came from the repository read: each line is shown as the characters it holds.
  return `${out.map((line) => printable(line, { oneLine: true })).join('\n')}\n`;
}
