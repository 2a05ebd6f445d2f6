import { createHash, randomBytes } from 'node:crypto';
import { accessSync, constants, promises as fs, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { cacheDisabled, cacheHome } from '../util/cache-home.js';

/**
 * Findings of a checker that is a function of one file's text and its own
 * arguments (shellcheck reading an ebuild alone, no sourced files), kept
 * between runs: bump checks the 49 ebuilds it writes, lint and `pr check`
 * the same ones again, and shellcheck takes about 30 ms of CPU per ebuild
 * where reading a stored answer takes a fraction of one.
 *
 * The key is everything the answer depends on: the program (its resolved
 * path, size, modification time and inode, so an upgrade or another binary
 * first on PATH is a miss), its arguments, and the text. One small file per
 * text under $XDG_CACHE_HOME/rocm-ebuild/<tool>/, written to a temporary name
 * and renamed, so a concurrent run reads a whole entry or none; an entry that
 * does not parse is a miss and is written again. ROCM_EBUILD_NO_CACHE turns it
 * off, like every cache of checked results.
 */

/** Entries kept per tool; beyond this the oldest go (ebuild texts of releases long bumped). */
const MAX_ENTRIES = 20_000;
/** A temporary file older than this was left by a killed run, not a write in progress. */
const STALE_TMP_MS = 10 * 60 * 1000;

/** The program `name` as PATH finds it, identified by what an upgrade changes; undefined when not found. */
export function programIdentity(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const file = path.join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      const real = realpathSync(file);
      const st = statSync(real);
      if (!st.isFile()) continue;
      return `${file}\0${real}\0${st.size}\0${st.mtimeMs}\0${st.ino}`;
    } catch {
      // Not here: PATH's next directory.
    }
  }
  return undefined;
}

function entryFile(dir: string, identity: string, args: readonly string[], text: string): string {
  const h = createHash('sha256').update(identity).update('\0').update(JSON.stringify(args)).update('\0').update(text);
  return path.join(dir, `${h.digest('hex').slice(0, 40)}.json`);
}

/**
 * `check` run on those of `texts` whose answer is not stored, the stored
 * answers for the others, in the order of `texts`. `check` gets the texts to
 * check and returns one answer per text, in their order.
 */
export async function cachedPerText<T>(
  tool: string,
  args: readonly string[],
  texts: readonly string[],
  check: (texts: string[]) => Promise<T[]>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<T[]> {
  const identity = cacheDisabled(env) ? undefined : programIdentity(tool, env);
  if (identity === undefined) return check([...texts]);
  const dir = path.join(cacheHome(env), tool);
  const files = texts.map((t) => entryFile(dir, identity, args, t));
  const stored = await Promise.all(
    files.map(async (f) => {
      try {
        return { answer: JSON.parse(await fs.readFile(f, 'utf8')) as T };
      } catch {
        return undefined; // none yet, or damaged: checked again and replaced
      }
    }),
  );
  const missing = texts.map((_, i) => i).filter((i) => stored[i] === undefined);
  if (missing.length === 0) return stored.map((s) => s!.answer);
  const answers = await check(missing.map((i) => texts[i]!));
  const out = stored.map((s) => s?.answer);
  missing.forEach((i, k) => (out[i] = answers[k]));
  await store(dir, missing.map((i, k) => ({ file: files[i]!, answer: answers[k] })));
  return out as T[];
}

async function store(dir: string, entries: { file: string; answer: unknown }[]): Promise<void> {
  try {
    await fs.mkdir(dir, { recursive: true });
    const suffix = `${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    await Promise.all(
      entries.map(async ({ file, answer }) => {
        const tmp = `${file}.${suffix}`;
        await fs.writeFile(tmp, JSON.stringify(answer));
        await fs.rename(tmp, file);
      }),
    );
    await prune(dir);
  } catch {
    // A cache that cannot be written (read-only home, full disk) only costs the next run the check.
  }
}

/** Drop the oldest entries beyond MAX_ENTRIES, and temporary files a killed run left once they are old. */
async function prune(dir: string): Promise<void> {
  const names = await fs.readdir(dir);
  const now = Date.now();
  const tmps = names.filter((n) => n.endsWith('.tmp'));
  for (const f of tmps) {
    const st = await fs.stat(path.join(dir, f)).catch(() => undefined);
    if (st && now - st.mtimeMs > STALE_TMP_MS) await fs.rm(path.join(dir, f), { force: true });
  }
  const entries = names.filter((n) => n.endsWith('.json'));
  if (entries.length <= MAX_ENTRIES) return;
  const aged = await Promise.all(entries.map(async (f) => ({ f, t: (await fs.stat(path.join(dir, f)).catch(() => undefined))?.mtimeMs ?? 0 })));
  aged.sort((a, b) => a.t - b.t);
  // Down to three quarters, so the next misses do not walk the directory again at once.
  for (const { f } of aged.slice(0, entries.length - Math.floor(MAX_ENTRIES * 0.75))) await fs.rm(path.join(dir, f), { force: true });
}
