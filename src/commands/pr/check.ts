import { Flags } from '#oclif';
import { BaseCommand } from '../../cli/base-command.js';
import { CONFIG_DISPLAY, settingFlagOptions } from '../../cli/user-defaults.js';
import { ExitCode } from '../../cli/exit-codes.js';
import { createProgress, useColor } from '../../cli/progress.js';
import { liveTerminal } from '../../util/terminal.js';
import { loadManifestOrFail, manifestFlag } from '../../cli/stack.js';
import { checkRange, openRange, type CheckReport } from '../../pr/check.js';
import { formatCheckText } from '../../pr/format.js';

export const rangeFlags = {
  overlay: Flags.string({ char: 'o', description: `the overlay (a git repository) (default: overlay in ${CONFIG_DISPLAY}, else the current directory)`, helpValue: 'DIR', ...settingFlagOptions('overlay', '.') }),
  range: Flags.string({
    char: 'r',
    description:
      'the commits: A..B, or A for A..HEAD (default: the upstream of the current branch, else origin/HEAD..HEAD, else the commits on no remote branch)',
    helpValue: 'A..B',
  }),
  root: Flags.boolean({ description: 'every commit up to the range end (HEAD, or --range B), the root commit included: a new overlay never pushed' }),
  manifest: manifestFlag,
};

export default class PrCheck extends BaseCommand {
  static override summary = 'Check every commit of a pull request the way pkgcheck and a Gentoo reviewer would';
  static override description = `For each commit of the range: the summary prefix matches what it touches (cat/pkg:, cat/*:, foo.eclass:,
profiles/desc:), one package per commit, the added version in the summary, at most 69 characters after the
prefix, blank lines before body and trailers, body lines at most 80 columns, trailers all "Tag: value",
Bug:/Closes: as https URLs, Signed-off-by for author and committer (GLEP 76); for each package it changes:
the copyright year of added ebuilds is the commit's year, no RDEPEND/EAPI/SLOT change without a revision
bump, every SRC_URI distfile has its DIST line, no DIST line changed for an unchanged file name; and every
ebuild added or changed passes lint (rocm-ebuild's checks, bash -n, shellcheck). Keywords are pkgcheck's where
it has the check, with its levels. Where metadata/layout.conf says sign-commits = true (::gentoo), every commit
must be signed and its signature must verify with your keyring (or gpg.ssh.allowedSignersFile): UnsignedCommit
and BadCommitSignature are errors, a signature that cannot be checked here is an UnverifiedCommitSignature
warning; pkgcheck has no signature check, so these names are rocm-ebuild's.

When pkgcheck is on PATH, \`pkgcheck scan --commits A..B -c +GitCommitMessageCheck,+GitPkgCommitsCheck
-R JsonReporter\` runs too and its results are folded in, marked as pkgcheck's. Without it, the report says
that only rocm-ebuild's checks ran.

Progress: a line that redraws itself on stderr when that is a terminal; nothing in a pipe or with --json, where
the report is all there is to read.

Exit codes: 0 no error-level result (warnings, style and info are shown), 6 an error-level result, 2 invalid
input (unknown revision, no base to compare with), 4 not a git repository.`;

  static override examples = [
    { description: 'Check the current branch of an overlay against its upstream (or origin/HEAD)', command: '<%= config.bin %> pr check --overlay ~/rocm-overlay' },
    { description: 'Check an explicit range, as JSON', command: '<%= config.bin %> pr check --overlay ~/gentoo --range origin/master..rocm-6.2.2 --json' },
    { description: 'Check every commit of a new overlay that was never pushed', command: '<%= config.bin %> pr check --overlay ~/rocm-overlay --root' },
  ];

  static override flags = {
    ...rangeFlags,
    'no-pkgcheck': Flags.boolean({ description: 'do not run pkgcheck even when it is installed' }),
  };

  async run(): Promise<CheckReport> {
    const { flags } = await this.parse(PrCheck);
    const json = this.jsonEnabled();
    const manifest = await loadManifestOrFail(flags.manifest);
    const ctx = await openRange(flags.overlay, { ...(flags.range ? { range: flags.range } : {}), root: flags.root });
    let report: CheckReport;
    try {
      report = await checkRange(ctx, {
        manifest,
        pkgcheck: !flags['no-pkgcheck'],
        progress: createProgress({ quiet: json || !liveTerminal(process.stderr) }),
      });
    } finally {
      ctx.objects.close();
    }
    if (!json) {
      if (report.range.commits === 0) this.log(`${report.range.label}: no commits, nothing to check`);
      else process.stdout.write(formatCheckText(report, { color: useColor(process.stdout) }));
    }
    if (report.counts.error > 0) {
      if (json) this.logJson(report);
      this.exit(ExitCode.qaFailed);
    }
    return report;
  }
}
