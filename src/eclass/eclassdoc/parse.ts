/**
 * A reader for eclassdoc, the comment format of Gentoo eclasses (the format
 * app-portage/eclass-manpages and pkgcheck read): blocks of "# @TAG" comment
 * lines before the code they describe. Blocks end at the first line that is
 * not a comment; "@CODE" lines toggle verbatim text.
 */

/** Running text: paragraphs (blank comment lines separate them) and @CODE blocks. */
export type DocText = { kind: 'para' | 'code'; lines: string[] }[];

export interface VariableDoc {
  name: string;
  line: number;
  /** @ECLASS_VARIABLE (or @VARIABLE inside a function's documentation). */
  scope: 'eclass' | 'function';
  internal: boolean;
  required: boolean;
  preInherit: boolean;
  outputVariable: boolean;
  defaultUnset: boolean;
  userVariable: boolean;
  deprecated?: string;
  description: DocText;
  /** The assignment right after the block, if any ("_ROCM_LIVE_POLICY=7.0"). */
  default?: string;
}

export interface FunctionDoc {
  name: string;
  line: number;
  usage?: string;
  returns?: string;
  internal: boolean;
  deprecated?: string;
  maintainers: string[];
  description: DocText;
}

export interface EclassDoc {
  file: string;
  /** The @ECLASS name, e.g. "rocm.eclass". */
  name: string;
  line: number;
  maintainers: string[];
  authors: string[];
  bugreports: string[];
  vcsurl?: string;
  supportedEapis: string[];
  provides: string[];
  blurb: string;
  deprecated?: string;
  description: DocText;
  example: DocText;
  variables: VariableDoc[];
  functions: FunctionDoc[];
  /** Last year of the "# Copyright" line, if any. */
  copyrightYear?: number;
}

export interface DocProblem {
  line: number;
  column: number;
  kind: 'doc-error' | 'undocumented-function' | 'undocumented-variable' | 'stale-doc';
  /** The function or variable concerned, if any. */
  name?: string;
  message: string;
}

const FLAG_TAGS = new Set(['INTERNAL', 'REQUIRED', 'PRE_INHERIT', 'OUTPUT_VARIABLE', 'DEFAULT_UNSET', 'USER_VARIABLE']);
const HEADER_TAGS = new Set(['ECLASS', 'MAINTAINER', 'AUTHOR', 'BUGREPORTS', 'VCSURL', 'SUPPORTED_EAPIS', 'PROVIDES', 'BLURB', 'DEPRECATED', 'DESCRIPTION', 'EXAMPLE']);
const VARIABLE_TAGS = new Set([...FLAG_TAGS, 'DEPRECATED', 'DESCRIPTION']);
const FUNCTION_TAGS = new Set(['USAGE', 'RETURN', 'MAINTAINER', 'INTERNAL', 'DEPRECATED', 'DESCRIPTION']);
/**
 * The order in which eclass-to-manpage.awk (app-doc/eclass-manpages) reads the
 * tags of each kind of block; flags of a variable (one rank) in any order.
 */
const VARIABLE_ORDER = ['(flags)', 'DEPRECATED', 'DESCRIPTION'];
const TAG_ORDER: Record<string, string[]> = {
  ECLASS: ['MAINTAINER', 'AUTHOR', 'BUGREPORTS', 'VCSURL', 'SUPPORTED_EAPIS', 'PROVIDES', 'BLURB', 'DEPRECATED', 'DESCRIPTION', 'EXAMPLE'],
  FUNCTION: ['USAGE', 'RETURN', 'MAINTAINER', 'INTERNAL', 'DEPRECATED', 'DESCRIPTION'],
  ECLASS_VARIABLE: VARIABLE_ORDER,
  VARIABLE: VARIABLE_ORDER,
};

/** A tag's place in its block's order; a variable's flags share one. */
function tagRank(block: string, tag: string): number {
  const order = TAG_ORDER[block]!;
  return order === VARIABLE_ORDER && FLAG_TAGS.has(tag) ? 0 : order.indexOf(tag);
}

/** Tags whose text continues on the following lines. */
const MULTILINE = new Set(['MAINTAINER', 'AUTHOR', 'BUGREPORTS', 'DESCRIPTION', 'EXAMPLE']);

interface RawTag {
  tag: string;
  value: string;
  line: number;
  /** Following lines up to the next tag, "# " stripped. */
  body: string[];
}

interface RawBlock {
  line: number;
  tags: RawTag[];
  /** The first line after the block, and its number. */
  next?: { text: string; line: number };
}

const TAG_RE = /^#\s?@([A-Z_-]+)(?::\s?(.*))?$/;

/** Strip the comment marker: "# text" -> "text", "#" -> "". */
function uncomment(line: string): string {
  if (line === '#') return '';
  return line.startsWith('# ') ? line.slice(2) : line.slice(1);
}

function readBlocks(lines: string[], problems: DocProblem[]): RawBlock[] {
  const blocks: RawBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = TAG_RE.exec(lines[i]!);
    if (!m || !['ECLASS', 'ECLASS_VARIABLE', 'ECLASS-VARIABLE', 'FUNCTION', 'VARIABLE'].includes(m[1]!)) continue;
    const block: RawBlock = { line: i + 1, tags: [] };
    let inCode = false;
    let j = i;
    for (; j < lines.length && lines[j]!.startsWith('#'); j++) {
      const line = lines[j]!;
      const text = uncomment(line);
      if (/^#\s?@CODE\s*$/.test(line)) {
        inCode = !inCode;
        const current = block.tags[block.tags.length - 1];
        if (current) current.body.push('@CODE');
        continue;
      }
      const tag = inCode ? null : TAG_RE.exec(line);
      if (tag) {
        block.tags.push({ tag: tag[1]!.replace('ECLASS-VARIABLE', 'ECLASS_VARIABLE'), value: (tag[2] ?? '').trim(), line: j + 1, body: [] });
      } else {
        const current = block.tags[block.tags.length - 1]!;
        current.body.push(text);
      }
    }
    if (inCode) {
      problems.push({ line: block.line, column: 1, kind: 'doc-error', message: 'unterminated @CODE block' });
    }
    if (j < lines.length) block.next = { text: lines[j]!, line: j + 1 };
    blocks.push(block);
    i = j - 1;
  }
  return blocks;
}

/** Split tag body lines into paragraphs and code blocks. */
function toText(body: string[]): DocText {
  const out: DocText = [];
  let para: string[] = [];
  let code: string[] | null = null;
  const flush = () => {
    if (para.length > 0) out.push({ kind: 'para', lines: para });
    para = [];
  };
  for (const line of body) {
    if (line === '@CODE') {
      if (code) {
        out.push({ kind: 'code', lines: code });
        code = null;
      } else {
        flush();
        code = [];
      }
    } else if (code) {
      code.push(line);
    } else if (line.trim() === '') {
      flush();
    } else {
      para.push(line);
    }
  }
  flush();
  if (code) out.push({ kind: 'code', lines: code });
  return out;
}

function bodyLines(tag: RawTag): string[] {
  return [tag.value, ...tag.body].filter((l) => l.trim() !== '' && l !== '@CODE').map((l) => l.trim());
}

function textOf(tag: RawTag | undefined): DocText {
  if (!tag) return [];
  return toText(tag.value ? [tag.value, ...tag.body] : tag.body);
}

/** Reports a problem in the documentation: its line, what is wrong, and the function or variable concerned. */
type DocError = (line: number, message: string, name?: string) => void;

function findTag(block: RawBlock, tag: string): RawTag | undefined {
  return block.tags.find((t) => t.tag === tag);
}

/** Parse the eclassdoc of `text`. Problems in the documentation itself go to `problems`. */
export function parseEclassDoc(text: string, file: string, problems: DocProblem[] = []): EclassDoc {
  const lines = text.split('\n');
  const blocks = readBlocks(lines, problems);
  const err: DocError = (line, message, name) =>
    problems.push({ line, column: 1, kind: 'doc-error', message, ...(name ? { name } : {}) });

  const doc: EclassDoc = {
    file,
    name: '',
    line: 0,
    maintainers: [],
    authors: [],
    bugreports: [],
    supportedEapis: [],
    provides: [],
    blurb: '',
    description: [],
    example: [],
    variables: [],
    functions: [],
  };
  const year = /^# Copyright (?:\d{4}-)?(\d{4}) /.exec(lines[0] ?? '');
  if (year) doc.copyrightYear = Number(year[1]);

  let currentFunction: FunctionDoc | undefined;
  for (const block of blocks) {
    const head = block.tags[0]!;
    if (head.tag === 'ECLASS') {
      if (doc.name) {
        err(head.line, 'a second @ECLASS block');
        continue;
      }
      readHeader(block, doc, err);
    } else if (head.tag === 'FUNCTION') {
      currentFunction = functionDoc(block, doc, err);
      doc.functions.push(currentFunction);
    } else {
      doc.variables.push(variableDoc(block, doc, currentFunction, err));
    }
  }
  if (!doc.name) err(1, 'no @ECLASS block: start the file with "# @ECLASS: <name>.eclass"');
  return doc;
}

/** The tags of a block after its first: allowed there, each once, flags without a value, in eclass-to-manpage's order. */
function checkTags(block: RawBlock, allowed: Set<string>, what: string, err: DocError): void {
  const seen = new Set<string>();
  const kind = block.tags[0]!.tag;
  const order = TAG_ORDER[kind]!;
  let last = -1;
  let lastTag = block.tags[0]!.tag;
  for (const t of block.tags.slice(1)) {
    if (!allowed.has(t.tag)) err(t.line, `@${t.tag} is not allowed in ${what}`);
    else if (seen.has(t.tag)) err(t.line, `@${t.tag} is given twice in ${what}`);
    seen.add(t.tag);
    if (FLAG_TAGS.has(t.tag) && (t.value || t.body.some((l) => l.trim()))) err(t.line, `@${t.tag} takes no value`);
    // eclass-to-manpage.awk reads the tags of a block in one fixed order and
    // stops at the first one out of it: what follows is lost from the manual.
    const rank = tagRank(kind, t.tag);
    if (rank >= 0 && rank < last) {
      const names = order.map((o) => (o === '(flags)' ? 'its flags' : `@${o}`)).join(', ');
      err(t.line, `@${t.tag} must come before @${lastTag} in ${what}: eclass-to-manpage reads ${names} in this order and loses what comes out of it`);
    }
    if (rank > last) {
      last = rank;
      lastTag = t.tag;
    }
  }
}

/** The @ECLASS block into `doc`: name, maintainers, EAPIs, blurb, description; the tags it must have. */
function readHeader(block: RawBlock, doc: EclassDoc, err: DocError): void {
  const head = block.tags[0]!;
  const find = (tag: string) => findTag(block, tag);
  checkTags(block, HEADER_TAGS, 'the @ECLASS block', err);
  doc.name = head.value;
  doc.line = head.line;
  doc.maintainers = find('MAINTAINER') ? bodyLines(find('MAINTAINER')!) : [];
  doc.authors = find('AUTHOR') ? bodyLines(find('AUTHOR')!) : [];
  doc.bugreports = find('BUGREPORTS') ? bodyLines(find('BUGREPORTS')!) : [];
  const vcs = find('VCSURL')?.value;
  if (vcs) doc.vcsurl = vcs;
  doc.supportedEapis = (find('SUPPORTED_EAPIS')?.value ?? '').split(/\s+/).filter(Boolean);
  doc.provides = (find('PROVIDES')?.value ?? '').split(/\s+/).filter(Boolean);
  doc.blurb = find('BLURB')?.value ?? '';
  const deprecated = find('DEPRECATED');
  if (deprecated) doc.deprecated = deprecated.value || 'none';
  doc.description = textOf(find('DESCRIPTION'));
  doc.example = textOf(find('EXAMPLE'));
  for (const [tag, ok] of [
    ['MAINTAINER', doc.maintainers.length > 0],
    ['BLURB', doc.blurb !== ''],
    ['SUPPORTED_EAPIS', doc.supportedEapis.length > 0],
    ['DESCRIPTION', doc.description.length > 0],
  ] as const) {
    if (!ok) err(head.line, `the @ECLASS block lacks @${tag}`);
  }
  const base = doc.file.split('/').pop() ?? '';
  if (base.endsWith('.eclass') && doc.name !== base) err(head.line, `@ECLASS names ${doc.name || 'nothing'}, but the file is ${base}`);
  for (const t of block.tags) {
    if (!MULTILINE.has(t.tag) && t.body.some((l) => l.trim())) err(t.line, `@${t.tag} takes a one-line value`);
  }
}

/** A @FUNCTION block; `doc` is read for the functions documented before it. */
function functionDoc(block: RawBlock, doc: EclassDoc, err: DocError): FunctionDoc {
  const head = block.tags[0]!;
  const find = (tag: string) => findTag(block, tag);
  checkTags(block, FUNCTION_TAGS, `the documentation of ${head.value}`, err);
  const fn: FunctionDoc = {
    name: head.value,
    line: head.line,
    internal: Boolean(find('INTERNAL')),
    maintainers: find('MAINTAINER') ? bodyLines(find('MAINTAINER')!) : [],
    description: textOf(find('DESCRIPTION')),
  };
  const usage = find('USAGE');
  if (usage) fn.usage = usage.value;
  const ret = find('RETURN');
  if (ret) fn.returns = [ret.value, ...ret.body].filter((l) => l.trim()).join(' ');
  const deprecated = find('DEPRECATED');
  if (deprecated) fn.deprecated = deprecated.value || 'none';
  if (!head.value) err(head.line, '@FUNCTION without a name');
  if (fn.description.length === 0) err(head.line, `${fn.name}: @DESCRIPTION is missing or empty`, fn.name);
  if (doc.functions.some((f) => f.name === fn.name)) err(head.line, `${fn.name} is documented twice`, fn.name);
  return fn;
}

/**
 * An @ECLASS_VARIABLE block, or a @VARIABLE block of the function documented before it;
 * its default is read from the assignment right after the block.
 */
function variableDoc(block: RawBlock, doc: EclassDoc, currentFunction: FunctionDoc | undefined, err: DocError): VariableDoc {
  const head = block.tags[0]!;
  const find = (tag: string) => findTag(block, tag);
  const scope = head.tag === 'VARIABLE' ? 'function' : 'eclass';
  checkTags(block, VARIABLE_TAGS, `the documentation of ${head.value}`, err);
  const v: VariableDoc = {
    name: head.value,
    line: head.line,
    scope,
    internal: Boolean(find('INTERNAL')),
    required: Boolean(find('REQUIRED')),
    preInherit: Boolean(find('PRE_INHERIT')),
    outputVariable: Boolean(find('OUTPUT_VARIABLE')),
    defaultUnset: Boolean(find('DEFAULT_UNSET')),
    userVariable: Boolean(find('USER_VARIABLE')),
    description: textOf(find('DESCRIPTION')),
  };
  const deprecated = find('DEPRECATED');
  if (deprecated) v.deprecated = deprecated.value || 'none';
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(v.name)) err(head.line, `@${head.tag}: "${v.name}" is not a variable name`);
  if (v.description.length === 0) err(head.line, `${v.name}: @DESCRIPTION is missing or empty`, v.name);
  if (scope === 'function' && !currentFunction) err(head.line, `@VARIABLE ${v.name} is not inside a function's documentation`);
  if (v.required && v.defaultUnset) err(head.line, `${v.name} cannot be both @REQUIRED and @DEFAULT_UNSET`, v.name);
  if ([v.internal, v.preInherit, v.userVariable, v.outputVariable].filter(Boolean).length > 1) {
    err(head.line, `${v.name}: only one of @INTERNAL, @PRE_INHERIT, @USER_VARIABLE and @OUTPUT_VARIABLE (eclass-to-manpage fails on more)`, v.name);
  }
  if (doc.variables.some((x) => x.name === v.name && x.scope === scope)) err(head.line, `${v.name} is documented twice`, v.name);
  const next = block.next?.text;
  const assign = next ? new RegExp(`^(?:export\\s+|readonly\\s+)?${v.name}\\+?=(.*)$`).exec(next) : null;
  if (assign) v.default = assign[1]!;
  return v;
}
