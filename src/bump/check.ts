import { lintComponents } from '../lint/component.js';
import { failing, formatText, hasTool } from '../lint/index.js';
import { unwritableDirs } from '../overlay/paths.js';
import { SETTINGS_FILE } from '../overlay/settings.js';
import type { Plan } from '../plan/plan.js';
import { renderMetadata } from '../render/index.js';
import { SETS_CONF, SETS_DIR } from '../stack-check/package-set.js';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';
import type { BumpInputs } from './inputs.js';
import type { BumpQa } from './types.js';
import type { BumpPlan } from './plan.js';
import type { OverlayRead } from './read.js';
import { ebuildPath, type HandEdits, type PackageWork } from './reconcile.js';

/**
 * The sixth stage, before anything is fetched or written: every ebuild this
 * bump writes (generated, or with hand edits merged in) passes lint's QA
 * checks, with the metadata.xml a new package gets, and every directory the
 * bump writes to is writable.
 */
export interface Checked {
  /** The packages whose commit writes an ebuild. */
  writes: PackageWork[];
  /** metadata.xml of the new packages (those that have none), by atom. */
  metadata: Map<string, string>;
  /** What the ebuilds were checked with and what it found that does not fail (style, info): the summary's line. */
  qa: BumpQa;
}

export async function checkWrites(inputs: BumpInputs, read: OverlayRead, planned: BumpPlan, edits: HandEdits, saveSettings: boolean): Promise<Checked> {
  const { dir, isRepo, model } = inputs;
  const { state } = read;
  const { plan, maintainer } = planned;
  const { works, year } = edits;
  // Check every ebuild this bump writes (generated, or with hand edits merged in) before anything is fetched or written.
  const writes = works.filter((w) => w.write);
  const metadata = new Map(
    writes.filter((w) => !state.packages.get(w.atom)?.hasMetadata).map((w) => [w.atom, renderMetadata(w.component, model, { maintainers: maintainer.maintainers })]),
  );
  // shellcheck when it is installed, as lint --overlay runs it: what bump commits passes it (the command says once when it is absent).
  const shellcheck = hasTool('shellcheck');
  const lints = await lintComponents(
    writes.map((w) => w.component),
    model,
    (c) => {
      const w = writes.find((x) => x.atom === c.atom)!;
      return { year, text: w.write!.text, metadata: metadata.get(c.atom) ?? renderMetadata(c, model, { maintainers: maintainer.maintainers }), tools: { shellcheck } };
    },
  );
  const lintProblems: string[] = [];
  for (const lint of lints) {
    const bad = failing(lint.results);
    if (bad.length > 0 || lint.tools.length > 0) {
      lintProblems.push(formatText(bad).trimEnd(), ...lint.tools.map((t) => `  ${lint.file}:${t.line ?? '?'}: ${t.tool}${t.code ? ` ${t.code}` : ''}: ${t.message}`));
    }
  }
  if (lintProblems.length > 0) {
    throw new UserError(`generated ebuilds fail QA checks; nothing was written:\n${lintProblems.join('\n')}`, ExitCode.qaFailed);
  }
  // Every directory the bump will write to must be writable, before anything is fetched.
  if (isRepo) await checkWritable(dir, plannedPaths(plan, works, saveSettings));
  const results = lints.flatMap((l) => l.results);
  return { writes, metadata, qa: { ebuilds: lints.length, shellcheck, findings: results.length - failing(results).length } };
}

/** The files a plan will write or delete, relative to the overlay. */
function plannedPaths(plan: Plan, works: PackageWork[], saveSettings: boolean): string[] {
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
async function checkWritable(dir: string, files: string[]): Promise<void> {
  const bad = await unwritableDirs(dir, [...new Set(files)]);
  if (bad.length === 0) return;
  throw new UserError(
    `cannot write to these directories of the overlay ${dir}; nothing was changed:\n${bad.map((b) => `  ${b.dir}: ${b.why}`).join('\n')}\n` +
      'hint: make them writable (or remount the overlay read-write), then run the bump again',
    ExitCode.overlayRefused,
  );
}
