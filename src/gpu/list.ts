import { policyFor, PolicyError } from '../eclass/policy.js';
import { checkedTargetTable, TargetTableError, type TargetTable } from '../eclass/table.js';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';
import { checkedDeviceTable, deviceTablePath, DeviceTableError } from './devices.js';
import { readTopology, type GpuRoots, type Gpu, type Topology } from './topology.js';

/** How the release's target policy treats a gfx target. */
export type TargetStatus = 'default-on' | 'optional' | 'not-offered';

export interface TargetVerdict {
  status: TargetStatus;
  /** The AMDGPU_TARGETS value for this GPU, null when the release does not offer it. */
  amdgpuTargets: string | null;
}

export interface ListedGpu extends Gpu {
  target: TargetVerdict;
}

export interface GpuList {
  release: string;
  /** The policy series of targets.yaml the release falls in. */
  series: string;
  topology: Omit<Topology, 'gpus'>;
  gpus: ListedGpu[];
}

export function targetVerdict(gfx: string | null, policy: { defaultOn: readonly string[]; optional: readonly string[] }): TargetVerdict {
  if (gfx && policy.defaultOn.includes(gfx)) return { status: 'default-on', amdgpuTargets: gfx };
  if (gfx && policy.optional.includes(gfx)) return { status: 'optional', amdgpuTargets: gfx };
  return { status: 'not-offered', amdgpuTargets: null };
}

/** The target table and the release's policy in it; errors are the user's to fix (exit 2). */
export async function releasePolicy(targetsFile: string, release: string): Promise<{ table: TargetTable; series: string; defaultOn: string[]; optional: string[] }> {
  let table: TargetTable;
  try {
    table = await checkedTargetTable(targetsFile);
  } catch (err) {
    if (err instanceof TargetTableError) throw new UserError(err.message, ExitCode.invalidInput, { issues: err.issues });
    throw err;
  }
  try {
    const match = policyFor(table, release);
    return { table, series: match.policy.series, defaultOn: match.policy.defaultOn, optional: match.policy.optional };
  } catch (err) {
    if (err instanceof PolicyError) throw new UserError(err.message, ExitCode.invalidInput);
    throw err;
  }
}

/** The host's GPUs (under `roots`) with what the release's target policy says about each. */
export async function listGpus(options: { roots: GpuRoots; targetsFile: string; release: string }): Promise<GpuList> {
  const policy = await releasePolicy(options.targetsFile, options.release);
  let devices;
  try {
    devices = await checkedDeviceTable(deviceTablePath(options.targetsFile), policy.table.targets.map((t) => t.name));
  } catch (err) {
    if (err instanceof DeviceTableError) throw new UserError(err.message, ExitCode.invalidInput, { issues: err.issues });
    throw err;
  }
  const { gpus, ...rest } = await readTopology(options.roots, devices);
  return {
    release: options.release,
    series: policy.series,
    topology: rest,
    gpus: gpus.map((g) => ({ ...g, target: targetVerdict(g.gfx, policy) })),
  };
}

function size(bytes: number | null): string {
  if (bytes === null) return '-';
  const gib = bytes / 2 ** 30;
  return gib >= 1 ? `${gib.toFixed(gib >= 10 ? 0 : 1)} GiB` : `${Math.round(bytes / 2 ** 20)} MiB`;
}

function shorten(text: string, width: number): string {
  return text.length > width ? `${text.slice(0, width - 1)}…` : text;
}

/** The table `gpu list` prints, with every problem under the GPU it concerns. */
export function formatGpuTable(list: GpuList): string {
  const lines: string[] = [];
  const head = ['#', 'GFX', 'NAME', 'PCI', 'RENDER NODE', 'CU', 'VRAM', 'GIDS', `AMDGPU_TARGETS (ROCm ${list.release})`];
  const rows = list.gpus.map((g) => [
    String(g.index),
    g.gfx ?? '?',
    shorten(g.name ?? g.deviceId ?? '-', 34) + (g.partition ? ` [partition ${g.partition.index + 1}/${g.partition.count}]` : ''),
    g.pciAddress ?? '-',
    g.render?.path ?? '-',
    g.computeUnits === null ? '-' : String(g.computeUnits),
    size(g.vramBytes),
    [...new Set([list.topology.kfd.gid, g.render?.gid].filter((x): x is number => x !== null && x !== undefined))].join(',') || '-',
    g.target.amdgpuTargets ? `${g.target.amdgpuTargets} (${g.target.status})` : `not offered by ROCm ${list.release}`,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const fmt = (r: string[]) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd();
  lines.push(fmt(head));
  list.gpus.forEach((g, i) => {
    lines.push(fmt(rows[i]!));
    for (const p of g.problems) lines.push(`   ! ${p}`);
  });
  if (list.gpus.length === 0) lines.push(`(no AMD GPU: ${list.topology.cpuNodes} CPU node${list.topology.cpuNodes === 1 ? '' : 's'} under ${list.topology.nodesDir})`);
  for (const p of list.topology.problems) lines.push(`! ${p}`);
  return `${lines.join('\n')}\n`;
}
