import { promises as fs } from 'node:fs';

/**
 * Replace `file` whole: `write` makes a temporary file beside it, which is
 * then renamed over it, so a concurrent reader (another rocm-ebuild, a
 * command started during a build) sees the old file or the new one, never
 * half of one. The temporary name carries the process id; a killed writer
 * leaves it behind for its owner's clean-up.
 */
export async function replaceAtomically(file: string, write: (tmp: string) => Promise<unknown>): Promise<void> {
  const tmp = `${file}.${process.pid}.tmp`;
  await write(tmp);
  await fs.rename(tmp, file);
}

/** replaceAtomically with these contents. */
export function writeFileAtomically(file: string, contents: string | Uint8Array): Promise<void> {
  return replaceAtomically(file, (tmp) => fs.writeFile(tmp, contents));
}
