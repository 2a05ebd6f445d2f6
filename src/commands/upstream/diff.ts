import { Args } from '#oclif';
import { BaseCommand } from '../../cli/base-command.js';
import { createProgress, useColor } from '../../cli/progress.js';
import { ExitCode } from '../../cli/exit-codes.js';
import { loadManifestOrFail, manifestFlag } from '../../cli/stack.js';
import { deadlineOf, formatFlag, requireVersion, treeFlags, treeProvider } from '../../cli/upstream-flags.js';
import { diffReleases, type DiffReport } from '../../upstream/facts/diff.js';
import { formatDiffMarkdown, formatDiffText } from '../../upstream/facts/format.js';
import { selectComponents } from '../../upstream/select.js';

export default class UpstreamDiff extends BaseCommand {
  static override summary = 'What changed between two releases in the build files that matter to an ebuild';
  static override description = `Reads the CMake and Python build files of each component's sources at both releases and reports what an
ebuild cares about: find_package / pkg_check_modules added, removed or with a new minimum version; option()
names and defaults (and CACHE BOOL settings); default GPU target lists (AMDGPU_TARGETS, GPU_TARGETS,
rocm_check_target_ids); bundled downloads (FetchContent, ExternalProject, download_project, CPM,
file(DOWNLOAD)); cmake_minimum_required; the project's version and languages, rocm_setup_version, and library
VERSION/SOVERSION; Python build requirements (pyproject.toml, setup.py, setup.cfg, requirements*.txt, except
documentation). The releases need not be in the manifest: the component data of the nearest earlier release
names the sources.

Trees come from the release tarballs, fetched through the distfiles engine into the distdir (cached; the
bump reuses them), or with --base-url from git tags. A source that cannot be read is reported in its place.

Exit codes: 0 done, 2 invalid input, 5 some sources could not be read (the others are reported).`;

  static override examples = [
    { description: 'Everything that changed between 6.2.2 and 6.3.3', command: '<%= config.bin %> <%= command.id %> 6.2.2 6.3.3' },
    { description: 'Two components, as Markdown for the pull request', command: '<%= config.bin %> <%= command.id %> 6.2.2 6.3.3 rocPRIM rocBLAS --format markdown' },
    {
      description: 'From local bare mirrors of the repositories',
      command: "<%= config.bin %> <%= command.id %> 6.2.2 6.3.3 rocPRIM --base-url '/srv/mirror/{owner}+{repo}.git' --json",
    },
  ];

  static override strict = false;
  static override args = {
    from: Args.string({ ignoreStdin: true, description: 'the older release, e.g. 6.2.2', required: true }),
    to: Args.string({ ignoreStdin: true, description: 'the newer release, e.g. 6.3.3', required: true }),
  };

  static override flags = { manifest: manifestFlag, ...treeFlags, format: formatFlag };

  async run(): Promise<DiffReport> {
    const { args, argv, flags } = await this.parse(UpstreamDiff);
    const json = this.jsonEnabled();
    const from = requireVersion(args.from, 'release');
    const to = requireVersion(args.to, 'release');
    const manifest = await loadManifestOrFail(flags.manifest);
    const report = await diffReleases(manifest, {
      from,
      to,
      components: selectComponents(manifest, (argv as string[]).slice(2)),
      provider: treeProvider(flags, json, { deadline: deadlineOf(flags.timeout) }),
      jobs: flags.jobs ?? 2,
      progress: createProgress({ quiet: json }),
    });
    if (!json) process.stdout.write(flags.format === 'markdown' ? formatDiffMarkdown(report) : formatDiffText(report, { color: useColor(process.stdout) }));
    if (report.failures > 0) {
      if (json) this.logJson(report);
      this.exit(ExitCode.fetchFailed);
    }
    return report;
  }
}
