import { readRecord, RECORD_REF, recordRefCommands, recordTip } from '../git/generated-record.js';
import { changedLines, unifiedDiff } from '../git/text-merge.js';
import { compareVersions, withoutRevision } from '../model/version.js';
import type { ResolvedComponent, StackModel } from '../model/resolve.js';
import { ebuildRelease } from '../model/held.js';
import { readEbuild, type OverlayState } from '../overlay/scan.js';
import type { Plan, PlanEntry } from '../plan/plan.js';
import { renderEbuild } from '../render/index.js';
import { stackFor } from '../stack-check/index.js';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';
import type { BumpInputs } from './inputs.js';
import { carryForward, copyrightYear, localState, sameButYear, type LocalState } from './local-edits.js';
import type { OverlayRead } from './read.js';
import type { BumpOptions } from './types.js';

/**
 * What each package's commit writes, once the overlay's own ebuilds are read:
 * a release the overlay already holds is rendered again and compared with
 * what was generated for it, and gets the next revision when that changed;
 * a new version starts from the previous one's hand edits, merged in; an
 * ebuild about to be dropped or superseded is never thrown away with changes
 * a maintainer made to it, unless told to (--discard-local).
 */

export interface PackageWork {
  atom: string;
  component: ResolvedComponent;
  /** The add or revbump entry of the plan (undefined: the package only loses versions). */
  entry?: PlanEntry;
  /** The ebuild this commit writes. */
  write?: {
    version: string;
    /** What is committed: the generated text, with carried hand edits merged in. */
    text: string;
    /** What rocm-ebuild generated, for the record. */
    generated: string;
  };
  /** A revision bump: the revision it replaces, and what changed in the generated text. */
  revbump?: { replaces: string; diff: string };
  /** Hand edits of an older ebuild merged into the new text. */
  carried?: { from: string; diff: string };
  /** Hand edits dropped on --discard-local. */
  discarded: { version: string; diff: string }[];
  /** Ebuild versions removed (dropped, or superseded by the new revision). */
  remove: string[];
  /** The package left the release: why, and whether the whole package goes (a treeclean commit). */
  left?: { reason: string; treeclean: boolean };
}

export interface Refusal {
  atom: string;
  version: string;
  why: string;
  diff: string;
  /** No record says what was generated for it: a second clone's usual case. */
  unknown?: boolean;
}

export interface Reconciled {
  works: PackageWork[];
  refusals: Refusal[];
  warnings: string[];
}

export interface ReconcileInput {
  plan: Plan;
  model: StackModel;
  state: OverlayState;
  /** Generated texts by path, from the record. */
  record: ReadonlyMap<string, string>;
  /** The rendered text of each add, by atom. */
  rendered: ReadonlyMap<string, string>;
  year: number;
  discardLocal: boolean;
}

/** "6.2.2" → "6.2.2-r1", "6.2.2-r1" → "6.2.2-r2". */
export function nextRevision(version: string): string {
  const m = /^(.*?)(?:-r(\d+))?$/.exec(version)!;
  return `${m[1]}-r${Number(m[2] ?? 0) + 1}`;
}

export function ebuildPath(atom: string, version: string): string {
  return `${atom}/${atom.split('/')[1]}-${version}.ebuild`;
}

/** The record paths a reconcile may read: every ebuild of the planned packages. */
export function recordPaths(plan: Plan, state: OverlayState): string[] {
  const atoms = new Set(plan.entries.map((e) => e.atom));
  return [...atoms].flatMap((atom) => (state.packages.get(atom)?.versions ?? []).map((v) => ebuildPath(atom, v)));
}

// One loop over the packages, each turn one piece: a revision bump, an add and the drops
// of a package decide together which older ebuild's hand edits go where, and which are refused.
export async function reconcile(input: ReconcileInput): Promise<Reconciled> {
  const { plan, model, state, record, year } = input;
  const works: PackageWork[] = [];
  const refusals: Refusal[] = [];
  const warnings: string[] = [];
  const unknownSources: string[] = [];
  const models = new Map<string, Promise<StackModel | undefined>>();
  const modelOf = (release: string) => {
    let m = models.get(release);
    if (!m) {
      m = release === model.release.version ? Promise.resolve(model) : model.manifest.stack.releases[release] ? stackFor(model.manifest, release) : Promise.resolve(undefined);
      models.set(release, m);
    }
    return m;
  };
  /** What the manifest generates now for `version`'s release, with the committed text's year. */
  const regenerate = async (atom: string, version: string, committed: string): Promise<string | undefined> => {
    // Its PV, or the release that holds the package at its own version (model/held.ts).
    const mine = plan.entries.find((e) => e.atom === atom)?.component;
    const other = await modelOf(mine ? ebuildRelease(mine, version, committed) : withoutRevision(version));
    const c = other?.byAtom.get(atom);
    return c && other ? renderEbuild(c, other, { year: copyrightYear(committed) ?? year }) : undefined;
  };
  const stateOf = async (atom: string, version: string): Promise<{ committed: string; state: LocalState; regenerated: string | undefined }> => {
    const committed = readEbuild(state.dir, atom, version);
    const regenerated = await regenerate(atom, version, committed);
    return { committed, regenerated, state: await localState(committed, record.get(ebuildPath(atom, version)), regenerated, ebuildPath(atom, version)) };
  };

  for (const atom of new Set(plan.entries.map((e) => e.atom))) {
    const entry = plan.entries.find((e) => e.atom === atom && e.action !== 'drop');
    const drop = plan.entries.find((e) => e.atom === atom && e.action === 'drop');
    const component = (entry ?? drop)!.component;
    const present = state.packages.get(atom)?.versions ?? [];
    const work: PackageWork = { atom, component, discarded: [], remove: [...(drop?.versions ?? [])], ...(drop?.left ? { left: drop.left } : {}) };
    const release = plan.version;
    const next = () => renderEbuild(component, model, { year });
    /** Local edits that cannot go along: refused, or dropped on --discard-local. */
    const cannotCarry = (version: string, why: string, diff: string, unknown = false) => {
      if (input.discardLocal) work.discarded.push({ version, diff });
      else refusals.push({ atom, version, why, diff, ...(unknown ? { unknown } : {}) });
    };
    let carriedFrom: string | undefined;
    /** --drop-old: a held package's ebuilds of its version written for older releases. */
    const heldDrops: string[] = [];

    if (entry?.action === 'keep') {
      const latest = present.filter((v) => withoutRevision(v) === entry.version).sort(compareVersions).at(-1)!;
      const { committed, regenerated, state: local } = await stateOf(atom, latest);
      const recorded = record.get(ebuildPath(atom, latest));
      // A package held at its own version whose newest ebuild is another release's
      // (7.2.4's migraphx-7.2.4 when 10.0.0 holds it at 7.2.4): this release gets its own revision.
      const elsewhere = ebuildRelease(component, latest, committed) !== release;
      // That ebuild stays for its release unless --drop-old drops the release.
      const superseded = !elsewhere || plan.dropOld;
      if (component.held && plan.dropOld) {
        for (const v of present.filter((x) => x !== latest && withoutRevision(x) === entry.version)) {
          if (ebuildRelease(component, v, readEbuild(state.dir, atom, v)) !== release) heldDrops.push(v);
        }
        work.remove.push(...heldDrops);
      }
      const changed = elsewhere || (regenerated !== undefined && (recorded !== undefined ? !sameButYear(regenerated, recorded) : local.kind !== 'none'));
      if (changed) {
        const generated = next();
        const version = nextRevision(latest);
        const diff = await unifiedDiff(recorded ?? committed, elsewhere ? generated : regenerated!, { before: ebuildPath(atom, latest), after: ebuildPath(atom, version) });
        work.entry = { ...entry, action: 'revbump', version, versions: [latest] };
        work.revbump = { replaces: latest, diff };
        if (superseded) work.remove.push(latest);
        if (local.kind === 'none') {
          work.write = { version, text: generated, generated };
        } else if (local.kind === 'edited') {
          const merged = await carryForward(local, committed, generated, { from: latest, to: version });
          if (merged.conflicts === 0) {
            work.write = { version, text: merged.text, generated };
            work.carried = { from: latest, diff: local.diff };
          } else {
            work.write = { version, text: generated, generated };
            if (superseded) cannotCarry(latest, `changed by hand, and the change conflicts with what rocm-ebuild now generates (${merged.conflicts} conflict${merged.conflicts === 1 ? '' : 's'})`, local.diff);
            else warnings.push(`${atom}-${latest} was changed by hand, and the change does not apply to ${version} (${merged.conflicts} conflict${merged.conflicts === 1 ? '' : 's'}): ${latest} stays; port the change by hand:\n${indent(local.diff)}`);
          }
        } else {
          work.write = { version, text: generated, generated };
          if (superseded) cannotCarry(latest, local.why, local.diff, true);
        }
      }
    } else if (entry?.action === 'add') {
      const generated = input.rendered.get(atom) ?? next();
      work.entry = entry;
      work.write = { version: entry.version, text: generated, generated };
      // A new version starts from the newest older one, as a maintainer copying the ebuild would.
      const source = present.filter((v) => v !== '9999' && compareVersions(withoutRevision(v), entry.version) < 0).sort(compareVersions).at(-1);
      if (source) {
        const dropped = work.remove.includes(source);
        const { committed, state: local } = await stateOf(atom, source);
        if (local.kind === 'edited') {
          const merged = await carryForward(local, committed, generated, { from: source, to: release });
          if (merged.conflicts === 0) {
            work.write.text = merged.text;
            work.carried = { from: source, diff: local.diff };
            carriedFrom = source;
          } else if (dropped) {
            cannotCarry(source, `changed by hand, and the change does not apply to ${release} (${merged.conflicts} conflict${merged.conflicts === 1 ? '' : 's'})`, local.diff);
            carriedFrom = source;
          } else {
            warnings.push(`${atom}-${source} was changed by hand, and the change does not apply to ${release} (${merged.conflicts} conflict${merged.conflicts === 1 ? '' : 's'}): ${release} is added as generated, ${source} stays; port the change by hand:\n${indent(local.diff)}`);
          }
        } else if (local.kind === 'unknown') {
          if (dropped) {
            cannotCarry(source, local.why, local.diff, true);
            carriedFrom = source;
          } else unknownSources.push(`${atom}-${source}`);
        }
      }
    }
    // Versions dropped whose changes went nowhere: a change a newer ebuild that stays already
    // has (carried by an earlier bump, and on by this one) goes nowhere lost.
    const dropping = [...(drop?.versions ?? []), ...heldDrops];
    const staying = present.filter((v) => !work.remove.includes(v) && !dropping.includes(v));
    for (const v of dropping) {
      if (v === carriedFrom) continue;
      const { committed, state: local } = await stateOf(atom, v);
      if (local.kind === 'edited') {
        const newer = [...(work.write ? [work.write.text] : []), ...staying.filter((x) => x === '9999' || compareVersions(x, v) > 0).map((x) => readEbuild(state.dir, atom, x))];
        if (await alreadyCarried(local, committed, newer)) continue;
        cannotCarry(
          v,
          drop?.left?.treeclean
            ? `changed by hand; --drop-old would remove it with the package, which left ROCm ${release}`
            : `changed by hand; --drop-old would drop it, and the change is carried to no newer ebuild`,
          local.diff,
        );
      }
      else if (local.kind === 'unknown') cannotCarry(v, local.why, local.diff, true);
    }
    if (work.write || work.remove.length > 0) works.push(work);
  }
  if (unknownSources.length > 0) {
    warnings.push(
      `no record of what rocm-ebuild generated for ${unknownSources.length === 1 ? unknownSources[0] : `${unknownSources.length} ebuilds (${unknownSources.slice(0, 3).join(', ')}${unknownSources.length > 3 ? ', …' : ''})`}, ` +
        'and they differ from what it generates now: if they were changed by hand, the new versions do not have those changes (they stay in the older ebuilds)',
    );
  }
  return { works, refusals, warnings };
}

/**
 * Whether one of `newer` already holds the change (base → committed): merged
 * onto it, the change adds nothing, or every line it adds is there and every
 * line it removes is gone.
 */
async function alreadyCarried(local: Extract<LocalState, { kind: 'edited' }>, committed: string, newer: string[]): Promise<boolean> {
  const { added, removed } = changedLines(local.diff);
  for (const text of newer) {
    const merged = await carryForward(local, committed, text, { from: 'older', to: 'newer' });
    if (merged.conflicts === 0 && sameButYear(merged.text, text)) return true;
    const lines = new Set(text.split('\n'));
    if (added.length + removed.length > 0 && added.every((l) => lines.has(l)) && removed.every((l) => !lines.has(l))) return true;
  }
  return false;
}

function indent(text: string): string {
  return text.trimEnd().replace(/^/gm, '    ');
}

/**
 * The fifth stage: every new ebuild rendered, then what the overlay holds of
 * the planned packages read against the record of what was generated:
 * revisions to bump, hand edits to carry forward, and those a bump would
 * lose, refused with the change (nothing is written).
 */
export interface HandEdits {
  works: PackageWork[];
  /** What bump could not decide alone and reports. */
  warnings: string[];
  /** The year the new ebuilds' copyright line ends with. */
  year: number;
  /** The record's commit the new record follows (undefined: none yet, or no repository). */
  recordAt: string | undefined;
}

export async function reconcileWithOverlay(o: BumpOptions, inputs: BumpInputs, read: OverlayRead, plan: Plan): Promise<HandEdits> {
  const { repo, isRepo, model } = inputs;
  const { state } = read;
  const { year } = inputs;
  const adds = plan.entries.filter((e) => e.action === 'add');
  const rendered = new Map(adds.map((e) => [e.atom, renderEbuild(e.component, model, { year })]));
  const recordAt = isRepo ? await recordTip(repo) : undefined;
  const record = isRepo ? await readRecord(repo, recordAt, recordPaths(plan, state)) : new Map<string, string>();
  const { works, refusals, warnings } = await reconcile({ plan, model, state, record, rendered, year, discardLocal: o.discardLocal ?? false });
  // A clone without the record at all (git clones branches and tags only): the way to it, as git commands.
  const noRecord = isRepo && recordAt === undefined ? missingRecordHint(inputs.dir) : undefined;
  if (refusals.length > 0) refuseLocalEdits(refusals, refusals.some((r) => r.unknown) ? noRecord : undefined);
  if (noRecord && warnings.some((w) => w.startsWith('no record of what rocm-ebuild generated'))) warnings.push(noRecord);
  return { works, warnings, year, recordAt };
}

/** Ebuilds changed by hand that this bump would lose: refused with the change, and the ways on. */
function missingRecordHint(dir: string): string {
  const c = recordRefCommands(dir);
  return (
    `this clone has no ${RECORD_REF}, the record of what rocm-ebuild generated (git clones branches and tags only); ` +
    `if the overlay was bumped in another clone, publish the record from there and fetch it here, then run again:\n` +
    `    ${c.push}\n    ${c.fetch}\n  (rocm-ebuild pr push pushes it along with the branch)`
  );
}

function refuseLocalEdits(refusals: Refusal[], noRecord?: string): never {
  const parts = refusals.map((r) => `${r.atom}-${r.version}: ${r.why}${r.diff ? `\n${r.diff.trimEnd().replace(/^/gm, '    ')}` : ''}`);
  const others = [...new Set(refusals.map((r) => r.atom))];
  throw new UserError(
    `${refusals.length === 1 ? 'an ebuild' : `${refusals.length} ebuilds`} changed by hand would be lost; nothing was written:\n${parts.map((p) => `  ${p}`).join('\n')}\n` +
      `hint: port the change to the stack manifest or by hand, then run again; or pass --discard-local to drop ${refusals.length === 1 ? 'it' : 'them'}; ` +
      `or name the other packages on the command line to bump them without ${others.join(', ')}` +
      (noRecord ? `\nhint: ${noRecord}` : ''),
    ExitCode.overlayRefused,
    { refused: refusals },
  );
}
