import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { earlyBreaks } from '../helpers/help-layout.js';
import { root, runCli } from '../helpers/project.js';

const manifest = JSON.parse(readFileSync(path.join(root, 'oclif.manifest.json'), 'utf8')) as { commands: Record<string, unknown> };
const commands = Object.keys(manifest.commands).map((id) => id.split(':'));
const topics = [...new Set(commands.filter((c) => c.length > 1).map((c) => c[0]!))];
// The root help, each topic's and each command's.
const subjects = [[], ...topics.map((t) => [t]), ...commands];

describe('help layout', function () {
  this.timeout(120_000);

  it('the analyser finds a paragraph wrapped twice and passes one wrapped once', () => {
    const once = `DESCRIPTION\n  ${'word '.repeat(15)}word word word word\n  word word.\n`;
    const twice = `DESCRIPTION\n  ${'word '.repeat(15)}word word word word\n  word\n  word word.\n`;
    assert.deepEqual(earlyBreaks(once, 80), []);
    assert.equal(earlyBreaks(twice, 80).length, 1);
  });

  for (const width of [80, 120]) {
    it(`no help text is wrapped twice at ${width} columns (every command, topic and the root)`, async () => {
      const bad: string[] = [];
      await Promise.all(
        subjects.map(async (subject) => {
          const r = await runCli([...subject, '--help'], { env: { OCLIF_COLUMNS: String(width) } });
          assert.equal(r.code, 0, `${subject.join(' ')} --help: ${r.stderr}`);
          for (const e of earlyBreaks(r.stdout, width)) bad.push(`${subject.join(' ') || '(root)'} ${e.section}:\n${e.line}\n${e.next}`);
        }),
      );
      assert.deepEqual(bad, []);
    });
  }
});
