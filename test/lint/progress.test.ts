import { strict as assert } from 'node:assert';
import { lintComponents } from '../../src/lint/component.js';
import { loadManifestOrFail, stackFor } from '../../src/stack-check/index.js';
import { createProgress } from '../../src/util/progress.js';
import { runCli, shippedManifest } from '../helpers/project.js';

/** A stream that records what is written, as a terminal of 80 columns would get it. */
function terminal(): NodeJS.WriteStream & { text: string } {
  const s = { text: '', columns: 80, isTTY: true, write: (chunk: string) => ((s.text += chunk), true) };
  return s as unknown as NodeJS.WriteStream & { text: string };
}

describe('lint progress', function () {
  this.timeout(60_000);

  it('on a terminal, redraws one line per stage and clears it at the end', async () => {
    const model = await stackFor(await loadManifestOrFail(shippedManifest), '6.2.2');
    const components = model.components.filter((c) => ['dev-util/hipcc', 'dev-libs/rocm-core'].includes(c.atom));
    const stream = terminal();
    await lintComponents(components, model, () => ({ tools: { shellcheck: false } }), createProgress({ stream, tty: true }));
    assert.match(stream.text, /^\[1\/2\] rendering and checking 2 ebuilds\r\x1b\[2K\[2\/2\] bash -n on 2 ebuilds\r\x1b\[2K$/);
  });

  it('in a pipe, prints nothing but the results', async () => {
    const r = await runCli(['lint', 'hipcc', '--version', '6.2.2', '--no-shellcheck']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    assert.match(r.stdout, /1 ebuild checked/);
  });
});
