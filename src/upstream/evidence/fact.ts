import type { EvidenceFact } from '../../manifest/types.js';

/** The facts `upstream evidence` checks, in the vocabulary's order. */
export const CHECKED_FACTS = ['sources', 'cmake', 'fixups', 'offline'] as const satisfies readonly EvidenceFact[];
export type CheckedFact = (typeof CHECKED_FACTS)[number];

/**
 * held: checked and true. failed: checked and false (the data must change).
 * unchecked: could not be decided mechanically here (the reason says why).
 * unreadable: a tree could not be read (network, missing repository), or the
 * reading cannot tell (a download behind a condition configure computes).
 */
export type FactStatus = 'held' | 'failed' | 'unchecked' | 'unreadable';

export interface FactDetail {
  /** What was checked: a source, a -D name, a fix-up on a file. */
  subject: string;
  status: FactStatus;
  reason: string;
}

export interface FactCheck {
  fact: CheckedFact;
  status: FactStatus;
  /** One line: why it holds or the first reason it does not. */
  reason: string;
  details: FactDetail[];
}

