import type { Manifest, SourceReader } from '../manifest/load.js';
import type { ManifestIssue } from '../manifest/issues.js';
import { locate, type YamlSource } from '../manifest/yaml-source.js';
import { checkedTargetTable, parseTargetTable, TargetTableError, type TargetTable } from '../eclass/table.js';
import { policyFor, PolicyError } from '../eclass/policy.js';
import type { TargetPolicy } from './resolve.js';

export interface Policies {
  table: TargetTable;
  byRelease: Map<string, TargetPolicy>;
}

/**
 * The GPU target policy of every release in the stack, exactly as rocm.eclass
 * will select it, so generated conditions (DL_KERNELS, subsets) agree with the
 * IUSE the eclass produces.
 */
export async function loadPolicies(manifest: Manifest): Promise<Policies | { issues: ManifestIssue[] }> {
  const found = await releasePolicies(manifest);
  return found.issues.length > 0 || !found.table ? { issues: found.issues } : { table: found.table, byRelease: found.byRelease };
}

const tables = new WeakMap<YamlSource, TargetTable | TargetTableError>();

/** The target table of a parsed targets.yaml, computed once per parsed file. */
function tableOf(source: YamlSource): TargetTable {
  let table = tables.get(source);
  if (!table) {
    try {
      table = parseTargetTable(source.text, source.file);
    } catch (err) {
      if (!(err instanceof TargetTableError)) throw err;
      table = err;
    }
    tables.set(source, table);
  }
  if (table instanceof TargetTableError) throw table;
  return table;
}

/**
 * As loadPolicies, but keeping the policies of the releases that have one
 * when others do not (or the table itself is broken), so validation can go
 * on checking everything that does not depend on the missing policy.
 */
export async function releasePolicies(
  manifest: Manifest,
  readSource?: SourceReader,
): Promise<{ table?: TargetTable; byRelease: Map<string, TargetPolicy>; issues: ManifestIssue[] }> {
  const byRelease = new Map<string, TargetPolicy>();
  let table: TargetTable;
  try {
    if (readSource) {
      // The manifest's own reader (tests share parsed files between many runs this way).
      const got = await readSource(manifest.targetsFile);
      if (!got.source) return { byRelease, issues: got.issues };
      table = tableOf(got.source);
    } else {
      table = await checkedTargetTable(manifest.targetsFile);
    }
  } catch (err) {
    if (err instanceof TargetTableError) return { byRelease, issues: err.issues };
    throw err;
  }
  const issues: ManifestIssue[] = [];
  for (const version of Object.keys(manifest.stack.releases)) {
    try {
      const match = policyFor(table, version);
      if (match.approximate) {
        issues.push(releaseIssue(manifest, version, `release ${version} is outside the target policy table`, match.notice));
        continue;
      }
      byRelease.set(version, { default: match.policy.defaultOn, optional: match.policy.optional });
    } catch (err) {
      if (!(err instanceof PolicyError)) throw err;
      issues.push(releaseIssue(manifest, version, err.message, 'add the release series to the target table and run `rocm-ebuild eclass`'));
    }
  }
  return { table, byRelease, issues };
}

function releaseIssue(manifest: Manifest, version: string, message: string, hint?: string): ManifestIssue {
  const pos = locate(manifest.stackSource, ['releases'], version);
  return { file: manifest.file, ...pos, path: `$.releases["${version}"]`, message, ...(hint ? { hint } : {}) };
}
