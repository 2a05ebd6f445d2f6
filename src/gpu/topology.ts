import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { readBoundedSync } from '../util/bounded-read.js';
import type { DeviceTable } from './devices.js';
import { gfxName } from './gfx.js';

/**
 * Where sysfs and /dev are read from. Production code reads the host's ("/");
 * ROCM_EBUILD_SYSFS_ROOT and ROCM_EBUILD_DEV_ROOT point it at other trees, which
 * is how the tests run without a GPU: a fake KFD topology under one directory,
 * fake device nodes under another. The device paths given to the container
 * engine are the host paths under the dev root, mapped to the usual paths
 * inside the container.
 */
export interface GpuRoots {
  sysfs: string;
  dev: string;
}

export function rootsFromEnv(env: NodeJS.ProcessEnv = process.env): GpuRoots {
  return { sysfs: path.resolve(env.ROCM_EBUILD_SYSFS_ROOT || '/'), dev: path.resolve(env.ROCM_EBUILD_DEV_ROOT || '/') };
}

/** The KFD topology as the kernel exposes it. */
export const TOPOLOGY_NODES = 'sys/class/kfd/kfd/topology/nodes';
export const KFD_NODE = '/dev/kfd';

export interface DeviceNode {
  /** The path inside the container (and on a host read at "/"). */
  path: string;
  /** Where the node is on this host (under the dev root). */
  hostPath: string;
  exists: boolean;
  /** Owning group, as stat reports it; the container gets it with --group-add. */
  gid: number | null;
  /** File mode bits (e.g. 0o660) and, for character devices, the device numbers (for CDI specs). */
  mode: number | null;
  char: { major: number; minor: number } | null;
}

export interface Gpu {
  /** Position among the GPU nodes in KFD order: what ROCR_VISIBLE_DEVICES and --gpu INDEX count. */
  index: number;
  /** The KFD topology node number. */
  node: number;
  gfx: string | null;
  gfxTargetVersion: number | null;
  /** Where the gfx name came from: KFD's gfx_target_version, or the device id table (kernels without it). */
  gfxSource: 'kfd' | 'device-id' | null;
  /** Product name from the device id table. */
  name: string | null;
  vendorId: string | null;
  /** PCI device id, "0x740f". */
  deviceId: string | null;
  /** PCI address, "0000:63:00.0". */
  pciAddress: string | null;
  uniqueId: string | null;
  computeUnits: number | null;
  vramBytes: number | null;
  renderMinor: number | null;
  render: DeviceNode | null;
  /** Compute partitions of one device (MI300 CPX/QPX...) show as several nodes with one PCI address. */
  partition: { index: number; count: number } | null;
  /** Why this GPU cannot be given to a container (empty when it can). */
  problems: string[];
}

export interface Topology {
  roots: GpuRoots;
  /** The nodes directory read (host path). */
  nodesDir: string;
  kfd: DeviceNode;
  cpuNodes: number;
  gpus: Gpu[];
  /** Problems not tied to one GPU (no KFD topology, unreadable node). */
  problems: string[];
}

/** `key value` lines of a KFD properties file. */
export function parseProperties(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^\s*([A-Za-z0-9_]+)\s+(\S+)\s*$/.exec(line);
    if (m) out.set(m[1]!, m[2]!);
  }
  return out;
}

function num(props: Map<string, string>, key: string): number | null {
  const v = props.get(key);
  if (v === undefined || !/^[0-9]+$/.test(v)) return null;
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : null;
}

/** PCI bus/device/function from KFD's location_id (bus << 8 | device << 3 | function). */
export function pciAddress(domain: number, locationId: number): string {
  const bus = (locationId >> 8) & 0xff;
  const device = (locationId >> 3) & 0x1f;
  const fn = locationId & 0x7;
  const hex = (n: number, w: number) => n.toString(16).padStart(w, '0');
  return `${hex(domain, 4)}:${hex(bus, 2)}:${hex(device, 2)}.${fn}`;
}

// The reads below are synchronous on purpose: a few dozen small sysfs files,
// where each trip through libuv's thread pool cost more than the read (8 ms
// of waiting for 4 GPUs, against under 1 ms). Through the bounded reader: a
// properties file that is a FIFO or /dev/zero must not hang the listing.
const PROPERTIES_MAX_BYTES = 64 * 1024;

function readProperties(file: string): { text: string } | { problem: string } {
  const read = readBoundedSync(file, PROPERTIES_MAX_BYTES);
  return read.ok ? { text: read.data.toString('utf8') } : { problem: `${file} cannot be read: ${read.reason}` };
}

/** stat a device node under the dev root: its group and, for real character devices, its numbers. */
export async function deviceNode(roots: GpuRoots, inContainer: string): Promise<DeviceNode> {
  const hostPath = path.join(roots.dev, inContainer);
  try {
    const st = statSync(hostPath);
    const char = st.isCharacterDevice() ? { major: Number((BigInt(st.rdev) >> 8n) & 0xfffn), minor: Number((BigInt(st.rdev) & 0xffn) | ((BigInt(st.rdev) >> 12n) & 0xfff00n)) } : null;
    return { path: inContainer, hostPath, exists: true, gid: st.gid, mode: st.mode & 0o7777, char };
  } catch {
    return { path: inContainer, hostPath, exists: false, gid: null, mode: null, char: null };
  }
}

function vram(nodeDir: string): number | null {
  let banks: string[];
  try {
    banks = readdirSync(path.join(nodeDir, 'mem_banks'));
  } catch {
    return null;
  }
  let total = 0;
  let found = false;
  for (const bank of banks.sort()) {
    const read = readProperties(path.join(nodeDir, 'mem_banks', bank, 'properties'));
    if (!('text' in read)) continue;
    const props = parseProperties(read.text);
    // heap_type 1 and 2 are the frame buffer (public and private); 0 is system memory.
    const heap = num(props, 'heap_type');
    const size = num(props, 'size_in_bytes');
    if ((heap === 1 || heap === 2) && size !== null) {
      total += size;
      found = true;
    }
  }
  return found ? total : null;
}

function computeUnits(props: Map<string, string>): number | null {
  const simds = num(props, 'simd_count');
  const perCu = num(props, 'simd_per_cu');
  if (simds !== null && perCu) return Math.floor(simds / perCu);
  const arrays = num(props, 'array_count');
  const cuPerArray = num(props, 'cu_per_simd_array');
  return arrays !== null && cuPerArray !== null ? arrays * cuPerArray : null;
}

/**
 * Every AMD GPU in the KFD topology, in node order. CPU nodes
 * (gfx_target_version 0; on kernels without the property, simd_count 0) are
 * skipped; an APU whose CPU cores and GPU share one node is a GPU here.
 * Nothing is left out silently: what is missing is in `problems`.
 */
export async function readTopology(roots: GpuRoots, devices?: DeviceTable): Promise<Topology> {
  const nodesDir = path.join(roots.sysfs, TOPOLOGY_NODES);
  const kfd = await deviceNode(roots, KFD_NODE);
  const topology: Topology = { roots, nodesDir, kfd, cpuNodes: 0, gpus: [], problems: [] };
  let entries: string[];
  try {
    entries = readdirSync(nodesDir);
  } catch {
    topology.problems.push(`${nodesDir} does not exist: the amdgpu kernel driver is not loaded or the kernel lacks CONFIG_HSA_AMD`);
    return topology;
  }
  const nodes = entries.filter((e) => /^[0-9]+$/.test(e)).map(Number).sort((a, b) => a - b);
  for (const node of nodes) {
    const dir = path.join(nodesDir, String(node));
    const read = readProperties(path.join(dir, 'properties'));
    if (!('text' in read)) {
      topology.problems.push(read.problem);
      continue;
    }
    const props = parseProperties(read.text);
    const version = num(props, 'gfx_target_version');
    const simds = num(props, 'simd_count');
    if (version === 0 || (version === null && !simds)) {
      topology.cpuNodes++;
      continue;
    }
    const problems: string[] = [];
    const rawDeviceId = num(props, 'device_id');
    const deviceId = rawDeviceId === null ? null : `0x${rawDeviceId.toString(16).padStart(4, '0')}`;
    const known = rawDeviceId === null ? undefined : devices?.byId.get(rawDeviceId.toString(16).padStart(4, '0'));
    let gfx: string | null = null;
    let gfxSource: Gpu['gfxSource'] = null;
    if (version !== null) {
      gfx = gfxName(version) ?? null;
      gfxSource = gfx ? 'kfd' : null;
      if (!gfx) problems.push(`gfx_target_version ${version} names no gfx target`);
    } else if (known) {
      gfx = known.gfx;
      gfxSource = 'device-id';
    } else {
      problems.push(`no gfx_target_version (kernel older than 5.x?) and device id ${deviceId ?? 'unknown'} is not in the device table`);
    }
    const minor = num(props, 'drm_render_minor');
    let render: DeviceNode | null = null;
    if (minor === null || minor <= 0) {
      problems.push('KFD reports no render node (drm_render_minor)');
    } else {
      render = await deviceNode(roots, `/dev/dri/renderD${minor}`);
      if (!render.exists) problems.push(`${render.hostPath} does not exist`);
    }
    const domain = num(props, 'domain') ?? 0;
    const location = num(props, 'location_id');
    const vendor = num(props, 'vendor_id');
    topology.gpus.push({
      index: topology.gpus.length,
      node,
      gfx,
      gfxTargetVersion: version,
      gfxSource,
      name: known?.name ?? null,
      vendorId: vendor === null ? null : `0x${vendor.toString(16).padStart(4, '0')}`,
      deviceId,
      pciAddress: location === null ? null : pciAddress(domain, location),
      uniqueId: props.get('unique_id') ?? null,
      computeUnits: computeUnits(props),
      vramBytes: vram(dir),
      renderMinor: minor,
      render,
      partition: null,
      problems,
    });
  }
  // Partitions: several nodes with one PCI address, numbered in render-node order.
  const byAddress = new Map<string, Gpu[]>();
  for (const g of topology.gpus) if (g.pciAddress) byAddress.set(g.pciAddress, [...(byAddress.get(g.pciAddress) ?? []), g]);
  for (const group of byAddress.values()) {
    if (group.length < 2) continue;
    [...group].sort((a, b) => (a.renderMinor ?? 0) - (b.renderMinor ?? 0)).forEach((g, i) => (g.partition = { index: i, count: group.length }));
  }
  if (topology.gpus.length > 0 && !kfd.exists) topology.problems.push(`${kfd.hostPath} does not exist`);
  return topology;
}

/** Whether the GPU can be handed to a container: its own problems and /dev/kfd's. */
export function usable(topology: Topology, gpu: Gpu): boolean {
  return gpu.problems.length === 0 && topology.kfd.exists && gpu.gfx !== null;
}
