import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { patchesOf } from '../model/patches.js';
import type { StackModel } from '../model/resolve.js';
import type { OverlayState } from '../overlay/scan.js';
import { readPatchFile, PatchFileError } from '../stack-check/patch-files.js';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';
import type { PackageWork } from './reconcile.js';

/** A file the commit of a package adds to its files/: one of our patches, copied from the manifest. */
export interface AddedFile {
  /** Relative to files/. */
  name: string;
  content: Buffer;
}

/**
 * The patch files each written ebuild applies from ${FILESDIR}, copied from
 * the manifest's patches/<component>/ into the package's files/ by the
 * commit that writes the ebuild. A file the overlay already holds with the
 * same bytes is left as it is; one holding other bytes stops the bump before
 * anything is written: the older ebuilds apply that file as it is, and a
 * change made there by hand would be lost (a changed patch gets a new name).
 */
export async function patchFilesToAdd(works: readonly PackageWork[], state: OverlayState, model: StackModel): Promise<Map<string, AddedFile[]>> {
  const out = new Map<string, AddedFile[]>();
  const clashes: string[] = [];
  for (const w of works) {
    if (!w.write) continue;
    const c = w.component;
    for (const p of patchesOf(c.spec.patches, c.pn, c.version)) {
      if (p.kind !== 'file') continue;
      let bytes: Buffer;
      try {
        bytes = (await readPatchFile(model.manifest.dir, c.name, p.file)).bytes;
      } catch (err) {
        if (err instanceof PatchFileError) throw new UserError(`${c.atom}: ${err.message}; nothing was written\nhint: run \`rocm-ebuild validate\` and fix the patch file`, ExitCode.invalidInput);
        throw err;
      }
      const inOverlay = path.join(state.dir, w.atom, 'files', p.file);
      const have = await readFile(inOverlay).catch(() => undefined);
      if (have === undefined) out.set(w.atom, [...(out.get(w.atom) ?? []), { name: p.file, content: bytes }]);
      else if (!have.equals(bytes)) clashes.push(`${w.atom}/files/${p.file} differs from ${path.join(model.manifest.dir, 'patches', c.name, p.file)}`);
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
  return out;
}
