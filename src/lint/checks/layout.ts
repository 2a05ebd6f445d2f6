import type { Check } from '../types.js';

/** The EAPIs ::gentoo still accepts in new commits (pkgcheck: 0–6 are banned). */
const ACCEPTED_EAPIS = new Set(['7', '8']);

/** Header, EAPI and whitespace: what every ebuild in ::gentoo looks like. */
export const headerCheck: Check = {
  name: 'HeaderCheck',
  keywords: [
    { name: 'InvalidCopyright', level: 'error', description: 'first line is not "# Copyright 1999-<year> Gentoo Authors"' },
    { name: 'OldGentooCopyright', level: 'warning', description: 'the copyright year is not the current year' },
    { name: 'InvalidLicenseHeader', level: 'error', description: 'second line is not the GPL-2 notice' },
    { name: 'UnsupportedEapi', level: 'error', description: 'EAPI is not the first statement, or not one current Portage and ::gentoo accept (8 for the ROCm stack)' },
  ],
  run(f) {
    const out = [];
    const m = /^# Copyright 1999-(\d{4}) Gentoo Authors$/.exec(f.lines[0] ?? '');
    if (!m) out.push({ keyword: 'InvalidCopyright', message: `line 1: ${JSON.stringify(f.lines[0] ?? '')}`, line: 1 });
    else if (Number(m[1]) !== f.input.year) {
      out.push({ keyword: 'OldGentooCopyright', message: `copyright ends in ${m[1]}, expected ${f.input.year}`, line: 1 });
    }
    if (f.lines[1] !== '# Distributed under the terms of the GNU General Public License v2') {
      out.push({ keyword: 'InvalidLicenseHeader', message: 'line 2 must be the GPL-2 notice', line: 2 });
    }
    const first = f.globals[0];
    const eapi = f.globalMap.get('EAPI');
    if (f.input.rocm) {
      if (!first || first.name !== 'EAPI' || first.value !== '8') {
        out.push({ keyword: 'UnsupportedEapi', message: 'EAPI=8 must be the first assignment (the ROCm stack\'s ebuilds are EAPI 8)', line: first?.line ?? 1 });
      }
    } else if (!eapi) {
      out.push({ keyword: 'UnsupportedEapi', message: 'EAPI is not set: set it first (EAPI=8)', line: 1 });
    } else if (first !== eapi) {
      out.push({ keyword: 'UnsupportedEapi', message: `EAPI must be the first assignment, not after ${first!.name}`, line: eapi.line });
    } else if (!ACCEPTED_EAPIS.has(eapi.value)) {
      out.push({ keyword: 'UnsupportedEapi', message: `EAPI=${eapi.value} is banned in ::gentoo; use 8 (7 is still accepted)`, line: eapi.line });
    }
    return out;
  },
};

export const whitespaceCheck: Check = {
  name: 'WhitespaceCheck',
  keywords: [
    { name: 'WhitespaceFound', level: 'style', description: 'trailing whitespace' },
    { name: 'WrongIndentFound', level: 'style', description: 'indented with spaces instead of tabs' },
    { name: 'DoubleEmptyLine', level: 'style', description: 'two empty lines in a row' },
    { name: 'TrailingEmptyLine', level: 'style', description: 'empty line at the end of the file' },
    { name: 'NoFinalNewline', level: 'style', description: 'the file does not end with a newline' },
  ],
  run(f) {
    const out = [];
    const lines = f.lines;
    for (const [i, l] of lines.entries()) {
      if (/[ \t]+$/.test(l)) out.push({ keyword: 'WhitespaceFound', message: `line ${i + 1} has trailing whitespace`, line: i + 1 });
      if (/^ +\S/.test(l)) out.push({ keyword: 'WrongIndentFound', message: `line ${i + 1} is indented with spaces`, line: i + 1 });
      if (i > 0 && l === '' && lines[i - 1] === '' && i < lines.length - 1) {
        out.push({ keyword: 'DoubleEmptyLine', message: `line ${i + 1}: second empty line in a row`, line: i + 1 });
      }
    }
    if (!f.input.text.endsWith('\n')) out.push({ keyword: 'NoFinalNewline', message: 'no newline at the end of the file' });
    else if (f.input.text.endsWith('\n\n')) out.push({ keyword: 'TrailingEmptyLine', message: 'empty line at the end of the file' });
    return out;
  },
};

export const syntaxCheck: Check = {
  name: 'SyntaxCheck',
  keywords: [{ name: 'ParseError', level: 'error', description: 'the ebuild is not valid bash' }],
  run(f) {
    if (!f.tree.rootNode.hasError) return [];
    let line = 1;
    const stack = [f.tree.rootNode];
    while (stack.length) {
      const n = stack.pop()!;
      if (n.type === 'ERROR' || n.isMissing) {
        line = n.startPosition.row + 1;
        break;
      }
      for (const c of n.children) if (c && c.hasError) stack.push(c);
    }
    return [{ keyword: 'ParseError', message: `bash syntax error near line ${line}`, line }];
  },
};

/** pkgcheck's limits: a line over 120 characters, unless a word of it or a quoted string exceeds 110. */
const LINE_LENGTH = 120;
const WORD_LENGTH = 110;

export const lineLengthCheck: Check = {
  name: 'LineLengthCheck',
  keywords: [{ name: 'ExcessiveLineLength', level: 'style', description: `a line is longer than ${LINE_LENGTH} characters` }],
  run(f) {
    const longString = new RegExp(`"[^'"]{${WORD_LENGTH},}"|'[^'"]{${WORD_LENGTH},}'`);
    const lines: number[] = [];
    f.lines.forEach((line, i) => {
      if (line.length <= LINE_LENGTH) return;
      // As pkgcheck: these variables may be long, and so may a line that is one long word or string.
      if (/^\s*(?:DESCRIPTION|KEYWORDS|IUSE)=/.test(line)) return;
      if (Math.max(...line.split(/\s+/).map((w) => w.length)) > WORD_LENGTH) return;
      if (longString.test(line)) return;
      lines.push(i + 1);
    });
    if (lines.length === 0) return [];
    return [{ keyword: 'ExcessiveLineLength', message: `excessive line length (over ${LINE_LENGTH} characters) on line${lines.length > 1 ? 's' : ''} ${lines.join(', ')}`, line: lines[0]! }];
  },
};
