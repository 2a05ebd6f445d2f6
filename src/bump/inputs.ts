import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { parseBugRef, type BugRef } from '../git/messages.js';
import { OverlayRepo } from '../git/repo.js';
import { requirePackageNames } from '../model/package-names.js';
import type { StackModel } from '../model/resolve.js';
import { checkOverlayPath } from '../overlay/paths.js';
import { MAINTAINER_FORMAT, parseMaintainer, type MaintainerSetting } from '../overlay/settings.js';
import { describedPackages } from '../plan/left.js';
import { currentYear } from '../render/index.js';
import { loadManifestOrFail, stackFor } from '../stack-check/index.js';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';
import type { BumpOptions } from './types.js';

/** The first stage: everything that needs no work on the overlay (paths, flags, the manifest), checked. */
export interface BumpInputs {
  /** The overlay, absolute. */
  dir: string;
  repo: OverlayRepo;
  /** The overlay exists and is the top directory of a git repository; false: it is created at the end. */
  isRepo: boolean;
  model: StackModel;
  /** The packages the scan reads: the release's and every other one a component describes. */
  atoms: string[];
  /** The packages named on the command line, if any. */
  only: ReadonlySet<string> | undefined;
  /** --maintainer, parsed. */
  requested: MaintainerSetting | undefined;
  /** --bug / --closes, parsed once here (refused before anything else runs). */
  refs: { bug: BugRef[]; closes: BugRef[] };
  /** The copyright year of everything this run writes, taken once: a run across midnight on 31 December writes one year. */
  year: number;
}

export async function checkInputs(o: BumpOptions): Promise<BumpInputs> {
  const refs = bugRefs(o);
  const year = currentYear();
  const dir = path.resolve(o.overlay);
  const where = await checkOverlayPath(dir, { create: !o.dryRun });
  const requested = o.maintainer !== undefined ? parseMaintainer(o.maintainer) : undefined;
  if (o.maintainer !== undefined && !requested) throw new UserError(`--maintainer ${MAINTAINER_FORMAT}`, ExitCode.invalidInput);
  const manifest = await loadManifestOrFail(o.manifest);
  const model = await stackFor(manifest, o.version);
  const repo = new OverlayRepo(dir);
  const isRepo = where === 'exists' && (await repo.isRepository());
  if (where === 'exists' && !isRepo && (await readdir(dir)).length > 0) {
    throw new UserError(
      `${dir} is not the top directory of a git repository; rocm-ebuild commits to overlays it can roll back\n` +
        'hint: run `git init` there (and commit what it holds), or give a new or empty directory',
      ExitCode.overlayRefused,
    );
  }
  const atoms = model.components.map((c) => c.atom);
  const only = o.packages?.length ? new Set(requirePackageNames(o.packages, atoms, `ROCm ${o.version}`)) : undefined;
  // Every package a component describes is read, not only the release's: one that left it must be seen to be reported or removed.
  const scanned = [...new Set([...atoms, ...describedPackages(manifest).keys()])];
  return { dir, repo, isRepo, model, atoms: scanned, only, requested, refs, year };
}

/** --bug/--closes as trailer refs; a value that is neither a bug number nor an https URL is refused. */
function bugRefs(o: BumpOptions): { bug: BugRef[]; closes: BugRef[] } {
  const parse = (flag: string, values: string[] = []) =>
    values.map((v) => {
      const r = parseBugRef(v);
      if ('error' in r) throw new UserError(`--${flag}: ${r.error}`, ExitCode.invalidInput);
      return r;
    });
  return { bug: parse('bug', o.bug), closes: parse('closes', o.closes) };
}
