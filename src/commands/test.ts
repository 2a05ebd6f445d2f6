import { distfileSettings } from '../portage/distfile-settings.js';
import { Args, Flags } from '#oclif';
import { BaseCommand } from '../cli/base-command.js';
import { CONFIG_DISPLAY, settingFlagOptions } from '../cli/user-defaults.js';
import { ExitCode } from '../cli/exit-codes.js';
import { loadManifestOrFail, manifestFlag, stackFor } from '../cli/stack.js';
import { DEFAULT_IMAGE, ENGINES, type EngineName } from '../container/command.js';
import { TEST_TIERS, type TestTier } from '../container/plan.js';
import { describeCounts, EVIDENCE_MEANING, releaseEvidence } from '../model/evidence.js';
import { TestProgress } from '../container/progress.js';
import { dryRunText } from '../container/dry-run.js';
import { DEFAULT_TIMEOUT, DEFAULT_TREE, defaultJobs, exitCodeOf, parseDuration, runTests, type TestRunResult } from '../container/run.js';
import { isGpuRequest } from '../container/select.js';
import { UserError } from '../cli/errors.js';
import { notice } from '../util/terminal.js';

export default class Test extends BaseCommand {
  static override summary = 'Build and test the stack in containers, one per GPU, each given only its GPU';
  static override description = `Starts one container per selected GPU from a Gentoo stage3 image, passes it only that GPU
(/dev/kfd and the GPU's render node, the host's groups of both, CAP_SYS_NICE under the engine's seccomp profile
when tests run GPU code; never --privileged), mounts the overlay and the ::gentoo tree read-only, and runs Portage inside: AMDGPU_TARGETS set to
the container's gfx, ~amd64 accepted for the stack, dependencies from the shared binary packages (--pkgdir) or
built once into them, then each atom under test (default: every package of the release) rebuilt in build order
with FEATURES=test. Every command's exit status inside the container decides the result; failures are classified
(dependency, fetch, build, test, gpu-access, oom, timeout, interrupted).

Each GPU's results go to <report-dir>/<gfx>/: report.json (schemas/test-report.schema.json), junit.xml (with the
packages' gtest XML merged in), report.md (for the pull request), console.log, Portage's build logs (build/) and
the generated Portage configuration (setup/). <report-dir>/report.md sums up all GPUs.

Ctrl-C (or SIGTERM) stops the running container, writes the partial report and removes the container (unless
--keep); if rocm-ebuild itself is killed, the container notices and stops.

--image must be an image reference (default docker.io/gentoo/stage3:amd64-openrc, fully qualified: podman
resolves no short name by default); it reaches the engine after \`--\`, never as one of its options. --dry-run
runs nothing, needs neither an engine nor a ::gentoo tree (nor a GPU, for a gfx named with --gpu), and prints for each container the files it would get
(make.conf, package.use, package.accept_keywords, package.env and its env files, bashrc, sandbox.conf, the
script) as comments above its engine command line.

Exit codes: 0 every atom passed, 2 invalid input before any container started (no container engine, an --image
that is not an image reference, image not present and cannot be pulled, no AMD GPU, a requested GPU or gfx not
present, a gfx outside the release's target policy, no ::gentoo tree), 4 the overlay was refused (not a Portage repository, an invalid repo_name, ebuilds missing, another run writes the
same report directory), 6 an atom failed or a container could not proceed, 130 interrupted.`;

  static override examples = [
    { description: 'Test every package of ROCm 6.2.2 on each kind of GPU this host has', command: '<%= config.bin %> <%= command.id %> --overlay ~/rocm-overlay --version 6.2.2' },
    { description: "rocBLAS and hipBLAS with the smoke tier on the gfx1100 only", command: '<%= config.bin %> <%= command.id %> rocBLAS hipBLAS --overlay ~/rocm-overlay --version 6.2.2 --gpu gfx1100 --tests smoke' },
    { description: "Show each container's Portage files and engine command line, run nothing", command: '<%= config.bin %> <%= command.id %> --overlay ~/rocm-overlay --version 6.2.2 --gpu all --dry-run' },
    { description: 'Keep the container of a failing build for a look inside', command: '<%= config.bin %> <%= command.id %> sci-libs/rocFFT --overlay ~/rocm-overlay --version 6.2.2 --keep' },
  ];

  static override strict = false;
  static override args = {
    atoms: Args.string({ ignoreStdin: true, description: 'packages to test, category/PN or PN (default: every package of the release)' }),
  };

  static override flags = {
    overlay: Flags.string({ char: 'o', description: `the overlay holding the release (a Portage repository; it need not be a git repository) (default: overlay in ${CONFIG_DISPLAY})`, required: true, helpValue: 'DIR', ...settingFlagOptions('overlay') }),
    version: Flags.string({ char: 'v', description: 'ROCm release', required: true, helpValue: 'X.Y.Z' }),
    manifest: manifestFlag,
    gpu: Flags.string({
      char: 'g',
      description: 'auto (the default: one container per distinct gfx the release offers), all, a GPU index, or a gfx name (repeatable); none: one build without a GPU, whose GPU tests are not run',
      multiple: true,
      helpValue: 'auto|all|none|INDEX|gfxNNNN',
    }),
    'skip-tests': Flags.string({ description: 'build this atom under test without running its tests, e.g. when shard jobs test it (repeatable)', multiple: true, helpValue: 'ATOM' }),
    shard: Flags.string({ description: 'run share K of N of every gtest suite (GTEST_SHARD_INDEX, GTEST_TOTAL_SHARDS) (default: every test, no sharding)', helpValue: 'K/N' }),
    engine: Flags.string({
      description: 'container engine (default: whichever is installed, podman first); none: run Portage right here, for CI jobs already in a Gentoo container with the GPU',
      options: [...ENGINES, 'none'],
    }),
    image: Flags.string({ description: 'the Gentoo stage3 image, an image reference', default: DEFAULT_IMAGE, helpValue: 'IMAGE' }),
    tree: Flags.string({ description: 'the ::gentoo checkout to mount', default: DEFAULT_TREE, helpValue: 'DIR' }),
    distdir: Flags.string({ description: "distfiles, mounted in the container (default: $DISTDIR, else Portage's DISTDIR (portageq, or make.conf), else ~/.cache/rocm-ebuild/distfiles: the one bump uses)", helpValue: 'DIR' }),
    pkgdir: Flags.string({ description: 'binary packages shared by every container and run (default: ~/.cache/rocm-ebuild/binpkgs)', helpValue: 'DIR' }),
    tests: Flags.string({ description: "test tier: none, smoke (the manifest's tests.smoke), full", options: [...TEST_TIERS], default: 'full' }),
    jobs: Flags.integer({ char: 'j', description: 'MAKEOPTS=-jN in each container (default: the number of CPUs)', min: 1, max: 1024 }),
    timeout: Flags.string({ description: 'time each atom under test may take, e.g. 90m or 6h; 0 for none (default 6h)', helpValue: 'DURATION' }),
    'report-dir': Flags.string({ description: 'where the reports go, one subdirectory per GPU', default: 'rocm-ebuild-reports', helpValue: 'DIR' }),
    keep: Flags.boolean({ description: 'leave each container in place after it ends, for debugging' }),
    'dry-run': Flags.boolean({
      char: 'n',
      description: 'print the files each container would get (make.conf, package.use, package.env, …, the script) as comments, then its engine command line; run nothing (needs no engine, no ::gentoo tree, and no GPU for a gfx named with --gpu)',
    }),
  };

  async run(): Promise<TestRunResult> {
    const { argv, flags } = await this.parse(Test);
    const atoms = (argv as string[]).filter((a) => a.length > 0);
    const json = this.jsonEnabled();
    for (const g of flags.gpu ?? []) {
      if (!isGpuRequest(g)) throw new UserError(`--gpu ${g}: expected auto, all, a GPU index or a gfx name such as gfx90a`, ExitCode.invalidInput);
    }
    const timeoutSeconds = flags.timeout !== undefined ? parseDuration(flags.timeout) : DEFAULT_TIMEOUT;
    let shard: { index: number; total: number } | undefined;
    if (flags.shard !== undefined) {
      const m = /^([0-9]+)\/([0-9]+)$/.exec(flags.shard);
      if (!m || Number(m[1]) < 1 || Number(m[1]) > Number(m[2])) throw new UserError(`--shard ${flags.shard}: expected K/N with 1 ≤ K ≤ N, e.g. 2/4`, ExitCode.invalidInput);
      shard = { index: Number(m[1]), total: Number(m[2]) };
    }
    // Not awaited here: runTests starts what needs no manifest (git, the engine lookup) while it loads.
    const model = loadManifestOrFail(flags.manifest).then((manifest) => stackFor(manifest, flags.version));
    model.catch(() => undefined);

    // Ctrl-C / SIGTERM: stop the container and write the partial report; a second one gives up at once.
    const controller = new AbortController();
    let signals = 0;
    const onSignal = (sig: NodeJS.Signals) => {
      signals++;
      if (signals > 1) process.exit(130);
      process.stderr.write(`\nrocm-ebuild: ${sig}: stopping the container and writing the partial report (again to quit at once)\n`);
      controller.abort();
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    let result: TestRunResult;
    try {
      result = await runTests({
        model,
        atoms,
        skipTests: flags['skip-tests'] ?? [],
        ...(shard ? { shard } : {}),
        overlay: flags.overlay,
        gpus: flags.gpu ?? [],
        ...(flags.engine ? { engine: flags.engine as EngineName | 'none' } : {}),
        image: flags.image,
        tree: flags.tree,
        // The distdir bump filled: --distdir, DISTDIR, else Portage's own (portageq, make.conf), else the cache.
        distdir: (await distfileSettings({ distdir: flags.distdir }, { check: false, mirrors: false })).distdir,
        ...(flags.pkgdir ? { pkgdir: flags.pkgdir } : {}),
        tests: flags.tests as TestTier,
        jobs: flags.jobs ?? defaultJobs(),
        timeoutSeconds,
        reportDir: flags['report-dir'],
        keep: flags.keep ?? false,
        dryRun: flags['dry-run'] ?? false,
        toolVersion: this.config.version,
        env: process.env,
        progress: new TestProgress({ quiet: json }),
        signal: controller.signal,
      });
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
    // How far the facts behind these ebuilds were checked: a failure may be the data's, not the code's.
    const evidence = releaseEvidence((await model).components);
    result = { ...result, evidence };
    if (!json) notice(`evidence of ROCm ${result.release}: ${evidence.level} (${describeCounts(evidence.counts)}): ${EVIDENCE_MEANING[evidence.level]}`);
    for (const n of result.notes) notice(`note: ${n}`);
    const code = result.dryRun ? ExitCode.ok : exitCodeOf(result);
    if (json) {
      // oclif prints what run() returns; an exit code other than 0 ends run() first.
      if (code !== ExitCode.ok) this.logJson(result);
    } else if (result.dryRun) {
      process.stdout.write(dryRunText(result));
    } else {
      for (const r of result.reports) {
        const failed = r.atoms.filter((a) => a.tested && a.result !== 'passed');
        this.log(`${r.gfx ?? 'no GPU'}: ${r.result}${r.message ? ` (${r.message})` : ''}${failed.length ? `: ${failed.map((a) => `${a.atom} ${a.result}${a.failureClass ? ` [${a.failureClass}]` : ''}`).join(', ')}` : ''}`);
      }
      this.log(`reports: ${result.reportDir}`);
    }
    if (code !== ExitCode.ok) this.exit(code);
    return result;
  }
}
