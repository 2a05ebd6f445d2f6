import { strict as assert } from 'node:assert';
import { ebuildVars, assigned } from '../../src/ebuild/vars.js';
import { expandWord, srcUriEntries } from '../../src/ebuild/src-uri.js';
import { expand } from '../../src/model/sources/index.js';
import { knownReleases } from '../../src/model/resolve.js';
import { lintComponent } from '../../src/lint/component.js';
import { formatText } from '../../src/lint/index.js';
import { renderEbuild } from '../../src/render/index.js';
import { loadManifest, stackFor } from '../../src/stack-check/index.js';
import { shippedManifest } from '../helpers/project.js';

/**
 * What a TheRock release promises a reviewer: every package whose evidence is
 * TheRock's pin fetches exactly the pinned commit. Read from the rendered
 * ebuild (SRC_URI and S evaluated as Portage would) and compared with the
 * evidence's commit, for every release of the shipped manifest.
 */
describe('the shipped stack: sources as TheRock pins them', function () {
  this.timeout(180_000);

  it('every package with pin evidence fetches the pinned commit (or the tag its record says was seen at it), in every release', async () => {
    const manifest = await loadManifest(shippedManifest);
    const problems: string[] = [];
    let checked = 0;
    for (const version of knownReleases(manifest)) {
      const model = await stackFor(manifest, version);
      for (const c of model.components) {
        for (const record of c.evidence.records.filter((r) => r.kind === 'pin')) {
          const pin = record.pin;
          if (!pin) {
            problems.push(`${c.atom}-${c.version} (${version}): a pin record without the commit it pins`);
            continue;
          }
          const text = renderEbuild(c, model, { year: 2026 });
          const vars = await ebuildVars(text);
          const ebuild = { category: c.category, pn: c.pn, version: c.version };
          const archive = new RegExp(`^https://github\\.com/${pin.repo.replace(/[.]/g, '\\.')}/archive/([^/]+)\\.tar\\.gz$`);
          const fetched = srcUriEntries(vars, ebuild)
            .map((e) => archive.exec(e.url ?? '')?.[1])
            .filter((x): x is string => x !== undefined);
          const want = pin.fetch === 'commit' ? pin.commit : expand(pin.fetch.tag, c.pn, c.version);
          if (fetched.length !== 1 || fetched[0] !== want) {
            problems.push(`${c.atom}-${c.version} (${version}): SRC_URI fetches ${fetched.join(', ') || `nothing of ${pin.repo}`}; the evidence pins ${pin.commit} (fetch: ${JSON.stringify(pin.fetch)})`);
            continue;
          }
          // S is in that tree, at the directory TheRock builds.
          const s = expandWord(vars, ebuild, assigned(vars, 'S')!, new Map([['WORKDIR', '/w']]));
          const top = `/w/${pin.repo.split('/')[1]}-${want.replace(/^v(?=[0-9])/, '')}`;
          if (!(s === top || s.startsWith(`${top}/`)) || (pin.path !== undefined && !(s === `${top}/${pin.path}` || s.startsWith(`${top}/${pin.path}/`)))) {
            problems.push(`${c.atom}-${c.version} (${version}): S is ${s}, not in ${top}${pin.path ? `/${pin.path}` : ''}`);
          }
          checked++;
        }
      }
    }
    assert.deepEqual(problems, []);
    // Not vacuous: 10.0.0 has forty packages with TheRock's pins.
    assert.ok(checked >= 40, `${checked} packages checked`);
  });

  it('HOMEPAGE follows a move: every package built from a directory of a repository names that repository, in every release', async () => {
    const manifest = await loadManifest(shippedManifest);
    const problems: string[] = [];
    for (const version of knownReleases(manifest)) {
      for (const c of (await stackFor(manifest, version)).components) {
        const main = c.sources[0];
        const repo = main?.location.repo;
        const dir = main?.spec.subdir ?? main?.location.path;
        if (!repo || dir === undefined || c.spec.homepage.toLowerCase().startsWith(`https://github.com/${repo.toLowerCase()}`)) continue;
        problems.push(`${c.atom}-${c.version} (${version}): HOMEPAGE ${c.spec.homepage}, built from ${dir} of ${repo}`);
      }
    }
    assert.deepEqual(problems, []);
  });

  it('10.0.0: every ebuild passes our checks, real bash -n and shellcheck (src_unpack and the commit variables included)', async () => {
    const manifest = await loadManifest(shippedManifest);
    const model = await stackFor(manifest, '10.0.0');
    const problems: string[] = [];
    let unpacking = 0;
    for (const c of model.components) {
      if (/^src_unpack\(\)/m.test(renderEbuild(c, model, { year: 2026 }))) unpacking++;
      const lint = await lintComponent(c, model, { tools: { shellcheck: true } });
      const bad = lint.results.filter((r) => r.level !== 'info');
      if (bad.length) problems.push(formatText(bad).trimEnd());
      for (const t of lint.tools) problems.push(`${lint.file}:${t.line}: ${t.tool} ${t.code ?? ''} ${t.message}`);
    }
    assert.deepEqual(problems, []);
    assert.ok(unpacking >= 39, `${unpacking} ebuilds unpack their monorepo archive in part`);
  });
});
