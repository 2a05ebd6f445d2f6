import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Plugin } from '#oclif';
import { COMMAND_BUNDLE_DIR, projectRoot } from '../paths.js';
import { writeFileAtomically } from '../util/atomic-write.js';
import { bundleFileOf } from './command-bundles.js';

/**
 * oclif's command manifest (oclif.manifest.json at the package root): every
 * command's id, summary, flags, arguments and examples, read by oclif in
 * place of importing every command module. With it, `--help` imports no
 * command and a command imports only itself, from its bundle in dist/cli.
 * Written by `npm run build` (and `prepare`, so packages carry it), from the
 * compiled commands; bin/run.js ignores it when the commands it lists are not
 * the command files on disk or the bundles are older than dist/src, and a
 * test fails when it differs from the commands in any other way.
 */

export const MANIFEST_FILE = 'oclif.manifest.json';


/** The manifest oclif would build by importing every command, with commands in id order. */
export async function buildCommandManifest(root = projectRoot): Promise<{ version: string; commands: Record<string, unknown> }> {
  const plugin = new Plugin({ root, type: 'core', isRoot: true, ignoreManifest: true, errorOnManifestCreate: true, respectNoCacheDefault: true });
  await plugin.load();
  // Each command is loaded from its bundle (command-bundles.ts); bin/run.js uses this manifest only while the bundles are current.
  const commands = Object.fromEntries(
    Object.keys(plugin.manifest.commands)
      .sort()
      .map((id) => [id, { ...plugin.manifest.commands[id], relativePath: [...COMMAND_BUNDLE_DIR.split(path.sep), bundleFileOf(id)] }]),
  );
  return { commands, version: plugin.manifest.version };
}

export function manifestText(manifest: unknown): string {
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

/** Writes the manifest atomically: a concurrent `rocm-ebuild` reads the old file or the new one. */
export async function writeCommandManifest(root = projectRoot): Promise<string> {
  const file = path.join(root, MANIFEST_FILE);
  await writeFileAtomically(file, manifestText(await buildCommandManifest(root)));
  return file;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await writeCommandManifest();
}
