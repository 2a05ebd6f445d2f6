import type { AtomReport, TestReport } from './report.js';

export function duration(seconds: number): string {
  if (seconds < 60) return `${Math.round(seconds)} s`;
  const m = Math.round(seconds / 60);
  return m < 60 ? `${m} min` : `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} min`;
}

/** A table cell: one line, no pipes. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ').trim();
}

function tests(a: AtomReport): string {
  if (!a.testCounts) return a.tested && a.result === 'passed' && a.message?.startsWith('built, not tested') ? 'not run' : '';
  const { total, failed, skipped } = a.testCounts;
  return `${total - failed - skipped}/${total} passed${failed ? `, **${failed} failed**` : ''}${skipped ? `, ${skipped} skipped` : ''}`;
}

/**
 * The Markdown a pull request carries: the run in one line, then one row per
 * atom under test, and the dependencies summed up (failed ones get a row).
 */
export function markdownReport(report: TestReport): string {
  const started = Date.parse(report.started);
  const seconds = (Date.parse(report.ended) - started) / 1000;
  const device = report.device;
  const what = [
    device ? `${device.name ?? report.gfx}${device.pciAddress ? ` (${device.pciAddress})` : ''}` : (report.gfx ?? 'no GPU'),
    `${report.engine.name}${report.engine.version ? ` ${report.engine.version}` : ''}`,
    `\`${report.image}\``,
    `${report.tests} tests`,
    duration(seconds),
  ];
  const lines = [`#### ROCm ${report.release} ${report.gfx ? `on ${report.gfx}` : 'without a GPU'}: ${report.result}`, '', what.join(', '), ''];
  if (report.message) lines.push(`> ${cell(report.message)}`, '');
  const tested = report.atoms.filter((a) => a.tested);
  const deps = report.atoms.filter((a) => !a.tested);
  lines.push('| package | result | phase | tests | time | failure |', '| --- | --- | --- | --- | --- | --- |');
  for (const a of [...tested, ...deps.filter((d) => d.result === 'failed')]) {
    const result = a.result === 'failed' ? '**failed**' : a.result;
    const failure = a.failureClass ? `${a.failureClass}: ${a.message ?? ''}` : a.result !== 'passed' ? (a.message ?? '') : '';
    lines.push(`| \`${a.atom}-${a.version ?? ''}\`${a.tested ? '' : ' (dependency)'} | ${result} | ${a.phase} | ${tests(a)} | ${duration(a.seconds)} | ${cell(failure)} |`);
  }
  if (deps.length > 0) {
    const fromBin = deps.filter((d) => d.binpkg && d.result === 'passed').length;
    const built = deps.filter((d) => !d.binpkg && d.result === 'passed').length;
    lines.push('', `${deps.length} dependencies: ${fromBin} from binary packages, ${built} built${deps.length - fromBin - built ? `, ${deps.length - fromBin - built} failed or not run` : ''}.`);
  }
  return `${lines.join('\n')}\n`;
}

/** The reports of one run, for <report-dir>/report.md. */
export function markdownSummary(reports: readonly TestReport[]): string {
  return `${reports.map(markdownReport).join('\n')}`;
}
