import { stat } from 'node:fs/promises';
import path from 'node:path';

// Apart from load.ts so that finding the manifest does not load the reader
// and its schema validator: a command served by the cache of checked
// manifests needs only this.

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
