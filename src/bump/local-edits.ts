import { mergeTexts, unifiedDiff } from '../git/text-merge.js';

/**
 * Whether an ebuild in the overlay is what rocm-ebuild generated for it, and
 * carrying a maintainer's changes to it onto a new text. The base is the
 * generated text the record holds (git/generated-record.ts); without one, a
 * fresh render of the same release can still prove an ebuild untouched, but
 * not tell a hand edit from an older manifest.
 */

export type LocalState =
  | { kind: 'none' }
  /** Changed by hand: `diff` is from what was generated (`base`) to what is committed. */
  | { kind: 'edited'; base: string; diff: string }
  /** Differs from a fresh render and no record says what was generated: hand edit or older manifest, bump cannot tell. */
  | { kind: 'unknown'; diff: string; why: string };

const COPYRIGHT = /^# Copyright [^\n]*\n/;

/** The text without its copyright line: a year moving is no local change. */
function body(text: string): string {
  return text.replace(COPYRIGHT, '');
}

export function sameButYear(a: string, b: string): boolean {
  return body(a) === body(b);
}

/** The year the ebuild's copyright line ends with, if it has the usual one. */
export function copyrightYear(text: string): number | undefined {
  const m = /^# Copyright (?:\d{4}-)?(\d{4}) /.exec(text);
  return m ? Number(m[1]) : undefined;
}

export async function localState(
  committed: string,
  recorded: string | undefined,
  regenerated: string | undefined,
  label: string,
): Promise<LocalState> {
  if (recorded !== undefined) {
    if (sameButYear(committed, recorded)) return { kind: 'none' };
    return { kind: 'edited', base: recorded, diff: await unifiedDiff(recorded, committed, { before: `${label} (generated)`, after: `${label} (committed)` }) };
  }
  if (regenerated !== undefined && sameButYear(committed, regenerated)) return { kind: 'none' };
  return {
    kind: 'unknown',
    diff: regenerated !== undefined ? await unifiedDiff(regenerated, committed, { before: `${label} (generated now)`, after: `${label} (committed)` }) : '',
    why:
      regenerated === undefined
        ? 'the stack manifest does not generate this version, and no record says what was generated for it'
        : 'no record of what rocm-ebuild generated for it (written by hand, by an older rocm-ebuild, or in another clone): a hand edit and a change of the stack manifest look the same',
  };
}

export interface Carried {
  text: string;
  conflicts: number;
}

/**
 * The maintainer's change (base → committed) applied to `next`, git's
 * three-way merge. The copyright line is `next`'s whatever the others say.
 */
export async function carryForward(state: Extract<LocalState, { kind: 'edited' }>, committed: string, next: string, labels: { from: string; to: string }): Promise<Carried> {
  const line = COPYRIGHT.exec(next)?.[0];
  const withLine = (t: string) => (line !== undefined && COPYRIGHT.test(t) ? t.replace(COPYRIGHT, line) : t);
  const r = await mergeTexts(withLine(state.base), next, withLine(committed), {
    base: `${labels.from} as generated`,
    ours: `${labels.to} as generated`,
    theirs: `${labels.from} as committed`,
  });
  return { text: r.text, conflicts: r.conflicts };
}
