import { Args, Flags } from '#oclif';
import { BaseCommand } from '../../cli/base-command.js';
import { createProgress, useColor } from '../../cli/progress.js';
import { ExitCode } from '../../cli/exit-codes.js';
import { UserError } from '../../cli/errors.js';
import { loadManifestOrFail, manifestFlag } from '../../cli/stack.js';
import { deadlineOf, formatFlag, requireVersion, treeFlags, treeProvider } from '../../cli/upstream-flags.js';
import { formatPatchesMarkdown, formatPatchesText } from '../../upstream/replay/format.js';
import { replayPatches, type PatchesReport } from '../../upstream/replay/patches.js';
import { defaultAgainst } from '../../upstream/releases/projects.js';
import { selectComponents } from '../../upstream/select.js';

export default class UpstreamPatches extends BaseCommand {
  static override summary = "Replay the manifest's fix-ups on a release's sources: which still apply";
  static override description = `For every fix-up the manifest carries — its patch files, prepare's replace, delete_lines, insert and remove, and
the sed -i calls in phase code — checks it against the release's sources and prints one line each, with the file and the reason:
  applies     matches as before (a patch file: every hunk applies, as git apply would apply it)
  differs     matches, but a different number of times than in the release compared with (--against)
  upstream    nothing to do any more: the replacement text is already there, the lines or path are gone, the patch applies backwards
  fails       the text is not found, a hunk does not match, or the file is gone (sed -i on a missing file dies)
  skipped     cannot be replayed here (outside the sources, the code computes its arguments, a patch fetched
              by URL: not on this machine offline), or a file skip_missing allows to be absent
Each fix-up meets the text the ones before it left, in the order the ebuild runs them (src_prepare's
before, the prepare list, its after, then the later phases). Nothing from the manifest is run: replace
counts the literal text, delete_lines, insert and sed run in GNU sed's sandbox mode on a copy of the
file's text, words are expanded without a shell.

Trees come from the release tarballs through the distfiles engine, or with --base-url from git tags.

Exit codes: 0 every fix-up applies (possibly differently), 2 invalid input, 5 some sources could not be read,
6 some fix-ups fail or are already upstream (the data must change).`;

  static override examples = [
    { description: 'Do the fix-ups still apply to 6.3.3?', command: '<%= config.bin %> <%= command.id %> 6.3.3' },
    { description: 'Only hipcc and hip, compared with 6.2.2', command: '<%= config.bin %> <%= command.id %> 6.3.3 hipcc hip --against 6.2.2' },
    { description: 'As Markdown for the pull request, from local mirrors', command: "<%= config.bin %> <%= command.id %> 6.3.3 --base-url '/srv/mirror/{owner}+{repo}.git' --format markdown" },
  ];

  static override strict = false;
  static override args = {
    version: Args.string({ ignoreStdin: true, description: 'the release whose sources are checked, e.g. 6.3.3', required: true }),
  };

  static override flags = {
    manifest: manifestFlag,
    ...treeFlags,
    against: Flags.string({ description: 'the release the counts are compared with (default: the newest known release before VERSION)', helpValue: 'VERSION' }),
    format: formatFlag,
  };

  async run(): Promise<PatchesReport> {
    const { args, argv, flags } = await this.parse(UpstreamPatches);
    const json = this.jsonEnabled();
    const version = requireVersion(args.version, 'release');
    const manifest = await loadManifestOrFail(flags.manifest);
    const against = flags.against ? requireVersion(flags.against, '--against') : defaultAgainst(manifest, version);
    if (against === version) throw new UserError(`--against ${against} is the release being checked`, ExitCode.invalidInput);
    const report = await replayPatches(manifest, {
      version,
      against,
      components: selectComponents(manifest, (argv as string[]).slice(1)),
      provider: treeProvider(flags, json, { deadline: deadlineOf(flags.timeout) }),
      jobs: flags.jobs ?? 2,
      progress: createProgress({ quiet: json }),
    });
    if (!json) process.stdout.write(flags.format === 'markdown' ? formatPatchesMarkdown(report) : formatPatchesText(report, { color: useColor(process.stdout) }));
    const code = report.counts.unreadable > 0 ? ExitCode.fetchFailed : report.counts.fails + report.counts.upstream > 0 ? ExitCode.qaFailed : ExitCode.ok;
    if (code !== ExitCode.ok) {
      if (json) this.logJson(report);
      this.exit(code);
    }
    return report;
  }
}
