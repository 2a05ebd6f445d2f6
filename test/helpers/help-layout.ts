/**
 * Finds lines of a `--help` text that were broken before the wrapper needed to break them: the
 * mark of text wrapped twice (a description written with hard line breaks, then wrapped again to
 * the terminal's width, leaves a short line in the middle of a paragraph).
 *
 * A line is broken early when the next line continues the same paragraph and its first word would
 * still have fitted within `limit` columns. The limit is kept some columns under the width, below
 * every column oclif's wrapper allows (it keeps a margin for indentation), so a line the wrapper
 * filled is never taken for one broken early.
 */
export interface EarlyBreak {
  section: string;
  line: string;
  next: string;
}

const LIST_ITEM = /^(?:[-*] |\d+\. |\$ )/;

export function earlyBreaks(help: string, width: number): EarlyBreak[] {
  const limit = width - 10;
  const found: EarlyBreak[] = [];
  let section = '';
  const lines = help.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const a = lines[i]!;
    if (a.length > 0 && !a.startsWith(' ')) {
      section = a;
      continue;
    }
    const b = lines[i + 1];
    if (!a.trim() || b === undefined || !b.trim() || !b.startsWith(' ')) continue;
    // oclif lays out USAGE itself; an example command continued with ` \` is broken on purpose.
    if (section === 'USAGE' || a.endsWith(' \\')) continue;
    const indentA = a.length - a.trimStart().length;
    const indentB = b.length - b.trimStart().length;
    const textB = b.trimStart();
    if (LIST_ITEM.test(textB)) continue;
    // oclif puts a flag's choices on a line of their own.
    if (textB.startsWith('<options: ')) continue;
    // oclif's long layout of flags: the flag alone on its line, its description below.
    if (a.trimStart().startsWith('-') && !/\S {2,}\S/.test(a.trimStart())) continue;
    // A row of a table in a description: its term, two spaces or more, its text.
    if (indentB > 2 && /^\S+ {2,}\S/.test(textB)) continue;
    // In a description a paragraph keeps its indentation; in a table (flags, arguments, commands)
    // a line at the rows' indentation or naming a flag starts a new row, and continuations are
    // indented further.
    const continues =
      section === 'DESCRIPTION' || section === 'EXAMPLES' ? indentB === indentA : indentB > 2 && indentB >= indentA && !textB.startsWith('-');
    if (!continues) continue;
    const word = textB.split(' ')[0]!;
    if (a.length + 1 + word.length <= limit) found.push({ section, line: a, next: b });
  }
  return found;
}
