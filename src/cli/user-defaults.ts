import os from 'node:os';
import path from 'node:path';
import { readBounded } from '../util/bounded-read.js';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';
import { printable } from '../util/printable.js';

/**
 * Defaults of --overlay and --manifest for someone who always works on the
 * same ones: a flag wins, then the environment (ROCM_EBUILD_OVERLAY,
 * ROCM_EBUILD_MANIFEST), then `overlay = "…"` / `manifest = "…"` in
 * $XDG_CONFIG_HOME/rocm-ebuild/config.toml (~/.config/… by default), then the
 * command's own default. The file is read only when a flag and its variable
 * are both absent, once per process; it is someone's file in their home, so it
 * is read as untrusted input all the same: a regular file of a few KiB, TOML,
 * known keys with path values, or a clear error naming file:line:column.
 */

export interface Setting {
  flag: 'overlay' | 'manifest';
  env: string;
  key: string;
  where: string;
}

export const CONFIG_DISPLAY = '~/.config/rocm-ebuild/config.toml';

export const SETTINGS: readonly Setting[] = [
  { flag: 'overlay', env: 'ROCM_EBUILD_OVERLAY', key: 'overlay', where: CONFIG_DISPLAY },
  { flag: 'manifest', env: 'ROCM_EBUILD_MANIFEST', key: 'manifest', where: CONFIG_DISPLAY },
];

/** A config file is a few lines; anything this large is not one. */
const MAX_CONFIG_BYTES = 64 * 1024;

/** $XDG_CONFIG_HOME/rocm-ebuild/config.toml; a relative XDG_CONFIG_HOME is ignored, as the XDG spec says. */
export function configFile(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CONFIG_HOME;
  const base = xdg && path.isAbsolute(xdg) ? xdg : path.join(env.HOME || os.homedir(), '.config');
  return path.join(base, 'rocm-ebuild', 'config.toml');
}

export type UserConfig = Partial<Record<Setting['key'], string>>;

let loaded: Promise<UserConfig> | undefined;

/** The config file's settings ({} when there is none); errors are the user's to fix, with where. */
export function userConfig(env: NodeJS.ProcessEnv = process.env): Promise<UserConfig> {
  loaded ??= readUserConfig(configFile(env), env);
  return loaded;
}

/** Forget what was read (tests that change the file within one process). */
export function resetUserConfig(): void {
  loaded = undefined;
}

function configError(file: string, where: string, message: string, fix: string): UserError {
  return new UserError(`${printable(file, { oneLine: true })}${where}: ${message}; ${fix}`, ExitCode.invalidInput, { file });
}

export async function readUserConfig(file: string, env: NodeJS.ProcessEnv = process.env): Promise<UserConfig> {
  const read = await readBounded(file, MAX_CONFIG_BYTES);
  if (!read.ok) {
    if (read.code === 'ENOENT' || read.code === 'ENOTDIR') return {};
    throw configError(file, '', `cannot be read as the configuration: ${read.reason}`, `make it a TOML file of at most ${MAX_CONFIG_BYTES / 1024} KiB (see rocm-ebuild --help), or remove it`);
  }
  const text = read.data.toString('utf8');
  if (text.includes('\uFFFD') || text.includes('\0')) throw configError(file, '', 'is not UTF-8 text', 'write it as a UTF-8 TOML file, or remove it');
  const { parse, TomlError } = await import('smol-toml');
  let doc: Record<string, unknown>;
  try {
    doc = parse(text) as Record<string, unknown>;
  } catch (err) {
    if (!(err instanceof TomlError)) throw err;
    const first = err.message.replace(/^Invalid TOML document: /, '').split('\n')[0]!;
    throw configError(file, `:${err.line}:${err.column}`, `TOML syntax: ${first}`, 'fix the TOML at this position (a setting is written key = "value")');
  }
  const line = (key: string) => {
    const i = text.split('\n').findIndex((l) => new RegExp(`^\\s*${key}\\s*=`).test(l));
    return i < 0 ? '' : `:${i + 1}:1`;
  };
  const known = SETTINGS.map((s) => s.key);
  const out: UserConfig = {};
  for (const [key, value] of Object.entries(doc)) {
    if (!known.includes(key)) {
      throw configError(file, line(key), `unknown setting ${JSON.stringify(printable(key, { oneLine: true }))}`, `the settings are ${known.join(' and ')}`);
    }
    if (typeof value !== 'string' || value === '' || /[\0\n]/.test(value)) {
      throw configError(file, line(key), `${key} must be a path in quotes`, `write ${key} = "~/rocm-overlay" (an absolute path, or one starting with ~/)`);
    }
    const home = env.HOME || os.homedir();
    const expanded = value === '~' ? home : value.startsWith('~/') ? path.join(home, value.slice(2)) : value;
    if (!path.isAbsolute(expanded)) {
      throw configError(file, line(key), `${key} = ${JSON.stringify(printable(value, { oneLine: true }))} is a relative path, which would depend on the directory you run rocm-ebuild in`, 'write an absolute path, or one starting with ~/');
    }
    out[key] = expanded;
  }
  return out;
}

/** The default of a flag when it is not given and its variable is not set: the config file's, else `fallback`. */
export function configuredDefault(flag: Setting['flag'], fallback?: string): () => Promise<string | undefined> {
  return async () => (await userConfig())[SETTINGS.find((s) => s.flag === flag)!.key] ?? fallback;
}

/** What a flag with such a default carries: oclif reads the variable, the config file comes after. */
export function settingFlagOptions(flag: Setting['flag'], fallback?: string): { env: string; default: () => Promise<string | undefined>; noCacheDefault: true } {
  return { env: SETTINGS.find((s) => s.flag === flag)!.env, default: configuredDefault(flag, fallback), noCacheDefault: true };
}
