import { strict as assert } from 'node:assert';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { runCli } from './project.js';

export interface PlanJson {
  version: string;
  packages: { atom: string; version: string; action: string; newPackage: boolean; distfiles: { name: string; urls: string[] }[] }[];
}

/**
 * The shipped stack's plan for `version` (from `bump --dry-run --json`), with
 * a small synthetic file in `distdir` for every distfile it names.
 */
export async function synthesizeDistfiles(version: string, distdir: string, home: string): Promise<PlanJson> {
  const r = await runCli(['bump', version, '--overlay', path.join(distdir, '..', 'no-such-overlay'), '--dry-run', '--json'], { home });
  assert.equal(r.code, 0, r.stderr);
  const plan = JSON.parse(r.stdout) as PlanJson;
  await mkdir(distdir, { recursive: true });
  for (const p of plan.packages) {
    for (const d of p.distfiles) {
      const file = path.join(distdir, d.name);
      if (!existsSync(file)) await writeFile(file, Buffer.concat([Buffer.from(`${d.name}\n`), randomBytes(512 + (d.name.length % 7) * 331)]));
    }
  }
  return plan;
}
