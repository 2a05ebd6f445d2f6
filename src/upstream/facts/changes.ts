import type { BuildFacts } from './build-facts.js';
import type { Location } from './cmake-facts.js';
import { byCodePoint } from '../../util/order.js';

export type ChangeArea =
  | 'cmake_minimum_required'
  | 'project'
  | 'soname'
  | 'dependency'
  | 'option'
  | 'gpu-targets'
  | 'bundled'
  | 'python';

export interface Change {
  area: ChangeArea;
  kind: 'added' | 'removed' | 'changed';
  /** What changed: a package, option or variable name. */
  subject: string;
  from?: string;
  to?: string;
  /** Where, in the newer tree (the older one for removals). */
  where?: Location;
  /** Extra detail for people, e.g. "+gfx1200 +gfx1201 -gfx803". */
  detail?: string;
}

/** The order areas are reported in: what breaks a build first. */
export const AREA_ORDER: ChangeArea[] = ['cmake_minimum_required', 'project', 'soname', 'dependency', 'bundled', 'option', 'gpu-targets', 'python'];

const joinAlt = (values: string[]) => values.join(' | ');

function keyed<T>(items: T[], key: (t: T) => string): Map<string, T> {
  return new Map(items.map((i) => [key(i), i]));
}

/**
 * What changed between two releases' build facts, as a reviewer reads it:
 * added, removed and changed items per area. Items only moved between files
 * are not changes.
 */
export function diffFacts(a: BuildFacts, b: BuildFacts): Change[] {
  const changes: Change[] = [];
  const scalar = (area: ChangeArea, subject: string, x: string | undefined, y: string | undefined, where?: Location) => {
    if (x === y) return;
    if (x === undefined) changes.push({ area, kind: 'added', subject, to: y!, ...(where ? { where } : {}) });
    else if (y === undefined) changes.push({ area, kind: 'removed', subject, from: x });
    else changes.push({ area, kind: 'changed', subject, from: x, to: y, ...(where ? { where } : {}) });
  };

  scalar('cmake_minimum_required', 'VERSION', a.cmakeMinimum?.value, b.cmakeMinimum?.value, b.cmakeMinimum?.where);
  scalar('project', 'name', a.project?.name, b.project?.name, b.project?.where);
  scalar('project', 'VERSION', a.project?.version, b.project?.version, b.project?.where);
  scalar('project', 'LANGUAGES', a.project?.languages.join(' ') || undefined, b.project?.languages.join(' ') || undefined, b.project?.where);
  scalar('project', 'rocm_setup_version', a.setupVersion?.value, b.setupVersion?.value, b.setupVersion?.where);

  const sonameKey = (s: BuildFacts['sonames'][number]) => s.target;
  const sa = keyed(a.sonames, sonameKey);
  const sb = keyed(b.sonames, sonameKey);
  for (const [target, s] of sb) {
    const o = sa.get(target);
    scalar('soname', `${target} SOVERSION`, o?.soversion, s.soversion, s.where);
    scalar('soname', `${target} VERSION`, o?.version, s.version, s.where);
  }
  for (const [target, o] of sa) if (!sb.has(target)) changes.push({ area: 'soname', kind: 'removed', subject: target, from: o.soversion ?? o.version ?? '', where: o.where });

  const pkgKey = (p: BuildFacts['packages'][number]) => `${p.via}:${p.name}`;
  const pa = keyed(a.packages, pkgKey);
  const pb = keyed(b.packages, pkgKey);
  const pkgName = (p: BuildFacts['packages'][number]) => (p.via === 'pkg-config' ? `pkg-config ${p.name}` : p.name);
  for (const [k, p] of pb) {
    const o = pa.get(k);
    if (!o) changes.push({ area: 'dependency', kind: 'added', subject: pkgName(p), to: joinAlt(p.versions) || (p.required ? 'REQUIRED' : 'optional'), where: p.where[0]! });
    else if (joinAlt(o.versions) !== joinAlt(p.versions)) {
      changes.push({ area: 'dependency', kind: 'changed', subject: pkgName(p), from: joinAlt(o.versions) || 'any version', to: joinAlt(p.versions) || 'any version', where: p.where[0]! });
    } else if (o.required !== p.required) {
      changes.push({ area: 'dependency', kind: 'changed', subject: pkgName(p), from: o.required ? 'REQUIRED' : 'optional', to: p.required ? 'REQUIRED' : 'optional', where: p.where[0]! });
    }
  }
  for (const [k, o] of pa) if (!pb.has(k)) changes.push({ area: 'dependency', kind: 'removed', subject: pkgName(o), from: joinAlt(o.versions) || (o.required ? 'REQUIRED' : 'optional'), where: o.where[0]! });

  const oa = keyed(a.options, (o) => o.name);
  const ob = keyed(b.options, (o) => o.name);
  for (const [name, o] of ob) {
    const was = oa.get(name);
    if (!was) changes.push({ area: 'option', kind: 'added', subject: name, to: joinAlt(o.defaults), where: o.where });
    else if (joinAlt(was.defaults) !== joinAlt(o.defaults)) changes.push({ area: 'option', kind: 'changed', subject: name, from: joinAlt(was.defaults), to: joinAlt(o.defaults), where: o.where });
  }
  for (const [name, o] of oa) if (!ob.has(name)) changes.push({ area: 'option', kind: 'removed', subject: name, from: joinAlt(o.defaults), where: o.where });

  const ta = keyed(a.gpuTargets, (t) => t.variable);
  const tb = keyed(b.gpuTargets, (t) => t.variable);
  const targetSet = (values: string[]) => new Set(values.flatMap((v) => v.replace(/^\+/, '').split(';')).filter((t) => t !== ''));
  for (const [name, t] of tb) {
    const was = ta.get(name);
    if (!was) {
      changes.push({ area: 'gpu-targets', kind: 'added', subject: name, to: joinAlt(t.values), where: t.where });
      continue;
    }
    if (joinAlt(was.values) === joinAlt(t.values)) continue;
    const before = targetSet(was.values);
    const after = targetSet(t.values);
    const detail = [...[...after].filter((x) => !before.has(x)).map((x) => `+${x}`), ...[...before].filter((x) => !after.has(x)).map((x) => `-${x}`)].join(' ');
    changes.push({ area: 'gpu-targets', kind: 'changed', subject: name, from: joinAlt(was.values), to: joinAlt(t.values), where: t.where, ...(detail ? { detail } : {}) });
  }
  for (const [name, t] of ta) if (!tb.has(name)) changes.push({ area: 'gpu-targets', kind: 'removed', subject: name, from: joinAlt(t.values), where: t.where });

  const dKey = (d: BuildFacts['downloads'][number]) => `${d.via}:${d.name}`;
  const da = keyed(a.downloads, dKey);
  const db = keyed(b.downloads, dKey);
  for (const [k, d] of db) {
    const was = da.get(k);
    const subject = `${d.via} ${d.name}`;
    if (!was) changes.push({ area: 'bundled', kind: 'added', subject, to: joinAlt(d.sources), where: d.where });
    else if (joinAlt(was.sources) !== joinAlt(d.sources)) changes.push({ area: 'bundled', kind: 'changed', subject, from: joinAlt(was.sources), to: joinAlt(d.sources), where: d.where });
  }
  for (const [k, d] of da) if (!db.has(k)) changes.push({ area: 'bundled', kind: 'removed', subject: `${d.via} ${d.name}`, from: joinAlt(d.sources), where: d.where });

  // Python requirements compare by name within the same declaring file kind.
  const pyKey = (r: BuildFacts['python'][number]) => `${r.source}\0${r.name}`;
  const ya = keyed(a.python, pyKey);
  const yb = keyed(b.python, pyKey);
  for (const [k, r] of yb) {
    const was = ya.get(k);
    const where = { file: r.source.split(' ')[0]!, line: 0 };
    if (!was) changes.push({ area: 'python', kind: 'added', subject: r.name, to: r.spec || 'any version', where, detail: r.source });
    else if (was.spec !== r.spec) changes.push({ area: 'python', kind: 'changed', subject: r.name, from: was.spec || 'any version', to: r.spec || 'any version', where, detail: r.source });
  }
  for (const [k, r] of ya) if (!yb.has(k)) changes.push({ area: 'python', kind: 'removed', subject: r.name, from: r.spec || 'any version', where: { file: r.source.split(' ')[0]!, line: 0 }, detail: r.source });

  return changes.sort(
    (x, y) =>
      AREA_ORDER.indexOf(x.area) - AREA_ORDER.indexOf(y.area) ||
      ['removed', 'changed', 'added'].indexOf(x.kind) - ['removed', 'changed', 'added'].indexOf(y.kind) ||
      byCodePoint(x.subject, y.subject),
  );
}
