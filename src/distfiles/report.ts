import type { DistfileResult } from './types.js';

/**
 * A failed or missing distfile as the user should read it: what failed, who
 * needs it, every URL tried with its outcome, and what to do.
 */
export function describeProblem(r: DistfileResult): string {
  const lines = [`${r.status === 'missing' ? 'missing' : 'failed'}: ${r.name}`];
  if (r.error) lines.push(`  ${r.error}`);
  for (const n of r.neededBy) lines.push(`  needed by ${n.atom} (${n.ebuild})`);
  if (r.attempts.length > 0) {
    lines.push('  tried:');
    for (const a of r.attempts) lines.push(`    ${a.url}: ${a.outcome}`);
  }
  if (r.hint) lines.push(`  what to do: ${r.hint}`);
  return lines.join('\n');
}

/** True when every distfile is usable, i.e. each has a verified Manifest entry. */
export function allVerified(results: DistfileResult[]): boolean {
  return results.every((r) => (r.status === 'present' || r.status === 'fetched') && r.entry !== undefined);
}
