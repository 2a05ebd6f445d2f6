import assert from 'node:assert/strict';
import { formatManifest, ManifestSyntaxError, parseManifest, updateManifest, type ManifestEntry } from '../../src/distfiles/index.js';

const hex = (c: string) => c.repeat(128);
const entry = (name: string, size: number, c = 'a'): ManifestEntry => ({ name, size, blake2b: hex(c), sha512: hex(c === 'a' ? 'b' : 'c') });
const line = (e: ManifestEntry) => `DIST ${e.name} ${e.size} BLAKE2B ${e.blake2b} SHA512 ${e.sha512}`;

describe('distfiles: thin Manifest text', () => {
  it('round-trips DIST lines, sorted by file name in code-point order', () => {
    const entries = [entry('rocBLAS-6.2.2.tar.gz', 10), entry('Tensile-6.2.2.tar.gz', 20), entry('rocBLAS-6.1.2.tar.gz', 30)];
    const text = formatManifest(entries);
    assert.equal(
      text,
      [entry('Tensile-6.2.2.tar.gz', 20), entry('rocBLAS-6.1.2.tar.gz', 30), entry('rocBLAS-6.2.2.tar.gz', 10)].map((e) => `${line(e)}\n`).join(''),
    );
    assert.deepEqual(parseManifest(text), parseManifest(formatManifest(parseManifest(text))));
    assert.deepEqual(parseManifest(text).map((e) => e.name), ['Tensile-6.2.2.tar.gz', 'rocBLAS-6.1.2.tar.gz', 'rocBLAS-6.2.2.tar.gz']);
  });

  it('writes nothing for no entries', () => {
    assert.equal(formatManifest([]), '');
    assert.deepEqual(parseManifest(''), []);
    assert.deepEqual(parseManifest('\n\n'), []);
  });

  it('keeps only DIST lines of a thick Manifest and drops extra hash types', () => {
    const e = entry('foo-1.tar.gz', 5);
    const text = [
      `EBUILD foo-1.ebuild 100 BLAKE2B ${hex('1')} SHA512 ${hex('2')}`,
      `AUX foo.patch 10 BLAKE2B ${hex('3')} SHA512 ${hex('4')}`,
      `DIST foo-1.tar.gz 5 BLAKE2B ${e.blake2b} SHA256 ${'d'.repeat(64)} SHA512 ${e.sha512}`,
      `MISC metadata.xml 300 BLAKE2B ${hex('5')} SHA512 ${hex('6')}`,
    ].join('\n');
    assert.deepEqual(parseManifest(text), [e]);
  });

  it('normalises upper-case hex and CRLF line ends', () => {
    const e = entry('x.tar.gz', 1, 'f');
    assert.deepEqual(parseManifest(`DIST x.tar.gz 1 BLAKE2B ${e.blake2b.toUpperCase()} SHA512 ${e.sha512.toUpperCase()}\r\n`), [e]);
  });

  const bad: [string, string, RegExp][] = [
    ['unknown type', `FOO x 1 BLAKE2B ${hex('a')} SHA512 ${hex('a')}`, /:2: unknown entry type "FOO"/],
    ['missing SHA512', `DIST x 1 BLAKE2B ${hex('a')}`, /:2: x has no SHA512 digest/],
    ['odd fields', `DIST x 1 BLAKE2B`, /:2: expected "DIST <file> <size>"/],
    ['bad size', `DIST x 1.5 BLAKE2B ${hex('a')} SHA512 ${hex('a')}`, /:2: invalid size "1\.5"/],
    ['short digest', `DIST x 1 BLAKE2B abc SHA512 ${hex('a')}`, /:2: BLAKE2B of x is not 128 hex digits/],
    ['hash twice', `DIST x 1 BLAKE2B ${hex('a')} BLAKE2B ${hex('a')} SHA512 ${hex('a')}`, /:2: BLAKE2B given twice/],
    ['conflicting duplicate', `DIST x 1 BLAKE2B ${hex('a')} SHA512 ${hex('a')}\nDIST x 2 BLAKE2B ${hex('a')} SHA512 ${hex('a')}`, /:3: x is listed twice/],
  ];
  for (const [what, text, message] of bad) {
    it(`rejects ${what} with file and line number`, () => {
      assert.throws(
        () => parseManifest(`DIST ok 1 BLAKE2B ${hex('a')} SHA512 ${hex('b')}\n${text}\n`, 'sci-libs/rocFoo/Manifest'),
        (err: unknown) => err instanceof ManifestSyntaxError && /^sci-libs\/rocFoo\/Manifest:/.test(err.message) && message.test(err.message),
      );
    });
  }

  it('accepts an identical duplicate line once', () => {
    const e = entry('dup.tar.gz', 3);
    assert.deepEqual(parseManifest(`${line(e)}\n${line(e)}\n`), [e]);
  });

  it('refuses to format an entry that would corrupt the file', () => {
    assert.throws(() => formatManifest([entry('has space.tar.gz', 1)]), /invalid file name/);
    assert.throws(() => formatManifest([{ ...entry('x', 1), blake2b: 'zz' }]), /invalid digest/);
    assert.throws(() => formatManifest([{ ...entry('x', 1), size: -1 }]), /invalid size/);
  });

  describe('updateManifest', () => {
    const old = [entry('foo-1.tar.gz', 1), entry('foo-2.tar.gz', 2), entry('shared.tar.gz', 3)];

    it('drops entries of removed versions, keeps the rest, replaces and adds', () => {
      const kept = new Set(['foo-2.tar.gz', 'shared.tar.gz']);
      const updated = updateManifest(old, [entry('foo-3.tar.gz', 4), entry('shared.tar.gz', 9, 'e')], (n) => kept.has(n));
      assert.deepEqual(updated, [entry('foo-2.tar.gz', 2), entry('foo-3.tar.gz', 4), entry('shared.tar.gz', 9, 'e')]);
    });

    it('adds `set` entries even when keep() would not keep them', () => {
      assert.deepEqual(updateManifest([], [entry('new.tar.gz', 1)], () => false), [entry('new.tar.gz', 1)]);
    });

    it('returns an empty list when everything goes, which formats to no Manifest text', () => {
      assert.equal(formatManifest(updateManifest(old, [], () => false)), '');
    });
  });
});
