import { strict as assert } from 'node:assert';
import { cp, mkdir, readFile, rename, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { renderAmdgpuTargetsDesc } from '../../src/eclass/render-desc.js';
import { loadTargetTable } from '../../src/eclass/table.js';
import { knownReleases } from '../../src/model/resolve.js';
import { releaseSample } from '../helpers/sample.js';
import { buildContext } from '../../src/render/context.js';
import { templateEnv } from '../../src/render/env.js';
import { metadataContext } from '../../src/render/index.js';
import { writeGeneratedTemplates } from '../../src/render/build-templates.js';
import { GENERATED_TEMPLATES, precompiledTemplates } from '../../src/render/precompiled.js';
import { defaultTargetsPath, templatesDir } from '../../src/paths.js';
import { loadManifestOrFail, stackFor } from '../../src/stack-check/index.js';
import { removeDir, root, runCli, shippedManifest, tempDir } from '../helpers/project.js';

/**
 * The templates are compiled at build time (src/render/build-templates.ts)
 * and that code is used only for the very templates it came from: what it
 * renders is what the templates compiled from source render, and an edited
 * template is compiled afresh.
 */
/** The classes of an environment's loaders (nunjucks' bundle may suffix them with a number). */
function loaderNames(env: ReturnType<typeof templateEnv>): string[] {
  return (env as unknown as { loaders: object[] }).loaders.map((l) => l.constructor.name.replace(/\d+$/, ''));
}

describe('templates compiled at build time', function () {
  this.timeout(120_000);
  let dir: string;
  before(async () => {
    dir = await tempDir('rocm-ebuild-templates-');
  });
  after(() => removeDir(dir));

  it('are those of ebuild-templates/ and render every package of a release of each family byte for byte as the source does', async () => {
    assert.ok(precompiledTemplates(templatesDir), `npm run build wrote ${GENERATED_TEMPLATES} from the shipped templates`);
    const compiled = templateEnv();
    assert.deepEqual(loaderNames(compiled), ['PrecompiledLoader', 'FileSystemLoader']);
    // Another directory with the same files: compiled from source.
    const copy = path.join(dir, 'same');
    await cp(templatesDir, copy, { recursive: true });
    const source = templateEnv(copy);
    assert.deepEqual(loaderNames(source), ['FileSystemLoader']);
    const manifest = await loadManifestOrFail(shippedManifest);
    let rendered = 0;
    for (const version of releaseSample(knownReleases(manifest), 'precompiled templates')) {
      const model = await stackFor(manifest, version);
      for (const c of model.components) {
        const context = buildContext(c, model, { year: 2026 });
        assert.equal(compiled.render('ebuild.njk', context), source.render('ebuild.njk', context), `${c.atom}-${version}`);
        const metadata = metadataContext(c, model);
        assert.equal(compiled.render('metadata.xml.njk', metadata), source.render('metadata.xml.njk', metadata), `${c.atom} metadata.xml`);
        rendered++;
      }
    }
    assert.ok(rendered > 90, `${rendered} ebuilds`);
    for (const sign of [true, false]) {
      assert.equal(compiled.render('repo/layout.conf.njk', { repoName: 'rocm', signCommits: sign }), source.render('repo/layout.conf.njk', { repoName: 'rocm', signCommits: sign }));
    }
    const table = await loadTargetTable(defaultTargetsPath);
    const desc = renderAmdgpuTargetsDesc(table, 2026);
    assert.match(desc, /^gfx90a - /m);
    assert.equal(desc, source.render('profiles/amdgpu_targets.desc.njk', { year: 2026, targets: table.targets.filter((t) => desc.includes(`${t.name} - `)) }));
  });

  it('are not used for templates that differ from those they were made from', async () => {
    const edited = path.join(dir, 'edited');
    await cp(templatesDir, edited, { recursive: true });
    assert.ok(precompiledTemplates(edited), 'the same files elsewhere: the same digest');
    await writeFile(path.join(edited, 'ebuild.njk'), `${await readFile(path.join(edited, 'ebuild.njk'), 'utf8')}# edited\n`);
    assert.equal(precompiledTemplates(edited), undefined, 'an edited template');
    assert.equal(precompiledTemplates(templatesDir, path.join(dir, 'none.cjs')), undefined, 'no generated file');
    const foreign = path.join(dir, 'foreign.cjs');
    await writeFile(foreign, "exports.digest = 'another'; exports.templates = {};\n");
    assert.equal(precompiledTemplates(templatesDir, foreign), undefined, 'a file made from other templates');
  });

  it('an installed rocm-ebuild whose template was edited renders the edit', async () => {
    // A copy of the package as installed (bundles current), with its own templates.
    const pkg = path.join(dir, 'pkg');
    await mkdir(path.join(pkg, 'dist'), { recursive: true });
    for (const f of ['bin', 'package.json', 'oclif.manifest.json', 'ebuild-templates']) await cp(path.join(root, f), path.join(pkg, f), { recursive: true });
    for (const d of ['src', 'vendor', 'cli']) await cp(path.join(root, 'dist', d), path.join(pkg, 'dist', d), { recursive: true, preserveTimestamps: true });
    for (const d of ['node_modules', 'manifest', 'schemas', 'eclass']) await symlink(path.join(root, d), path.join(pkg, d));
    const render = () => runCli(['render', 'hip', '--version', '6.2.2', '--year', '2026'], { bin: path.join(pkg, 'bin', 'run.js') });
    const before = await render();
    assert.equal(before.code, 0, before.stderr);
    const template = path.join(pkg, 'ebuild-templates', 'ebuild.njk');
    await writeFile(template, (await readFile(template, 'utf8')).replace(/^EAPI=8$/m, 'EAPI=8\n# edited template'));
    const after = await render();
    assert.equal(after.code, 0, after.stderr);
    assert.equal(after.stdout, before.stdout.replace(/^EAPI=8$/m, 'EAPI=8\n# edited template'));

    // Templates behind a directory link are not walked, so not compiled: they come from their source.
    const templates = path.join(pkg, 'ebuild-templates');
    await rename(path.join(templates, 'build'), path.join(pkg, 'build-templates-elsewhere'));
    await symlink(path.join(pkg, 'build-templates-elsewhere'), path.join(templates, 'build'));
    const generated = path.join(pkg, 'dist', 'src', 'render', 'templates.generated.cjs');
    await writeGeneratedTemplates(templates, generated);
    assert.ok(precompiledTemplates(templates, generated)!['ebuild.njk'], 'the copy has its own compiled templates');
    assert.equal(precompiledTemplates(templates, generated)!['build/cmake.njk'], undefined, 'without those behind the link');
    const linked = await render();
    assert.equal(linked.code, 0, linked.stderr);
    assert.equal(linked.stdout, after.stdout);
  });
});
