import { lstat, readFile } from 'node:fs/promises';
import path from 'node:path';
import { patchDir, patchesOf } from '../model/patches.js';
import { refuseLinksOut } from '../overlay/paths.js';
import { readPatchFile, PatchFileError } from '../stack-check/patch-files.js';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';
import type { BumpInputs } from './inputs.js';
import type { OverlayRead } from './read.js';
import type { HandEdits } from './reconcile.js';

/** A file the commit of a package adds to its files/: one of our patches, copied from the manifest. */
export interface AddedFile {
  /** Relative to files/. */
  name: string;
  content: Buffer;
}

/**
 * The sixth stage, between reconcile and the report: the patch files each
 * written ebuild applies from ${FILESDIR}, read from the manifest's
 * patches/<component>/, that the package's commit adds to its files/. A dry
 * run reports them and the real run writes them: both come from here.
 */
export interface PatchFiles {
  /** By atom, the files the package's commit adds (the overlay lacks them). */
  byAtom: ReadonlyMap<string, AddedFile[]>;
}

/**
 * A file the overlay already holds with the same bytes is left as it is; one
 * holding other bytes (or a directory, or a link, where the file would go)
 * stops the bump before anything is written: the older ebuilds apply that
 * file as it is, and a change made there by hand would be lost (a changed
 * patch gets a new name).
 */
export async function ourPatchFiles(inputs: BumpInputs, read: OverlayRead, edits: HandEdits): Promise<PatchFiles> {
  const { model } = inputs;
  const { state } = read;
  const byAtom = new Map<string, AddedFile[]>();
  const clashes: string[] = [];
  for (const w of edits.works) {
    if (!w.write) continue;
    const c = w.component;
    for (const p of patchesOf(c.spec.patches, c.pn, c.version, c.release)) {
      if (p.kind !== 'file') continue;
      let bytes: Buffer;
      try {
        bytes = (await readPatchFile(model.manifest.dir, c.name, p.file)).bytes;
      } catch (err) {
        if (err instanceof PatchFileError) throw new UserError(`${c.atom}: ${err.message}; nothing was written\nhint: run \`rocm-ebuild validate\` and fix the patch file`, ExitCode.invalidInput);
        throw err;
      }
      const rel = `${w.atom}/files/${p.file}`;
      // What the commit writes must be the overlay's own file, not a link's target.
      if (inputs.isRepo) await refuseLinksOut(state.dir, [rel]);
      const there = path.join(state.dir, rel);
      const kind = await lstat(there).then(
        (st) => (st.isFile() ? 'file' : 'other'),
        (err: NodeJS.ErrnoException) => {
          if (err.code === 'ENOENT') return 'none';
          if (err.code === 'ENOTDIR') return 'other';
          throw err;
        },
      );
      const ours = path.join(model.manifest.dir, patchDir(c.name), p.file);
      if (kind === 'none') byAtom.set(w.atom, [...(byAtom.get(w.atom) ?? []), { name: p.file, content: bytes }]);
      else if (kind === 'other') clashes.push(`${rel}: not a regular file (or files/ is not a directory) where ${ours} would go`);
      else if (!(await readFile(there)).equals(bytes)) clashes.push(`${rel} differs from ${ours}`);
    }
  }
  if (clashes.length > 0) {
    throw new UserError(
      `${clashes.length === 1 ? 'a patch file' : `${clashes.length} patch files`} in the overlay would be overwritten; nothing was written:\n${clashes.map((c) => `  ${c}`).join('\n')}\n` +
        "hint: the ebuilds already in the overlay apply those files as they are: give a changed patch a new name in the manifest (e.g. with the release it starts at), or copy the overlay's version into the manifest if it was edited there",
      ExitCode.overlayRefused,
      { clashes },
    );
  }
  return { byAtom };
}
