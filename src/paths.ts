import { fileURLToPath } from 'node:url';
import path from 'node:path';

/**
 * The package root, whether running from dist/src (installed or built) — the
 * shipped manifest, templates, schemas and eclass are found relative to it.
 */
function findRoot(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  // dist/src/paths.js -> ../..
  return path.resolve(here, '..', '..');
}

export const projectRoot = findRoot();
export const schemasDir = path.join(projectRoot, 'schemas');
export const templatesDir = path.join(projectRoot, 'ebuild-templates');
export const eclassDir = path.join(projectRoot, 'eclass');
export const defaultManifestPath = path.join(projectRoot, 'manifest', 'stack.yaml');
export const defaultTargetsPath = path.join(projectRoot, 'manifest', 'targets.yaml');
/** The command bundles (src/cli/command-bundles.ts), relative to the package root, and their list of inputs, written last. */
export const COMMAND_BUNDLE_DIR = path.join('dist', 'cli');
export const BUNDLE_INPUTS = 'inputs.json';
