import path from 'node:path';
import type { Manifest } from '../../manifest/load.js';
import type { DepSpec, PrepareOp } from '../../manifest/types.js';
import { patchesOf } from '../../model/patches.js';
import type { ResolvedComponent, StackModel } from '../../model/resolve.js';
import { renderEbuild } from '../../render/index.js';
import { LocalDir } from '../trees/local-dir.js';
import { sourceRefs } from '../trees/sources.js';
import { readEbuild } from './gentoo.js';
import type { PeerRecipe, Unpacked } from './recipe.js';

/**
 * Our side of a comparison: the ebuild the manifest generates for the
 * release, rendered and read back by the same reader as ::gentoo's (so both
 * sides' dependencies, options and sed edits come out in one form), with
 * what only our data knows added: each source's tree (repository, tag,
 * project directory), the reasons our fix-ups give, and the packages our
 * dependencies bring at run time.
 */

export interface OurSide {
  recipe: PeerRecipe;
  /** The ebuild's name for people ("sci-libs/rocPRIM/rocPRIM-7.2.0.ebuild, as generated"). */
  label: string;
  /** The component's USE flags (IUSE), to map Spack's variants. */
  useFlags: Set<string>;
  /** Atoms our dependencies bring at run time, transitively, with the direct dependency that brings each. */
  through: Map<string, string>;
}

/** The reasons our data gives for the fix-ups on each file, by the id the reader gives its sed edits. */
function reasons(ops: readonly PrepareOp[] | undefined): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const op of ops ?? []) {
    if (!op.reason) continue;
    const files = 'replace' in op ? op.replace.files : 'delete_lines' in op ? op.delete_lines.files : 'insert' in op ? op.insert.files : [];
    for (const f of files) {
      const id = `sed ${f.replace(/^\$\{S\}\//, '')}`;
      out.set(id, [...(out.get(id) ?? []), op.reason]);
    }
  }
  return out;
}

/** RDEPEND edges of the stack's components in this release, by atom. */
function runtimeEdges(model: StackModel): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const c of model.components) {
    const deps: { atom: string; classes: readonly string[] }[] = [...((c.spec.deps ?? []) as DepSpec[]), ...(c.spec.llvm?.deps ?? [])];
    out.set(
      c.atom,
      deps.filter((d) => d.classes.includes('RDEPEND') && !('blocker' in d && d.blocker)).map((d) => d.atom),
    );
  }
  return out;
}

/** Atoms reachable at run time from each direct dependency (not the direct ones themselves). */
function transitive(direct: readonly string[], edges: Map<string, string[]>): Map<string, string> {
  const through = new Map<string, string>();
  for (const d of direct) {
    const seen = new Set<string>([d]);
    const queue = [...(edges.get(d) ?? [])];
    while (queue.length > 0) {
      const a = queue.shift()!;
      if (seen.has(a)) continue;
      seen.add(a);
      if (!through.has(a)) through.set(a, d);
      queue.push(...(edges.get(a) ?? []));
    }
  }
  return through;
}

export async function ourSide(manifest: Manifest, model: StackModel, c: ResolvedComponent): Promise<OurSide> {
  const text = renderEbuild(c, model, { year: 2000 });
  const file = `${c.atom}/${c.pn}-${c.version}.ebuild`;
  const patches = await LocalDir.open(manifest.dir).catch(() => undefined);
  const recipe = await readEbuild({
    text,
    file,
    category: c.category,
    pn: c.pn,
    version: c.version,
    requested: c.version,
    nearest: false,
    peer: 'gentoo',
    readPatch: async (name) => {
      const rel = path.join('patches', c.spec.name, name);
      return patches && (await patches.exists(rel)) ? patches.readText(rel) : undefined;
    },
    patchFile: (name) => path.join(manifest.dir, 'patches', c.spec.name, name),
  });
  // Our data names each source's tree; the ebuild's SRC_URI alone only guesses a release asset's directory.
  const refs = sourceRefs(manifest, c);
  recipe.unpacked = refs.map(
    (r): Unpacked => ({
      dir: r.dir,
      ...(r.github && r.tag ? { tree: { repo: r.github, tag: r.tag, ...(r.path ? { dir: r.path } : {}) } } : {}),
      where: { file, line: 1 },
    }),
  );
  const why = reasons(c.spec.prepare);
  for (const f of recipe.fixups) {
    const r = why.get(f.id);
    if (r) f.reason = r.join('; ');
  }
  // The patches of this release as the ebuild names them (a fetched one's distfile expanded for PV).
  for (const p of patchesOf(c.spec.patches, c.pn, c.version, model.release.version)) {
    const reason = p.kind === 'file' ? p.reason : p.spec.reason;
    const f = reason ? recipe.fixups.find((x) => x.id === `patch ${p.kind === 'file' ? p.file : p.name}`) : undefined;
    if (f) f.reason = reason;
  }
  const iuse = /^IUSE="([^"]*)"/m.exec(text)?.[1] ?? '';
  const useFlags = new Set(iuse.split(/\s+/).filter(Boolean).map((f) => f.replace(/^[+-]/, '')));
  const direct = [...new Set(recipe.deps.filter((d) => d.classes.includes('RDEPEND') || d.classes.includes('DEPEND')).map((d) => d.atom!).filter(Boolean))];
  return { recipe, label: `${file} (as generated)`, useFlags, through: transitive(direct, runtimeEdges(model)) };
}
