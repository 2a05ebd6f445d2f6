/**
 * Values from the manifest end up inside ebuilds, which run as root on users'
 * machines. A value may only reference the ebuild variables and call the
 * helpers listed here, and is always rendered inside double quotes, so it can
 * neither break out of its quoting nor run anything unexpected.
 */

/** Variables Portage, llvm-r2, python-r1 and cmake.eclass define for ebuilds. */
export const ALLOWED_VARIABLES = new Set([
  'BROOT',
  'BUILD_DIR',
  'CBUILD',
  'CHOST',
  'D',
  'ED',
  'EPREFIX',
  'EPYTHON',
  'EROOT',
  'ESYSROOT',
  'FILESDIR',
  'LLVM_SLOT',
  'P',
  'PF',
  'PN',
  'PV',
  'PYTHON',
  'S',
  'SLOT',
  'SYSROOT',
  'T',
  'WORKDIR',
]);

/** Helpers a value may call in $( … ), with the eclass that provides each. */
export const ALLOWED_HELPERS: Readonly<Record<string, string | null>> = {
  ffmpeg_compat_get_prefix: 'ffmpeg-compat',
  get_amdgpu_flags: 'rocm',
  get_libdir: null,
  get_llvm_prefix: 'llvm-r2',
  makeopts_jobs: 'multiprocessing',
  python_get_sitedir: 'python-utils-r1',
  usex: null,
  ver_cut: null,
};

const LITERAL = /^[^"`\\'\n$]$/;
const SAFE_UNQUOTED = /^[A-Za-z0-9_.,/:+=@%-]+$/;
const HELPER_ARG = /^[A-Za-z0-9_.,:=+/@-]+$/;

export interface BashValueProblem {
  message: string;
  hint: string;
}

export interface BashValueOptions {
  /** The renderer escapes double quotes (sed replacements), so they may appear as literal text. */
  quotesEscaped?: boolean;
  /**
   * `\$` is a literal dollar sign, as in bash between double quotes: text
   * written into source files (a replacement, inserted lines) may need
   * CMake's `${CMAKE_INSTALL_PREFIX}` as it stands, written `\${CMAKE_INSTALL_PREFIX}`.
   */
  dollarEscapes?: boolean;
}

/** Returns what is wrong with `value`, or undefined when it is safe to render. */
export function checkBashValue(value: string, options: BashValueOptions = {}): BashValueProblem | undefined {
  let i = 0;
  while (i < value.length) {
    const ch = value[i]!;
    if (ch === '\\' && options.dollarEscapes && value[i + 1] === '$') {
      i += 2;
      continue;
    }
    if (ch === '$') {
      const rest = value.slice(i);
      const variable = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}/.exec(rest);
      if (variable) {
        if (!ALLOWED_VARIABLES.has(variable[1]!)) {
          const literal = options.dollarEscapes ? `, or write \\\${${variable[1]}} for the literal text \${${variable[1]}}` : '';
          return {
            message: `\${${variable[1]}} is not a variable values may use`,
            hint: `use one of ${[...ALLOWED_VARIABLES].map((v) => `\${${v}}`).join(' ')}${literal}`,
          };
        }
        i += variable[0].length;
        continue;
      }
      const call = /^\$\(([a-z_][a-z0-9_]*)((?: [^ ()]+)*)\)/.exec(rest);
      if (call) {
        const name = call[1]!;
        if (!(name in ALLOWED_HELPERS)) {
          return {
            message: `$(${name} …) is not a helper values may call`,
            hint: `use one of ${Object.keys(ALLOWED_HELPERS).join(', ')}, or move the logic into phase code`,
          };
        }
        const args = call[2]!.trim() === '' ? [] : call[2]!.trim().split(' ');
        const bad = args.find((a) => !HELPER_ARG.test(a));
        if (bad !== undefined) {
          return {
            message: `argument ${JSON.stringify(bad)} of $(${name}) has characters bash would interpret`,
            hint: 'helper arguments may use letters, digits and . , : = + / @ - only',
          };
        }
        i += call[0].length;
        continue;
      }
      return {
        message: 'a `$` that is neither ${VAR} nor $(helper …)',
        hint: options.dollarEscapes
          ? 'write variables as ${NAME} and helpers as $(name args), and a literal dollar sign as \\$; other shell syntax belongs in phase code'
          : 'write variables as ${NAME} and helpers as $(name args); other shell syntax belongs in phase code',
      };
    }
    if (!LITERAL.test(ch) && !(ch === '"' && options.quotesEscaped)) {
      return {
        message: `character ${JSON.stringify(ch)} is not allowed in a value`,
        hint: 'quotes, backslashes, backticks and newlines cannot appear in values',
      };
    }
    i++;
  }
  return undefined;
}

/** The eclasses whose helpers `value` calls (to check inherits). */
export function helpersUsed(value: string): string[] {
  return [...value.matchAll(/\$\(([a-z_][a-z0-9_]*)/g)].map((m) => m[1]!);
}

/**
 * Render a value as one bash word: bare when it holds only characters bash
 * gives no meaning to, otherwise in double quotes, where its ${VAR} and
 * $(helper …) expand and nothing else does. Every manifest value that may
 * expand goes through here (defines, `usex` words, globals, test environment
 * and command, paths). A value the validation should have refused is an
 * internal error, never rendered.
 */
export function bashWord(value: string | number | boolean): string {
  const s = typeof value === 'boolean' ? (value ? 'ON' : 'OFF') : String(value);
  if (s !== '' && SAFE_UNQUOTED.test(s)) return s;
  return `"${expandingText(s)}"`;
}

/**
 * A checked value as text to place inside double quotes: its ${VAR} and
 * $(helper …) expand, `"` is escaped where the caller allows quotes as
 * literal text (sed replacements). Throws for a value the validation should
 * have refused.
 */
export function expandingText(value: string, options: BashValueOptions = {}): string {
  const problem = checkBashValue(value, options);
  if (problem) throw new Error(`unchecked value reached the renderer: ${JSON.stringify(value)}: ${problem.message}`);
  return value.replace(/"/g, '\\"');
}

/** Whether a checked text written with `\$` escapes expands anything: a `$` not escaped. */
export function expands(value: string): boolean {
  return /(^|[^\\])\$/.test(value);
}

/** A text written with `\$` escapes as it reads once bash is done: what lands in the file where nothing expands. */
export function unescapedDollars(value: string): string {
  return value.replace(/\\\$/g, '$');
}

/**
 * Text for a source file, written with `\$` escapes (a replacement, an
 * inserted line), as one bash word: single-quoted when nothing in it
 * expands (the escapes resolved, every `$` literal), otherwise double-quoted
 * with its allowed ${VAR} and $(helper …) expanding, its `"` and its `\$`
 * escaped. `tail` is appended inside the quotes as it must reach the
 * command (sed's line continuation, a single backslash).
 */
export function fileText(value: string, tail = ''): string {
  // A single-quoted word ending in a backslash reads like a failed attempt to
  // escape the quote (shellcheck SC1003): such words go in double quotes.
  if (!expands(value) && !tail.endsWith('\\')) return singleQuoted(unescapedDollars(value) + tail);
  const body = expands(value) ? expandingText(value, { quotesEscaped: true, dollarEscapes: true }) : literalInDoubleQuotes(unescapedDollars(value));
  return `"${body}${literalInDoubleQuotes(tail)}"`;
}

/**
 * Literal text for double quotes with as few backslashes as bash needs:
 * `"`, `$` and backticks escaped, and a backslash only where bash would
 * otherwise read it as an escape (before those, another backslash, or the
 * closing quote); `\.` in a regular expression stays as written.
 */
export function literalInDoubleQuotes(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    const next = text[i + 1];
    if (ch === '"' || ch === '$' || ch === '`') out += `\\${ch}`;
    else if (ch === '\\' && (next === undefined || next === '"' || next === '$' || next === '`' || next === '\\' || next === '\n')) out += '\\\\';
    else out += ch;
  }
  return out;
}

/**
 * Literal text as one bash word in which nothing expands: bare when it holds
 * only safe characters, otherwise single-quoted (test names to skip, which
 * may hold `|` and `*`, stay regular expressions, not pipes or globs).
 */
export function bashLiteral(text: string): string {
  if (text !== '' && SAFE_UNQUOTED.test(text)) return text;
  return singleQuoted(text);
}

/** Quote arbitrary text as a single-quoted bash word (for literal data such as sed scripts). */
export function singleQuoted(text: string): string {
  if (text.includes('\0')) throw new Error('a NUL byte cannot be passed to bash');
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * Text placed between double quotes by a template (DESCRIPTION, HOMEPAGE):
 * the schema already refuses what would end the quotes or expand, this keeps
 * it literal even if a pattern were loosened.
 */
export function inDoubleQuotes(text: string): string {
  return text.replace(/[\\"$`]/g, (m) => `\\${m}`);
}

export interface TestEnvProblem {
  message: string;
  hint: string;
}

/**
 * Names `tests.env` may set: the knobs of ROCm's test programs (ROC*, HIP*,
 * HSA_*, MIOPEN_*, RCCL_*, …, and those named after the package itself, such
 * as TOOLKIT_* for a component named toolkit), GoogleTest's, CTest's and
 * pytest's, and the library search paths a test of a freshly built library
 * needs. Shell, loader and interpreter variables (PATH, IFS, BASH_ENV,
 * LD_PRELOAD, PYTHONPATH, …) would change what the tests run, as root.
 */
export const TEST_ENV_NAME =
  /^(?:LD_LIBRARY_PATH|OCL_ICD_FILENAMES|OCL_ICD_VENDORS|PYTEST_ADDOPTS|(?:CTEST|GTEST)_[A-Z0-9_]+|(?:ROC|HIP|HSA|MIOPEN|MIGRAPHX|RCCL|RPP|MIVISIONX|TENSILE|AMD|OMP)[A-Z0-9]*_[A-Z0-9_]+)$/;

/** Refused whatever the package is called: they change how every program starts or what it loads. */
const NEVER_IN_TESTS =
  /^(?:PATH|IFS|ENV|BASH_ENV|BASH_FUNC_.*|SHELLOPTS|BASHOPTS|CDPATH|GLOBIGNORE|PS4|PROMPT_COMMAND|HOME|TMPDIR|SHELL|LD_(?!LIBRARY_PATH$)[A-Z0-9_]*|GCONV_PATH|PYTHON[A-Z0-9_]*|PERL5?[A-Z0-9_]*|RUBY[A-Z0-9_]*|NODE_OPTIONS|.*PRELOAD|.*TOOLS?_LIB(?:S|RARY|RARIES)?)$/;

/** The prefix of variables named after a package or project: rocBLAS → ROCBLAS_. */
export function ownEnvPrefix(name: string): string {
  return `${name.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}_`;
}

/** Variables holding paths: they must point into the build or the installed prefix. */
const PATH_VARIABLE = /(?:PATH|PATHS|_DIR|_DIRS|_LIB|FILENAMES|VENDORS|_FILE)$/;
const PATH_ROOTS = ['${BUILD_DIR}', '${S}', '${WORKDIR}', '${T}', '${EPREFIX}', '${ESYSROOT}', '${BROOT}', '${ED}', '${D}'];

export function testEnvProblem(name: string, value: string, ownNames: readonly string[] = []): TestEnvProblem | undefined {
  const own = ownNames.some((n) => name.startsWith(ownEnvPrefix(n)) && name.length > ownEnvPrefix(n).length);
  if (NEVER_IN_TESTS.test(name) || !(TEST_ENV_NAME.test(name) || own)) {
    return {
      message: `tests may not set ${name}`,
      hint:
        'allowed: test-harness variables (ROC*, HIP*, HSA_*, MIOPEN_*, RCCL_*, AMD_*, GTEST_*, CTEST_*, PYTEST_ADDOPTS, ' +
        'and <PACKAGE>_* named after this package) and ' +
        'LD_LIBRARY_PATH / OCL_ICD_FILENAMES into the build tree; shell and loader variables (PATH, IFS, BASH_ENV, LD_PRELOAD, …) ' +
        'would change what runs as root',
    };
  }
  if (PATH_VARIABLE.test(name)) {
    const bad = value
      .split(':')
      .find((p) => !PATH_ROOTS.some((r) => p === r || p.startsWith(`${r}/`)) || /(^|\/)\.\.(\/|$)/.test(p));
    if (bad !== undefined) {
      return {
        message: `${name} entry ${JSON.stringify(bad)} is outside the build and the installed prefix`,
        hint: `start each entry with one of ${PATH_ROOTS.join(' ')}, without ".."`,
      };
    }
  }
  return undefined;
}
