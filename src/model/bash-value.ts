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
  'T',
  'WORKDIR',
]);

/** Helpers a value may call in $( … ), with the eclass that provides each. */
export const ALLOWED_HELPERS: Readonly<Record<string, string | null>> = {
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

/**
 * Returns what is wrong with `value`, or undefined when it is safe to render.
 * `quotesEscaped`: the renderer escapes double quotes (sed replacements), so
 * they may appear as literal text.
 */
export function checkBashValue(value: string, options: { quotesEscaped?: boolean } = {}): BashValueProblem | undefined {
  let i = 0;
  while (i < value.length) {
    const ch = value[i]!;
    if (ch === '$') {
      const rest = value.slice(i);
      const variable = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}/.exec(rest);
      if (variable) {
        if (!ALLOWED_VARIABLES.has(variable[1]!)) {
          return {
            message: `\${${variable[1]}} is not a variable values may use`,
            hint: `use one of ${[...ALLOWED_VARIABLES].map((v) => `\${${v}}`).join(' ')}`,
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
        hint: 'write variables as ${NAME} and helpers as $(name args); other shell syntax belongs in phase code',
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

/** Render a checked value as one bash word. */
export function bashWord(value: string | number | boolean): string {
  const s = typeof value === 'boolean' ? (value ? 'ON' : 'OFF') : String(value);
  if (s !== '' && SAFE_UNQUOTED.test(s)) return s;
  return `"${s}"`;
}

/** Quote arbitrary text as a single-quoted bash word (for literal data such as sed scripts). */
export function singleQuoted(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}
