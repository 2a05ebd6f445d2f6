import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { cdiSpec } from '../../src/gpu/cdi.js';
import { deviceTablePath, loadDeviceTable } from '../../src/gpu/devices.js';
import { gfxName, gfxTargetVersion } from '../../src/gpu/gfx.js';
import { formatGpuTable, listGpus, targetVerdict } from '../../src/gpu/list.js';
import { parseProperties, pciAddress, readTopology, rootsFromEnv } from '../../src/gpu/topology.js';
import { loadTargetTable } from '../../src/eclass/table.js';
import { defaultTargetsPath } from '../../src/paths.js';
import { removeDir, runCli, tempDir } from '../helpers/project.js';
import { fakeHost, isRoot, kfdFixtures, type FakeHost } from './fake-host.js';

const update = process.env.UPDATE_GOLDEN === '1';

/** Paths of this run replaced by placeholders, so golden files hold no temp dir. */
function normalise(value: unknown, host: FakeHost): unknown {
  return JSON.parse(JSON.stringify(value).split(host.dev).join('$DEV').split(host.sysfs).join('$SYSFS'));
}

function golden(name: string, actual: string): void {
  const file = path.join(kfdFixtures, name);
  if (update || !existsSync(file)) writeFileSync(file, actual);
  assert.equal(actual, readFileSync(file, 'utf8'), `${name} differs (UPDATE_GOLDEN=1 rewrites it after an intended change)`);
}

describe('gpu: gfx decoding', () => {
  it('decodes gfx_target_version as offload-arch does', () => {
    const table: [number, string | undefined][] = [
      [90010, 'gfx90a'],
      [110000, 'gfx1100'],
      [90402, 'gfx942'],
      [100300, 'gfx1030'],
      [90012, 'gfx90c'],
      [80003, 'gfx803'],
      [110501, 'gfx1151'],
      [120001, 'gfx1201'],
      [90500, 'gfx950'],
      [0, undefined],
      [91600, undefined],
      [90016, undefined],
      [-1, undefined],
    ];
    for (const [v, name] of table) assert.equal(gfxName(v), name, String(v));
  });

  it('round-trips every target of targets.yaml', async () => {
    const table = await loadTargetTable(defaultTargetsPath);
    for (const t of table.targets) {
      assert.equal(gfxName(t.gfxTargetVersion), t.name);
      assert.equal(gfxTargetVersion(t.name), t.gfxTargetVersion, `${t.name}: the KFD version a CI job's host looks for`);
    }
    assert.equal(gfxTargetVersion('not-a-gfx'), undefined);
  });

  it('reads PCI addresses and property files as KFD writes them', () => {
    assert.equal(pciAddress(0, 0x6300), '0000:63:00.0');
    assert.equal(pciAddress(1, (0xc3 << 8) | (0x1f << 3) | 7), '0001:c3:1f.7');
    const p = parseProperties('cpu_cores_count 0\nsimd_count 416\nunique_id 1801979520617338022\n\ngarbage\n');
    assert.equal(p.get('simd_count'), '416');
    assert.equal(p.get('unique_id'), '1801979520617338022');
    assert.equal(p.size, 3);
  });

  it('the device table names only targets of targets.yaml, each id once', async () => {
    const targets = new Set((await loadTargetTable(defaultTargetsPath)).targets.map((t) => t.name));
    const table = await loadDeviceTable(deviceTablePath(defaultTargetsPath), targets);
    assert.ok(table.devices.length > 40);
    assert.equal(table.byId.get('740f')?.gfx, 'gfx90a');
    assert.equal(table.byId.get('74a1')?.gfx, 'gfx942');
    assert.equal(table.byId.get('744c')?.gfx, 'gfx1100');
  });

  it('the roots come from the environment, "/" by default', () => {
    assert.deepEqual(rootsFromEnv({}), { sysfs: '/', dev: '/' });
    assert.deepEqual(rootsFromEnv({ ROCM_EBUILD_SYSFS_ROOT: '/a', ROCM_EBUILD_DEV_ROOT: '/b/' }), { sysfs: '/a', dev: '/b' });
  });
});

describe('gpu: KFD topology', function () {
  this.timeout(60_000);
  const hosts: FakeHost[] = [];
  after(async () => {
    for (const h of hosts) await removeDir(h.dev);
  });
  const host = async (scenario: string) => {
    const h = await fakeHost(scenario);
    hosts.push(h);
    return h;
  };

  it('a workstation: CPU nodes skipped, GPUs in node order, render minors not contiguous', async () => {
    const h = await host('workstation');
    const t = await readTopology(h);
    assert.equal(t.cpuNodes, 2);
    assert.deepEqual(t.gpus.map((g) => [g.index, g.node, g.gfx, g.render?.path, g.pciAddress]), [
      [0, 2, 'gfx90a', '/dev/dri/renderD128', '0000:63:00.0'],
      [1, 3, 'gfx1100', '/dev/dri/renderD136', '0000:03:00.0'],
      [2, 4, 'gfx1030', '/dev/dri/renderD131', '0000:c3:00.0'],
    ]);
    assert.equal(t.gpus[0]!.computeUnits, 104);
    assert.equal(t.gpus[0]!.vramBytes, 64 * 2 ** 30);
    assert.equal(t.gpus[1]!.render!.gid, h.gids['/dev/dri/renderD136']);
    assert.equal(t.kfd.gid, h.gids['/dev/kfd']);
    assert.ok(t.gpus.every((g) => g.problems.length === 0 && g.partition === null));
  });

  it('an MI300X in CPX mode: four partitions of one device, each its own GPU', async () => {
    const t = await readTopology(await host('mi300x-cpx'), await loadDeviceTable(deviceTablePath(defaultTargetsPath)));
    assert.equal(t.gpus.length, 5);
    assert.deepEqual(t.gpus.map((g) => g.partition), [
      { index: 0, count: 4 },
      { index: 1, count: 4 },
      { index: 2, count: 4 },
      { index: 3, count: 4 },
      null,
    ]);
    assert.ok(t.gpus.every((g) => g.gfx === 'gfx942' && g.name === 'AMD Instinct MI300X' && g.problems.length === 0));
    assert.equal(t.gpus[4]!.computeUnits, 304);
  });

  it('an APU whose CPU cores and GPU share one node is a GPU', async () => {
    const t = await readTopology(await host('apu'));
    assert.equal(t.cpuNodes, 0);
    assert.equal(t.gpus.length, 1);
    assert.equal(t.gpus[0]!.gfx, 'gfx90c');
    assert.equal(t.gpus[0]!.vramBytes, 512 * 2 ** 20, 'the carve-out, not system memory');
  });

  it('missing properties are reported per GPU, not dropped', async () => {
    const h = await host('incomplete');
    const devices = await loadDeviceTable(deviceTablePath(defaultTargetsPath));
    const t = await readTopology(h, devices);
    assert.deepEqual(t.gpus.map((g) => [g.gfx, g.gfxSource]), [
      ['gfx1030', 'device-id'],
      ['gfx1100', 'kfd'],
      ['gfx90a', 'kfd'],
      [null, null],
    ]);
    assert.deepEqual(t.gpus[0]!.problems, []);
    assert.match(t.gpus[1]!.problems.join(), /no render node/);
    assert.match(t.gpus[2]!.problems.join(), /renderD130 does not exist/);
    assert.match(t.gpus[3]!.problems.join(), /device id 0x7fff is not in the device table/);
    assert.match(t.problems.join(), /nodes\/5\/properties cannot be read/);
  });

  for (const [what, make] of [
    ['a FIFO with no writer', (file: string) => execFileSync('mkfifo', [file])],
    ['a link to /dev/zero', (file: string) => symlinkSync('/dev/zero', file)],
  ] as const) {
    it(`a properties file that is ${what} is reported, and gpu list does not wait on it`, async () => {
      const h = await host('workstation');
      const sysfs = await tempDir('rocm-ebuild-sysfs-');
      try {
        cpSync(h.sysfs, sysfs, { recursive: true });
        const nodes = path.join(sysfs, 'sys/class/kfd/kfd/topology/nodes');
        rmSync(path.join(nodes, '3', 'properties'));
        make(path.join(nodes, '3', 'properties'));
        rmSync(path.join(nodes, '2', 'mem_banks', '0', 'properties'));
        make(path.join(nodes, '2', 'mem_banks', '0', 'properties'));
        const r = await runCli(['gpu', 'list', '--version', '6.2.2', '--json'], { env: { ...h.env, ROCM_EBUILD_SYSFS_ROOT: sysfs }, killAfterMs: 20_000 });
        assert.equal(r.code, 0, r.stderr);
        const list = JSON.parse(r.stdout) as { gpus: { gfx: string }[]; topology: { problems: string[] } };
        assert.deepEqual(list.gpus.map((g) => g.gfx), ['gfx90a', 'gfx1030']);
        assert.match(list.topology.problems.join('\n'), /nodes\/3\/properties cannot be read: (a FIFO|a character device), not a regular file/);
      } finally {
        await removeDir(sysfs);
      }
    });
  }

  it('no KFD at all says what was looked at', async () => {
    const dir = await tempDir();
    try {
      const t = await readTopology({ sysfs: dir, dev: dir });
      assert.equal(t.gpus.length, 0);
      assert.match(t.problems[0]!, /sys\/class\/kfd\/kfd\/topology\/nodes does not exist: the amdgpu kernel driver is not loaded/);
    } finally {
      await removeDir(dir);
    }
  });

  it('the target policy decides AMDGPU_TARGETS', () => {
    const policy = { defaultOn: ['gfx90a', 'gfx1100'], optional: ['gfx1031'] };
    assert.deepEqual(targetVerdict('gfx90a', policy), { status: 'default-on', amdgpuTargets: 'gfx90a' });
    assert.deepEqual(targetVerdict('gfx1031', policy), { status: 'optional', amdgpuTargets: 'gfx1031' });
    assert.deepEqual(targetVerdict('gfx90c', policy), { status: 'not-offered', amdgpuTargets: null });
    assert.deepEqual(targetVerdict(null, policy), { status: 'not-offered', amdgpuTargets: null });
  });

  for (const scenario of ['workstation', 'mi300x-cpx', 'apu', 'incomplete', 'cpu-only']) {
    it(`gpu list --json on "${scenario}" matches its golden file`, async () => {
      const h = await host(scenario);
      const r = await runCli(['gpu', 'list', '--version', '6.2.2', '--json'], { env: h.env });
      assert.equal(r.code, 0, r.stderr);
      golden(`${scenario}/gpu-list.json`, `${JSON.stringify(normalise(JSON.parse(r.stdout), h), null, 2)}\n`);
    });
  }

  it('gpu list prints a table with every problem under its GPU', async () => {
    const h = await host('incomplete');
    const list = await listGpus({ roots: h, targetsFile: defaultTargetsPath, release: '6.2.2' });
    const text = formatGpuTable(list);
    assert.match(text, /^# +GFX +NAME/);
    assert.match(text, /\n1 +gfx1100 .*\n +! KFD reports no render node/);
    assert.match(text, /not offered by ROCm 6\.2\.2/);
    const r = await runCli(['gpu', 'list', '--version', '6.2.2'], { env: h.env });
    assert.equal(r.stdout, text);
    assert.doesNotMatch(r.stdout, /\x1b\[/);
  });

  it('the CDI spec has one device per usable GPU plus "all", as amd-ctk writes it', async () => {
    const h = await host('workstation');
    const r = await runCli(['gpu', 'list', '--format', 'cdi'], { env: h.env });
    assert.equal(r.code, 0, r.stderr);
    const spec = JSON.parse(r.stdout) as ReturnType<typeof cdiSpec>;
    assert.equal(spec.cdiVersion, '0.6.0');
    assert.equal(spec.kind, 'amd.com/gpu');
    assert.deepEqual(spec.devices.map((d) => d.name), ['0', '1', '2', 'all']);
    assert.deepEqual(spec.devices[3]!.containerEdits.deviceNodes.map((n) => n.path), ['/dev/dri/renderD128', '/dev/dri/renderD136', '/dev/dri/renderD131', '/dev/kfd']);
    golden('workstation/cdi.json', `${JSON.stringify(normalise(spec, h), null, 2)}\n`);
  });

  it('CDI device nodes carry type and numbers for real character devices', async function () {
    if (!isRoot) this.skip();
    const h = await fakeHost('apu', { char: true });
    hosts.push(h);
    const t = await readTopology(h);
    const spec = cdiSpec(t);
    assert.deepEqual(spec.devices[0]!.containerEdits.deviceNodes[1], { path: '/dev/kfd', hostPath: path.join(h.dev, 'dev/kfd'), type: 'c', major: 1, minor: 3, fileMode: 0o660, permissions: 'rw', gid: 110 });
  });

  it('gpu list --help has usage, examples and --json', async () => {
    const r = await runCli(['gpu', 'list', '--help']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^USAGE\n {2}\$ rocm-ebuild gpu list/m);
    assert.match(r.stdout, /^EXAMPLES\n/m);
    assert.match(r.stdout, /--json\s+Format output as json\./);
    assert.match(r.stdout, /ROCM_EBUILD_SYSFS_ROOT and ROCM_EBUILD_DEV_ROOT/);
  });

  it('an unknown release is a usage error', async () => {
    const h = await host('workstation');
    const r = await runCli(['gpu', 'list', '--version', '9.9.9'], { env: h.env });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /release 9\.9\.9 is not in the manifest/);
  });
});
