import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { eclassDir } from '../paths.js';
import { renderAmdgpuTargetsDesc, copyrightYear, targetsOfReleases, withCopyrightYear } from './render-desc.js';
import { spliceEclassTable } from './render-table.js';
import type { TargetTable } from './table.js';

/** Paths of the generated files, relative to an overlay or the project root. */
export const ECLASS_PATH = 'eclass/rocm.eclass';
export const DESC_PATH = 'profiles/desc/amdgpu_targets.desc';

export interface GeneratedFile {
  /** Relative to the output directory. */
  path: string;
  absolute: string;
  status: 'unchanged' | 'updated' | 'created';
  content: string;
}

async function readIfExists(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * What `rocm-ebuild eclass` writes under `outputDir`: rocm.eclass with its
 * table section regenerated (from the copy under `outputDir`, else from the
 * project's own eclass), and amdgpu_targets.desc (the targets of `releases`
 * when given, else of every policy). A file's copyright year moves
 * to `year` only when its content changes, so a new year alone is no drift.
 * Reads, never writes.
 */
function generated(rel: string, absolute: string, existing: string | undefined, content: string): GeneratedFile {
  const status = existing === undefined ? 'created' : content === existing ? 'unchanged' : 'updated';
  return { path: rel, absolute, status, content };
}

export async function planGeneratedFiles(table: TargetTable, outputDir: string, year: number, releases?: string[]): Promise<GeneratedFile[]> {
  const files: GeneratedFile[] = [];

  const eclassFile = path.join(outputDir, ECLASS_PATH);
  const existingEclass = await readIfExists(eclassFile);
  const base = existingEclass ?? (await readFile(path.join(eclassDir, 'rocm.eclass'), 'utf8'));
  let eclass = spliceEclassTable(base, table);
  if (eclass !== base) eclass = withCopyrightYear(eclass, year);
  files.push(generated(ECLASS_PATH, eclassFile, existingEclass, eclass));

  const descFile = path.join(outputDir, DESC_PATH);
  const existingDesc = await readIfExists(descFile);
  const keptYear = existingDesc === undefined ? undefined : copyrightYear(existingDesc);
  // With the releases an overlay (or the manifest) holds, only their targets.
  const only = releases ? targetsOfReleases(table, releases) : undefined;
  let desc = renderAmdgpuTargetsDesc(table, keptYear ?? year, only);
  if (desc !== existingDesc) desc = renderAmdgpuTargetsDesc(table, year, only);
  files.push(generated(DESC_PATH, descFile, existingDesc, desc));
  return files;
}

/** A unified-diff-like summary of the lines that differ, for --check output. */
export function changedLines(before: string, after: string, limit = 20): string[] {
  const a = before.split('\n');
  const b = after.split('\n');
  const out: string[] = [];
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n && out.length < limit; i++) {
    if (a[i] === b[i]) continue;
    if (a[i] !== undefined) out.push(`${i + 1}: - ${a[i]}`);
    if (b[i] !== undefined) out.push(`${i + 1}: + ${b[i]}`);
  }
  return out;
}
