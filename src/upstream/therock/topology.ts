import { parse as parseToml, TomlError } from 'smol-toml';
import { shown } from './gitmodules.js';

/**
 * TheRock's BUILD_TOPOLOGY.toml: the artifacts it ships, the groups they are
 * built in and what each depends on; and build_tools/artifact_subprojects.json
 * (from 10.0): which subprojects each artifact holds. Read as data; a value of
 * the wrong type is reported and left out, never guessed.
 */

export interface ArtifactGroup {
  name: string;
  description?: string;
  /** "generic" or "per-arch" (built once per GPU family). */
  type?: string;
  deps: string[];
  sourceSets: string[];
}

export interface Artifact {
  name: string;
  group?: string;
  /** "target-neutral" or "target-specific". */
  type?: string;
  deps: string[];
}

export interface SourceSet {
  name: string;
  submodules: string[];
}

export interface Topology {
  groups: ArtifactGroup[];
  artifacts: Artifact[];
  sourceSets: SourceSet[];
}

export interface TopologyRead {
  topology?: Topology;
  problems: string[];
}

const isTable = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);
const NAME = /^[A-Za-z0-9_.+-]{1,100}$/;

export function readTopology(text: string, file = 'BUILD_TOPOLOGY.toml'): TopologyRead {
  const problems: string[] = [];
  let doc: unknown;
  try {
    doc = parseToml(text);
  } catch (err) {
    if (!(err instanceof TomlError)) throw err;
    return { problems: [`${file}:${err.line}:${err.column}: ${err.message.split('\n')[0]}; the topology is not read`] };
  }
  if (!isTable(doc)) return { problems: [`${file}: not a TOML table`] };
  const table = (key: string): [string, Record<string, unknown>][] => {
    const t = doc[key];
    if (t === undefined) return [];
    if (!isTable(t)) {
      problems.push(`${file}: [${key}] is not a table`);
      return [];
    }
    const out: [string, Record<string, unknown>][] = [];
    for (const [name, entry] of Object.entries(t)) {
      if (!NAME.test(name)) problems.push(`${file}: ${key}.${shown(name)} is not a plain name; left out`);
      else if (!isTable(entry)) problems.push(`${file}: ${key}.${name} is not a table; left out`);
      else out.push([name, entry]);
    }
    return out;
  };
  const text1 = (where: string, entry: Record<string, unknown>, key: string, pattern = /^[^\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]{0,500}$/): string | undefined => {
    const v = entry[key];
    if (v === undefined) return undefined;
    if (typeof v !== 'string' || !pattern.test(v)) {
      problems.push(`${file}: ${where}.${key} is not ${pattern === NAME ? 'a plain name' : 'a line of printable text'}; left out`);
      return undefined;
    }
    return v;
  };
  const names = (where: string, entry: Record<string, unknown>, key: string): string[] => {
    const v = entry[key];
    if (v === undefined) return [];
    if (!Array.isArray(v) || !v.every((x) => typeof x === 'string' && NAME.test(x))) {
      problems.push(`${file}: ${where}.${key} is not a list of names; left out`);
      return [];
    }
    return v as string[];
  };
  const sourceSets = table('source_sets').map(([name, e]): SourceSet => ({ name, submodules: names(`source_sets.${name}`, e, 'submodules') }));
  const groups = table('artifact_groups').map(([name, e]): ArtifactGroup => {
    const description = text1(`artifact_groups.${name}`, e, 'description');
    const type = text1(`artifact_groups.${name}`, e, 'type', NAME);
    return {
      name,
      ...(description !== undefined ? { description } : {}),
      ...(type !== undefined ? { type } : {}),
      deps: names(`artifact_groups.${name}`, e, 'artifact_group_deps'),
      sourceSets: names(`artifact_groups.${name}`, e, 'source_sets'),
    };
  });
  const artifacts = table('artifacts').map(([name, e]): Artifact => {
    const group = text1(`artifacts.${name}`, e, 'artifact_group', NAME);
    const type = text1(`artifacts.${name}`, e, 'type', NAME);
    return { name, ...(group !== undefined ? { group } : {}), ...(type !== undefined ? { type } : {}), deps: names(`artifacts.${name}`, e, 'artifact_deps') };
  });
  const groupNames = new Set(groups.map((g) => g.name));
  const artifactNames = new Set(artifacts.map((a) => a.name));
  const setNames = new Set(sourceSets.map((s) => s.name));
  for (const g of groups) {
    for (const d of g.deps) if (!groupNames.has(d)) problems.push(`${file}: artifact group ${g.name} depends on ${d}, which is no artifact group`);
    for (const s of g.sourceSets) if (!setNames.has(s)) problems.push(`${file}: artifact group ${g.name} names source set ${s}, which is not defined`);
  }
  for (const a of artifacts) {
    if (a.group !== undefined && !groupNames.has(a.group)) problems.push(`${file}: artifact ${a.name} is in group ${shown(a.group)}, which is not defined`);
    for (const d of a.deps) if (!artifactNames.has(d)) problems.push(`${file}: artifact ${a.name} depends on ${d}, which is no artifact`);
  }
  return { topology: { groups, artifacts, sourceSets }, problems };
}

/** build_tools/artifact_subprojects.json: artifact → the subprojects it holds, turned into subproject → artifacts. */
export function readArtifactSubprojects(text: string, file = 'build_tools/artifact_subprojects.json'): { bySubproject: Map<string, string[]>; problems: string[] } {
  const bySubproject = new Map<string, string[]>();
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    return { bySubproject, problems: [`${file}: ${(err as Error).message}; not read`] };
  }
  if (!isTable(doc)) return { bySubproject, problems: [`${file}: not a JSON object; not read`] };
  const problems: string[] = [];
  for (const [artifact, subs] of Object.entries(doc)) {
    if (!NAME.test(artifact) || !Array.isArray(subs) || !subs.every((s) => typeof s === 'string' && NAME.test(s))) {
      problems.push(`${file}: ${shown(artifact)} is not an artifact name with a list of subproject names; left out`);
      continue;
    }
    for (const s of subs as string[]) {
      const have = bySubproject.get(s);
      if (have) have.push(artifact);
      else bySubproject.set(s, [artifact]);
    }
  }
  return { bySubproject, problems };
}
