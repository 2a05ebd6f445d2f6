/**
 * The hand edits a commit says it carried into the ebuild it writes: bump's
 * message says "Keeps the changes made by hand to 7.2.2, merged into the
 * generated text:" above the changed lines, and a reviewer takes a dropped
 * version whose edits went along as such, not as changes that may be lost.
 * The message is read as text (wrapped lines joined), so a hand-written
 * commit saying the same is read the same.
 */
const CARRIED = /Keeps the changes made by hand to ([0-9][A-Za-z0-9._+-]*?),? merged into/g;

/** The versions (as the dropped ebuilds name them: "7.2.2", "7.2.0-r1") whose hand edits the message says were carried. */
export function carriedVersions(message: string): string[] {
  const text = message.replace(/\s+/g, ' ');
  return [...new Set([...text.matchAll(CARRIED)].map((m) => m[1]!))];
}
