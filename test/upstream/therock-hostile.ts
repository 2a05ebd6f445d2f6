/**
 * CMake a hostile or merely huge TheRock fork may hold, each file under the
 * 1 MiB a CMake file of TheRock may have: what `upstream therock` must read
 * in time linear in its bytes and memory bounded per file. Used by the tests
 * and by bench/therock.bench.ts.
 */
export const HOSTILE_CMAKE = {
  /** `n` variables, one set() each. */
  manySets: (n = 50_000) => Array.from({ length: n }, (_, i) => `set(V${i} ${i})\n`).join(''),
  /** One list grown by `n` set()s, the idiom `set(L ${L} more)`, then used as a declaration's dependencies. */
  growingList: (n = 30_000) =>
    `set(L)\n${Array.from({ length: n }, (_, i) => `set(L \${L} dep${i})\n`).join('')}therock_cmake_subproject_declare(grown\n  EXTERNAL_SOURCE_DIR "\${THEROCK_SOURCE_DIR}/rocm-libraries/projects/grown"\n  BUILD_DEPS \${L}\n)\n`,
  /** Two lists that grow from each other: no idiom to recognise, only the budget bounds it. */
  leapfrog: (n = 30_000) => `set(A a)\nset(B b)\n${Array.from({ length: n / 2 }, (_, i) => `set(A \${B} a${i})\nset(B \${A} b${i})\n`).join('')}`,
  /** `${` nested `depth` deep in a set(). */
  deepNesting: (depth = 50_000) => `set(DEEP ${'${'.repeat(depth)}X${'}'.repeat(depth)})\nset(OPEN ${'${'.repeat(depth)}X)\n`,
  /** A variable doubled `times` times, each doubling a variable of its own: 2^times copies of one character. */
  doubling: (times = 40) =>
    `set(D0 x)\n${Array.from({ length: times }, (_, i) => `set(D${i + 1} \${D${i}}\${D${i}})\n`).join('')}therock_cmake_subproject_declare(after-the-cut\n  EXTERNAL_SOURCE_DIR "\${THEROCK_SOURCE_DIR}/rocm-libraries/projects/after"\n)\n`,
};
