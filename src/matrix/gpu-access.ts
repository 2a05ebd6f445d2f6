import { GPU_CAPABILITIES } from '../container/command.js';
import { shellLine } from '../util/argv.js';

/**
 * What a generated CI job's container gets to reach its GPU, the same for
 * every engine: /dev/kfd and the one render node of the GPU the job is for
 * (never the host's whole /dev/dri, which is every GPU of the machine), the
 * groups that own those two nodes, and the engine's default seccomp profile
 * with one capability added. ROCr sets NUMA memory policies (mbind,
 * set_mempolicy, get_mempolicy); the default profiles of Docker, Podman and
 * containerd allow those calls only to a process holding CAP_SYS_NICE, so
 * adding that capability keeps the profile in force, where
 * `seccomp=unconfined` would switch it off for every syscall. No-new-
 * privileges: nothing in the job gains privileges through a setuid program.
 */
export { GPU_CAPABILITIES };

/** The render node a plan names for a GPU job: which one is chosen on the host that runs it. */
export const RENDER_NODE_PLACEHOLDER = '/dev/dri/renderD<N>';

/** The environment variable a GPU runner's host sets to pin the render node of the GPU it is for. */
export const RENDER_NODE_VARIABLE = 'ROCM_EBUILD_RENDER_NODE';

/**
 * A bash script, run on the GPU runner's host before the job's container
 * starts, that chooses the render node of the job's GPU and appends
 * `RENDER_NODE=/dev/dri/renderD<minor>` to the file `$GITHUB_ENV` names.
 * It reads the KFD topology (under $ROCM_EBUILD_SYSFS_ROOT, the seam the
 * tests use, as `rocm-ebuild gpu list` does): the GPU whose
 * gfx_target_version is $GFX_VERSION, or, when the runner's environment sets
 * ROCM_EBUILD_RENDER_NODE (a host with several GPUs of one gfx, one runner
 * per GPU), that node if it is such a GPU. Anything else stops the job: no
 * GPU of the gfx, several and no choice, or a choice that is not one.
 */
export function renderNodeScript(): string {
  const v = RENDER_NODE_VARIABLE;
  return [
    'found=',
    'for p in "${ROCM_EBUILD_SYSFS_ROOT:-}"/sys/class/kfd/kfd/topology/nodes/*/properties; do',
    '  [ -r "$p" ] || continue',
    `  version=$(awk '$1 == "gfx_target_version" { print $2 }' "$p")`,
    `  minor=$(awk '$1 == "drm_render_minor" { print $2 }' "$p")`,
    '  [ "$version" = "$GFX_VERSION" ] || continue',
    "  case $minor in '' | *[!0-9]* | 0) continue ;; esac",
    `  if [ -z "\${${v}:-}" ] || [ "/dev/dri/renderD$minor" = "\${${v}}" ]; then found="$found /dev/dri/renderD$minor"; fi`,
    'done',
    'set -- $found',
    'if [ "$#" -ne 1 ]; then',
    `  if [ -n "\${${v}:-}" ]; then echo "::error::${v}=\${${v}} is not a $GFX GPU of this host (rocm-ebuild gpu list shows its GPUs)"`,
    '  elif [ "$#" -eq 0 ]; then echo "::error::this host has no $GFX GPU: the runner\'s labels do not match its GPUs (rocm-ebuild gpu list shows them)"',
    `  else echo "::error::this host has $# $GFX GPUs ($*): set ${v} in the runner's .env to the render node of the GPU this runner is for"`,
    '  fi',
    '  exit 1',
    'fi',
    'echo "RENDER_NODE=$1" >> "$GITHUB_ENV"',
    'echo "$GFX: $1"',
  ].join('\n');
}

/** A container the CI job's host starts with `docker create`, fills with `docker cp` and runs with `docker start`. */
export interface HostContainer {
  image: string;
  /** Give the GPU: /dev/kfd and the node in $RENDER_NODE, their groups, the capability ROCr's NUMA calls need. */
  gpu: boolean;
  /** Host environment variables passed on by name (their values never pass through a shell of ours). */
  passEnv: string[];
  /** Fixed variables for the container. */
  env: Record<string, string>;
  /** Host directories (relative to the job's directory) copied into the container before it starts, host → container: a path the image does not have, in a directory it has. */
  copyIn: [string, string][];
  /** Container directories copied out after it stopped, whatever its exit, container → host: into the host directory, under their own name. */
  copyOut: [string, string][];
  /** The host variable holding the script the container runs with /bin/sh -c. */
  scriptVariable: string;
}

/** The container's name on the host: unique per run, attempt and job (JOB_ID), so a cleanup step can find it. */
export const HOST_CONTAINER_NAME = '"rocm-ebuild-$GITHUB_RUN_ID-$GITHUB_RUN_ATTEMPT-$JOB_ID"';

/**
 * The host side of a job that runs in a container the job starts itself
 * rather than in the CI system's job container: GitHub's job container
 * would get the runner's Docker socket (root on the host for whatever the
 * job runs) and only options fixed when the workflow was written, so no
 * render node chosen on the host. Copied in and out with `docker cp`: the
 * host's directories are never mounted, and nothing the container writes
 * reaches the host owned by its root.
 */
export function hostContainerScript(c: HostContainer): string {
  const options: string[] = ['--security-opt no-new-privileges'];
  if (c.gpu) {
    options.push(
      '--device "$dev/dev/kfd:/dev/kfd"',
      '--device "$dev$RENDER_NODE:$RENDER_NODE"',
      '--group-add "$(stat -c %g "$dev/dev/kfd")"',
      '--group-add "$(stat -c %g "$dev$RENDER_NODE")"',
      ...GPU_CAPABILITIES.map((cap) => `--cap-add ${cap}`),
    );
  }
  for (const [k, v] of Object.entries(c.env)) options.push(`--env ${shellLine([`${k}=${v}`])}`);
  for (const k of c.passEnv) options.push(`--env ${k}`);
  return [
    `name=${HOST_CONTAINER_NAME}`,
    // The device nodes under ROCM_EBUILD_DEV_ROOT: the seam `rocm-ebuild test` and `gpu list` read too (the tests' fake /dev).
    ...(c.gpu ? ['dev=${ROCM_EBUILD_DEV_ROOT:-}'] : []),
    `docker create --name "$name" ${options.join(' ')} -- ${shellLine([c.image, '/bin/sh', '-c'])} "$${c.scriptVariable}"`,
    ...c.copyIn.map(([from, to]) => `docker cp ${shellLine([from])} "$name":${shellLine([to])}`),
    'status=0',
    'docker start --attach "$name" || status=$?',
    ...c.copyOut.map(([from, to]) => `mkdir -p ${shellLine([to])} && docker cp "$name":${shellLine([from])} ${shellLine([`${to}/`])} || { [ "$status" -ne 0 ] || status=1; }`),
    'exit "$status"',
  ].join('\n');
}

/** The cleanup step's script: the container is removed whatever happened (a cancelled job's too). */
export const REMOVE_HOST_CONTAINER = `docker rm --force ${HOST_CONTAINER_NAME} >/dev/null 2>&1 || true`;
