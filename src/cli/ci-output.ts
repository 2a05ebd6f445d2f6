import type { Matrix } from '../matrix/plan.js';

/** What `ci … --output FILE` says it wrote: the file and the jobs in it, so a silent success is not mistaken for nothing done. */
export function writtenLine(file: string, plan: Matrix): string {
  const tests = plan.jobs.filter((j) => j.gfx !== null).length;
  return `${file}: written (ROCm ${plan.version}: ${plan.jobs.length - tests} base job, ${tests} test job${tests === 1 ? '' : 's'} for ${plan.gfx.join(', ')})`;
}
