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
  /** ROCm's runtime needs syscalls the default seccomp profiles refuse; only containers that run GPU code get this. */
  seccompUnconfined: boolean;
  mounts: BindMount[];
  labels: Record<string, string>;
  /** --rm: gone when it ends (not with --keep). */
  remove: boolean;
  command: string[];
}

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
 * before, so nothing is fetched behind the user's back.
 */
export function runCommand(spec: RunSpec): string[] {
  const argv: string[] = [spec.engine, 'run', '--interactive', '--name', spec.name, '--pull=never'];
  if (spec.remove) argv.push('--rm');
  for (const [k, v] of Object.entries(spec.labels)) argv.push('--label', `${k}=${v}`);
  for (const d of spec.devices) {
    checkPath(d.host);
    argv.push('--device', d.host === d.container ? d.host : `${d.host}:${d.container}`);
  }
  if (spec.groups === 'keep-groups') argv.push('--group-add', 'keep-groups');
  else for (const g of [...new Set(spec.groups)]) argv.push('--group-add', String(g));
  if (spec.seccompUnconfined) argv.push('--security-opt', 'seccomp=unconfined');
  for (const m of spec.mounts) {
    checkPath(m.host);
    argv.push('--volume', `${m.host}:${m.container}${m.readOnly ? ':ro' : ''}`);
  }
  argv.push(spec.image, ...spec.command);
  return argv;
}

/** Stop a container: SIGTERM to its script, SIGKILL after `seconds`. */
export function stopCommand(engine: EngineName, name: string, seconds: number): string[] {
  return [engine, 'stop', '--time', String(seconds), name];
}

export function removeCommand(engine: EngineName, name: string): string[] {
  return [engine, 'rm', '--force', name];
}

export function imageExistsCommand(engine: EngineName, image: string): string[] {
  return engine === 'podman' ? ['podman', 'image', 'exists', image] : ['docker', 'image', 'inspect', '--format', '{{.Id}}', image];
}

export function pullCommand(engine: EngineName, image: string): string[] {
  return [engine, 'pull', image];
}

/** One argv as a shell line, for --dry-run and messages: words quoted only where needed. */
export function shellLine(argv: readonly string[]): string {
  return argv.map((w) => (/^[A-Za-z0-9_./:=@%+,-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`)).join(' ');
}
