/**
 * One package dependency atom (PMS 8.3): `!!>=cat/pkg-1.2*:0/7.2=[a,b(-)?]`.
 * Every reader of dependency text (bump's and lint's overlay checks, lint's
 * USE-dependency checks, the package-set check) reads atoms with this one
 * parser, so they agree on what an atom is: a word one of them accepts and
 * another skips would be checked by one and silently passed by the other.
 */
export interface Atom {
  blocker: '' | '!' | '!!';
  /** The version operator, '' when there is none. */
  op: '' | '<' | '<=' | '=' | '~' | '>=' | '>';
  /** category/package. */
  key: string;
  /** With its revision, when the atom names a version. */
  version?: string;
  /** `=cat/pkg-1.2*`. */
  glob: boolean;
  slot?: string;
  subslot?: string;
  /** `:=` / `:0=` (rebuild on a subslot change) or `:*`. */
  slotOp?: '=' | '*';
  /** The USE dependencies as written, one per comma-separated entry. */
  use: string[];
}

// The package name is matched lazily, so that `-1.2` after it is read as a version (PMS 3.1.2:
// a package name does not end in a hyphen and a valid version). The version is PMS 3.2's.
const ATOM_RE =
  /^(!!?)?(<=|>=|<|>|=|~)?([A-Za-z0-9_][A-Za-z0-9+_.-]*\/[A-Za-z0-9_][A-Za-z0-9+_-]*?)(?:-(\d+(?:\.\d+)*[a-z]?(?:_(?:alpha|beta|pre|rc|p)\d*)*(?:-r\d+)?)(\*)?)?(?::(?:(\*)|([A-Za-z0-9_][A-Za-z0-9+_.-]*)?(?:\/([A-Za-z0-9_][A-Za-z0-9+_.-]*))?(=)?))?(?:\[([^\]]*)\])?$/;

/** The atom a word of dependency text is, or undefined when it is not one (a group, a USE conditional, unexpanded text). */
export function parseAtom(word: string): Atom | undefined {
  const m = ATOM_RE.exec(word);
  if (!m) return undefined;
  const [, blocker = '', op = '', key, version, glob, star, slot, subslot, equals, use] = m;
  // A version needs an operator and an operator a version (`>=cat/pkg` and `cat/pkg-1` are not atoms).
  if (Boolean(op) !== Boolean(version)) return undefined;
  if (glob && op !== '=') return undefined;
  if (word.includes(':') && !star && !slot && !equals) return undefined;
  return {
    blocker: blocker as Atom['blocker'],
    op: op as Atom['op'],
    key: key!,
    ...(version ? { version } : {}),
    glob: Boolean(glob),
    ...(slot ? { slot } : {}),
    ...(subslot ? { subslot } : {}),
    ...(star ? { slotOp: '*' as const } : equals ? { slotOp: '=' as const } : {}),
    use: use ? use.split(',') : [],
  };
}

/**
 * The atom of a word as an ebuild writes it, `${SLOT}` or `${PV}` still in its
 * version or slot (`dev-util/hip:${SLOT}`), for readers that need only its key
 * and USE dependencies: the references are read as a literal there, and the
 * USE dependencies are kept as written (`[${ROCM_USEDEP}]`).
 */
export function parseAtomAsWritten(word: string): Atom | undefined {
  const bracket = word.indexOf('[');
  const head = bracket < 0 ? word : word.slice(0, bracket);
  const atom = parseAtom(head.replace(/\$\{[A-Za-z_]\w*\}/g, '0'));
  if (!atom || bracket < 0) return atom;
  if (!/^\[[^\]]*\]$/.test(word.slice(bracket))) return undefined;
  const use = word.slice(bracket + 1, -1);
  return { ...atom, use: use ? use.split(',') : [] };
}
