import assert from 'node:assert/strict';
import { parseAtom, parseAtomAsWritten } from '../../src/ebuild/atom.js';
import { dependencyKeysOfText, restrictedDepsOfText } from '../../src/ebuild/dependencies.js';

describe('parseAtom: one reading of a dependency atom for bump, lint and the stack checks', () => {
  it('reads blockers, operators, versions with revisions and globs, slots, subslots, slot operators and USE dependencies', () => {
    assert.deepEqual(parseAtom('!!>=dev-util/hip-7.2.0-r1:0/7.2=[amdgpu_targets_gfx1100(-)?,-debug]'), {
      blocker: '!!',
      op: '>=',
      key: 'dev-util/hip',
      version: '7.2.0-r1',
      glob: false,
      slot: '0',
      subslot: '7.2',
      slotOp: '=',
      use: ['amdgpu_targets_gfx1100(-)?', '-debug'],
    });
    assert.deepEqual(parseAtom('=sci-libs/rocBLAS-7.2*'), { blocker: '', op: '=', key: 'sci-libs/rocBLAS', version: '7.2', glob: true, use: [] });
    assert.deepEqual(parseAtom('dev-libs/rocm-device-libs:='), { blocker: '', op: '', key: 'dev-libs/rocm-device-libs', glob: false, slotOp: '=', use: [] });
    assert.deepEqual(parseAtom('llvm-core/clang:*'), { blocker: '', op: '', key: 'llvm-core/clang', glob: false, slotOp: '*', use: [] });
    assert.equal(parseAtom('dev-python/ply-3.11_p20240101')?.key, undefined, 'a version needs an operator');
    assert.equal(parseAtom('>=dev-python/ply-3.11_p20240101')?.version, '3.11_p20240101');
    // A name with hyphens and digits is a name until what follows the last hyphen is a version.
    assert.equal(parseAtom('media-libs/libva-intel-media-driver')?.key, 'media-libs/libva-intel-media-driver');
    assert.equal(parseAtom('~sys-kernel/linux-headers-6.1')?.key, 'sys-kernel/linux-headers');
  });

  it('refuses what is not an atom: operators without versions, globs without =, an empty slot, groups and unexpanded text', () => {
    for (const word of ['>=dev-util/hip', '>=dev-util/hip-7.2*', 'dev-util/hip:', '||', 'test?', '(', '${PYTHON_DEPS}', '/usr/bin', 'cat/pkg[a]x']) {
      assert.equal(parseAtom(word), undefined, word);
    }
  });

  it('reads an atom as an ebuild writes it, ${SLOT} or ${PV} in its version or slot, its USE dependencies as written', () => {
    assert.deepEqual(parseAtomAsWritten('>=dev-util/hip-${PV}:${SLOT}[${ROCM_USEDEP}]'), {
      blocker: '',
      op: '>=',
      key: 'dev-util/hip',
      version: '0',
      glob: false,
      slot: '0',
      use: ['${ROCM_USEDEP}'],
    });
    assert.equal(parseAtomAsWritten('dev-util/hip[a]b'), undefined);
  });

  it('bump and lint read the same packages from the same text', async () => {
    const text = [
      'EAPI=8',
      'SLOT="0/$(ver_cut 1-2)"',
      'RDEPEND="',
      '\t>=dev-util/hip-7.2.0:${SLOT}',
      '\t~dev-util/hipcc-${PV}',
      '\t!<dev-libs/rocm-opencl-runtime-6.0',
      '\ttest? ( dev-cpp/gtest )',
      '\tsci-libs/hipBLAS-common:0/7.2=',
      '"',
      '',
    ].join('\n');
    assert.deepEqual([...(await dependencyKeysOfText(text))].sort(), ['dev-cpp/gtest', 'dev-util/hip', 'dev-util/hipcc', 'sci-libs/hipBLAS-common']);
    const restricted = await restrictedDepsOfText(text, 'hipBLAS', '7.2.0');
    assert.deepEqual(
      restricted.map((d) => [d.key, d.op, d.version, d.slot, d.subslot]),
      [
        ['dev-util/hip', '>=', '7.2.0', '0', '7.2'],
        ['dev-util/hipcc', '~', '7.2.0', undefined, undefined],
        ['sci-libs/hipBLAS-common', '', undefined, '0', '7.2'],
      ],
    );
  });
});
