import { ManifestSyntaxError, parseManifest, sameEntry } from '../distfiles/manifest-file.js';
import type { ManifestEntry } from '../distfiles/types.js';
import { assigned, ebuildVars, rdependText, type EbuildVars } from '../ebuild/vars.js';
import type { ObjectReader } from './git-read.js';
import { ours } from './keywords.js';
import { touched } from './message-check.js';
import { ebuildOf, type EbuildPath } from './overlay-paths.js';
import { srcUriEntries, Unevaluable } from '../ebuild/src-uri.js';
import type { CommitInfo, PathChange, PrResult } from './types.js';

/**
 * What pkgcheck's GitPkgCommitsCheck and its Manifest checks say about the
 * packages one commit changes, each commit compared with its parent (so a
 * finding names the commit that caused it).
 */

/** Categories whose new ebuilds may be committed stable (pkgcheck's list). */
const DIRECT_STABLE_OK = new Set(['acct-user', 'acct-group', 'sec-keys', 'virtual']);

interface Updates {
  moves: [string, string][];
  slotmoves: { atom: string; from: string; to: string }[];
}

export class PackageChecker {
  private readonly vars = new Map<string, Promise<EbuildVars>>();
  private readonly updates = new Map<string, Promise<Updates>>();

  constructor(private readonly objects: ObjectReader) {}

  /** The parsed globals of an ebuild blob (cached: a blob is parsed once per run). */
  ebuild(blob: string): Promise<EbuildVars | undefined> {
    let hit = this.vars.get(blob);
    if (!hit) {
      hit = this.objects.text(blob).then((t) => ebuildVars(t ?? ''));
      this.vars.set(blob, hit);
    }
    return hit;
  }

  /** profiles/updates of a commit: package and slot moves. */
  private async updatesAt(sha: string): Promise<Updates> {
    const tree = await this.objects.read(`${sha}:profiles/updates`);
    const key = tree ? `${sha}:profiles/updates` : 'none';
    let hit = this.updates.get(key);
    if (!hit) {
      hit = (async () => {
        const u: Updates = { moves: [], slotmoves: [] };
        for (const e of (await this.objects.tree(`${sha}:profiles/updates`)) ?? []) {
          if (e.type !== 'blob') continue;
          for (const line of ((await this.objects.text(e.id)) ?? '').split('\n')) {
            const w = line.trim().split(/\s+/);
            if (w[0] === 'move' && w.length === 3) u.moves.push([w[1]!, w[2]!]);
            if (w[0] === 'slotmove' && w.length === 4) u.slotmoves.push({ atom: w[1]!, from: w[2]!, to: w[3]! });
          }
        }
        return u;
      })();
      this.updates.set(key, hit);
    }
    return hit;
  }

  /**
   * Findings for one (non-merge) commit. `addedInRange` holds the ebuild
   * paths earlier commits of the range added: changing those later is not a
   * change to a published ebuild, so it needs no revision bump.
   */
  async check(c: CommitInfo, addedInRange: ReadonlySet<string>): Promise<PrResult[]> {
    const out: PrResult[] = [];
    const year = Number(c.committer.date.slice(0, 4));
    const at = { commit: c.sha };
    const where = (e: EbuildPath) => ({ ...at, category: e.category, package: e.pn, version: e.version, file: `${e.key}/${e.rest}` });
    const changedEbuilds: { change: PathChange; e: EbuildPath; vars: EbuildVars }[] = [];

    for (const change of c.changes) {
      const e = ebuildOf(change.path);
      if (!e || change.status === 'D' || change.newMode === '120000' || change.newMode === '160000') continue;
      const vars = (await this.ebuild(change.newBlob))!;
      changedEbuilds.push({ change, e, vars });
      if (vars.copyright && vars.copyright.end !== year) {
        out.push(ours('EbuildIncorrectCopyright', `incorrect copyright year ${vars.copyright.end}: ${JSON.stringify(vars.copyright.line)} (the commit is from ${year})`, where(e)));
      }
      const added = change.status === 'A' || change.status === 'C' || change.status === 'R';
      if (added && !DIRECT_STABLE_OK.has(e.category)) {
        const stable = (assigned(vars, 'KEYWORDS') ?? '').split(/\s+/).filter((k) => k && !/^[~-]/.test(k) && k !== '*');
        if (stable.length > 0) out.push(ours('DirectStableKeywords', `directly committed with stable keyword${stable.length > 1 ? 's' : ''}: [ ${stable.sort().join(', ')} ]`, where(e)));
      }
      if (change.status === 'R' && change.oldPath) {
        const old = ebuildOf(change.oldPath);
        if (old && old.key !== e.key && !(await this.updatesAt(c.sha)).moves.some(([a, b]) => a === old.key && b === e.key)) {
          out.push(ours('MissingMove', `renamed package: ${old.key} -> ${e.key} without "move ${old.key} ${e.key}" in profiles/updates`, where(e)));
        }
      }
      if ((change.status === 'M' || change.status === 'T') && change.oldMode !== '120000' && !addedInRange.has(change.path)) {
        const before = await this.ebuild(change.oldBlob);
        if (!before) continue;
        if (rdependText(before) !== rdependText(vars)) out.push(ours('RdependChange', 'RDEPEND modified without revbump', where(e)));
        if ((assigned(before, 'EAPI') ?? '0') !== (assigned(vars, 'EAPI') ?? '0')) {
          out.push(ours('EAPIChangeWithoutRevbump', `changed EAPI without new revision (${assigned(before, 'EAPI') ?? '0'} -> ${assigned(vars, 'EAPI') ?? '0'})`, where(e)));
        }
        // The slot, not the sub-slot: only a slot change needs a slotmove.
        const [from, to] = [(assigned(before, 'SLOT') ?? '').split('/')[0]!, (assigned(vars, 'SLOT') ?? '').split('/')[0]!];
        if (from !== to && !(await this.updatesAt(c.sha)).slotmoves.some((s) => s.atom.replace(/^[<>=~]+/, '').startsWith(e.key) && s.from === from && s.to === to)) {
          out.push(ours('MissingSlotmove', `changed SLOT: ${from} -> ${to}`, where(e)));
        }
      }
    }

    for (const [category, pns] of touched(c).packages) {
      for (const pn of pns) out.push(...(await this.manifestChecks(c, category, pn, changedEbuilds)));
    }
    return out;
  }

  private async manifestChecks(
    c: CommitInfo,
    category: string,
    pn: string,
    changedEbuilds: { change: PathChange; e: EbuildPath; vars: EbuildVars }[],
  ): Promise<PrResult[]> {
    const out: PrResult[] = [];
    const key = `${category}/${pn}`;
    const at = { commit: c.sha, category, package: pn };
    const tree = await this.objects.tree(`${c.sha}:${key}`);
    if (!tree) return out; // the package is gone
    const manifestPath = `${key}/Manifest`;
    const manifestChange = c.changes.find((ch) => ch.path === manifestPath && ch.status !== 'D');
    const text = await this.objects.text(`${c.sha}:${manifestPath}`);
    let entries: ManifestEntry[] = [];
    if (text !== undefined) {
      try {
        entries = parseManifest(text, manifestPath);
      } catch (err) {
        if (!(err instanceof ManifestSyntaxError)) throw err;
        out.push(ours('InvalidManifest', err.message, { ...at, file: manifestPath }));
        return out;
      }
    }
    if (manifestChange && c.parents[0]) {
      const beforeText = await this.objects.text(`${c.parents[0]}:${manifestChange.oldPath ?? manifestPath}`);
      let before: ManifestEntry[] = [];
      try {
        before = beforeText === undefined ? [] : parseManifest(beforeText, manifestPath);
      } catch {
        before = [];
      }
      for (const old of before) {
        const now = entries.find((x) => x.name === old.name);
        if (now && !sameEntry(old, now)) {
          const what = old.size !== now.size ? `size ${old.size} -> ${now.size}` : 'same size, other hashes';
          out.push(ours('SrcUriChecksumChange', `${JSON.stringify(old.name)} has different checksums than before (${what}): a re-rolled upstream archive needs a new distfile name`, { ...at, file: manifestPath }));
        }
      }
    }
    const names = new Set(entries.map((x) => x.name));
    for (const { e, vars } of changedEbuilds.filter((x) => x.e.key === key)) {
      try {
        const missing = [...new Set(srcUriEntries(vars, e).map((s) => s.name))].filter((n) => !names.has(n)).sort();
        if (missing.length > 0) {
          out.push(ours('MissingManifest', `distfile${missing.length > 1 ? 's' : ''} missing from Manifest: [ ${missing.join(', ')} ]`, { ...at, version: e.version, file: `${key}/${e.rest}` }));
        }
      } catch (err) {
        if (!(err instanceof Unevaluable)) throw err;
        out.push(ours('UnevaluatedSrcUri', `SRC_URI uses ${err.what}: its DIST lines were not checked`, { ...at, version: e.version, file: `${key}/${e.rest}` }));
      }
    }
    const touchedHere = c.changes.some((ch) => ch.path.startsWith(`${key}/`) && (ch.path === manifestPath || ebuildOf(ch.path)));
    if (touchedHere && entries.length > 0) {
      const needed = new Set<string>();
      for (const entry of tree) {
        const e = entry.type === 'blob' ? ebuildOf(`${key}/${entry.name}`) : undefined;
        if (!e) continue;
        if (entry.mode === '120000') continue;
        const vars = await this.ebuild(entry.id);
        try {
          for (const s of srcUriEntries(vars!, e)) needed.add(s.name);
        } catch (err) {
          if (err instanceof Unevaluable) return out; // cannot tell what is unused
          throw err;
        }
      }
      const unknown = entries.map((x) => x.name).filter((n) => !needed.has(n));
      if (unknown.length > 0) {
        out.push(ours('UnknownManifest', `unknown distfile${unknown.length > 1 ? 's' : ''} in Manifest: [ ${unknown.join(', ')} ]`, { ...at, file: manifestPath }));
      }
    }
    return out;
  }
}
