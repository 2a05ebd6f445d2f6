import type { ManifestIssue } from '../manifest/issues.js';
import type { DefineValue } from '../manifest/types.js';
import { PHASES } from '../manifest/types.js';
import { checkBashValue, testEnvProblem } from '../model/bash-value.js';
import { issueAt, type ResolvedComponent } from '../model/resolve.js';
import { parseBash, type Node } from '../ebuild/bash-parser.js';
import { bashSyntaxAll, hasTool, type ToolFinding } from '../lint/external-tools.js';

type At = (string | number)[];

/**
 * Values that reach bash (CMake defines and their `usex` words, globals, test
 * environment and command, replacement text) may hold only literal text,
 * allowed ${VAR} and allowed $(helper …); the test environment may set only
 * variables a test harness reads.
 */
export function checkValues(c: ResolvedComponent): ManifestIssue[] {
  const issues: ManifestIssue[] = [];
  const bash = (v: unknown, at: At, fileText = false) => {
    if (typeof v !== 'string') return;
    // Text written into source files may hold `"` (escaped when rendered) and `\$` (a literal dollar sign).
    const problem = checkBashValue(v, fileText ? { quotesEscaped: true, dollarEscapes: true } : {});
    if (problem) issues.push(issueAt(c, at, problem.message, problem.hint));
  };
  const eachDefine = (defines: Record<string, DefineValue> | undefined, at: At) => {
    for (const [name, v] of Object.entries(defines ?? {})) {
      if (typeof v === 'object') {
        bash(v.on, [...at, name, 'on']);
        bash(v.off, [...at, name, 'off']);
      } else {
        bash(v, [...at, name]);
      }
    }
  };
  eachDefine(c.spec.cmake?.defines, ['cmake', 'defines']);
  (c.spec.cmake?.when ?? []).forEach((w, i) => {
    eachDefine(w.defines, ['cmake', 'when', i, 'defines']);
    eachDefine(w.otherwise, ['cmake', 'when', i, 'otherwise']);
  });
  for (const [k, v] of Object.entries(c.spec.globals ?? {})) bash(v, ['globals', k]);
  const env = (vars: Record<string, unknown> | undefined, at: At) => {
    for (const [k, v] of Object.entries(vars ?? {})) {
      const problem = testEnvProblem(k, String(v), [c.name, ...(c.spec.projects ?? [])]);
      if (problem) issues.push(issueAt(c, [...at, k], problem.message, problem.hint));
      else bash(v, [...at, k]);
    }
  };
  env(c.spec.tests?.env, ['tests', 'env']);
  // The smoke tier's environment reaches the same src_test (in a test container).
  env(c.spec.tests?.smoke?.env, ['tests', 'smoke', 'env']);
  const cmd = c.spec.tests?.command;
  if (cmd) {
    bash(cmd.dir, ['tests', 'command', 'dir']);
    cmd.argv.forEach((a, i) => bash(a, ['tests', 'command', 'argv', i]));
    env(cmd.env, ['tests', 'command', 'env']);
  }
  (c.spec.prepare ?? []).forEach((op, i) => {
    if ('replace' in op) bash(op.replace.to, ['prepare', i, 'replace', 'to'], true);
    if ('insert' in op) op.insert.lines.forEach((l, k) => bash(l, ['prepare', i, 'insert', 'lines', k], true));
  });
  return issues;
}

function firstError(node: Node): Node | undefined {
  if (node.isError || node.isMissing) return node;
  for (const child of node.children) {
    if (!child || (!child.hasError && !child.isMissing)) continue;
    const found = firstError(child);
    if (found) return found;
  }
  return node.hasError ? node : undefined;
}

/**
 * Phase code is written into a function body. Each piece must be complete
 * bash on its own: an unbalanced `}`, quote or here-document would end the
 * function early, and what follows would run when the ebuild is sourced.
 */
export async function checkPhaseCode(c: ResolvedComponent): Promise<ManifestIssue[]> {
  const issues: ManifestIssue[] = [];
  for (const piece of phasePieces(c)) {
    const problem = await incompleteBash(piece.text);
    if (problem) {
      issues.push(
        issueAt(
          c,
          piece.at,
          `phase code is not complete bash on its own: ${problem}`,
          'close every quote, bracket, brace and here-document inside this piece of code; it is placed inside a function',
        ),
      );
    }
  }
  return issues;
}

/** Parse results by text: the same phase code is checked in every release and every run. */
const parsed = new Map<string, string | undefined>();

async function incompleteBash(text: string): Promise<string | undefined> {
  if (parsed.has(text)) return parsed.get(text);
  const tree = await parseBash(text);
  let problem: string | undefined;
  try {
    if (tree.rootNode.hasError) {
      const bad = firstError(tree.rootNode);
      const line = (bad?.startPosition.row ?? 0) + 1;
      problem = `${bad?.isMissing ? `missing ${bad.type}` : 'a syntax error'} on its line ${line}`;
    }
  } finally {
    tree.delete();
  }
  if (parsed.size >= 4096) parsed.delete(parsed.keys().next().value!);
  parsed.set(text, problem);
  return problem;
}

export interface PhasePiece {
  c: ResolvedComponent;
  at: At;
  text: string;
}

/** Every piece of phase code of a resolved component, with where it was written. */
export function phasePieces(c: ResolvedComponent): PhasePiece[] {
  const pieces: PhasePiece[] = [];
  for (const phase of PHASES) {
    const code = c.spec.phases?.[phase];
    for (const part of ['before', 'after', 'replace'] as const) {
      const text = code?.[part];
      if (text !== undefined) pieces.push({ c, at: ['phases', phase, part], text });
    }
  }
  return pieces;
}

let bashPresent: boolean | undefined;
const syntaxMemo = new Map<string, Promise<ToolFinding[][]>>();

/**
 * Real `bash -n` over phase code: what tree-sitter accepts but bash does not
 * (extended globs without extglob, look-alike characters where syntax is
 * expected). All pieces go to one bash process; only when it complains is
 * each piece checked alone, to say which. Results are remembered per set of
 * pieces, since most runs check the same code again.
 */
export async function checkPhaseSyntax(pieces: PhasePiece[]): Promise<ManifestIssue[]> {
  bashPresent ??= hasTool('bash');
  if (!bashPresent || pieces.length === 0) return [];
  const texts = [...new Set(pieces.map((p) => p.text))];
  const key = texts.join('\u0000');
  let pending = syntaxMemo.get(key);
  if (!pending) {
    if (syntaxMemo.size >= 64) syntaxMemo.delete(syntaxMemo.keys().next().value!);
    pending = bashSyntaxAll(texts);
    syntaxMemo.set(key, pending);
  }
  const findings = await pending;
  const byText = new Map(texts.map((t, i) => [t, findings[i]!]));
  const issues: ManifestIssue[] = [];
  const seen = new Set<string>();
  for (const p of pieces) {
    const found = byText.get(p.text)!;
    if (found.length === 0) continue;
    const issue = issueAt(
      p.c,
      p.at,
      `phase code is not valid bash: ${found[0]!.message}${found[0]!.line !== undefined ? ` (its line ${found[0]!.line})` : ''}`,
      'fix the syntax; bash reads ebuilds without extglob, and only ASCII characters are shell syntax',
    );
    const k = `${issue.file}:${issue.path}`;
    if (seen.has(k)) continue;
    seen.add(k);
    issues.push(issue);
  }
  return issues;
}
