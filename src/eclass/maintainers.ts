/** A maintainer as metadata.xml names one (stack.yaml's defaults.maintainers, the overlay's setting). */
export interface EclassMaintainer {
  email: string;
  name?: string;
}

const BLOCK = /^# @MAINTAINER:\n(?:# (?!@)[^\n]*\n)*/m;

/**
 * rocm.eclass as an overlay carries it: its @MAINTAINER block names whoever
 * maintains that overlay (the maintainers its metadata.xml files name, with
 * the real addresses the user set), not the project's own default. Nothing
 * else changes, so the eclass's code stays the one the ebuilds are
 * generated for.
 */
export function eclassForMaintainers(text: string, maintainers: readonly EclassMaintainer[]): string {
  if (maintainers.length === 0 || !BLOCK.test(text)) return text;
  const lines = maintainers.map((m) => `# ${m.name ? `${m.name} <${m.email}>` : m.email}\n`);
  return text.replace(BLOCK, () => `# @MAINTAINER:\n${lines.join('')}`);
}

/** `ours` with the @MAINTAINER block of `theirs` (when both have one): an overlay's update keeps who maintains its copy. */
export function withMaintainersOf(ours: string, theirs: string): string {
  const block = BLOCK.exec(theirs);
  if (!block || !BLOCK.test(ours)) return ours;
  return ours.replace(BLOCK, () => block[0]);
}

/** Whether two copies of rocm.eclass differ in more than who maintains them. */
export function sameEclassCode(a: string, b: string): boolean {
  const strip = (t: string) => t.replace(BLOCK, '# @MAINTAINER:\n');
  return strip(a) === strip(b);
}
