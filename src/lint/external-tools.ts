import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { cachedPerText, programIdentity } from './tool-cache.js';

const run = promisify(execFile);

/**
 * shellcheck codes that do not apply to ebuilds, and why:
 * - SC2034: metadata variables (DESCRIPTION, IUSE, …) are read by Portage.
 * - SC2154: Portage and the eclasses define ${S}, ${PV}, ${ROCM_USEDEP}, ….
 * - SC2016: '${LLVM_SLOT}' and '${PYTHON_USEDEP}' inside llvm_gen_dep and
 *   python_gen_cond_dep are single-quoted on purpose; the eclass expands them.
 */
export const SHELLCHECK_EXCLUDES = ['SC2034', 'SC2154', 'SC2016'];

export interface ToolFinding {
  tool: 'bash' | 'shellcheck';
  line?: number;
  code?: string;
  level: string;
  message: string;
}

/** Whether PATH has the program: looked up here, as `command -v` would, without starting a shell for it. */
export function hasTool(name: string): boolean {
  return programIdentity(name) !== undefined;
}

/**
 * `bash -n`: real bash's syntax check. Anything it prints counts: for some
 * errors (a malformed [[ … ]]) it complains on stderr yet exits 0.
 */
export async function bashSyntax(text: string): Promise<ToolFinding[]> {
  const stderr = await new Promise<string>((resolve, reject) => {
    const child = execFile('bash', ['-n'], (err, _out, errText) => {
      if (err && typeof (err as NodeJS.ErrnoException).code === 'string') reject(err);
      else resolve(errText || (err ? String(err) : ''));
    });
    child.stdin!.end(text);
  });
  return stderr
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const m = /line (\d+): (.*)$/.exec(l);
      return { tool: 'bash' as const, level: 'error', message: m ? m[2]! : l, ...(m ? { line: Number(m[1]) } : {}) };
    });
}

interface ShellcheckJson {
  line: number;
  code: number;
  level: string;
  message: string;
}

/** shellcheck as bash, with the ebuild-specific exclusions above; an answer for the same text and program is reused (tool-cache.ts). */
export async function shellcheck(text: string, extraExcludes: string[] = []): Promise<ToolFinding[]> {
  const [found] = await cachedPerText('shellcheck', shellcheckArgs(extraExcludes), [text], ([t]) => shellcheckOne(t!, extraExcludes).then((f) => [f]));
  return found!;
}

/** The options every shellcheck run here gets, and the key of its cached answers. */
function shellcheckArgs(extraExcludes: string[]): string[] {
  return ['-s', 'bash', '-e', [...SHELLCHECK_EXCLUDES, ...extraExcludes].join(',')];
}

async function shellcheckOne(text: string, extraExcludes: string[]): Promise<ToolFinding[]> {
  const args = [...shellcheckArgs(extraExcludes), '-f', 'json', '-'];
  let stdout: string;
  try {
    stdout = await new Promise<string>((resolve, reject) => {
      const child = execFile('shellcheck', args, { maxBuffer: 16 * 1024 * 1024 }, (err, out) => {
        // shellcheck exits 1 when it finds something; the JSON is still on stdout.
        if (err && (err as unknown as { code?: number }).code !== 1) reject(err);
        else resolve(out);
      });
      child.stdin!.end(text);
    });
  } catch (err) {
    throw new Error(`shellcheck failed to run: ${String(err)}`);
  }
  const parsed = JSON.parse(stdout || '[]') as ShellcheckJson[];
  return parsed.map((p) => ({ tool: 'shellcheck', line: p.line, code: `SC${p.code}`, level: p.level, message: p.message }));
}

/**
 * `bash -n` for many ebuilds in one process: each becomes the body of a
 * function in one script, which changes nothing about its syntax. Only when
 * that script fails are the ebuilds checked one by one, to say which.
 */
export async function bashSyntaxAll(texts: string[]): Promise<ToolFinding[][]> {
  const script = texts.map((t, i) => `__rocm_ebuild_check_${i}() {\n${t}\n:\n}\n`).join('');
  if ((await bashSyntax(script)).length === 0) return texts.map(() => []);
  return Promise.all(texts.map((t) => bashSyntax(t)));
}

interface ShellcheckJson1 {
  comments: (ShellcheckJson & { file: string })[];
}

/**
 * shellcheck over many ebuilds (it starts slowly: one run per core for all of them); findings
 * per ebuild, in order. Texts checked before by the same program are answered from the cache
 * (tool-cache.ts).
 */
export async function shellcheckAll(texts: string[], extraExcludes: string[] = []): Promise<ToolFinding[][]> {
  if (texts.length === 0) return [];
  return cachedPerText('shellcheck', shellcheckArgs(extraExcludes), texts, (missing) => shellcheckMany(missing, extraExcludes));
}

async function shellcheckMany(texts: string[], extraExcludes: string[]): Promise<ToolFinding[][]> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'rocm-ebuild-shellcheck-'));
  try {
    const files = texts.map((_, i) => path.join(dir, `${i}.ebuild`));
    await Promise.all(texts.map((t, i) => writeFile(files[i]!, t)));
    // shellcheck works on one file at a time: one process per core, each with a share of the files.
    const chunks = Math.min(files.length, Math.max(1, os.availableParallelism()));
    const shares = Array.from({ length: chunks }, (_, k) => files.filter((_, i) => i % chunks === k));
    const runs = await Promise.all(
      shares.map(
        (share) =>
          new Promise<string>((resolve, reject) => {
            const args = [...shellcheckArgs(extraExcludes), '-f', 'json1', ...share];
            execFile('shellcheck', args, { maxBuffer: 64 * 1024 * 1024 }, (err, out) => {
              if (err && (err as unknown as { code?: number }).code !== 1) reject(new Error(`shellcheck failed to run: ${String(err)}`));
              else resolve(out);
            });
          }),
      ),
    );
    const out: ToolFinding[][] = texts.map(() => []);
    for (const stdout of runs) {
      for (const c of (JSON.parse(stdout || '{"comments":[]}') as ShellcheckJson1).comments) {
        out[Number(path.basename(c.file, '.ebuild'))]!.push({ tool: 'shellcheck', line: c.line, code: `SC${c.code}`, level: c.level, message: c.message });
      }
    }
    return out;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export { run as execFileAsync };
