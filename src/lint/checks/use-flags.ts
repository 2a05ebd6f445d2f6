import { profilePythonFlags, pythonCompat, pythonCompatUpdate, pythonRequiredUse } from '../python-compat.js';
import type { Check, EbuildFacts } from '../types.js';
import { USER_USE_EXPAND } from '../../model/use-flags.js';

/** Flags matching these come from eclasses we cannot enumerate here (profiles set them). */
const OPEN_ENDED = [/^python_targets_/, /^python_single_target_/, /^llvm_slot_/, /^llvm_targets_/];

const DEP_VARS = ['RDEPEND', 'DEPEND', 'BDEPEND', 'PDEPEND', 'IDEPEND', 'REQUIRED_USE', 'RESTRICT', 'SRC_URI', 'LICENSE'];

function known(f: EbuildFacts, flag: string): boolean {
  return f.iuse.has(flag) || OPEN_ENDED.some((re) => re.test(flag));
}

/** `flag? (` conditionals in dependency-style variables, with their lines. */
function conditionals(f: EbuildFacts): { flag: string; line: number }[] {
  const out: { flag: string; line: number }[] = [];
  for (const g of f.globals) {
    if (!DEP_VARS.includes(g.name)) continue;
    const base = g.line;
    g.value.split('\n').forEach((text, i) => {
      for (const m of text.matchAll(/(?:^|[\s(])!?([a-z0-9][a-z0-9+_@-]*)\?(?=\s)/g)) out.push({ flag: m[1]!, line: base + i });
    });
  }
  return out;
}

export const useFlagCheck: Check = {
  name: 'UseFlagsCheck',
  keywords: [
    { name: 'UnknownUseFlags', level: 'error', description: 'a USE flag is used that is not in IUSE' },
    { name: 'MissingTestRestrict', level: 'warning', description: 'IUSE has test but RESTRICT lacks !test? ( test )' },
    { name: 'RequiredUseDefaults', level: 'warning', description: 'the default USE flags do not satisfy REQUIRED_USE' },
    {
      name: 'UseExpandDefault',
      level: 'warning',
      description: 'IUSE gives a flag of a USE_EXPAND variable the user sets (VIDEO_CARDS, CPU_FLAGS_*, INPUT_DEVICES, L10N) a + default',
    },
  ],
  run(f) {
    const out = [];
    const reported = new Set<string>();
    const report = (flag: string, line: number, how: string) => {
      if (known(f, flag) || reported.has(flag)) return;
      reported.add(flag);
      out.push({ keyword: 'UnknownUseFlags', message: `${how} uses flag "${flag}" which is not in IUSE`, line });
    };
    for (const { flag, line } of conditionals(f)) report(flag, line, 'a conditional');
    for (const c of f.commands) {
      if (!['use', 'usex', 'usev', 'use_enable', 'use_with', 'in_iuse'].includes(c.name)) continue;
      const arg = c.node.namedChildren.find((n) => n && n.type !== 'command_name');
      if (arg && /^!?[a-z0-9][a-z0-9+_@-]*$/.test(arg.text)) report(arg.text.replace(/^!/, ''), c.line, c.name);
    }

    const ownIuse = f.globalMap.get('IUSE');
    for (const w of ownIuse?.value.split(/\s+/) ?? []) {
      const prefix = Object.keys(USER_USE_EXPAND).find((p) => w.startsWith(`+${p}`));
      if (!prefix) continue;
      out.push({
        keyword: 'UseExpandDefault',
        message: `IUSE enables ${w.slice(1)} by default: ${USER_USE_EXPAND[prefix]} is the user's (make.conf) and the profile's; drop the + and let REQUIRED_USE say what is needed`,
        line: ownIuse!.line,
      });
    }

    if (f.iuse.has('test') && !f.commands.some((c) => c.name === 'distutils_enable_tests')) {
      const restrict = f.globalMap.get('RESTRICT')?.value ?? '';
      if (!/!test\?\s*\(\s*test\s*\)/.test(restrict) && !/(^|\s)test(\s|$)/.test(restrict)) {
        out.push({ keyword: 'MissingTestRestrict', message: 'IUSE has test but RESTRICT lacks "!test? ( test )"', line: f.globalMap.get('IUSE')?.line });
      }
    }

    const required = f.globalMap.get('REQUIRED_USE');
    if (required) {
      // The python eclasses' REQUIRED_USE under the targets Gentoo's profiles
      // enable: a PYTHON_COMPAT without the default target cannot be merged.
      const compat = pythonCompat(f);
      const python = f.input.python && compat ? pythonRequiredUse(f, compat) : '';
      const expanded = required.value
        .replace(/\$\{ROCM_REQUIRED_USE\}/g, f.input.rocmRequiredUse ?? '')
        .replace(/\$\{PYTHON_REQUIRED_USE\}/g, python);
      const enabled = new Set([
        ...f.iuseDefaults,
        ...(f.input.python ? profilePythonFlags(f.input.python.default) : []),
        ...[...(f.input.profileFlags ?? [])].filter((flag) => f.iuse.has(flag)),
      ]);
      const problem = evaluateRequiredUse(expanded, enabled);
      if (problem) {
        out.push({ keyword: 'RequiredUseDefaults', message: `default USE flags fail REQUIRED_USE: ${problem}`, line: required.line });
      }
    }
    return out;
  },
};


/** A REQUIRED_USE item: a flag, a group (`||`, `^^`, `??`, plain parentheses) or a USE conditional. */
type RequiredUseNode = { flag: string } | { op: '||' | '^^' | '??' | '(' | 'cond'; token: string; items: RequiredUseNode[] };

/**
 * REQUIRED_USE texts parsed once: a package set asks the same few hundred
 * clauses again for every target and every round of its fixed point.
 */
const parsedRequiredUse = new Map<string, RequiredUseNode[]>();

function parseRequiredUse(text: string): RequiredUseNode[] {
  const known = parsedRequiredUse.get(text);
  if (known) return known;
  const tokens = text.split(/\s+/).filter(Boolean);
  let pos = 0;
  const group = (): RequiredUseNode[] => {
    const items: RequiredUseNode[] = [];
    while (pos < tokens.length && tokens[pos] !== ')') items.push(item());
    return items;
  };
  const item = (): RequiredUseNode => {
    const t = tokens[pos++]!;
    if (t === '||' || t === '^^' || t === '??' || t.endsWith('?')) {
      pos++; // (
      const items = group();
      pos++; // )
      return { op: t === '||' || t === '^^' || t === '??' ? t : 'cond', token: t, items };
    }
    if (t === '(') {
      const items = group();
      pos++;
      return { op: '(', token: t, items };
    }
    return { flag: t };
  };
  const top = group();
  if (parsedRequiredUse.size > 10_000) parsedRequiredUse.clear();
  parsedRequiredUse.set(text, top);
  return top;
}

function holdsUnder(n: RequiredUseNode, isOn: (flag: string) => boolean): boolean {
  if ('flag' in n) return isOn(n.flag);
  if (n.op === '(') return n.items.every((i) => holdsUnder(i, isOn));
  if (n.op === 'cond') return !isOn(n.token.slice(0, -1)) || n.items.every((i) => holdsUnder(i, isOn));
  const count = n.items.filter((i) => holdsUnder(i, isOn)).length;
  return n.op === '||' ? count >= 1 : n.op === '^^' ? count === 1 : count <= 1;
}

/** How an item is named in a report: a group whole, a conditional or parentheses by their first failing item. */
function describeItem(n: RequiredUseNode, isOn: (flag: string) => boolean): string {
  if ('flag' in n) return n.flag;
  if (n.op === '||' || n.op === '^^' || n.op === '??') return `${n.token} ( ${n.items.map((i) => describeItem(i, isOn)).join(' ')} )`;
  const bad = n.items.find((i) => !holdsUnder(i, isOn));
  if (n.op === '(') return bad ? describeItem(bad, isOn) : '( … )';
  return `${n.token} ( ${bad ? describeItem(bad, isOn) : ''} )`;
}

/**
 * Evaluate REQUIRED_USE (PMS 8.2.6) for a set of enabled flags. Returns the
 * first unsatisfied clause, or undefined when all hold.
 */
export function evaluateRequiredUse(text: string, enabled: Set<string>): string | undefined {
  const isOn = (flag: string) => (flag.startsWith('!') ? !enabled.has(flag.slice(1)) : enabled.has(flag));
  const bad = parseRequiredUse(text).find((i) => !holdsUnder(i, isOn));
  return bad ? describeItem(bad, isOn) : undefined;
}

export const pythonCompatCheck: Check = {
  name: 'PythonCompatCheck',
  keywords: [{ name: 'PythonCompatUpdate', level: 'info', description: 'PYTHON_COMPAT lacks a newer Python that Gentoo supports' }],
  run(f) {
    const compat = pythonCompat(f);
    if (!compat || !f.input.python) return [];
    const newer = pythonCompatUpdate(compat, f.input.python.current);
    if (newer.length === 0) return [];
    return [{ keyword: 'PythonCompatUpdate', message: `PYTHON_COMPAT update available: ${newer.join(', ')}`, line: f.globalMap.get('PYTHON_COMPAT')!.line }];
  },
};
