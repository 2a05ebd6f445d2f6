import path from 'node:path';
import type { ManifestIssue } from '../manifest/issues.js';
import { jsonPath, locate } from '../manifest/yaml-source.js';
import type { CheckContext } from './context.js';

/**
 * Checks over the files as written, before any release is resolved: unique
 * names and atoms, and packages listed both as stack components and as
 * external packages (patch files: patch-files.ts).
 */
export function checkFiles(ctx: CheckContext): ManifestIssue[] {
  return [...checkUnique(ctx), ...checkExternalOverlap(ctx)];
}

function checkUnique(ctx: CheckContext): ManifestIssue[] {
  const issues: ManifestIssue[] = [];
  const { manifest, broken } = ctx;
  for (const field of ['name', 'atom'] as const) {
    const seen = new Map<string, string>();
    // Broken components still claim the name and atom they state validly.
    for (const b of broken.components) {
      const v = b[field];
      if (v !== undefined && !seen.has(v)) seen.set(v, b.file);
    }
    for (const c of manifest.components) {
      const v = c.spec[field];
      const first = seen.get(v);
      if (first) {
        const pos = locate(c.source, [field]);
        issues.push({
          file: c.source.file,
          ...pos,
          path: `$.${field}`,
          message: `${field} ${JSON.stringify(v)} is already used by ${path.basename(first)}`,
          hint: field === 'atom' ? 'one component per package: describe per-release differences with `overrides`' : 'give each component a unique name',
        });
      } else {
        seen.set(v, c.source.file);
      }
    }
  }
  return issues;
}

/**
 * A stack component must not also be an external package: the external entry
 * would say "::gentoo has it" about a package this stack generates, and its
 * slot data would silently override the stack's own.
 */
function checkExternalOverlap(ctx: CheckContext): ManifestIssue[] {
  const issues: ManifestIssue[] = [];
  const owners = new Map<string, string>();
  for (const c of ctx.manifest.components) owners.set(c.spec.atom, c.source.file);
  for (const b of ctx.broken.components) if (b.atom && !owners.has(b.atom)) owners.set(b.atom, b.file);
  for (const source of ctx.manifest.externalSources) {
    const packages = (source.value as { packages?: Record<string, unknown> }).packages ?? {};
    for (const atom of Object.keys(packages)) {
      const owner = owners.get(atom);
      if (!owner) continue;
      issues.push({
        file: source.file,
        ...locate(source, ['packages'], atom),
        path: jsonPath(['packages', atom]),
        message: `${atom} is a stack component (${path.relative(ctx.manifest.dir, owner)}) and also listed as an external package`,
        hint: 'remove it from the external list: stack packages are generated, not taken from ::gentoo',
      });
    }
  }
  return issues;
}
