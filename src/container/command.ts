import { commandLine, type Option } from '../util/argv.js';
import { IMAGE_REFERENCE_FORMAT, isImageReference } from '../util/names.js';

/**
 * The stage3 image `test`, `matrix` and `ci` use unless told otherwise, fully
 * qualified: podman without unqualified-search registries resolves no short
 * name, and a short name resolves differently from one host to the next.
 */
export const DEFAULT_IMAGE = 'docker.io/gentoo/stage3:amd64-openrc';

/** The container engines `rocm-ebuild test` drives. */
export type EngineName = 'podman' | 'docker';
export const ENGINES: readonly EngineName[] = ['podman', 'docker'];

export interface BindMount {
  host: string;
  container: string;
  readOnly: boolean;
}

/** Everything one test container is started with. */
export interface RunSpec {
  engine: EngineName;
  name: string;
  image: string;
  /** Host device node → the path inside the container. Only the GPU's: /dev/kfd and its render node. */
  devices: { host: string; container: string }[];
  /** The host's numeric groups of those nodes, or rootless podman's keep-groups. */
  groups: number[] | 'keep-groups';
  /**
   * Capabilities added for ROCm's runtime: only containers that run GPU code
   * get any (GPU_CAPABILITIES), and the engine's seccomp profile stays in force.
   */
  capabilities: readonly string[];
  mounts: BindMount[];
  labels: Record<string, string>;
  /** --rm: gone when it ends (not with --keep). */
  remove: boolean;
  command: string[];
}

/**
 * What a container running GPU code adds to the engine's defaults. ROCr sets
 * NUMA memory policies (mbind, set_mempolicy, get_mempolicy); the default
 * seccomp profiles of Docker, Podman and containerd allow those calls only to
 * a process holding CAP_SYS_NICE. Adding that capability keeps the profile in
 * force, where `seccomp=unconfined` would switch it off for every syscall.
 */
export const GPU_CAPABILITIES = ['SYS_NICE'] as const;

/** Paths a -v option cannot carry. */
function checkPath(p: string): void {
  if (!p.startsWith('/') || /[:,\n]/.test(p)) throw new Error(`${JSON.stringify(p)} cannot be bind-mounted: an absolute path without ':' ',' or newlines is needed`);
}

/**
 * The engine command line that starts one test container. Pure: the same
 * spec gives the same argv, which `--dry-run` prints and the tests pin down.
 * No --privileged and no device but the GPU's two nodes. stdin stays open
 * (-i): the script inside stops when it closes, so a killed rocm-ebuild
 * leaves nothing running. --pull=never: the image was checked (or pulled)
 * before, so nothing is fetched behind the user's back. The image and the
 * command come after `--`: whatever --image says, the engine reads it as an
 * image, never as one of its options.
 */
export function runCommand(spec: RunSpec): string[] {
  requireImage(spec.image);
  const options: Option[] = ['--interactive', ['--name', spec.name], ['--pull', 'never']];
  if (spec.remove) options.push('--rm');
  for (const [k, v] of Object.entries(spec.labels)) options.push(['--label', `${k}=${v}`]);
  for (const d of spec.devices) {
    checkPath(d.host);
    options.push(['--device', d.host === d.container ? d.host : `${d.host}:${d.container}`]);
  }
  if (spec.groups === 'keep-groups') options.push(['--group-add', 'keep-groups']);
  else for (const g of [...new Set(spec.groups)]) options.push(['--group-add', String(g)]);
  for (const c of spec.capabilities) options.push(['--cap-add', c]);
  for (const m of spec.mounts) {
    checkPath(m.host);
    options.push(['--volume', `${m.host}:${m.container}${m.readOnly ? ':ro' : ''}`]);
  }
  return commandLine([spec.engine, 'run'], options, [spec.image, ...spec.command]);
}

/** An image reference, or an error saying what one looks like (the caller makes it exit 2). */
export function requireImage(image: string): void {
  if (!isImageReference(image)) throw new Error(`--image ${JSON.stringify(image)} is not ${IMAGE_REFERENCE_FORMAT}`);
}

/** Stop a container: SIGTERM to its script, SIGKILL after `seconds`. */
export function stopCommand(engine: EngineName, name: string, seconds: number): string[] {
  return commandLine([engine, 'stop'], [['--time', String(seconds)]], [name]);
}

export function removeCommand(engine: EngineName, name: string): string[] {
  return commandLine([engine, 'rm'], ['--force'], [name]);
}

export function imageExistsCommand(engine: EngineName, image: string): string[] {
  requireImage(image);
  return engine === 'podman' ? commandLine(['podman', 'image', 'exists'], [], [image]) : commandLine(['docker', 'image', 'inspect'], [['--format', '{{.Id}}']], [image]);
}

export function pullCommand(engine: EngineName, image: string): string[] {
  requireImage(image);
  return commandLine([engine, 'pull'], [], [image]);
}
