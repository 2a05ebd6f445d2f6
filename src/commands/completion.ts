import { Args, Flags } from '#oclif';
import { BaseCommand } from '../cli/base-command.js';
import { completionScript, SHELLS, WORD_KINDS, wordKindOf, type CompletionCommand, type Shell, type WordKind } from '../cli/completion.js';
import { manifestFlag } from '../cli/manifest-flag.js';
import { UserError } from '../cli/errors.js';
import { ExitCode } from '../cli/exit-codes.js';

export default class Completion extends BaseCommand {
  static override summary = 'Print a shell completion script for bash, zsh or fish';
  static override description =
    'Completes commands and topics, the flags of each command and the values of flags with a fixed set ' +
    '(e.g. graph --format); release versions (bump VERSION, --version, --derive-from) and package names ' +
    "(render ATOM, bump's packages, lint, test) from the stack manifest, the one --manifest names on the command " +
    'line or the default one, asked of rocm-ebuild once in each shell; a flag that takes a path completes ' +
    'file names. The script is made from the commands of this rocm-ebuild, so load it again after an upgrade. ' +
    'Exit codes: 0 printed, 2 unknown shell, or a manifest that does not validate (--words).';

  static override examples = [
    { description: 'Complete in this bash session', command: 'source <(<%= config.bin %> <%= command.id %> bash)' },
    { description: 'Install for bash', command: '<%= config.bin %> <%= command.id %> bash > ~/.local/share/bash-completion/completions/rocm-ebuild' },
    { description: 'Install for fish', command: '<%= config.bin %> <%= command.id %> fish > ~/.config/fish/completions/rocm-ebuild.fish' },
  ];

  static override args = {
    shell: Args.string({ ignoreStdin: true, description: 'the shell', options: [...SHELLS] }),
  };

  static override flags = {
    // What the scripts ask for: the manifest's words, one per line.
    words: Flags.string({ description: "print the stack manifest's release versions or package names, one per line (what the scripts complete from)", options: [...WORD_KINDS], hidden: true }),
    manifest: manifestFlag,
  };

  async run(): Promise<{ shell: Shell; script: string } | { words: string[] }> {
    const { args, flags } = await this.parse(Completion);
    if (flags.words) {
      // Imported here: printing a script needs no manifest.
      const { completionWords } = await import('../cli/completion-words.js');
      const list = await completionWords(flags.words as WordKind, flags.manifest);
      if (!this.jsonEnabled()) process.stdout.write(list.length ? `${list.join('\n')}\n` : '');
      return { words: list };
    }
    if (!args.shell) throw new UserError(`missing SHELL (${SHELLS.join(', ')}), e.g. ${this.config.bin} completion bash; see ${this.config.bin} completion --help`, ExitCode.invalidInput);
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
        args: Object.values(c.args ?? {}).map((a) => ({ name: a.name, kind: wordKindOf(a.name) })),
        ...(c.strict === false ? { variadic: true } : {}),
      }));
    const shell = args.shell as Shell;
    const script = completionScript(shell, commands, this.config.bin);
    if (!this.jsonEnabled()) process.stdout.write(script);
    return { shell, script };
  }
}
