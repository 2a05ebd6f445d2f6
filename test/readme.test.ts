import { strict as assert } from 'node:assert';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ExitCode } from '../src/util/exit-codes.js';
import { releaseEvidence } from '../src/model/evidence.js';
import { knownReleases } from '../src/model/resolve.js';
import { loadManifestOrFail, stackFor } from '../src/stack-check/index.js';
import { bin, gitHome, removeDir, root } from './helpers/project.js';

/**
 * The README is for users, and what it shows them must be what the tool does: every ```sh
 * block says whether it runs here (`runnable`, with `exit=N` when it must fail that way, and
 * `requires=TOOL` when it needs a program the tool does not), or why not (`skip="reason"`), and
 * the runnable ones are run, in order, against the built CLI. The table of supported releases
 * is what the command above it prints; UPDATE_GOLDEN=1 rewrites it.
 */

const README = path.join(root, 'README.md');

interface Block {
  /** 1-based line of the opening fence. */
  line: number;
  info: string;
  body: string;
  runnable: boolean;
  exit: number;
  requires: string[];
  skip?: string;
}

/** The fenced code blocks of a Markdown text whose info string starts with the word `sh`. */
export function shellBlocks(text: string): Block[] {
  const lines = text.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(`{3,}|~{3,})(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const fence = open[1]!;
    const info = open[2]!.trim();
    // The block ends at a line of the same fence character, at least as long, and nothing else.
    const closes = new RegExp(`^${fence[0] === '`' ? '`' : '~'}{${fence.length},}\\s*$`);
    let j = i + 1;
    while (j < lines.length && !closes.test(lines[j]!)) j++;
    const body = lines.slice(i + 1, j).join('\n');
    if (/^sh(\s|$)/.test(info)) {
      const attrs = info.slice(2);
      const skip = /\bskip="([^"]*)"/.exec(attrs)?.[1];
      const exit = /\bexit=(\d+)\b/.exec(attrs)?.[1];
      const requires = /\brequires=([\w,.-]+)/.exec(attrs)?.[1];
      blocks.push({
        line: i + 1,
        info,
        body,
        runnable: /(^|\s)runnable(\s|$)/.test(attrs),
        exit: exit === undefined ? 0 : Number(exit),
        requires: requires ? requires.split(',') : [],
        ...(skip !== undefined ? { skip } : {}),
      });
    }
    i = j;
  }
  return blocks;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function onPath(tool: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' }).status === 0;
}

function run(script: string, env: NodeJS.ProcessEnv, cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', script], { cwd, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

const BEGIN = /^<!-- releases:begin.*-->$/m;
const END = /^<!-- releases:end -->$/m;

/**
 * The rows the README's loop prints, computed in this process from the same functions `validate`
 * and `matrix` call (the manifest, each release's model, its evidence): the loop itself, through
 * the CLI, is run as a README block where jq is installed, and its output compared with the table.
 */
async function releaseRows(): Promise<string[]> {
  const manifest = await loadManifestOrFail(undefined);
  const rows: string[] = [];
  for (const version of knownReleases(manifest)) {
    const c = releaseEvidence((await stackFor(manifest, version)).components).counts;
    rows.push(`| ${version} | ${c.tag + c.peer + c.pin + c.none} | ${c.tag} | ${c.peer} | ${c.pin} | ${c.none} |`);
  }
  return rows;
}

describe('README', function () {
  this.timeout(120_000);
  const text = readFileSync(README, 'utf8');
  const blocks = shellBlocks(text);
  let home = '';
  let env: NodeJS.ProcessEnv = {};
  /** What each runnable block printed, by its line. */
  const printed = new Map<number, string>();

  before(async () => {
    home = await gitHome({ name: 'Ada Tester', email: 'ada@example.org' });
    const binDir = path.join(home, 'bin');
    await mkdir(binDir, { recursive: true });
    // rocm-ebuild as a user has it: a command on PATH running this checkout's build.
    const wrapper = path.join(binDir, 'rocm-ebuild');
    await writeFile(wrapper, `#!/bin/sh\nexec '${process.execPath}' '${bin}' "$@"\n`);
    await chmod(wrapper, 0o755);
    await mkdir(path.join(home, 'distfiles'));
    await mkdir(path.join(home, '.local', 'bin'), { recursive: true });
    env = {
      PATH: `${binDir}:${process.env.PATH ?? '/usr/bin:/bin'}`,
      HOME: home,
      XDG_CONFIG_HOME: path.join(home, '.config'),
      // The run's shared cache (test/helpers/isolated-cache.ts): a user's second command finds the manifest checked, too.
      XDG_CACHE_HOME: process.env.XDG_CACHE_HOME ?? path.join(home, '.cache'),
      GIT_CONFIG_NOSYSTEM: '1',
      // An empty distdir and an empty Portage configuration: the examples say what happens offline, on any machine.
      DISTDIR: path.join(home, 'distfiles'),
      PORTAGE_CONFIGROOT: path.join(home, 'portage-root'),
      GENTOO_MIRRORS: '',
      NO_COLOR: '1',
      LANG: 'C.UTF-8',
      TZ: 'UTC',
    };
  });

  after(async () => {
    await removeDir(home);
  });

  it('marks every shell block as runnable or skipped with a reason', () => {
    assert.ok(blocks.length > 0);
    for (const b of blocks) {
      assert.ok(b.runnable !== (b.skip !== undefined), `README.md:${b.line}: \`\`\`${b.info}: say "runnable" or skip="why it cannot run here", not both`);
      if (b.skip !== undefined) assert.ok(b.skip.trim().length > 0, `README.md:${b.line}: a skip needs its reason`);
    }
    assert.ok(blocks.some((b) => b.runnable), 'at least one example runs');
  });

  for (const b of blocks) {
    const first = b.body.split('\n').find((l) => l.trim() && !l.trim().startsWith('#'))?.replace(/\s+#.*$/, '').trim() ?? '';
    const title = `README.md:${b.line} \`${first.length > 70 ? `${first.slice(0, 69)}…` : first}\``;
    if (!b.runnable) {
      it(`${title} (skipped: ${b.skip})`, function () {
        this.skip();
      });
      continue;
    }
    it(`${title} exits ${b.exit}`, async function () {
      const missing = b.requires.filter((t) => !onPath(t));
      if (missing.length > 0) this.skip();
      const r = await run(b.body, env, home);
      printed.set(b.line, r.stdout);
      assert.equal(r.code, b.exit, `README.md:${b.line}: exit ${r.code}, expected ${b.exit}\n--- stdout\n${r.stdout.slice(-3000)}\n--- stderr\n${r.stderr.slice(-3000)}`);
      // A success that printed an error is no success: the message format is `rocm-ebuild: …`.
      if (b.exit === 0) assert.doesNotMatch(r.stderr, /^rocm-ebuild: /m, r.stderr);
      else assert.match(r.stderr, /^rocm-ebuild: /m, 'a failing example shows the error a user would see');
    });
  }

  it('the offline bump that exits 3 left no overlay behind', () => {
    // The exit=3 example promises "nothing written": it runs after the blocks above, in the same HOME.
    assert.equal(existsSync(path.join(home, 'rocm-overlay')), false);
  });

  it('the table of supported releases is what the command above it prints', async function () {
    const begin = BEGIN.exec(text);
    const end = END.exec(text);
    assert.ok(begin && end && begin.index < end.index, 'README.md has the releases:begin and releases:end markers');
    const between = text.slice(begin.index + begin[0].length, end.index);
    const header = '| release | packages | tag | peer | pin | none |\n| --- | --- | --- | --- | --- | --- |';
    const expected = `\n${header}\n${(await releaseRows()).join('\n')}\n`;
    if (process.env.UPDATE_GOLDEN === '1') {
      writeFileSync(README, text.slice(0, begin.index + begin[0].length) + expected + text.slice(end.index));
      return;
    }
    assert.equal(between, expected, 'the release table is stale: run UPDATE_GOLDEN=1 npm test and commit README.md');
  });

  it('the release loop, where it ran, printed the rows of the table', function () {
    const loop = blocks.find((b) => b.requires.includes('jq'));
    assert.ok(loop, 'the README shows how to print the release table');
    const out = printed.get(loop.line);
    if (out === undefined) this.skip();
    const table = text.slice(BEGIN.exec(text)!.index, END.exec(text)!.index);
    assert.ok(out.trim().length > 0, 'the loop printed nothing');
    for (const row of out.trimEnd().split('\n')) assert.ok(table.includes(`\n${row}\n`), `the table lacks ${row} (UPDATE_GOLDEN=1 rewrites it)`);
  });

  it('lists every exit code the commands use', () => {
    const section = text.slice(text.indexOf('\n## Exit codes'), text.indexOf('\n## ', text.indexOf('\n## Exit codes') + 1));
    const documented = [...section.matchAll(/^\| (\d+) \|/gm)].map((m) => Number(m[1]));
    // 130 is `test`'s interrupted run, the shell convention for SIGINT, not a member of ExitCode.
    assert.deepEqual(documented, [...new Set([...Object.values(ExitCode), 130])].sort((a, b) => a - b));
  });

  it('README and docs/ link only to headings and files that exist', () => {
    const headings = (body: string) => {
      const text = body.replace(/^```[\s\S]*?^```/gm, '');
      // Headings' anchors as GitHub makes them, and explicit ones (<a id="…">, as eclassdoc writes).
      return new Set([...[...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!)), ...[...text.matchAll(/<a id="([^"]+)"><\/a>/g)].map((m) => m[1]!)]);
    };
    const files = [README, ...readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => path.join(root, 'docs', f))];
    for (const file of files) {
      const body = readFileSync(file, 'utf8');
      const own = headings(body);
      const where = path.relative(root, file);
      // Links outside code: a fenced block may show Markdown that is not this document's.
      for (const m of body.replace(/^```[\s\S]*?^```/gm, '').matchAll(/\]\(([^)\s]+)\)/g)) {
        const link = m[1]!;
        if (/^[a-z]+:/.test(link)) continue;
        if (link.startsWith('#')) {
          assert.ok(own.has(link.slice(1)), `${where} links to ${link}, which no heading has`);
          continue;
        }
        const [rel, anchor] = link.split('#');
        const target = path.resolve(path.dirname(file), rel!);
        assert.ok(existsSync(target), `${where} links to ${rel}, which does not exist`);
        if (anchor && target.endsWith('.md')) assert.ok(headings(readFileSync(target, 'utf8')).has(anchor), `${where} links to ${link}, which no heading of ${rel} has`);
      }
    }
  });

  it('README and docs/ say nothing of how the project is organised internally', () => {
    const files = [README, ...readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => path.join(root, 'docs', f))];
    for (const file of files) {
      const body = readFileSync(file, 'utf8');
      for (const [pattern, what] of [
        [/\bissues? \d+|\bissue #\d+|\bsee #\d+/i, 'an issue number'],
        [/\bsessions?\b/i, 'a session'],
        [/\bunverified\b|\bnot verified\b|\bverified: true\b|marked `?verified/i, '"verified" as a release status (the manifest records evidence: tag, peer, pin, none)'],
      ] as const) {
        const hit = pattern.exec(body);
        assert.equal(hit, null, `${path.relative(root, file)} mentions ${what}: "${hit?.[0]}"`);
      }
    }
  });
});
