import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { defaultManifestPath, projectRoot } from '../src/paths.js';
import { loadManifest, stackFor } from '../src/stack-check/index.js';
import { extractFacts } from '../src/lint/facts.js';
import { renderEbuild } from '../src/render/index.js';
import { eclassGlobals, loadTargetTable, policyFor } from '../src/eclass/index.js';

const harness = path.join(projectRoot, 'test', 'eclass', 'tests-common.sh');
const RELEASE = '6.2.2';

interface Sourced {
  status: number | null;
  stderr: string;
  iuse: string;
  requiredUse: string;
  usedep: string;
  skipGlobals: string;
  functions: string[];
}

/** Source an ebuild's head (up to its inherit line) with the real rocm.eclass. */
function sourceHead(head: string, pv: string): Sourced {
  const script = [
    `source ${JSON.stringify(harness)} || exit 1`,
    'TESTS_STUB_UNKNOWN_ECLASSES=1',
    `PV=${pv}`,
    head,
    'printf "%s\\n" "${IUSE}" "${ROCM_REQUIRED_USE}" "${ROCM_USEDEP}" "${ROCM_SKIP_GLOBALS}"',
    'declare -F | awk \'{print $3}\' | paste -sd " " -',
  ].join('\n');
  const r = spawnSync('bash', ['-c', script], { encoding: 'utf8' });
  if (r.error) throw r.error;
  const [iuse = '', requiredUse = '', usedep = '', skipGlobals = '', functions = ''] = r.stdout.split('\n');
  return { status: r.status, stderr: r.stderr, iuse, requiredUse, usedep, skipGlobals, functions: functions.split(' ') };
}

describe(`generated ${RELEASE} ebuilds with rocm.eclass`, function () {
  it('inherit rocm, source cleanly with the real eclass and call only functions it defines', async function () {
    const manifest = await loadManifest(defaultManifestPath);
    const model = await stackFor(manifest, RELEASE);
    const table = await loadTargetTable();
    const policy = policyFor(table, RELEASE).policy;

    const users: string[] = [];
    const problems: string[] = [];
    for (const c of model.components) {
      const text = renderEbuild(c, model, { year: 2026 });
      const lines = text.split('\n');
      const inheritAt = lines.findIndex((l) => /^inherit\b/.test(l));
      if (inheritAt < 0 || !/\brocm\b/.test(lines[inheritAt]!)) continue;
      users.push(c.atom);

      const head = lines.slice(lines.findIndex((l) => l.startsWith('EAPI=')), inheritAt + 1).join('\n');
      const sourced = sourceHead(head, c.version);
      const where = `${c.atom}-${c.version}`;
      if (sourced.status !== 0 || sourced.stderr !== '') {
        problems.push(`${where}: sourcing failed (${sourced.status}): ${sourced.stderr.trim()}`);
        continue;
      }
      // Commands as bash parses them (tree-sitter-bash), not words in sed scripts or comments.
      const facts = await extractFacts({ file: where, atom: c.atom, version: c.version, text, year: 2026 });
      const called = new Set(facts.commands.map((x) => x.name).filter((n) => /^(get_amdgpu_flags|check_amdgpu|rocm_[a-z_]+)$/.test(n)));
      for (const fn of called) {
        if (!sourced.functions.includes(fn)) problems.push(`${where}: calls ${fn}, which rocm.eclass does not define`);
      }
      const usesGlobals = /\$\{ROCM_(REQUIRED_USE|USEDEP|USE_DEP)\}/.test(text);
      if (usesGlobals && sourced.skipGlobals) problems.push(`${where}: uses ROCM_REQUIRED_USE/ROCM_USEDEP with ROCM_SKIP_GLOBALS`);
      if (!sourced.skipGlobals) {
        const supported = /ROCM_SUPPORTED_TARGETS=\(([^)]*)\)/.exec(head)?.[1]?.trim().split(/\s+/);
        const expected = eclassGlobals(table, policy, supported);
        if (sourced.iuse !== expected.iuse) problems.push(`${where}: IUSE ${sourced.iuse} != ${expected.iuse}`);
        if (sourced.usedep !== expected.usedep) problems.push(`${where}: ROCM_USEDEP differs from the TypeScript model`);
      }
    }
    assert.deepEqual(problems, []);
    assert.ok(users.length > 0, `no ${RELEASE} ebuild inherits rocm`);
    this.test!.title += ` (${users.length} ebuilds)`;
  });
});
