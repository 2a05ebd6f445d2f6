import type { LoadedComponent, Manifest } from '../manifest/load.js';
import { compareVersions, inRange } from '../model/version.js';

/**
 * Packages that left the release: the overlay holds them, a component of the
 * stack manifest describes them, and the release does not generate them
 * (AMD dropped the project, or the manifest stopped describing it, with the
 * reason in stack.yaml's `excluded:`). A bump that only looked at the
 * release's packages kept their old ebuilds, whose `:${SLOT}` dependencies
 * the same bump's drops left unresolvable.
 */

/** Every package a component describes, by atom: its own and any an override renames it to. */
export function describedPackages(manifest: Manifest): Map<string, LoadedComponent> {
  const out = new Map<string, LoadedComponent>();
  for (const c of manifest.components) {
    out.set(c.spec.atom, c);
    for (const o of c.spec.overrides ?? []) {
      const atom = o.set !== null && typeof o.set === 'object' ? (o.set as { atom?: unknown }).atom : undefined;
      if (typeof atom === 'string' && !out.has(atom)) out.set(atom, c);
    }
  }
  return out;
}

/** One line, for commit bodies, bump's report and the pull request: `excluded:` space-normalised. */
function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * Why a package the manifest describes is not part of `version`: the stack's
 * `excluded:` entry for the component's projects in this release, else the
 * end of the component's `releases`, else only that it is not part of it.
 */
export function whyLeft(manifest: Manifest, component: LoadedComponent, version: string): string {
  const projects = component.spec.projects ?? [component.spec.name];
  const excluded = (manifest.stack.excluded ?? []).find((x) => projects.includes(x.project) && inRange(version, x.releases));
  if (excluded) {
    const from = excluded.releases?.from ? ` from ROCm ${excluded.releases.from}` : '';
    return `the stack manifest excludes ${excluded.project}${from}: ${oneLine(excluded.reason)}`;
  }
  const range = component.spec.releases;
  if (range?.until !== undefined && compareVersions(version, range.until) >= 0) {
    return `its component (${component.spec.name}) describes ROCm releases before ${range.until} only`;
  }
  if (range?.from !== undefined && compareVersions(version, range.from) < 0) {
    return `its component (${component.spec.name}) describes ROCm releases from ${range.from} on`;
  }
  return `not part of ROCm ${version}`;
}
