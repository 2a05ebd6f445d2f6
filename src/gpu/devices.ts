import path from 'node:path';
import { formatIssue, type ManifestIssue } from '../manifest/issues.js';
import { SchemaValidator } from '../manifest/schema-validator.js';
import { memoOnContent } from '../util/content-memo.js';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';
import { locate, readYamlSource } from '../manifest/yaml-source.js';

/** One row of manifest/devices.yaml. */
export interface DeviceInfo {
  /** Four lower-case hex digits, e.g. "740f". */
  id: string;
  gfx: string;
  name: string;
}

export interface DeviceTable {
  file: string;
  devices: DeviceInfo[];
  byId: Map<string, DeviceInfo>;
}

/** devices.yaml is part of the manifest: its problems are the user's to fix, located (exit 2). */
export class DeviceTableError extends UserError {
  constructor(readonly issues: ManifestIssue[]) {
    super(`${issues.length} problem${issues.length === 1 ? '' : 's'} in the device table:\n${issues.map((i) => `  ${formatIssue(i)}`).join('\n')}`, ExitCode.invalidInput, { issues });
    this.name = 'DeviceTableError';
  }
}

/** The device table lives next to targets.yaml, so a custom manifest brings its own. */
export function deviceTablePath(targetsFile: string): string {
  return path.join(path.dirname(targetsFile), 'devices.yaml');
}

/**
 * Read and validate devices.yaml; `knownTargets` (the targets of targets.yaml)
 * catches a gfx the eclass does not know. A missing file is an empty table:
 * the table only adds names and a fallback, nothing depends on it.
 */
export async function loadDeviceTable(file: string, knownTargets?: ReadonlySet<string>): Promise<DeviceTable> {
  const read = await readYamlSource(file, 'the AMD device id table (devices.yaml next to targets.yaml)');
  if (!read.source) {
    if (read.issues.some((i) => /not found|ENOENT/i.test(i.message))) return { file, devices: [], byId: new Map() };
    throw new DeviceTableError(read.issues);
  }
  const source = read.source;
  const issues = SchemaValidator.shared().validate('devices.schema.json', source);
  if (issues.length > 0) throw new DeviceTableError(issues);
  const devices = (source.value as { devices: DeviceInfo[] }).devices;
  const byId = new Map<string, DeviceInfo>();
  devices.forEach((d, i) => {
    if (byId.has(d.id)) {
      issues.push({ file, ...locate(source, ['devices', i, 'id']), path: `$.devices[${i}].id`, message: `device id ${d.id} is listed twice`, hint: 'keep one entry per id' });
    }
    if (knownTargets && !knownTargets.has(d.gfx)) {
      issues.push({ file, ...locate(source, ['devices', i, 'gfx']), path: `$.devices[${i}].gfx`, message: `${d.gfx} is not a target of targets.yaml`, hint: 'add the target to targets.yaml first' });
    }
    byId.set(d.id, d);
  });
  if (issues.length > 0) throw new DeviceTableError(issues);
  return { file, devices, byId };
}

/**
 * loadDeviceTable's result, kept between runs while devices.yaml (and the
 * list of known targets) stays the same: parsing and checking it took a third
 * of `gpu list`.
 */
export async function checkedDeviceTable(file: string, knownTargets?: readonly string[]): Promise<DeviceTable> {
  const known = knownTargets ? [...knownTargets].sort() : null;
  const rows = await memoOnContent('gpu device table', known, [file], async () => (await loadDeviceTable(file, known ? new Set(known) : undefined)).devices);
  return { file, devices: rows, byId: new Map(rows.map((d) => [d.id, d])) };
}

/** Device ids of one gfx target, in table order. */
export function deviceIdsOf(table: DeviceTable, gfx: string): string[] {
  return table.devices.filter((d) => d.gfx === gfx).map((d) => d.id);
}
