import { CommandHelp, Errors, Help } from '#oclif';
import { unknownCommand } from './command-words.js';
import { ExitCode } from './exit-codes.js';
import { reportError, wantsJson } from './report-error.js';
import { layoutHelp } from './help-text.js';

type Render = (template: string) => string;

/** ejs's escaping of `<%= … %>` output. */
function escapeXml(s: string): string {
  return s.replace(/[&<>'"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', "'": '&#39;', '"': '&#34;' })[c]!);
}

/**
 * oclif renders every help string (descriptions, flags, examples) as an ejs
 * template, compiling each one: most of `--help`'s own time. Ours use only
 * `<%= config.bin %>` and `<%= command.id %>`, so those are substituted
 * directly; a string with any other template tag still goes through ejs,
 * so the output is what ejs would print.
 */
function fastRender(bin: () => string, id: () => string | undefined, slow: Render): Render {
  return (template: string) => {
    if (!template.includes('<%') && !template.includes('%>')) return template;
    let out = template.replaceAll('<%= config.bin %>', escapeXml(bin()));
    const command = id();
    if (command !== undefined) out = out.replaceAll('<%= command.id %>', escapeXml(command));
    return out.includes('<%') || out.includes('%>') ? slow(template) : out;
  };
}

class FastCommandHelp extends CommandHelp {
  constructor(...args: ConstructorParameters<typeof CommandHelp>) {
    super(...args);
    this.render = fastRender(() => this.config.bin, () => this.command.id, this.render);
  }

  /**
   * The summary and description, wrapped once: oclif keeps every line break of the source and
   * wraps each line again, so a description written over several source lines came out with a
   * short line wherever the source line ended.
   */
  protected override description(): string | undefined {
    const { summary, description } = this.command;
    if (!description) return undefined;
    return layoutHelp([summary, description].filter(Boolean).join('\n\n'), (text, spacing) => this.wrap(text, spacing), this.indentSpacing);
  }
}

export default class FastHelp extends Help {
  constructor(...args: ConstructorParameters<typeof Help>) {
    super(...args);
    this.render = fastRender(() => this.config.bin, () => undefined, this.render);
    this.CommandHelpClass = FastCommandHelp;
  }

  /** `rocm-ebuild bmp --help`: the unknown command in our error format, with the nearest one. */
  override async showHelp(argv: string[]): Promise<void> {
    // oclif takes the word `help` for a request of the root help: `help --help` is our help command's.
    const words = argv.filter((a) => !a.startsWith('-'));
    const help = this.config.findCommand('help');
    if (words.length === 1 && words[0] === 'help' && help) return this.showCommandHelp(help);
    try {
      await super.showHelp(argv);
    } catch (err) {
      const subject = /^Command (\S+) not found\.$/.exec((err as Error).message)?.[1];
      if (subject === undefined) throw err;
      reportError(unknownCommand(this.config.commandIDs, subject), ExitCode.invalidInput, { json: wantsJson(argv) });
      throw new Errors.ExitError(ExitCode.invalidInput);
    }
  }
}
