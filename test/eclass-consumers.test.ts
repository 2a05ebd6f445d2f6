import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../src/paths.js';
import { checkEclassDoc, eclassApiNames } from '../src/eclass/index.js';
import { extractFacts } from '../src/lint/facts.js';

/**
 * Every ::gentoo ebuild that inherits rocm.eclass (consumers.json), as a
 * fixture of ours with the same rocm.eclass lines, sourced by real bash with
 * our eclass and compared with what ::gentoo's eclass gives it, computed from
 * the facts of its table (gentoo-eclass.json). The rule: the same IUSE
 * defaults; the same targets or more (never fewer) in IUSE, ROCM_REQUIRED_USE
 * and ROCM_USEDEP; get_amdgpu_flags printing the same targets, ";"-terminated;
 * the functions ::gentoo's ebuilds call defined and behaving as ::gentoo's;
 * no user variable an ebuild of ::gentoo sets.
 */

const dir = path.join(projectRoot, 'test', 'fixtures', 'eclass-consumers');
const harness = path.join(projectRoot, 'test', 'eclass', 'tests-common.sh');
const eclassText = readFileSync(path.join(projectRoot, 'eclass', 'rocm.eclass'), 'utf8');

interface Consumer {
  atom: string;
  ebuild: string;
  commit: string;
  kind: 'ebuild' | 'documented example';
  rocm_version?: string;
  rocm_skip_globals?: boolean;
  form: 'X.Y.Z' | 'X.Y' | '9999' | 'skip-globals';
  read_as?: string;
  api: string[];
  rocm_required_use?: string[];
  usedep_on?: string[];
  own_targets?: string[];
  own_globals?: string[];
  calls: Record<string, string[][]>;
  sets?: string[];
}

interface GentooEclass {
  functions: string[];
  variables: string[];
  user_variables: string[];
  branches: { patterns: string[]; default_on: string[]; optional: string[] }[];
}

const consumers = (JSON.parse(readFileSync(path.join(dir, 'consumers.json'), 'utf8')) as { consumers: Consumer[] }).consumers;
const gentoo = JSON.parse(readFileSync(path.join(dir, 'gentoo-eclass.json'), 'utf8')) as GentooEclass;

/** The fixture of a row: repo/<cat>/<pn>/<the ebuild's file name, or a version for documented examples>. */
function fixtureOf(c: Consumer): { file: string; pv: string; pn: string } {
  const pn = c.atom.split('/')[1]!;
  const name = c.kind === 'ebuild' ? c.ebuild : `${pn}-${c.rocm_version === '${PV}' ? '7.2.0' : '1.0'}.ebuild`;
  const pvr = name.slice(pn.length + 1, -'.ebuild'.length);
  return { file: path.join(dir, 'repo', c.atom, name), pv: pvr.replace(/-r\d+$/, ''), pn };
}

/** A bash case pattern (as ::gentoo's eclass writes them: *, [a-b], literals) as a regular expression. */
function globRe(pattern: string): RegExp {
  const body = pattern.replace(/[.+^${}()|\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${body}$`);
}

/** What ::gentoo's eclass gives ROCM_VERSION=`version`: the first branch whose pattern matches, or death. */
function gentooPolicy(version: string): { defaultOn: string[]; optional: string[] } | undefined {
  const b = gentoo.branches.find((x) => x.patterns.some((p) => globRe(p).test(version)));
  return b && { defaultOn: b.default_on, optional: b.optional };
}

interface Sourced {
  status: number | null;
  stderr: string;
  vars: Map<string, string>;
  flags: Map<string, string>;
  log: string[];
}

/**
 * Source a fixture with our eclass in real bash, then call get_amdgpu_flags
 * under each USE selection and the other recorded calls. Output lines are
 * "var\t<name>\t<value>", "flags\t<selection index>\t<output>"; the stubs'
 * log (addwrite, addpredict, die, eqawarn) is read back.
 */
function source(c: Consumer, selections: string[][]): Sourced {
  const { file, pv, pn } = fixtureOf(c);
  const calls = c.calls;
  const script = [
    `source ${JSON.stringify(harness)} || exit 1`,
    `CATEGORY=${c.atom.split('/')[0]} PN=${pn} PV=${pv} P=${pn}-${pv}`,
    // As Portage does, the IUSE eclasses set is kept apart (E_IUSE) and added to the ebuild's.
    'eval "$(declare -f inherit | sed "1s/^inherit/_t_real_inherit/")"',
    'inherit() { local saved=${IUSE}; IUSE=; _t_real_inherit "$@"; E_IUSE+=" ${IUSE}"; IUSE=${saved}; }',
    `source ${JSON.stringify(file)} || exit 1`,
    'IUSE="${E_IUSE# } ${IUSE}"',
    'for v in IUSE ROCM_REQUIRED_USE ROCM_USEDEP REQUIRED_USE RDEPEND; do printf "var\\t%s\\t%s\\n" "${v}" "$(echo ${!v})"; done',
    'printf "var\\tfunctions\\t%s\\n" "$(declare -F | awk \'{print $3}\' | paste -sd " " -)"',
    ...selections.map((sel, i) => `USE=${JSON.stringify(sel.join(' '))}; printf "flags\\t${i}\\t%s\\n" "$(get_amdgpu_flags ${(calls.get_amdgpu_flags?.[0] ?? []).map((a) => JSON.stringify(a)).join(' ')})"`),
    'stub_log_reset',
    ...(calls.rocm_add_sandbox ?? []).map((args) => `( rocm_add_sandbox ${args.map((a) => JSON.stringify(a)).join(' ')} ) || exit 1`),
    ...(calls.rocm_use_clang
      ? [
          // hip's clang, as ::gentoo's eclass takes it; an llvm-r2 LLVM_SLOT elsewhere must not win.
          'mkdir -p "${tmpdir}/hip-llvm/bin" && for t in clang clang++; do printf "#!/bin/sh\\n" > "${tmpdir}/hip-llvm/bin/${CHOST}-${t}"; chmod +x "${tmpdir}/hip-llvm/bin/${CHOST}-${t}"; done',
          'hipconfig() { [[ ${1} == --hipclangpath ]] && echo "${tmpdir}/hip-llvm/bin"; }',
          '( LLVM_SLOT=99; rocm_use_clang; printf "var\\tclang\\t%s %s\\n" "${CC#"${tmpdir}"/}" "${CXX#"${tmpdir}"/}" ) || exit 1',
        ]
      : []),
    'printf "log\\t%s\\n" "$(paste -sd "|" "${STUB_LOG}")"',
  ].join('\n');
  const r = spawnSync('bash', ['-c', script], { encoding: 'utf8' });
  if (r.error) throw r.error;
  const vars = new Map<string, string>();
  const flags = new Map<string, string>();
  let log: string[] = [];
  for (const line of r.stdout.split('\n')) {
    const [kind, key, ...rest] = line.split('\t');
    if (kind === 'var') vars.set(key!, rest.join('\t'));
    else if (kind === 'flags') flags.set(key!, rest.join('\t'));
    else if (kind === 'log') log = (key ?? '').split('|').filter(Boolean);
  }
  return { status: r.status, stderr: r.stderr, vars, flags, log };
}

const usedepFlags = (usedep: string) => usedep.split(',').filter(Boolean);
const requiredFlags = (required: string) => (/^\s*\|\|\s*\(\s*(.*?)\s*\)\s*$/.exec(required)?.[1] ?? '').split(/\s+/).filter(Boolean);
const iuseTargets = (iuse: string) =>
  iuse
    .split(/\s+/)
    .filter((w) => /^[+-]?amdgpu_targets_/.test(w))
    .map((w) => ({ target: w.replace(/^[+-]?amdgpu_targets_/, ''), on: w.startsWith('+') }));

describe('rocm.eclass gives each ::gentoo consumer what ::gentoo gives it', function () {
  it('the consumer table covers every form the issue names and each row has a fixture', function () {
    const forms = new Set(consumers.map((c) => c.form));
    for (const form of ['X.Y', 'X.Y.Z', '9999', 'skip-globals']) assert.ok(forms.has(form as Consumer['form']), form);
    assert.ok(consumers.some((c) => c.atom === 'sci-ml/pytorch' && c.rocm_version === '6.1'), "caffe2's ROCm lines, now pytorch's");
    assert.ok(consumers.some((c) => c.usedep_on?.length), 'a consumer using ROCM_USEDEP on a dependency');
    assert.ok(consumers.some((c) => c.calls.rocm_add_sandbox), 'a consumer using rocm_add_sandbox');
    for (const c of consumers) assert.ok(readFileSync(fixtureOf(c).file, 'utf8').includes('inherit rocm'), fixtureOf(c).file);
  });

  it('every name of the API ::gentoo documents and its ebuilds use is ours, and none is a user variable an ebuild sets', function () {
    const ours = eclassApiNames(eclassText);
    for (const name of [...gentoo.functions, ...gentoo.variables, ...consumers.flatMap((c) => c.api)]) assert.ok(ours.has(name), name);
    const { doc } = checkEclassDoc(eclassText, 'eclass/rocm.eclass');
    const userVariables = doc.variables.filter((v) => v.userVariable).map((v) => v.name);
    const set = new Set(consumers.flatMap((c) => c.sets ?? []));
    // pkgcheck's EclassUserVariableUsage: an ebuild assigning an eclass's @USER_VARIABLE.
    assert.deepEqual(
      userVariables.filter((v) => set.has(v)),
      [],
      `${consumers.filter((c) => c.sets?.length).length} ::gentoo ebuilds set ${[...set].join(', ')}`,
    );
    assert.ok(set.has('HIP_VISIBLE_DEVICES'));
  });

  for (const c of consumers) {
    const version = c.rocm_skip_globals ? undefined : c.rocm_version === '${PV}' ? fixtureOf(c).pv : c.rocm_version!;
    const title = `${c.atom} (${c.ebuild}): ${c.rocm_skip_globals ? 'ROCM_SKIP_GLOBALS=1' : `ROCM_VERSION=${c.rocm_version}`}`;

    it(title, async function () {
      const { file } = fixtureOf(c);
      const text = readFileSync(file, 'utf8');

      // The fixture has the row's rocm.eclass lines: no more, no less.
      const facts = await extractFacts({ file, atom: c.atom, version: fixtureOf(c).pv, text, year: 2026 });
      try {
        assert.equal(facts.globalMap.get('ROCM_VERSION')?.value, c.rocm_version);
        assert.equal(facts.globalMap.has('ROCM_SKIP_GLOBALS'), Boolean(c.rocm_skip_globals));
        const called: Record<string, string[][]> = {};
        for (const cmd of facts.commands) {
          if (!gentoo.functions.includes(cmd.name)) continue;
          const args = cmd.node.namedChildren.filter((n) => n && n.type !== 'command_name').map((n) => n!.text);
          (called[cmd.name] ??= []).push(args);
        }
        assert.deepEqual(called, c.calls);
        assert.deepEqual([...text.matchAll(/([a-z-]+\/[A-Za-z0-9_+-]+)\[\$\{ROCM_USEDEP\}\]/g)].map((m) => m[1]), c.usedep_on ?? []);
      } finally {
        facts.tree.delete();
      }

      const policy = version === undefined ? undefined : gentooPolicy(version);
      if (version !== undefined) assert.ok(policy, `::gentoo's eclass dies on ROCM_VERSION=${version}`);
      const gentooTargets = policy ? [...policy.defaultOn, ...policy.optional] : (c.own_targets ?? []);
      // USE selections: none, ::gentoo's defaults, each target alone, all of them.
      const selections = [[], policy ? policy.defaultOn : gentooTargets, ...gentooTargets.map((t) => [t]), gentooTargets].map((s) => s.map((t) => `amdgpu_targets_${t}`));
      const r = source(c, selections);
      assert.equal(r.status, 0, r.stderr);
      // Nothing on stderr but a QA notice for a version older than the table (the documented ROCM_VERSION=5.1).
      assert.deepEqual(r.stderr.split('\n').filter((l) => l && !/^ \* QA Notice: ROCM_VERSION=5\.1 is older than|^ \* QA Notice: Add the release/.test(l)), []);
      const v = (name: string) => r.vars.get(name) ?? '';

      if (policy) {
        const ours = iuseTargets(v('IUSE'));
        const offered = new Set(ours.map((t) => t.target));
        const missing = gentooTargets.filter((t) => !offered.has(t));
        assert.deepEqual(missing, [], 'targets ::gentoo offers and ours does not');
        assert.deepEqual(ours.filter((t) => t.on).map((t) => t.target).sort(), [...policy.defaultOn].sort(), 'the default-on targets');
        const required = new Set(requiredFlags(v('ROCM_REQUIRED_USE')));
        assert.deepEqual(gentooTargets.filter((t) => !required.has(`amdgpu_targets_${t}`)), [], 'ROCM_REQUIRED_USE');
        assert.deepEqual([...required].sort(), ours.map((t) => `amdgpu_targets_${t.target}`).sort());
        const usedep = new Set(usedepFlags(v('ROCM_USEDEP')));
        assert.deepEqual(gentooTargets.filter((t) => !usedep.has(`amdgpu_targets_${t}(-)?`)), [], 'ROCM_USEDEP');
        for (const where of c.rocm_required_use ?? []) {
          assert.ok(v('REQUIRED_USE').includes(v('ROCM_REQUIRED_USE')), `REQUIRED_USE ${where}`);
        }
        for (const atom of c.usedep_on ?? []) assert.ok(v('RDEPEND').includes(`${atom}[${v('ROCM_USEDEP')}]`), `the USE dependency on ${atom}`);
      } else {
        // ROCM_SKIP_GLOBALS: nothing but the ebuild's own flags and values, as with ::gentoo's.
        assert.deepEqual(iuseTargets(v('IUSE')).map((t) => t.target), c.own_targets ?? []);
        if (!c.own_globals?.includes('ROCM_REQUIRED_USE')) assert.equal(v('ROCM_REQUIRED_USE'), '');
        if (!c.own_globals?.includes('ROCM_USEDEP')) assert.equal(v('ROCM_USEDEP'), '');
      }

      // get_amdgpu_flags: ::gentoo prints the enabled targets, each followed by ";".
      selections.forEach((sel, i) => {
        const out = r.flags.get(String(i));
        assert.ok(out !== undefined, `get_amdgpu_flags under USE="${sel.join(' ')}" printed nothing`);
        assert.ok(out === ';' || /^(gfx[0-9a-f]+;)+$/.test(out), `get_amdgpu_flags: ${out}`);
        const printed = out.split(';').filter(Boolean).sort();
        assert.deepEqual(printed, sel.map((f) => f.replace('amdgpu_targets_', '')).sort(), `get_amdgpu_flags under USE="${sel.join(' ')}"`);
      });

      for (const fn of Object.keys(c.calls)) assert.ok(v('functions').split(' ').includes(fn), `${fn} is defined`);
      if (c.calls.rocm_add_sandbox) {
        const write = c.calls.rocm_add_sandbox.some((a) => a.includes('-w'));
        assert.ok(r.log.some((l) => l.startsWith(write ? 'addwrite /dev/kfd' : 'addpredict /dev/kfd')), r.log.join('\n'));
        assert.ok(r.log.some((l) => /^add(write|predict) \/dev\/dri/.test(l)), 'the render nodes');
      }
      if (c.calls.rocm_use_clang) assert.equal(v('clang'), `hip-llvm/bin/x86_64-pc-linux-gnu-clang hip-llvm/bin/x86_64-pc-linux-gnu-clang++`, "hip's clang, as ::gentoo");
    });
  }
});
