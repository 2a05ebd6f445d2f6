import path from 'node:path';
import { createRequire } from 'node:module';
import { sortIssues, type ManifestIssue } from './issues.js';
import { SchemaValidator } from './schema-validator.js';
import type { ComponentSpec, ExternalSpec, StackSpec } from './types.js';
import { jsonPath, locate, readYamlSource, type SourceRead, type YamlSource } from './yaml-source.js';
import { resolveManifestPath } from './location.js';

export interface LoadedComponent {
  spec: ComponentSpec;
  source: YamlSource;
}

/** A manifest whose files passed the schemas (the stack-wide checks live in stack-check/). */
export interface Manifest {
  /** The stack file. */
  file: string;
  dir: string;
  stack: StackSpec;
  stackSource: YamlSource;
  components: LoadedComponent[];
  external: ExternalSpec;
  externalSources: YamlSource[];
  /** Absolute path of the GPU target policy file. */
  targetsFile: string;
}

/** A component file that failed to read or to validate: what could still be told about it. */
export interface BrokenComponent {
  file: string;
  /** Its atom, name and projects when those values themselves are valid. */
  atom?: string;
  name?: string;
  projects?: string[];
}

/**
 * The parts of a manifest set aside because they failed to read or to
 * validate. Cross-reference checks skip exactly what depends on them, so one
 * run reports schema errors and every other problem it can still see.
 */
export interface BrokenParts {
  /** Top-level keys of stack.yaml whose values are unusable (replaced by empty ones in `manifest.stack`). */
  stackKeys: Set<string>;
  components: BrokenComponent[];
  /** External packages whose entries are broken: known to exist, details unknown. */
  externalAtoms: Set<string>;
  /** An external file could not be read at all: any atom may be listed there. */
  externalUnknown: boolean;
}

export interface ManifestRead {
  /** Absent when stack.yaml itself cannot be read or is not a mapping. */
  manifest?: Manifest;
  broken: BrokenParts;
  /** Read and schema problems, sorted. */
  issues: ManifestIssue[];
}

/** How files are read; tests pass a caching reader to share parsed files between many runs. */
export type SourceReader = (file: string) => Promise<SourceRead>;

export interface ReadOptions {
  readSource?: SourceReader;
}

/**
 * An override's `set` with its `null` members taken out, and their paths:
 * null removes a key (merge-patch, model/merge.ts), so there is nothing of it
 * to check against the schema; whether the key may go is asked separately.
 * A null inside a list is a value, and is left for the schema to refuse.
 */
export function splitRemovals(set: unknown, path: (string | number)[] = []): { rest: unknown; removals: (string | number)[][] } {
  const removals: (string | number)[][] = [];
  const walk = (v: unknown, at: (string | number)[]): unknown => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return v;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      if (x === null) removals.push([...at, k]);
      else out[k] = walk(x, [...at, k]);
    }
    return out;
  };
  return { rest: walk(set, path), removals };
}

const ATOM = /^[a-z0-9][a-z0-9+_.-]*\/[A-Za-z0-9+_][A-Za-z0-9+_-]*$/;
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.+-]*$/;

/** The first segment of each broken path: the top-level keys that failed. */
function topKeys(broken: (string | number)[][]): Set<string> {
  return new Set(broken.map((p) => (p.length > 0 ? String(p[0]) : '*')));
}

/**
 * Glob patterns relative to the stack file. Every match is returned, also
 * dangling links and things that are not files, so the reader reports them
 * instead of their being skipped without a word.
 */
async function matchFiles(patterns: string[], dir: string): Promise<string[]> {
  // fast-glob is loaded here, when files are listed: not by runs that take a checked manifest from the cache.
  const fg = createRequire(import.meta.url)('fast-glob') as typeof import('fast-glob');
  const found = await fg(patterns, { cwd: dir, absolute: true, onlyFiles: false, followSymbolicLinks: false, dot: false });
  return [...new Set(found)].sort();
}

/**
 * Read every file of a manifest and validate each against its schema,
 * collecting every problem. What fails is set aside (see BrokenParts) and
 * the rest returned, for the stack-wide checks to go on with.
 */
/**
 * Optional sections whose content no check of another section reads (a dependency list, CMake
 * defines, fix-ups, phase code): without them a component is still whole for every other check,
 * and nothing else would report their absence.
 */
const SELF_CONTAINED = new Set(['deps', 'cmake', 'python', 'prepare', 'patches', 'inherit', 'globals', 'restrict', 'phases', 'notes', 'qa', 's', 'llvm', 'required_use']);

/** The component without its broken sections, when only self-contained ones are broken and the rest is valid. */
function salvage(validator: SchemaValidator, source: YamlSource, value: Record<string, unknown>, bad: Set<string>, onlySchema: boolean): ComponentSpec | undefined {
  if (!onlySchema || bad.size === 0 || [...bad].some((k) => !SELF_CONTAINED.has(k))) return undefined;
  const rest = Object.fromEntries(Object.entries(value).filter(([k]) => !bad.has(k)));
  return validator.validate('component.schema.json', source, rest).length === 0 ? (rest as unknown as ComponentSpec) : undefined;
}

/** What the parts of readManifest share: the reader, the validator, and the issues and broken parts they add to. */
interface ReadContext {
  read: SourceReader;
  validator: SchemaValidator;
  issues: ManifestIssue[];
  broken: BrokenParts;
  usable: (key: string) => boolean;
}

export async function readManifest(file: string, options: ReadOptions = {}): Promise<ManifestRead> {
  const read = options.readSource ?? ((f: string) => readYamlSource(f));
  const stackFile = await resolveManifestPath(file);
  const validator = SchemaValidator.shared();
  const issues: ManifestIssue[] = [];
  const broken: BrokenParts = { stackKeys: new Set(), components: [], externalAtoms: new Set(), externalUnknown: false };
  const done = (manifest?: Manifest): ManifestRead => ({ ...(manifest ? { manifest } : {}), broken, issues: sortIssues(issues) });

  const stackRead = await read(stackFile);
  issues.push(...stackRead.issues);
  const stackSource = stackRead.source;
  if (!stackSource || typeof stackSource.value !== 'object' || stackSource.value === null || Array.isArray(stackSource.value)) {
    if (stackSource) issues.push(...validator.validate('stack.schema.json', stackSource));
    broken.stackKeys.add('*');
    return done();
  }
  const checked = validator.validateDetailed('stack.schema.json', stackSource);
  issues.push(...checked.issues);
  broken.stackKeys = topKeys(checked.broken);
  // Broken keys are replaced by empty values: checks that need them find nothing to check.
  const raw = stackSource.value as Record<string, unknown>;
  const usable = (key: string) => !broken.stackKeys.has(key) && !broken.stackKeys.has('*');
  const stack = {
    ...raw,
    releases: usable('releases') ? raw.releases : {},
    external: usable('external') ? raw.external : [],
    components: usable('components') ? raw.components : [],
    targets: usable('targets') ? raw.targets : '',
  } as StackSpec;
  for (const key of ['defaults', 'projects', 'excluded'] as const) if (!usable(key)) delete stack[key];
  if (!usable('external')) broken.externalUnknown = true;
  const dir = path.dirname(stackFile);
  const ctx: ReadContext = { read, validator, issues, broken, usable };

  const { external, externalSources } = await readExternal(ctx, stack, stackSource, stackFile, dir);
  const components = await readComponents(ctx, stack, stackSource, stackFile, dir);

  return done({
    file: stackFile,
    dir,
    stack,
    stackSource,
    components,
    external,
    externalSources,
    targetsFile: path.resolve(dir, stack.targets),
  });
}

/** The external packages: several files may list them (one per category or team), and they merge. */
async function readExternal(ctx: ReadContext, stack: StackSpec, stackSource: YamlSource, stackFile: string, dir: string): Promise<{ external: ExternalSpec; externalSources: YamlSource[] }> {
  const { read, validator, issues, broken, usable } = ctx;
  const external: ExternalSpec = { packages: {} };
  const externalSources: YamlSource[] = [];
  const externalFiles = await matchFiles(stack.external, dir);
  if (externalFiles.length === 0 && usable('external')) {
    issues.push({ file: stackFile, ...locate(stackSource, ['external']), path: '$.external', message: `no file matches ${stack.external.join(', ')}`, hint: 'list the files of ::gentoo packages, e.g. [external.yaml]' });
  }
  for (const f of externalFiles) {
    const got = await read(f);
    issues.push(...got.issues);
    if (!got.source) {
      broken.externalUnknown = true;
      continue;
    }
    const own = validator.validateDetailed('external.schema.json', got.source);
    issues.push(...own.issues);
    const packages = (got.source.value as { packages?: unknown } | null)?.packages;
    if (typeof packages !== 'object' || packages === null || Array.isArray(packages)) {
      broken.externalUnknown = true;
      continue;
    }
    // Entries are independent: a broken one is set aside, the others count.
    const badAtoms = new Set(own.broken.filter((p) => p[0] === 'packages' && p.length > 1).map((p) => String(p[1])));
    if (own.broken.some((p) => p.length < 2 || p[0] !== 'packages')) broken.externalUnknown = true;
    externalSources.push(got.source);
    for (const [atom, info] of Object.entries(packages as ExternalSpec['packages'])) {
      if (badAtoms.has(atom)) {
        broken.externalAtoms.add(atom);
        continue;
      }
      const prev = external.packages[atom];
      if (prev && JSON.stringify(prev) !== JSON.stringify(info)) {
        issues.push({ file: f, ...locate(got.source, ['packages'], atom), path: `$.packages["${atom}"]`, message: `${atom} is listed differently in another external file`, hint: 'keep one entry per package' });
      }
      external.packages[atom] = info;
    }
  }
  return { external, externalSources };
}

/** Every component file, each validated on its own; a broken one is set aside with what can still be said of it. */
async function readComponents(ctx: ReadContext, stack: StackSpec, stackSource: YamlSource, stackFile: string, dir: string): Promise<LoadedComponent[]> {
  const { read, validator, issues, broken, usable } = ctx;
  const files = await matchFiles(stack.components, dir);
  if (files.length === 0 && usable('components')) {
    issues.push({
      file: stackFile,
      ...locate(stackSource, ['components']),
      path: '$.components',
      message: `no component files match ${stack.components.join(', ')}`,
      hint: 'the patterns are relative to the stack file, e.g. "components/*.yaml"',
    });
  }
  const components: LoadedComponent[] = [];
  for (const f of files) {
    const got = await read(f);
    issues.push(...got.issues);
    if (!got.source) {
      broken.components.push({ file: f });
      continue;
    }
    const own = validator.validateDetailed('component.schema.json', got.source);
    const all = [...own.issues];
    const value = got.source.value as Partial<ComponentSpec> | null;
    if (value && typeof value === 'object' && Array.isArray(value.overrides)) {
      value.overrides.forEach((o, i) => {
        if (o && typeof o === 'object' && o.set && typeof o.set === 'object' && !Array.isArray(o.set)) {
          const at = ['overrides', i, 'set'];
          const { rest, removals } = splitRemovals(o.set);
          all.push(...validator.validate('component-partial.schema.json', got.source!, rest, at));
          for (const r of removals) {
            if (validator.removable('component.schema.json', r)) continue;
            const where = [...at, ...r];
            all.push({
              file: f,
              ...locate(got.source!, where),
              path: jsonPath(where),
              message:
                r.length === 1
                  ? `null would remove ${String(r[0])}, which every component needs`
                  : `null cannot remove ${String(r[r.length - 1])} here: the schema requires it, or has no such key`,
              hint: 'null removes an optional key of the component (e.g. `prepare: null`, or one define under `cmake: { defines: … }`); give a value instead',
            });
          }
        }
      });
    }
    issues.push(...all);
    if (all.length === 0) {
      components.push({ spec: got.source.value as ComponentSpec, source: got.source });
      continue;
    }
    const bad = topKeys(own.broken);
    const v = (value ?? {}) as Record<string, unknown>;
    // A schema error in a section no other check reads is set aside with that section only: the
    // component's other sections are still checked, so fixing one error does not reveal the next.
    const salvaged = salvage(validator, got.source, v, bad, all.length === own.issues.length);
    if (salvaged) {
      components.push({ spec: salvaged, source: got.source });
      continue;
    }
    const text = (key: string, re: RegExp) => (!bad.has(key) && typeof v[key] === 'string' && re.test(v[key]) ? (v[key] as string) : undefined);
    const atom = text('atom', ATOM);
    const name = text('name', NAME);
    const projects = !bad.has('projects') && Array.isArray(v.projects) ? (v.projects as string[]) : undefined;
    broken.components.push({ file: f, ...(atom ? { atom } : {}), ...(name ? { name } : {}), ...(projects ? { projects } : {}) });
  }
  return components;
}
