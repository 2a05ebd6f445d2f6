import { spawn } from 'node:child_process';
import { gitEnvironment } from '../../git/run.js';

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
 * Programs started with a time bound run in a process group of their own, so
 * that the bound ends all of it: git leaves the network to a helper
 * (git-remote-http) that a SIGKILL of git does not reach, and that helper
 * waits on a stalled connection for as long as the connection stays open.
 * Ctrl-C, SIGTERM and the end of this process end those groups too (they are
 * not in the terminal's foreground group); the handlers exist only while
 * such a group does.
 */
const groups = new Set<number>();
const SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

function killGroups(): void {
  for (const g of groups) {
    try {
      process.kill(-g, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

function onSignal(signal: NodeJS.Signals): void {
  killGroups();
  groups.clear();
  release();
  // As if no handler had been there: the default action (or the command's own handlers) follow.
  process.kill(process.pid, signal);
}

function hold(pid: number): void {
  if (groups.size === 0) {
    process.on('exit', killGroups);
    for (const s of SIGNALS) process.on(s, onSignal);
  }
  groups.add(pid);
}

function release(pid?: number): void {
  if (pid !== undefined) groups.delete(pid);
  if (groups.size === 0) {
    process.off('exit', killGroups);
    for (const s of SIGNALS) process.off(s, onSignal);
  }
}

/**
 * Runs a program without a shell (arguments never pass through word
 * splitting) and collects its output. Never rejects for a non-zero exit: the
 * caller decides what an exit status means; rejects only when the program
 * cannot be started at all. With `timeoutMs`, the program and everything it
 * started are killed when the time is up (0: the time was up before it
 * started, and it is not).
 */
export function execFile(program: string, args: string[], options: ExecOptions = {}): Promise<ExecResult> {
  if (options.timeoutMs !== undefined && options.timeoutMs <= 0) return Promise.resolve({ code: null, signal: null, stdout: Buffer.alloc(0), stderr: '', timedOut: true });
  const bounded = options.timeoutMs !== undefined;
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: bounded,
    });
    if (bounded && child.pid !== undefined) hold(child.pid);
    const out: Buffer[] = [];
    let err = '';
    let timedOut = false;
    const timer = bounded
      ? setTimeout(() => {
          timedOut = true;
          try {
            process.kill(-child.pid!, 'SIGKILL');
          } catch {
            child.kill('SIGKILL');
          }
        }, options.timeoutMs)
      : undefined;
    const finish = () => {
      if (timer) clearTimeout(timer);
      if (bounded && child.pid !== undefined) release(child.pid);
    };
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => {
      // Keep the end: git and tar put the reason last.
      err = (err + d.toString()).slice(-16_384);
    });
    child.on('error', (e) => {
      finish();
      reject(e);
    });
    child.on('close', (code, signal) => {
      finish();
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
