import path from 'node:path';
import { stat } from 'node:fs/promises';
import fg from 'fast-glob';
import { ManifestError, sortIssues, type ManifestIssue } from './issues.js';
import { SchemaValidator } from './schema-validator.js';
import type { ComponentSpec, ExternalSpec, StackSpec } from './types.js';
import { locate, readYamlSource, type YamlSource } from './yaml-source.js';
import { checkManifest } from './semantic.js';

export interface LoadedComponent {
  spec: ComponentSpec;
  source: YamlSource;
}

/** A manifest that passed schema and cross-reference checks. */
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

/** `--manifest` may name the stack file or the directory holding stack.yaml. */
export async function resolveManifestPath(p: string): Promise<string> {
  const abs = path.resolve(p);
  try {
    if ((await stat(abs)).isDirectory()) return path.join(abs, 'stack.yaml');
  } catch {
    // Reported by the loader as "file not found" with a position-less issue.
  }
  return abs;
}

/**
 * Read, validate and cross-check a whole manifest. Every problem is collected
 * before failing, so one run shows the user everything to fix.
 */
export async function loadManifest(file: string): Promise<Manifest> {
  const stackFile = await resolveManifestPath(file);
  const validator = SchemaValidator.shared();
  const issues: ManifestIssue[] = [];

  const stackRead = await readYamlSource(stackFile);
  issues.push(...stackRead.issues);
  if (!stackRead.source) throw new ManifestError(issues);
  const stackSource = stackRead.source;
  const stackIssues = validator.validate('stack.schema.json', stackSource);
  issues.push(...stackIssues);
  if (stackIssues.length > 0) throw new ManifestError(sortIssues(issues));
  const stack = stackSource.value as StackSpec;
  const dir = path.dirname(stackFile);

  // Several files may list external packages (one per category or team); they merge.
  const external: ExternalSpec = { packages: {} };
  const externalSources: YamlSource[] = [];
  const externalFiles = (await fg(stack.external, { cwd: dir, absolute: true, onlyFiles: true })).sort();
  if (externalFiles.length === 0) {
    issues.push({ file: stackFile, line: 1, column: 1, path: '$.external', message: `no file matches ${stack.external.join(', ')}`, hint: 'list the files of ::gentoo packages, e.g. [external.yaml]' });
  }
  for (const f of externalFiles) {
    const read = await readYamlSource(f);
    issues.push(...read.issues);
    if (!read.source) continue;
    const own = validator.validate('external.schema.json', read.source);
    issues.push(...own);
    if (own.length > 0) continue;
    externalSources.push(read.source);
    for (const [atom, info] of Object.entries((read.source.value as ExternalSpec).packages)) {
      const prev = external.packages[atom];
      if (prev && JSON.stringify(prev) !== JSON.stringify(info)) {
        issues.push({ file: f, ...locate(read.source, ['packages'], atom), path: `$.packages["${atom}"]`, message: `${atom} is listed differently in another external file`, hint: 'keep one entry per package' });
      }
      external.packages[atom] = info;
    }
  }

  const files = await fg(stack.components, { cwd: dir, absolute: true, onlyFiles: true });
  files.sort();
  if (files.length === 0) {
    issues.push({
      file: stackFile,
      line: 1,
      column: 1,
      path: '$.components',
      message: `no component files match ${stack.components.join(', ')}`,
      hint: 'the patterns are relative to the stack file, e.g. "components/*.yaml"',
    });
  }
  const components: LoadedComponent[] = [];
  for (const f of files) {
    const read = await readYamlSource(f);
    issues.push(...read.issues);
    if (!read.source) continue;
    const own = validator.validate('component.schema.json', read.source);
    issues.push(...own);
    const spec = read.source.value as ComponentSpec;
    (spec.overrides ?? []).forEach((o, i) => {
      if (o && typeof o === 'object' && o.set && typeof o.set === 'object') {
        issues.push(
          ...validator.validate('component-partial.schema.json', read.source!, o.set, ['overrides', i, 'set']),
        );
      }
    });
    if (own.length === 0) components.push({ spec, source: read.source });
  }

  if (issues.length > 0) throw new ManifestError(sortIssues(issues));

  const manifest: Manifest = {
    file: stackFile,
    dir,
    stack,
    stackSource,
    components,
    external,
    externalSources,
    targetsFile: path.resolve(dir, stack.targets),
  };
  const semantic = await checkManifest(manifest);
  if (semantic.length > 0) throw new ManifestError(sortIssues(semantic));
  return manifest;
}
