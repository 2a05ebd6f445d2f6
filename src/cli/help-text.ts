/**
 * A command's description is written in source as paragraphs with line breaks wherever the
 * source line ended. Those breaks are not layout: the text is wrapped to the reader's width
 * when shown (by `--help`, the man page). Kept from the source are only what has meaning:
 * paragraphs (a blank line), list items (a line starting with "- ") and table rows (an indented
 * line: its term, two or more spaces, its text; see `upstream patches`).
 */
export type HelpBlock =
  | { kind: 'prose'; text: string }
  | { kind: 'item'; text: string }
  | { kind: 'row'; indent: number; term: string; column: number; text: string };

const ROW = /^(\s+)(\S+(?: \S+)*?)(\s{2,})(\S.*)$/;
const ITEM = /^[-*] /;

/** The description as paragraphs, each a list of blocks. */
export function helpParagraphs(text: string): HelpBlock[][] {
  return text
    .replace(/\r\n/g, '\n')
    .split(/\n[ \t]*\n/)
    .map((paragraph) => {
      const blocks: HelpBlock[] = [];
      for (const line of paragraph.split('\n')) {
        if (!line.trim()) continue;
        const row = /^\s/.test(line) ? ROW.exec(line) : null;
        if (row) {
          blocks.push({ kind: 'row', indent: row[1]!.length, term: row[2]!, column: row[1]!.length + row[2]!.length + row[3]!.length, text: row[4]!.trim() });
          continue;
        }
        const last = blocks.at(-1);
        if (/^\s/.test(line) || ITEM.test(line) || !last || last.kind === 'row') {
          blocks.push({ kind: ITEM.test(line) ? 'item' : 'prose', text: line.trim() });
        } else {
          last.text += ` ${line.trim()}`;
        }
      }
      return blocks;
    })
    .filter((blocks) => blocks.length > 0);
}

/**
 * The description laid out for a width, with `wrap(text, spacing)` (oclif's: wraps to the
 * terminal's width less `spacing`, which the caller's section indentation takes).
 */
export function layoutHelp(text: string, wrap: (text: string, spacing: number) => string, spacing: number): string {
  return helpParagraphs(text)
    .map((blocks) =>
      blocks
        .map((b) => {
          if (b.kind === 'prose') return wrap(b.text, spacing);
          if (b.kind === 'item') {
            const [first, ...rest] = wrap(b.text.slice(2), spacing + 2).split('\n');
            return [`${b.text.slice(0, 2)}${first}`, ...rest.map((l) => `  ${l}`)].join('\n');
          }
          const [first, ...rest] = wrap(b.text, spacing + b.column).split('\n');
          const head = `${' '.repeat(b.indent)}${b.term}`.padEnd(b.column);
          return [`${head}${first}`, ...rest.map((l) => `${' '.repeat(b.column)}${l}`)].join('\n');
        })
        .join('\n'),
    )
    .join('\n\n');
}
