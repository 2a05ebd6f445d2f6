import { strict as assert } from 'node:assert';
import { parseMaintainer } from '../../src/overlay/settings.js';

/** --maintainer and metadata/rocm-ebuild.conf's maintainer: what metadata.xml may name. */
describe('overlay settings: the maintainer a value names', () => {
  it('refuses bidirectional controls, line separators and a byte-order mark anywhere in it', () => {
    for (const hidden of ['\u202e', '\u202a', '\u2066', '\u2069', '\u200f', '\u061c', '\u2028', '\u2029', '\ufeff', '\x85', '\x1b']) {
      assert.equal(parseMaintainer(`Ada${hidden} Tester <ada@example.org>`), undefined, JSON.stringify(hidden));
      assert.equal(parseMaintainer(`Ada Tester <ada${hidden}@example.org>`), undefined, JSON.stringify(hidden));
    }
  });

  it('keeps names in any script, joiners included (ZWNJ is part of Persian and Indic spelling)', () => {
    assert.deepEqual(parseMaintainer('مهسا\u200cرضایی <m@example.org>'), { kind: 'person', name: 'مهسا\u200cرضایی', email: 'm@example.org' });
    assert.deepEqual(parseMaintainer('Zoë Ünal <zoe@example.org>'), { kind: 'person', name: 'Zoë Ünal', email: 'zoe@example.org' });
    assert.deepEqual(parseMaintainer('gentoo'), { kind: 'gentoo' });
  });
});
