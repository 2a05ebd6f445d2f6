import { Args, Flags } from '#oclif';
import { BaseCommand } from '../../cli/base-command.js';
import { ExitCode } from '../../cli/exit-codes.js';
import { UserError } from '../../cli/errors.js';
import { loadManifestOrFail, manifestFlag } from '../../cli/stack.js';
import { baseUrlFlag, GITHUB, requireVersion, timeoutFlag, deadlineOf } from '../../cli/upstream-flags.js';
import { compareVersions } from '../../model/version.js';
import { upstreamCacheDir } from '../../upstream/trees/sources.js';
import { TreeError } from '../../upstream/trees/source-tree.js';
import { compareWithManifest } from '../../upstream/therock/compare.js';
import { formatTheRockText, summarize, type TheRockReport } from '../../upstream/therock/format.js';
import { readTheRock } from '../../upstream/therock/release.js';

export default class UpstreamTheRock extends BaseCommand {
  static override summary = "A TheRock release's composition (pinned repositories, components, dependencies), compared with the manifest";
  static override description = `Reads ROCm/TheRock at a tag (therock-7.14) or a release branch (release/therock-10.0) as a release manifest:
version.json's version; every submodule with the commit TheRock pins (.gitmodules read as data: a URL that is a
transport helper such as ext::, a file: URL, an option-like value or a path leaving the tree is refused and
reported, never used); every component TheRock builds (its therock_cmake_subproject_declare calls, each
source directory resolved to a pinned repository and a subdirectory) with TheRock's dependencies between them;
and BUILD_TOPOLOGY.toml's artifact groups and artifacts. Only trees and these few files are fetched, into the
upstream cache; nothing TheRock says is run, cloned or checked out.

Then, against one release of the manifest (--release, default the newest): the packages that correspond to
TheRock's subprojects (by where their source lives first, by name second), subprojects new in TheRock, packages
TheRock does not build (and where their versions come from instead), packages whose source moved, and the
dependencies one side has that the other lacks even through other packages.

Exit codes: 0 done, 2 invalid input (manifest, release, ref name, no such tag or branch, or TheRock's files
hold entries that were refused: the report is still printed), 5 TheRock could not be fetched.`;

  static override examples = [
    { description: "TheRock's first production release against the manifest's newest", command: '<%= config.bin %> <%= command.id %> therock-7.14' },
    {
      description: 'A release branch from a local mirror, compared with 7.2.4, as JSON',
      command: "<%= config.bin %> <%= command.id %> release/therock-10.0 --base-url '/srv/mirror/{owner}+{repo}.git' --release 7.2.4 --json",
    },
  ];

  static override args = {
    ref: Args.string({ ignoreStdin: true, description: 'a tag (therock-7.14) or branch (release/therock-10.0) of ROCm/TheRock', required: true }),
  };

  static override flags = {
    manifest: manifestFlag,
    'base-url': baseUrlFlag,
    release: Flags.string({ description: "the manifest's release to compare with (default: its newest)", helpValue: 'VERSION' }),
    timeout: timeoutFlag,
  };

  async run(): Promise<TheRockReport> {
    const { args, flags } = await this.parse(UpstreamTheRock);
    const json = this.jsonEnabled();
    if (flags.release) requireVersion(flags.release, '--release');
    const manifest = await loadManifestOrFail(flags.manifest);
    const known = Object.keys(manifest.stack.releases).sort(compareVersions);
    const release = flags.release ?? known.at(-1);
    if (!release || !manifest.stack.releases[release]) {
      throw new UserError(`--release ${flags.release} is not a release of ${manifest.file}; it knows ${known.join(', ')}`, ExitCode.invalidInput);
    }
    let therock;
    try {
      therock = await readTheRock(args.ref, { baseUrl: flags['base-url'] ?? GITHUB, cacheDir: upstreamCacheDir(), deadline: deadlineOf(flags.timeout) });
    } catch (err) {
      if (err instanceof TreeError) {
        throw new UserError(
          err.kind === 'missing' ? `TheRock has no tag or branch ${args.ref}: ${err.message}` : `cannot read TheRock at ${args.ref}: ${err.message}`,
          err.kind === 'missing' ? ExitCode.invalidInput : ExitCode.fetchFailed,
        );
      }
      throw err;
    }
    const comparison = compareWithManifest(manifest, release, therock);
    const report: TheRockReport = { therock, comparison, summary: summarize(therock, comparison) };
    if (!json) process.stdout.write(formatTheRockText(report));
    // Entries were refused: the report stands without them, the exit says so.
    if (therock.problems.length > 0) {
      if (json) this.logJson(report);
      this.exit(ExitCode.invalidInput);
    }
    return report;
  }
}
