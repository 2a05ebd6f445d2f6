import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Flags } from '#oclif';
import { BaseCommand } from '../../cli/base-command.js';
import { CONFIG_DISPLAY, settingFlagOptions } from '../../cli/user-defaults.js';
import { runEclassUpdate, type EclassUpdateResult } from '../../bump/eclass.js';
import { describeSigning } from '../../git/signing.js';

export default class EclassUpdate extends BaseCommand {
  static override summary = "Update a repository's rocm.eclass to rocm-ebuild's, in a commit of its own, with the review mail";
  static override description =
    "Replaces eclass/rocm.eclass of the repository (::gentoo or an overlay) with the eclass rocm-ebuild's ebuilds are " +
    'generated for, as one commit of its own, signed as git and metadata/layout.conf ask (as bump signs). An overlay keeps ' +
    "its copy's @MAINTAINER block. `bump` never changes ::gentoo's eclass: when the new ebuilds use names it lacks, the bump " +
    "stops and names this command. ::gentoo's eclass policy asks for eclass changes to be reviewed on the gentoo-dev mailing " +
    'list first: --mail writes that mail (To gentoo-dev, Subject "[PATCH] rocm.eclass: …", what changes and why, the diff), ' +
    'ready for git send-email or a mail client. --dry-run shows the diff and the commit, and writes nothing but the mail. ' +
    'Exit codes: 0 done (or already up to date), 4 repository refused (not a git repository, dirty worktree, detached HEAD, ' +
    'signing required and impossible).';

  static override examples = [
    { description: "See what would change in ::gentoo's eclass, and the commit", command: '<%= config.bin %> eclass update --overlay ~/gentoo --dry-run' },
    { description: 'Commit the update and write the gentoo-dev review mail', command: '<%= config.bin %> eclass update --overlay ~/gentoo --mail rocm-eclass.patch' },
    { description: 'Print the review mail only, as JSON with the diff', command: '<%= config.bin %> eclass update --overlay ~/gentoo --dry-run --mail - --json' },
  ];

  static override flags = {
    overlay: Flags.string({ char: 'o', description: `the repository (a git repository: ::gentoo or an overlay) (default: overlay in ${CONFIG_DISPLAY})`, required: true, helpValue: 'DIR', ...settingFlagOptions('overlay') }),
    'dry-run': Flags.boolean({ char: 'n', description: 'show the diff and the commit; change nothing (the mail is still written)' }),
    mail: Flags.string({ description: 'write the gentoo-dev review mail to FILE, - for standard output (default: no mail)', helpValue: 'FILE' }),
  };

  async run(): Promise<EclassUpdateResult> {
    const { flags } = await this.parse(EclassUpdate);
    const json = this.jsonEnabled();
    const result = await runEclassUpdate({
      overlay: flags.overlay,
      dryRun: flags['dry-run'],
      ...(flags.mail ? { mail: flags.mail } : {}),
      warn: (m) => (json ? process.stderr.write(`warning: ${m}\n`) : this.warn(m)),
    });
    if (result.mail !== undefined && flags.mail && flags.mail !== '-') {
      result.mailFile = path.resolve(flags.mail);
      await writeFile(result.mailFile, result.mail);
    }
    if (json) {
      if (flags.mail === undefined) delete result.mail;
      return result;
    }
    const eclass = path.join(result.overlay, 'eclass/rocm.eclass');
    if (!result.changed) {
      this.log(`${eclass} is already the eclass rocm-ebuild's ebuilds are generated for; nothing to do`);
      return result;
    }
    const names = [
      ...(result.added.length > 0 ? [`adds ${result.added.join(', ')}`] : []),
      ...(result.removed.length > 0 ? [`removes ${result.removed.join(', ')}`] : []),
    ];
    this.log(`${eclass}: ${names.length > 0 ? names.join('; ') : 'the code changes, the names stay'}`);
    this.log(`${result.dryRun ? 'would commit' : 'committed'}: ${result.subject}${result.head ? ` (${result.head.slice(0, 12)})` : ''}`);
    if (result.signing) this.log(describeSigning(result.signing));
    if (result.dryRun) this.log(`\n${result.diff}`);
    if (result.gentoo) this.log(`::gentoo's eclass policy: post the change to gentoo-dev for review before pushing it${result.mailFile ? ` (the mail: ${result.mailFile}; git send-email ${result.mailFile})` : flags.mail === '-' ? ' (the mail follows)' : ' (--mail FILE writes the mail)'}`);
    if (flags.mail === '-') this.log(`\n${result.mail}`);
    return result;
  }
}
