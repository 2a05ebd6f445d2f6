import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { FIXER } from '../helpers/fixer-component.js';
import { fixtureManifest } from '../helpers/fixture-manifest.js';
import { removeDir, runCli, tempDir } from '../helpers/project.js';

/** Every file under `dir` with a digest of its content: the state a refused command must leave as it was. */
async function snapshot(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const file = path.join(e.parentPath, e.name);
    out.set(path.relative(dir, file), createHash('sha256').update(await readFile(file)).digest('hex'));
  }
  return out;
}

/**
 * Hostile values in the new places text reaches an ebuild: a patch's URL,
 * distfile and reason, replacement text, inserted lines and their address.
 * Each case is one line of the fixer component changed (as YAML text), the
 * JSON path validate must name, and the 1-based line of the component file.
 */
const CASES: { name: string; from: string; to: string; path: string }[] = [
  { name: 'a URL with a quote', from: 'commit/0123456789abcdef0123456789abcdef01234567.patch', to: `commit/0123"; touch /tmp/pwned; ".patch`, path: '$.patches[0].url' },
  { name: 'a URL with $(…)', from: 'commit/0123456789abcdef0123456789abcdef01234567.patch', to: 'commit/$(touch${IFS}/tmp/pwned).patch', path: '$.patches[0].url' },
  { name: 'a URL with a newline', from: 'commit/0123456789abcdef0123456789abcdef01234567.patch', to: '"commit/0123.patch\\nrm -rf /"', path: '$.patches[0].url' },
  { name: 'a plain-http URL', from: 'url: https://github.com', to: 'url: http://github.com', path: '$.patches[0].url' },
  { name: 'a URL with a query string', from: '01234567.patch\n', to: '01234567.patch?x=`id`\n', path: '$.patches[0].url' },
  { name: 'a distfile with a slash', from: 'distfile: fixer-6.3.0-0123456.patch', to: 'distfile: ../../etc/fixer.patch', path: '$.patches[0].distfile' },
  { name: 'a distfile that is ..', from: 'distfile: fixer-6.3.0-0123456.patch', to: 'distfile: "..patch"', path: '$.patches[0].distfile' },
  { name: 'a distfile with $(…)', from: 'distfile: fixer-6.3.0-0123456.patch', to: 'distfile: "$(id).patch"', path: '$.patches[0].distfile' },
  { name: 'a distfile with a quote', from: 'distfile: fixer-6.3.0-0123456.patch', to: `distfile: 'x"y.patch'`, path: '$.patches[0].distfile' },
  { name: 'a reason with a newline', from: "reason: upstream's fix for building against a newer LLVM", to: 'reason: "fix\\nrm -rf /"', path: '$.patches[0].reason' },
  { name: 'a replacement running $(…)', from: "to: '\\${CMAKE_INSTALL_PREFIX}/lib/llvm/${LLVM_SLOT}'", to: "to: '$(touch /tmp/pwned)'", path: '$.prepare[0].replace.to' },
  { name: 'a replacement with a backtick', from: "to: '\\${CMAKE_INSTALL_PREFIX}/lib/llvm/${LLVM_SLOT}'", to: "to: '`id`'", path: '$.prepare[0].replace.to' },
  { name: 'a replacement with a backslash before a quote', from: "to: '\\${CMAKE_INSTALL_PREFIX}/lib/llvm/${LLVM_SLOT}'", to: `to: 'a\\"; id; "'`, path: '$.prepare[0].replace.to' },
  { name: 'a replacement with a newline', from: "to: '\\${CMAKE_INSTALL_PREFIX}/lib/llvm/${LLVM_SLOT}'", to: 'to: "a\\nb"', path: '$.prepare[0].replace.to' },
  { name: 'an inserted line with a single quote', from: '- include(GNUInstallDirs)', to: `- "x'; id; '"`, path: '$.prepare[5].insert.lines[0]' },
  { name: 'an inserted line with an unknown ${VAR}', from: '- include(GNUInstallDirs)', to: "- '${IFS}'", path: '$.prepare[5].insert.lines[0]' },
  { name: 'an inserted line ending in a backslash', from: '- include(GNUInstallDirs)', to: "- 'x\\'", path: '$.prepare[5].insert.lines[0]' },
  { name: 'an insertion address with a newline', from: 'after: "^project("', to: 'after: "^project(\\n1e id"', path: '$.prepare[5].insert.after' },
  { name: 'a fix-up naming no operation', from: '  - reason: the LLVM of the slot', to: '  - reason: nothing\n  - reason: the LLVM of the slot', path: '$.prepare[0]' },
  { name: 'a fix-up naming two operations', from: '  - insert:\n', to: '  - remove: [x]\n    insert:\n', path: '$.prepare[5]' },
  { name: 'an insertion with both after and before', from: 'after: "^project("', to: 'after: "^project("\n      before: "^x"', path: '$.prepare[5].insert' },
];

describe('hostile patch URLs, distfiles and fix-up text: refused where written, nothing changed', function () {
  this.timeout(300_000);
  let work: string;

  before(async () => {
    work = await tempDir('rocm-ebuild-hostile-patches-');
  });
  after(() => removeDir(work));

  for (const c of CASES) {
    it(`refuses ${c.name} at file:line:column with the JSON path and a fix`, async () => {
      assert.ok(FIXER.includes(c.from), c.from);
      const dir = await fixtureManifest({ 'components/fixer.yaml': FIXER.replace(c.from, c.to) });
      try {
        const file = path.join(dir, 'components', 'fixer.yaml');
        const overlay = path.join(work, c.name.replace(/\W+/g, '-'));
        const r = await runCli(['bump', '6.3.0', 'fixer', '--overlay', overlay, '--manifest', dir, '--offline', '--no-commit']);
        assert.equal(r.code, 2, r.stdout + r.stderr);
        const located = new RegExp(`${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:\\d+:\\d+: ${c.path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}[:.[ ]`);
        assert.match(r.stderr, located, r.stderr);
        assert.match(r.stderr, /\n +hint: \S/, r.stderr);
        // Nothing written: no overlay, no file elsewhere.
        await assert.rejects(readdir(overlay));
        const v = await runCli(['validate', dir, '--json']);
        assert.equal(v.code, 2, v.stdout);
        const issues = (JSON.parse(v.stdout) as { error: { details: { issues: { file: string; line: number; column: number; path: string; hint?: string }[] } } }).error.details.issues;
        const at = issues.find((i) => i.file === file && i.path.startsWith(c.path));
        assert.ok(at && at.line > 0 && at.column > 0 && at.hint, JSON.stringify(issues));
      } finally {
        await removeDir(dir);
      }
    });
  }

  it('leaves an existing overlay byte for byte as it was', async () => {
    const dir = await fixtureManifest({ 'components/fixer.yaml': FIXER.replace(CASES[1]!.from, CASES[1]!.to) });
    const overlay = path.join(work, 'existing');
    try {
      await mkdir(path.join(overlay, 'profiles'), { recursive: true });
      await mkdir(path.join(overlay, 'dev-libs', 'fixer'), { recursive: true });
      await writeFile(path.join(overlay, 'profiles', 'repo_name'), 'test\n');
      await writeFile(path.join(overlay, 'dev-libs', 'fixer', 'fixer-6.2.2.ebuild'), '# a hand-written ebuild\nEAPI=8\n');
      await writeFile(path.join(overlay, 'dev-libs', 'fixer', 'Manifest'), 'DIST fixer-6.2.2.tar.gz 1 BLAKE2B 00 SHA512 00\n');
      const before = await snapshot(overlay);
      const r = await runCli(['bump', '6.3.0', 'fixer', '--overlay', overlay, '--manifest', dir, '--offline', '--no-commit']);
      assert.equal(r.code, 2, r.stdout + r.stderr);
      assert.deepEqual(await snapshot(overlay), before);
    } finally {
      await removeDir(dir);
    }
  });
});
