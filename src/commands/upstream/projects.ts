import { Args, Flags } from '#oclif';
import { BaseCommand } from '../../cli/base-command.js';
import { createProgress } from '../../cli/progress.js';
import { ExitCode } from '../../cli/exit-codes.js';
import { UserError } from '../../cli/errors.js';
import { loadManifestOrFail, manifestFlag } from '../../cli/stack.js';
import { baseUrlFlag, deadlineOf, GITHUB, requireVersion, timeoutFlag } from '../../cli/upstream-flags.js';
import { formatProjectsText } from '../../upstream/releases/format.js';
import { compareProjects, type ProjectsReport } from '../../upstream/releases/projects.js';
import { ReleaseManifestError } from '../../upstream/releases/release-manifest.js';
import { upstreamCacheDir } from '../../upstream/trees/sources.js';
import { TreeError } from '../../upstream/trees/source-tree.js';

export default class UpstreamProjects extends BaseCommand {
  static override summary = "AMD's project list of a release, compared with the manifest's components and exclusions";
  static override description = `Reads AMD's release manifest (default.xml of the ROCm/ROCm repository at the release tag, or a local file
with --file) and compares its projects with the manifest's list of an earlier release (--against, default the
newest known release before it): projects new in the release and whether a component packages them or an
exclusion covers them, projects gone (and which package they fed), checkout paths that changed, and which gone
projects were renamed or moved into another repository. Evidence for a rename or move: the same checkout path,
the same name but for case and punctuation, the old repository answering with the new one's HEAD (GitHub
redirects renamed repositories; --no-probe skips asking), and with --trees the gone project's files found
under one directory of another project at the new tag (a monorepo).

Exit codes: 0 done, 2 invalid input (manifest, version, or no such release upstream), 5 the release manifest
could not be fetched. Repositories that cannot be asked for evidence are noted, not fatal.`;

  static override examples = [
    { description: "What changed in AMD's project list for 6.3.3?", command: '<%= config.bin %> <%= command.id %> 6.3.3' },
    {
      description: 'From downloaded release manifests, without asking any repository',
      command: '<%= config.bin %> <%= command.id %> 6.3.3 --file rocm-6.3.3.xml --against 6.2.2 --against-file rocm-6.2.2.xml --no-probe',
    },
    {
      description: 'With local mirrors, also comparing file lists to find moves into monorepos',
      command: "<%= config.bin %> <%= command.id %> 6.3.3 --base-url '/srv/mirror/{owner}+{repo}.git' --trees --json",
    },
  ];

  static override args = {
    version: Args.string({ ignoreStdin: true, description: 'the release, e.g. 6.3.3', required: true }),
  };

  static override flags = {
    manifest: manifestFlag,
    'base-url': baseUrlFlag,
    against: Flags.string({ description: 'the known release to compare with (default: the newest before VERSION)', helpValue: 'VERSION' }),
    file: Flags.string({ description: "AMD's release manifest as a local file instead of ROCm/ROCm's default.xml at the tag", helpValue: 'PATH' }),
    'against-file': Flags.string({ description: 'with --file: the older release\'s manifest as a local file (for checkout path changes)', helpValue: 'PATH', dependsOn: ['file'] }),
    probe: Flags.boolean({ description: 'ask the repositories of gone and new projects whether they are the same (renames)', default: true, allowNo: true }),
    trees: Flags.boolean({ description: "compare file lists to find gone projects moved into another repository (fetches every project's tree)" }),
    timeout: timeoutFlag,
    jobs: Flags.integer({ char: 'j', description: 'repositories asked at once (default 8)', min: 1, max: 64 }),
  };

  async run(): Promise<ProjectsReport> {
    const { args, flags } = await this.parse(UpstreamProjects);
    const json = this.jsonEnabled();
    const version = requireVersion(args.version, 'release');
    if (flags.against) requireVersion(flags.against, '--against');
    const manifest = await loadManifestOrFail(flags.manifest);
    if (flags.against && !manifest.stack.releases[flags.against]) {
      throw new UserError(`--against ${flags.against} is not a release of ${manifest.file}; it knows ${Object.keys(manifest.stack.releases).join(', ')}`, ExitCode.invalidInput);
    }
    let report: ProjectsReport;
    try {
      report = await compareProjects(manifest, {
        version,
        ...(flags.against ? { against: flags.against } : {}),
        ...(flags.file ? { file: flags.file } : {}),
        ...(flags['against-file'] ? { againstFile: flags['against-file'] } : {}),
        baseUrl: flags['base-url'] ?? GITHUB,
        cacheDir: upstreamCacheDir(),
        deadline: deadlineOf(flags.timeout),
        probe: flags.probe,
        trees: flags.trees,
        jobs: flags.jobs ?? 8,
        progress: createProgress({ quiet: json }),
      });
    } catch (err) {
      if (err instanceof ReleaseManifestError) throw new UserError(err.message, ExitCode.invalidInput);
      if (err instanceof TreeError) {
        throw new UserError(
          err.kind === 'missing'
            ? `AMD has no release ${version}: ${err.message}`
            : `cannot read the release manifest of ${version}, so whether AMD has that release is not known: ${err.message}` +
                (/resolve host|connect|no answer within|timed out|Network is unreachable/i.test(err.message)
                  ? '; no network? Check the connection (and HTTPS_PROXY), or read a mirror with --base-url'
                  : ''),
          err.kind === 'missing' ? ExitCode.invalidInput : ExitCode.fetchFailed,
        );
      }
      throw err;
    }
    if (!json) process.stdout.write(formatProjectsText(report));
    // Part of what was asked could not be read (AMD's list, a monorepo): the report stands, the exit says so.
    if (report.unread !== undefined || report.monorepos.some((m) => m.error !== undefined)) {
      if (json) this.logJson(report);
      this.exit(ExitCode.fetchFailed);
    }
    return report;
  }
}
