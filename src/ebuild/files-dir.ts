import { expandWord, Unevaluable, type EbuildIdentity } from './src-uri.js';
import type { EbuildVars } from './vars.js';

/**
 * The files under a package's files/ that an ebuild uses, read from its text:
 * every word naming ${FILESDIR}, expanded with the ebuild's globals and
 * Portage's variables. `all` when some use cannot be pinned to a name (a
 * glob, a brace list, the whole directory, a variable only a phase sets):
 * then no file of the package can be called unused.
 */
export type FilesUse = { kind: 'files'; files: Set<string> } | { kind: 'all'; why: string };

const PLACEHOLDER = '\u0000FILESDIR\u0000';

export function filesUsed(text: string, vars: EbuildVars, ebuild: EbuildIdentity): FilesUse {
  const files = new Set<string>();
  for (const word of shellWords(text)) {
    if (!word.includes('FILESDIR')) continue;
    const value = word.replace(/^[A-Za-z_][A-Za-z0-9_]*\+?=\(?/, '');
    // Brace expansion ({a,b}) and globs name several files bash alone can list.
    if (/(^|[^$])\{[^}]*,/.test(value)) return { kind: 'all', why: `a brace list: ${word}` };
    let expanded: string;
    try {
      expanded = expandWord(vars, ebuild, value, new Map([['FILESDIR', PLACEHOLDER]]));
    } catch (err) {
      if (err instanceof Unevaluable) return { kind: 'all', why: `${word}: ${err.message}` };
      throw err;
    }
    const at = expanded.indexOf(PLACEHOLDER);
    if (at < 0) continue;
    const rest = expanded.slice(at + PLACEHOLDER.length).replace(/^\/+/, '');
    if (rest === '' || /[*?[]/.test(rest)) return { kind: 'all', why: `the directory or a pattern: ${word}` };
    files.add(rest.replace(/\/+$/, ''));
  }
  return { kind: 'files', files };
}

/** Whether `file` (a path under files/) is one of `use`'s, or inside a directory it names. */
export function isUsed(file: string, use: FilesUse): boolean {
  if (use.kind === 'all') return true;
  for (const f of use.files) if (file === f || file.startsWith(`${f}/`)) return true;
  return false;
}

/**
 * The text's shell words, split at unquoted blanks and operators, quotes
 * kept (expansion removes them). Comments are skipped. Good enough to find
 * the words that mention FILESDIR; not a shell parser.
 */
function shellWords(text: string): string[] {
  const words: string[] = [];
  let word = '';
  let quote: '"' | "'" | undefined;
  let depth = 0; // inside ${…} or $(…), where blanks do not end the word
  const flush = () => {
    if (word) words.push(word);
    word = '';
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote === "'") {
      word += c;
      if (c === "'") quote = undefined;
      continue;
    }
    if (c === '\\') {
      word += c + (text[i + 1] ?? '');
      i++;
      continue;
    }
    if (quote === '"') {
      word += c;
      if (c === '"' && depth === 0) quote = undefined;
      else if (c === '$' && (text[i + 1] === '{' || text[i + 1] === '(')) {
        word += text[++i];
        depth++;
      } else if ((c === '}' || c === ')') && depth > 0) depth--;
      continue;
    }
    if (c === '$' && (text[i + 1] === '{' || text[i + 1] === '(')) {
      word += c + text[++i];
      depth++;
      continue;
    }
    if ((c === '}' || c === ')') && depth > 0) {
      word += c;
      depth--;
      continue;
    }
    if (depth > 0) {
      word += c;
      continue;
    }
    if (c === '"' || c === "'") {
      quote = c;
      word += c;
    } else if (c === '#' && word === '') {
      while (i < text.length && text[i] !== '\n') i++;
      flush();
    } else if (/[\s;|&<>()]/.test(c)) {
      flush();
    } else word += c;
  }
  flush();
  return words;
}
