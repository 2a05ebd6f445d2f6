import { shellLine } from '../util/argv.js';
import type { Matrix, MatrixJob } from './plan.js';
import type { ToolSetup, ToolSource } from './tool-source.js';

/** What every engine's jobs need besides the plan. */
export interface EmitOptions {
  /** Where the jobs get rocm-ebuild: a pinned source, or the command --tool gave. */
  tool: ToolSource;
  /** The command line that regenerates the file (written in its header). */
  regenerate: string;
}

/** Inside a job's container (the Gentoo stage3): the fixed places the emitted jobs use. */
export const CI_PATHS = { pkgdir: '/var/cache/binpkgs', distdir: '/var/cache/distfiles', tree: '/var/db/repos/gentoo' } as const;

/**
 * `rocm-ebuild test …` for one job, run in place (--engine none) in the job's
 * container, as one shell line: every word quoted by the shell quoting of the
 * argv builder, except `raw` words (a shell variable the job sets, such as
 * "$CI_PROJECT_DIR"), which are ours.
 */
export function testCommand(job: MatrixJob, tool: string, where: { overlay: string; reports: string; pkgdir?: string }): string {
  return [
    tool,
    shellLine(['test', ...job.atoms]),
    '--overlay',
    where.overlay,
    shellLine([...job.testArgs, '--engine', 'none']),
    '--pkgdir',
    where.pkgdir ?? CI_PATHS.pkgdir,
    '--distdir',
    CI_PATHS.distdir,
    '--report-dir',
    where.reports,
  ].join(' ');
}

/** What a fresh stage3 needs before rocm-ebuild runs: the tree, and Node.js (and git, when the tool comes from git) from Gentoo's binary host. */
export const PREPARE_TREE = 'emerge-webrsync --quiet';
export const fromBinhost = (packages: string[]) => `getuto && emerge --getbinpkg --oneshot --quiet ${packages.join(' ')}`;
export const installNode = (git: boolean) => fromBinhost(['net-libs/nodejs', ...(git ? ['dev-vcs/git'] : [])]);

/** The `matrix` command line that prints the plan a file was made from. */
export function matrixCommand(m: Matrix): string {
  return shellLine(['matrix', '--version', m.version, '--tests', m.tests, ...m.gfx.flatMap((g) => ['--gpu', g])]);
}

/** The comment every generated file starts with: what it is, what it trusts, what its jobs run, how to regenerate it. */
export function header(kind: string, m: Matrix, options: EmitOptions, tool: ToolSetup, trusts: string[]): string[] {
  return [
    `${kind} for ROCm ${m.version} on ${m.gfx.join(' ')} (${m.tests} tests), ${m.jobs.length} jobs.`,
    ...tool.describe,
    'Written by rocm-ebuild; change the options and regenerate instead of editing:',
    `  ${options.regenerate}`,
    'Another rocm-ebuild for the jobs: --tool-git URL --tool-commit COMMIT,',
    '--tool-tarball URL --tool-sha256 SHA256, or --tool COMMAND.',
    '',
    ...trusts,
  ];
}
