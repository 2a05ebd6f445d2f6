import type { TargetPolicy, TargetTable } from './table.js';
import { compareTriples, parseRocmVersion, parseTriple } from './version.js';

/** How a ROCM_VERSION maps to a policy; mirrors `_rocm_select_policy` in rocm.eclass. */
export interface PolicyMatch {
  policy: TargetPolicy;
  /** ROCM_VERSION as given. */
  version: string;
  /** X.Y.Z the eclass compares (undefined for 9999). */
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
 * The target policy rocm.eclass applies for ROCM_VERSION=`version`: the series
 * whose [from, until) holds it; for 9999 the live series; otherwise the newest
 * series that starts before it (a release newer than the table, a release
 * between series, a new major version) or, before every series, the oldest
 * (both flagged `approximate`: the eclass prints a QA notice). A new ROCm
 * major is a row in the table, never a reason for a user's emerge to die:
 * only a malformed version throws (PolicyError), where the eclass dies.
 */
export function policyFor(table: TargetTable, version: string): PolicyMatch {
  const parsed = parseRocmVersion(version);
  if (!parsed) {
    throw new PolicyError(`ROCM_VERSION=${version} is not a ROCm version; use X.Y, X.Y.Z or 9999`, 'invalid-version');
  }
  if (parsed.kind === 'live') {
    const policy = table.policies.find((p) => p.series === table.live);
    if (!policy) throw new PolicyError(`the live series ${table.live} is not in the table`, 'gap');
    return { policy, version, live: true };
  }
  const wanted = parsed.triple;
  const base = { version, normalized: parsed.normalized, live: false };
  for (const policy of table.policies) {
    if (compareTriples(wanted, parseTriple(policy.from)!) >= 0 && compareTriples(wanted, parseTriple(policy.until)!) < 0) {
      return { policy, ...base };
    }
  }
  // The table is ordered and without overlap (table.ts): the last series starting before the version is the nearest older one.
  const before = table.policies.filter((p) => compareTriples(wanted, parseTriple(p.from)!) >= 0).at(-1);
  if (before) {
    return {
      policy: before,
      ...base,
      approximate: 'newer',
      notice: `ROCM_VERSION=${version} is newer than the AMDGPU target table of rocm.eclass; using the targets of ROCm ${before.series}.`,
    };
  }
  const oldest = table.policies[0]!;
  return {
    policy: oldest,
    ...base,
    approximate: 'older',
    notice: `ROCM_VERSION=${version} is older than the AMDGPU target table of rocm.eclass; using the targets of ROCm ${oldest.series}.`,
  };
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
