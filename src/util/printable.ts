/**
 * Strings read from outside — commit messages, file names, build files of
 * repositories nobody here wrote, test reports, device tables — shown to a
 * terminal or written into Markdown that GitHub renders. Each shows as the
 * characters it holds: nothing in it can recolour or rewrite the terminal,
 * reverse the text around it, start a line of its own, notify someone or
 * change the markup around it.
 */

/**
 * What a terminal or a renderer acts on instead of showing: C0 and C1
 * controls (ESC starts sequences, NEL ends a line), the Unicode line and
 * paragraph separators, and the bidirectional controls that make text read
 * in another order than it is stored ("Trojan Source").
 */
const ACTIVE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const ACTIVE_OR_LINE = /[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const escapeChar = (c: string): string => {
  const n = c.charCodeAt(0);
  return n <= 0xff ? `\\x${n.toString(16).padStart(2, '0')}` : `\\u${n.toString(16).padStart(4, '0')}`;
};

/**
 * Text a terminal shows as written: every character it would act on becomes
 * a visible escape (\x1b, \u202e). Newlines and tabs stay unless `oneLine`,
 * which escapes newlines too, for values printed inside a line of ours.
 */
export function printable(text: string, options: { oneLine?: boolean } = {}): string {
  return text.replace(options.oneLine ? ACTIVE_OR_LINE : ACTIVE, escapeChar);
}

/** Whether `printable` would change the text: it holds a character a terminal acts on. */
export function hasActiveCharacters(text: string): boolean {
  ACTIVE.lastIndex = 0;
  return ACTIVE.test(text);
}

/** What JSON.stringify leaves as it is and a terminal acts on: every active character but the C0 controls, which it escapes. */
const ACTIVE_IN_JSON = /[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * A value as JSON text that a terminal shows as written: JSON.stringify's,
 * with the characters it leaves raw (DEL, C1 controls, line separators,
 * bidirectional controls) written as \uXXXX escapes, which every JSON parser
 * reads back as the same characters.
 */
export function terminalSafeJson(value: unknown, indent = 2): string {
  return JSON.stringify(value, null, indent).replace(ACTIVE_IN_JSON, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * Inline Markdown that GitHub shows as the text it came from: controls and
 * bidirectional overrides become U+FFFD, HTML is escaped, emphasis, code,
 * link and table syntax are escaped, newlines become spaces, and an
 * @mention is put in a code span, where GitHub neither links nor notifies.
 */
export function markdownText(text: string): string {
  return text
    .replace(/\r\n?|\n/g, ' ')
    .replace(ACTIVE, '\uFFFD')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/([\\`*_[\]|~])/g, '\\$1')
    .replace(/(^|[^A-Za-z0-9_\\])@([A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\/[A-Za-z0-9_.-]+)?)/g, '$1`@$2`');
}

/** A code span when the text allows one (no backtick, newline or active character), else escaped text. */
export function markdownCode(text: string): string {
  ACTIVE_OR_LINE.lastIndex = 0;
  return /`/.test(text) || ACTIVE_OR_LINE.test(text) ? markdownText(text) : `\`${text}\``;
}

/** One line for a place that shows it verbatim (a pull request's title): every active character, newlines included, becomes U+FFFD. */
export function plainLine(text: string): string {
  return text.replace(ACTIVE_OR_LINE, '\uFFFD');
}
