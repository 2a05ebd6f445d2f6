import { printable } from '../util/printable.js';
import { setupFileDestination } from './portage.js';
import type { TestRunResult } from './run.js';

/**
 * What `test --dry-run` prints: for each container, the files it would get
 * (the Portage configuration and the script), as comments, then the engine
 * command line. Every line but the command lines is a comment, so the output
 * is itself a shell script that would start the containers.
 */
export function dryRunText(result: TestRunResult): string {
  const out: string[] = [];
  result.containers.forEach((c, i) => {
    const where = c.gfx ? `on ${c.gfx}${c.gpu !== null ? ` (GPU ${c.gpu})` : ''}` : 'without a GPU';
    out.push(`# ROCm ${result.release} ${where}: container ${c.name}, reports in ${printable(c.reportDir, { oneLine: true })}`);
    for (const [name, text] of Object.entries(c.setup ?? {})) {
      out.push(`# --- setup/${name}: ${setupFileDestination(name)} ---`);
      for (const line of text.replace(/\n$/, '').split('\n')) out.push(`#   ${printable(line)}`.trimEnd());
    }
    out.push(result.commands[i]!);
  });
  return `${out.join('\n')}\n`;
}
