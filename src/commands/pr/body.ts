import { Flags } from '#oclif';
import { BaseCommand } from '../../cli/base-command.js';
import { createProgress } from '../../cli/progress.js';
import { liveTerminal, notice } from '../../util/terminal.js';
import { loadManifestOrFail } from '../../cli/stack.js';
import { UserError } from '../../cli/errors.js';
import { ExitCode } from '../../cli/exit-codes.js';
import type { BodyData } from '../../pr/body.js';
import { preparePullRequest } from '../../pr/prepare.js';
import { TEMPLATE_NAMES, type TemplateName } from '../../pr/templates.js';
import { rangeFlags } from './check.js';

export default class PrBody extends BaseCommand {
  static override summary = "Print the pull request's title and text, ready for GitHub";
  static override description = `Markdown in the shape ROCm stack pull requests to ::gentoo take: what the range does (new packages with
their DESCRIPTION, version bumps, dropped versions, the release's projects left out on purpose with the
manifest's reason), technical notes (LLVM slot, changes to amdgpu_targets.desc, eclass changes), the QA
summary of \`pr check\`, the GPU test results when given test reports, the Closes:/Bug: URLs of the commits,
then the target repository's checklist with its boxes unticked (gentoo: GLEP 76, sign-off, AI policy,
pkgcheck; guru: also its rules, build logs and Bugzilla addresses). The template follows the repository the
range's base comes from (gentoo/gentoo, gentoo/guru) or the overlay's repo_name; --template overrides it.

The title goes to stderr (stdout is the body, for --body-file); --json gives title, body and the data.

Exit codes: 0 done (QA findings are part of the text, not a failure), 2 invalid input (unknown revision,
an empty range, a test report that does not validate), 4 not a git repository.`;

  static override examples = [
    { description: 'The text for the current branch', command: '<%= config.bin %> pr body --overlay ~/rocm-overlay > body.md' },
    {
      description: 'With GPU test results, one report per architecture',
      command: '<%= config.bin %> pr body --overlay ~/gentoo --tests results/gfx90a/report.json --tests results/gfx1100/report.json',
    },
    { description: 'For GURU, as JSON', command: '<%= config.bin %> pr body --overlay ~/guru --range origin/dev..HEAD --template guru --json' },
  ];

  static override flags = {
    ...rangeFlags,
    tests: Flags.string({ description: 'a GPU test report (report.json of `rocm-ebuild test`; repeatable, one per gfx)', multiple: true, helpValue: 'REPORT.json' }),
    template: Flags.string({ description: 'the checklist to end with (default: from the target repository)', options: TEMPLATE_NAMES }),
    'no-pkgcheck': Flags.boolean({ description: 'do not run pkgcheck for the QA summary even when it is installed' }),
  };

  async run(): Promise<{ title: string; body: string; data: BodyData }> {
    const { flags } = await this.parse(PrBody);
    const json = this.jsonEnabled();
    const manifest = await loadManifestOrFail(flags.manifest);
    const prepared = await preparePullRequest({
      overlay: flags.overlay,
      ...(flags.range ? { range: flags.range } : {}),
      root: flags.root,
      manifest,
      ...(flags.template ? { template: flags.template as TemplateName } : {}),
      ...(flags.tests ? { tests: flags.tests } : {}),
      pkgcheck: !flags['no-pkgcheck'],
      progress: createProgress({ quiet: json || !liveTerminal(process.stderr) }),
    });
    if (prepared.report.range.commits === 0) {
      throw new UserError(`${prepared.report.range.label}: no commits, so no pull request to describe`, ExitCode.invalidInput);
    }
    if (!json) {
      process.stderr.write(`title: ${prepared.body.title}\n`);
      if (!flags.tests) notice('note: no --tests given: the text says the ebuilds were not tested on a GPU; `rocm-ebuild test` writes the report.json files --tests reads');
      process.stdout.write(prepared.markdown);
    }
    return { title: prepared.body.title, body: prepared.markdown, data: prepared.body };
  }
}
