import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import { readMakeConf } from './make-conf.js';

/**
 * Portage's own settings, for the variables a bump shares with emerge: where
 * distfiles live (DISTDIR) and which mirrors to ask first (GENTOO_MIRRORS).
 * On a machine with Portage, `portageq envvar` answers exactly as emerge
 * sees it (make.globals, profiles, make.conf, the environment). Without it,
 * make.conf under PORTAGE_CONFIGROOT (default /) is read, never run
 * (make-conf.ts). A variable set in the environment wins either way, as it
 * does for Portage.
 */

export const PORTAGE_VARIABLES = ['DISTDIR', 'GENTOO_MIRRORS'] as const;
export type PortageVariable = (typeof PORTAGE_VARIABLES)[number];

export interface PortageValue {
  value: string;
  /** "the environment", "portageq", or "/etc/portage/make.conf:12". */
  from: string;
}

export interface PortageSettings {
  values: Partial<Record<PortageVariable, PortageValue>>;
  /** How Portage's configuration was read: portageq, make.conf (its path), or neither. */
  source: string;
}

/** The first `name` on PATH that is an executable file. */
function onPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const file = path.join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

function portageq(bin: string, names: readonly string[], env: NodeJS.ProcessEnv): Promise<string[] | undefined> {
  return new Promise((resolve) => {
    const child = spawn(bin, ['envvar', ...names], { env, stdio: ['ignore', 'pipe', 'ignore'], timeout: 20_000 });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', () => resolve(undefined));
    child.on('close', (code) => {
      // One line per variable, in order (an unset one is an empty line).
      const lines = out.replace(/\n$/, '').split('\n');
      resolve(code === 0 && lines.length === names.length ? lines : undefined);
    });
  });
}

/**
 * The values of `wanted` (default: DISTDIR and GENTOO_MIRRORS). Portage's
 * configuration is read only for those the environment does not set.
 */
export async function portageSettings(env: NodeJS.ProcessEnv = process.env, wanted: readonly PortageVariable[] = PORTAGE_VARIABLES): Promise<PortageSettings> {
  const values: PortageSettings['values'] = {};
  const missing: PortageVariable[] = [];
  for (const name of wanted) {
    const v = env[name];
    if (v !== undefined && v !== '') values[name] = { value: v, from: 'the environment' };
    else missing.push(name);
  }
  if (missing.length === 0) return { values, source: 'the environment' };
  const bin = onPath('portageq', env);
  if (bin) {
    const answer = await portageq(bin, missing, env);
    if (answer) {
      missing.forEach((name, i) => {
        if (answer[i]) values[name] = { value: answer[i]!, from: 'portageq' };
      });
      return { values, source: 'portageq' };
    }
  }
  const root = env.PORTAGE_CONFIGROOT || '/';
  const file = path.join(root, 'etc', 'portage', 'make.conf');
  const outer = new Map(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
  const conf = readMakeConf(file, { outer });
  for (const name of missing) {
    const v = conf.get(name);
    if (v && v.value !== '') values[name] = { value: v.value, from: v.where };
  }
  return { values, source: file };
}
