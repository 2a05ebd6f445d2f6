import { spawn } from 'node:child_process';
import { access, constants } from 'node:fs/promises';
import path from 'node:path';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';
import { ENGINES, imageExistsCommand, pullCommand, type EngineName } from './command.js';

export interface ProcessResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run a program to completion, collecting its output (engine queries, never the test container itself). */
export function capture(argv: readonly string[], options: { env?: NodeJS.ProcessEnv; stdio?: 'pipe' | 'inherit' } = {}): Promise<ProcessResult> {
  return new Promise((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), { env: options.env ?? process.env, stdio: ['ignore', options.stdio ?? 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', (err) => resolve({ code: 127, stdout, stderr: stderr + err.message }));
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr }));
  });
}

/** The engine's executable on PATH, if any. */
export async function findOnPath(name: string, env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  for (const dir of (env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    const file = path.join(dir, name);
    try {
      await access(file, constants.X_OK);
      return file;
    } catch {
      // next directory
    }
  }
  return undefined;
}

/** --engine, else whichever is installed, podman first. Undefined when none is. */
export async function detectEngine(wanted: EngineName | undefined, env: NodeJS.ProcessEnv = process.env): Promise<EngineName | undefined> {
  if (wanted) return (await findOnPath(wanted, env)) ? wanted : undefined;
  for (const e of ENGINES) if (await findOnPath(e, env)) return e;
  return undefined;
}

export function noEngineError(wanted: EngineName | undefined): UserError {
  return new UserError(
    wanted
      ? `--engine ${wanted}: ${wanted} is not installed (not found on PATH)`
      : 'no container engine: neither podman nor docker is on PATH. Install one (Gentoo: app-containers/podman or app-containers/docker), or use --dry-run to see the commands',
    ExitCode.invalidInput,
  );
}

export interface EngineInfo {
  /** "none": rocm-ebuild runs in place, inside a container a CI engine started. */
  name: EngineName | 'none';
  version: string;
  /** In place: the engine that runs this container, when it can be told. */
  outer?: EngineName | 'unknown';
  /** Rootless podman: device groups reach only the container's root (--group-add keep-groups). */
  rootless: boolean;
}

export async function engineInfo(name: EngineName, env: NodeJS.ProcessEnv = process.env): Promise<EngineInfo> {
  const version = await capture([name, 'version', '--format', '{{.Client.Version}}'], { env });
  // Podman runs rootless exactly when its user is not root; docker's daemon is root either way.
  return { name, version: version.code === 0 ? version.stdout.trim() : 'unknown', rootless: name === 'podman' && process.geteuid?.() !== 0 };
}

/**
 * The image is there, or is pulled now (with the engine's own progress on a
 * terminal). Exit 2 naming the image when neither works.
 */
export async function ensureImage(engine: EngineName, image: string, options: { env?: NodeJS.ProcessEnv; note: (text: string) => void; tty: boolean }): Promise<void> {
  const exists = await capture(imageExistsCommand(engine, image), { env: options.env });
  if (exists.code === 0) return;
  options.note(`pulling ${image} with ${engine}…`);
  const pulled = await capture(pullCommand(engine, image), { env: options.env, stdio: options.tty ? 'inherit' : 'pipe' });
  if (pulled.code !== 0) {
    throw new UserError(
      `the image ${image} is not present and cannot be pulled:\n${pulled.stderr.trim().split('\n').slice(-3).join('\n')}\n` +
        `Pull or build it first (${engine} pull ${image}), or name another with --image.`,
      ExitCode.invalidInput,
      { image },
    );
  }
}
