import { spawn } from 'node:child_process';
import { gitEnvironment } from '../git/run.js';

export interface ExecResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: string;
  /** The command was killed because it ran longer than `timeoutMs`. */
  timedOut: boolean;
}

export interface ExecOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  input?: string | Buffer;
  timeoutMs?: number;
}

/**
 * Runs a program without a shell (arguments never pass through word
 * splitting) and collects its output. Never rejects for a non-zero exit: the
 * caller decides what an exit status means; rejects only when the program
 * cannot be started at all.
 */
export function execFile(program: string, args: string[], options: ExecOptions = {}): Promise<ExecResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    let err = '';
    let timedOut = false;
    const timer =
      options.timeoutMs !== undefined
        ? setTimeout(() => {
            timedOut = true;
            child.kill('SIGKILL');
          }, options.timeoutMs)
        : undefined;
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => {
      // Keep the end: git and tar put the reason last.
      err = (err + d.toString()).slice(-16_384);
    });
    child.on('error', (e) => {
      if (timer) clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      resolve({ code, signal, stdout: Buffer.concat(out), stderr: err, timedOut });
    });
    // A child that exits before reading all input closes the pipe: not our error.
    child.stdin.on('error', () => {});
    child.stdin.end(options.input ?? '');
  });
}

/**
 * Environment for git talking to remotes: never prompt (GitHub asks for a
 * password for repositories that do not exist, which would hang a batch run),
 * untranslated messages, and none of the variables that point git at another
 * repository (the same list every git call of the tool drops).
 */
export function gitEnv(): NodeJS.ProcessEnv {
  return gitEnvironment({ GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' });
}

/** The line of a tool's error output that says what went wrong (git's first "fatal:"), for one-line reports. */
export function lastLine(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !/^hint:/.test(l));
  return lines.find((l) => /^(fatal|error):/.test(l)) ?? lines.at(-1) ?? '';
}
