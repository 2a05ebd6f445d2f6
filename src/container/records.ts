/** What the container leaves in the report directory, parsed. */

/** One line of the status file: `step|atom|status|seconds|note`. */
export interface StatusRecord {
  step: 'setup' | 'gpu' | 'resolve' | 'deps' | 'atom' | string;
  atom: string;
  /** The exit status; null when the command was not run ("-"). */
  status: number | null;
  seconds: number;
  note: string;
}

export function parseStatus(text: string): StatusRecord[] {
  const out: StatusRecord[] = [];
  for (const line of text.split('\n')) {
    const parts = line.split('|');
    if (parts.length < 5 || !parts[0]) continue;
    const [step, atom, status, seconds, ...note] = parts;
    out.push({
      step: step!,
      atom: atom!,
      status: /^[0-9]+$/.test(status!) ? Number(status) : null,
      seconds: /^[0-9]+$/.test(seconds!) ? Number(seconds) : 0,
      note: note.join('|'),
    });
  }
  return out;
}

/** One line of the phases file: an ebuild phase starting (from bashrc) or a step of the script. */
export interface PhaseRecord {
  time: number;
  /** category/PN, or "-" for the script's step markers. */
  atom: string;
  /** EBUILD_PHASE, or "step:<name>" / "atom:<category/PN>". */
  phase: string;
}

export function parsePhases(text: string): PhaseRecord[] {
  const out: PhaseRecord[] = [];
  for (const line of text.split('\n')) {
    const m = /^([0-9]+) (\S+) (\S+)$/.exec(line.trim());
    if (m) out.push({ time: Number(m[1]), atom: m[2]!, phase: m[3]! });
  }
  return out;
}

/** The phases of each segment: "setup", "resolve", "deps", "atom:<category/PN>". */
export function phasesBySegment(records: readonly PhaseRecord[]): Map<string, PhaseRecord[]> {
  const out = new Map<string, PhaseRecord[]>();
  let current = 'setup';
  for (const r of records) {
    if (r.atom === '-') {
      current = r.phase.replace(/^step:/, '');
      out.set(current, out.get(current) ?? []);
      continue;
    }
    out.set(current, [...(out.get(current) ?? []), r]);
  }
  return out;
}

/** The console split by the script's `@@rocm-ebuild step|atom` markers, under the same segment names. */
export function splitConsole(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>([['setup', []]]);
  let current = 'setup';
  for (const line of text.split('\n')) {
    const m = /^@@rocm-ebuild (step|atom) (\S+)/.exec(line);
    if (m) {
      current = m[1] === 'atom' ? `atom:${m[2]}` : m[2]!;
      if (!out.has(current)) out.set(current, []);
      continue;
    }
    out.get(current)!.push(line);
  }
  return out;
}

/** category/PN and version of a CPV such as sci-libs/rocBLAS-6.2.2-r1. */
export function splitCpv(cpv: string): { atom: string; version: string } | undefined {
  const m = /^([A-Za-z0-9+_.-]+\/[A-Za-z0-9+_-]+?)-([0-9][0-9.]*[a-z]?(?:_(?:alpha|beta|pre|rc|p)[0-9]*)*(?:-r[0-9]+)?)$/.exec(cpv);
  return m ? { atom: m[1]!, version: m[2]! } : undefined;
}

/** A package emerge merged, or tried to, in one step. */
export interface Emerged {
  atom: string;
  version: string;
  binpkg: boolean;
  done: boolean;
  /** Set when emerge reported its failure, with the phase Portage named. */
  failedPhase?: string;
}

/**
 * The packages of an emerge run from its console: ">>> Emerging (1 of 9)
 * cat/pkg-1.0::repo" (or "Emerging binary"), ">>> Completed (…)", and the
 * failures Portage prints (" * ERROR: cat/pkg-1.0::repo failed (compile
 * phase):", ">>> Failed to emerge cat/pkg-1.0").
 */
export function emergedPackages(lines: readonly string[]): Emerged[] {
  const byCpv = new Map<string, Emerged>();
  const get = (cpv: string, binpkg = false): Emerged | undefined => {
    const known = byCpv.get(cpv);
    if (known) return known;
    const split = splitCpv(cpv);
    if (!split) return undefined;
    const e: Emerged = { ...split, binpkg, done: false };
    byCpv.set(cpv, e);
    return e;
  };
  for (const line of lines) {
    let m = /^>>> Emerging (binary )?\([0-9]+ of [0-9]+\) (\S+?)(?:::\S+)?$/.exec(line.trim());
    if (m) {
      const e = get(m[2]!, Boolean(m[1]));
      if (e && m[1]) e.binpkg = true;
      continue;
    }
    m = /^>>> Completed \([0-9]+ of [0-9]+\) (\S+?)(?:::\S+)?$/.exec(line.trim());
    if (m) {
      const e = get(m[1]!);
      if (e) e.done = true;
      continue;
    }
    m = /\* ERROR: (\S+?)(?:::\S+)? failed \(([a-z]+) phase\)/.exec(line);
    if (m) {
      const e = get(m[1]!);
      if (e) e.failedPhase = m[2]!;
      continue;
    }
    m = /^>>> Failed to emerge (\S+?)(?:::\S+)?(?:,|$)/.exec(line.trim());
    if (m) {
      const e = get(m[1]!);
      if (e && !e.failedPhase) e.failedPhase = 'unknown';
    }
  }
  return [...byCpv.values()];
}
