import type { TargetPolicy, TargetTable } from './table.js';
import { compareTriples, parseRocmVersion, parseTriple, type Triple } from './version.js';

/** How a ROCM_VERSION maps to a policy; mirrors `_rocm_select_policy` in rocm.eclass. */
export interface PolicyMatch {
  /**
   * The targets the eclass offers: the one series of an X.Y.Z version, or for
   * X.Y and 9999 the union of `line` with the defaults of its last series
   * (`series` then names them all, space-separated, as _ROCM_POLICY does).
   */
  policy: TargetPolicy;
  /** The series combined, oldest first (one for X.Y.Z). */
  line: TargetPolicy[];
  /** ROCM_VERSION as given. */
  version: string;
  /** X.Y.Z the eclass compares (for 9999, that of the live series's first release). */
  normalized?: string;
  /** ROCM_VERSION=9999: the table's live policy. */
  live: boolean;
  /**
   * Set when no series holds the version and the nearest one is used ("newer":
   * the newest series that starts before it, "older": the oldest series). The
   * eclass prints a QA notice then; `notice` is its first line.
   */
  approximate?: 'newer' | 'older';
  notice?: string;
}

export class PolicyError extends Error {
  constructor(
    message: string,
    readonly reason: 'invalid-version' | 'gap',
  ) {
    super(message);
    this.name = 'PolicyError';
  }
}

/**
 * The series of a release line, merged: every target any of them offers, in
 * table order, enabled by default as the last one enables it. One series is
 * returned as it is.
 */
function mergeLine(table: TargetTable, line: TargetPolicy[]): TargetPolicy {
  if (line.length === 1) return line[0]!;
  const last = line.at(-1)!;
  const offered = new Set(line.flatMap((p) => [...p.defaultOn, ...p.optional]));
  const names = table.targets.map((t) => t.name).filter((t) => offered.has(t));
  return {
    series: line.map((p) => p.series).join(' '),
    from: line[0]!.from,
    until: last.until,
    defaultOn: names.filter((t) => last.defaultOn.includes(t)),
    optional: names.filter((t) => !last.defaultOn.includes(t)),
  };
}

/**
 * The target policy rocm.eclass applies for ROCM_VERSION=`version`.
 *
 * X.Y.Z: the series whose [from, until) holds it. X.Y: the series of X.Y.0
 * and every series continuing it without a gap (a release line: 6.1 to 6.4.3+),
 * its targets all of theirs and its defaults the last one's, as ::gentoo's
 * eclass reads "6.1" as every 6.x release. 9999: X.Y of the live series's first
 * release. A version no series holds takes the newest series that starts
 * before it (a release newer than the table, a release between series, a new
 * major version) or, before every series, the oldest; both are flagged
 * `approximate` (the eclass prints a QA notice) and an X.Y version still takes
 * the rest of that series's line. A new ROCm major is a row in the table,
 * never a reason for a user's emerge to die: only a malformed version throws
 * (PolicyError), where the eclass dies.
 */
export function policyFor(table: TargetTable, version: string): PolicyMatch {
  const parsed = parseRocmVersion(version);
  if (!parsed) {
    throw new PolicyError(`ROCM_VERSION=${version} is not a ROCm version; use X.Y, X.Y.Z or 9999`, 'invalid-version');
  }
  let wanted: Triple;
  let wholeLine: boolean;
  if (parsed.kind === 'live') {
    const live = table.policies.find((p) => p.series === table.live);
    if (!live) throw new PolicyError(`the live series ${table.live} is not in the table`, 'gap');
    const from = parseTriple(live.from)!;
    wanted = [from[0], from[1], 0];
    wholeLine = true;
  } else {
    wanted = parsed.triple;
    wholeLine = !parsed.patchGiven;
  }

  let start: TargetPolicy;
  let approximate: 'newer' | 'older' | undefined;
  const holder = table.policies.find((p) => compareTriples(wanted, parseTriple(p.from)!) >= 0 && compareTriples(wanted, parseTriple(p.until)!) < 0);
  // The table is ordered and without overlap (table.ts): the last series starting before the version is the nearest older one.
  const before = table.policies.filter((p) => compareTriples(wanted, parseTriple(p.from)!) >= 0).at(-1);
  if (holder) start = holder;
  else if (before) [start, approximate] = [before, 'newer'];
  else [start, approximate] = [table.policies[0]!, 'older'];

  const line = [start];
  if (wholeLine) {
    for (const p of table.policies.slice(table.policies.indexOf(start) + 1)) {
      if (compareTriples(parseTriple(p.from)!, parseTriple(line.at(-1)!.until)!) !== 0) break;
      line.push(p);
    }
  }
  const match: PolicyMatch = {
    policy: mergeLine(table, line),
    line,
    version,
    normalized: wanted.join('.'),
    live: parsed.kind === 'live',
  };
  if (approximate) {
    const rest = line.length > 1 ? ' and the releases after it' : '';
    match.approximate = approximate;
    match.notice = `ROCM_VERSION=${version} is ${approximate} than the AMDGPU target table of rocm.eclass; using the targets of ROCm ${start.series}${rest}.`;
  }
  return match;
}

/** What `_rocm_set_globals` derives from a policy. */
export interface EclassGlobals {
  /** The targets offered, in table order. */
  targets: string[];
  /** IUSE as the eclass sets it ("+" on default-on targets). */
  iuse: string;
  requiredUse: string;
  /** ROCM_USEDEP (= ROCM_USE_DEP). */
  usedep: string;
}

/**
 * IUSE, ROCM_REQUIRED_USE and ROCM_USEDEP for `policy`, narrowed to `supported`
 * (ROCM_SUPPORTED_TARGETS) when given: targets the policy does not offer are
 * ignored. Throws when no target remains, as the eclass dies then.
 */
export function eclassGlobals(table: TargetTable, policy: TargetPolicy, supported?: readonly string[]): EclassGlobals {
  const offered = new Set([...policy.defaultOn, ...policy.optional]);
  const targets = table.targets.map((t) => t.name).filter((t) => offered.has(t) && (!supported || supported.includes(t)));
  if (targets.length === 0) {
    throw new PolicyError(`none of ${supported?.join(' ') ?? 'the targets'} is offered for series ${policy.series}`, 'gap');
  }
  const flags = targets.map((t) => `amdgpu_targets_${t}`);
  return {
    targets,
    iuse: targets.map((t) => `${policy.defaultOn.includes(t) ? '+' : ''}amdgpu_targets_${t}`).join(' '),
    requiredUse: `|| ( ${flags.join(' ')} )`,
    usedep: flags.map((f) => `${f}(-)?`).join(','),
  };
}
