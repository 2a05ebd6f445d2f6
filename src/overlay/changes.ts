import { formatManifest, parseManifest, updateManifest, type ManifestEntry } from '../distfiles/index.js';
import type { FileChange } from '../git/transaction.js';

/** What one package's commit does to its directory. */
export interface PackageEdit {
  atom: string;
  /** The ebuild written, if any: its version and text. */
  write?: { version: string; text: string };
  /** metadata.xml to write: for a package directory that has none, or an existing one brought to the versions held. */
  metadata?: string;
  /** Ebuild versions removed. */
  remove: string[];
  /** Files under files/ removed (relative to files/). */
  removeFiles: string[];
  /** Files added under files/ with the ebuild (our patches), relative to files/. */
  addFiles?: { name: string; content: Buffer }[];
  /** The Manifest as it is before the commit. */
  manifest: string | undefined;
  /** DIST lines set (new distfiles of the written ebuild). */
  entries: ManifestEntry[];
  /** Distfile names no remaining ebuild needs: their lines go. */
  unneeded: ReadonlySet<string>;
}

/**
 * The files one package's commit changes. Nothing else in the overlay is
 * touched: other packages' Manifests stay byte for byte as they were.
 */
export function packageChanges(edit: PackageEdit): FileChange[] {
  const { atom } = edit;
  const pn = atom.split('/')[1]!;
  const changes: FileChange[] = [];
  if (edit.write) changes.push({ path: `${atom}/${pn}-${edit.write.version}.ebuild`, content: edit.write.text });
  for (const v of edit.remove) changes.push({ path: `${atom}/${pn}-${v}.ebuild`, content: null });
  for (const f of edit.removeFiles) changes.push({ path: `${atom}/files/${f}`, content: null });
  for (const f of edit.addFiles ?? []) changes.push({ path: `${atom}/files/${f.name}`, content: f.content });
  if (edit.metadata !== undefined) changes.push({ path: `${atom}/metadata.xml`, content: edit.metadata });
  const old = edit.manifest !== undefined ? parseManifest(edit.manifest, `${atom}/Manifest`) : [];
  const text = formatManifest(updateManifest(old, edit.entries, (name) => !edit.unneeded.has(name)));
  changes.push(...manifestChange(atom, edit.manifest, text));
  return changes;
}

/** The Manifest text after `changes`, for the next commit of the same package. */
export function manifestAfter(atom: string, before: string | undefined, changes: FileChange[]): string | undefined {
  const c = changes.find((x) => x.path === `${atom}/Manifest`);
  if (!c) return before;
  return c.content === null ? undefined : c.content.toString();
}

function manifestChange(atom: string, before: string | undefined, after: string): FileChange[] {
  if (after === (before ?? '')) return [];
  // A thin Manifest without DIST lines is no Manifest at all.
  if (after === '') return before === undefined ? [] : [{ path: `${atom}/Manifest`, content: null }];
  return [{ path: `${atom}/Manifest`, content: after }];
}
