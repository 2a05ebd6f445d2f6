import { readFile, rename, writeFile, unlink } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { formatIssue, ManifestError, type ManifestIssue } from '../../manifest/issues.js';
import type { Manifest } from '../../manifest/load.js';
import { resolveManifestPath } from '../../manifest/location.js';
import { loadManifest } from '../../stack-check/index.js';
import { expand } from '../../model/sources/index.js';
import { STREAMS } from '../../model/streams.js';
import { compareVersions } from '../../model/version.js';
import { UserError } from '../../util/errors.js';
import { ExitCode } from '../../util/exit-codes.js';
import type { Deadline } from '../../util/deadline.js';
import type { Progress } from '../../util/progress.js';
import { diffReleases, type DiffReport } from '../facts/diff.js';
import { applyDraft, DraftError, type DraftRelease } from './draft.js';
import { formatDiffText } from '../facts/format.js';
import { formatPatchesText } from '../replay/format.js';
import { replayPatches, type PatchesReport } from '../replay/patches.js';
import { formatProjectsText } from '../releases/format.js';
import { compareProjects, type ProjectsReport } from '../releases/projects.js';
import { ReleaseManifestError } from '../releases/release-manifest.js';
import { TreeError } from '../trees/source-tree.js';
import type { TreeProvider } from '../trees/sources.js';
import { compareWithManifest } from '../therock/compare.js';
import { formatTheRockText, summarize, type TheRockReport } from '../therock/format.js';
import { readTheRock } from '../therock/release.js';

export interface DeriveOptions {
  /** The manifest to extend (a stack.yaml or its directory). */
  manifest: string;
  version: string;
  from: string;
  /** For AMD's release manifest (ROCm/ROCm) and the rename probes: see repositoryUrl. */
  baseUrl: string;
  cacheDir: string;
  /** Each remote call's bound (bump has no --timeout for upstream reads: a call that hangs is stopped). */
  deadline: Deadline;
  provider: TreeProvider;
  dryRun: boolean;
  jobs: number;
  progress: Progress;
  /**
   * A TheRock-stream release: the tag or branch of ROCm/TheRock whose pins
   * compose it. Defaults to the stream's tag (therock-X.Y) when the release
   * derived from is itself a TheRock one.
   */
  therock?: string;
}

export interface DeriveResult {
  file: string;
  written: boolean;
  draft: DraftRelease;
  /** The stack.yaml text with the draft (what was, or with --dry-run would be, written). */
  text: string;
  /** AMD's project list compared (legacy stream); a TheRock release has `therock` instead. */
  projects?: ProjectsReport;
  /** TheRock's composition at its ref, compared with the release derived from. */
  therock?: TheRockReport;
  diff: DiffReport;
  patches: PatchesReport;
  /** Problems `validate` finds in the manifest with the draft; empty when it validates. */
  issues: ManifestIssue[];
}

function manifestFailure(err: ManifestError, what: string): UserError {
  return new UserError(`${what}:\n${err.issues.map((i) => formatIssue(i)).join('\n')}`, ExitCode.invalidInput, { issues: err.issues });
}

/**
 * A release the manifest lacks, derived from a known one: AMD's project list
 * is read, every component's build files are compared and its fix-ups
 * replayed, and a draft release entry is written into stack.yaml — not
 * evidence, LLVM slot carried over, new projects excluded as "not packaged
 * yet" — then the manifest is validated again. Nothing is written to an
 * overlay here.
 */
export async function deriveRelease(o: DeriveOptions): Promise<DeriveResult> {
  const file = await resolveManifestPath(o.manifest);
  // The text the draft is applied to, read before anything else: if the file
  // changes from here on (another derive, an editor), nothing is written.
  const original = await readFile(file, 'utf8').catch(() => undefined);
  let manifest: Manifest;
  try {
    manifest = await loadManifest(file);
  } catch (err) {
    if (err instanceof ManifestError) throw manifestFailure(err, `${err.message}; fix it before deriving a release`);
    throw err;
  }
  const known = Object.keys(manifest.stack.releases);
  const base = manifest.stack.releases[o.from];
  if (!base) throw new UserError(`--derive-from ${o.from} is not a release of ${file}; it knows ${known.join(', ')}`, ExitCode.invalidInput);
  if (manifest.stack.releases[o.version]) {
    throw new UserError(`release ${o.version} is already in ${file}; run the bump without --derive-from`, ExitCode.invalidInput);
  }
  if (compareVersions(o.version, o.from) <= 0) {
    throw new UserError(`--derive-from ${o.from} must be older than ${o.version}`, ExitCode.invalidInput);
  }

  const therockRef = o.therock ?? (base.stream === 'therock' ? expand(STREAMS.therock.tagFor(o.version), 'x', o.version) : undefined);
  const { draft, projects, therock } = therockRef !== undefined ? await therockDraft(manifest, o, therockRef) : await amdDraft(manifest, o);

  // The build files of the new release are read at its own tags: the draft's stream decides them, as it will for the ebuilds.
  const drafted: Manifest = { ...manifest, stack: { ...manifest.stack, releases: { ...manifest.stack.releases, [o.version]: { llvm_slot: draft.llvmSlot, ...(draft.stream ? { stream: draft.stream } : {}) } } } };
  const diff = await diffReleases(drafted, { from: o.from, to: o.version, components: manifest.components, provider: o.provider, jobs: o.jobs, progress: o.progress });
  const patches = await replayPatches(drafted, { version: o.version, against: o.from, components: manifest.components, provider: o.provider, jobs: o.jobs, progress: o.progress });

  let text: string;
  try {
    if (original === undefined) throw new DraftError('cannot read it');
    text = applyDraft(original, draft);
  } catch (err) {
    if (err instanceof DraftError) throw new UserError(`${file}: ${err.message}`, ExitCode.invalidInput);
    throw err;
  }
  const result: DeriveResult = { file, written: false, draft, text, ...(projects ? { projects } : {}), ...(therock ? { therock } : {}), diff, patches, issues: [] };
  if (o.dryRun) return result;

  // Written under a temporary name and renamed over the file, and only if
  // nobody changed it while upstream was being read (another derive, an editor).
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(4).toString('hex')}.tmp`);
  await writeFile(tmp, text);
  try {
    if ((await readFile(file, 'utf8')) !== original) {
      throw new UserError(`${file} changed while the release was being derived; nothing was written: run again`, ExitCode.invalidInput);
    }
    await rename(tmp, file);
  } finally {
    await unlink(tmp).catch(() => {});
  }
  result.written = true;
  try {
    await loadManifest(file);
  } catch (err) {
    if (!(err instanceof ManifestError)) throw err;
    result.issues = err.issues;
  }
  return result;
}

type BaseRelease = Manifest['stack']['releases'][string];

/** A TheRock release has no AMD project list (default.xml): its composition is TheRock's pins, printed for the maintainer. */
async function therockDraft(manifest: Manifest, o: DeriveOptions, ref: string): Promise<{ draft: DraftRelease; therock: TheRockReport; projects?: undefined }> {
  const base: BaseRelease = manifest.stack.releases[o.from]!;
  const therock = await theRockComposition(manifest, o, ref);
  // The repositories the release derived from pins, at the commits TheRock's tree pins now.
  const pinned = Object.keys(base.pins ?? {});
  const pins = Object.fromEntries(
    pinned.flatMap((repo) => {
      const sub = therock.therock.submodules.find((m) => m.github === repo);
      return sub ? [[repo, sub.commit] as const] : [];
    }),
  );
  const draft: DraftRelease = { version: o.version, from: o.from, llvmSlot: base.llvm_slot, stream: 'therock', newProjects: [], ...(Object.keys(pins).length > 0 ? { pins } : {}) };
  return { draft, therock };
}

/** An AMD release: its project list (AMD's release manifest) compared with the release it derives from. */
async function amdDraft(manifest: Manifest, o: DeriveOptions): Promise<{ draft: DraftRelease; projects: ProjectsReport; therock?: undefined }> {
  const base: BaseRelease = manifest.stack.releases[o.from]!;
  let projects: ProjectsReport;
  try {
    projects = await compareProjects(manifest, {
      version: o.version,
      against: o.from,
      baseUrl: o.baseUrl,
      cacheDir: o.cacheDir,
      deadline: o.deadline,
      probe: true,
      trees: false,
      jobs: o.jobs,
      progress: o.progress,
    });
  } catch (err) {
    if (err instanceof ReleaseManifestError) throw new UserError(err.message, ExitCode.invalidInput);
    if (err instanceof TreeError) {
      throw new UserError(
        err.kind === 'missing' ? `AMD has no release ${o.version}: ${err.message}` : `cannot read AMD's release manifest of ${o.version}: ${err.message}`,
        err.kind === 'missing' ? ExitCode.invalidInput : ExitCode.fetchFailed,
      );
    }
    throw err;
  }
  const draft: DraftRelease = {
    version: o.version,
    from: o.from,
    llvmSlot: base.llvm_slot,
    ...(manifest.stack.projects ? { projects: projects.projects.filter((p) => p.status !== 'gone').map((p) => p.name) } : {}),
    newProjects: projects.projects.filter((p) => p.status === 'new' && !p.accounted).map((p) => p.name),
  };
  return { draft, projects };
}

/** TheRock at `ref`, which must be the release being derived, compared with the release it is derived from. */
async function theRockComposition(manifest: Manifest, o: DeriveOptions, ref: string): Promise<TheRockReport> {
  let release;
  try {
    release = await readTheRock(ref, { baseUrl: o.baseUrl, cacheDir: o.cacheDir, deadline: o.deadline });
  } catch (err) {
    if (err instanceof TreeError) {
      throw new UserError(
        err.kind === 'missing' ? `TheRock has no tag or branch ${ref} for ${o.version}: ${err.message}; name the ref with --therock` : `cannot read TheRock at ${ref}: ${err.message}`,
        err.kind === 'missing' ? ExitCode.invalidInput : ExitCode.fetchFailed,
      );
    }
    throw err;
  }
  if (release.version !== o.version) {
    throw new UserError(`TheRock at ${ref} is ROCm ${release.version ?? '(no version.json)'}, not ${o.version}; nothing was written`, ExitCode.invalidInput);
  }
  if (release.problems.length > 0) {
    throw new UserError(`TheRock at ${ref} holds entries that were refused; nothing was written:\n${release.problems.map((p) => `  ${p}`).join('\n')}`, ExitCode.invalidInput);
  }
  const comparison = compareWithManifest(manifest, o.from, release);
  return { therock: release, comparison, summary: summarize(release, comparison) };
}

/** The reports for people, as `bump --derive-from` prints them before deciding whether to go on. */
export function formatDerive(r: DeriveResult, color: boolean): string {
  const out = [
    r.therock ? formatTheRockText(r.therock) : formatProjectsText(r.projects!),
    formatDiffText(r.diff, { color }),
    formatPatchesText(r.patches, { color }),
    r.written
      ? `Draft release ${r.draft.version} written to ${r.file} (derived from ${r.draft.from}${r.draft.stream ? `, ${r.draft.stream} stream` : ''}; no evidence yet; llvm_slot ${r.draft.llvmSlot} carried over: check it${r.draft.newProjects.length ? `; ${r.draft.newProjects.length} new project${r.draft.newProjects.length === 1 ? '' : 's'} excluded as not packaged yet` : ''}).`
      : `Draft release ${r.draft.version} for ${r.file} (--dry-run: not written):`,
  ];
  return `${out.join('\n')}\n`;
}

/** Stop a bump whose derived draft does not validate: the ebuilds would be generated from data validate rejects. */
export function refuseInvalidDraft(r: DeriveResult): void {
  if (r.issues.length === 0) return;
  throw new UserError(
    `the draft of ${r.draft.version} in ${r.file} does not validate; no ebuild was generated or committed. ` +
      `Fix these, then run the bump of ${r.draft.version} again (without --derive-from):\n${r.issues.map((i) => formatIssue(i)).join('\n')}`,
    ExitCode.invalidInput,
    { issues: r.issues, draft: r.draft },
  );
}

/** The lines the draft adds to stack.yaml (it only inserts), for --dry-run. */
export function addedLines(before: string, after: string): string[] {
  const a = before.split('\n');
  const b = after.split('\n');
  const out: string[] = [];
  let i = 0;
  for (const line of b) {
    if (i < a.length && a[i] === line) i++;
    else out.push(line);
  }
  return out;
}

/**
 * `bump <version> --derive-from <known>`: derive, print the reports (text
 * mode), and refuse to go on while the draft does not validate. Returns the
 * result so --dry-run can stop there.
 */
export async function deriveForBump(o: DeriveOptions & { json: boolean; color: boolean; write(text: string): void }): Promise<DeriveResult> {
  const r = await deriveRelease(o);
  if (!o.json) {
    o.write(formatDerive(r, o.color));
    if (!r.written) o.write(`${addedLines(await readFile(r.file, 'utf8'), r.text).map((l) => `  + ${l}`).join('\n')}\n`);
  }
  refuseInvalidDraft(r);
  return r;
}
