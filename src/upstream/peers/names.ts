/**
 * How the peers name what we name: data, kept in one table so that a
 * maintainer changes a name here, not in the code that compares.
 *
 * ::gentoo names our packages by the same atoms, except where listed.
 * Spack names each component by its own package name (its directory under
 * repos/spack_repo/builtin/packages has '_' for '-'); a Spack dependency name
 * maps to a Gentoo atom through our own packages' names first, then the
 * explicit table below, and a name in neither is reported as unmapped (never
 * guessed). Some Spack dependencies are what an ebuild gets from its eclasses
 * or the toolchain; they are not compared.
 */

/** Our atom → ::gentoo's, where they differ. */
export const GENTOO_ATOMS: Readonly<Record<string, string>> = {
  'sci-libs/hipSPARSELt': 'sci-libs/hipsparselt',
};

/** Our component name → Spack's package name; a component Spack does not package is absent. */
export const SPACK_PACKAGES: Readonly<Record<string, string>> = {
  AMDMIGraphX: 'migraphx',
  HIPIFY: 'hipify-clang',
  MIOpen: 'miopen-hip',
  MIVisionX: 'mivisionx',
  'ROCR-Runtime': 'hsa-rocr-dev',
  'ROCT-Thunk-Interface': 'hsakmt-roct',
  ROCdbgapi: 'rocm-dbgapi',
  ROCmValidationSuite: 'rocm-validation-suite',
  Tensile: 'rocm-tensile',
  amdsmi: 'amdsmi',
  composable_kernel: 'composable-kernel',
  hip: 'hip',
  'hipBLAS-common': 'hipblas-common',
  hipBLAS: 'hipblas',
  hipBLASLt: 'hipblaslt',
  hipCUB: 'hipcub',
  hipFFT: 'hipfft',
  hipRAND: 'hiprand',
  hipSOLVER: 'hipsolver',
  hipSPARSE: 'hipsparse',
  hipSPARSELt: 'hipsparselt',
  hipTensor: 'hip-tensor',
  hipcc: 'hipcc',
  hipfort: 'hipfort',
  rccl: 'rccl',
  rdc: 'rdc',
  rocAL: 'rocal',
  rocALUTION: 'rocalution',
  rocBLAS: 'rocblas',
  rocDecode: 'rocdecode',
  rocFFT: 'rocfft',
  rocJPEG: 'rocjpeg',
  rocPRIM: 'rocprim',
  rocPyDecode: 'rocpydecode',
  rocRAND: 'rocrand',
  rocSOLVER: 'rocsolver',
  rocSPARSE: 'rocsparse',
  rocThrust: 'rocthrust',
  rocWMMA: 'rocwmma',
  'rocm-cmake': 'rocm-cmake',
  'rocm-comgr': 'comgr',
  'rocm-core': 'rocm-core',
  'rocm-device-libs': 'rocm-device-libs',
  'rocm-opencl-runtime': 'rocm-opencl',
  rocm_bandwidth_test: 'rocm-bandwidth-test',
  rocm_smi_lib: 'rocm-smi-lib',
  rocminfo: 'rocminfo',
  rocr_debug_agent: 'rocm-debug-agent',
  roctracer: 'roctracer-dev',
  rpp: 'rpp',
};

/**
 * Spack dependency names that name what an ebuild does not list: the
 * compilers (Spack's language virtuals), the build tool cmake.eclass pulls
 * in, and ROCm's own LLVM, which Gentoo replaces with its LLVM slot (the
 * `llvm` fact, compared with ::gentoo only).
 */
export const SPACK_IMPLICIT: Readonly<Record<string, string>> = {
  c: 'the C compiler',
  cxx: 'the C++ compiler',
  fortran: 'the Fortran compiler',
  cmake: 'cmake.eclass',
  gmake: 'the build tool',
  ninja: 'the build tool',
  'llvm-amdgpu': "ROCm's LLVM (an ebuild uses Gentoo's LLVM slot)",
  'rocm-openmp-extras': "ROCm's OpenMP build (an ebuild uses Gentoo's llvm-runtimes/openmp)",
};

/** Spack dependency names whose Gentoo package has another name (those with the same package name are found in our data). */
export const SPACK_ATOMS: Readonly<Record<string, string>> = {
  googletest: 'dev-cpp/gtest',
  fmt: 'dev-libs/libfmt',
  'msgpack-c': 'dev-cpp/msgpack-cxx',
  'nlohmann-json': 'dev-cpp/nlohmann_json',
  pkgconfig: 'virtual/pkgconfig',
  python: 'dev-lang/python',
  'py-pyyaml': 'dev-python/pyyaml',
  'py-msgpack': 'dev-python/msgpack',
  'py-joblib': 'dev-python/joblib',
  'py-setuptools': 'dev-python/setuptools',
  'py-nanobind': 'dev-python/nanobind',
  'py-numpy': 'dev-python/numpy',
  'py-pybind11': 'dev-python/pybind11',
  'py-packaging': 'dev-python/packaging',
  'py-wheel': 'dev-python/wheel',
  'py-pip': 'dev-python/pip',
  'netlib-lapack': 'virtual/lapack',
  'libjpeg-turbo': 'media-libs/libjpeg-turbo',
  'zlib-api': 'virtual/zlib',
  gl: 'virtual/opengl',
};

/**
 * Spack variants that stand for one of our USE flags (when the component
 * has that flag), and what they mean otherwise: ROCm is the platform every
 * package of ours builds for, CUDA is not.
 */
export const SPACK_VARIANTS: Readonly<Record<string, { use: string; otherwise: boolean }>> = {
  rocm: { use: 'video_cards_amdgpu', otherwise: true },
  cuda: { use: 'video_cards_nvidia', otherwise: false },
};

/** The Spack package directory of a package name ("hip-tensor" → "hip_tensor"). */
export function spackDir(name: string): string {
  return name.replace(/-/g, '_');
}
