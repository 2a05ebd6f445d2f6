import { copyFile } from 'node:fs/promises';
import path from 'node:path';
import { root, tempDir, writeTree } from './project.js';

/**
 * A small, valid stack in a temp directory: a host library, a GPU library
 * depending on it, and an application. Tests overwrite single files to
 * produce exactly the mistake they check.
 */
export const BASE_FILES: Record<string, string> = {
  'stack.yaml': `name: Test stack
repo_name: test
releases:
  "6.2.2": { llvm_slot: 18 }
  "6.3.0": { llvm_slot: 19 }
python:
  compat: python3_{11..14}
  current: [python3_11, python3_12, python3_13, python3_14]
  default: [python3_13]
targets: targets.yaml
external:
  - external.yaml
components:
  - components/*.yaml
`,
  'external.yaml': `packages:
  dev-cpp/gtest: { subslot: false }
  dev-libs/boost: { subslot: true }
  llvm-core/clang: { subslot: true, eclass: true }
`,
  'components/base.yaml': `name: base
atom: dev-libs/rocm-base
description: Host library every other test component builds on
homepage: https://github.com/ROCm/base
license: MIT
sources:
  - github: ROCm/base
build: cmake
`,
  'components/gpulib.yaml': `name: gpulib
atom: sci-libs/gpulib
description: A GPU library with device code for the selected targets
homepage: https://github.com/ROCm/gpulib
license: MIT
sources:
  - github: ROCm/gpulib
build: cmake
compiler: hipcc
targets:
  mode: full
  cmake_vars: [AMDGPU_TARGETS]
use:
  benchmark:
    description: Build the benchmark program
deps:
  - atom: dev-libs/rocm-base
    classes: [RDEPEND, DEPEND]
  - atom: dev-libs/boost
    classes: [DEPEND]
    slot: "="
cmake:
  defines:
    BUILD_BENCHMARK: { use: benchmark }
tests:
  gpu: true
overrides:
  - versions: { from: "6.3.0" }
    set:
      targets: { cmake_vars: [GPU_TARGETS] }
`,
  'components/app.yaml': `name: app
atom: sci-libs/app
description: An application linking the GPU library
homepage: https://github.com/ROCm/app
license: MIT
sources:
  - github: ROCm/app
build: cmake
compiler: hipcc
targets:
  mode: full
  cmake_vars: [AMDGPU_TARGETS]
deps:
  - atom: sci-libs/gpulib
    classes: [RDEPEND, DEPEND]
    gpu: true
`,
};

export async function fixtureManifest(overrides: Record<string, string | null> = {}): Promise<string> {
  const dir = await tempDir('rocm-ebuild-manifest-');
  const files = { ...BASE_FILES, ...overrides };
  await writeTree(
    dir,
    Object.fromEntries(Object.entries(files).filter((e): e is [string, string] => e[1] !== null)),
  );
  await copyFile(path.join(root, 'manifest', 'targets.yaml'), path.join(dir, 'targets.yaml'));
  return dir;
}

/**
 * The fixture stack with every key the schemas define given a valid value
 * somewhere: a CMake library with all sections, a Python package and a
 * package tested by a command. Tests that walk the schemas (hostile values in
 * every field) use it as the place to put each value; a schema key the
 * fixture lacks fails those tests by name.
 */
export const FULL_FILES: Record<string, string> = {
  ...BASE_FILES,
  'stack.yaml': `name: Test stack
repo_name: test
defaults:
  tag: rocm-\${PV}
  keywords: ~amd64
  maintainers:
    - { type: person, email: dev@example.org, name: A Developer }
releases:
  "6.2.2": { llvm_slot: 18 }
  "6.3.0": { llvm_slot: 19, stream: legacy, tag: "rocm-\${PV}", pins: { ROCm/full-pinned: 0123456789abcdef0123456789abcdef01234567 } }
python:
  compat: python3_{12..14}
  current: [python3_12, python3_13, python3_14]
  default: [python3_14]
licenses:
  free: [MIT, GPL-2, BSD]
profile:
  use_expand:
    VIDEO_CARDS: [amdgpu, radeonsi]
targets: targets.yaml
external:
  - external.yaml
components:
  - components/*.yaml
projects:
  "6.2.2": [base, gpulib, app, full, full-data, fullcmake, fullphases, fullpy, fullcmd, dropped]
excluded:
  - project: dropped
    reason: no longer shipped by the project itself
    releases: { from: "6.2.0", until: "7.0.0" }
`,
  'external.yaml': `packages:
  dev-cpp/gtest: { subslot: false, iuse: ["+gmock", doc] }
  dev-libs/boost: { subslot: true, slots: ["0"] }
  llvm-core/clang: { subslot: true, eclass: true, note: supplied through llvm_gen_dep }
  dev-python/pyyaml: { subslot: false }
  dev-util/oldtool: { subslot: false, versions: ["1.0", "2.0-r1"] }
`,
  'patches/fullcmake/fix-build.patch': '--- a/CMakeLists.txt\n+++ b/CMakeLists.txt\n@@ -1 +1 @@\n-project(fullcmake)\n+project(fullcmake LANGUAGES CXX)\n',
  'patches/fullcmake/fullcmake-6.2.2-sources.patch': '--- a/src/CMakeLists.txt\n+++ b/src/CMakeLists.txt\n@@ -1 +1 @@\n-add_library(fullcmake a.c)\n+add_library(fullcmake a.c b.c)\n',
  'components/full.yaml': `name: full
projects: [full, full-data]
atom: sci-libs/full
description: A library that uses most sections of the component schema
homepage: https://github.com/ROCm/full
license: MIT foo? ( GPL-2 )
releases: { from: "6.2.0", until: "8.0.0" }
keywords: ~amd64
sources:
  - github: ROCm/full
    tag: rocm-\${PV}
    distfile: full-\${PV}.tar.gz
    dir: full-rocm-\${PV}
    subdir: src
  - github: ROCm/full-data
    distfile: full-data-\${PV}.tar.gz
    when: test
  - url: https://example.org/files/\${P}-extra.tar.xz
    distfile: \${P}-extra.tar.xz
    dir: \${P}-extra
  - release_asset: ROCm/full-mono
    file: full-assets.tar.gz
    path: projects/full-assets
    distfile: full-assets-\${PV}.tar.gz
    dir: full-assets
    when: test
    releases: { from: "6.2.0", until: "8.0.0" }
s: full-rocm-\${PV}/src
build: cmake
compiler: hipcc
targets:
  mode: subset
  supported: [gfx90a, gfx1100]
  cmake_vars: [AMDGPU_TARGETS]
  join: ";"
  required_use_when: [test]
platform: amd
llvm:
  deps:
    - { atom: llvm-core/clang, classes: [DEPEND], slot_op: true, when: foo }
python:
  eclass: python-single-r1
  when: foo
  pep517: setuptools
  deps:
    - { atom: dev-python/pyyaml, classes: [BDEPEND], version: ">=5.1", when: foo }
use:
  foo: { description: Enable the foo feature, default: true }
  bar: { description: Enable the bar feature }
required_use: ["?? ( foo bar )"]
deps:
  - atom: sci-libs/gpulib
    classes: [RDEPEND, DEPEND]
    gpu: true
    use: [benchmark]
    when: bar
  - atom: dev-libs/boost
    classes: [DEPEND]
    version: ">=1.80"
    slot: "="
  - atom: dev-util/oldtool
    classes: [RDEPEND]
    blocker: weak
    version: "<5.7"
tests:
  gpu: true
  run: ctest
  jobs: 2
  env:
    FULL_USE_HMM: 1
    LD_LIBRARY_PATH: \${BUILD_DIR}/lib
  skip: [full_slow_test, "full_net.*"]
  smoke:
    gtest_filter: "*/0.*"
    env: { FULL_SMOKE_SIZE: small }
    reason: the first type of every typed test suite
  shards: 2
notes: Most schema keys in one place, for the tests that walk the schemas.
evidence:
  - releases: ["6.2.2"]
    kind: tag
    source: ROCm/full at rocm-6.2.2
    facts: [sources, deps, cmake, fixups]
    note: the build files were read at the tag
  - releases: { from: "6.3.0", until: "7.0.0" }
    kind: peer
    source: ::gentoo sci-libs/full/full-6.3.0.ebuild
    facts: [deps]
  - releases: ["6.2.2"]
    kind: peer
    source: Spack repos/spack_repo/builtin/packages/full/package.py
    facts: [sources]
    lacks: ["patch full-fix.patch"]
differences:
  - peer: spack
    fact: fixups
    item: patch full-fix.patch
    why: Spack's patch points the build at its own prefix of the library
    releases: { from: "6.2.0", until: "8.0.0" }
  - peer: spack
    fact: fixups
    item: patch full-*.patch
    why: the same argument for every patch of this name, written as a pattern
overrides:
  - versions: { from: "6.3.0", until: "7.0.0" }
    reason: the CMake variable was renamed upstream
    set:
      targets: { cmake_vars: [GPU_TARGETS] }
`,
  'components/fullcmake.yaml': `name: fullcmake
atom: sci-libs/fullcmake
description: A library with every CMake setting, source fix-up and global
homepage: https://github.com/ROCm/fullcmake
license: MIT
sources:
  - github: ROCm/fullcmake
build: cmake
compiler: hipcc
targets:
  mode: subset
  supported: [gfx90a, gfx1100]
use:
  foo: { description: Enable the foo feature, default: true }
  bar: { description: Enable the bar feature }
cmake:
  build_type: Release
  defines:
    FULL_PREFIX: \${EPREFIX}/usr
    FULL_LIBDIR: $(get_libdir)
    FULL_LEVEL: 3
    FULL_STATIC: false
    FULL_FOO: { use: foo, on: "ON", off: "OFF" }
  flags: [-Wno-dev]
  when:
    - use: bar
      defines: { FULL_BAR: ON, FULL_BAR_FOO: { use: foo, on: "A", off: "B" } }
      otherwise: { FULL_BAR: OFF, FULL_BAR_FOO: { use: foo, on: "C", off: "D" } }
  target_defines:
    - name: FULL_DL
      value: ON
      reason: only DL kernels exist for these targets
      if_any_target: { except: ["gfx9*"] }
    - name: FULL_XDL
      value: ON
      if_any_target: { matching: ["gfx90a"] }
prepare:
  - reason: the library directory is not always lib
    when: foo
    replace: { files: [CMakeLists.txt], from: 'set(LIBDIR "lib")', to: 'set(LIBDIR "$(get_libdir)")' }
  - delete_lines: { files: [cmake/Flags.cmake], matching: "-Werror", skip_missing: true }
  - replace: { files: [cmake/Paths.cmake], from: '\${ROCM_PATH}', to: '\\\${CMAKE_INSTALL_PREFIX}', first: true, skip_missing: false }
  - insert: { files: [CMakeLists.txt], after: "^project(", lines: ['include(GNUInstallDirs)', 'set(FULL_DIR "\${EPREFIX}/usr")'], first: false, skip_missing: false }
  - insert: { files: [CMakeLists.txt], before: "^add_subdirectory(tests)", lines: ['# tests'] }
  - remove: [third_party/bundled]
patches:
  - fix-build.patch
  - file: fullcmake-6.2.2-sources.patch
    reason: our fix for the sources list
    releases: { from: "6.2.0", until: "9.0.0" }
  - url: https://github.com/ROCm/fullcmake/commit/0123456789abcdef0123456789abcdef01234567.patch
    distfile: fullcmake-\${PV}-0123456.patch
    reason: upstream's fix for a newer compiler
    releases: { from: "6.2.0", until: "9.0.0" }
inherit: [flag-o-matic]
globals:
  CHECKREQS_DISK_BUILD: 2G
  FORTRAN_NEEDED: foo
restrict: [mirror]
tests:
  gpu: true
  restrict: the tests need a ROCm installed under /opt/rocm
qa:
  accept:
    - { keyword: RequiredUseDefaults, reason: upstream requires this flag for its host code }
`,
  'components/fullphases.yaml': `name: fullphases
atom: dev-util/fullphases
description: A package whose every phase has code before, instead and after
homepage: https://github.com/ROCm/fullphases
license: MIT
sources:
  - github: ROCm/fullphases
build: none
phases:
  pkg_pretend: { before: "einfo pkg_pretend before", replace: "einfo pkg_pretend", after: "einfo pkg_pretend after" }
  pkg_setup: { before: "einfo pkg_setup before", replace: "einfo pkg_setup", after: "einfo pkg_setup after" }
  src_prepare: { before: "einfo src_prepare before", replace: "einfo src_prepare", after: "einfo src_prepare after" }
  src_configure: { before: "einfo src_configure before", replace: "einfo src_configure", after: "einfo src_configure after" }
  src_compile: { before: "einfo src_compile before", replace: "einfo src_compile", after: "einfo src_compile after" }
  src_test: { before: "einfo src_test before", replace: "einfo src_test", after: "einfo src_test after" }
  src_install: { before: "einfo src_install before", replace: "einfo src_install", after: "einfo src_install after" }
  pkg_postinst: { before: "einfo pkg_postinst before", replace: "einfo pkg_postinst", after: "einfo pkg_postinst after" }
`,
  'components/fullpy.yaml': `name: fullpy
atom: dev-python/fullpy
description: A Python package built with PEP 517 and tested with pytest
homepage: https://github.com/ROCm/fullpy
license: MIT
sources:
  - github: ROCm/fullpy
build: python
python:
  eclass: distutils-r1
  pep517: setuptools
tests:
  gpu: false
  env: { PYTEST_ADDOPTS: -m unit }
  skip: ["tests/test_a.py::test_b", "a|b"]
`,
  'components/fullpin.yaml': `name: fullpin
atom: sci-libs/fullpin
description: A library built from two monorepo directories at a pinned commit
homepage: https://github.com/ROCm/full-pinned/tree/develop/projects/fullpin
license: MIT
releases: { from: "6.3.0" }
version: "6.2.2"
sources:
  - pinned: ROCm/full-pinned
    distfile: full-pinned-\${PV}.tar.gz
    subdir: projects/fullpin
    extract: [projects/fullpin, shared/common]
  - pinned: ROCm/full-other
    commit: 89abcdef0123456789abcdef0123456789abcdef
    distfile: full-other-\${PV}.tar.gz
build: none
evidence:
  - releases: ["6.3.0"]
    kind: pin
    source: ROCm/TheRock therock-6.3 fedcba9876543210fedcba9876543210fedcba98
    facts: [sources]
    pin: { repo: ROCm/full-pinned, commit: 0123456789abcdef0123456789abcdef01234567, path: projects/fullpin, fetch: commit }
`,
  'components/fulltag.yaml': `name: fulltag
atom: sci-libs/fulltag
description: A library fetched by a tag seen at the commit TheRock pins
homepage: https://github.com/ROCm/full-pinned/tree/develop/projects/fulltag
license: MIT
releases: { from: "6.3.0" }
sources:
  - github: ROCm/full-pinned
    tag: therock-6.3
    distfile: full-pinned-tag-\${PV}.tar.gz
    subdir: projects/fulltag
build: none
evidence:
  - releases: ["6.3.0"]
    kind: pin
    source: ROCm/TheRock therock-6.3 fedcba9876543210fedcba9876543210fedcba98
    facts: [sources]
    pin: { repo: ROCm/full-pinned, commit: 0123456789abcdef0123456789abcdef01234567, path: projects/fulltag, fetch: { tag: therock-6.3 } }
`,
  'components/fullcmd.yaml': `name: fullcmd
atom: dev-util/fullcmd
description: A tool whose tests run as one command in the build directory
homepage: https://github.com/ROCm/fullcmd
license: MIT
sources:
  - github: ROCm/fullcmd
build: none
tests:
  gpu: false
  command:
    dir: \${BUILD_DIR}/bin
    argv: [./fullcmd-test, --brief]
    env: { FULLCMD_HOME: "\${T}" }
phases:
  src_install: { before: "einfo install" }
`,
};

/** A temp directory holding FULL_FILES (with `overrides` applied, null removing a file) and the shipped targets.yaml. */
export async function fullFixtureManifest(overrides: Record<string, string | null> = {}): Promise<string> {
  return fixtureManifest({ ...FULL_FILES, ...overrides });
}

/**
 * A component of the fixture stack that carries patch files of our own
 * (dev-libs/patched), `patches` being its `patches:` list as YAML lines.
 */
export function patchedComponent(patches: string): string {
  return `name: patched
atom: dev-libs/patched
description: Library whose releases need patches of our own
homepage: https://github.com/ROCm/patched
license: MIT
sources:
  - github: ROCm/patched
build: cmake
patches:
${patches}`;
}
