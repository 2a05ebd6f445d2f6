import { Args, Errors, loadHelpClass } from '#oclif';
import { BaseCommand } from '../cli/base-command.js';
import { unknownCommand } from '../cli/command-words.js';
import { UserError } from '../cli/errors.js';
import { ExitCode } from '../cli/exit-codes.js';

export default class HelpCommand extends BaseCommand {
  static override summary = 'Show the help of a command or topic';
  static override description =
    'The same text as `rocm-ebuild COMMAND --help`; with no command, the list of commands. With --json, the ' +
    "command's description, flags and arguments as the command manifest holds them. Exit codes: 0 shown, 2 no such command.";

  static override examples = [
    { description: 'How to bump a release', command: '<%= config.bin %> <%= command.id %> bump' },
    { description: 'A command of a topic', command: '<%= config.bin %> <%= command.id %> upstream tags' },
  ];

  static override strict = false;
  static override args = { command: Args.string({ ignoreStdin: true, description: 'a command or topic, e.g. bump or upstream tags' }) };

  async run(): Promise<unknown> {
    const { argv } = await this.parse(HelpCommand);
    const words = argv as string[];
    const id = words.join(':');
    const command = id ? this.config.findCommand(id) : undefined;
    if (id && !command && !this.config.findTopic(id)) throw new UserError(unknownCommand(this.config.commandIDs, id), ExitCode.invalidInput);
    if (this.jsonEnabled()) return command ?? { topic: id || null, commands: this.config.commandIDs.filter((c) => !id || c.startsWith(`${id}:`)).map((c) => c.replaceAll(':', ' ')) };
    const Help = await loadHelpClass(this.config);
    try {
      await new Help(this.config, this.config.pjson.oclif.helpOptions ?? {}).showHelp(words);
    } catch (err) {
      if (err instanceof Errors.ExitError) this.exit(err.oclif.exit);
      throw err;
    }
    return undefined;
  }
}
