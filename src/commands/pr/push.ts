import { Flags } from '#oclif';
import { BaseCommand } from '../../cli/base-command.js';
import { createProgress } from '../../cli/progress.js';
import { liveTerminal } from '../../util/terminal.js';
import { loadManifestOrFail } from '../../cli/stack.js';
import { resultLine } from '../../pr/format.js';
import { describeSignatures } from '../../pr/signature-check.js';
import { runPush, type PushResult } from '../../pr/push.js';
import { shellLine } from '../../util/argv.js';
import { TEMPLATE_NAMES, type TemplateName } from '../../pr/templates.js';
import { rangeFlags } from './check.js';

export default class PrPush extends BaseCommand {
  static override summary = 'Check the range, push the branch and open the pull request';
  static override description = `Runs \`pr check\` and refuses to push when it finds an error-level result (--force pushes anyway and
still prints them). Then pushes the range's end to the fork with your own git (git push REMOTE HEAD:refs/heads/
BRANCH: your remote, your credentials; nothing is stored, no upstream is set), with the record of what bump
generated (refs/rocm-ebuild-generated, pushed to refs/meta/rocm-ebuild-generated) when the clone has it, so that
another clone can fetch it and opens the pull request with
\`gh pr create --body-file -\` when the GitHub CLI is installed, or prints the URL to open and the text to paste.
The pull request goes to the repository and branch the range's base comes from (origin/master: the GitHub
repository of origin, branch master); --repo and --base override them.

--dry-run prints the exact commands and the text, and runs nothing; it says how many commits are signed, and
what verifying them found where metadata/layout.conf requires signed commits (pr check's UnsignedCommit and
BadCommitSignature are errors, so such a range is not pushed without --force).

The remote (from --remote or branch.<name>.pushRemote) must be a configured remote whose name git accepts;
--branch and --base must be valid branch names. Remote and refspec reach git after \`--\`, and gh gets each value
joined to its flag, so no value can become an option. git push runs your own hooks and your remote's configured
receive-pack, as any push of yours does.

Exit codes: 0 pushed (and opened), 6 pr check found errors (nothing pushed), 2 invalid input (unknown or invalid
remote, invalid branch name, empty range), 4 not a git repository, 5 git push or gh failed.`;

  static override examples = [
    { description: 'Push the current branch to your fork and open the pull request', command: '<%= config.bin %> pr push --overlay ~/gentoo --remote fork' },
    { description: 'See what would run', command: '<%= config.bin %> pr push --overlay ~/gentoo --remote fork --dry-run' },
    { description: 'A draft, under another branch name', command: '<%= config.bin %> pr push --overlay ~/gentoo --remote fork --branch rocm-6.2.2 --draft' },
  ];

  static override flags = {
    ...rangeFlags,
    remote: Flags.string({ description: "the remote to push to, your fork (default: the branch's push remote, else origin)", helpValue: 'NAME' }),
    branch: Flags.string({ description: 'the branch name on that remote (default: the current branch)', helpValue: 'NAME' }),
    repo: Flags.string({ description: "the repository the pull request goes to (default: the range base's GitHub repository)", helpValue: 'OWNER/REPO' }),
    base: Flags.string({ description: "the branch the pull request goes to (default: the range base's branch)", helpValue: 'BRANCH' }),
    draft: Flags.boolean({ description: 'open the pull request as a draft' }),
    'dry-run': Flags.boolean({ char: 'n', description: 'print the commands and the text; run nothing' }),
    force: Flags.boolean({ description: 'push even when pr check finds errors (they are still printed)' }),
    tests: Flags.string({ description: 'a GPU test report for the text (repeatable, one per gfx)', multiple: true, helpValue: 'REPORT.json' }),
    template: Flags.string({ description: 'the checklist to end with (default: from the target repository)', options: TEMPLATE_NAMES }),
    'no-pkgcheck': Flags.boolean({ description: 'do not run pkgcheck even when it is installed' }),
  };

  async run(): Promise<Omit<PushResult, 'prepared'>> {
    const { flags } = await this.parse(PrPush);
    const json = this.jsonEnabled();
    const manifest = await loadManifestOrFail(flags.manifest);
    const { prepared, ...result } = await runPush({
      overlay: flags.overlay,
      ...(flags.range ? { range: flags.range } : {}),
      root: flags.root,
      manifest,
      ...(flags.template ? { template: flags.template as TemplateName } : {}),
      ...(flags.tests ? { tests: flags.tests } : {}),
      pkgcheck: !flags['no-pkgcheck'],
      progress: createProgress({ quiet: json || !liveTerminal(process.stderr) }),
      ...(flags.remote ? { remote: flags.remote } : {}),
      ...(flags.branch ? { branch: flags.branch } : {}),
      ...(flags.repo ? { repo: flags.repo } : {}),
      ...(flags.base ? { base: flags.base } : {}),
      draft: flags.draft,
      dryRun: flags['dry-run'],
      force: flags.force,
    });
    if (!json) {
      const short = (sha: string) => sha.slice(0, 12);
      for (const r of result.forced) process.stderr.write(`${resultLine(r, short)}\n`);
      for (const w of result.warnings) process.stderr.write(`warning: ${w}\n`);
      const gh = result.commands[1];
      if (result.dryRun) {
        this.log(`# ${prepared.report.range.label}: ${prepared.report.range.commits} commits; these commands would run in ${prepared.ctx.dir}:`);
        this.log(shellLine(result.commands[0]!));
        if (gh) this.log(`${shellLine(gh)}  # the text below on standard input`);
        this.log(`# ${describeSignatures(prepared.report.signatures)}`);
      } else {
        this.log(`pushed ${result.branch} to ${result.remote}`);
        if (result.url) this.log(`pull request: ${result.url}`);
      }
      if (!result.url && (result.dryRun || !gh)) {
        if (result.compareUrl) this.log(`${result.dryRun && !gh ? '# without gh: ' : ''}open ${result.compareUrl}`);
        this.log(`\ntitle: ${result.title}\n\n${result.body}`);
      }
    }
    return result;
  }
}
