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
  "6.2.2": { llvm_slot: 18, python_compat: "python3_{10..12}", verified: true }
  "6.3.0": { llvm_slot: 19, python_compat: "python3_{10..13}" }
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
