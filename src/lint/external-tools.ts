import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';

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

export function hasTool(name: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' }).status === 0;
}

/** `bash -n`: real bash's syntax check. */
export async function bashSyntax(text: string): Promise<ToolFinding[]> {
  try {
    await new Promise<void>((resolve, reject) => {
      const child = execFile('bash', ['-n'], (err, _out, stderr) => (err ? reject(Object.assign(err, { stderr })) : resolve()));
      child.stdin!.end(text);
    });
    return [];
  } catch (err) {
    const stderr = String((err as { stderr?: string }).stderr ?? err);
    return stderr
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const m = /line (\d+): (.*)$/.exec(l);
        return { tool: 'bash' as const, level: 'error', message: m ? m[2]! : l, ...(m ? { line: Number(m[1]) } : {}) };
      });
  }
}

interface ShellcheckJson {
  line: number;
  code: number;
  level: string;
  message: string;
}

/** shellcheck as bash, with the ebuild-specific exclusions above. */
export async function shellcheck(text: string, extraExcludes: string[] = []): Promise<ToolFinding[]> {
  const args = ['-s', 'bash', '-f', 'json', '-e', [...SHELLCHECK_EXCLUDES, ...extraExcludes].join(','), '-'];
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

export { run as execFileAsync };
