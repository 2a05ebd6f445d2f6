import { releaseOfEbuild } from '../model/held.js';
import { bashSyntaxAll, hasTool, shellcheckAll } from '../lint/external-tools.js';
import { lintComponent } from '../lint/component.js';
import { lintEbuild, type LintResult } from '../lint/index.js';
import type { Manifest } from '../manifest/load.js';
import { releaseModel, resolveStack, type StackModel } from '../model/resolve.js';
import { loadPolicies } from '../model/targets.js';
import type { ObjectReader } from './git-read.js';
import { ours } from './keywords.js';
import { ebuildOf, type EbuildPath } from './overlay-paths.js';
import type { CommitInfo, PrResult } from './types.js';

/**
 * `lint` over every ebuild the range adds or changes, as each commit left
 * it: our pkgcheck-style checks (with the stack manifest's knowledge of
 * rocm.eclass targets and accepted findings when the package and release
 * are in it), then real `bash -n` and shellcheck, each run once for all of
 * them. A blob committed twice is checked once.
 */

export interface LintTarget {
  commit: CommitInfo;
  e: EbuildPath;
  blob: string;
}

export interface RangeLint {
  results: PrResult[];
  ebuilds: number;
  shellcheck: boolean;
}

/** The ebuild versions the range adds or changes, first commit that wrote each blob. */
export function lintTargets(commits: CommitInfo[]): LintTarget[] {
  const seen = new Set<string>();
  const out: LintTarget[] = [];
  for (const commit of commits) {
    if (commit.parents.length > 1) continue;
    for (const change of commit.changes) {
      // A symlink's blob is its target, a gitlink's a commit: neither is ebuild text.
      if (change.status === 'D' || change.newMode === '120000' || change.newMode === '160000') continue;
      const e = ebuildOf(change.path);
      if (!e || seen.has(`${change.newBlob}:${change.path}`)) continue;
      seen.add(`${change.newBlob}:${change.path}`);
      out.push({ commit, e, blob: change.newBlob });
    }
  }
  return out;
}

/** Stack models per release, built when first needed (each costs a resolve of the whole stack). */
export class StackModels {
  private readonly models = new Map<string, Promise<StackModel | undefined>>();

  constructor(readonly manifest: Manifest) {}

  forRelease(release: string): Promise<StackModel | undefined> {
    let hit = this.models.get(release);
    if (!hit) {
      hit = (async () => {
        if (!this.manifest.stack.releases[release]) return undefined;
        const policies = await loadPolicies(this.manifest);
        if ('issues' in policies) return undefined;
        const policy = policies.byRelease.get(release);
        const rm = policy ? releaseModel(this.manifest, release, policy) : undefined;
        return rm ? resolveStack(this.manifest, rm) : undefined;
      })();
      this.models.set(release, hit);
    }
    return hit;
  }
}

export async function lintRange(
  targets: LintTarget[],
  objects: ObjectReader,
  models: StackModels | undefined,
  options: { shellcheck?: boolean; onEbuild?: (done: number, total: number, file: string) => void } = {},
): Promise<RangeLint> {
  const texts: string[] = [];
  const results: PrResult[] = [];
  let done = 0;
  const lints = await Promise.all(
    targets.map(async (t) => {
      const text = (await objects.text(t.blob)) ?? '';
      const metadata = await objects.text(`${t.commit.sha}:${t.e.key}/metadata.xml`);
      const year = Number(t.commit.committer.date.slice(0, 4));
      const file = `${t.e.key}/${t.e.rest}`;
      // A version a release holds the package at belongs to that release (model/held.ts).
      const model = models ? await models.forRelease(releaseOfEbuild(models.manifest, t.e.key, t.e.version, text)) : undefined;
      const component = model?.byAtom.get(t.e.key);
      let found: LintResult[];
      if (component && model) {
        found = (await lintComponent(component, model, { text, metadata: metadata ?? '', year })).results;
      } else {
        // Not a stack package (or a release the manifest does not know): the checks without the stack's knowledge,
        // and the stack's conventions only for the stack's own packages.
        const rocm = models?.manifest.components.some((c) => c.spec.atom === t.e.key) ?? false;
        found = await lintEbuild({ file, atom: t.e.key, version: t.e.version, text, ...(metadata !== undefined ? { metadata } : {}), year, rocm });
      }
      options.onEbuild?.(++done, targets.length, file);
      return { t, text, file, found };
    }),
  );
  for (const { t, text, file, found } of lints) {
    texts.push(text);
    for (const r of found) {
      // The range's EbuildIncorrectCopyright says this, with the commit's year.
      if (r.keyword === 'OldGentooCopyright') continue;
      results.push({
        keyword: r.keyword,
        level: r.level,
        message: r.message,
        sources: ['rocm-ebuild'],
        commit: t.commit.sha,
        category: t.e.category,
        package: t.e.pn,
        version: t.e.version,
        file,
        ...(r.line !== undefined ? { line: r.line } : {}),
      });
    }
  }
  const shell = options.shellcheck ?? hasTool('shellcheck');
  const syntax = texts.length ? await bashSyntaxAll(texts) : [];
  const style = shell && texts.length ? await shellcheckAll(texts) : texts.map(() => []);
  lints.forEach(({ t, file }, i) => {
    const where = { commit: t.commit.sha, category: t.e.category, package: t.e.pn, version: t.e.version, file };
    for (const f of syntax[i] ?? []) results.push(ours('BashSyntax', `bash -n: ${f.message}`, { ...where, tool: 'bash', ...(f.line !== undefined ? { line: f.line } : {}) }));
    for (const f of style[i] ?? []) {
      const level = f.level === 'error' || f.level === 'warning' || f.level === 'info' || f.level === 'style' ? f.level : 'warning';
      results.push({ ...ours('ShellCheck', `${f.code}: ${f.message}`, { ...where, tool: 'shellcheck', ...(f.code ? { code: f.code } : {}), ...(f.line !== undefined ? { line: f.line } : {}) }), level });
    }
  });
  return { results, ebuilds: targets.length, shellcheck: shell };
}
