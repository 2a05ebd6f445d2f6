import path from 'node:path';
import { isGfxName } from '../gpu/gfx.js';
import { usable, type Gpu, type Topology } from '../gpu/topology.js';
import type { TargetPolicy } from '../model/resolve.js';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';

export interface SelectedGpu {
  gpu: Gpu;
  /** The report subdirectory: the gfx, or gfx-gpuN when several GPUs of one gfx are tested. */
  label: string;
  /** --dry-run for a gfx this host lacks: a GPU of that gfx as a host with one would have it, not a real one. */
  standIn?: boolean;
}

/** The render node a stand-in GPU gets: the first one a host with a single GPU has. */
const FIRST_RENDER_NODE = '/dev/dri/renderD128';

/**
 * A GPU of `gfx` as a host with one would show it (/dev/kfd and the first
 * render node, no groups known): what a dry run for a named target prints its
 * container with when this host has no such GPU, or none at all. Planning
 * needs no GPU; running does, and a real run still refuses.
 */
function standInGpu(topology: Topology, gfx: string, index: number): Gpu {
  const render = { path: FIRST_RENDER_NODE, hostPath: path.join(topology.roots.dev, FIRST_RENDER_NODE), exists: false, gid: null, mode: null, char: null };
  return {
    index,
    node: -1,
    gfx,
    gfxTargetVersion: null,
    gfxSource: null,
    name: null,
    vendorId: null,
    deviceId: null,
    pciAddress: null,
    uniqueId: null,
    computeUnits: null,
    vramBytes: null,
    renderMinor: 128,
    render,
    partition: null,
    problems: [],
  };
}

const describe = (g: Gpu) => `${g.gfx ?? '?'} (GPU ${g.index}${g.name ? `, ${g.name}` : ''})`;

/** "auto", "all", "none", an index or a gfx name: what --gpu accepts. */
export function isGpuRequest(value: string): boolean {
  return value === 'auto' || value === 'all' || value === 'none' || /^[0-9]+$/.test(value) || isGfxName(value);
}

/**
 * The GPUs --gpu asks for, each to get its own container. auto (the default):
 * one per distinct gfx the release's target policy offers; all: every GPU;
 * an index; a gfx name: the first GPU of that gfx. Everything that would
 * only fail later is refused now, saying what was looked at. With `dryRun`,
 * a gfx name this host has no GPU of is planned on a stand-in (and said in
 * the notes): a dry run shows files and command lines, which need no GPU.
 */
export function selectGpus(
  topology: Topology,
  requests: readonly string[],
  policy: TargetPolicy,
  release: string,
  options: { dryRun?: boolean } = {},
): { selected: SelectedGpu[]; notes: string[] } {
  const notes: string[] = [];
  const good = topology.gpus.filter((g) => usable(topology, g));
  const wanted = requests.length ? requests : ['auto'];
  // Only gfx names can be planned without the GPU: auto, all and an index ask what this host has.
  const named = options.dryRun === true && wanted.every((r) => isGfxName(r));
  if (good.length === 0 && !named) {
    const seen = topology.gpus.map((g) => `  ${describe(g)}: ${g.problems.join('; ') || `${topology.kfd.hostPath} is missing`}`);
    throw new UserError(
      `no AMD GPU found: looked at ${topology.nodesDir} (${topology.cpuNodes} CPU node${topology.cpuNodes === 1 ? '' : 's'}, ${topology.gpus.length} GPU node${topology.gpus.length === 1 ? '' : 's'})` +
        (seen.length || topology.problems.length ? `:\n${[...seen, ...topology.problems.map((p) => `  ${p}`)].join('\n')}` : '') +
        '\nThe amdgpu kernel driver (with CONFIG_HSA_AMD) and /dev/kfd are needed; `rocm-ebuild gpu list` shows what was found.',
      ExitCode.invalidInput,
      { problems: topology.problems },
    );
  }
  const offered = new Set([...policy.default, ...policy.optional]);
  const policyText = `default-on: ${policy.default.join(' ')}; optional: ${policy.optional.join(' ')}`;
  const present = () => good.map(describe).join(', ');
  const chosen: Gpu[] = [];
  const standIns = new Set<Gpu>();
  const add = (g: Gpu) => {
    if (!chosen.includes(g)) chosen.push(g);
  };
  const requireOffered = (g: Gpu) => {
    if (!offered.has(g.gfx!)) {
      throw new UserError(`${describe(g)} is not in ROCm ${release}'s target policy (${policyText})`, ExitCode.invalidInput);
    }
  };
  for (const r of wanted) {
    if (r === 'auto') {
      const byGfx = new Map<string, Gpu>();
      for (const g of good) if (!byGfx.has(g.gfx!)) byGfx.set(g.gfx!, g);
      for (const [gfx, g] of byGfx) {
        if (offered.has(gfx)) add(g);
        else notes.push(`skipping ${describe(g)}: ROCm ${release} does not offer ${gfx}`);
      }
      if (![...byGfx.keys()].some((x) => offered.has(x))) {
        throw new UserError(`none of this host's GPUs (${present()}) is in ROCm ${release}'s target policy (${policyText})`, ExitCode.invalidInput);
      }
    } else if (r === 'all') {
      for (const g of good) {
        requireOffered(g);
        add(g);
      }
    } else if (/^[0-9]+$/.test(r)) {
      const g = topology.gpus[Number(r)];
      if (!g) throw new UserError(`--gpu ${r}: there is no GPU ${r}; this host has ${present()}`, ExitCode.invalidInput);
      if (!usable(topology, g)) throw new UserError(`--gpu ${r}: ${describe(g)} cannot be used: ${g.problems.join('; ') || `${topology.kfd.hostPath} is missing`}`, ExitCode.invalidInput);
      requireOffered(g);
      add(g);
    } else if (isGfxName(r)) {
      let g = good.find((x) => x.gfx === r) ?? [...standIns].find((x) => x.gfx === r);
      if (!g && named) {
        g = standInGpu(topology, r, topology.gpus.length + standIns.size);
        requireOffered(g);
        standIns.add(g);
        notes.push(`no ${r} GPU on this host: its container is shown with /dev/kfd and ${FIRST_RENDER_NODE}, as on a host with one such GPU; a real run needs the GPU`);
      }
      if (!g) throw new UserError(`--gpu ${r}: no ${r} GPU on this host; it has ${present()}`, ExitCode.invalidInput);
      requireOffered(g);
      add(g);
    } else {
      throw new UserError(`--gpu ${r}: expected auto, all, a GPU index or a gfx name such as gfx90a`, ExitCode.invalidInput);
    }
  }
  const count = new Map<string, number>();
  for (const g of chosen) count.set(g.gfx!, (count.get(g.gfx!) ?? 0) + 1);
  return {
    selected: chosen.map((gpu) => ({ gpu, label: count.get(gpu.gfx!)! > 1 ? `${gpu.gfx}-gpu${gpu.index}` : gpu.gfx!, ...(standIns.has(gpu) ? { standIn: true } : {}) })),
    notes,
  };
}
