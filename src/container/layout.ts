/**
 * Where things are inside the test container. The host mounts its directories
 * at these paths; the generated Portage configuration and script refer to them.
 */
export const IN_CONTAINER = {
  /** ::gentoo, read-only. */
  tree: '/var/db/repos/gentoo',
  /** The overlay under test, read-only, at /var/db/repos/<repo_name>. */
  overlay: (repoName: string) => `/var/db/repos/${repoName}`,
  distdir: '/var/cache/distfiles',
  /** Binary packages shared by every container and every run. */
  pkgdir: '/var/cache/binpkgs',
  /** The report directory of this GPU: status, phases, Portage's build logs, gtest XML. */
  log: '/var/log/rocm-ebuild',
  /** The generated configuration and script, read-only. */
  setup: '/rocm-ebuild',
} as const;

/** Where one job's Portage finds and puts things: the container's paths, or this machine's when run in place. */
export interface JobPaths {
  tree: string;
  overlay: string;
  distdir: string;
  pkgdir: string;
  /** The report directory of this job. */
  log: string;
  /** The generated configuration and script. */
  setup: string;
}

export function containerPaths(repoName: string): JobPaths {
  return { tree: IN_CONTAINER.tree, overlay: IN_CONTAINER.overlay(repoName), distdir: IN_CONTAINER.distdir, pkgdir: IN_CONTAINER.pkgdir, log: IN_CONTAINER.log, setup: IN_CONTAINER.setup };
}

/** Files the container writes into the report directory. */
export const REPORT_FILES = {
  /** One line per step: step|atom|exit status|seconds|note (the authoritative results). */
  status: 'status',
  /** One line per ebuild phase, from /etc/portage/bashrc: epoch category/PN phase. */
  phases: 'phases',
  /** PORT_LOGDIR: Portage's build log of each package. */
  build: 'build',
  /** GTEST_OUTPUT of each package under test: gtest/<category>/<PN>/*.xml. */
  gtest: 'gtest',
  /** Everything the container printed. */
  console: 'console.log',
} as const;
