import { strict as assert } from 'node:assert';
import { UNKNOWN, type Value } from '../../src/upstream/facts/cmake-condition.js';
import { reachNetwork, type ReachReport } from '../../src/upstream/facts/cmake-reach.js';

/** A project of CMake files written for the test, under /WORKDIR/proj (and other sources beside it). */
async function reach(files: Record<string, string>, defines: Record<string, Value> = {}): Promise<ReachReport> {
  return reachNetwork(
    {
      root: '/WORKDIR/proj',
      async read(abs) {
        return files[abs.replace(/^\/WORKDIR\//, '')];
      },
    },
    new Map(Object.entries(defines)),
  );
}

const summary = (r: ReachReport) => ({
  downloads: r.downloads.map((d) => `${d.via} ${d.name} ${d.where.file}:${d.where.line}${d.certain ? '' : ' (maybe)'}`),
  avoided: r.avoided.map((a) => `${a.via} ${a.name}: ${a.how.split(':')[0]}`),
});

const FETCH_NANOBIND = `include(FetchContent)
FetchContent_Declare(
  nanobind
  GIT_REPOSITORY https://github.com/wjakob/nanobind.git
  GIT_TAG        v2.6.1
)
FetchContent_MakeAvailable(nanobind)
`;

describe('upstream facts: which downloads a CMake project reaches with the options an ebuild passes', () => {
  it('follows if() with the -D values, option() defaults and the project\'s own set()', async () => {
    const files = {
      'proj/CMakeLists.txt': `cmake_minimum_required(VERSION 3.25)
project(demo LANGUAGES CXX)
option(BUNDLE_DEPS "fetch them" ON)
set(WANT_EXTRA OFF)
if(BUNDLE_DEPS)
${FETCH_NANOBIND}endif()
if(WANT_EXTRA)
  file(DOWNLOAD https://example.org/extra.tar.gz extra.tar.gz)
endif()
`,
    };
    assert.deepEqual(summary(await reach(files)), { downloads: ['FetchContent nanobind CMakeLists.txt:7'], avoided: [] });
    // The ebuild's -DBUNDLE_DEPS=OFF wins over option()'s default.
    assert.deepEqual(summary(await reach(files, { BUNDLE_DEPS: 'OFF' })), { downloads: [], avoided: [] });
  });

  it('knows the ways an ebuild (or the project) makes FetchContent take the installed package', async () => {
    const files = { 'proj/CMakeLists.txt': `project(demo)\n${FETCH_NANOBIND}` };
    assert.deepEqual(summary(await reach(files, { FETCHCONTENT_TRY_FIND_PACKAGE_MODE: 'ALWAYS' })).avoided, ['FetchContent nanobind: FETCHCONTENT_TRY_FIND_PACKAGE_MODE=ALWAYS']);
    assert.deepEqual(summary(await reach(files, { FETCHCONTENT_SOURCE_DIR_NANOBIND: '/usr/share/nanobind' })).avoided, ['FetchContent nanobind: FETCHCONTENT_SOURCE_DIR_NANOBIND points at local sources']);
    const withArgs = { 'proj/CMakeLists.txt': `project(demo)\ninclude(FetchContent)\nFetchContent_Declare(fmt URL https://x/fmt.tgz FIND_PACKAGE_ARGS 10 CONFIG)\nFetchContent_MakeAvailable(fmt)\n` };
    assert.deepEqual(summary(await reach(withArgs)), { downloads: [], avoided: ['FetchContent fmt: declared with FIND_PACKAGE_ARGS'] });
    assert.deepEqual(summary(await reach(withArgs, { FETCHCONTENT_TRY_FIND_PACKAGE_MODE: 'NEVER' })).downloads, ['FetchContent fmt CMakeLists.txt:3']);
    // Disconnected: no download, but configure then fails for want of the sources; still a breaker.
    const disconnected = await reach(files, { FETCHCONTENT_FULLY_DISCONNECTED: 'ON' });
    assert.match(disconnected.downloads[0]!.detail, /FULLY_DISCONNECTED stops the download, and configure then fails/);
  });

  it('follows add_subdirectory(), include() through CMAKE_MODULE_PATH, functions and macros, into another source beside S', async () => {
    const files = {
      'proj/CMakeLists.txt': `project(demo)
list(APPEND CMAKE_MODULE_PATH "\${CMAKE_CURRENT_SOURCE_DIR}/cmake")
include(Deps)
add_subdirectory(lib)
add_subdirectory(\${CMAKE_CURRENT_SOURCE_DIR}/../shared shared)
`,
      'proj/cmake/Deps.cmake': `function(fetch_dep name url)
  FetchContent_Declare(\${name} URL \${url})
  FetchContent_MakeAvailable(\${name})
endfunction()
macro(clone_it where)
  execute_process(COMMAND \${GIT_EXECUTABLE} clone https://example.org/x.git \${where})
endmacro()
`,
      'proj/lib/CMakeLists.txt': `find_package(Git)
if(USE_GIT_CLONE)
  clone_it(\${CMAKE_CURRENT_BINARY_DIR}/x)
endif()
fetch_dep(zlib https://example.org/zlib.tgz)
`,
      'shared/CMakeLists.txt': `include(ExternalProject)
ExternalProject_Add(blis URL https://example.org/blis.tgz)
ExternalProject_Add(local SOURCE_DIR \${CMAKE_CURRENT_SOURCE_DIR}/local)
`,
    };
    assert.deepEqual(summary(await reach(files, { USE_GIT_CLONE: 'ON' })).downloads, [
      'execute_process git clone cmake/Deps.cmake:6',
      'FetchContent zlib cmake/Deps.cmake:2',
      'ExternalProject blis ${WORKDIR}/shared/CMakeLists.txt:2',
    ]);
    // Inside the project's functions, the call is what a reviewer looks for.
    assert.match((await reach(files, { USE_GIT_CLONE: 'OFF' })).downloads[0]!.detail, /called from lib\/CMakeLists\.txt:5$/);
    assert.deepEqual(summary(await reach(files, { USE_GIT_CLONE: 'OFF' })).downloads.length, 2);
  });

  it('takes a branch on what configure computes both ways, and says such a download is not certain', async () => {
    const files = {
      'proj/CMakeLists.txt': `project(demo)
find_package(nanobind CONFIG)
if(NOT nanobind_FOUND)
${FETCH_NANOBIND}endif()
if(ONLY_HEADERS)
  return()
endif()
file(DOWNLOAD https://example.org/data.bin data.bin)
`,
    };
    assert.deepEqual(summary(await reach(files)).downloads, ['FetchContent nanobind CMakeLists.txt:5 (maybe)', 'file(DOWNLOAD) https://example.org/data.bin CMakeLists.txt:15']);
    // A return() that may run makes what follows it in that file uncertain too.
    assert.deepEqual(summary(await reach(files, { ONLY_HEADERS: UNKNOWN })).downloads.at(-1), 'file(DOWNLOAD) https://example.org/data.bin CMakeLists.txt:15 (maybe)');
    assert.deepEqual(summary(await reach(files, { ONLY_HEADERS: 'ON' })).downloads, ['FetchContent nanobind CMakeLists.txt:5 (maybe)']);
  });

  it('evaluates conditions as CMake does: elseif chains, DEFINED, STREQUAL, VERSION_LESS, NOT/AND/OR, parentheses, cmake_dependent_option', async () => {
    const files = {
      'proj/CMakeLists.txt': `project(demo)
cmake_dependent_option(WITH_NET "fetch" ON "ENABLE_CLIENT;NOT WIN32" OFF)
if(DEFINED MODE AND MODE STREQUAL "bundle")
  set(how bundle)
elseif(CMAKE_VERSION VERSION_LESS 3.24 OR (NOT WITH_NET))
  set(how none)
else()
  set(how fetch)
endif()
if(how STREQUAL "fetch")
  file(DOWNLOAD https://example.org/a a)
elseif("\${how}" STREQUAL "bundle")
  file(DOWNLOAD https://example.org/b b)
endif()
foreach(part IN ITEMS one two)
  if(part STREQUAL "two" AND WITH_NET)
    file(DOWNLOAD https://example.org/\${part} \${part})
  endif()
endforeach()
`,
    };
    const names = async (d: Record<string, Value>) => (await reach(files, { CMAKE_VERSION: '3.31', ...d })).downloads.map((x) => x.name);
    assert.deepEqual(await names({ ENABLE_CLIENT: 'ON' }), ['https://example.org/a', 'https://example.org/two']);
    assert.deepEqual(await names({ ENABLE_CLIENT: 'OFF' }), []);
    assert.deepEqual(await names({ ENABLE_CLIENT: 'ON', MODE: 'bundle' }), ['https://example.org/b', 'https://example.org/two']);
    // While its condition holds, cmake_dependent_option keeps the cache value the ebuild passed.
    assert.deepEqual(await names({ ENABLE_CLIENT: 'ON', WITH_NET: 'OFF' }), []);
  });

  it('stops where a certain FATAL_ERROR stops configure, and reports what it cannot follow', async () => {
    const files = {
      'proj/CMakeLists.txt': `project(demo)
if(NOT HAVE_THING)
  message(FATAL_ERROR "need the thing")
endif()
file(DOWNLOAD https://example.org/a a)
include(\${SOMEWHERE}/x.cmake)
add_subdirectory(missing)
`,
    };
    assert.deepEqual((await reach(files)).downloads, []);
    const r = await reach(files, { HAVE_THING: 'ON', SOMEWHERE: UNKNOWN });
    assert.deepEqual(summary(r).downloads, ['file(DOWNLOAD) https://example.org/a CMakeLists.txt:5']);
    assert.deepEqual(r.unread.map((u) => `${u.where?.line}: ${u.reason}`), ['6: include() of a file whose name is computed at configure time', '7: missing/CMakeLists.txt is not in the sources read']);
  });
});
