import { spawn } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { gitEnv } from '../helpers/project.js';

function run(args: string[], env: NodeJS.ProcessEnv = {}, cwd?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { env: { ...process.env, ...gitEnv(), ...identity, ...env }, ...(cwd ? { cwd } : {}) });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('close', (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`git ${args.join(' ')}: ${err}`))));
  });
}

const identity = {
  GIT_AUTHOR_NAME: 'Fixture',
  GIT_AUTHOR_EMAIL: 'fixture@example.org',
  GIT_COMMITTER_NAME: 'Fixture',
  GIT_COMMITTER_EMAIL: 'fixture@example.org',
  GIT_AUTHOR_DATE: '2026-07-15T00:00:00Z',
  GIT_COMMITTER_DATE: '2026-07-15T00:00:00Z',
};

/** A bare repository with one commit holding `files`; returns the commit. */
export async function repoWithCommit(gitDir: string, files: Record<string, string | Buffer>, scratch: string): Promise<string> {
  return commitTree(gitDir, files, {}, scratch, { branch: 'main' });
}

/**
 * One commit in a bare repository: `files` written into a scratch work tree,
 * `gitlinks` (path → commit) added as submodule entries, as TheRock's tree has
 * them. Tagged (annotated, as AMD tags) and/or put on a branch.
 */
export async function commitTree(
  gitDir: string,
  files: Record<string, string | Buffer>,
  gitlinks: Record<string, string>,
  scratch: string,
  ref: { tag?: string; branch?: string; parent?: string },
): Promise<string> {
  await mkdir(gitDir, { recursive: true });
  await run(['init', '--bare', '--quiet', gitDir]);
  const work = path.join(scratch, `work-${path.basename(gitDir)}-${Date.now()}-${Math.random().toString(16).slice(2)}`);
  await rm(work, { recursive: true, force: true });
  for (const [rel, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(work, rel)), { recursive: true });
    await writeFile(path.join(work, rel), text);
  }
  await mkdir(work, { recursive: true });
  const index = path.join(scratch, `index-${path.basename(work)}`);
  const env = { GIT_DIR: gitDir, GIT_WORK_TREE: work, GIT_INDEX_FILE: index };
  await run(['read-tree', '--empty'], env);
  await run(['add', '-A', '.'], env, work);
  for (const [p, commit] of Object.entries(gitlinks)) await run(['update-index', '--add', '--cacheinfo', `160000,${commit},${p}`], env);
  const tree = await run(['write-tree'], env);
  const commit = await run(['commit-tree', tree, '-m', ref.tag ?? ref.branch ?? 'commit', ...(ref.parent ? ['-p', ref.parent] : [])], env);
  if (ref.tag) await run(['tag', '-a', '-f', '-m', ref.tag, ref.tag, commit], env);
  if (ref.branch) await run(['--git-dir', gitDir, 'update-ref', `refs/heads/${ref.branch}`, commit]);
  await rm(work, { recursive: true, force: true });
  await rm(index, { force: true });
  return commit;
}

export const GITMODULES = `[submodule "rocm-libraries"]
	path = rocm-libraries
	url = https://github.com/ROCm/rocm-libraries
	branch = develop
[submodule "rocm-systems"]
	path = rocm-systems
	url = https://github.com/ROCm/rocm-systems.git
	branch = develop
[submodule "llvm-project"]
	path = compiler/amd-llvm
	url = https://github.com/ROCm/llvm-project.git
`;

/** TheRock's own definition of the declare function: where the reader takes its keywords from. */
const SUBPROJECT_CMAKE = `function(therock_cmake_subproject_declare target_name)
  cmake_parse_arguments(
    PARSE_ARGV 1 ARG
    "ACTIVATE;BACKGROUND_BUILD;USE_DIST_AMDGPU_TARGETS"
    "EXTERNAL_SOURCE_DIR;BINARY_DIR;COMPILER_TOOLCHAIN"
    "BUILD_DEPS;RUNTIME_DEPS;CMAKE_ARGS"
  )
  # A declaration inside a helper is a template, not a component.
  therock_cmake_subproject_declare(\${target_name} EXTERNAL_SOURCE_DIR "\${ARG_EXTERNAL_SOURCE_DIR}")
endfunction()
`;

/** The files of a small TheRock: the same shapes as the real one, a few components. */
export function theRockFiles(version: string): Record<string, string> {
  return {
    'version.json': `{\n  "rocm-version": "${version}"\n}\n`,
    '.gitmodules': GITMODULES,
    'CMakeLists.txt': `cmake_minimum_required(VERSION 3.25)
project(THEROCK)
list(APPEND CMAKE_MODULE_PATH "\${CMAKE_CURRENT_SOURCE_DIR}/cmake")
include(therock_subproject)
set(THEROCK_ROCM_LIBRARIES_SOURCE_DIR_DEFAULT "\${THEROCK_SOURCE_DIR}/rocm-libraries")
set(THEROCK_ROCM_LIBRARIES_SOURCE_DIR "\${THEROCK_ROCM_LIBRARIES_SOURCE_DIR_DEFAULT}" CACHE STRING "Path to rocm-libraries superrepo")
set(THEROCK_ROCM_SYSTEMS_SOURCE_DIR_DEFAULT "\${THEROCK_SOURCE_DIR}/rocm-systems")
set(THEROCK_ROCM_SYSTEMS_SOURCE_DIR "\${THEROCK_ROCM_SYSTEMS_SOURCE_DIR_DEFAULT}" CACHE STRING "Path to rocm-systems superrepo")
therock_enable_external_source("dbg-api" "\${THEROCK_ROCM_SYSTEMS_SOURCE_DIR}/projects/rocdbgapi" OFF)
set(THEROCK_BUNDLED_FMT)
if(NOT WIN32)
  set(THEROCK_BUNDLED_FMT therock-fmt)
endif()
add_subdirectory(compiler)
add_subdirectory(core)
add_subdirectory(third-party)
add_subdirectory(math-libs)
`,
    'cmake/therock_subproject.cmake': SUBPROJECT_CMAKE,
    'compiler/CMakeLists.txt': `therock_cmake_subproject_declare(amd-llvm
  EXTERNAL_SOURCE_DIR "amd-llvm"
  BUILD_DEPS \${THEROCK_BUNDLED_FMT}
)
therock_cmake_subproject_declare(amd-comgr
  USE_DIST_AMDGPU_TARGETS
  EXTERNAL_SOURCE_DIR "amd-llvm/amd/comgr"
  RUNTIME_DEPS amd-llvm
)
`,
    'core/CMakeLists.txt': `therock_cmake_subproject_declare(hip-clr
  EXTERNAL_SOURCE_DIR "\${THEROCK_ROCM_SYSTEMS_SOURCE_DIR}/projects/clr"
  COMPILER_TOOLCHAIN amd-llvm
  RUNTIME_DEPS amd-comgr
)
therock_cmake_subproject_declare(amd-dbgapi
  EXTERNAL_SOURCE_DIR "\${THEROCK_DBG_API_SOURCE_DIR}"
  RUNTIME_DEPS amd-comgr
)
therock_cmake_subproject_declare(mystery
  EXTERNAL_SOURCE_DIR "\${SOMETHING_NOBODY_SETS}/mystery"
)
`,
    'third-party/CMakeLists.txt': `therock_cmake_subproject_declare(therock-fmt
  EXTERNAL_SOURCE_DIR "\${CMAKE_CURRENT_BINARY_DIR}/source"
)
`,
    'math-libs/CMakeLists.txt': `set(optional_profiler_deps)
if(THEROCK_FLAG_INCLUDE_PROFILER)
  list(APPEND optional_profiler_deps amd-dbgapi)
endif()
add_subdirectory(BLAS)
`,
    'math-libs/BLAS/CMakeLists.txt': `# A comment mentioning therock_cmake_subproject_declare(fake) is not a call.
therock_cmake_subproject_declare(gpulib
  EXTERNAL_SOURCE_DIR "\${THEROCK_ROCM_LIBRARIES_SOURCE_DIR}/projects/gpulib"
  BACKGROUND_BUILD
  CMAKE_ARGS -DGPULIB_ENABLE_X=ON
  COMPILER_TOOLCHAIN amd-hip
  BUILD_DEPS rocm-cmake
  RUNTIME_DEPS hip-clr \${optional_profiler_deps}
)
therock_cmake_subproject_declare(app
  EXTERNAL_SOURCE_DIR "\${THEROCK_ROCM_LIBRARIES_SOURCE_DIR}/projects/app"
  COMPILER_TOOLCHAIN amd-hip
  RUNTIME_DEPS gpulib amd-comgr
)
therock_cmake_subproject_declare(newlib
  EXTERNAL_SOURCE_DIR "\${THEROCK_ROCM_LIBRARIES_SOURCE_DIR}/projects/newlib"
  COMPILER_TOOLCHAIN amd-hip
  RUNTIME_DEPS gpulib
)
`,
    'BUILD_TOPOLOGY.toml': `[metadata]
version = "2.0"

[source_sets.compilers]
submodules = ["llvm-project"]

[source_sets.rocm-libraries]
submodules = ["rocm-libraries"]

[artifact_groups.compiler]
description = "AMD LLVM toolchain"
type = "generic"
source_sets = ["compilers"]

[artifact_groups.math-libs]
type = "per-arch"
artifact_group_deps = ["compiler"]
source_sets = ["rocm-libraries"]

[artifacts.amd-llvm]
artifact_group = "compiler"
type = "target-neutral"

[artifacts.blas]
artifact_group = "math-libs"
type = "target-specific"
artifact_deps = ["amd-llvm"]
`,
    'build_tools/artifact_subprojects.json': `{ "amd-llvm": ["amd-llvm", "amd-comgr"], "blas": ["gpulib", "app"] }\n`,
  };
}

export interface TheRockUniverse {
  /** Parent of ROCm/<repo> bare repositories (a --base-url). */
  gitRoot: string;
  /** ROCm/TheRock's git directory. */
  therock: string;
  /** Commits of the pinned repositories, by submodule path. */
  pins: Record<string, string>;
}

/** ROCm/TheRock with therock-10.0 (tag) and release/therock-10.1 (branch), pinning three local repositories. */
export async function theRockUniverse(dir: string): Promise<TheRockUniverse> {
  const gitRoot = path.join(dir, 'git');
  const scratch = path.join(dir, 'scratch');
  await mkdir(scratch, { recursive: true });
  const pins: Record<string, string> = {
    'rocm-libraries': await repoWithCommit(path.join(gitRoot, 'ROCm', 'rocm-libraries'), { 'projects/gpulib/CMakeLists.txt': 'project(gpulib)\n', 'projects/app/CMakeLists.txt': 'project(app)\n' }, scratch),
    'rocm-systems': await repoWithCommit(path.join(gitRoot, 'ROCm', 'rocm-systems'), { 'projects/clr/CMakeLists.txt': 'project(clr)\n' }, scratch),
    'compiler/amd-llvm': await repoWithCommit(path.join(gitRoot, 'ROCm', 'llvm-project'), { 'amd/comgr/CMakeLists.txt': 'project(comgr)\n' }, scratch),
  };
  const therock = path.join(gitRoot, 'ROCm', 'TheRock');
  const first = await commitTree(therock, theRockFiles('10.0.0'), pins, scratch, { tag: 'therock-10.0', branch: 'main' });
  await commitTree(therock, theRockFiles('10.1.0'), pins, scratch, { branch: 'release/therock-10.1', parent: first });
  return { gitRoot, therock, pins };
}
