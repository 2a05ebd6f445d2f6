import { strict as assert } from 'node:assert';
import { cp, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { removeDir, root, runCli, tempDir } from '../helpers/project.js';

/**
 * One mis-indented line makes the YAML parser lose its place, and every line
 * after it at that level was reported too (23 errors for one space in
 * stack.yaml's releases): the first error is the one to fix, and the only one
 * said, with where it is and that the rest may follow from it.
 */
describe('a YAML syntax error is reported once', function () {
  this.timeout(60_000);
  let dir: string;
  before(async () => {
    dir = await tempDir('rocm-ebuild-yaml-');
    await cp(path.join(root, 'manifest'), dir, { recursive: true });
  });
  after(() => removeDir(dir));

  for (const [what, file, pattern] of [
    ["a release of stack.yaml's releases, one space to the left", 'stack.yaml', /^ {2}"6\.2\.0":/m],
    ['a key of a component, one space to the right', 'components/rocBLAS.yaml', /^build: /m],
  ] as const) {
    it(what, async () => {
      const target = path.join(dir, file);
      const original = await readFile(target, 'utf8');
      const at = original.slice(0, pattern.exec(original)!.index).split('\n').length;
      const lines = original.split('\n');
      lines[at - 1] = lines[at - 1]!.startsWith('  ') ? lines[at - 1]!.slice(1) : ` ${lines[at - 1]}`;
      await writeFile(target, lines.join('\n'));
      try {
        const r = await runCli(['validate', dir, '--json'], { env: { ROCM_EBUILD_NO_CACHE: '1' } });
        assert.equal(r.code, 2, r.stderr);
        const issues = (JSON.parse(r.stdout) as { error: { details: { issues: { file: string; line: number; column: number; message: string; hint: string }[] } } }).error.details.issues;
        assert.equal(issues.length, 1, JSON.stringify(issues, null, 1));
        const [i] = issues;
        assert.ok(i!.file.endsWith(file), i!.file);
        assert.ok(i!.line === at || i!.line === at + 1, `line ${i!.line}, the edit is on ${at}`);
        assert.match(i!.message, /^YAML syntax: /);
        assert.match(i!.hint, /indent/);
        const text = await runCli(['validate', dir], { env: { ROCM_EBUILD_NO_CACHE: '1' } });
        assert.match(text.stderr, /^rocm-ebuild: 1 problem in the manifest:\n\S+:\d+:\d+: \$: YAML syntax: /);
      } finally {
        await writeFile(target, original);
      }
    });
  }
});
