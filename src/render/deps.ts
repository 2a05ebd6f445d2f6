import type { DepClass, DepSpec } from '../manifest/types.js';
import type { ResolvedComponent, StackModel } from '../model/resolve.js';
import { singleQuoted } from '../model/bash-value.js';

/** One rendered dependency with the USE condition that guards it. */
export interface DepEntry {
  text: string;
  when?: string;
}

export const DEP_CLASSES: DepClass[] = ['RDEPEND', 'DEPEND', 'BDEPEND', 'PDEPEND', 'IDEPEND'];

/**
 * The USE dependency tying a GPU dependency to the consumer's targets.
 * ${ROCM_USEDEP} names every target of the consumer; when the dependency
 * offers fewer (a subset library), those it lacks could never be satisfied
 * (pkgcheck's NonsolvableDeps), so only the targets both have are tied.
 */
export function gpuUseDep(consumer: ResolvedComponent | undefined, dep: ResolvedComponent | undefined): string[] {
  if (!consumer || !dep || consumer.targets.every((t) => dep.targets.includes(t))) return ['${ROCM_USEDEP}'];
  return consumer.targets
    .filter((t) => dep.targets.includes(t))
    .sort((a, b) => gfxOrder(a) - gfxOrder(b))
    .map((t) => `amdgpu_targets_${t}(-)?`);
}

/** gfx<major><minor><stepping> (minor and stepping one hex digit each) in the eclass table's order. */
export function gfxOrder(target: string): number {
  const m = /^gfx(\d+)([0-9a-f])([0-9a-f])$/.exec(target);
  return m ? Number(m[1]) * 256 + parseInt(m[2]!, 16) * 16 + parseInt(m[3]!, 16) : Number.MAX_SAFE_INTEGER;
}

/** The dependency atom as it appears in the ebuild. */
export function depAtom(d: DepSpec, model: StackModel, consumer?: ResolvedComponent): string {
  const inStack = model.byAtom.has(d.atom);
  const blocker = d.blocker === 'strong' ? '!!' : d.blocker === 'weak' ? '!' : '';
  const atom = versioned(d.atom, d.version);
  // Stack packages move in lock-step: by default bind to this release's slot.
  const slot = d.slot ?? (inStack && !d.version && !d.blocker ? 'same' : 'any');
  const slotText = slot === 'any' ? '' : slot === 'same' ? ':${SLOT}' : `:${slot}`;
  const use = [...(d.gpu ? gpuUseDep(consumer, model.byAtom.get(d.atom)) : []), ...(d.use ?? [])];
  return `${blocker}${atom}${slotText}${use.length ? `[${use.join(',')}]` : ''}`;
}

/** Collects each class's entries in manifest order. */
export function collectDeps(c: ResolvedComponent, model: StackModel, llvmCompat: boolean): Map<DepClass, DepEntry[]> {
  const out = new Map<DepClass, DepEntry[]>(DEP_CLASSES.map((k) => [k, []]));
  const add = (classes: DepClass[], entry: DepEntry) => {
    for (const k of classes) out.get(k)!.push(entry);
  };

  const python = c.spec.python;
  if (python) {
    const pyWhen = python.when;
    const pyDeps = python.deps ?? [];
    switch (python.eclass) {
      case 'python-single-r1': {
        add(['RDEPEND', 'DEPEND'], { text: '${PYTHON_DEPS}', ...(pyWhen ? { when: pyWhen } : {}) });
        for (const d of pyDeps) {
          add(d.classes, { text: `$(python_gen_cond_dep ${singleQuoted(pyAtom(d.atom, d.version))})`, ...whenOf(d.when ?? pyWhen) });
        }
        break;
      }
      case 'python-r1':
        add(['RDEPEND', 'DEPEND'], { text: '${PYTHON_DEPS}', ...(pyWhen ? { when: pyWhen } : {}) });
        for (const d of pyDeps) add(d.classes, { text: pyAtom(d.atom, d.version), ...whenOf(d.when ?? pyWhen) });
        break;
      case 'python-any-r1': {
        // python_gen_any_dep brings the interpreter with the modules; ${PYTHON_DEPS}
        // is needed only where no unconditional module dependency does that.
        if (!pyDeps.some((d) => !d.when)) add(['BDEPEND'], { text: '${PYTHON_DEPS}', ...whenOf(pyWhen) });
        const groups = new Map<string, string[]>();
        for (const d of pyDeps) {
          const when = d.when ?? pyWhen ?? '';
          groups.set(when, [...(groups.get(when) ?? []), pyAtom(d.atom, d.version)]);
        }
        for (const [when, atoms] of groups) add(['BDEPEND'], { text: generator('python_gen_any_dep', atoms), ...whenOf(when || undefined) });
        break;
      }
      case 'distutils-r1':
        // distutils-r1 adds ${PYTHON_DEPS} itself.
        for (const d of pyDeps) add(d.classes, { text: pyAtom(d.atom, d.version), ...whenOf(d.when) });
        break;
    }
  }

  if (c.spec.llvm && llvmCompat) {
    // One llvm_gen_dep per set of classes and USE condition.
    const groups = new Map<string, { classes: DepClass[]; when?: string; atoms: string[] }>();
    for (const d of c.spec.llvm.deps) {
      const key = `${d.classes.join(' ')}|${d.when ?? ''}`;
      const g = groups.get(key) ?? { classes: d.classes, ...whenOf(d.when), atoms: [] };
      g.atoms.push(`${d.atom}:\${LLVM_SLOT}${d.slot_op === false ? '' : '='}`);
      groups.set(key, g);
    }
    for (const g of groups.values()) {
      add(g.classes, { text: generator('llvm_gen_dep', g.atoms), ...whenOf(g.when) });
    }
  }

  for (const d of c.spec.deps ?? []) add(d.classes, { text: depAtom(d, model, c), ...whenOf(d.when) });
  return out;
}

/**
 * An eclass dependency generator call; past one short line, one atom per
 * line as ::gentoo writes them (a line stays within 120 characters).
 */
function generator(fn: string, atoms: string[]): string {
  const one = `$(${fn} ${singleQuoted(atoms.join(' '))})`;
  if (one.length <= 90) return one;
  return `$(${fn} ${singleQuoted(`\n${atoms.map((a) => `\t${a}`).join('\n')}\n`)})`;
}

/** ">=1.2" on cat/pkg gives ">=cat/pkg-1.2". */
export function versioned(atom: string, version: string | undefined): string {
  if (!version) return atom;
  const m = /^(>=|<=|>|<|~|=)(.*)$/.exec(version)!;
  return `${m[1]}${atom}-${m[2]}`;
}

function pyAtom(atom: string, version?: string): string {
  return `${versioned(atom, version)}[\${PYTHON_USEDEP}]`;
}

function whenOf(when: string | undefined): { when?: string } {
  return when ? { when } : {};
}

/**
 * Lines of one dependency variable: unconditional entries first, then one
 * `flag? ( … )` group per condition, in the order conditions first appear.
 */
export function depLines(entries: DepEntry[]): string[] {
  const seen = new Set<string>();
  const unique = entries.filter((e) => {
    const k = `${e.when ?? ''}\u0000${e.text}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
  // An entry may span lines (a long generator call); each line is indented alike.
  const lines = unique.filter((e) => !e.when).flatMap((e) => e.text.split('\n'));
  const groups = new Map<string, string[]>();
  for (const e of unique.filter((x) => x.when)) groups.set(e.when!, [...(groups.get(e.when!) ?? []), e.text]);
  for (const [when, texts] of groups) {
    if (texts.length === 1 && !texts[0]!.includes('\n') && `${when}? ( ${texts[0]} )`.length <= 72) lines.push(`${when}? ( ${texts[0]} )`);
    else lines.push(`${when}? (`, ...texts.flatMap((t) => t.split('\n')).map((t) => `\t${t}`), ')');
  }
  return lines;
}
