import { createHash } from 'node:crypto';

/**
 * Mirror layouts (GLEP 75). A mirror's distfiles directory may carry a
 * `layout.conf` whose [structure] section lists layouts by preference:
 *
 *   [structure]
 *   0=filename-hash BLAKE2B 8
 *   1=flat
 *
 * `filename-hash <algo> <cutoffs>` puts a file under directories named by the
 * leading hex digits of the digest of its *name*: cutoffs are bit counts
 * (multiples of 4) separated by ':'; with `BLAKE2B 8` the file `foo.tar.gz`
 * lives at `<first 2 hex of blake2b("foo.tar.gz")>/foo.tar.gz`. A mirror with
 * no layout.conf is flat. content-hash layouts cannot be addressed by name and
 * are skipped, as Portage does when fetching.
 */
export type MirrorLayout = { kind: 'flat' } | { kind: 'filename-hash'; algorithm: string; cutoffs: number[] };

const NODE_ALGORITHMS: { [gentooName: string]: string } = {
  BLAKE2B: 'blake2b512',
  BLAKE2S: 'blake2s256',
  SHA256: 'sha256',
  SHA512: 'sha512',
  SHA1: 'sha1',
  MD5: 'md5',
};

function parseLayout(value: string): MirrorLayout | undefined {
  const words = value.trim().split(/\s+/);
  if (words[0] === 'flat' && words.length === 1) return { kind: 'flat' };
  if (words[0] === 'filename-hash' && words.length === 3) {
    const algorithm = words[1]!;
    if (!NODE_ALGORITHMS[algorithm]) return undefined;
    const cutoffs = words[2]!.split(':').map((c) => (/^\d+$/.test(c) ? Number(c) : NaN));
    if (cutoffs.some((c) => !Number.isInteger(c) || c <= 0 || c % 4 !== 0)) return undefined;
    return { kind: 'filename-hash', algorithm, cutoffs };
  }
  return undefined;
}

/** The first layout of layout.conf's [structure] section that we can use; flat when none. */
export function parseLayoutConf(text: string): MirrorLayout {
  let section = '';
  const structure: [number, string][] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*/, '').trim();
    if (line === '') continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      section = header[1]!.trim();
      continue;
    }
    const kv = /^([^=]+)=(.*)$/.exec(line);
    if (section === 'structure' && kv && /^\d+$/.test(kv[1]!.trim())) structure.push([Number(kv[1]!.trim()), kv[2]!]);
  }
  for (const [, value] of structure.sort((a, b) => a[0] - b[0])) {
    const layout = parseLayout(value);
    if (layout) return layout;
  }
  return { kind: 'flat' };
}

/** The path of `name` under a mirror directory in `layout`. */
export function layoutPath(layout: MirrorLayout, name: string): string {
  if (layout.kind === 'flat') return encodeURIComponent(name);
  let digest = createHash(NODE_ALGORITHMS[layout.algorithm]!).update(name, 'utf8').digest('hex');
  let prefix = '';
  for (const bits of layout.cutoffs) {
    prefix += `${digest.slice(0, bits / 4)}/`;
    digest = digest.slice(bits / 4);
  }
  return prefix + encodeURIComponent(name);
}

export function mirrorFileUrl(mirror: string, layout: MirrorLayout, name: string): string {
  return `${mirror.replace(/\/+$/, '')}/${layoutPath(layout, name)}`;
}

/**
 * GENTOO_MIRRORS as the distfiles directories it names: Portage fetches from
 * `<mirror>/distfiles/`, where Gentoo mirrors keep their layout.conf.
 */
export function mirrorsFromEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  const value = env.GENTOO_MIRRORS ?? '';
  return value
    .split(/\s+/)
    // undici speaks HTTP(S) only: ftp:// and rsync:// entries are skipped.
    .filter((m) => /^https?:\/\//i.test(m))
    .map((m) => `${m.replace(/\/+$/, '')}/distfiles`);
}
