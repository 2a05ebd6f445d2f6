import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { projectRoot } from '../src/paths.js';
import {
  eclassGlobals,
  loadTargetTable,
  parseRocmVersion,
  parseTargetTable,
  policyFor,
  spliceEclassTable,
  PolicyError,
  type PolicyMatch,
  type TargetTable,
} from '../src/eclass/index.js';

const probe = path.join(projectRoot, 'test', 'eclass', 'probe.sh');

interface BashOutcome {
  version: string;
  status: string;
  policy: string;
  iuse: string;
  requiredUse: string;
  usedep: string;
  qa: string;
  died: string;
  errors: string;
}

/** Inherit the real eclass in real bash once per version (test/eclass/probe.sh). */
function inheritInBash(versions: string[], supported?: string[]): Map<string, BashOutcome> {
  const env = { ...process.env, ...(supported ? { PROBE_SUPPORTED: supported.join(' ') } : {}) };
  const r = spawnSync('bash', [probe, ...versions], { encoding: 'utf8', env });
  if (r.error) throw r.error;
  assert.equal(r.status, 0, r.stderr);
  const out = new Map<string, BashOutcome>();
  for (const line of r.stdout.replace(/\n$/, '').split('\n')) {
    const [version, status, policy, iuse, requiredUse, usedep, qa, died, errors] = line.split('\t') as string[];
    out.set(version!, { version: version!, status: status!, policy: policy!, iuse: iuse!, requiredUse: requiredUse!, usedep: usedep!, qa: qa!, died: died!, errors: errors! });
  }
  assert.equal(out.size, new Set(versions).size);
  return out;
}

type Outcome = { policy: string; approximate?: 'newer' | 'older'; notice?: string } | { error: PolicyError['reason'] };

function tsOutcome(table: TargetTable, version: string): Outcome {
  let m: PolicyMatch;
  try {
    m = policyFor(table, version);
  } catch (err) {
    if (err instanceof PolicyError) return { error: err.reason };
    throw err;
  }
  return { policy: m.policy.series, ...(m.approximate ? { approximate: m.approximate, notice: m.notice } : {}) };
}

function bashOutcome(b: BashOutcome): Outcome {
  if (b.status !== '0') {
    assert.notEqual(b.died, '', `ROCM_VERSION=${b.version}: bash failed without die: ${b.errors}`);
    return { error: /is not a ROCm version|set ROCM_VERSION before inheriting/.test(b.died) ? 'invalid-version' : 'gap' };
  }
  assert.equal(b.errors, '', `ROCM_VERSION=${b.version}: unexpected output on stderr`);
  if (b.qa === '') return { policy: b.policy };
  const approximate = /is newer than/.test(b.qa) ? 'newer' : /is older than/.test(b.qa) ? 'older' : undefined;
  assert.ok(approximate, `unexpected QA notice: ${b.qa}`);
  return { policy: b.policy, approximate, notice: b.qa };
}

describe('policyFor agrees with rocm.eclass', function () {
  let table: TargetTable;
  before(async function () {
    table = await loadTargetTable();
  });

  /** Versions around every boundary of the table, plus the special cases. */
  function versionsToProbe(): string[] {
    const versions = new Set<string>([
      '9999',
      // X.Y and suffixes
      '6.3', '6.4', '7.0', '6.2.2_rc1', '6.4.3_p2', '06.02', '6.2.02',
      // newer than known within a major
      '5.8', '5.9.1', '6.5', '6.5.0', '6.10.1', '7.1', '7.1.0', '7.12',
      // older than known within a major
      '5.0', '5.6.99', '5.7',
      // unknown majors
      '4.5', '8.0', '8.0.0', '10.1',
      // malformed
      '6', '6.x', 'v6.2', '6.2.2.1', '6.2-r1', '', '99999',
    ]);
    for (const p of table.policies) {
      const [x, y, z] = p.from.split('.').map(Number) as [number, number, number];
      const [ux, uy, uz] = p.until.split('.').map(Number) as [number, number, number];
      versions.add(p.from);
      versions.add(`${x}.${y}.${z + 1}`);
      versions.add(p.until);
      if (uz > 0) versions.add(`${ux}.${uy}.${uz - 1}`);
      else versions.add(`${ux}.${uy - 1 >= 0 ? uy - 1 : 0}.7`);
    }
    return [...versions];
  }

  it('for X.Y, X.Y.Z, 9999, newer- and older-than-known, unknown majors and malformed versions', function () {
    const versions = versionsToProbe();
    const bash = inheritInBash(versions);
    const mismatches: string[] = [];
    for (const version of versions) {
      const ts = tsOutcome(table, version);
      const sh = bashOutcome(bash.get(version)!);
      try {
        assert.deepEqual(ts, sh);
      } catch {
        mismatches.push(`ROCM_VERSION=${JSON.stringify(version)}: TypeScript ${JSON.stringify(ts)}, bash ${JSON.stringify(sh)}`);
      }
    }
    assert.deepEqual(mismatches, []);
    assert.ok(versions.length > 40);
  });

  it('on the exact semantics the issue asks for', function () {
    const outcome = (v: string) => tsOutcome(table, v);
    // X.Y is a release line: the series of X.Y.0 and those continuing it without a gap (::gentoo's "6.1" is every 6.x).
    assert.deepEqual(outcome('6.3'), { policy: '6.3 6.4.0-6.4.2 6.4.3+' }, 'two-part versions are a release line');
    assert.deepEqual(outcome('6.1'), { policy: '6.1 6.2 6.3 6.4.0-6.4.2 6.4.3+' });
    assert.deepEqual(outcome('6.4'), { policy: '6.4.0-6.4.2 6.4.3+' });
    assert.deepEqual(outcome('6.3.0'), { policy: '6.3' }, 'X.Y.Z is one release');
    assert.deepEqual(outcome('6.4.3'), { policy: '6.4.3+' });
    assert.deepEqual(outcome('6.4.12'), { policy: '6.4.3+' }, 'patch levels compare as numbers');
    assert.deepEqual(outcome('9999'), { policy: '7.0-7.2' }, "9999 is the live series's line: ::gentoo's 7.x lists");
    assert.deepEqual(outcome('7.0'), { policy: '7.0-7.2' }, 'the 7.3 to 7.8 gap ends the 7.0 line');
    assert.deepEqual(outcome('7.14'), { policy: '7.9-7.14' });
    assert.deepEqual(outcome('10.0.0'), { policy: '10.0+' });
    assert.deepEqual(outcome('7.2.4'), { policy: '7.0-7.2' });
    assert.deepEqual(outcome('7.5'), {
      policy: '7.0-7.2',
      approximate: 'newer',
      notice: 'ROCM_VERSION=7.5 is newer than the AMDGPU target table of rocm.eclass; using the targets of ROCm 7.0-7.2.',
    });
    assert.equal((outcome('5.1') as { approximate?: string }).approximate, 'older');
    // A major version the table does not know is not a die for users: the nearest older series, with a QA notice.
    assert.deepEqual(outcome('8.0'), {
      policy: '7.9-7.14',
      approximate: 'newer',
      notice: 'ROCM_VERSION=8.0 is newer than the AMDGPU target table of rocm.eclass; using the targets of ROCm 7.9-7.14.',
    });
    assert.deepEqual(outcome('12.0.1'), {
      policy: '10.0+',
      approximate: 'newer',
      notice: 'ROCM_VERSION=12.0.1 is newer than the AMDGPU target table of rocm.eclass; using the targets of ROCm 10.0+.',
    });
    assert.equal((outcome('4.5') as { policy?: string }).policy, '5.7');
    assert.deepEqual(outcome('6'), { error: 'invalid-version' });
    assert.deepEqual(parseRocmVersion('6.3'), { kind: 'release', text: '6.3', triple: [6, 3, 0], normalized: '6.3.0', patchGiven: false });
  });

  it('IUSE, ROCM_REQUIRED_USE and ROCM_USEDEP match for every series, with and without ROCM_SUPPORTED_TARGETS', function () {
    const versions = table.policies.map((p) => p.from);
    const subsets: (string[] | undefined)[] = [undefined, ['gfx90a', 'gfx942', 'gfx950', 'gfx1100', 'gfx1201', 'gfx1300'], ['gfx1031', 'gfx803']];
    for (const supported of subsets) {
      const bash = inheritInBash(versions, supported);
      for (const p of table.policies) {
        const b = bash.get(p.from)!;
        assert.equal(b.status, '0', `ROCM_VERSION=${p.from}: ${b.died}`);
        const expected = eclassGlobals(table, p, supported);
        assert.deepEqual(
          { iuse: b.iuse, requiredUse: b.requiredUse, usedep: b.usedep },
          { iuse: expected.iuse, requiredUse: expected.requiredUse, usedep: expected.usedep },
          `ROCM_VERSION=${p.from} ROCM_SUPPORTED_TARGETS=(${supported?.join(' ') ?? ''})`,
        );
      }
    }
  });

  it('X.Y release lines and 9999 give the same IUSE, ROCM_REQUIRED_USE and ROCM_USEDEP in bash and TypeScript', function () {
    const versions = ['9999', ...table.policies.map((p) => p.from.replace(/\.0$/, '')).filter((v) => v.split('.').length === 2), '6.1_rc1', '5.2', '7.7'];
    for (const supported of [undefined, ['gfx906', 'gfx1151', 'gfx1201']]) {
      const bash = inheritInBash(versions, supported);
      for (const v of versions) {
        const b = bash.get(v)!;
        assert.equal(b.status, '0', `ROCM_VERSION=${v}: ${b.died}`);
        const match = policyFor(table, v);
        assert.equal(b.policy, match.policy.series, `ROCM_VERSION=${v}`);
        const expected = eclassGlobals(table, match.policy, supported);
        assert.deepEqual({ iuse: b.iuse, requiredUse: b.requiredUse, usedep: b.usedep }, { iuse: expected.iuse, requiredUse: expected.requiredUse, usedep: expected.usedep }, `ROCM_VERSION=${v}`);
      }
    }
    // A line's defaults are its last series's: gfx906 is default-on in 6.1 alone, off from 6.4 on.
    const line = policyFor(table, '6.1');
    assert.deepEqual(line.line.map((p) => p.series), ['6.1', '6.2', '6.3', '6.4.0-6.4.2', '6.4.3+']);
    assert.ok(line.policy.optional.includes('gfx906') && line.policy.defaultOn.includes('gfx1201'));
  });

  it('agrees on a table whose oldest line is several series long: a version before it takes the whole line, with a QA notice', function () {
    // The shipped table without 5.7, so that 6.0 to 6.4.3+ (one line) is the oldest; live on 6.2.
    const text = readFileSync(path.join(projectRoot, 'manifest', 'targets.yaml'), 'utf8')
      .replace(/  - series: "5\.7"\n(    .*\n)+/, '')
      .replace(/^live: .*$/m, 'live: "6.2"');
    const synthetic = parseTargetTable(text, 'targets.yaml');
    assert.equal(synthetic.policies[0]!.series, '6.0');
    const dir = mkdtempSync(path.join(tmpdir(), 'rocm-ebuild-policy-'));
    try {
      writeFileSync(path.join(dir, 'rocm.eclass'), spliceEclassTable(readFileSync(path.join(projectRoot, 'eclass', 'rocm.eclass'), 'utf8'), synthetic));
      const versions = ['5.1', '5.1.0', '9999', '6.3', '6.5', '7.5'];
      const script = [
        `source ${JSON.stringify(path.join(projectRoot, 'test', 'eclass', 'tests-common.sh'))} || exit 1`,
        `TESTS_ECLASS_SEARCH_PATHS=( ${JSON.stringify(dir)} )`,
        'for v in "$@"; do ( ROCM_VERSION=${v}; inherit rocm 2>/dev/null; printf "%s\\t%s\\t%s\\n" "${v}" "${_ROCM_POLICY}" "$(sed -n "s/^eqawarn: //p" "${STUB_LOG}" | head -n 1)" ); stub_log_reset; done',
      ].join('\n');
      const r = spawnSync('bash', ['-c', script, 'probe', ...versions], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      const got = r.stdout.trim().split('\n').map((l) => l.split('\t'));
      const expected = versions.map((v) => {
        const m = policyFor(synthetic, v);
        return [v, m.policy.series, m.notice ?? ''];
      });
      assert.deepEqual(got, expected);
      assert.deepEqual(expected[0], ['5.1', '6.0 6.1 6.2 6.3 6.4.0-6.4.2 6.4.3+', 'ROCM_VERSION=5.1 is older than the AMDGPU target table of rocm.eclass; using the targets of ROCm 6.0 and the releases after it.']);
      assert.equal(expected[1]![1], '6.0', 'X.Y.Z is one series even before the table');
      assert.equal(expected[2]![1], '6.2 6.3 6.4.0-6.4.2 6.4.3+', '9999 reads as the X.Y of the live series');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a subset disjoint from the policy fails in both', function () {
    const p = table.policies.find((x) => x.series === '6.2')!;
    assert.throws(() => eclassGlobals(table, p, ['gfx950']), PolicyError);
    const b = inheritInBash(['6.2.2'], ['gfx950']).get('6.2.2')!;
    assert.equal(b.status, '1');
    assert.match(b.died, /none of ROCM_SUPPORTED_TARGETS \(gfx950\) is offered for ROCm 6\.2\.2/);
  });
});
