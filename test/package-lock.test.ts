import { strict as assert } from 'node:assert';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { root } from './helpers/project.js';

/**
 * `npm install` rewrites package-lock.json whenever its copy of the root
 * package (the `packages[""]` entry) disagrees with package.json, so a fresh
 * clone would start with a modified lock file. They must agree field by field.
 */
describe('package-lock.json', () => {
  it("records package.json's own fields as they are (npm install leaves it unchanged)", async () => {
    const pkg = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as Record<string, unknown>;
    const lock = JSON.parse(await readFile(path.join(root, 'package-lock.json'), 'utf8')) as {
      name: string;
      version: string;
      packages: Record<string, Record<string, unknown>>;
    };
    assert.equal(lock.name, pkg.name);
    assert.equal(lock.version, pkg.version);
    const self = lock.packages['']!;
    for (const field of ['name', 'version', 'license', 'dependencies', 'devDependencies', 'engines']) {
      assert.deepEqual(self[field], pkg[field], `package-lock.json packages[""].${field} differs from package.json`);
    }
    const bin = Object.fromEntries(Object.entries((pkg.bin ?? {}) as Record<string, string>).map(([k, v]) => [k, v.replace(/^\.\//, '')]));
    assert.deepEqual(self.bin, bin);
  });
});
