import type { Check } from '../types.js';

/** skel.ebuild's order, as pkgcheck's VariableOrderCheck enforces it (plus REQUIRED_USE and deps). */
const ORDER = ['DESCRIPTION', 'HOMEPAGE', 'SRC_URI', 'S', 'LICENSE', 'SLOT', 'KEYWORDS', 'IUSE', 'REQUIRED_USE', 'RESTRICT', 'RDEPEND', 'DEPEND', 'BDEPEND', 'PDEPEND', 'IDEPEND'];

/** Variables eclasses read at inherit time: they must be set before `inherit`. */
const PRE_INHERIT = ['ROCM_VERSION', 'ROCM_SKIP_GLOBALS', 'ROCM_SUPPORTED_TARGETS', 'LLVM_COMPAT', 'LLVM_OPTIONAL', 'PYTHON_COMPAT', 'DISTUTILS_USE_PEP517', 'DISTUTILS_SINGLE_IMPL', 'DISTUTILS_OPTIONAL', 'DISTUTILS_EXT', 'DOCS_BUILDER', 'DOCS_DIR', 'DOCS_DEPEND'];

const REQUIRED = ['DESCRIPTION', 'HOMEPAGE', 'LICENSE', 'SLOT', 'KEYWORDS'];

export const variableOrderCheck: Check = {
  name: 'VariableOrderCheck',
  keywords: [{ name: 'VariableOrderWrong', level: 'style', description: "variables out of skel.ebuild's order" }],
  run(f) {
    const out = [];
    let index = 0;
    for (const g of f.globals) {
      const i = ORDER.indexOf(g.name);
      if (i < 0) continue;
      if (i < index) out.push({ keyword: 'VariableOrderWrong', message: `variable ${g.name} should occur before ${ORDER[index]}`, line: g.line });
      index = Math.max(index, i);
    }
    return out;
  },
};

export const eclassVarCheck: Check = {
  name: 'EclassVariableCheck',
  keywords: [
    { name: 'MisplacedEclassVar', level: 'error', description: 'an eclass variable read at inherit time is set after inherit' },
    { name: 'MissingVariable', level: 'error', description: 'a mandatory metadata variable is missing' },
    { name: 'VariableShadowed', level: 'warning', description: 'a global variable is assigned twice' },
    { name: 'DuplicateFunctionDefinition', level: 'error', description: 'a function is defined twice' },
    { name: 'MissingSlotSubslot', level: 'warning', description: 'SLOT lacks the per-release sub-slot ROCm packages use' },
  ],
  run(f) {
    const out = [];
    for (const g of f.globals) {
      if (PRE_INHERIT.includes(g.name) && f.inheritLine !== undefined && g.line > f.inheritLine) {
        out.push({ keyword: 'MisplacedEclassVar', message: `${g.name} is set after inherit (line ${f.inheritLine}); the eclass reads it while inheriting`, line: g.line });
      }
    }
    for (const v of REQUIRED) {
      if (!f.globalMap.has(v)) out.push({ keyword: 'MissingVariable', message: `${v} is not set` });
    }
    const slot = f.globalMap.get('SLOT');
    // A convention of the ROCm stack (every release a new ABI), not of ebuilds in general.
    // A package a release holds at its own version states that release's sub-slot (SLOT="0/10.0", model/held.ts).
    if (f.input.rocm && slot && slot.value !== '0/$(ver_cut 1-2)' && !/^0\/[0-9]+\.[0-9]+$/.test(slot.value)) {
      out.push({ keyword: 'MissingSlotSubslot', message: `SLOT="${slot.value}"; ROCm packages use SLOT="0/$(ver_cut 1-2)" (or the literal sub-slot of the release that holds them at their own version)`, line: slot.line });
    }
    const seen = new Map<string, number>();
    for (const g of f.globals) {
      if (g.node.text.startsWith(`${g.name}+=`)) continue;
      const first = seen.get(g.name);
      if (first !== undefined) out.push({ keyword: 'VariableShadowed', message: `${g.name} is assigned on lines ${first} and ${g.line}`, line: g.line });
      else seen.set(g.name, g.line);
    }
    const fnLines = new Map<string, number>();
    for (const node of f.tree.rootNode.namedChildren) {
      if (node?.type !== 'function_definition') continue;
      const name = node.childForFieldName('name')?.text ?? '';
      const line = node.startPosition.row + 1;
      const first = fnLines.get(name);
      if (first !== undefined) out.push({ keyword: 'DuplicateFunctionDefinition', message: `${name} is defined on lines ${first} and ${line}`, line });
      else fnLines.set(name, line);
    }
    return out;
  },
};

export const descriptionCheck: Check = {
  name: 'DescriptionCheck',
  keywords: [{ name: 'BadDescription', level: 'style', description: 'DESCRIPTION too short, too long, ending in a dot, or just the name' }],
  run(f) {
    const d = f.globalMap.get('DESCRIPTION');
    if (!d) return [];
    const pn = f.input.atom.split('/')[1]!;
    const problems: string[] = [];
    if (d.value.length < 10) problems.push('under 10 characters');
    if (d.value.length > 80) problems.push('over 80 characters');
    if (d.value.endsWith('.')) problems.push('ends with a dot');
    if (d.value.toLowerCase().startsWith(pn.toLowerCase())) problems.push('starts with the package name');
    return problems.map((p) => ({ keyword: 'BadDescription', message: `DESCRIPTION ${p}: ${JSON.stringify(d.value)}`, line: d.line }));
  },
};
