import type { Manifest } from '../manifest/load.js';
import { compareVersions, inRange } from '../model/version.js';
import type { CheckReport, RangeContext } from './check.js';
import { gatherReleaseNotes, replacedRelease, type ReleaseNotes } from './release-notes.js';
import { describeCounts, LEVELS, type EvidenceLevel } from '../model/evidence.js';
import { assigned, ebuildVars, unquote } from '../ebuild/vars.js';
import { parseMessage } from './message-check.js';
import { TREECLEAN_RE } from './treeclean-check.js';
import { ebuildOf, eclassOf } from './overlay-paths.js';
import { carriedVersions } from './carried-edits.js';
import type { TestReport } from './test-reports.js';
import { TEMPLATES, type TemplateName } from './templates.js';
import type { PrResult } from './types.js';
import { byCodePoint } from '../util/order.js';
import { markdownCode, markdownText, plainLine } from '../util/printable.js';
import { describeMaskedLlvmNeeds, llvmCompatSlots, maskedLlvmNeeds, type LlvmCompatOf } from '../manifest/gentoo-masks.js';

/**
 * The pull request's text, in the shape ROCm stack pull requests to ::gentoo
 * take: what the range does, the technical notes a reviewer asks about, the
 * QA summary, GPU test results, the bugs it closes, and the repository's
 * checklist. Gathered as data first (for --json), then rendered as Markdown.
 */

export interface AddedPackage {
  atom: string;
  versions: string[];
  /** Versions at the range's base (empty for a new package). */
  previous: string[];
  newPackage: boolean;
  description?: string;
}

export interface TargetChange {
  name: string;
  description: string;
  before?: string;
}

export interface BodyData {
  title: string;
  /** No commit of the range changes more than one package. */
  onePackagePerCommit: boolean;
  release?: string;
  range: { label: string; commits: number };
  packages: {
    added: AddedPackage[];
    /**
     * localChanges: versions that differed from what rocm-ebuild generates (pr check's DroppedLocalChanges);
     * carried: those of them whose dropping commit says their changes went into the ebuild it adds.
     */
    dropped: { atom: string; versions: string[]; localChanges?: string[]; carried?: string[] }[];
    /** Packages the range removes whole: left the release, with the reason their treeclean commit gives. */
    removed: { atom: string; versions: string[]; reason?: string }[];
    notAdded: { project: string; reason: string }[];
    /**
     * The release the range replaces, when it is of the same stream and leaves out some of the same
     * projects for the same reasons: those are named once, not listed again with their reasons.
     */
    notAddedBefore?: { release: string; same: string[] };
    /** Whether the release has AMD's project list (legacy releases); TheRock's releases are composed by its pins instead. */
    projectList?: boolean;
  };
  other: string[];
  /** ::gentoo: eclasses the range changes (pr check's EclassChange), called out first. */
  eclassUpdates: BodyData['notes']['eclasses'];
  notes: {
    llvm: { slots: string; ebuilds: number }[];
    /** Added versions whose LLVM_COMPAT names only slots ::gentoo's profiles mask, and the local settings that lift the mask. */
    llvmMasked?: NonNullable<ReturnType<typeof describeMaskedLlvmNeeds>> & { packages: string[] };
    targets?: { newFile: boolean; added: TargetChange[]; removed: TargetChange[]; changed: TargetChange[] };
    eclasses: { eclass: string; status: 'new' | 'changed' | 'removed'; added: number; removed: number; summaries: string[] }[];
    /** Where sources moved, the LLVM slot the replaced versions had, and each added version's evidence. */
    release: ReleaseNotes;
  };
  qa: {
    commits: number;
    ebuilds: number;
    counts: CheckReport['counts'];
    shellcheck: boolean;
    pkgcheck: string;
    findings: PrResult[];
  };
  tests?: { reports: TestReport[]; rows: { atom: string; cells: Record<string, string> }[]; dependencyFailures: string[]; notes: string[] };
  trailers: { closes: string[]; bugs: string[] };
  template: { name: TemplateName; checklist: string[]; note?: string };
}

const TARGETS_DESC = 'profiles/desc/amdgpu_targets.desc';

async function versionsAt(ctx: RangeContext, rev: string | undefined, atom: string): Promise<string[]> {
  if (!rev) return [];
  const tree = await ctx.objects.tree(`${rev}:${atom}`);
  return (tree ?? [])
    .map((e) => ebuildOf(`${atom}/${e.name}`)?.version)
    .filter((v): v is string => v !== undefined)
    .sort(compareVersions);
}

function parseDesc(text: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of (text ?? '').split('\n')) {
    const m = /^([A-Za-z0-9_+-]+)\s+-\s+(.*)$/.exec(line.trim());
    if (m) out.set(m[1]!, m[2]!);
  }
  return out;
}

/** Lines added and removed between two texts (a multiset count: order changes are not counted). */
function lineDelta(before: string, after: string): { added: number; removed: number } {
  const lines = (t: string) => (t === '' ? [] : t.replace(/\n$/, '').split('\n'));
  const count = new Map<string, number>();
  for (const l of lines(before)) count.set(l, (count.get(l) ?? 0) + 1);
  let added = 0;
  for (const l of lines(after)) {
    const n = count.get(l) ?? 0;
    if (n > 0) count.set(l, n - 1);
    else added++;
  }
  const removed = [...count.values()].reduce((a, b) => a + b, 0);
  return { added, removed };
}

export interface BodyOptions {
  manifest?: Manifest;
  template: TemplateName;
  tests?: TestReport[];
}

export async function gatherBody(ctx: RangeContext, report: CheckReport, options: BodyOptions): Promise<BodyData> {
  const { commits, objects, range } = ctx;
  // The state before the range: its base, or (for "commits on no remote branch") the first commit's parent.
  const base = range.base ?? commits[0]?.parents[0];
  const head = range.head;
  const addedVersions = new Map<string, Set<string>>();
  const droppedVersions = new Map<string, Set<string>>();
  const other: string[] = [];
  const closes: string[] = [];
  const bugs: string[] = [];
  const eclassCommits = new Map<string, string[]>();
  /** The reason each treeclean commit gives: its first paragraph, one line. */
  const treecleans = new Map<string, string>();

  for (const c of commits) {
    const parsed = parseMessage(c.message);
    const cleaned = TREECLEAN_RE.exec(parsed.summary)?.[1];
    if (cleaned) {
      const lines = parsed.body.map((b) => b.text);
      const start = lines.findIndex((l) => l.trim() !== '');
      const end = start < 0 ? -1 : lines.findIndex((l, i) => i > start && l.trim() === '');
      const first = start < 0 ? '' : lines.slice(start, end < 0 ? undefined : end).join(' ').replace(/\s+/g, ' ').trim();
      if (first) treecleans.set(cleaned, first);
    }
    for (const t of parsed.trailers) {
      if (t.tag === 'Closes' && !closes.includes(t.value)) closes.push(t.value);
      if (t.tag === 'Bug' && !bugs.includes(t.value)) bugs.push(t.value);
    }
    let packageCommit = false;
    for (const ch of c.changes) {
      const e = ebuildOf(ch.path);
      if (e && ch.status !== 'D') {
        (addedVersions.get(e.key) ?? addedVersions.set(e.key, new Set()).get(e.key)!).add(e.version);
        packageCommit = true;
      }
      const gone = ch.status === 'D' ? ebuildOf(ch.path) : ch.status === 'R' && ch.oldPath ? ebuildOf(ch.oldPath) : undefined;
      if (gone) {
        (droppedVersions.get(gone.key) ?? droppedVersions.set(gone.key, new Set()).get(gone.key)!).add(gone.version);
        packageCommit = true;
      }
      const eclass = eclassOf(ch.path);
      if (eclass) {
        const list = eclassCommits.get(eclass) ?? [];
        if (!list.includes(parsed.summary)) list.push(parsed.summary);
        eclassCommits.set(eclass, list);
      }
    }
    if (!packageCommit && parsed.summary) other.push(parsed.summary);
  }

  // Versions as they stand at the end: added ones still there, dropped ones gone.
  const added: AddedPackage[] = [];
  for (const [atom, set] of addedVersions) {
    const now = new Set(await versionsAt(ctx, head, atom));
    const versions = [...set].filter((v) => now.has(v)).sort(compareVersions);
    if (versions.length === 0) continue;
    const previous = await versionsAt(ctx, base, atom);
    const newVersions = versions.filter((v) => !previous.includes(v));
    if (newVersions.length === 0) continue;
    const newPackage = previous.length === 0;
    let description: string | undefined;
    if (newPackage) {
      const pn = atom.split('/')[1]!;
      const text = await objects.text(`${head}:${atom}/${pn}-${newVersions.at(-1)!}.ebuild`);
      const d = text !== undefined ? assigned(await ebuildVars(text), 'DESCRIPTION') : undefined;
      if (d) description = unquote(d);
    }
    added.push({ atom, versions: newVersions, previous, newPackage, ...(description ? { description } : {}) });
  }
  const dropped: BodyData['packages']['dropped'] = [];
  const removed: BodyData['packages']['removed'] = [];
  for (const [atom, set] of droppedVersions) {
    const now = new Set(await versionsAt(ctx, head, atom));
    if (now.size === 0 && (await objects.tree(`${head}:${atom}`)) === undefined) {
      // The whole package went: a package that left the release, listed with its reason.
      const versions = await versionsAt(ctx, base, atom);
      if (versions.length > 0) {
        const reason = treecleans.get(atom);
        removed.push({ atom, versions, ...(reason ? { reason } : {}) });
        continue;
      }
    }
    const previous = new Set(await versionsAt(ctx, base, atom));
    // Net: a version the range both adds and drops was never there before it, and is not dropped.
    const versions = [...set].filter((v) => !now.has(v) && previous.has(v)).sort(compareVersions);
    const [category, pn] = atom.split('/');
    const localResult = (v: string) => report.results.find((r) => r.keyword === 'DroppedLocalChanges' && r.category === category && r.package === pn && r.version === v);
    const local = versions.filter((v) => localResult(v) !== undefined);
    const carried = local.filter((v) => {
      const message = commits.find((c) => c.sha === localResult(v)!.commit)?.message;
      return message !== undefined && carriedVersions(message).includes(v);
    });
    if (versions.length > 0) dropped.push({ atom, versions, ...(local.length ? { localChanges: local } : {}), ...(carried.length ? { carried } : {}) });
  }
  added.sort((a, b) => byCodePoint(a.atom, b.atom));
  dropped.sort((a, b) => byCodePoint(a.atom, b.atom));
  removed.sort((a, b) => byCodePoint(a.atom, b.atom));

  // The release: the version most added packages move to.
  const tally = new Map<string, number>();
  for (const a of added) for (const v of a.versions) tally.set(v.replace(/-r\d+$/, ''), (tally.get(v.replace(/-r\d+$/, '')) ?? 0) + 1);
  const [top, topCount] = [...tally].sort((a, b) => b[1] - a[1] || compareVersions(b[0], a[0]))[0] ?? ['', 0];
  const release = topCount >= 4 && topCount * 2 > added.length ? top : undefined;

  const notAdded =
    release && options.manifest?.stack.releases[release]
      ? (options.manifest.stack.excluded ?? [])
          .filter((x) => inRange(release, x.releases))
          .map((x) => ({ project: x.project, reason: x.reason.replace(/\s+/g, ' ').trim() }))
          // A project whose package the range removes is said there, with the same reason.
          .filter((x) => !removed.some((r) => r.reason?.includes(x.reason)))
      : [];

  // Technical notes: LLVM slots of the ebuilds as they end up, targets, eclasses.
  const slots = new Map<string, number>();
  const compatOf: LlvmCompatOf[] = [];
  for (const a of added) {
    const pn = a.atom.split('/')[1]!;
    for (const v of a.versions) {
      const text = await objects.text(`${head}:${a.atom}/${pn}-${v}.ebuild`);
      if (text === undefined) continue;
      const compat = (await ebuildVars(text)).assignments.filter((x) => x.name === 'LLVM_COMPAT').at(-1);
      if (!compat) continue;
      const value = compat.raw.replace(/^\(\s*|\s*\)$/g, '').split(/\s+/).filter(Boolean).join(' ');
      slots.set(value, (slots.get(value) ?? 0) + 1);
      compatOf.push({ atom: a.atom, version: v, slots: llvmCompatSlots(compat.raw) });
    }
  }
  const llvm = [...slots].map(([s, ebuilds]) => ({ slots: s, ebuilds })).sort((a, b) => b.ebuilds - a.ebuilds);
  const maskedNeeds = maskedLlvmNeeds(compatOf);
  const masked = describeMaskedLlvmNeeds(maskedNeeds);
  const llvmMasked = masked && { ...masked, packages: [...new Set(maskedNeeds.map((n) => n.atom))] };

  let targets: BodyData['notes']['targets'];
  const descBefore = base ? await objects.text(`${base}:${TARGETS_DESC}`) : undefined;
  const descAfter = await objects.text(`${head}:${TARGETS_DESC}`);
  if (descBefore !== descAfter) {
    const b = parseDesc(descBefore);
    const a = parseDesc(descAfter);
    targets = {
      newFile: descBefore === undefined,
      added: [...a].filter(([k]) => !b.has(k)).map(([name, description]) => ({ name, description })),
      removed: [...b].filter(([k]) => !a.has(k)).map(([name, description]) => ({ name, description })),
      changed: [...a].filter(([k, v]) => b.has(k) && b.get(k) !== v).map(([name, description]) => ({ name, description, before: b.get(name)! })),
    };
  }
  const eclasses: BodyData['notes']['eclasses'] = [];
  for (const [eclass, summaries] of eclassCommits) {
    const before = base ? await objects.text(`${base}:eclass/${eclass}.eclass`) : undefined;
    const after = await objects.text(`${head}:eclass/${eclass}.eclass`);
    if (before === after) continue;
    const delta = lineDelta(before ?? '', after ?? '');
    eclasses.push({ eclass, status: before === undefined ? 'new' : after === undefined ? 'removed' : 'changed', ...delta, summaries });
  }

  const releaseNotes = await gatherReleaseNotes(ctx, base, added, llvm, options.manifest, release ? { version: release, heldAt: (atom) => versionsAt(ctx, head, atom) } : undefined);
  const notAddedBefore = release && options.manifest ? sameExclusions(options.manifest, release, replacedRelease(added), notAdded, releaseNotes) : undefined;
  const tests = options.tests?.length ? testTable(options.tests, release) : undefined;
  const pk = report.tools.pkgcheck;
  const template = TEMPLATES[options.template];
  return {
    // The title reaches terminals and gh's --title: no control or bidirectional characters from commit text.
    title: plainLine(title(added, dropped, commits.map((c) => c.message.split('\n', 1)[0] ?? ''), release)),
    onePackagePerCommit: !report.results.some((r) => r.keyword === 'MultiplePackagesCommit'),
    ...(release ? { release } : {}),
    range: { label: range.label, commits: commits.length },
    packages: { added, dropped, removed, notAdded, ...(notAddedBefore ? { notAddedBefore } : {}), ...(release && options.manifest?.stack.releases[release] ? { projectList: options.manifest.stack.projects?.[release] !== undefined } : {}) },
    other,
    eclassUpdates: eclasses.filter((e) => report.results.some((r) => r.keyword === 'EclassChange' && r.eclass === `${e.eclass}.eclass`)),
    notes: { llvm, ...(llvmMasked ? { llvmMasked } : {}), ...(targets ? { targets } : {}), eclasses, release: releaseNotes },
    qa: {
      commits: report.range.commits,
      ebuilds: report.ebuildsLinted,
      counts: report.counts,
      shellcheck: report.tools.shellcheck,
      pkgcheck: pk.ran ? `pkgcheck ran too (${pk.results} result${pk.results === 1 ? '' : 's'} folded in)` : (pk.reason ?? 'pkgcheck did not run'),
      findings: report.results.filter((r) => r.level === 'error' || r.level === 'warning'),
    },
    ...(tests ? { tests } : {}),
    trailers: { closes, bugs },
    template: { name: template.name, checklist: template.checklist, ...(template.note ? { note: template.note } : {}) },
  };
}

/**
 * The projects left out of the release for the same reasons as out of the one the range replaces (same
 * stream, both known to the manifest): a bump from 7.2.3 to 7.2.4 need not list 18 of them again with their
 * reasons. A change of stream (TheRock) lists everything; nothing in common, nothing to fold.
 */
function sameExclusions(
  manifest: Manifest,
  release: string,
  replaced: string | undefined,
  notAdded: BodyData['packages']['notAdded'],
  notes: ReleaseNotes,
): BodyData['packages']['notAddedBefore'] {
  if (!replaced || replaced === release || notes.stream || !manifest.stack.releases[replaced]) return undefined;
  const before = new Map(
    (manifest.stack.excluded ?? []).filter((x) => inRange(replaced, x.releases)).map((x) => [x.project, x.reason.replace(/\s+/g, ' ').trim()]),
  );
  const same = notAdded.filter((x) => before.get(x.project) === x.reason).map((x) => x.project);
  return same.length ? { release: replaced, same } : undefined;
}

function title(added: AddedPackage[], dropped: { atom: string; versions: string[] }[], summaries: string[], release: string | undefined): string {
  if (release) {
    const libraries = added.every((a) => a.atom.startsWith('sci-libs/'));
    const drops = [...new Set(dropped.flatMap((d) => d.versions.map((v) => v.replace(/-r\d+$/, ''))))].sort(compareVersions);
    return `ROCm ${release}${libraries ? ' libraries' : ''}${drops.length ? `, drop ${drops.join(', ')}` : ''}`;
  }
  if (summaries.length === 1) return summaries[0]!;
  // A few commits: list them, sharing the action when they share one ("a, b: add 6.2.2").
  const parts = summaries.map((s) => /^([^:]+): (.*)$/.exec(s)).filter((m): m is RegExpExecArray => m !== null);
  if (parts.length === summaries.length && parts.length > 0 && parts.every((p) => p[2] === parts[0]![2])) {
    return `${parts.map((p) => p[1]).join(', ')}: ${parts[0]![2]}`;
  }
  return summaries.join('; ');
}

function cell(a: TestReport['atoms'][number] | undefined): string {
  if (!a) return '—';
  const c = a.testCounts;
  const why = [a.failureClass, a.phase !== a.failureClass ? `${a.phase} phase` : undefined].filter(Boolean).join(', ');
  if (a.result === 'passed') return `passed${c ? ` (${c.total} tests${c.skipped ? `, ${c.skipped} skipped` : ''})` : ''}`;
  if (a.result === 'failed') return `**failed** (${why || 'unknown'})${c ? `: ${c.failed} of ${c.total} tests` : ''}`;
  return `${a.result === 'not-run' ? 'not run' : 'skipped'}${a.failureClass ? ` (${a.failureClass})` : ''}`;
}

function testTable(reports: TestReport[], release: string | undefined): NonNullable<BodyData['tests']> {
  const atoms = [...new Set(reports.flatMap((r) => r.atoms.filter((a) => a.tested).map((a) => a.atom)))].sort();
  const rows = atoms.map((atom) => ({ atom, cells: Object.fromEntries(reports.map((r) => [r.gfx, cell(r.atoms.find((a) => a.atom === atom && a.tested))])) }));
  const dependencyFailures = reports.flatMap((r) => r.atoms.filter((a) => !a.tested && a.result === 'failed').map((a) => `${a.atom} failed on ${r.gfx} (${a.failureClass ?? 'unknown'}, ${a.phase} phase)`));
  const notes = release ? reports.filter((r) => r.release !== release).map((r) => `the ${r.gfx} report is for ROCm ${r.release}, not ${release}`) : [];
  return { reports, rows, dependencyFailures, notes };
}

/** A URL as an autolink, when it is one; escaped text otherwise. */
function mdUrl(url: string): string {
  return /^https?:\/\/[^\s<>"\\`]+$/.test(url) ? `<${url}>` : markdownText(url);
}

function duration(seconds: number): string {
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

/** "38 packages moved from their own repository's tag archive to a ROCm/rocm-libraries release asset: …", one line per kind of move. */
function sourceMoveNotes(moves: ReleaseNotes['sourceMoves']): string[] {
  const byTo = new Map<string, ReleaseNotes['sourceMoves']>();
  for (const m of moves) byTo.set(m.to, [...(byTo.get(m.to) ?? []), m]);
  return [...byTo].map(([to, list]) => {
    const ownRepo = list.every((m) => m.from.endsWith(' tag archive') && m.from.split('/')[1]!.split(' ')[0]!.toLowerCase() === m.atom.split('/')[1]!.toLowerCase());
    const from = ownRepo ? "their own repository's tag archives" : [...new Set(list.map((m) => m.from))].map(markdownText).join(', ');
    return `Sources: ${list.length} package${list.length === 1 ? '' : 's'} moved from ${from} to ${markdownText(to)}s: ${list.map((m) => markdownCode(m.atom)).join(', ')}.`;
  });
}

/** How far each added version's facts were checked, weakest first, folded so the list does not bury the rest. */
function evidenceSection(list: ReleaseNotes['evidence']): string[] {
  const counts = Object.fromEntries(LEVELS.map((l) => [l, list.filter((e) => e.level === l).length])) as Record<EvidenceLevel, number>;
  const out = ['', '### Evidence', '', `How the facts behind each added version were established (${describeCounts(counts)}): ${markdownCode('tag')} read at the upstream tag, ${markdownCode('peer')} agrees with the named packager's recipe of the same version, ${markdownCode('pin')} sources as TheRock pins them, ${markdownCode('none')} not checked.`, '', '<details><summary>Per package</summary>', ''];
  const sorted = [...list].sort((a, b) => LEVELS.indexOf(a.level) - LEVELS.indexOf(b.level) || (a.atom < b.atom ? -1 : a.atom > b.atom ? 1 : 0));
  for (const e of sorted) out.push(`- ${markdownCode(`${e.atom}-${e.version}`)}: ${markdownText(e.text)}`);
  out.push('', '</details>');
  return out;
}

export function renderBody(d: BodyData): string {
  const out: string[] = [];
  const { added, dropped, removed, notAdded } = d.packages;
  const fresh = added.filter((a) => a.newPackage);
  const bumps = added.filter((a) => !a.newPackage);
  const what: string[] = [];
  if (fresh.length) what.push(`adds ${fresh.length} new package${fresh.length === 1 ? '' : 's'}`);
  if (bumps.length) what.push(`bumps ${bumps.length} package${bumps.length === 1 ? '' : 's'}`);
  if (dropped.length) what.push(`drops old versions of ${dropped.length} package${dropped.length === 1 ? '' : 's'}`);
  if (removed.length) what.push(`removes ${removed.length} package${removed.length === 1 ? '' : 's'}${d.release ? ` that left ROCm ${d.release}` : ''}`);
  const lead = d.release ? `ROCm ${d.release}: this pull request` : 'This pull request';
  out.push(`${lead} ${what.length ? what.join(', ') : 'changes no package'} in ${d.range.commits} commit${d.range.commits === 1 ? '' : 's'}${d.onePackagePerCommit && added.length + dropped.length + removed.length > 1 ? ', one package per commit' : ''}.`);
  for (const e of d.eclassUpdates) {
    out.push(
      '',
      `**Eclass change:** ${markdownCode(`${e.eclass}.eclass`)} is ${e.status === 'new' ? 'added' : e.status === 'removed' ? 'removed' : 'changed'} (${markdownText(e.summaries.join('; '))}). ` +
        'It affects every ebuild in ::gentoo that inherits it: it is a commit of its own, and goes to the gentoo-dev mailing list for review before this is merged.',
    );
  }

  if (fresh.length) {
    out.push('', `### New packages (${fresh.length})`, '', '| package | version | what it is |', '| --- | --- | --- |');
    for (const a of fresh) out.push(`| ${markdownCode(a.atom)} | ${a.versions.map(markdownText).join(', ')} | ${a.description ? markdownText(a.description) : ''} |`);
  }
  if (bumps.length) {
    out.push('', `### Version bumps (${bumps.length})`, '', '| package | from | to |', '| --- | --- | --- |');
    for (const a of bumps) out.push(`| ${markdownCode(a.atom)} | ${a.previous.map(markdownText).join(', ')} | ${a.versions.map(markdownText).join(', ')} |`);
  }
  if (dropped.length) {
    out.push('', `### Dropped versions (${dropped.length})`, '');
    for (const x of dropped) {
      const carried = x.carried ?? [];
      const lost = (x.localChanges ?? []).filter((v) => !carried.includes(v));
      const notes = [
        ...(lost.length ? [`**changed by hand:** ${lost.map(markdownText).join(', ')} differed from what rocm-ebuild generates; check the change went along`] : []),
        ...(carried.length ? [`changed by hand: ${carried.map(markdownText).join(', ')}; the change is carried into the new version, as its commit says`] : []),
      ];
      const local = notes.length ? ` (${notes.join('; ')})` : '';
      out.push(`- ${markdownCode(x.atom)}: ${x.versions.map(markdownText).join(', ')}${local}`);
    }
  }
  if (removed.length) {
    out.push('', `### Removed packages (${removed.length})`, '', 'Packages removed whole (treeclean), with the reason their commit gives:', '');
    for (const x of removed) {
      const why = x.reason ? `: ${markdownText(x.reason)}` : '';
      out.push(`- ${markdownCode(x.atom)} (${x.versions.map(markdownText).join(', ')})${why}`);
    }
  }
  if (notAdded.length) {
    const release = markdownText(d.release ?? '');
    // A TheRock release has no AMD project list: the exclusions are the stack's own.
    const intro = d.packages.projectList === false ? `Projects left out of ROCm ${release} on purpose:` : `Projects of AMD's ROCm ${release} release left out on purpose:`;
    out.push('', `### Not packaged (${notAdded.length})`, '', intro, '');
    const before = d.packages.notAddedBefore;
    const same = new Set(before?.same ?? []);
    for (const x of notAdded) if (!same.has(x.project)) out.push(`- **${markdownText(x.project)}**: ${markdownText(x.reason)}`);
    if (before && same.size) {
      const names = before.same.map((p) => markdownText(p)).join(', ');
      out.push(`- ${same.size === notAdded.length ? 'All' : `${same.size} more`} as in ROCm ${markdownText(before.release)}, for the same reasons: ${names}.`);
    }
  }
  if (d.other.length) {
    out.push('', '### Other commits', '');
    for (const s of d.other) out.push(`- ${markdownText(s)}`);
  }

  const notes: string[] = [];
  const r = d.notes.release;
  const was = r.llvmBefore.length ? ` (the versions they replace had ${r.llvmBefore.map((l) => markdownCode(`( ${l.slots} )`)).join(', ')})` : '';
  for (const l of d.notes.llvm) notes.push(`LLVM: ${markdownCode(`LLVM_COMPAT=( ${l.slots} )`)} in ${l.ebuilds} ebuild${l.ebuilds === 1 ? '' : 's'}${was}: Gentoo's LLVM/clang, not AMD's fork.`);
  const m = d.notes.llvmMasked;
  if (m) {
    const lines = [...m.settings.perPackage.lines.map((l) => `  ${l}`)];
    notes.push(
      `Masked LLVM slot: ${markdownText(m.summary)} To install ${m.packages.length === 1 ? 'it' : 'them'}, add to ${markdownCode(m.settings.perPackage.file)}:\n\n  \`\`\`\n${lines.map((l) => `  ${plainLine(l.trim())}`).join('\n')}\n  \`\`\`\n\n  or ${m.settings.everywhere.lines.map(markdownCode).join(' ')} to ${markdownCode(m.settings.everywhere.file)} for every package.`,
    );
  }
  if (r.stream) {
    notes.push(
      `Release stream: ${markdownText(r.stream.label)} (${markdownCode(r.stream.tag)} for ${markdownText(r.stream.release)}); the versions replaced came from the ${markdownText(r.stream.from.label)} stream (${markdownCode(r.stream.from.tag)}).`,
    );
  }
  if (r.left.length) {
    notes.push(
      `Not part of ROCm ${markdownText(d.release ?? '')} any more, kept here at their old versions (no package of ${markdownText(d.release ?? '')} depends on them): ${r.left.map((x) => `${markdownCode(x.atom)} ${x.versions.map(markdownText).join(', ')}`).join(', ')}.`,
    );
  }
  notes.push(...sourceMoveNotes(r.sourceMoves));
  if (r.held.length) {
    const slots = [...new Set(r.held.map((h) => h.slot))].map((s) => markdownCode(`SLOT="${s}"`)).join(', ');
    notes.push(
      `At their own version (${r.held.length}): ROCm ${markdownText(d.release ?? '')} holds ${r.held.length === 1 ? 'this package' : 'these packages'} at upstream's last release, built against its libraries with the release's sub-slot (${slots}): ` +
        `${r.held.map((h) => `${markdownCode(h.atom)} ${h.versions.map(markdownText).join(', ')}${h.reason ? ` (${markdownText(h.reason)})` : ''}`).join('; ')}.`,
    );
  }
  const t = d.notes.targets;
  if (t) {
    if (t.newFile) notes.push(`GPU targets: ${markdownCode('profiles/desc/amdgpu_targets.desc')} added with ${t.added.length} targets (${t.added.map((x) => markdownText(x.name)).join(', ')}).`);
    else {
      if (t.added.length) notes.push(`GPU targets added: ${t.added.map((x) => `${markdownCode(x.name)} (${markdownText(x.description)})`).join(', ')}.`);
      if (t.removed.length) notes.push(`GPU targets removed: ${t.removed.map((x) => markdownCode(x.name)).join(', ')}.`);
      if (t.changed.length) notes.push(`GPU target descriptions changed: ${t.changed.map((x) => markdownCode(x.name)).join(', ')}.`);
    }
  }
  for (const e of d.notes.eclasses) {
    const prefix = `${e.eclass}.eclass: `;
    const said = e.summaries.map((s) => (s.startsWith(prefix) ? s.slice(prefix.length) : s)).filter((s) => !(e.status === 'new' && s === 'new eclass'));
    const size = e.status === 'new' ? `new eclass, ${e.added} lines` : e.status === 'removed' ? 'removed' : `changed, +${e.added} −${e.removed} lines`;
    notes.push(`${markdownCode(`${e.eclass}.eclass`)}: ${size}${said.length ? `: ${said.map(markdownText).join('; ')}` : ''}.`);
  }
  if (notes.length) out.push('', '### Technical notes', '', ...notes.map((n) => `- ${n}`));
  if (r.evidence.length) out.push(...evidenceSection(r.evidence));

  const q = d.qa;
  out.push(
    '',
    '### QA',
    '',
    `\`rocm-ebuild pr check\`: ${q.commits} commit${q.commits === 1 ? '' : 's'}, ${q.ebuilds} ebuild${q.ebuilds === 1 ? '' : 's'} (rocm-ebuild's checks, \`bash -n\`${q.shellcheck ? ', shellcheck' : ''}): ` +
      `${q.counts.error} error${q.counts.error === 1 ? '' : 's'}, ${q.counts.warning} warning${q.counts.warning === 1 ? '' : 's'}, ${q.counts.style} style, ${q.counts.info} info. ${markdownText(q.pkgcheck.replace(/: only rocm-ebuild's checks ran$/, ''))}.`,
  );
  if (q.findings.length) {
    out.push('', '<details><summary>Errors and warnings</summary>', '');
    for (const r of q.findings.slice(0, 100)) {
      const where = r.category && r.package ? `${r.category}/${r.package}${r.version ? `-${r.version}` : ''}` : r.commit ? `commit ${r.commit.slice(0, 12)}` : 'repository';
      out.push(`- ${markdownCode(where)} **${markdownText(r.keyword)}** (${r.level}${r.sources.includes('pkgcheck') ? ', pkgcheck' : ''}): ${markdownText(r.message)}`);
    }
    if (q.findings.length > 100) out.push(`- … and ${q.findings.length - 100} more`);
    out.push('', '</details>');
  }

  if (!d.tests) {
    // Said, not left out: a reviewer must not read the absence of results as a pass.
    out.push('', '### GPU tests', '', 'Not run for this pull request: the ebuilds passed the checks above, but were not built and tested on a GPU with `rocm-ebuild test`.');
  } else {
    const gfx = d.tests.reports.map((r) => r.gfx);
    out.push('', '### GPU tests', '', `| package | ${gfx.map(markdownCode).join(' | ')} |`, `| --- | ${gfx.map(() => '---').join(' | ')} |`);
    for (const row of d.tests.rows) out.push(`| ${markdownCode(row.atom)} | ${gfx.map((g) => row.cells[g] ?? '—').join(' | ')} |`);
    out.push('');
    for (const r of d.tests.reports) {
      const device = r.device?.name ? `${markdownText(r.device.name)}${r.device.computeUnits ? `, ${r.device.computeUnits} CUs` : ''}` : 'one GPU';
      const secs = (Date.parse(r.ended) - Date.parse(r.started)) / 1000;
      out.push(`- ${markdownCode(r.gfx)} (${device}): ${r.result === 'passed' ? 'passed' : `**${r.result}**`}, ${r.tests} tests, ROCm ${markdownText(r.release)}, ${r.engine.name === 'none' ? 'in place in the CI job' : `${markdownText(r.engine.name)}${r.engine.version ? ` ${markdownText(r.engine.version)}` : ''}`}, image ${markdownCode(r.image)}, ${Number.isFinite(secs) && secs >= 0 ? duration(secs) : 'duration unknown'}`);
    }
    for (const f of d.tests.dependencyFailures) out.push(`- dependency: ${markdownText(f)}`);
    for (const n of d.tests.notes) out.push(`- note: ${markdownText(n)}`);
  }

  if (d.trailers.closes.length || d.trailers.bugs.length) {
    out.push('', '### Bugs', '');
    for (const u of d.trailers.closes) out.push(`- Closes: ${mdUrl(u)}`);
    for (const u of d.trailers.bugs) out.push(`- Bug: ${mdUrl(u)}`);
  }

  if (d.template.checklist.length) {
    out.push('', '---', '', 'For the contributor to tick, each box that holds:', '');
    for (const item of d.template.checklist) out.push(`- [ ] ${item}`);
    if (d.template.note) out.push('', d.template.note);
  }
  return `${out.join('\n')}\n`;
}
