import { Flags } from '#oclif';
import { BaseCommand } from '../../cli/base-command.js';
import { createProgress } from '../../cli/progress.js';
import { ExitCode } from '../../cli/exit-codes.js';
import { loadManifestOrFail, manifestFlag } from '../../cli/stack.js';
import { baseUrlFlag, deadlineOf, GITHUB, timeoutFlag } from '../../cli/upstream-flags.js';
import { formatTagsText } from '../../upstream/releases/format.js';
import { selectComponents } from '../../upstream/select.js';
import { upstreamTags, type TagsReport } from '../../upstream/releases/tags.js';

export default class UpstreamTags extends BaseCommand {
  static override summary = 'Releases upstream has that the manifest lacks, from the repositories\' tags';
  static override description = `Asks every repository the components are built from for its tags (git ls-remote --tags --refs: no API,
no token) and lists the releases (tags of the stack's scheme, rocm-X.Y.Z) the manifest does not know, sorted as
Portage compares versions, with how many repositories carry each and which lack it (a project folded into
another stops getting tags). TheRock's therock-X.Y tags are recognised and listed, although not supported yet.
Releases older than the manifest's oldest are counted but only listed with --all. Sources pinned to a fixed
tag (googletest at a commit) are not asked.

One unreachable repository is reported, not fatal.

Exit codes: 0 done, 2 invalid input (manifest, unknown component), 5 some repositories could not be asked
(the others are reported).`;

  static override examples = [
    { description: 'What did AMD release since the manifest was written?', command: '<%= config.bin %> <%= command.id %>' },
    { description: 'Only the repositories of two components', command: '<%= config.bin %> <%= command.id %> rocBLAS hipcc' },
    {
      description: 'Ask local bare mirrors instead of GitHub',
      command: "<%= config.bin %> <%= command.id %> --base-url '/srv/mirror/{owner}+{repo}.git' --json",
    },
  ];

  static override strict = false;
  static override args = {};

  static override flags = {
    manifest: manifestFlag,
    'base-url': baseUrlFlag,
    timeout: timeoutFlag,
    jobs: Flags.integer({ char: 'j', description: 'repositories asked at once (default 8)', min: 1, max: 64 }),
    all: Flags.boolean({ description: "also list releases older than the manifest's oldest" }),
  };

  async run(): Promise<TagsReport> {
    const { argv, flags } = await this.parse(UpstreamTags);
    const json = this.jsonEnabled();
    const manifest = await loadManifestOrFail(flags.manifest);
    const report = await upstreamTags(manifest, {
      components: selectComponents(manifest, argv as string[]),
      baseUrl: flags['base-url'] ?? GITHUB,
      deadline: deadlineOf(flags.timeout),
      jobs: flags.jobs ?? 8,
      all: flags.all,
      progress: createProgress({ quiet: json }),
    });
    if (!json) process.stdout.write(formatTagsText(report));
    if (report.unreachable.length > 0) {
      if (json) this.logJson(report);
      this.exit(ExitCode.fetchFailed);
    }
    return report;
  }
}
