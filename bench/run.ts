import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cleanup } from './dataset.js';
import type { BenchReport } from './report.js';

/**
 * Runs every bench/*.bench.ts module's exported run() in sequence (or only
 * those named on the command line: `node dist/bench/run.js hash`) and prints
 * each report: timings, then ratios against the baselines of the same run.
 * `--json` prints the reports as JSON instead.
 */

const here = path.dirname(fileURLToPath(import.meta.url));

function table(report: BenchReport): string {
  const width = Math.max(...report.figures.map((f) => f.label.length), ...report.ratios.map((r) => r.label.length));
  const lines = [`## ${report.title}`, ''];
  for (const f of report.figures) {
    const range = f.min !== undefined && f.max !== undefined ? ` [${f.min.toFixed(2)}–${f.max.toFixed(2)}]` : '';
    const cpu = f.cpuSeconds !== undefined ? `  CPU ${f.cpuSeconds.toFixed(2)} s` : '';
    const peak = f.peakMiB !== undefined ? `  peak ${f.peakMiB.toFixed(0)} MiB` : '';
    lines.push(`  ${f.label.padEnd(width)}  ${f.seconds.toFixed(3).padStart(8)} s${range}${cpu}${peak}${f.detail ? `  ${f.detail}` : ''}`);
  }
  lines.push('');
  for (const r of report.ratios) {
    const range = r.min !== undefined && r.max !== undefined ? ` [${r.min.toFixed(2)}–${r.max.toFixed(2)}]` : '';
    const goal = r.goal !== undefined ? `  goal ≤ ${r.goal}: ${r.value <= r.goal ? 'met' : 'not met'}` : '';
    lines.push(`  ${r.label.padEnd(width)}  ${r.value.toFixed(2).padStart(8)} ×${range}${goal}${r.note ? `  (${r.note})` : ''}`);
  }
  for (const n of report.notes ?? []) lines.push(`  ${n}`);
  return `${lines.join('\n')}\n`;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const json = args.includes('--json');
  const wanted = args.filter((a) => !a.startsWith('--'));
  const modules = (await fs.readdir(here)).filter((f) => f.endsWith('.bench.js')).sort();
  const selected = wanted.length === 0 ? modules : modules.filter((m) => wanted.includes(m.replace(/\.bench\.js$/, '')));
  const unknown = wanted.filter((w) => !modules.includes(`${w}.bench.js`));
  if (unknown.length > 0) {
    process.stderr.write(`unknown bench ${unknown.join(', ')}; have: ${modules.map((m) => m.replace(/\.bench\.js$/, '')).join(', ')}\n`);
    process.exit(2);
  }
  const reports: BenchReport[] = [];
  // Where and when: figures are only comparable on the same machine, and ratios to baselines of the same run.
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const machine = `${new Date().toISOString().slice(0, 10)}, ${cpu}, ${os.availableParallelism()} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, load average ${os.loadavg()[0]!.toFixed(1)}`;
  if (!json) process.stdout.write(`# rocm-ebuild benchmarks: ${machine}\n\n`);
  try {
    for (const file of selected) {
      process.stderr.write(`running ${file.replace(/\.js$/, '')}…\n`);
      const mod = (await import(pathToFileURL(path.join(here, file)).href)) as { run?: () => Promise<BenchReport> };
      if (typeof mod.run !== 'function') throw new Error(`${file} exports no run()`);
      const report = await mod.run();
      reports.push(report);
      if (!json) process.stdout.write(`${table(report)}\n`);
    }
  } finally {
    await cleanup();
  }
  if (json) process.stdout.write(`${JSON.stringify({ machine, reports }, null, 2)}\n`);
}

await main();
