import { strict as assert } from 'node:assert';
import { cp, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { smallStackFixture, type SmallStackFixture } from '../helpers/bumped-overlay.js';
import { removeDir, runCli, tempDir } from '../helpers/project.js';

/**
 * `lint --overlay` on a ::gentoo checkout: the tree is a whole distribution
 * (an hour of linting), so the stack's packages are checked unless every
 * package is asked for; a package named on the command line is checked
 * whatever it is.
 */
describe('lint --overlay on a ::gentoo checkout', function () {
  this.timeout(120_000);
  let small: SmallStackFixture;
  let tree: string;

  before(async () => {
    small = await smallStackFixture();
    tree = await tempDir('rocm-ebuild-gentoo-tree-');
    await mkdir(path.join(tree, 'profiles'), { recursive: true });
    await writeFile(path.join(tree, 'profiles', 'repo_name'), 'gentoo\n');
    await cp(path.join(small.overlay, 'sci-libs', 'gpulib'), path.join(tree, 'sci-libs', 'gpulib'), { recursive: true });
    // A package of the rest of the tree that lint would fail: an ebuild without EAPI.
    await mkdir(path.join(tree, 'app-misc', 'other'), { recursive: true });
    await writeFile(path.join(tree, 'app-misc', 'other', 'other-1.ebuild'), '# Copyright 1999-2025 Gentoo Authors\n# Distributed under the terms of the GNU General Public License v2\n\nDESCRIPTION="Something else of the tree"\nSLOT="0"\n');
  });
  after(() => removeDir(tree));

  const lint = (extra: string[]) => runCli(['lint', '--overlay', tree, '--manifest', small.manifest, '--no-shellcheck', ...extra], { home: small.home });

  it("checks only the stack's packages, saying so", async () => {
    const r = await lint([]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stderr, /^::gentoo: checking the 1 packages of the ROCm stack it holds \(--all-packages checks every package of the tree\)$/m);
    assert.match(r.stdout, /^1 ebuild checked: /m);
    assert.doesNotMatch(r.stdout, /app-misc\/other/);
  });

  it('checks every package with --all-packages, and a package named on the command line', async () => {
    for (const extra of [['--all-packages'], ['app-misc/other']]) {
      const r = await lint(extra);
      assert.equal(r.code, 6, `${extra.join(' ')}: ${r.stdout}${r.stderr}`);
      assert.match(r.stdout, /app-misc\/other/, extra.join(' '));
    }
  });

  it('an overlay that is not ::gentoo is checked whole, as before', async () => {
    const overlay = await tempDir('rocm-ebuild-not-gentoo-');
    try {
      await cp(tree, overlay, { recursive: true });
      await writeFile(path.join(overlay, 'profiles', 'repo_name'), 'mine\n');
      const r = await runCli(['lint', '--overlay', overlay, '--manifest', small.manifest, '--no-shellcheck'], { home: small.home });
      assert.equal(r.code, 6, r.stdout + r.stderr);
      assert.match(r.stdout, /app-misc\/other/);
    } finally {
      await removeDir(overlay);
    }
  });
});
