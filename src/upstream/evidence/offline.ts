import type { DefineValue } from '../../manifest/types.js';
import type { ResolvedComponent } from '../../model/resolve.js';
import { UNKNOWN, type Value } from '../facts/cmake-condition.js';
import { reachNetwork, type ReachReport, type ReachSource } from '../facts/cmake-reach.js';
import { evaluateWord, type Helpers } from '../replay/bash-words.js';
import { replayEnvironment, type ReplayTrees } from '../replay/replay.js';
import type { SourceTree } from '../trees/source-tree.js';
import type { FactCheck, FactDetail } from './fact.js';

/**
 * The `offline` fact: with the -D options the ebuild passes, the source's
 * CMake (as the fix-ups and patches leave it) reaches no download
 * (facts/cmake-reach.ts). Options switched by USE flags are tried with the
 * flags on and off: a download any combination reaches for sure fails the
 * fact, naming the flags.
 */

/** What bash expands a value with in the replay: its variables and the fixed output of helpers. */
export interface Bash {
  env: ReadonlyMap<string, string>;
  helpers: Helpers;
}

/** At most this many USE flags are tried both ways; the values of the others are unknown. */
const MAX_FLAGS = 5;

/** A -D value as bash would expand it in the ebuild, where that is fixed; UNKNOWN when it is computed. */
function defineValue(v: DefineValue, use: ReadonlyMap<string, boolean>, { env, helpers }: Bash): Value {
  if (typeof v === 'object') {
    const on = use.get(v.use);
    if (on === undefined) return UNKNOWN;
    return on ? (v.on ?? 'ON') : (v.off ?? 'OFF');
  }
  const text = String(v);
  if (!text.includes('$')) return text;
  const w = evaluateWord(`"${text.replace(/["\\`]/g, '\\$&')}"`, env, helpers);
  return w.ok ? w.value : UNKNOWN;
}

/** The USE flags that switch a -D value, in the order written. */
function switchingFlags(c: ResolvedComponent): string[] {
  const flags = new Set<string>();
  const cm = c.spec.cmake ?? {};
  for (const v of Object.values(cm.defines ?? {})) if (typeof v === 'object') flags.add(v.use);
  for (const w of cm.when ?? []) {
    flags.add(w.use);
    for (const v of [...Object.values(w.defines), ...Object.values(w.otherwise ?? {})]) if (typeof v === 'object') flags.add(v.use);
  }
  return [...flags];
}

/** The cache a configure run starts with: every -D the ebuild passes under these USE flags. */
export function passedCache(c: ResolvedComponent, use: ReadonlyMap<string, boolean>, bash: Bash): Map<string, Value> {
  const cache = new Map<string, Value>();
  const cm = c.spec.cmake ?? {};
  for (const [k, v] of Object.entries(cm.defines ?? {})) cache.set(k, defineValue(v, use, bash));
  for (const w of cm.when ?? []) {
    const on = use.get(w.use);
    const chosen = on === undefined ? { ...w.defines, ...(w.otherwise ?? {}) } : on ? w.defines : (w.otherwise ?? {});
    for (const [k, v] of Object.entries(chosen)) cache.set(k, on === undefined ? UNKNOWN : defineValue(v, use, bash));
  }
  // Set only for some GPU targets: which, the user decides.
  for (const t of cm.target_defines ?? []) cache.set(t.name, UNKNOWN);
  for (const f of cm.flags ?? []) {
    const m = /^-D([A-Za-z_][A-Za-z0-9_.+-]*)(?::[A-Za-z]+)?=(.*)$/.exec(f);
    if (m) cache.set(m[1]!, defineValue(m[2]!, use, bash));
  }
  // The targets the user chose: some list, which one is theirs.
  if (c.spec.targets.mode !== 'none') for (const v of c.spec.targets.cmake_vars ?? []) cache.set(v, UNKNOWN);
  return cache;
}

const CMAKE_FILE = /(^|\/)CMakeLists\.txt$|\.cmake$/;

/**
 * The component's trees as the reading sees them: /WORKDIR/<dir>/<path>.
 * Each tree's CMake files are read in one request when it is first reached.
 */
function reachSource(trees: ReplayTrees): ReachSource {
  const main = trees.refs[0]!;
  const root = `/WORKDIR/${main.dir}${main.subdir ? `/${main.subdir}` : ''}`;
  const loaded = new Map<number, Promise<Map<string, string> | { error: string }>>();
  const filesOf = (index: number) => {
    let p = loaded.get(index);
    if (!p) {
      p = (async () => {
        const tree: SourceTree | { error: string } = await trees.tree(index);
        if ('error' in tree) return tree;
        const files = (await tree.files()).filter((f) => CMAKE_FILE.test(f));
        const contents = await tree.read(files);
        return new Map([...contents].map(([k, v]) => [k, v.toString('utf8')]));
      })();
      loaded.set(index, p);
    }
    return p;
  };
  return {
    root,
    async read(abs) {
      const m = /^\/WORKDIR\/([^/]+)\/(.+)$/.exec(abs);
      if (!m) return undefined;
      const ref = trees.refs.find((r) => r.dir === m[1]);
      if (!ref) return undefined;
      let rel = m[2]!;
      if (ref.subdir) {
        if (!rel.startsWith(`${ref.subdir}/`)) return { error: `outside ${ref.subdir}, the part of ${ref.dir} that is read` };
        rel = rel.slice(ref.subdir.length + 1);
      }
      const files = await filesOf(ref.index);
      if ('error' in files) return files;
      return files.get(rel);
    },
  };
}

function combinations(flags: string[]): Map<string, boolean>[] {
  const tried = flags.slice(0, MAX_FLAGS);
  const out: Map<string, boolean>[] = [];
  for (let bits = 0; bits < 1 << tried.length; bits++) out.push(new Map(tried.map((f, i) => [f, (bits & (1 << i)) !== 0])));
  return out;
}

const useLabel = (use: ReadonlyMap<string, boolean>) => [...use].map(([f, on]) => (on ? f : `-${f}`)).join(' ');

/** The offline fact of a CMake component, on its trees after the fix-ups; undefined for other build systems. */
export async function checkOffline(c: ResolvedComponent, trees: ReplayTrees): Promise<FactCheck | undefined> {
  if (c.spec.build !== 'cmake' || trees.refs.length === 0) return undefined;
  const source = reachSource(trees);
  const { env: replayEnv, helpers } = replayEnvironment(c, trees);
  const env = new Map(replayEnv);
  // Paths the ebuild passes are paths of the trees read.
  env.set('S', source.root);
  env.set('WORKDIR', '/WORKDIR');
  const bash = { env, helpers };
  const flags = switchingFlags(c);
  const runs: { use: Map<string, boolean>; report: ReachReport }[] = [];
  for (const use of combinations(flags)) runs.push({ use, report: await reachNetwork(source, passedCache(c, use, bash)) });
  const details: FactDetail[] = [];
  const seen = new Set<string>();
  const key = (d: { via: string; name: string; where: { file: string; line: number } }) => `${d.via} ${d.name} ${d.where.file}:${d.where.line}`;
  const all = runs.length;
  // Certain somewhere: failed, naming where (every combination, or the USE flags of those that reach it).
  for (const { report } of runs) {
    for (const d of report.downloads) {
      const k = key(d);
      if (seen.has(k)) continue;
      seen.add(k);
      const certainIn = runs.filter((r) => r.report.downloads.some((x) => key(x) === k && x.certain));
      const subject = `${d.via} ${d.name} (${d.where.file}:${d.where.line})`;
      if (certainIn.length > 0) {
        const when = flags.length === 0 || certainIn.length === all ? '' : ` with USE="${useLabel(certainIn[0]!.use)}"${certainIn.length > 1 ? ` (and ${certainIn.length - 1} more USE combinations)` : ''}`;
        details.push({ subject, status: 'failed', reason: `${d.detail}${when}: the network sandbox stops it; make the project find the installed package (a patch, FETCHCONTENT_SOURCE_DIR_<NAME> or FETCHCONTENT_TRY_FIND_PACKAGE_MODE=ALWAYS with the package a dependency)` });
      } else {
        details.push({ subject, status: 'unreadable', reason: `${d.detail}, in a branch whose condition depends on what configure computes: cannot tell whether it runs` });
      }
    }
  }
  for (const { report } of runs) {
    for (const a of report.avoided) {
      const k = `avoided ${key(a)}`;
      if (seen.has(k)) continue;
      seen.add(k);
      details.push({ subject: `${a.via} ${a.name} (${a.where.file}:${a.where.line})`, status: 'held', reason: a.how });
    }
    for (const u of report.unread) {
      const k = `unread ${u.where ? `${u.where.file}:${u.where.line}` : ''} ${u.reason}`;
      if (seen.has(k)) continue;
      seen.add(k);
      details.push({ subject: u.where ? `${u.where.file}:${u.where.line}` : 'CMake', status: 'unchecked', reason: `not followed: ${u.reason}` });
    }
  }
  const files = Math.max(...runs.map((r) => r.report.files));
  const tried = flags.length ? ` (USE ${flags.slice(0, MAX_FLAGS).join(', ')} on and off${flags.length > MAX_FLAGS ? `; ${flags.slice(MAX_FLAGS).join(', ')} unknown` : ''})` : '';
  const held = `no FetchContent, ExternalProject, CPM, file(DOWNLOAD) or git clone is reached with the options the ebuild passes${tried}; ${files} CMake file${files === 1 ? '' : 's'} followed`;
  // A download reached for sure says more than one that may be: failed first.
  for (const status of ['failed', 'unreadable', 'unchecked'] as const) {
    const first = details.find((d) => d.status === status);
    if (first) {
      const n = details.filter((d) => d.status === status).length;
      return { fact: 'offline', status, reason: `${first.subject}: ${first.reason}${n > 1 ? ` (and ${n - 1} more)` : ''}`, details };
    }
  }
  return { fact: 'offline', status: 'held', reason: held, details };
}
