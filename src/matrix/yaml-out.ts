import { Document, isScalar, visit } from 'yaml';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';
import { printable } from '../util/printable.js';

/**
 * The one way generated CI definitions become text. Every value is a scalar
 * of the YAML library, comments included: nothing is spliced into the text,
 * so no value can close a quote, start a line or add a document. Scalars are
 * checked before they are emitted: the library writes a NEL (U+0085) or a
 * line separator (U+2028) as it is, and YAML 1.1 parsers (GitLab's,
 * kubectl's) read either as a line break; GitHub evaluates `${{ … }}`
 * anywhere in a workflow, so only the expressions the emitter itself writes
 * may appear. Comment lines pass through the terminal-safe printer, which
 * turns every line-breaking character into a visible escape.
 */

export interface YamlDocumentSpec {
  value: unknown;
  /** Comment lines above the document (without "#"). */
  comment?: string[];
  /** Trailing comments on scalars, by the scalar's value (the tags of pinned actions). */
  scalarComments?: Record<string, string>;
}

export interface EmitOptions {
  /** `${{ … }}` expressions the emitter put there on purpose; any other is refused. */
  expressions?: readonly string[];
  /** Start every document with `---` (a stream of several). */
  documentMarkers?: boolean;
}

/** Characters a YAML parser (1.1 or 1.2) or a terminal acts on: only the newline of a block scalar is allowed. */
const UNSAFE = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

export class CiValueError extends UserError {
  constructor(where: string, value: string, why: string) {
    super(`refusing to write ${printable(JSON.stringify(value.length > 120 ? `${value.slice(0, 117)}…` : value))} at ${where}: ${why}`, ExitCode.invalidInput);
    this.name = 'CiValueError';
  }
}

function checkScalar(value: string, where: string, expressions: readonly string[]): void {
  if (UNSAFE.test(value)) throw new CiValueError(where, value, 'it holds a control, line-breaking or bidirectional character');
  let rest = value;
  for (const e of expressions) rest = rest.split(e).join('');
  if (rest.includes('${{')) throw new CiValueError(where, value, 'GitHub would evaluate the ${{ }} expression in it');
}

function checkTree(value: unknown, where: string, expressions: readonly string[]): void {
  if (typeof value === 'string') checkScalar(value, where, expressions);
  else if (Array.isArray(value)) value.forEach((v, i) => checkTree(v, `${where}[${i}]`, expressions));
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      checkScalar(k, `${where}.${k}`, expressions);
      checkTree(v, `${where}.${k}`, expressions);
    }
  }
}

/** One or more documents as YAML text. */
export function emitYaml(docs: YamlDocumentSpec[], options: EmitOptions = {}): string {
  const expressions = options.expressions ?? [];
  return docs
    .map((spec, i) => {
      checkTree(spec.value, docs.length > 1 ? `document ${i + 1}` : '$', expressions);
      // A fresh node per occurrence: YAML would turn a shared object into anchors and aliases.
      const doc = new Document(spec.value, { aliasDuplicateObjects: false });
      if (spec.comment?.length) doc.commentBefore = spec.comment.map((l) => (l === '' ? '' : ` ${printable(l, { oneLine: true })}`)).join('\n');
      const notes = spec.scalarComments ?? {};
      visit(doc, {
        Scalar(_, node) {
          if (isScalar(node) && typeof node.value === 'string' && notes[node.value]) node.comment = ` ${printable(notes[node.value]!, { oneLine: true })}`;
        },
      });
      if (options.documentMarkers) doc.directives!.docStart = true;
      return doc.toString({ lineWidth: 0 });
    })
    .join('');
}
