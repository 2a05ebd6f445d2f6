/**
 * rocm.eclass and its data: the target table (manifest/targets.yaml), the
 * policy the eclass applies to a ROCM_VERSION, the generated eclass section
 * and amdgpu_targets.desc, and the eclassdoc tools.
 */
export {
  checkedTargetTable,
  loadTargetTable,
  parseTargetTable,
  gfxTargetVersionOf,
  TargetTableError,
  type TargetInfo,
  type TargetPolicy,
  type TargetTable,
  type TargetTableIssue,
} from './table.js';
export { policyFor, eclassGlobals, PolicyError, type PolicyMatch, type EclassGlobals } from './policy.js';
export { parseRocmVersion, ROCM_VERSION_RE, type RocmVersion } from './version.js';
export { renderEclassTable, spliceEclassTable, findEclassTable, EclassTableError, TABLE_BEGIN, TABLE_END } from './render-table.js';
export { descTargets, renderAmdgpuTargetsDesc, renderAmdgpuTargetsDescFor, targetsOfReleases, copyrightYear, withCopyrightYear } from './render-desc.js';
export { eclassApiNames, usedApiNames, extendDesc } from './api-names.js';
export { planGeneratedFiles, changedLines, ECLASS_PATH, DESC_PATH, type GeneratedFile } from './generate.js';
export * from './eclassdoc/index.js';
export { eclassForMaintainers, sameEclassCode, withMaintainersOf, type EclassMaintainer } from './maintainers.js';

import path from 'node:path';
import { eclassDir } from '../paths.js';

/** The project's own rocm.eclass. */
export const eclassPath = path.join(eclassDir, 'rocm.eclass');
