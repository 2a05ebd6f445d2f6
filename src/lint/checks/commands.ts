import type { Node } from '../../ebuild/bash-parser.js';
import type { Check } from '../types.js';

/** Commands that can fail without stopping the ebuild (Portage helpers die by themselves). */
const MUST_DIE = new Set(['sed', 'cp', 'mv', 'rm', 'mkdir', 'ln', 'cd', 'pushd', 'popd', 'chmod', 'chown', 'touch', 'tar', 'patch', 'install', 'unzip', 'rmdir']);

/** Path variables pkgcheck wants quoted wherever word splitting applies. */
const PATH_VARS = new Set(['D', 'ED', 'S', 'T', 'WORKDIR', 'FILESDIR', 'DISTDIR', 'EPREFIX', 'EROOT', 'ROOT', 'ESYSROOT', 'SYSROOT', 'BROOT', 'BUILD_DIR', 'HOME']);

/** Where a variable may be used: D and ED only where the image exists. */
const SCOPES: Record<string, string[]> = {
  D: ['src_install', 'pkg_preinst', 'pkg_postinst'],
  ED: ['src_install', 'pkg_preinst', 'pkg_postinst'],
  ROOT: ['pkg_setup', 'pkg_preinst', 'pkg_postinst', 'pkg_prerm', 'pkg_postrm', 'pkg_config'],
  EROOT: ['pkg_setup', 'pkg_preinst', 'pkg_postinst', 'pkg_prerm', 'pkg_postrm', 'pkg_config'],
};

const PHASES = new Set(['pkg_pretend', 'pkg_setup', 'src_unpack', 'src_prepare', 'src_configure', 'src_compile', 'src_test', 'src_install', 'pkg_preinst', 'pkg_postinst', 'pkg_prerm', 'pkg_postrm', 'pkg_config']);

/** The statement a command belongs to: climb lists, pipelines and negations. */
function statementOf(node: Node): Node {
  let n = node;
  while (n.parent && ['list', 'pipeline', 'negated_command', 'redirected_statement'].includes(n.parent.type)) n = n.parent;
  return n;
}

/** Whether the walk met the node below one of these types. */
function isInside(place: { ancestors: readonly string[] }, types: readonly string[]): boolean {
  return place.ancestors.some((t) => types.includes(t));
}

export const dieCheck: Check = {
  name: 'DieCheck',
  keywords: [
    { name: 'MissingDie', level: 'warning', description: 'a command that can fail is not followed by || die' },
    { name: 'InvalidSandboxCall', level: 'error', description: 'addwrite/addpredict/addread take one path' },
  ],
  run(f) {
    const out = [];
    for (const c of f.commands) {
      if (['addread', 'addwrite', 'adddeny', 'addpredict'].includes(c.name)) {
        const args = c.node.namedChildren.filter((n) => n && n.type !== 'command_name');
        if (args.length !== 1 || args[0]!.text.includes(':')) {
          out.push({ keyword: 'InvalidSandboxCall', message: `line ${c.line}: ${c.node.text}`, line: c.line });
        }
      }
      if (!MUST_DIE.has(c.name) || !c.fn) continue;
      // Conditions and substitutions handle failure themselves.
      if (isInside(c, ['command_substitution', 'test_command'])) continue;
      const stmt = statementOf(c.node);
      const parent = stmt.parent;
      if (parent && (parent.type === 'if_statement' || parent.type === 'elif_clause' || parent.type === 'while_statement')) {
        const condition = parent.childForFieldName('condition');
        if (condition && condition.startIndex <= stmt.startIndex && stmt.endIndex <= condition.endIndex) continue;
      }
      const after = stmt.text.slice(c.node.endIndex - stmt.startIndex);
      if (/^[\s\S]*\|\|\s*die\b/.test(after) || /\|\|\s*die\b/.test(stmt.text.slice(c.node.startIndex - stmt.startIndex))) continue;
      out.push({ keyword: 'MissingDie', message: `line ${c.line}: "${c.node.text.split('\n')[0]}" needs || die`, line: c.line });
    }
    return out;
  },
};

export const quotingCheck: Check = {
  name: 'QuotingCheck',
  keywords: [
    { name: 'UnquotedVariable', level: 'warning', description: 'a path variable is used unquoted where word splitting applies' },
    { name: 'VariableScope', level: 'warning', description: 'a variable is used in a phase where it is not defined' },
  ],
  nodeTypes: { variable_name: 'text' },
  run(f) {
    const out = [];
    // An expansion's variable is its variable_name child ($S, ${S}, ${S%/*}).
    for (const v of f.nodes('variable_name')) {
      const parent = v.ancestors[v.ancestors.length - 1];
      if (parent !== 'simple_expansion' && parent !== 'expansion') continue;
      const name = v.text;
      const up = v.ancestors.slice(0, -1);
      const phase = v.fn;
      const scopes = SCOPES[name];
      if (scopes && (!phase || (PHASES.has(phase) && !scopes.includes(phase)))) {
        out.push({ keyword: 'VariableScope', message: `\${${name}} used in ${phase ?? 'global scope'}`, line: v.line });
      }
      if (!PATH_VARS.has(name)) continue;
      if (isInside({ ancestors: up }, ['string', 'test_command', 'heredoc_body', 'raw_string'])) continue;
      // Plain assignments do not split; array elements and command words do.
      let i = up.length - 1;
      while (i >= 0 && up[i] === 'concatenation') i--;
      const p = up[i];
      if (p === 'variable_assignment') continue;
      if (p === 'case_statement' || p === 'case_item') continue;
      out.push({ keyword: 'UnquotedVariable', message: `\${${name}} is not quoted on line ${v.line}`, line: v.line });
    }
    return out;
  },
};

/**
 * check_amdgpu demands a usable GPU; anywhere but src_test (and the
 * functions src_test calls) it makes building or configuring need one.
 * A configure step that probes the GPU gets rocm_add_sandbox instead.
 */
export const gpuAccessCheck: Check = {
  name: 'GpuAccessCheck',
  keywords: [{ name: 'GpuNeededOutsideTest', level: 'warning', description: 'check_amdgpu is called outside src_test' }],
  run(f) {
    return f.commands
      .filter((c) => c.name === 'check_amdgpu' && c.fn !== undefined && PHASES.has(c.fn) && c.fn !== 'src_test')
      .map((c) => ({
        keyword: 'GpuNeededOutsideTest',
        message: `line ${c.line}: check_amdgpu in ${c.fn} needs a GPU to build; let probes fail quietly with rocm_add_sandbox, and check for the GPU in src_test`,
        line: c.line,
      }));
  },
};
