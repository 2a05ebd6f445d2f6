import { readdirSync } from 'node:fs';
import { ECLASSES } from './eclass-api.js';

/**
 * Eclasses of ::gentoo, as data. An inherit of anything else fails when
 * Portage sources the ebuild (pkgcheck: InheritsError). The list is the
 * unmodified ::gentoo subset flatcar/scripts carries (portage-stable,
 * 2026-08), the eclasses our ebuilds use, and ones known to be current;
 * where a Gentoo repository exists on the machine (/var/db/repos/gentoo),
 * its eclass/ directory is read as well and is the authority.
 */
const KNOWN = [
  'acct-group', 'acct-user', 'alternatives', 'app-alternatives', 'autotools', 'bash-completion-r1', 'branding',
  'cargo', 'check-reqs', 'cmake', 'cmake-multilib', 'crossdev', 'cuda', 'db-use', 'desktop', 'dist-kernel-utils',
  'distutils-r1', 'docs', 'dot-a', 'eapi8-dosym', 'eapi9-pipestatus', 'eapi9-ver', 'ecm', 'edo', 'edos2unix',
  'elisp', 'elisp-common', 'estack', 'fcaps', 'ffmpeg-compat', 'flag-o-matic', 'font', 'fortran-2', 'git-r3',
  'gnome.org', 'gnome2-utils', 'gnuconfig', 'go-env', 'go-module', 'golang-base', 'golang-vcs',
  'golang-vcs-snapshot', 'guile-single', 'guile-utils', 'java-pkg-opt-2', 'java-utils-2', 'kernel-2', 'libtool',
  'linux-info', 'linux-mod-r1', 'llvm', 'llvm-r1', 'llvm-r2', 'llvm-utils', 'lua-single', 'lua-utils', 'mercurial',
  'meson', 'meson-multilib', 'mono-env', 'mount-boot', 'mount-boot-utils', 'multibuild', 'multilib',
  'multilib-build', 'multilib-minimal', 'multiprocessing', 'ninja-utils', 'optfeature', 'out-of-source',
  'out-of-source-utils', 'pam', 'pax-utils', 'perl-functions', 'perl-module', 'plocale', 'portability', 'prefix',
  'preserve-libs', 'pypi', 'python-any-r1', 'python-r1', 'python-single-r1', 'python-utils-r1', 'qmake-utils',
  'qt-utils', 'readme.gentoo-r1', 'rocm', 'rpm', 'ruby-single', 'ruby-utils', 'rust', 'rust-toolchain', 'savedconfig',
  'secureboot', 'selinux-policy-2', 'sgml-catalog-r1', 'shell-completion', 'ssl-cert', 'strip-linguas',
  'subversion', 'sysroot', 'systemd', 'tmpfiles', 'toolchain', 'toolchain-autoconf', 'toolchain-funcs',
  'tree-sitter-grammar', 'udev', 'unpacker', 'user-info', 'usr-ldscript', 'vala', 'vcs-clean', 'vcs-snapshot',
  'verify-sig', 'vim-doc', 'vim-plugin', 'virtualx', 'waf-utils', 'wrapper', 'xdg', 'xdg-utils', 'xorg-3',
];

/** Eclasses whose @ECLASS block says @DEPRECATED in ::gentoo (what pkgcheck reports), with the replacement. */
export const DEPRECATED_ECLASSES: Record<string, string> = {
  llvm: 'llvm-r2',
  'llvm-r1': 'llvm-r2',
  'golang-base': 'go-module',
  'golang-vcs': 'go-module',
  'golang-vcs-snapshot': 'go-module',
};

/** Eclasses ::gentoo removed, and what replaced them. */
export const REMOVED_ECLASSES: Record<string, string> = {
  eutils: 'EAPI 7/8 built-ins and the small eclasses it was split into (edos2unix, estack, optfeature, wrapper, …)',
  versionator: "EAPI 7's ver_cut, ver_rs and ver_test",
  'eapi7-ver': "EAPI 7's ver_cut, ver_rs and ver_test",
  ltprune: 'find "${ED}" -name "*.la" -delete',
  user: 'acct-user/* and acct-group/* packages',
  'cmake-utils': 'cmake',
  epatch: 'eapply and PATCHES',
  'autotools-utils': 'autotools with econf',
  base: 'the EAPI default phases',
  distutils: 'distutils-r1',
  python: 'python-r1, python-single-r1 or python-any-r1',
  'git-2': 'git-r3',
  'fdo-mime': 'xdg-utils',
  'xorg-2': 'xorg-3',
  'readme.gentoo': 'readme.gentoo-r1',
};

let local: Set<string> | undefined;

/** The eclass names of a Gentoo repository on this machine, if there is one. */
function localGentooEclasses(): Set<string> {
  if (local) return local;
  local = new Set();
  for (const dir of [process.env.ROCM_EBUILD_GENTOO_REPO, '/var/db/repos/gentoo'].filter((d): d is string => Boolean(d))) {
    try {
      for (const f of readdirSync(`${dir}/eclass`)) if (f.endsWith('.eclass')) local.add(f.slice(0, -'.eclass'.length));
    } catch {
      // No repository there.
    }
  }
  return local;
}

/** Whether `eclass` exists: in ::gentoo (as far as known here), or among `extra` (an overlay's own). */
export function eclassExists(eclass: string, extra: Iterable<string> = []): boolean {
  return KNOWN.includes(eclass) || eclass in ECLASSES || localGentooEclasses().has(eclass) || [...extra].includes(eclass);
}
