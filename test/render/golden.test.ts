import { strict as assert } from 'node:assert';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { loadManifest } from '../../src/stack-check/index.js';
import { releaseModel, resolveStack, type StackModel } from '../../src/model/resolve.js';
import { loadPolicies } from '../../src/model/targets.js';
import { renderEbuild, renderMetadata } from '../../src/render/index.js';
import { root, shippedManifest } from '../helpers/project.js';

/**
 * Golden ebuilds of representative packages: a diff in review shows exactly
 * what a change does to generated output. After an intended change, rewrite
 * them with: UPDATE_GOLDEN=1 npm test
 */
const GOLDEN = path.join(root, 'test', 'fixtures', 'golden');
/** 6.2.2, read at its tags; 6.3.3, with the 6.3 layout changes. */
const RELEASES = ['6.2.2', '6.3.3', '7.2.4'];
const YEAR = 2026;
const PACKAGES = [
  'dev-util/hip', // several tarballs, llvm-r2, skip-globals
  'dev-libs/rocm-comgr', // a subdirectory of the shared llvm-project tarball
  'sci-libs/rocBLAS', // Tensile, full targets, GPU tests
  'sci-libs/rocPRIM', // header-only, targets only for tests
  'dev-util/Tensile', // Python (distutils-r1)
  'sci-libs/composable-kernel', // CMake HIP language, subset, DL_KERNELS rule
];
/**
 * A package across AMD's source switch: rocBLAS 7.1.1 from its own
 * repository's tag archive, 7.2.0 from the rocm-libraries release asset.
 */
const ERA_SWITCH: Record<string, string[]> = {
  '7.1.1': ['sci-libs/rocBLAS'],
  '7.2.0': ['sci-libs/rocBLAS'],
  // TheRock's 10.0.0: the commits it pins, monorepo archives unpacked in part
  // (hipBLASLt with shared/origami, hip with its sibling projects), a whole
  // repository at a commit (hipify-clang), and migraphx held at its own 7.2.4.
  '10.0.0': ['sci-libs/hipBLASLt', 'dev-util/hip', 'dev-libs/rocm-comgr', 'dev-util/hipify-clang', 'sci-libs/migraphx'],
};

for (const [version, packages] of [...RELEASES.map((r) => [r, PACKAGES] as const), ...Object.entries(ERA_SWITCH)]) {
  describe(`golden ebuilds (ROCm ${version})`, () => {
    let model: StackModel;

    before(async () => {
      const manifest = await loadManifest(shippedManifest);
      const policies = await loadPolicies(manifest);
      if ('issues' in policies) throw new Error('bad policies');
      model = resolveStack(manifest, releaseModel(manifest, version, policies.byRelease.get(version)!)!);
    });

    for (const atom of packages) {
      it(`${atom} renders as the golden file`, async () => {
        const c = model.byAtom.get(atom);
        assert.ok(c, `${atom} is not in the stack`);
        const files = {
          [`${c.pn}-${c.version}.ebuild`]: renderEbuild(c, model, { year: YEAR }),
          [`${c.pn}.metadata.xml`]: renderMetadata(c, model),
        };
        const dir = path.join(GOLDEN, version, c.category);
        for (const [name, text] of Object.entries(files)) {
          const file = path.join(dir, name);
          if (process.env.UPDATE_GOLDEN === '1' || !existsSync(file)) {
            if (process.env.CI && process.env.UPDATE_GOLDEN !== '1') assert.fail(`missing golden file ${path.relative(root, file)}`);
            await mkdir(dir, { recursive: true });
            await writeFile(file, text);
          }
          assert.equal(text, await readFile(file, 'utf8'), `${name} differs from ${path.relative(root, file)} (UPDATE_GOLDEN=1 rewrites it)`);
        }
      });
    }
  });
}
