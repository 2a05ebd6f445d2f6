import { Args } from '#oclif';
import { BaseCommand } from '../cli/base-command.js';
import { completionScript, SHELLS, type CompletionCommand, type Shell } from '../cli/completion.js';

export default class Completion extends BaseCommand {
  static override summary = 'Print a shell completion script for bash, zsh or fish';
  static override description =
    'Completes commands and topics, the flags of each command and the values of flags with a fixed set ' +
    '(e.g. graph --format); a flag that takes a path completes file names. The script is made from the ' +
    'commands of this rocm-ebuild, so load it again after an upgrade. Exit codes: 0 printed, 2 unknown shell.';

  static override examples = [
    { description: 'Complete in this bash session', command: 'source <(<%= config.bin %> <%= command.id %> bash)' },
    { description: 'Install for bash', command: '<%= config.bin %> <%= command.id %> bash > ~/.local/share/bash-completion/completions/rocm-ebuild' },
    { description: 'Install for fish', command: '<%= config.bin %> <%= command.id %> fish > ~/.config/fish/completions/rocm-ebuild.fish' },
  ];

  static override args = {
    shell: Args.string({ ignoreStdin: true, description: 'the shell', options: [...SHELLS], required: true }),
  };

  async run(): Promise<{ shell: Shell; script: string }> {
    const { args } = await this.parse(Completion);
    const commands: CompletionCommand[] = this.config.commands
      .filter((c) => !c.hidden)
      .map((c) => ({
        id: c.id,
        ...(c.summary ? { summary: c.summary } : {}),
        flags: Object.fromEntries(
          Object.entries(c.flags)
            .filter(([, f]) => !f.hidden)
            .map(([name, f]) => [name, { name, type: f.type, ...(f.char ? { char: f.char } : {}), ...(f.type === 'option' && f.options ? { options: f.options } : {}), ...(f.description ? { description: f.description } : {}) }]),
        ),
      }));
    const shell = args.shell as Shell;
    const script = completionScript(shell, commands, this.config.bin);
    if (!this.jsonEnabled()) process.stdout.write(script);
    return { shell, script };
  }
}
