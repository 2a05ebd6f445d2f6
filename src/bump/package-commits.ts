import { heldSentence } from '../model/held.js';
import type { ManifestEntry } from '../distfiles/index.js';
import { filesUsed, isUsed, type FilesUse } from '../ebuild/files-dir.js';
import { srcUriEntries, Unevaluable } from '../ebuild/src-uri.js';
import { ebuildVars } from '../ebuild/vars.js';
import { addSummary, commitMessage, dropSummary, moveSummary } from '../git/messages.js';
import type { Person } from '../git/repo.js';
import { changedLines } from '../git/text-merge.js';
import type { CommitSpec } from '../git/transaction.js';
import type { StackModel } from '../model/resolve.js';
import { compareVersions, withoutRevision } from '../model/version.js';
import { manifestAfter, packageChanges } from '../overlay/changes.js';
import { packageFiles, readEbuild, type OverlayState } from '../overlay/scan.js';
import { stackFor } from '../stack-check/index.js';
import type { PackageWork } from './reconcile.js';
import { metadataForVersions } from './metadata-versions.js';
import { dependencyKeysOfText } from '../ebuild/dependencies.js';

/**
 * The commits of the packages' work. By default one commit per package, as
 * pkgdev makes a release move: "cat/pkg: add 6.3.3, drop 6.2.2", in build
 * order. `separateDrops` keeps the older form: every add first, then one
 * drop commit per package, consumers first. Each commit also removes the
 * files/ entries no remaining ebuild of the package uses, and says so.
 */
export interface CommitInput {
  works: PackageWork[];
  state: OverlayState;
  model: StackModel;
  /** Hashed distfiles, by name. */
  entries: ReadonlyMap<string, ManifestEntry>;
  /** metadata.xml of packages that have none, by atom. */
  metadata: ReadonlyMap<string, string>;
  identity: Person;
  separateDrops: boolean;
  /** Patch files each package's written ebuild adds to its files/, by atom (patch-files.ts). */
  addFiles?: ReadonlyMap<string, { name: string; content: Buffer }[]>;
  /** Packages removed whole: every file git tracks under each (plan.ts), relative to the overlay. */
  treeclean: ReadonlyMap<string, string[]>;
}

export interface PackageCommits {
  commits: CommitSpec[];
  /** What each commit removed from files/, for the report. */
  removedFiles: { atom: string; files: string[] }[];
}

// One loop over the packages, each turn one piece: the closures below (texts, distfile
// names, files/ use, metadata.xml) read that package's versions and its new text, and
// both commit forms are made from them.
export async function packageCommits(input: CommitInput): Promise<PackageCommits> {
  const { state, model, identity } = input;
  const first: CommitSpec[] = [];
  const later: CommitSpec[] = [];
  /** The commits of packages that left the release, with what their removed ebuilds depend on: placed last. */
  const leaving: { atom: string; needs: Set<string>; spec: CommitSpec }[] = [];
  const removedFiles: PackageCommits['removedFiles'] = [];
  const models = new Map<string, Promise<StackModel | undefined>>();
  const modelOf = (release: string) => {
    let m = models.get(release);
    if (!m) {
      m = release === model.release.version ? Promise.resolve(model) : model.manifest.stack.releases[release] ? stackFor(model.manifest, release) : Promise.resolve(undefined);
      models.set(release, m);
    }
    return m;
  };

  for (const work of input.works) {
    const { atom } = work;
    const pkg = state.packages.get(atom);
    const present = pkg?.versions ?? [];
    if (work.left?.treeclean) {
      const needs = new Set<string>();
      for (const v of work.remove) for (const k of await dependencyKeysOfText(readEbuild(state.dir, atom, v))) if (k !== atom) needs.add(k);
      const pn = atom.split('/')[1]!;
      // The whole directory as git tracks it; what the scan saw when git's list is not at hand.
      const tracked = input.treeclean.get(atom) ?? [];
      const files = tracked.length > 0
        ? tracked
        : [
            ...work.remove.map((v) => `${atom}/${pn}-${v}.ebuild`),
            ...packageFiles(state.dir, atom).map((f) => `${atom}/files/${f}`),
            ...(pkg?.manifest !== undefined ? [`${atom}/Manifest`] : []),
            ...(pkg?.hasMetadata ? [`${atom}/metadata.xml`] : []),
          ];
      const changes = files.map((f) => ({ path: f, content: null }));
      const others = files.map((f) => f.slice(atom.length + 1)).filter((f) => !isPackageFile(f, pn));
      leaving.push({ atom, needs, spec: { message: treecleanMessage(work, model.release.version, identity, others), changes } });
      continue;
    }
    const textOf = (v: string) => (work.write && v === work.write.version ? work.write.text : readEbuild(state.dir, atom, v));
    /** Distfile names an ebuild needs: the manifest's for a release it knows, else its own SRC_URI; undefined when neither tells. */
    const namesOf = async (v: string): Promise<string[] | undefined> => {
      const other = await modelOf(withoutRevision(v));
      const c = other?.byAtom.get(atom);
      if (c) return c.distfiles.map((d) => d.name);
      try {
        const [category, pn] = atom.split('/') as [string, string];
        return srcUriEntries(await ebuildVars(textOf(v)), { category, pn, version: v }).map((s) => s.name);
      } catch (err) {
        if (err instanceof Unevaluable) return undefined;
        throw err;
      }
    };
    const unneededAfter = async (removed: string[], remaining: string[]): Promise<Set<string>> => {
      const gone = new Set<string>();
      for (const v of removed) for (const n of (await namesOf(v)) ?? []) gone.add(n);
      for (const v of remaining) {
        const names = await namesOf(v);
        if (!names) return new Set(); // an ebuild whose distfiles cannot be told keeps every line
        for (const n of names) gone.delete(n);
      }
      return gone;
    };
    const unusedFiles = async (remaining: string[]): Promise<string[]> => {
      const files = packageFiles(state.dir, atom);
      if (files.length === 0) return [];
      const [category, pn] = atom.split('/') as [string, string];
      const uses: FilesUse[] = [];
      for (const v of remaining) {
        const text = textOf(v);
        const use = filesUsed(text, await ebuildVars(text), { category, pn, version: v });
        if (use.kind === 'all') return [];
        uses.push(use);
      }
      return files.filter((f) => !uses.some((u) => isUsed(f, u)));
    };
    const own = work.write ? work.component.distfiles.map((d) => input.entries.get(d.name)).filter((e): e is ManifestEntry => e !== undefined) : [];
    const newPackage = present.length === 0;
    /** metadata.xml to write: a new package's, or an existing one brought to the versions held after the commit. */
    const metadataFor = (held: string[], before = pkg?.metadata): string | undefined => {
      if (before === undefined) return work.write ? input.metadata.get(atom) : undefined;
      const after = metadataForVersions(before, work.component, held, model);
      return after === before ? undefined : after;
    };

    if (!input.separateDrops || work.remove.length === 0 || !work.write) {
      // One commit: the new ebuild (if any), every removal, the Manifest after both, files/ cleaned.
      const remaining = [...present.filter((v) => !work.remove.includes(v)), ...(work.write ? [work.write.version] : [])].sort(compareVersions);
      const unneeded = await unneededAfter(work.remove, remaining);
      const removeFiles = work.remove.length > 0 ? await unusedFiles(remaining) : [];
      const metadata = metadataFor(remaining);
      const changes = packageChanges({
        atom,
        ...(work.write ? { write: work.write } : {}),
        ...(metadata !== undefined ? { metadata } : {}),
        remove: work.remove,
        removeFiles,
        addFiles: work.write ? (input.addFiles?.get(atom) ?? []) : [],
        manifest: pkg?.manifest,
        entries: own,
        unneeded,
      });
      if (removeFiles.length) removedFiles.push({ atom, files: removeFiles });
      const spec = { message: message(work, newPackage, work.remove, removeFiles, identity, model.release.version), changes };
      if (work.left) {
        const needs = new Set<string>();
        for (const v of work.remove) for (const k of await dependencyKeysOfText(readEbuild(state.dir, atom, v))) if (k !== atom) needs.add(k);
        leaving.push({ atom, needs, spec });
      } else (work.write ? first : later).push(spec);
      continue;
    }
    // --separate-drops: the add (a revision bump still replaces its revision in the same commit), then the drops.
    const superseded = work.revbump ? [work.revbump.replaces] : [];
    const dropped = work.remove.filter((v) => !superseded.includes(v));
    const afterAdd = [...present.filter((v) => !superseded.includes(v)), work.write.version].sort(compareVersions);
    const addUnneeded = await unneededAfter(superseded, afterAdd);
    const addFiles = superseded.length > 0 ? await unusedFiles(afterAdd) : [];
    const metadata = metadataFor(afterAdd);
    const addChanges = packageChanges({
      atom,
      write: work.write,
      ...(metadata !== undefined ? { metadata } : {}),
      remove: superseded,
      removeFiles: addFiles,
      addFiles: input.addFiles?.get(atom) ?? [],
      manifest: pkg?.manifest,
      entries: own,
      unneeded: addUnneeded,
    });
    first.push({ message: message({ ...work, discarded: work.discarded.filter((d) => superseded.includes(d.version)) }, newPackage, superseded, addFiles, identity), changes: addChanges });
    const remaining = afterAdd.filter((v) => !dropped.includes(v));
    const dropFiles = (await unusedFiles(remaining)).filter((f) => !addFiles.includes(f));
    const dropMetadata = metadataFor(remaining, metadata ?? pkg?.metadata);
    const dropChanges = packageChanges({
      atom,
      ...(dropMetadata !== undefined ? { metadata: dropMetadata } : {}),
      remove: dropped,
      removeFiles: dropFiles,
      manifest: manifestAfter(atom, pkg?.manifest, addChanges),
      entries: [],
      unneeded: await unneededAfter(dropped, remaining),
    });
    if (addFiles.length || dropFiles.length) removedFiles.push({ atom, files: [...addFiles, ...dropFiles] });
    const dropWork: PackageWork = { atom, component: work.component, discarded: work.discarded.filter((d) => dropped.includes(d.version)), remove: dropped };
    later.push({ message: message(dropWork, false, dropped, dropFiles, identity), changes: dropChanges });
  }
  // Drops after every add, consumers first, so that no commit removes what a later one's ebuilds still need.
  return { commits: placeLeaving([...first, ...later.reverse()], leaving), removedFiles };
}

/** The packages whose ebuilds a commit removes. */
function removesFrom(spec: CommitSpec): Set<string> {
  const out = new Set<string>();
  for (const c of spec.changes) {
    if (c.content !== null || !c.path.endsWith('.ebuild')) continue;
    const [category, pn] = c.path.split('/');
    out.add(`${category}/${pn}`);
  }
  return out;
}

/**
 * Where the commits of packages that left the release go: each right before
 * the first commit that removes an ebuild of a package it depends on (in the
 * default form, that package's "add X, drop Y" commit), as late as that
 * allows, so that a stack package whose old version still needs it has
 * moved first where it can; at the end of the package commits when none
 * does. Among themselves, consumers first: one that depends on another
 * leaving package goes before it.
 */
function placeLeaving(commits: CommitSpec[], leaving: { atom: string; needs: Set<string>; spec: CommitSpec }[]): CommitSpec[] {
  if (leaving.length === 0) return commits;
  const removes = commits.map(removesFrom);
  const position = new Map(leaving.map((l) => [l.atom, (() => {
    const i = removes.findIndex((r) => [...l.needs].some((n) => r.has(n)));
    return i < 0 ? commits.length : i;
  })()]));
  // A consumer goes no later than what it consumes: settle the positions along the dependencies (leaving packages are few).
  for (let changed = true; changed; ) {
    changed = false;
    for (const l of leaving) {
      for (const other of leaving) {
        if (other === l || !l.needs.has(other.atom)) continue;
        if (position.get(l.atom)! > position.get(other.atom)!) {
          position.set(l.atom, position.get(other.atom)!);
          changed = true;
        }
      }
    }
  }
  const consumersFirst = (a: (typeof leaving)[number], b: (typeof leaving)[number]) =>
    position.get(a.atom)! - position.get(b.atom)! || (a.needs.has(b.atom) ? -1 : b.needs.has(a.atom) ? 1 : a.atom < b.atom ? -1 : a.atom > b.atom ? 1 : 0);
  const sorted = [...leaving].sort(consumersFirst);
  const out: CommitSpec[] = [];
  let next = 0;
  commits.forEach((c, i) => {
    while (next < sorted.length && position.get(sorted[next]!.atom)! === i) out.push(sorted[next++]!.spec);
    out.push(c);
  });
  while (next < sorted.length) out.push(sorted[next++]!.spec);
  return out;
}

/** "Not part of ROCm 7.2.4: …", the reason as one sentence. */
function leftSentence(reason: string, release: string): string {
  return `Not part of ROCm ${release}: ${reason.replace(/\.$/, '')}.`;
}

/** A file of a package directory bump knows (relative to it): an ebuild, the Manifest, metadata.xml, anything under files/. */
function isPackageFile(rel: string, pn: string): boolean {
  return rel === 'Manifest' || rel === 'metadata.xml' || rel.startsWith('files/') || (!rel.includes('/') && rel.startsWith(`${pn}-`) && rel.endsWith('.ebuild'));
}

/**
 * pkgdev's subject for removing a whole package, the reason and the versions
 * in the body; `others` are the directory's other files (a NOTES, a patch
 * outside files/), named since they go too.
 */
function treecleanMessage(work: PackageWork, release: string, identity: Person, others: string[]): string {
  const body: (string | { verbatim: string[] })[] = [
    leftSentence(work.left!.reason, release),
    `Removes ${work.remove.join(', ')} (${work.remove.length === 1 ? 'the only version' : 'every version'} the overlay held), with the package's Manifest, metadata.xml and files/: ` +
      `${work.remove.length === 1 ? 'it needs' : 'they need'} the older ROCm stack this bump drops.`,
  ];
  if (others.length > 0) body.push(`The whole package directory goes, with its other files: ${others.join(', ')}.`);
  for (const d of work.discarded) body.push(`Drops the changes made by hand to ${d.version} (--discard-local):`, { verbatim: bodyLines(d.diff) });
  return commitMessage(`${work.atom}: treeclean`, identity, body);
}

/** Changed lines of a diff for a commit body: "- old" / "+ new", at most `max` of them. */
export function bodyLines(diff: string, max = 12): string[] {
  const { added, removed } = changedLines(diff);
  const lines = [...removed.map((l) => `- ${l.trim()}`), ...added.map((l) => `+ ${l.trim()}`)].filter((l) => l.length > 2 && !/^[-+] # Copyright /.test(l));
  if (lines.length <= max) return lines.map((l) => `  ${l}`);
  return [...lines.slice(0, max - 1).map((l) => `  ${l}`), `  … and ${lines.length - max + 1} more changed lines`];
}

function message(work: PackageWork, newPackage: boolean, removed: string[], removeFiles: string[], identity: Person, release?: string): string {
  const { atom } = work;
  const superseded = work.revbump?.replaces;
  // Versions as the files name them: dropping 6.2.2-r1 says so, as pkgdev does.
  const others = removed.filter((v) => v !== superseded);
  let summary: string;
  if (!work.write) summary = dropSummary(atom, removed);
  else if (work.revbump) summary = others.length ? moveSummary(atom, work.write.version, false, others) : addSummary(atom, work.write.version, false);
  else summary = moveSummary(atom, work.write.version, newPackage, [...new Set(others)]);
  const body: (string | { verbatim: string[] })[] = [];
  if (work.left && release) {
    body.push(
      leftSentence(work.left.reason, release),
      `Its newer versions stay; ${removed.join(', ')} ${removed.length === 1 ? 'needs' : 'need'} the older ROCm stack this bump drops.`,
    );
  }
  // A package the release holds at its own version says so, and why (model/held.ts).
  const held = work.write && work.component.held ? heldSentence(work.component) : undefined;
  if (held && !work.revbump) body.push(held);
  if (work.revbump && work.write) {
    body.push(
      held
        ? `${held} ${removed.includes(superseded!) ? `${superseded} is dropped, superseded by it` : `${superseded} stays, for the release it was written for`}. Changed lines:`
        : `What rocm-ebuild generates for ${withoutRevision(work.write.version)} changed since ${superseded} was written (the stack manifest or its templates), so it gets a new revision; ${superseded} is dropped, superseded by it. Changed lines:`,
      { verbatim: bodyLines(work.revbump.diff) },
    );
  }
  if (work.carried && work.write) {
    body.push(`Keeps the changes made by hand to ${work.carried.from}, merged into the generated text:`, { verbatim: bodyLines(work.carried.diff) });
  }
  for (const d of work.discarded) {
    body.push(`Drops the changes made by hand to ${d.version} (--discard-local):`, { verbatim: bodyLines(d.diff) });
  }
  if (removeFiles.length > 0) {
    body.push(`No remaining ebuild uses ${removeFiles.map((f) => `files/${f}`).join(', ')}; removed.`);
  }
  return commitMessage(summary, identity, body);
}
