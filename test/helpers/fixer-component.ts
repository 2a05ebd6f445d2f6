/**
 * A component using every kind of fix-up the format offers: a patch of
 * upstream's fetched by URL from one release on, replacements whose text
 * holds CMake's own ${…} (to stay literal in the file), a first-match-only
 * replacement, multi-line insertions, and operations on files that may be
 * absent. The YAML is written as a maintainer would (single-quoted scalars).
 */
export const FIXER = `name: fixer
atom: dev-libs/fixer
description: Library whose sources need every kind of fix-up the format has
homepage: https://github.com/ROCm/fixer
license: MIT
sources:
  - github: ROCm/fixer
build: cmake
patches:
  - url: https://github.com/ROCm/fixer/commit/0123456789abcdef0123456789abcdef01234567.patch
    distfile: fixer-6.3.0-0123456.patch
    reason: upstream's fix for building against a newer LLVM
    releases: { from: "6.3.0" }
prepare:
  - reason: the LLVM of the slot, found through CMake's own prefix variable
    replace: { files: [CMakeLists.txt], from: '\${ROCM_PATH}/llvm', to: '\\\${CMAKE_INSTALL_PREFIX}/lib/llvm/\${LLVM_SLOT}' }
  - replace: { files: [CMakeLists.txt], from: 'set(DOC "\${CMAKE_INSTALL_PREFIX}/doc")', to: 'set(DOC "\\\${CMAKE_INSTALL_PREFIX}/share/doc")' }
  - replace: { files: [version.txt], from: "0.0", to: "\${PV}", first: true }
  - replace: { files: [gone.cmake, CMakeLists.txt], from: "-O3", to: "", skip_missing: true }
  - delete_lines: { files: [absent.txt], matching: "-Werror", skip_missing: true }
  - insert:
      files: [CMakeLists.txt]
      after: "^project("
      lines:
        - include(GNUInstallDirs)
        - '\tset(FIXER_PREFIX "\${EPREFIX}/usr")'
        - ''
        - 'set(FIXER_DATA "\\\${CMAKE_INSTALL_DATADIR}/fixer" \\\$ & | * ; # \\\$(id))'
  - insert: { files: [version.txt], before: "^0\\\\.0", lines: ['# version \\\$Id\\\$'], first: true }
`;
