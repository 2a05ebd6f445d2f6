import { cp, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseDocument } from 'yaml';
import { root } from './project.js';
import { FULL, releaseSample } from './sample.js';

/**
 * A copy of the shipped manifest directory at `dest`, for tests that edit it or load it cold.
 * Loading checks every release, so by default the copy keeps one release of each family plus
 * those `pinned` (the tests' own), and costs the same however many releases the manifest gains;
 * with ROCM_EBUILD_TEST_FULL=1 it keeps them all.
 */
export async function copyShippedManifest(dest: string, pinned: readonly string[] = ['6.2.2']): Promise<string> {
  await cp(path.join(root, 'manifest'), dest, { recursive: true });
  if (FULL) return dest;
  const file = path.join(dest, 'stack.yaml');
  const doc = parseDocument(await readFile(file, 'utf8'), { version: '1.2' });
  const releases = Object.keys((doc.toJS() as { releases: Record<string, unknown> }).releases);
  const keep = new Set(releaseSample(releases, 'manifest copy', pinned));
  for (const r of releases) if (!keep.has(r)) doc.deleteIn(['releases', r]);
  await writeFile(file, doc.toString());
  return dest;
}
