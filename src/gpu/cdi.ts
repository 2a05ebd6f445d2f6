import type { DeviceNode, Gpu, Topology } from './topology.js';
import { usable } from './topology.js';

/** A Container Device Interface spec (github.com/cncf-tags/container-device-interface, SPEC.md). */
export interface CdiSpec {
  cdiVersion: string;
  kind: string;
  devices: { name: string; containerEdits: { deviceNodes: CdiDeviceNode[] } }[];
}

export interface CdiDeviceNode {
  path: string;
  hostPath?: string;
  type?: 'c';
  major?: number;
  minor?: number;
  fileMode?: number;
  permissions: string;
  gid?: number;
}

function cdiNode(node: DeviceNode): CdiDeviceNode {
  return {
    path: node.path,
    // Only when the node is read under another dev root (tests): CDI takes the path as the host path otherwise.
    ...(node.hostPath !== node.path ? { hostPath: node.hostPath } : {}),
    ...(node.char ? { type: 'c' as const, major: node.char.major, minor: node.char.minor } : {}),
    ...(node.mode !== null ? { fileMode: node.mode } : {}),
    permissions: 'rw',
    ...(node.gid !== null ? { gid: node.gid } : {}),
  };
}

/**
 * The CDI spec AMD's container toolkit (amd-ctk cdi generate) writes, for hosts
 * without it: kind amd.com/gpu, one device per GPU named by its index (its
 * render node plus /dev/kfd) and "all". Only the render node is given, never
 * the card node: compute needs no display. Podman reads it from /etc/cdi or
 * /var/run/cdi: `podman run --device amd.com/gpu=0 …`.
 */
export function cdiSpec(topology: Topology): CdiSpec {
  const gpus: Gpu[] = topology.gpus.filter((g) => usable(topology, g) && g.render);
  const kfd = cdiNode(topology.kfd);
  const devices = gpus.map((g) => ({ name: String(g.index), containerEdits: { deviceNodes: [cdiNode(g.render!), kfd] } }));
  if (gpus.length > 0) devices.push({ name: 'all', containerEdits: { deviceNodes: [...gpus.map((g) => cdiNode(g.render!)), kfd] } });
  return { cdiVersion: '0.6.0', kind: 'amd.com/gpu', devices };
}
