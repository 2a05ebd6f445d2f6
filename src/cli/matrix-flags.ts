import { Flags } from '#oclif';
import { TEST_TIERS } from '../container/plan.js';
import { MATRIX_DEFAULTS } from '../matrix/flags.js';
import { manifestFlag } from './stack.js';

/** Flags shared by `matrix` and `ci github|gitlab|k8s`. */
export const planFlags = {
  version: Flags.string({ char: 'v', description: 'ROCm release', required: true, helpValue: 'X.Y.Z' }),
  gpu: Flags.string({ char: 'g', description: "a gfx target to test (repeatable; default: the release's default-on targets)", multiple: true, helpValue: 'gfxNNNN' }),
  tests: Flags.string({ description: 'test tier of every job', options: [...TEST_TIERS], default: 'full' }),
  image: Flags.string({ description: 'the Gentoo stage3 image the jobs run in', default: MATRIX_DEFAULTS.image, helpValue: 'IMAGE' }),
  timeout: Flags.integer({ description: 'minutes each job may take', default: MATRIX_DEFAULTS.timeout, min: 1 }),
  manifest: manifestFlag,
};

/** Where a job runs, for CI systems that pick runners by label (not Kubernetes, which picks nodes). */
export const runnerFlags = {
  'label-scheme': Flags.string({ description: 'runner label of a gfx job; {gfx} is replaced', default: MATRIX_DEFAULTS.labelScheme, helpValue: 'SCHEME' }),
  'base-runner': Flags.string({ description: 'labels of the CPU runner of the base job, comma-separated', default: MATRIX_DEFAULTS.baseRunner, helpValue: 'LABELS' }),
};

export const matrixFlags = { ...planFlags, ...runnerFlags };

/** The paragraph of `ci github|gitlab|k8s --help` on --tool*: what the jobs install, and that nothing is written without it. */
export const TOOL_PIN_HELP = `Where the jobs get rocm-ebuild: never a registry name anyone could publish first. Give a pinned source:
--tool-git URL --tool-commit COMMIT (a full commit id: fetched by that id, checked out, installed with npm ci
from its package-lock.json) or --tool-tarball URL --tool-sha256 SHA256 (a source archive, checked before it is
unpacked); or --tool COMMAND, a command you vouch for. Without one, nothing is written (exit 2). The file's header
says what the jobs run and how to change it.`;

/** Flags of `ci github|gitlab|k8s`: where the file goes, and where its jobs get rocm-ebuild. */
export const ciFlags = {
  output: Flags.string({ char: 'o', description: 'file to write (default: print to standard output)', helpValue: 'FILE' }),
  'tool-git': Flags.string({
    description: 'the jobs install rocm-ebuild from this git repository, at --tool-commit (no default: this, --tool-tarball or --tool is needed)',
    helpValue: 'URL',
  }),
  'tool-commit': Flags.string({ description: 'the full commit id of rocm-ebuild in --tool-git the jobs check out (no default: a branch or tag can move)', helpValue: 'COMMIT' }),
  'tool-tarball': Flags.string({ description: 'instead of --tool-git: an https source archive of rocm-ebuild the jobs install, checked against --tool-sha256', helpValue: 'URL' }),
  'tool-sha256': Flags.string({ description: 'the SHA-256 the archive of --tool-tarball must have (no default)', helpValue: 'SHA256' }),
  tool: Flags.string({ description: 'how jobs run rocm-ebuild, as a shell command you vouch for (instead of a pinned source)', helpValue: 'COMMAND' }),
};
