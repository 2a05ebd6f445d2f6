import { strict as assert } from 'node:assert';
import { byCodePoint } from '../../src/util/order.js';
import { BASE_FILES, fixtureManifest } from '../helpers/fixture-manifest.js';
import { removeDir, runCli } from '../helpers/project.js';

/**
 * What rocm-ebuild writes must not depend on the maintainer's locale: with
 * LC_ALL=cs_CZ.UTF-8, ICU's collation puts "ch" after "h" (so "cholmod" after
 * "hwloc"), and with cy_GB "th" after "tz". Node's ICU reads the locale from
 * the environment whether or not the system has it installed.
 */
describe('output independent of the locale', function () {
  this.timeout(60_000);
  let dir: string;
  before(async () => {
    const gpulib = BASE_FILES['components/gpulib.yaml']!.replace(
      'use:\n  benchmark:\n    description: Build the benchmark program\n',
      [
        'use:',
        '  benchmark:',
        '    description: Build the benchmark program',
        '  hwloc:',
        '    description: Pin threads with hwloc',
        '  cholmod:',
        '    description: Sparse factorisation through CHOLMOD',
        '  tzdata:',
        '    description: Time zones',
        '  thread:',
        '    description: Threads',
        '',
      ].join('\n'),
    );
    assert.notEqual(gpulib, BASE_FILES['components/gpulib.yaml'], 'the fixture has the use: block this test extends');
    dir = await fixtureManifest({ 'components/gpulib.yaml': gpulib });
  });
  after(() => removeDir(dir));

  it('sorts by code point', () => {
    assert.deepEqual(['hwloc', 'cholmod', 'thread', 'tzdata', 'MIVisionX', 'miopen', 'a_b', 'a-b', 'a1'].sort(byCodePoint), ['MIVisionX', 'a-b', 'a1', 'a_b', 'cholmod', 'hwloc', 'miopen', 'thread', 'tzdata']);
  });

  it('renders the same ebuild and metadata.xml under cs_CZ, cy_GB and C', async () => {
    const outputs: string[] = [];
    for (const locale of ['C.UTF-8', 'cs_CZ.UTF-8', 'cy_GB.UTF-8']) {
      const env = { LC_ALL: locale, LANG: locale, XDG_CACHE_HOME: undefined };
      const ebuild = await runCli(['render', 'sci-libs/gpulib', '--manifest', dir, '--version', '6.2.2', '--year', '2026'], { env });
      assert.equal(ebuild.code, 0, ebuild.stderr);
      const metadata = await runCli(['render', 'sci-libs/gpulib', '--manifest', dir, '--version', '6.2.2', '--metadata'], { env });
      assert.equal(metadata.code, 0, metadata.stderr);
      outputs.push(ebuild.stdout + metadata.stdout);
    }
    assert.match(outputs[0]!, /^IUSE="benchmark cholmod hwloc test thread tzdata"$/m);
    assert.deepEqual([...outputs[0]!.matchAll(/<flag name="([^"]+)"/g)].map((m) => m[1]), ['benchmark', 'cholmod', 'hwloc', 'thread', 'tzdata']);
    assert.equal(outputs[1], outputs[0], 'cs_CZ');
    assert.equal(outputs[2], outputs[0], 'cy_GB');
  });
});
