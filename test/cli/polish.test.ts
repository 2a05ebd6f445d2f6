import { strict as assert } from 'node:assert';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createProgress as createDistfileProgress } from '../../src/distfiles/progress.js';
import { TestProgress } from '../../src/container/progress.js';
import { createProgress } from '../../src/util/progress.js';
import { setVerbosity } from '../../src/util/terminal.js';
import { copyOverlay, smallStackFixture, type SmallStackFixture } from '../helpers/bumped-overlay.js';
import { fixtureManifest } from '../helpers/fixture-manifest.js';
import { git, removeDir, runCli, tempDir } from '../helpers/project.js';
import { fakeHost, type FakeHost } from '../gpu/fake-host.js';

/** A stream that records what is written, as a terminal of 80 columns would get it. */
function terminal(): NodeJS.WriteStream & { text: string } {
  const s = { text: '', columns: 80, isTTY: true, write: (chunk: string) => ((s.text += chunk), true) };
  return s as unknown as NodeJS.WriteStream & { text: string };
}

/** A directory of links to every program on PATH but these: a machine where they are not installed. */
function pathWithout(dir: string, ...missing: string[]): string {
  mkdirSync(dir, { recursive: true });
  for (const from of (process.env.PATH ?? '/usr/bin:/bin').split(':')) {
    let names: string[];
    try {
      names = readdirSync(from);
    } catch {
      continue;
    }
    for (const n of names) {
      if (missing.includes(n)) continue;
      try {
        symlinkSync(path.join(from, n), path.join(dir, n));
      } catch {
        // the first of a name on PATH wins, as for a shell
      }
    }
  }
  return dir;
}

describe('the command line as a person at a terminal meets it', function () {
  this.timeout(180_000);
  let small: SmallStackFixture;
  let work: string;
  let host: FakeHost;

  before(async () => {
    small = await smallStackFixture();
    work = await tempDir('rocm-ebuild-polish-');
    host = await fakeHost('workstation');
  });
  after(async () => {
    await removeDir(work);
    await removeDir(host.dev);
    setVerbosity('normal');
  });

  it('gpu list --format json, as the README lists it, is --json', async () => {
    const [format, json] = await Promise.all([
      runCli(['gpu', 'list', '--version', '6.2.2', '--format', 'json'], { env: host.env }),
      runCli(['gpu', 'list', '--version', '6.2.2', '--json'], { env: host.env }),
    ]);
    assert.equal(format.code, 0, format.stderr);
    assert.deepEqual(JSON.parse(format.stdout), JSON.parse(json.stdout));
    assert.equal((JSON.parse(format.stdout) as { gpus: unknown[] }).gpus.length, 3);
    // An error with --format json is JSON too, as with --json.
    const bad = await runCli(['gpu', 'list', '--version', '1.0.0', '--format=json'], { env: host.env });
    assert.equal(bad.code, 2);
    assert.match((JSON.parse(bad.stdout) as { error: { message: string } }).error.message, /release 1\.0\.0 is not in the manifest/);
  });

  it('a required flag or argument left out is said in the one error format, with what it is and an example', async () => {
    const env = { ROCM_EBUILD_OVERLAY: undefined };
    const bump = await runCli(['bump', '6.2.2'], { home: small.home, env });
    assert.equal(bump.code, 2);
    assert.equal(
      bump.stderr,
      'rocm-ebuild: --overlay is required (the overlay): give it as --overlay DIR, set ROCM_EBUILD_OVERLAY, or overlay = "…" in ~/.config/rocm-ebuild/config.toml, e.g. rocm-ebuild bump 6.2.2 --overlay ~/rocm-overlay; see rocm-ebuild bump --help\n',
    );
    const render = await runCli(['render', '--version', '6.2.2'], { home: small.home });
    assert.equal(render.code, 2);
    assert.match(render.stderr, /^rocm-ebuild: missing ATOM \(package: category\/PN or PN\), e\.g\. rocm-ebuild render \S+ --version /);
    const graph = await runCli(['graph'], { home: small.home });
    assert.match(graph.stderr, /^rocm-ebuild: --version is required \(ROCm release\): give it as --version X\.Y\.Z, e\.g\. rocm-ebuild graph /);
    for (const r of [bump, render, graph]) assert.doesNotMatch(r.stderr, /following error|Missing required|Missing \d/);
    const json = await runCli(['bump', '6.2.2', '--json'], { home: small.home, env });
    assert.match((JSON.parse(json.stdout) as { error: { message: string } }).error.message, /^--overlay is required/);
  });

  it('TERM=dumb: a terminal that cannot move the cursor gets plain lines, never line-erase sequences', () => {
    const saved = process.env.TERM;
    process.env.TERM = 'dumb';
    try {
      const plain = terminal();
      const p = createProgress({ stream: plain });
      p.step(1, 2, 'rendering');
      p.step(2, 2, 'bash -n');
      p.done();
      assert.equal(plain.text, '[1/2] rendering\n[2/2] bash -n\n');
      const files = terminal();
      const d = createDistfileProgress({ stream: files, color: false });
      d.begin({ files: 1, downloads: [{ name: 'a.tar.gz', size: 10 }] });
      d.downloading('a.tar.gz', { url: 'https://example.org/a.tar.gz', offset: 0, size: 10 });
      d.received('a.tar.gz', 5);
      d.end();
      const test = terminal();
      const t = new TestProgress({ quiet: false, stream: test });
      t.update('gfx1100', 1, 3, 'sci-libs/rocBLAS compile');
      t.stop();
      for (const s of [plain, files, test]) assert.doesNotMatch(s.text, /\r|\x1b/, JSON.stringify(s.text));
    } finally {
      if (saved === undefined) delete process.env.TERM;
      else process.env.TERM = saved;
    }
    // A real terminal still gets the live line.
    const live = terminal();
    const p = createProgress({ stream: live });
    p.step(1, 1, 'x');
    p.done();
    assert.equal(live.text, '[1/1] x\r\x1b[2K');
  });

  it('--quiet keeps results and warnings and drops progress and notices; --verbose shows the diffs of a real bump', async () => {
    const overlay = path.join(work, 'quiet-overlay');
    const normal = await runCli(['bump', '6.2.2', '--overlay', overlay, ...small.flags, '--dry-run'], { home: small.home });
    const quiet = await runCli(['bump', '6.2.2', '--overlay', overlay, ...small.flags, '--dry-run', '--quiet'], { home: small.home });
    assert.equal(normal.code, 0, normal.stderr);
    assert.equal(quiet.code, 0, quiet.stderr);
    assert.match(normal.stderr, /^distdir: /m);
    assert.equal(quiet.stdout, normal.stdout, 'the plan is the result: --quiet keeps it');
    assert.doesNotMatch(quiet.stderr, /^distdir: /m);
    assert.match(quiet.stderr, /Warning: .*evidence/, 'a warning is no notice');
    const both = await runCli(['bump', '6.2.2', '--overlay', overlay, ...small.flags, '--quiet', '--verbose'], { home: small.home });
    assert.equal(both.code, 2);
    assert.equal(both.stderr, 'rocm-ebuild: --quiet and --verbose cannot be given together: choose one; see rocm-ebuild bump --help\n');

    // A manifest fix makes gpulib-6.2.2-r1: the real run prints its diff only with --verbose.
    const fixed = path.join(work, 'manifest-fixed');
    execFileSync('cp', ['-a', small.manifest, fixed]);
    const gpulib = path.join(fixed, 'components/gpulib.yaml');
    execFileSync('sed', ['-i', 's/^    BUILD_BENCHMARK: { use: benchmark }$/&\\n    GPULIB_FIX_GCC15: "ON"/', gpulib]);
    const flags = [...small.flags];
    flags[flags.indexOf('--manifest') + 1] = fixed;
    const plain = await runCli(['bump', '6.2.2', '--overlay', copyOverlay(small.overlay, path.join(work, 'plain')), ...flags], { home: small.home });
    const verbose = await runCli(['bump', '6.2.2', '--overlay', copyOverlay(small.overlay, path.join(work, 'verbose')), ...flags, '--verbose'], { home: small.home });
    const silent = await runCli(['bump', '6.2.2', '--overlay', copyOverlay(small.overlay, path.join(work, 'silent')), ...flags, '-q'], { home: small.home });
    for (const r of [plain, verbose, silent]) {
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /gpulib-6\.2\.2-r1: what rocm-ebuild generates for 6\.2\.2 changed/);
    }
    // In a pipe, progress is one plain line per step: gone with --quiet, as the notices are.
    assert.match(plain.stderr, /^\[\d+\/\d+\] /m, plain.stderr);
    assert.doesNotMatch(silent.stderr, /^\[\d+\/\d+\] |^distdir: /m, silent.stderr);
    assert.doesNotMatch(plain.stdout, /^ {6}\+.*GPULIB_FIX_GCC15/m);
    assert.match(verbose.stdout, /^ {6}\+.*-DGPULIB_FIX_GCC15=ON/m);
  });

  it('a one-package bump warns once about the evidence of that package, not of the whole release', async () => {
    const overlay = copyOverlay(small.overlay, path.join(work, 'one-package'));
    const r = await runCli(['bump', '6.3.0', 'gpulib', '--overlay', overlay, ...small.flags, '--dry-run'], { home: small.home });
    assert.equal(r.code, 0, r.stderr);
    const said = `${r.stdout}\n${r.stderr.replace(/\s*\n\s*›\s*/g, ' ')}`;
    // The plan's line for the package says its evidence; the warning says it once more, and nothing else does.
    assert.equal(said.match(/is none/g)?.length, 1, said);
    assert.doesNotMatch(said, /^evidence: /m, said);
    assert.match(said, /the evidence of the package added is none \(1 none\): the facts of sci-libs\/gpulib were checked neither/);
    assert.doesNotMatch(said, /rocm-base|sci-libs\/app\b/, 'packages the bump does not touch are not its evidence');
  });

  it('bump says when shellcheck is not installed, before any work', async () => {
    const bin = pathWithout(path.join(work, 'no-shellcheck'), 'shellcheck');
    assert.notEqual(spawnSync('sh', ['-c', 'command -v shellcheck'], { env: { PATH: bin } }).status, 0);
    const overlay = copyOverlay(small.overlay, path.join(work, 'no-shellcheck-overlay'));
    const r = await runCli(['bump', '6.3.0', 'gpulib', '--overlay', overlay, ...small.flags], { home: small.home, env: { PATH: bin } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr.replace(/\n\s*›\s*/g, ' '), /Warning: shellcheck is not installed: the ebuilds are checked with bash -n and rocm-ebuild's own checks only \(Debian: apt-get install shellcheck/);
    const withIt = await runCli(['bump', '6.3.0', 'gpulib', '--overlay', copyOverlay(small.overlay, path.join(work, 'shellcheck-overlay')), ...small.flags], { home: small.home });
    assert.doesNotMatch(withIt.stderr, /shellcheck is not installed/);
  });

  describe('defaults of --overlay and --manifest', () => {
    let home: string;
    let other: string;
    const config = () => path.join(home, '.config', 'rocm-ebuild', 'config.toml');
    const graph = (extra: string[] = [], env: NodeJS.ProcessEnv = {}) => runCli(['graph', '--version', '6.2.2', ...extra], { home, env: { ROCM_EBUILD_MANIFEST: undefined, ROCM_EBUILD_OVERLAY: undefined, ...env } });
    /** Which manifest graph read: the small stack has three packages, the other fixture's name differs. */
    const which = (out: string) => (out.includes('app-misc/other-app') ? 'other' : out.includes('sci-libs/gpulib') ? 'small' : 'shipped');

    before(async () => {
      home = path.join(work, 'config-home');
      mkdirSync(path.join(home, '.config', 'rocm-ebuild'), { recursive: true });
      other = await fixtureManifest({
        'components/app.yaml': (await import('../helpers/fixture-manifest.js')).BASE_FILES['components/app.yaml']!.replace(/^atom: .*$/m, 'atom: app-misc/other-app'),
      });
    });
    after(() => removeDir(other));

    it('a flag wins, then the environment, then the config file, then the built-in default', async () => {
      assert.equal(which((await graph()).stdout), 'shipped');
      writeFileSync(config(), `# mine\nmanifest = "${small.manifest}"\n`);
      assert.equal(which((await graph()).stdout), 'small');
      assert.equal(which((await graph([], { ROCM_EBUILD_MANIFEST: other })).stdout), 'other');
      assert.equal(which((await graph(['--manifest', small.manifest], { ROCM_EBUILD_MANIFEST: other })).stdout), 'small');
      // ~/ is the home directory; --overlay the same way.
      writeFileSync(config(), `overlay = "~/my-overlay"\nmanifest = "${small.manifest}"\n`);
      const plan = await runCli(['bump', '6.2.2', '--dry-run', '--json', '--distdir', small.distdir], { home, env: { ROCM_EBUILD_OVERLAY: undefined, ROCM_EBUILD_MANIFEST: undefined } });
      assert.equal(plan.code, 0, plan.stderr);
      assert.equal((JSON.parse(plan.stdout) as { overlay: string }).overlay, path.join(home, 'my-overlay'));
      const env = await runCli(['bump', '6.2.2', '--dry-run', '--json', '--distdir', small.distdir], { home, env: { ROCM_EBUILD_OVERLAY: path.join(work, 'env-overlay'), ROCM_EBUILD_MANIFEST: undefined } });
      assert.equal((JSON.parse(env.stdout) as { overlay: string }).overlay, path.join(work, 'env-overlay'));
    });

    it('a config file that is not one is refused with file:line:column and a fix, by every command that reads it', async () => {
      const cases: [string, () => void, RegExp][] = [
        ['bad TOML', () => writeFileSync(config(), 'overlay = "~/x"\nmanifest = ~/y\n'), /config\.toml:2:\d+: TOML syntax: .*; fix the TOML at this position/],
        ['unknown key', () => writeFileSync(config(), 'overlay = "~/x"\noverlya = "~/y"\n'), /config\.toml:2:1: unknown setting "overlya"; the settings are overlay and manifest/],
        ['not a string', () => writeFileSync(config(), 'manifest = 3\n'), /config\.toml:1:1: manifest must be a path in quotes/],
        ['relative path', () => writeFileSync(config(), 'manifest = "manifests/x"\n'), /config\.toml:1:1: manifest = "manifests\/x" is a relative path/],
        ['huge', () => writeFileSync(config(), `# ${'x'.repeat(200_000)}\n`), /config\.toml: cannot be read as the configuration: larger than 65536 bytes/],
        [
          'a link to a FIFO',
          () => {
            execFileSync('rm', ['-f', config()]);
            execFileSync('mkfifo', [path.join(work, 'fifo')]);
            symlinkSync(path.join(work, 'fifo'), config());
          },
          /config\.toml: cannot be read as the configuration: a FIFO, not a regular file/,
        ],
        ['a directory', () => (execFileSync('rm', ['-f', config()]), mkdirSync(config())), /config\.toml: cannot be read as the configuration: a directory/],
      ];
      for (const [what, make, expected] of cases) {
        make();
        const r = await runCli(['graph', '--version', '6.2.2'], { home, env: { ROCM_EBUILD_MANIFEST: undefined }, killAfterMs: 30_000 });
        assert.equal(r.code, 2, `${what}: ${r.stderr}`);
        assert.match(r.stderr, /^rocm-ebuild: \S+\/\.config\/rocm-ebuild\/config\.toml/, what);
        assert.match(r.stderr, expected, what);
      }
      execFileSync('rm', ['-rf', config()]);
      // The variable set, the file is not read at all: a broken file does not stand in the way.
      writeFileSync(config(), 'manifest = [\n');
      assert.equal((await graph([], { ROCM_EBUILD_MANIFEST: small.manifest })).code, 0);
      execFileSync('rm', ['-f', config()]);
    });
  });

  describe('completion from the manifest', () => {
    let dir: string;
    let script: string;
    before(async () => {
      dir = await tempDir('rocm-ebuild-words-');
      const bin = path.join(dir, 'bin');
      mkdirSync(bin);
      writeFileSync(path.join(bin, 'rocm-ebuild'), `#!/bin/sh\nexec '${process.execPath}' '${path.resolve('bin/run.js')}' "$@"\n`, { mode: 0o755 });
      const r = await runCli(['completion', 'bash']);
      assert.equal(r.code, 0, r.stderr);
      script = path.join(dir, 'rocm-ebuild.bash');
      writeFileSync(script, r.stdout);
    });
    after(() => removeDir(dir));

    /** What bash offers, with rocm-ebuild on PATH; `runs` counts the times the script asked rocm-ebuild for words. */
    function complete(typed: string[][]): string[][] {
      const calls = typed
        .map((t) => {
          const words = ['rocm-ebuild', ...t].map((w) => `'${w}'`).join(' ');
          return `COMP_WORDS=(${words}); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _rocm_ebuild; printf '%s ' "\${COMPREPLY[@]}"; echo`;
        })
        .join('\n');
      const out = execFileSync('bash', ['-c', `source "$1"\n${calls}`, 'bash', script], { encoding: 'utf8', env: { ...process.env, PATH: `${path.join(dir, 'bin')}:${process.env.PATH}`, XDG_CONFIG_HOME: dir } });
      return out.split('\n').slice(0, typed.length).map((l) => l.split(' ').filter(Boolean));
    }

    it('offers release versions and package names where commands take them', () => {
      const [bumpVersion, bumpPackage, render, lintVersion, derive, upstream, overlay] = complete([
        ['bump', '7.2'],
        ['bump', '7.2.4', '--overlay', 'x', 'rocB'],
        ['render', 'sci-libs/hip'],
        ['lint', '--version', '10'],
        ['bump', '7.3.0', '--derive-from', '7.2.'],
        ['upstream', 'diff', '7.2.3', '7.2.4', 'rocPR'],
        ['bump', '7.2.4', '--overlay', ''],
      ]);
      assert.deepEqual(bumpVersion, ['7.2.0', '7.2.1', '7.2.2', '7.2.3', '7.2.4']);
      assert.deepEqual(bumpPackage, ['rocBLAS']);
      assert.deepEqual(render, ['sci-libs/hipBLAS', 'sci-libs/hipBLAS-common', 'sci-libs/hipBLASLt', 'sci-libs/hipCUB', 'sci-libs/hipFFT', 'sci-libs/hipRAND', 'sci-libs/hipSOLVER', 'sci-libs/hipSPARSE', 'sci-libs/hipSPARSELt', 'sci-libs/hipTensor', 'sci-libs/hipfort']);
      assert.deepEqual(lintVersion, ['10.0.0']);
      assert.deepEqual(derive, ['7.2.0', '7.2.1', '7.2.2', '7.2.3', '7.2.4']);
      assert.deepEqual(upstream, ['rocPRIM']);
      assert.deepEqual(overlay, [], 'a path is the shell\'s to complete');
    });

    it('asks rocm-ebuild once per kind and manifest in a running shell, and follows --manifest on the command line', () => {
      const words = execFileSync(
        'bash',
        [
          '-c',
          `source "$1"
log=$2/asked
rocm-ebuild() { echo x >>"$log"; command rocm-ebuild "$@"; }
for t in 'render g' 'render ro' 'graph --version 6'; do COMP_WORDS=(rocm-ebuild $t); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); _rocm_ebuild; done
COMP_WORDS=(rocm-ebuild render --manifest "$3" g); COMP_CWORD=4; _rocm_ebuild; printf '%s ' "\${COMPREPLY[@]}"`,
          'bash',
          script,
          dir,
          small.manifest,
        ],
        { encoding: 'utf8', env: { ...process.env, PATH: `${path.join(dir, 'bin')}:${process.env.PATH}`, XDG_CONFIG_HOME: dir } },
      );
      assert.deepEqual(words.trim().split(' '), ['gpulib']);
      assert.equal(execFileSync('cat', [path.join(dir, 'asked')], { encoding: 'utf8' }).trim().split('\n').length, 3, 'packages and releases of the default manifest once each, and the other manifest once');
    });

    it('completion --words prints one word per line', async () => {
      const r = await runCli(['completion', '--words', 'packages', '--manifest', small.manifest]);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(r.stdout.trim().split('\n').sort(), ['app', 'dev-libs/rocm-base', 'gpulib', 'rocm-base', 'sci-libs/app', 'sci-libs/gpulib'].sort());
      const releases = await runCli(['completion', '--words', 'releases', '--manifest', small.manifest]);
      assert.equal(releases.stdout, '6.2.2\n6.3.0\n');
      const none = await runCli(['completion']);
      assert.equal(none.code, 2);
      assert.match(none.stderr, /^rocm-ebuild: missing SHELL \(bash, zsh, fish\)/);
    });
  });

  it('bump in a git overlay works from a config default as from the flag', async () => {
    const home = path.join(work, 'config-bump');
    mkdirSync(path.join(home, '.config', 'rocm-ebuild'), { recursive: true });
    execFileSync('cp', [path.join(small.home, '.gitconfig'), home]);
    const overlay = copyOverlay(small.overlay, path.join(work, 'config-bump-overlay'));
    writeFileSync(path.join(home, '.config', 'rocm-ebuild', 'config.toml'), `overlay = "${overlay}"\nmanifest = "${small.manifest}"\n`);
    const r = await runCli(['bump', '6.3.0', 'gpulib', '--distdir', small.distdir, '--offline'], { home, env: { ROCM_EBUILD_OVERLAY: undefined, ROCM_EBUILD_MANIFEST: undefined } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(await git(overlay, ['log', '-1', '--format=%s'], home), /^sci-libs\/gpulib: add 6\.3\.0/);
  });
});
