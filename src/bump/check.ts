import { unwritableDirs } from '../overlay/paths.js';
import { SETTINGS_FILE } from '../overlay/settings.js';
import type { Plan } from '../plan/plan.js';
import { SETS_CONF, SETS_DIR } from '../stack-check/package-set.js';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';
import { ebuildPath, type PackageWork } from './reconcile.js';

/** The files a plan will write or delete, relative to the overlay. */
export function plannedPaths(plan: Plan, works: PackageWork[], saveSettings: boolean): string[] {
  const files: string[] = [];
  for (const step of plan.scaffold) {
    if (step.action === 'keep') continue;
    if (step.what === 'repository') files.push('profiles/repo_name', 'metadata/layout.conf', SETTINGS_FILE);
    if (step.what === 'targets-desc') files.push('profiles/desc/amdgpu_targets.desc');
    if (step.what === 'eclass') files.push('eclass/rocm.eclass');
    if (step.what === 'package-sets') files.push(SETS_CONF, `${SETS_DIR}/rocm`);
  }
  if (saveSettings) files.push(SETTINGS_FILE);
  for (const w of works) {
    const versions = [...w.remove, ...(w.write ? [w.write.version] : [])];
    files.push(`${w.atom}/Manifest`, `${w.atom}/metadata.xml`, ...versions.map((v) => ebuildPath(w.atom, v)));
  }
  return files;
}

/** Every directory the bump writes to must be writable, or nothing is done (exit 4). */
export async function checkWritable(dir: string, files: string[]): Promise<void> {
  const bad = await unwritableDirs(dir, [...new Set(files)]);
  if (bad.length === 0) return;
  throw new UserError(
    `cannot write to these directories of the overlay ${dir}; nothing was changed:\n${bad.map((b) => `  ${b.dir}: ${b.why}`).join('\n')}\n` +
      'hint: make them writable (or remount the overlay read-write), then run the bump again',
    ExitCode.overlayRefused,
  );
}
