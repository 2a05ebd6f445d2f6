/**
 * How much of the slow, data-driven tests a run covers. By default a run checks a deterministic
 * sample (what CI runs: its time must not grow with every release the manifest gains), chosen by
 * a seed that the run prints so a failure can be replayed; ROCM_EBUILD_TEST_FULL=1 checks
 * everything. docs/testing.md says which tests sample and how.
 *
 *   ROCM_EBUILD_TEST_FULL=1     every release, every case
 *   ROCM_EBUILD_TEST_SEED=N     another sample (default 1), e.g. the one a failing run printed
 */
export const FULL = process.env.ROCM_EBUILD_TEST_FULL === '1';

const seedText = process.env.ROCM_EBUILD_TEST_SEED;
export const SEED = seedText !== undefined && /^\d+$/.test(seedText) ? Number(seedText) : 1;

/** mulberry32: a small, well-mixed 32-bit generator; the same seed gives the same sequence on every Node. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A number from a label, so that each sampled test draws its own sequence from the one seed. */
function mix(label: string): number {
  let h = 2166136261;
  for (const ch of label) h = Math.imul(h ^ ch.codePointAt(0)!, 16777619);
  return (h ^ SEED) >>> 0;
}

/** `count` items of `items` (all of them with FULL, or when there are no more), in their order. */
export function sample<T>(items: readonly T[], count: number, label: string): T[] {
  if (FULL || items.length <= count) return [...items];
  const next = random(mix(label));
  const picked = new Set<number>();
  while (picked.size < count) picked.add(Math.floor(next() * items.length));
  return items.filter((_, i) => picked.has(i));
}

/** A release's family: its series, "6.2" for 6.2.2, "10.0" for 10.0.1. */
export function family(version: string): string {
  return version.split('.').slice(0, 2).join('.');
}

/**
 * The releases a per-release check runs on: one of each family (drawn by the seed), plus those
 * the test names because it asserts something of them; every release with FULL.
 */
export function releaseSample(releases: readonly string[], label: string, pinned: readonly string[] = []): string[] {
  if (FULL) return [...releases];
  const families = new Map<string, string[]>();
  for (const r of releases) families.set(family(r), [...(families.get(family(r)) ?? []), r]);
  const chosen = new Set(pinned.filter((p) => releases.includes(p)));
  for (const [name, members] of families) {
    if (members.some((m) => chosen.has(m))) continue;
    chosen.add(sample(members, 1, `${label} ${name}`)[0]!);
  }
  return releases.filter((r) => chosen.has(r));
}
