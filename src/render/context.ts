import type { DefineValue, PhaseCode, PhaseName } from '../manifest/types.js';
import { PHASES } from '../manifest/types.js';
import type { ResolvedComponent, StackModel } from '../model/resolve.js';
import { ALLOWED_HELPERS, bashLiteral, bashWord, expandingText, helpersUsed, inDoubleQuotes, singleQuoted } from '../model/bash-value.js';
import { collectDeps, depLines, gfxOrder, versioned, type DepEntry } from './deps.js';
import { byCodePoint } from '../util/order.js';
import { prepareBlocks, useTest } from './prepare.js';
import { patchesOf } from '../model/patches.js';
import { packageSlot } from '../model/held.js';
import { sourceVariables, unpackBody } from './unpack.js';

export { sedReplace } from './prepare.js';

/** Everything the ebuild templates need, computed once and already quoted. */
export interface EbuildContext {
  year: number;
  atom: string;
  build: string;
  preInherit: string[];
  inherit: string[];
  description: string;
  homepage: string;
  /** Globals SRC_URI and S refer to (the commit of each pinned repository), one assignment per line. */
  sourceVars: string[];
  srcUri: string[];
  s: string;
  license: string;
  slot: string;
  /** Comment lines above SLOT: why a package held at its own version takes the release's sub-slot. */
  slotComment: string[];
  keywords: string;
  iuse: string;
  requiredUse: string[];
  /** Comment lines above REQUIRED_USE: QA findings a reviewer accepted for it. */
  requiredUseComment: string[];
  /** Comment lines above LICENSE: why a license outside @FREE is accepted. */
  licenseComment: string[];
  /** Comment lines above DESCRIPTION: other accepted QA findings. */
  acceptedComment: string[];
  restrict: string;
  /** Comment lines above RESTRICT: why the tests cannot run. */
  restrictComment: string[];
  rdepend: string[];
  depend: string[];
  /** DEPEND="${RDEPEND}" plus these extra lines, when RDEPEND is a prefix of DEPEND. */
  dependExtendsRdepend: boolean;
  bdepend: string[];
  pdepend: string[];
  idepend: string[];
  globals: string[];
  patches: string[];
  afterDeps: string[];
  /** src_unpack's body when some archive is unpacked only in part (empty: Portage's default). */
  unpack: string[];
  custom: Partial<Record<PhaseName, { before: string[]; after: string[]; replace: string[] | null }>>;
  pkgSetup: string[];
  pythonCheckDeps: string[];
  prepare: string[][];
  compilerSetup: string[];
  cmakeArgs: string[];
  cmakeConditional: { condition: string[]; comment?: string; args: string[]; otherwise?: string[] }[];
  test: {
    enabled: boolean;
    gpu: boolean;
    env: string[];
    run: string;
    jobs?: number;
    skip: string[];
    dir?: string;
    command?: string;
  };
}

/** Globals eclasses read while inheriting, so they go before `inherit`. */
const PRE_INHERIT_GLOBALS = new Set(['FORTRAN_NEEDED', 'FORTRAN_STANDARD', 'DOCS_BUILDER', 'DOCS_DIR', 'DOCS_DEPEND', 'DISTUTILS_EXT', 'DISTUTILS_OPTIONAL', 'DISTUTILS_SINGLE_IMPL']);

/** Eclasses exporting pkg_setup, in the order their setups should run. */
const SETUP_ORDER = ['check-reqs', 'linux-info', 'fortran-2', 'llvm-r2', 'python-any-r1', 'python-single-r1'];

export interface ContextOptions {
  year: number;
}

/** Body lines of user code: common indentation removed, then one tab. */
function codeLines(code: string | undefined): string[] {
  if (code === undefined) return [];
  const lines = code.replace(/\s+$/, '').split('\n');
  const indents = lines.filter((l) => l.trim() !== '').map((l) => /^[\t ]*/.exec(l)![0].length);
  const strip = indents.length ? Math.min(...indents) : 0;
  return lines.map((l) => (l.trim() === '' ? '' : `\t${l.slice(strip).replace(/^( {4})+/, (m) => '\t'.repeat(m.length / 4))}`));
}

function customPhases(phases: Partial<Record<PhaseName, PhaseCode>> | undefined): EbuildContext['custom'] {
  const out: EbuildContext['custom'] = {};
  for (const name of PHASES) {
    const p = phases?.[name];
    if (!p) continue;
    out[name] = { before: codeLines(p.before), after: codeLines(p.after), replace: p.replace !== undefined ? codeLines(p.replace) : null };
  }
  return out;
}

function defineArg(name: string, value: DefineValue): string {
  if (typeof value === 'object') {
    // The words of usex are values like any other: one quoting path.
    return `-D${name}="$(usex ${value.use} ${bashWord(value.on ?? 'ON')} ${bashWord(value.off ?? 'OFF')})"`;
  }
  return `-D${name}=${bashWord(value)}`;
}

/** Expand target globs (gfx9*, gfx11*) against this package's targets. */
function matchTargets(targets: string[], rule: { matching?: string[]; except?: string[] }): string[] {
  const re = (patterns: string[]) => new RegExp(`^(${patterns.map((p) => p.replace(/\*/g, '.*')).join('|')})$`);
  if (rule.matching) return targets.filter((t) => re(rule.matching!).test(t));
  return targets.filter((t) => !re(rule.except!).test(t));
}

/** `use a || use b ||` wrapped to stay within 80 columns at two tabs. */
function useChain(flags: string[]): string[] {
  const parts = flags.map((f) => `use ${f}`);
  const lines: string[] = [];
  let line = 'if';
  for (const [i, p] of parts.entries()) {
    const piece = ` ${p}${i < parts.length - 1 ? ' ||' : '; then'}`;
    if (line.length + piece.length > 66 && line !== 'if') {
      lines.push(line);
      line = `\t${piece.trimStart()}`;
    } else {
      line += piece;
    }
  }
  lines.push(line);
  return lines;
}

/**
 * REQUIRED_USE for flags that pull in a target-limited package
 * (model/target-closure.ts): one of the targets both offer must be on, or,
 * when they share none, the flag must stay off.
 */
export function flagLimitClauses(c: ResolvedComponent): string[] {
  return (c.flagLimits ?? []).map((l) =>
    l.targets.length === 0
      ? `!${l.flag}`
      : `${l.flag}? ( || ( ${[...l.targets].sort((a, b) => gfxOrder(a) - gfxOrder(b)).map((t) => `amdgpu_targets_${t}`).join(' ')} ) )`,
  );
}

type Spec = ResolvedComponent['spec'];

export function buildContext(c: ResolvedComponent, model: StackModel, options: ContextOptions): EbuildContext {
  const spec = c.spec;
  const mode = spec.targets.mode;
  const gpuMode = mode === 'full' || mode === 'subset';
  const { inherit, preInherit } = eclassesAndPreInherit(c, model.release);

  // Dependencies.
  const deps = collectDeps(c, model, true);
  const rdepend = deps.get('RDEPEND')!;
  const depend = deps.get('DEPEND')!;
  const rd = depLines(rdepend);
  const extends_ = rd.length > 0 && startsWith(depend, rdepend);
  const dependRest = extends_ ? depLines(depend.slice(rdepend.length)) : depLines(depend);

  const tests = spec.tests;
  const testsEnabled = Boolean(tests && !tests.restrict);
  // distutils_enable_tests adds IUSE=test and RESTRICT itself.
  const distutilsTests = spec.build === 'python' && testsEnabled && (tests!.run ?? 'pytest') === 'pytest';
  const comments = acceptedQaComments(spec);
  const restrictTokens: string[] = [...(spec.restrict ?? [])];
  if (tests?.restrict) restrictTokens.push('test');
  else if (tests && !distutilsTests) restrictTokens.push('!test? ( test )');

  const { beforeInherit, globals } = placedGlobals(spec);
  preInherit.unshift(...beforeInherit);
  const pkgSetup = pkgSetupCalls(spec, inherit);
  const test = testContext(spec, testsEnabled);
  if (test.command && testsEnabled) inherit.add('edo');

  return {
    year: options.year,
    atom: c.atom,
    build: spec.build,
    preInherit,
    inherit: [...inherit].sort(),
    description: inDoubleQuotes(spec.description),
    homepage: inDoubleQuotes(spec.homepage),
    sourceVars: sourceVariables(c),
    srcUri: depLines(c.distfiles.map((d) => ({ text: wrapUri(d.uri), ...(d.when ? { when: d.when } : {}) }))),
    s: c.sourceDir,
    license: spec.license,
    // Every package of a release shares its sub-slot (the `:${SLOT}` of the
    // stack's dependencies): one the release holds at its own version too.
    slot: packageSlot(c),
    slotComment: c.held ? heldComment(c) : [],
    keywords: spec.keywords,
    iuse: useFlags(spec, testsEnabled && !distutilsTests).join(' '),
    requiredUse: requiredUseLines(c, gpuMode),
    ...comments,
    restrict: restrictTokens.join(' '),
    restrictComment:
      typeof tests?.restrict === 'string' ? wrapWords(`Tests are not run: ${tests.restrict}`.split(/\s+/), 76) : [],
    rdepend: rd,
    depend: dependRest,
    dependExtendsRdepend: extends_,
    bdepend: depLines(deps.get('BDEPEND')!),
    pdepend: depLines(deps.get('PDEPEND')!),
    idepend: depLines(deps.get('IDEPEND')!),
    globals,
    patches: patchLines(c),
    afterDeps: distutilsTests ? ['distutils_enable_tests pytest'] : [],
    unpack: unpackBody(c),
    custom: customPhases(spec.phases),
    pkgSetup,
    pythonCheckDeps: pythonCheckDepLines(spec),
    // src_prepare fix-ups.
    prepare: prepareBlocks(spec.prepare),
    compilerSetup: compilerSetupLines(spec),
    cmakeArgs: cmakeArgLines(c, gpuMode),
    cmakeConditional: cmakeConditionals(c),
    test,
  };
}

/**
 * The eclasses a package inherits and the assignments that must precede `inherit` (the
 * *_COMPAT lists, ROCm's target settings), from its build system, compiler, targets and
 * the helpers its values call.
 */
function eclassesAndPreInherit(c: ResolvedComponent, release: StackModel['release']): { inherit: Set<string>; preInherit: string[] } {
  const spec = c.spec;
  const mode = spec.targets.mode;
  const gpuMode = mode === 'full' || mode === 'subset';
  const inherit = new Set<string>(spec.inherit ?? []);
  const preInherit: string[] = [];

  if (spec.build === 'cmake') inherit.add('cmake');
  if (spec.build === 'python') {
    inherit.add('distutils-r1');
    preInherit.push(`DISTUTILS_USE_PEP517=${spec.python?.pep517 ?? 'setuptools'}`);
  }
  if (spec.llvm) {
    inherit.add('llvm-r2');
    preInherit.push(`LLVM_COMPAT=( ${release.llvmSlot} )`);
  }
  if (spec.python) {
    if (spec.python.eclass !== 'distutils-r1') inherit.add(spec.python.eclass);
    preInherit.push(`PYTHON_COMPAT=( ${release.pythonCompat} )`);
  }
  if (mode !== 'none') inherit.add('rocm');
  if (mode === 'skip-globals') preInherit.push('ROCM_SKIP_GLOBALS=1');
  const supported = supportedTargetsLines(c);
  if (supported) preInherit.push(supported);
  // A package the release holds at its own version takes the release's
  // target table: ROCM_VERSION names the release, not PV.
  if (gpuMode) preInherit.push(c.held ? `ROCM_VERSION=${c.release}` : 'ROCM_VERSION=${PV}');
  for (const eclass of helperEclasses(spec)) inherit.add(eclass);
  return { inherit, preInherit };
}

/**
 * ROCM_SUPPORTED_TARGETS (with the comment saying why), or undefined: a library's own subset,
 * or the targets its unconditional dependencies leave it (model/target-closure.ts), said
 * where a reviewer meets them.
 */
function supportedTargetsLines(c: ResolvedComponent): string | undefined {
  const mode = c.spec.targets.mode;
  const gpuMode = mode === 'full' || mode === 'subset';
  const limits = c.targetLimits ?? [];
  if (!(mode === 'subset' || (gpuMode && limits.length > 0))) return undefined;
  const supported = limits.length > 0 ? [...c.targets].sort((a, b) => gfxOrder(a) - gfxOrder(b)) : c.spec.targets.supported!;
  const list = supported.join(' ');
  const names = limits.map((l) => l.atom).join(', ');
  // Wrapped: a package limited by many dependencies would name them all on one line (ExcessiveLineLength).
  const said = `${names}, needed whatever USE says, ${limits.length > 1 ? 'are' : 'is'} built for these targets only`;
  const comment = limits.length > 0 ? wrapWords(said.split(/\s+/), 78).map((l) => `# ${l}`) : [];
  return [
    ...comment,
    `ROCM_SUPPORTED_TARGETS=( ${list} )`.length <= 80
      ? `ROCM_SUPPORTED_TARGETS=( ${list} )`
      : ['ROCM_SUPPORTED_TARGETS=(', ...wrapWords(supported, 72).map((l) => `\t${l}`), ')'].join('\n'),
  ].join('\n');
}

/** Eclasses defining the helpers called from values (CMake defines, globals): inheriting them pulls the helper in. */
function helperEclasses(spec: Spec): string[] {
  const values: string[] = [];
  const collect = (v: DefineValue | undefined) => {
    if (typeof v === 'string') values.push(v);
  };
  Object.values(spec.cmake?.defines ?? {}).forEach(collect);
  (spec.cmake?.when ?? []).forEach((w) => Object.values(w.defines).forEach(collect));
  Object.values(spec.globals ?? {}).forEach((v) => collect(v));
  const eclasses: string[] = [];
  for (const v of values) {
    for (const h of helpersUsed(v)) {
      const eclass = ALLOWED_HELPERS[h];
      if (eclass === 'multiprocessing' || eclass === 'ffmpeg-compat') eclasses.push(eclass);
    }
  }
  return eclasses;
}

/** IUSE, sorted by flag name; `test` only when tests run and no eclass adds it. */
function useFlags(spec: Spec, ownTestFlag: boolean): string[] {
  const iuse: string[] = [];
  for (const [flag, f] of Object.entries(spec.use ?? {})) iuse.push(`${f.default ? '+' : ''}${flag}`);
  if (ownTestFlag) iuse.push('test');
  iuse.sort((a, b) => byCodePoint(a.replace(/^\+/, ''), b.replace(/^\+/, '')));
  return iuse;
}

/** REQUIRED_USE: the eclasses' own constraints (GPU targets, Python), the spec's, and flag limits. */
function requiredUseLines(c: ResolvedComponent, gpuMode: boolean): string[] {
  const spec = c.spec;
  const requiredUse: string[] = [];
  if (gpuMode) {
    const when = spec.targets.required_use_when;
    if (when) requiredUse.push(...when.map((w) => `${w}? ( \${ROCM_REQUIRED_USE} )`));
    else requiredUse.push('${ROCM_REQUIRED_USE}');
  }
  if (spec.python && ['python-single-r1', 'python-r1', 'distutils-r1'].includes(spec.python.eclass)) {
    const w = spec.python.when;
    requiredUse.push(w ? `${w}? ( \${PYTHON_REQUIRED_USE} )` : '${PYTHON_REQUIRED_USE}');
  }
  requiredUse.push(...(spec.required_use ?? []).flatMap((r) => wrapUseExpression(r, 1)));
  requiredUse.push(...flagLimitClauses(c).flatMap((r) => wrapUseExpression(r, 1)));
  return requiredUse;
}

/**
 * Accepted QA findings, said where a reviewer meets them, as ::gentoo's
 * "# pkgcheck warning: RequiredUseDefaults" above REQUIRED_USE.
 */
function acceptedQaComments(spec: Spec): Pick<EbuildContext, 'requiredUseComment' | 'acceptedComment' | 'licenseComment'> {
  const requiredUseComment: string[] = [];
  const acceptedComment: string[] = [];
  const licenseComment: string[] = [];
  for (const a of spec.qa?.accept ?? []) {
    // NonFreeLicense is our keyword (pkgcheck has none): the reason goes above LICENSE.
    if (a.keyword === 'NonFreeLicense') {
      licenseComment.push(...wrapWords(`Not in @FREE (users add it to ACCEPT_LICENSE): ${a.reason}`.split(/\s+/), 76));
      continue;
    }
    // UseChangeNeeded is ours too: Portage, not pkgcheck, stops there.
    const said =
      a.keyword === 'UseChangeNeeded'
        ? `Portage asks users to enable a flag of a ::gentoo package (UseChangeNeeded): ${a.reason}`
        : `pkgcheck ${a.keyword} is expected: ${a.reason}`;
    const lines = wrapWords(said.split(/\s+/), 76);
    (a.keyword === 'RequiredUseDefaults' ? requiredUseComment : acceptedComment).push(...lines);
  }
  return { requiredUseComment, acceptedComment, licenseComment };
}

/**
 * Globals: those eclasses read while inheriting go before inherit (`beforeInherit`, to be
 * put in front of the other pre-inherit lines), the rest after the dependencies.
 */
function placedGlobals(spec: Spec): { beforeInherit: string[]; globals: string[] } {
  const beforeInherit: string[] = [];
  const globals: string[] = [];
  if (spec.cmake?.build_type) globals.push(`CMAKE_BUILD_TYPE=${spec.cmake.build_type}`);
  for (const [k, v] of Object.entries(spec.globals ?? {})) {
    const line = `${k}=${bashWord(v)}`;
    if (PRE_INHERIT_GLOBALS.has(k)) beforeInherit.unshift(line);
    else globals.push(line);
  }
  return { beforeInherit, globals };
}

/**
 * pkg_setup's body: when several inherited eclasses export it, the last one would
 * silently win; call each, in the order their work depends on.
 */
function pkgSetupCalls(spec: Spec, inherit: Set<string>): string[] {
  const pkgSetup: string[] = [];
  const setupExporters = SETUP_ORDER.filter((e) => inherit.has(e));
  const pyWhen = spec.python?.when;
  const pySetup = spec.python && spec.python.eclass !== 'python-r1' && spec.python.eclass !== 'distutils-r1';
  if (setupExporters.length > 1 || (pySetup && pyWhen)) {
    for (const e of setupExporters) {
      const fn = `${e}_pkg_setup`;
      pkgSetup.push(pyWhen && e.startsWith('python-') ? `\tuse ${pyWhen} && ${fn}` : `\t${fn}`);
    }
  }
  return pkgSetup;
}

/** python_check_deps' body for python-any-r1: one python_has_version per USE condition. */
function pythonCheckDepLines(spec: Spec): string[] {
  const pythonCheckDeps: string[] = [];
  if (spec.python?.eclass !== 'python-any-r1' || (spec.python.deps ?? []).length === 0) return pythonCheckDeps;
  const groups = new Map<string, string[]>();
  for (const d of spec.python.deps!) {
    const when = d.when ?? '';
    groups.set(when, [...(groups.get(when) ?? []), `"${versioned(d.atom, d.version)}[\${PYTHON_USEDEP}]"`]);
  }
  for (const [when, atoms] of groups) {
    const indent = when ? '\t\t' : '\t';
    const oneLine = `${indent}python_has_version ${atoms.join(' ')} || return 1`;
    // Past one line, one atom per continued line.
    const check =
      oneLine.length <= 100
        ? [oneLine]
        : [`${indent}python_has_version \\`, ...atoms.map((a, i) => `${indent}\t${a}${i === atoms.length - 1 ? ' || return 1' : ' \\'}`)];
    if (when) pythonCheckDeps.push(`\tif ${useTest(when)}; then`, ...check, '\tfi');
    else pythonCheckDeps.push(...check);
  }
  return pythonCheckDeps;
}

/** src_configure's first lines: the compiler rocm.eclass sets up. */
function compilerSetupLines(spec: Spec): string[] {
  const compilerSetup: string[] = [];
  if (spec.compiler === 'hipcc') compilerSetup.push('\trocm_use_hipcc');
  if (spec.compiler === 'clang' || spec.compiler === 'hip-lang') compilerSetup.push('\trocm_use_clang');
  return compilerSetup;
}

/** mycmakeargs given whatever USE says: GPU targets, the spec's defines and flags. */
function cmakeArgLines(c: ResolvedComponent, gpuMode: boolean): string[] {
  const spec = c.spec;
  const cmakeArgs: string[] = [];
  if (gpuMode) {
    const flags = spec.targets.join ? `$(get_amdgpu_flags "${spec.targets.join}")` : '$(get_amdgpu_flags)';
    for (const v of spec.targets.cmake_vars ?? []) cmakeArgs.push(`-D${v}="${flags}"`);
    if (spec.compiler === 'hip-lang') cmakeArgs.push('-DCMAKE_HIP_ARCHITECTURES="$(get_amdgpu_flags ";")"');
  }
  for (const [name, value] of Object.entries(spec.cmake?.defines ?? {})) cmakeArgs.push(defineArg(name, value));
  cmakeArgs.push(...(spec.cmake?.flags ?? []));
  return cmakeArgs;
}

/** mycmakeargs added under a condition: a USE flag, or any of the GPU targets a define needs. */
function cmakeConditionals(c: ResolvedComponent): EbuildContext['cmakeConditional'] {
  const spec = c.spec;
  const cmakeConditional: EbuildContext['cmakeConditional'] = [];
  for (const w of spec.cmake?.when ?? []) {
    cmakeConditional.push({
      condition: [`if ${useTest(w.use)}; then`],
      args: Object.entries(w.defines).map(([n, v]) => defineArg(n, v)),
      ...(w.otherwise ? { otherwise: Object.entries(w.otherwise).map(([n, v]) => defineArg(n, v)) } : {}),
    });
  }
  for (const td of spec.cmake?.target_defines ?? []) {
    const hits = matchTargets(c.targets, td.if_any_target).sort((a, b) => gfxOrder(a) - gfxOrder(b));
    if (hits.length === 0) continue;
    cmakeConditional.push({
      condition: useChain(hits.map((t) => `amdgpu_targets_${t}`)),
      ...(td.reason ? { comment: td.reason } : {}),
      args: [`-D${td.name}=${bashWord(td.value)}`],
    });
  }
  return cmakeConditional;
}

/** src_test: its environment, how the tests are run, what is skipped. */
function testContext(spec: Spec, testsEnabled: boolean): EbuildContext['test'] {
  const tests = spec.tests;
  const env: string[] = [];
  for (const [k, v] of [...Object.entries(tests?.env ?? {}), ...Object.entries(tests?.command?.env ?? {})]) {
    // `local -x X="$(cmd)"` would hide cmd's failure (shellcheck SC2155).
    if (String(v).includes('$(')) env.push(`\tlocal -x ${k}`, `\t${k}=${bashWord(v)}`);
    else env.push(`\tlocal -x ${k}=${bashWord(v)}`);
  }
  let run = tests?.run ?? (spec.build === 'python' ? 'pytest' : spec.build === 'cmake' ? 'ctest' : 'default');
  if (tests?.command) run = 'command';
  return {
    enabled: testsEnabled,
    gpu: Boolean(tests?.gpu),
    env,
    run,
    ...(tests?.jobs ? { jobs: tests.jobs } : {}),
    skip: (tests?.skip ?? []).map(bashLiteral),
    ...(tests?.command?.dir !== undefined ? { dir: bashWord(tests.command.dir) } : {}),
    ...(tests?.command ? { command: tests.command.argv.map(bashWord).join(' ') } : {}),
  };
}


/** Why SLOT names the release, not PV: the release holds the package at its own version. */
function heldComment(c: ResolvedComponent): string[] {
  const why = c.held?.reason ? `; ${c.held.reason.replace(/[.\s]+$/, '')}` : '';
  const said = `ROCm ${c.release} holds ${c.pn} at ${c.version}, its own version${why}. Built against the ${c.release} libraries, it takes their sub-slot.`;
  return wrapWords(said.split(/\s+/), 76);
}

/**
 * PATCHES: files shipped next to the manifest from ${FILESDIR}, upstream's
 * patches fetched by URL (those of this release) from ${DISTDIR}, each after
 * the comment saying what it fixes. The build system's default src_prepare
 * (cmake_src_prepare, distutils-r1's, default) applies them before the fix-ups.
 */
function patchLines(c: ResolvedComponent): string[] {
  return patchesOf(c.spec.patches, c.pn, c.version, c.release).flatMap((p) =>
    // The whole word quoted: no expansion of it is left for bash to split (shellcheck SC2206).
    p.kind === 'file' ? [...(p.reason ? [`# ${p.reason}`] : []), `"\${FILESDIR}/${p.file}"`] : [`# ${p.spec.reason}`, `"\${DISTDIR}/${p.spec.distfile}"`],
  );
}

/**
 * A REQUIRED_USE-style expression as lines: on one line when it fits within
 * 100 columns at this depth (a tab counts one), else each group on its own
 * lines with its flags filled up to that width, as ::gentoo wraps long ones.
 */
export function wrapUseExpression(expr: string, depth: number): string[] {
  const tokens = expr.trim().split(/\s+/);
  let pos = 0;
  type Node = string | { head: string; items: Node[] };
  const parse = (): Node[] => {
    const items: Node[] = [];
    while (pos < tokens.length && tokens[pos] !== ')') {
      const t = tokens[pos++]!;
      if (t === '(' || tokens[pos] === '(') {
        if (t !== '(') pos++;
        const group = { head: t === '(' ? '' : t, items: parse() };
        pos++;
        items.push(group);
      } else {
        items.push(t);
      }
    }
    return items;
  };
  const flat = (n: Node): string => (typeof n === 'string' ? n : `${n.head ? `${n.head} ` : ''}( ${n.items.map(flat).join(' ')} )`);
  const width = 100;
  // Plain flags share lines up to the width; each group starts its own.
  const lines = (items: Node[], level: number): string[] => {
    const out: string[] = [];
    let line = '';
    for (const item of items) {
      if (typeof item === 'string') {
        if (line && level + line.length + 1 + item.length > width) {
          out.push(line);
          line = '';
        }
        line = line ? `${line} ${item}` : item;
      } else {
        if (line) out.push(line);
        line = '';
        out.push(...format(item, level));
      }
    }
    if (line) out.push(line);
    return out;
  };
  const format = (n: Node, level: number): string[] => {
    const one = flat(n);
    if (typeof n === 'string' || level + one.length <= width) return [one];
    return [`${n.head ? `${n.head} ` : ''}(`, ...lines(n.items, level + 1).map((l) => `\t${l}`), ')'];
  };
  const items = parse();
  const whole = items.map(flat).join(' ');
  return depth + whole.length <= width ? [whole] : lines(items, depth);
}

/** A long "URL -> name" SRC_URI entry puts the arrow on its own line, as ::gentoo does. */
function wrapUri(uri: string): string {
  const [url, name] = uri.split(' -> ');
  return name !== undefined && uri.length > 100 ? `${url}\n\t-> ${name}` : uri;
}

function startsWith(all: DepEntry[], prefix: DepEntry[]): boolean {
  if (prefix.length > all.length) return false;
  return prefix.every((e, i) => all[i]!.text === e.text && all[i]!.when === e.when);
}

/** A command with file arguments; past 80 columns, one argument per continued line. */
function wrapWords(words: string[], width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const w of words) {
    if (line && line.length + w.length + 1 > width) {
      lines.push(line);
      line = w;
    } else {
      line = line ? `${line} ${w}` : w;
    }
  }
  if (line) lines.push(line);
  return lines;
}
