import { strict as assert } from 'node:assert';
import { isAlias, parseDocument, visit, type Alias } from 'yaml';
import { parseYamlSource } from '../../src/manifest/yaml-source.js';

/**
 * Whether an alias refers to an anchor is decided in one walk of the file
 * (yaml's Alias.resolve walks the whole document for every alias): by the
 * same rule, the last node with that anchor before the alias in document
 * order, keys before their values, a collection before its items.
 */
describe('YAML aliases resolve as the yaml library resolves them', () => {
  const unresolved = (text: string) =>
    parseYamlSource('m.yaml', text)
      .issues.filter((i) => i.message.includes('refers to no anchor'))
      .map((i) => i.message.replace(/^alias \*(\S+) .*$/, '$1'));

  const cases: [string, string][] = [
    ['an alias after its anchor', 'b: &x 1\na: *x\n'],
    ['an alias before its anchor', 'a: *x\nb: &x 1\n'],
    ['an anchor redefined after the alias', 'a: &x 1\nb: *x\nc: &x 2\nd: *x\n'],
    ['an anchor on a key', '&k key: 1\nother: *k\n'],
    ['an alias to the collection holding it', 'a: &self\n  - 1\n  - *self\n'],
    ['an anchor in a sibling list, and a name never defined', 'l:\n  - &one 1\n  - [*one, *two]\nm: { k: *one, j: *two }\n'],
    ['a flow mapping whose key bears the anchor', '{ &fk k: v, o: *fk }\n'],
  ];
  for (const [what, text] of cases) {
    it(what, () => {
      const doc = parseDocument(text, { version: '1.2' });
      const expected: string[] = [];
      visit(doc, {
        Alias: (_k, node: Alias) => {
          if (isAlias(node) && !node.resolve(doc)) expected.push(node.source);
        },
      });
      assert.deepEqual(unresolved(text), expected, text);
    });
  }

  it('refuses an alias to an anchor written after it, and reads one written before', () => {
    assert.deepEqual(unresolved('a: *x\nb: &x 1\n'), ['x']);
    const read = parseYamlSource('m.yaml', 'b: &x [1, 2]\na: *x\n');
    assert.deepEqual(read.issues, []);
    assert.deepEqual(read.source?.value, { b: [1, 2], a: [1, 2] });
  });
});
