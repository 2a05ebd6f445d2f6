import { execFile } from 'node:child_process';
import type { DocProblem, EclassDoc } from './parse.js';

/**
 * Metadata variables an eclass may set without documenting them: pkgcore's
 * eclass_keys of EAPI 8 (the mandatory metadata, the dependency classes and
 * the few others eclasses are allowed to define).
 */
const ECLASS_KEYS = new Set([
  'DESCRIPTION', 'HOMEPAGE', 'IUSE', 'KEYWORDS', 'LICENSE', 'SLOT', 'SRC_URI',
  'DEPEND', 'RDEPEND', 'PDEPEND', 'BDEPEND', 'IDEPEND',
  'S', 'RESTRICT', 'PROPERTIES', 'ECONF_SOURCE', 'EPREFIX', 'ED', 'EROOT', 'DOCS', 'REQUIRED_USE', 'HTML_DOCS', 'PATCHES',
]);

function variablesOf(script: string, args: string[] = []): Promise<string[]> {
  return new Promise((resolve, reject) => {
    // An empty environment, as pkgcheck sources eclasses: no Portage helpers,
    // so `die` and `inherit` fail and the code has to carry on regardless.
    execFile('env', ['-i', 'bash', '-c', script, 'bash', ...args], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 }, (err, stdout) => {
      if (err && typeof (err as NodeJS.ErrnoException).code === 'string') reject(err);
      else resolve(stdout.split('\n').filter(Boolean));
    });
  });
}

/**
 * pkgcheck's EclassDocMissingVar: source the eclass in a bare bash, as
 * pkgcheck does, and report every global variable it leaves behind that is
 * neither bash's own, private (a leading underscore), a metadata variable
 * nor documented. BASH_REMATCH from a `[[ =~ ]]` run while sourcing, or
 * FUNCNAME left over when a function aborts on an error, count too.
 */
export async function sourcedVariableProblems(file: string, text: string, doc: EclassDoc): Promise<DocProblem[]> {
  const [base, sourced] = await Promise.all([
    // A no-op first, as pkgcheck: pipeline variables exist afterwards.
    variablesOf(':; compgen -A variable'),
    variablesOf('source "$1" >/dev/null 2>&1; compgen -A variable', [file]),
  ]);
  const bash = new Set(base);
  const documented = new Set(doc.variables.map((v) => v.name));
  const lines = text.split('\n');
  const problems: DocProblem[] = [];
  for (const name of [...new Set(sourced)].sort()) {
    if (bash.has(name) || name.startsWith('_') || ECLASS_KEYS.has(name) || documented.has(name)) continue;
    const re = new RegExp(`(?<![\\w])${name}(?![\\w])`);
    const index = lines.findIndex((l) => !l.trimStart().startsWith('#') && re.test(l));
    problems.push({
      line: index + 1 || 1,
      column: index >= 0 ? lines[index]!.search(re) + 1 : 1,
      kind: 'undocumented-variable',
      name,
      message: `sourcing the eclass leaves ${name} set, undocumented (pkgcheck EclassDocMissingVar): make it local or unset it, give it a leading underscore, or document it`,
    });
  }
  return problems;
}
