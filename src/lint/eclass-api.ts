/**
 * What the eclasses our ebuilds inherit provide: functions, variables they
 * read or set, phases they export, and the eclasses they document as
 * @PROVIDES. Enough to report missing, indirect and unused inherits the way
 * pkgcheck does against the real eclasses.
 */
export interface EclassApi {
  functions: string[];
  variables: string[];
  phases: string[];
  provides: string[];
  /** Eclasses inherited (not provided): using their functions is IndirectInherits. */
  inherits: string[];
}

const PY_UTILS = [
  'python_domodule',
  'python_doscript',
  'python_doheader',
  'python_doexe',
  'python_newscript',
  'python_fix_shebang',
  'python_get_sitedir',
  'python_get_includedir',
  'python_get_library_path',
  'python_optimize',
  'python_has_version',
  'epytest',
  'eunittest',
  'python_export_utf8_locale',
];

export const ECLASSES: Record<string, EclassApi> = {
  cmake: {
    functions: ['cmake_src_prepare', 'cmake_src_configure', 'cmake_src_compile', 'cmake_src_test', 'cmake_src_install', 'cmake_build', 'cmake_comment_add_subdirectory', 'cmake_use_find_package', 'cmake_run_in'],
    variables: ['CMAKE_BUILD_TYPE', 'CMAKE_SKIP_TESTS', 'CMAKE_USE_DIR', 'BUILD_DIR', 'mycmakeargs', 'CMAKE_MAKEFILE_GENERATOR', 'CMAKE_QA_COMPAT_SKIP'],
    phases: ['src_prepare', 'src_configure', 'src_compile', 'src_test', 'src_install'],
    provides: ['ninja-utils'],
    inherits: ['flag-o-matic', 'multiprocessing', 'toolchain-funcs', 'xdg-utils'],
  },
  rocm: {
    functions: ['get_amdgpu_flags', 'check_amdgpu', 'rocm_use_hipcc', 'rocm_use_clang', 'rocm_add_sandbox'],
    variables: ['ROCM_VERSION', 'ROCM_SKIP_GLOBALS', 'ROCM_SUPPORTED_TARGETS', 'ROCM_REQUIRED_USE', 'ROCM_USEDEP', 'ROCM_USE_DEP'],
    phases: [],
    provides: [],
    inherits: ['flag-o-matic'],
  },
  'llvm-r2': {
    functions: ['llvm_gen_dep', 'get_llvm_prefix', 'llvm-r2_pkg_setup', 'llvm_prepend_path', 'llvm_fix_clang_version', 'llvm_fix_tool_path'],
    variables: ['LLVM_COMPAT', 'LLVM_SLOT', 'LLVM_OPTIONAL'],
    phases: ['pkg_setup'],
    provides: ['llvm-utils'],
    inherits: ['multilib'],
  },
  'python-single-r1': {
    functions: ['python_gen_cond_dep', 'python_gen_useflags', 'python-single-r1_pkg_setup', 'python_setup', ...PY_UTILS],
    variables: ['PYTHON_COMPAT', 'PYTHON_DEPS', 'PYTHON_REQUIRED_USE', 'PYTHON_USEDEP', 'PYTHON_SINGLE_USEDEP', 'EPYTHON', 'PYTHON', 'EPYTEST_DESELECT', 'EPYTEST_IGNORE'],
    phases: ['pkg_setup'],
    provides: ['python-utils-r1'],
    inherits: ['multibuild'],
  },
  'python-r1': {
    functions: ['python_foreach_impl', 'python_setup', 'python_gen_cond_dep', 'python_gen_any_dep', 'python_gen_useflags', 'python_copy_sources', 'python_replicate_script', ...PY_UTILS],
    variables: ['PYTHON_COMPAT', 'PYTHON_DEPS', 'PYTHON_REQUIRED_USE', 'PYTHON_USEDEP', 'EPYTHON', 'PYTHON', 'EPYTEST_DESELECT', 'EPYTEST_IGNORE'],
    phases: [],
    provides: ['python-utils-r1'],
    inherits: ['multibuild'],
  },
  'python-any-r1': {
    functions: ['python_gen_any_dep', 'python_check_deps', 'python-any-r1_pkg_setup', 'python_setup', ...PY_UTILS],
    variables: ['PYTHON_COMPAT', 'PYTHON_DEPS', 'PYTHON_USEDEP', 'EPYTHON', 'PYTHON'],
    phases: ['pkg_setup'],
    provides: ['python-utils-r1'],
    inherits: [],
  },
  'distutils-r1': {
    functions: [
      'distutils_enable_tests',
      'distutils_enable_sphinx',
      'distutils-r1_src_prepare',
      'distutils-r1_src_configure',
      'distutils-r1_src_compile',
      'distutils-r1_src_test',
      'distutils-r1_src_install',
      'distutils-r1_python_prepare_all',
      'distutils-r1_python_compile',
      'distutils-r1_python_install',
      'distutils-r1_python_install_all',
      'python_foreach_impl',
      'python_gen_cond_dep',
      'python_gen_any_dep',
      ...PY_UTILS,
    ],
    variables: ['DISTUTILS_USE_PEP517', 'DISTUTILS_SINGLE_IMPL', 'DISTUTILS_OPTIONAL', 'DISTUTILS_EXT', 'PYTHON_COMPAT', 'PYTHON_DEPS', 'PYTHON_REQUIRED_USE', 'PYTHON_USEDEP', 'EPYTHON', 'PYTHON', 'EPYTEST_DESELECT', 'EPYTEST_IGNORE'],
    phases: ['src_prepare', 'src_configure', 'src_compile', 'src_test', 'src_install'],
    provides: ['python-r1', 'python-utils-r1'],
    inherits: ['multibuild', 'multiprocessing', 'toolchain-funcs'],
  },
  'flag-o-matic': {
    functions: ['append-flags', 'append-cflags', 'append-cxxflags', 'append-cppflags', 'append-ldflags', 'append-fflags', 'filter-flags', 'filter-lto', 'filter-ldflags', 'replace-flags', 'strip-flags', 'strip-unsupported-flags', 'test-flags', 'test-flags-CC', 'test-flags-CXX', 'test-flags-HIPCXX', 'is-flagq', 'is-flag', 'append-atomic-flags'],
    variables: [],
    phases: [],
    provides: [],
    inherits: ['toolchain-funcs'],
  },
  edo: { functions: ['edo', 'edob'], variables: [], phases: [], provides: [], inherits: [] },
  multiprocessing: { functions: ['makeopts_jobs', 'makeopts_loadavg', 'get_nproc'], variables: [], phases: [], provides: [], inherits: [] },
  'check-reqs': {
    functions: ['check-reqs_pkg_pretend', 'check-reqs_pkg_setup'],
    variables: ['CHECKREQS_DISK_BUILD', 'CHECKREQS_DISK_USR', 'CHECKREQS_MEMORY'],
    phases: ['pkg_pretend', 'pkg_setup'],
    provides: [],
    inherits: [],
  },
  'linux-info': {
    functions: ['linux-info_pkg_setup', 'linux_config_exists', 'linux_chkconfig_present', 'check_extra_config', 'kernel_is'],
    variables: ['CONFIG_CHECK', 'ERROR_'],
    phases: ['pkg_setup'],
    provides: [],
    inherits: ['toolchain-funcs'],
  },
  'ffmpeg-compat': { functions: ['ffmpeg_compat_setup', 'ffmpeg_compat_add_flags', 'ffmpeg_compat_get_prefix'], variables: [], phases: [], provides: [], inherits: ['flag-o-matic', 'toolchain-funcs'] },
  systemd: { functions: ['systemd_dounit', 'systemd_newunit', 'systemd_get_systemunitdir', 'systemd_get_userunitdir', 'systemd_douserunit', 'systemd_dotmpfilesd', 'systemd_install_serviced'], variables: [], phases: [], provides: [], inherits: ['toolchain-funcs'] },
  docs: { functions: ['docs_compile'], variables: ['DOCS_BUILDER', 'DOCS_DIR', 'DOCS_DEPEND'], phases: ['src_compile'], provides: [], inherits: ['python-any-r1'] },
  'toolchain-funcs': { functions: ['tc-getCC', 'tc-getCXX', 'tc-getFC', 'tc-is-clang', 'tc-is-gcc', 'tc-export'], variables: [], phases: [], provides: [], inherits: [] },
  prefix: { functions: ['eprefixify', 'hprefixify', 'prefixify_ro'], variables: [], phases: [], provides: [], inherits: [] },
  'perl-functions': { functions: ['perl_domodule', 'perl_set_version'], variables: [], phases: [], provides: [], inherits: [] },
  'fortran-2': { functions: ['fortran-2_pkg_setup'], variables: ['FORTRAN_NEEDED', 'FORTRAN_STANDARD'], phases: ['pkg_setup'], provides: [], inherits: ['toolchain-funcs'] },
};

/** Eclasses reachable from `eclass` by inheritance, split by whether they are @PROVIDES. */
export function reachable(eclass: string): { provided: Set<string>; indirect: Set<string> } {
  const provided = new Set<string>();
  const indirect = new Set<string>();
  const visit = (name: string, viaProvides: boolean) => {
    const api = ECLASSES[name];
    if (!api) return;
    for (const p of api.provides) {
      if (viaProvides && !provided.has(p)) {
        provided.add(p);
        visit(p, true);
      }
    }
    for (const i of api.inherits) {
      if (!indirect.has(i) && !provided.has(i)) {
        indirect.add(i);
        visit(i, false);
      }
    }
  };
  visit(eclass, true);
  return { provided, indirect };
}

/** Every eclass that defines `fn` (several python eclasses share helpers). */
export function eclassesOfFunction(fn: string): string[] {
  const out = Object.entries(ECLASSES)
    .filter(([, api]) => api.functions.includes(fn))
    .map(([name]) => name);
  if (PY_UTILS.includes(fn)) out.push('python-utils-r1');
  return out;
}
