import { maskedLlvmSlotFlags } from '../model/llvm-masks.js';
import { REPORT_FILES, type JobPaths } from './layout.js';
import type { PlannedAtom, TestPlan } from './plan.js';

/** What one container builds and tests, and how. */
export interface ContainerJob {
  plan: TestPlan;
  /** The GPU's target; null for a build without a GPU (the target-independent base of a CI pipeline). */
  gfx: string | null;
  paths: JobPaths;
  /** Environment every src_test gets: ROCR_VISIBLE_DEVICES in place, GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS for a shard. */
  testEnv: Record<string, string>;
  /** The overlay's profiles/repo_name. */
  repoName: string;
  /** MAKEOPTS=-jN. */
  jobs: number;
  /** Seconds each atom under test may take (0: no limit). */
  timeoutSeconds: number;
  /** The host's groups of the device nodes: user portage joins them in the container. */
  gids: number[];
  /** Device nodes inside the container that user portage must be able to open. */
  devices: string[];
  /**
   * Whether Portage drops to user portage for building and testing. Rootless
   * podman maps the host's device groups only to the container's root
   * (--group-add keep-groups), so there the tests run as root (-userpriv).
   */
  userpriv: boolean;
}

/** A make.conf value: double-quoted; what could expand inside is refused (manifest values are already restricted). */
export function makeConfValue(value: string): string {
  if (/[\\"$`\n]/.test(value)) throw new Error(`refusing a make.conf value with \\, ", $, \` or a newline: ${JSON.stringify(value)}`);
  return `"${value}"`;
}

/**
 * The atom emerge is given for a package under test: this release's ebuild,
 * from the overlay. `~` takes PV and its revisions only (a `7.2.4*` glob
 * would take 7.2.40 too), and the sub-slot tells a held component's ebuild
 * (MIGraphX 7.2.4 in ROCm 10.0.0, SLOT 0/10.0) from the same PV of its own
 * release: emerge refuses rather than test the other one.
 */
export function emergeAtom(a: Pick<PlannedAtom, 'atom' | 'version' | 'slot'>, repoName: string): string {
  return `~${a.atom}-${a.version}:${a.slot}::${repoName}`;
}

export function envFileName(atom: string): string {
  return `rocm-ebuild/${atom.replace('/', '_')}.conf`;
}

const header = (job: ContainerJob) => `# Written by rocm-ebuild test: ROCm ${job.plan.release} ${job.gfx ? `on ${job.gfx}` : 'without a GPU'}.\n`;

/** A path for bash (the bashrc hook): single-quoted. */
function bashPath(p: string): string {
  return `'${p.replace(/'/g, `'\\''`)}'`;
}

/**
 * The Portage configuration of the container, as files under the setup
 * directory. conf/<kind> becomes /etc/portage/<kind>/rocm-ebuild, or is
 * appended when the image has <kind> as a file; env/ is copied into
 * /etc/portage/env; make.conf and bashrc are appended to theirs;
 * sandbox.conf becomes /etc/sandbox.d/90rocm-ebuild; profile/use.mask (the
 * LLVM slot ::gentoo masks, when the release needs one) is appended to
 * /etc/portage/profile/use.mask. conf/package.env
 * (FEATURES=test for the atoms under test) is installed only after the
 * dependencies are built, so no dependency runs its tests.
 */
export function portageFiles(job: ContainerJob): Record<string, string> {
  const h = header(job);
  const files: Record<string, string> = {};
  const { paths } = job;
  for (const p of Object.values(paths)) makeConfValue(p);
  files['conf/repos.conf'] =
    `${h}[gentoo]\nlocation = ${paths.tree}\n\n[${job.repoName}]\nlocation = ${paths.overlay}\nauto-sync = no\npriority = 100\n`;
  files['make.conf'] = [
    '',
    h.trimEnd(),
    ...(job.gfx ? [`AMDGPU_TARGETS=${makeConfValue(job.gfx)}`] : []),
    // buildpkg: every package built lands in the shared PKGDIR; binpkg-multi-instance keeps one per USE set (per gfx).
    `FEATURES=${makeConfValue(`buildpkg binpkg-multi-instance -news${job.userpriv ? '' : ' -userpriv -usersandbox'}`)}`,
    `PKGDIR=${makeConfValue(paths.pkgdir)}`,
    `DISTDIR=${makeConfValue(paths.distdir)}`,
    `PORT_LOGDIR=${makeConfValue(`${paths.log}/${REPORT_FILES.build}`)}`,
    `MAKEOPTS=${makeConfValue(`-j${job.jobs}`)}`,
    '',
  ].join('\n');
  // USE_EXPAND in package.use: "-*" drops the eclass's default-on targets, which make.conf alone would keep.
  files['conf/package.use'] = job.gfx ? `${h}*/* AMDGPU_TARGETS: -* ${job.gfx}\n` : h;
  files['conf/package.accept_keywords'] = `${h}${job.plan.stack.map((a) => `${a} ~amd64`).join('\n')}\n`;
  // An LLVM slot ::gentoo's profiles still mask (llvm_slot_23 for ROCm 10): every ebuild of the release needs it unmasked.
  const unmask = maskedLlvmSlotFlags([job.plan.llvmSlot]);
  if (unmask.length) files['profile/use.mask'] = `${h}# ::gentoo masks ${unmask.join(', ')} in profiles/base/use.mask; ROCm ${job.plan.release} is built with that LLVM.\n${unmask.map((f) => `-${f}`).join('\n')}\n`;
  const tested = job.plan.atoms.filter((a) => a.runTests);
  files['conf/package.env'] = `${h}${tested.map((a) => `${a.atom} ${envFileName(a.atom)}`).join('\n')}${tested.length ? '\n' : ''}`;
  for (const a of tested) {
    const env: Record<string, string> = {
      FEATURES: 'test',
      GTEST_OUTPUT: `xml:${paths.log}/${REPORT_FILES.gtest}/${a.atom}/`,
      ...job.testEnv,
      ...a.testEnv,
    };
    files[`env/${envFileName(a.atom)}`] = `${h}${Object.entries(env).map(([k, v]) => `${k}=${makeConfValue(v)}`).join('\n')}\n`;
  }
  // Each phase is reported to the host (the live progress line) through the report directory.
  files['bashrc'] =
    `\n${h}# Each ebuild phase, for the host's progress display.\n` +
    `if [[ -w ${bashPath(`${paths.log}/${REPORT_FILES.phases}`)} ]]; then\n` +
    `\tprintf '%s %s %s\\n' "$(date +%s)" "\${CATEGORY}/\${PN}" "\${EBUILD_PHASE}" >>${bashPath(`${paths.log}/${REPORT_FILES.phases}`)}\n` +
    'fi\n';
  // src_test writes gtest XML and phases there: the sandbox must allow it.
  files['sandbox.conf'] = `${h}SANDBOX_WRITE=${makeConfValue(`${paths.log}/`)}\n`;
  return files;
}

/** Where a file of the setup directory ends up in the container (what the script does with it), for --dry-run. */
export function setupFileDestination(name: string): string {
  if (name === 'run.sh') return 'the script the container runs';
  if (name === 'make.conf') return 'appended to /etc/portage/make.conf';
  if (name === 'bashrc') return 'appended to /etc/portage/bashrc';
  if (name === 'sandbox.conf') return '/etc/sandbox.d/90rocm-ebuild';
  if (name.startsWith('profile/')) return `appended to /etc/portage/${name}`;
  if (name === 'conf/package.env') return '/etc/portage/package.env/rocm-ebuild, once the dependencies are built';
  if (name.startsWith('conf/')) return `/etc/portage/${name.slice(5)}/rocm-ebuild`;
  if (name.startsWith('env/')) return `/etc/portage/${name}`;
  return name;
}
