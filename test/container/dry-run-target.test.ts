import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { removeDir, runCli, tempDir } from '../helpers/project.js';
import { fakeHost, type FakeHost } from '../gpu/fake-host.js';

/**
 * `test --dry-run` plans containers: it needs no GPU for a gfx it is told, and
 * what it shows is what a real run would install, the LLVM unmask ROCm 10
 * needs included.
 */
describe('container: a dry run for a named target, and what ROCm 10 needs unmasked', function () {
  this.timeout(120_000);
  let cpuOnly: FakeHost;
  let work: string;
  let noEngine: string;
  const overlay = () => path.join(work, 'overlay');
  const run = (version: string, extra: string[], env: NodeJS.ProcessEnv = cpuOnly.env) =>
    runCli(['test', 'rocPRIM', '--overlay', overlay(), '--version', version, '--tree', path.join(work, 'tree'), '--report-dir', path.join(work, 'reports'), ...extra], {
      env: { ...env, PATH: noEngine },
    });

  before(async () => {
    cpuOnly = await fakeHost('cpu-only');
    work = await tempDir();
    noEngine = await tempDir();
    symlinkSync(spawnSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).stdout.trim(), path.join(noEngine, 'git'));
    mkdirSync(path.join(work, 'tree', 'profiles'), { recursive: true });
    writeFileSync(path.join(work, 'tree', 'profiles', 'repo_name'), 'gentoo\n');
    mkdirSync(path.join(overlay(), 'sci-libs', 'rocPRIM'), { recursive: true });
    for (const v of ['7.2.4', '10.0.0']) writeFileSync(path.join(overlay(), 'sci-libs', 'rocPRIM', `rocPRIM-${v}.ebuild`), '');
    mkdirSync(path.join(overlay(), 'profiles'));
    writeFileSync(path.join(overlay(), 'profiles', 'repo_name'), 'rocm\n');
  });
  after(async () => {
    await removeDir(work);
    await removeDir(noEngine);
    await removeDir(cpuOnly.dev);
  });

  it('--gpu gfx1100 --dry-run on a host without a GPU shows the container, saying the GPU is a stand-in', async () => {
    const r = await run('7.2.4', ['--gpu', 'gfx1100', '--dry-run']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /note: no gfx1100 GPU on this host: its container is shown with \/dev\/kfd and \/dev\/dri\/renderD128, as on a host with one such GPU; a real run needs the GPU/);
    const commands = r.stdout.split('\n').filter((l) => l && !l.startsWith('#'));
    assert.equal(commands.length, 1);
    assert.match(commands[0]!, /^podman run .*--name=rocm-ebuild-724-gfx1100-[0-9a-f]{6} /);
    assert.ok(commands[0]!.includes(`--device=${path.join(cpuOnly.dev, 'dev/kfd')}:/dev/kfd `), commands[0]);
    assert.ok(commands[0]!.includes(`--device=${path.join(cpuOnly.dev, 'dev/dri/renderD128')}:/dev/dri/renderD128 `), commands[0]);
    assert.match(r.stdout, /^# ROCm 7\.2\.4 on gfx1100: container /m, 'a stand-in has no GPU index to show');
    assert.match(r.stdout, /^# {3}AMDGPU_TARGETS="gfx1100"$/m);
    const json = JSON.parse((await run('7.2.4', ['--gpu', 'gfx1100', '--gpu', 'gfx90a', '--dry-run', '--json'])).stdout) as { containers: { gfx: string; gpu: number | null }[] };
    assert.deepEqual(json.containers.map((c) => [c.gfx, c.gpu]), [['gfx1100', null], ['gfx90a', null]]);
  });

  it('still refuses what a dry run cannot plan without a GPU, and every real run without one', async () => {
    for (const extra of [['--dry-run'], ['--gpu', 'auto', '--dry-run'], ['--gpu', '0', '--dry-run'], ['--gpu', 'gfx1100']]) {
      const r = await run('7.2.4', extra);
      assert.equal(r.code, 2, `${extra.join(' ')}: ${r.stdout} ${r.stderr}`);
      assert.match(r.stderr, /^rocm-ebuild: no AMD GPU found: looked at /m, extra.join(' '));
    }
    // The release's target policy still holds for a stand-in.
    const outside = await run('7.2.4', ['--gpu', 'gfx90c', '--dry-run']);
    assert.equal(outside.code, 2);
    assert.match(outside.stderr, /gfx90c \(GPU 0\) is not in ROCm 7\.2\.4's target policy/);
  });

  it('a host that has the GPU uses it, not a stand-in', async () => {
    const host = await fakeHost('workstation');
    try {
      const r = await run('7.2.4', ['--gpu', 'gfx1100', '--dry-run', '--json'], host.env);
      assert.equal(r.code, 0, r.stderr);
      const out = JSON.parse(r.stdout) as { containers: { gpu: number | null }[]; notes: string[] };
      assert.deepEqual(out.containers.map((c) => c.gpu), [1]);
      assert.ok(!out.notes.some((n) => /stand|no gfx1100/.test(n)), out.notes.join('\n'));
    } finally {
      await removeDir(host.dev);
    }
  });

  it('ROCm 10.0.0 (LLVM 23, which ::gentoo masks) gets -llvm_slot_23 in /etc/portage/profile/use.mask; 7.2.4 gets none', async () => {
    const ten = await run('10.0.0', ['--gpu', 'gfx1100', '--dry-run', '--json']);
    assert.equal(ten.code, 0, ten.stderr);
    const setup = (JSON.parse(ten.stdout) as { containers: { setup: Record<string, string> }[] }).containers[0]!.setup;
    assert.match(setup['profile/use.mask']!, /^-llvm_slot_23$/m);
    assert.match(setup['run.sh']!, /^\{ mkdir -p \/etc\/portage\/profile && cat "\$SETUP\/profile\/use\.mask" >>\/etc\/portage\/profile\/use\.mask; \} \|\| /m);
    const text = await run('10.0.0', ['--gpu', 'gfx1100', '--dry-run']);
    assert.match(text.stdout, /^# --- setup\/profile\/use\.mask: appended to \/etc\/portage\/profile\/use\.mask ---\n(#.*\n)*# {3}-llvm_slot_23$/m);
    const seven = JSON.parse((await run('7.2.4', ['--gpu', 'gfx1100', '--dry-run', '--json'])).stdout) as { containers: { setup: Record<string, string> }[] };
    assert.equal(seven.containers[0]!.setup['profile/use.mask'], undefined);
    assert.doesNotMatch(seven.containers[0]!.setup['run.sh']!, /profile\/use\.mask/);
    // The script with the unmask is still POSIX sh that shellcheck passes.
    // (SC2043: one device group makes a loop of one, as on any host whose kfd and render node share a group.)
    const sc = spawnSync('shellcheck', ['-s', 'sh', '-e', 'SC2043', '-'], { input: setup['run.sh']!, encoding: 'utf8' });
    assert.equal(sc.status, 0, sc.stdout);
  });
});
