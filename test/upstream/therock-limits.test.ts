import { strict as assert } from 'node:assert';
import { expandVariables, parseCMake } from '../../src/upstream/facts/cmake-lexer.js';
import { ExpansionBudget, ExpansionLimit, expandBounded } from '../../src/upstream/therock/cmake-values.js';
import type { Submodule } from '../../src/upstream/therock/gitmodules.js';
import { EXPANSION_LIMITS, readSubprojects } from '../../src/upstream/therock/subprojects.js';
import { HOSTILE_CMAKE } from './therock-hostile.js';

/**
 * TheRock's CMake is read from whatever repository the command is pointed
 * at: reading it must cost time linear in its bytes and memory bounded per
 * file, whatever it holds. Each case is a generated file under the 1 MiB a
 * CMake file may have; how long it takes is measured in bench/therock.bench.ts,
 * never asserted here. What is asserted: it finishes, it reads what can be
 * read, and it says where it stopped.
 */

const SUBMODULES: Submodule[] = [{ name: 'rocm-libraries', path: 'rocm-libraries', url: 'https://github.com/ROCm/rocm-libraries', github: 'ROCm/rocm-libraries', commit: 'a'.repeat(40) }];
const read = (files: Record<string, string>) => readSubprojects({ files: new Map(Object.entries(files)), submodules: SUBMODULES });

describe('upstream therock: reading CMake is linear and bounded', function () {
  this.timeout(300_000);

  it('50,000 set() lines in one file (under 1 MiB) are read, and a declaration after them resolves', () => {
    const text = `${HOSTILE_CMAKE.manySets(50_000)}therock_cmake_subproject_declare(last\n  EXTERNAL_SOURCE_DIR "\${THEROCK_SOURCE_DIR}/rocm-libraries/projects/v\${V49999}"\n)\n`;
    assert.ok(text.length < 1024 * 1024, `${text.length} bytes`);
    const r = read({ 'CMakeLists.txt': text });
    assert.deepEqual(r.problems, []);
    assert.deepEqual(r.subprojects.map((s) => [s.name, s.source.kind, s.source.dir]), [['last', 'submodule', 'projects/v49999']]);
  });

  it('30,000 growing list set()s read as the list they build, every element once', () => {
    const text = HOSTILE_CMAKE.growingList(30_000);
    assert.ok(text.length < 1024 * 1024, `${text.length} bytes`);
    const r = read({ 'CMakeLists.txt': text });
    assert.deepEqual(r.problems, []);
    const grown = r.subprojects.find((s) => s.name === 'grown')!;
    assert.equal(grown.deps.length, 30_000);
    assert.deepEqual(grown.deps.slice(0, 2).map((d) => d.name), ['dep0', 'dep1']);
    assert.equal(grown.deps.at(-1)!.name, 'dep29999');
  });

  it('lists that grow from each other stop at the file\'s expansion limit, reported with the line; other files are still read', () => {
    const text = HOSTILE_CMAKE.leapfrog(30_000);
    const r = read({
      'CMakeLists.txt': 'add_subdirectory(libs)\n',
      'cmake/leapfrog.cmake': text,
      'libs/CMakeLists.txt': 'therock_cmake_subproject_declare(fine\n  EXTERNAL_SOURCE_DIR "${THEROCK_SOURCE_DIR}/rocm-libraries/projects/fine"\n)\n',
    });
    // A .cmake file's set()s are not tracked (its scope is unknown here): only CMakeLists.txt files build scopes.
    assert.deepEqual(r.problems, []);
    const lists = read({ 'CMakeLists.txt': text, 'libs/CMakeLists.txt': 'therock_cmake_subproject_declare(fine\n  EXTERNAL_SOURCE_DIR "${THEROCK_SOURCE_DIR}/rocm-libraries/projects/fine"\n)\n' });
    assert.equal(lists.problems.length, 1, lists.problems.join('\n'));
    const limit = EXPANSION_LIMITS.floor + EXPANSION_LIMITS.perByte * text.length;
    assert.match(lists.problems[0]!, new RegExp(`^CMakeLists\\.txt:\\d+: expanding its variables would produce more than ${limit} characters, the most a file of its size may; the rest of the file is not read$`));
    assert.deepEqual(lists.subprojects.map((s) => s.name), ['fine'], 'the subdirectory is read with what its parent set before the cut');
  });

  it('${ nested 50,000 deep is read without overflowing the stack, closed or not', () => {
    const text = HOSTILE_CMAKE.deepNesting(50_000);
    // The lexer's own recursive expansion is what overflowed: the bounded one takes any depth.
    assert.throws(() => expandVariables(parseCMake(text).commands[0]!.args[1]!.value, new Map()), RangeError);
    const r = read({ 'CMakeLists.txt': `${text}therock_cmake_subproject_declare(deep\n  EXTERNAL_SOURCE_DIR "\${THEROCK_SOURCE_DIR}/rocm-libraries/projects/deep"\n  BUILD_DEPS \${DEEP} \${OPEN} fine\n)\n` });
    assert.deepEqual(r.problems, []);
    const deep = r.subprojects.find((s) => s.name === 'deep')!;
    assert.deepEqual(deep.deps.map((d) => d.name), ['fine'], 'the unknown nested names stay unresolved, reported, never guessed');
    assert.ok(r.unresolved.some((u) => /deep: BUILD_DEPS/.test(u)));
  });

  it('a variable doubled 40 times stops at the limit, reported with its line, without exhausting memory', () => {
    const text = HOSTILE_CMAKE.doubling(40);
    const r = read({ 'CMakeLists.txt': text });
    assert.equal(r.problems.length, 1, r.problems.join('\n'));
    assert.match(r.problems[0]!, /^CMakeLists\.txt:(\d+): expanding its variables would produce more than \d+ characters, the most a file of its size may; the rest of the file is not read$/);
    const line = Number(/:(\d+):/.exec(r.problems[0]!)![1]);
    assert.ok(line > 2 && line < 41, `cut at line ${line}`);
    assert.deepEqual(r.subprojects, [], 'the declaration after the cut is not read');
  });

  it('expansion agrees with the lexer on ordinary text, and charges what it substitutes', () => {
    const vars = new Map([['A', 'a'], ['B_a', 'nested'], ['E', '']]);
    for (const text of ['plain', '${A}', '${B_${A}}', 'x${A}y${Z}', '${A', '$ENV{HOME}', '${${A}', '}{${A}}', '${}', 'a;${A};b', '${E}']) {
      assert.equal(expandBounded(text, vars, new ExpansionBudget(1000)), expandVariables(text, vars), text);
    }
    assert.throws(() => expandBounded('${A}${A}${A}', vars, new ExpansionBudget(2)), ExpansionLimit);
  });
});
