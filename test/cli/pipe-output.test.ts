import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { copyShippedManifest } from '../helpers/manifest-copy.js';
import { bin, gitEnv, removeDir, tempDir } from '../helpers/project.js';

/**
 * A command that exits with a status after writing more than a pipe holds
 * (64 KiB on Linux): what reaches a reader that is slower than the writer
 * must be all of it. Run through real pipes (bash), with a reader that starts
 * a second late so the pipe is full when the command exits.
 */
describe('output through a pipe is complete whatever the exit status', function () {
  this.timeout(180_000);
  let dir: string;
  let manifest: string;
  before(async () => {
    dir = await tempDir('rocm-ebuild-pipe-');
    manifest = await copyShippedManifest(path.join(dir, 'manifest'));
    // Thousands of keys the schema does not know: a report of a few MiB, exit 2.
    const component = path.join(manifest, 'components', 'rocBLAS.yaml');
    writeFileSync(component, readFileSync(component, 'utf8') + Array.from({ length: 3000 }, (_, i) => `not_a_field_${i}: 1\n`).join(''));
  });
  after(() => removeDir(dir));

  /** `rocm-ebuild ARGS | (sleep 1; cat) > OUT` and the exit status of rocm-ebuild. */
  function throughPipe(args: string[], stream: 'stdout' | 'stderr'): { status: number; text: string } {
    const out = path.join(dir, `${stream}.out`);
    const redirect = stream === 'stdout' ? '2>/dev/null' : '2>&1 >/dev/null';
    const script = `"$NODE" "$BIN" "$@" ${redirect} | { sleep 1; cat; } > "$OUT"; exit "\${PIPESTATUS[0]}"`;
    const res = spawnSync('bash', ['-c', script, 'bash', ...args], { env: { ...process.env, ...gitEnv(), NO_COLOR: '1', NODE: process.execPath, BIN: bin, OUT: out }, encoding: 'utf8' });
    return { status: res.status ?? -1, text: readFileSync(out, 'utf8') };
  }

  it('validate --json: the whole JSON error report, exit 2', () => {
    const r = throughPipe(['validate', manifest, '--json'], 'stdout');
    assert.equal(r.status, 2);
    assert.ok(r.text.length > 256 * 1024, `only ${r.text.length} bytes: the report should be far larger than a pipe`);
    const parsed = JSON.parse(r.text) as { error: { exitCode: number; details: { issues: unknown[] } } };
    assert.equal(parsed.error.exitCode, 2);
    assert.ok(parsed.error.details.issues.length >= 3000, `${parsed.error.details.issues.length} issues`);
  });

  it('validate without --json: every line of the error on standard error, exit 2', () => {
    const r = throughPipe(['validate', manifest], 'stderr');
    assert.equal(r.status, 2);
    assert.ok(r.text.length > 256 * 1024, `only ${r.text.length} bytes`);
    assert.match(r.text, /not_a_field_2999/, 'the last issue arrived');
    assert.ok(r.text.endsWith('\n'));
  });
});
