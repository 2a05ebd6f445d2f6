import { strict as assert } from 'node:assert';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { runCli } from '../helpers/project.js';
import { git, prFixture, SIGN_OFF, type PrFixture } from './support.js';

describe('bump --bug / --closes', function () {
  this.timeout(300_000);
  let f: PrFixture;
  let messages: Map<string, string>;

  before(async () => {
    // The fixture's bump ran with --bug 940123 --closes sci-libs/rocBLAS=940200 --closes https://bugs.gentoo.org/940300.
    f = await prFixture();
    const log = await git(f.overlay, ['log', '--reverse', '--format=%B%x00', `${f.base}..${f.tip}`], f.home);
    messages = new Map(log.split('\0').map((m) => m.replace(/^\n/, '')).filter(Boolean).map((m) => [m.split('\n', 1)[0]!, m]));
  });

  it("puts a package's own Closes: on its commit, Bug: on every package commit, before the sign-off", () => {
    assert.equal(
      messages.get('sci-libs/rocBLAS: new package, add 6.2.2'),
      `sci-libs/rocBLAS: new package, add 6.2.2\n\nBug: https://bugs.gentoo.org/940123\nCloses: https://bugs.gentoo.org/940200\n${SIGN_OFF}\n`,
    );
    assert.equal(messages.get('dev-util/hip: new package, add 6.2.2'), `dev-util/hip: new package, add 6.2.2\n\nBug: https://bugs.gentoo.org/940123\n${SIGN_OFF}\n`);
  });

  it('puts an unqualified Closes: on the last commit only, and nothing on the scaffolding commits', () => {
    const all = [...messages.values()];
    assert.equal(all.filter((m) => m.includes('Closes: https://bugs.gentoo.org/940300')).length, 1);
    assert.match(all.at(-1)!, /^sci-libs\/rocAL: new package, add 6\.2\.2\n\nBug: https:\/\/bugs\.gentoo\.org\/940123\nCloses: https:\/\/bugs\.gentoo\.org\/940300\nSigned-off-by: /);
    for (const s of ['profiles, metadata: new repository rocm', 'profiles/desc: add amdgpu_targets.desc', 'rocm.eclass: new eclass']) {
      assert.ok(!/^(Bug|Closes):/m.test(messages.get(s)!), s);
    }
  });

  it('refuses values that are not bug numbers or https URLs, before writing anything (exit 2)', async () => {
    for (const value of ['12x', 'http://bugs.gentoo.org/1', 'https://bugs.gentoo.org/1\nSigned-off-by: Mallory <m@example.org>', 'javascript:alert(1)']) {
      const overlay = path.join(f.work, 'never-created');
      const r = await runCli(['bump', '6.2.2', '--overlay', overlay, '--distdir', f.distdir, '--offline', '--bug', value], { home: f.home, cwd: f.work });
      assert.equal(r.code, 2, `${value}: ${r.stderr}`);
      assert.match(r.stderr, /--bug: .* is neither a bug number nor an https URL/);
      assert.ok(!existsSync(overlay));
    }
  });

  it('refuses a package the bump does not commit (exit 2)', async () => {
    const overlay = path.join(f.work, 'never-created-2');
    const r = await runCli(['bump', '6.2.2', '--overlay', overlay, '--distdir', f.distdir, '--offline', '--closes', 'sci-libs/nosuch=1'], { home: f.home, cwd: f.work });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /--bug\/--closes name sci-libs\/nosuch, which this bump does not commit/);
    assert.ok(!existsSync(overlay));
  });
});
