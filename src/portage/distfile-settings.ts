import { checkDistdir, mirrorsFromEnv, resolveDistdir } from '../distfiles/index.js';
import { portageSettings } from './settings.js';

/** Where distfiles go and which mirrors come first, and where each came from (bump prints it once). */
export interface DistfileSettings {
  distdir: string;
  /** "--distdir", "DISTDIR from the environment", "DISTDIR from portageq", "DISTDIR from /etc/portage/make.conf:3", … */
  distdirFrom: string;
  /** --mirror values first, then GENTOO_MIRRORS's (as distfiles directories). */
  mirrors: string[];
  mirrorsFrom: string;
}

/**
 * --distdir, else DISTDIR (the environment, else Portage's configuration),
 * else rocm-ebuild's cache; --mirror, then GENTOO_MIRRORS from the same
 * places. Portage is asked only for what the flags and the environment
 * leave open. The distdir is checked (a file, an unwritable directory) before
 * any work, unless `check` is false (a dry run uses none).
 */
export async function distfileSettings(
  flags: { distdir?: string | undefined; mirror?: string[] | undefined; offline?: boolean },
  options: { env?: NodeJS.ProcessEnv; check?: boolean; mirrors?: boolean } = {},
): Promise<DistfileSettings> {
  const env = options.env ?? process.env;
  const wanted = [...(flags.distdir ? [] : (['DISTDIR'] as const)), ...(options.mirrors === false ? [] : (['GENTOO_MIRRORS'] as const))];
  const portage = wanted.length > 0 ? await portageSettings(env, wanted) : { values: {}, source: 'flags' };
  const d = portage.values.DISTDIR;
  const distdir = flags.distdir ? resolveDistdir(flags.distdir, env) : d ? resolveDistdir(d.value, env) : resolveDistdir(undefined, { ...env, DISTDIR: '' });
  const distdirFrom = flags.distdir ? '--distdir' : d ? `DISTDIR from ${d.from}` : 'the default distdir (no DISTDIR in the environment or Portage\'s configuration)';
  const m = portage.values.GENTOO_MIRRORS;
  const mirrors = [...(flags.mirror ?? []), ...mirrorsFromEnv({ GENTOO_MIRRORS: m?.value ?? '' })];
  const mirrorsFrom = m ? `GENTOO_MIRRORS from ${m.from}` : flags.mirror?.length ? '--mirror' : 'none (upstream URLs only)';
  if (options.check !== false) await checkDistdir(distdir, { offline: flags.offline ?? false, source: distdirFrom });
  return { distdir, distdirFrom, mirrors, mirrorsFrom };
}
