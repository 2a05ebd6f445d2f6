import { strict as assert } from 'node:assert';
import { cp, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { generatedValidators, loadSchemas, SchemaValidator } from '../../src/manifest/schema-validator.js';
import { parseYamlSource } from '../../src/manifest/yaml-source.js';
import { removeDir, root, tempDir } from '../helpers/project.js';

/** The validation code npm run build generates must say exactly what ajv compiling the schemas says. */
describe('schema validation code generated at build time', () => {
  it('is there and was generated from the schemas as they are (run npm run build after changing one)', () => {
    assert.ok(generatedValidators(loadSchemas().digest), 'dist/src/manifest/validators.generated.cjs is missing or stale: run npm run build');
  });

  it('reports what ajv reports, issue for issue', async () => {
    const generated = new SchemaValidator();
    const compiled = new SchemaValidator(undefined, { generated: false });
    const text = await readFile(path.join(root, 'manifest', 'components', 'rocRAND.yaml'), 'utf8');
    const broken = [
      text,
      text.replace(/^atom: .*$/m, 'atom: 3'),
      text.replace(/^description: .*$/m, 'description: [1, 2]'),
      `${text}bogus: 1\n`,
      text.replace(/^name: .*\n/m, ''),
      'just a string\n',
    ];
    for (const [i, t] of broken.entries()) {
      const source = parseYamlSource(`case-${i}.yaml`, t).source!;
      for (const schema of ['component.schema.json', 'component-partial.schema.json']) {
        assert.deepEqual(generated.validateDetailed(schema, source), compiled.validateDetailed(schema, source), `case ${i}, ${schema}`);
      }
    }
  });

  it('is not used for other schemas: a changed schema is compiled', async () => {
    const dir = await tempDir('rocm-ebuild-schemas-');
    try {
      await cp(path.join(root, 'schemas'), dir, { recursive: true });
      const file = path.join(dir, 'component.schema.json');
      const schema = JSON.parse(await readFile(file, 'utf8')) as { properties: { description: { maxLength?: number } } };
      schema.properties.description = { ...schema.properties.description, maxLength: 5 };
      await writeFile(file, JSON.stringify(schema));
      assert.equal(generatedValidators(loadSchemas(dir).digest), undefined);
      const source = parseYamlSource('c.yaml', await readFile(path.join(root, 'manifest', 'components', 'rocRAND.yaml'), 'utf8')).source!;
      const issues = new SchemaValidator(dir).validate('component.schema.json', source);
      assert.ok(issues.some((i) => i.path === '$.description'), 'the changed schema is the one applied');
    } finally {
      await removeDir(dir);
    }
  });
});
