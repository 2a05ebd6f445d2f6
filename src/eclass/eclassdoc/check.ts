import { parseEclassDoc, type DocProblem, type EclassDoc } from './parse.js';
import { prefixOf, scanCode } from './code.js';

export interface EclassDocResult {
  doc: EclassDoc;
  /** Sorted by line; empty when the documentation is complete. */
  problems: DocProblem[];
}

/**
 * Parse the eclassdoc of an eclass and hold it against the code: every
 * function defined needs an @FUNCTION block, every variable assigned at file
 * scope and every variable of the eclass's prefix (ROCM_*, _ROCM_*) an
 * @ECLASS_VARIABLE block (the include guard excepted), and every @FUNCTION
 * block a function.
 */
export function checkEclassDoc(text: string, file: string): EclassDocResult {
  const problems: DocProblem[] = [];
  const doc = parseEclassDoc(text, file, problems);
  const facts = scanCode(text, prefixOf(doc.name || file.split('/').pop() || ''));

  const documentedFunctions = new Set(doc.functions.map((f) => f.name));
  const definedFunctions = new Set<string>();
  for (const fn of facts.functions) {
    if (definedFunctions.has(fn.name)) continue;
    definedFunctions.add(fn.name);
    if (!documentedFunctions.has(fn.name)) {
      problems.push({
        line: fn.line,
        column: fn.column,
        kind: 'undocumented-function',
        name: fn.name,
        message: `function ${fn.name} has no eclassdoc; add a "# @FUNCTION: ${fn.name}" block with @DESCRIPTION (and @INTERNAL if ebuilds must not call it) above it`,
      });
    }
  }
  for (const fn of doc.functions) {
    if (!definedFunctions.has(fn.name)) {
      problems.push({ line: fn.line, column: 1, kind: 'stale-doc', name: fn.name, message: `@FUNCTION ${fn.name} documents a function the eclass does not define; remove the block or fix the name` });
    }
  }

  const documentedVariables = new Set(doc.variables.filter((v) => v.scope === 'eclass').map((v) => v.name));
  const reported = new Set<string>();
  for (const v of [...facts.globals, ...facts.prefixed]) {
    if (v.name === facts.guard || documentedVariables.has(v.name) || reported.has(v.name)) continue;
    reported.add(v.name);
    problems.push({
      line: v.line,
      column: v.column,
      kind: 'undocumented-variable',
      name: v.name,
      message: `variable ${v.name} has no eclassdoc; add a "# @ECLASS_VARIABLE: ${v.name}" block with @DESCRIPTION (and @INTERNAL, @PRE_INHERIT, @OUTPUT_VARIABLE, ... as fits)`,
    });
  }
  problems.sort((a, b) => a.line - b.line || a.column - b.column);
  return { doc, problems };
}
