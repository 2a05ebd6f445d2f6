import { spawn } from 'node:child_process';
import type { OverlayRepo } from './repo.js';
import { gitEnvironment } from './run.js';

/**
 * What bump generated for each ebuild it wrote, kept in the overlay's git
 * repository on a ref of its own: a tree shaped like the overlay
 * (`sci-libs/rocBLAS/rocBLAS-6.2.2.ebuild` → the text exactly as rendered),
 * one commit per bump that wrote ebuilds.
 *
 * Why a ref and not a commit trailer or a note: it is keyed by the ebuild's
 * path, so a rebase, an amend or a cherry-pick of the package commits does
 * not lose it (notes hang on commit ids, which those change); nothing of it
 * is in any commit's message or tree, so a pull request to ::gentoo carries
 * none of it; it keeps the generated texts reachable, so a hand edit amended
 * into the tool's own commit still has its base; and it moves in the same
 * atomic ref transaction as the branch, so it never records a bump that did
 * not land. Its cost: a fresh clone lacks it (git fetches only branches and
 * tags) until it is fetched; without it, bump cannot tell a hand edit from an
 * older manifest, and asks. git's receive-pack refuses a one-level name under
 * refs/ ("funny refname"), so on a remote it lives at RECORD_REMOTE_REF:
 * `pr push` puts it there, and recordRefCommands say how to move it by hand.
 */
export const RECORD_REF = 'refs/rocm-ebuild-generated';
export const RECORD_REMOTE_REF = 'refs/meta/rocm-ebuild-generated';

/** The git commands that publish the record from the clone that has it, and fetch it into one that lacks it. */
export function recordRefCommands(dir: string, remote = 'origin'): { push: string; fetch: string } {
  const d = /^[A-Za-z0-9_./+-]+$/.test(dir) ? dir : `'${dir.replaceAll("'", "'\\''")}'`;
  return {
    push: `git -C <the clone that bumped> push ${remote} ${RECORD_REF}:${RECORD_REMOTE_REF}`,
    fetch: `git -C ${d} fetch ${remote} ${RECORD_REMOTE_REF}:${RECORD_REF}`,
  };
}

/** The record's commit, or undefined when the repository has none yet. */
export async function recordTip(repo: OverlayRepo): Promise<string | undefined> {
  return repo.head(RECORD_REF);
}

/**
 * The recorded texts of `paths` (relative, forward slashes) at `tip`; paths
 * the record does not hold are absent from the result.
 */
export async function readRecord(repo: OverlayRepo, tip: string | undefined, paths: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (!tip || paths.length === 0) return out;
  const wanted = new Set(paths);
  // ls-tree takes the package directories (a short argument list even for a whole stack), then filters.
  const dirs = [...new Set(paths.map((p) => p.split('/').slice(0, 2).join('/')))];
  const listing = await repo.raw(['ls-tree', '-r', '-z', '--full-tree', tip, '--', ...dirs]);
  const blobs: { path: string; id: string }[] = [];
  for (const entry of listing.split('\0')) {
    const m = /^\d+ blob ([0-9a-f]+)\t(.*)$/s.exec(entry);
    if (m && wanted.has(m[2]!)) blobs.push({ path: m[2]!, id: m[1]! });
  }
  const texts = await catBlobs(repo.dir, blobs.map((b) => b.id));
  blobs.forEach((b, i) => out.set(b.path, texts[i]!));
  return out;
}

/** The contents of blobs, in order, from one `git cat-file --batch`. */
function catBlobs(dir: string, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['cat-file', '--batch'], { cwd: dir, env: gitEnvironment(), stdio: ['pipe', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (d: Buffer) => chunks.push(d));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`git cat-file --batch failed (${code}): ${err.trim()}`));
      const all = Buffer.concat(chunks);
      const texts: string[] = [];
      let at = 0;
      for (const id of ids) {
        const nl = all.indexOf(10, at);
        const header = all.subarray(at, nl).toString();
        const m = /^([0-9a-f]+) blob (\d+)$/.exec(header);
        if (!m) return reject(new Error(`git cat-file --batch: unexpected answer for ${id}: ${header}`));
        const size = Number(m[2]);
        texts.push(all.subarray(nl + 1, nl + 1 + size).toString('utf8'));
        at = nl + 1 + size + 1;
      }
      resolve(texts);
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(`${ids.join('\n')}\n`);
  });
}
