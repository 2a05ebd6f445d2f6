import { Flags } from '#oclif';
import { isVersion } from '../model/version.js';
import { createProgress as createDistfileProgress, mirrorsFromEnv, resolveDistdir } from '../distfiles/index.js';
import { GITHUB } from '../upstream/trees/locations.js';
import { upstreamCacheDir, TreeProvider } from '../upstream/trees/sources.js';
import { Deadline } from '../util/deadline.js';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';

/** Flags the `upstream` commands (and `bump --derive-from`) share. */
export const baseUrlFlag = Flags.string({
  description:
    'read repositories from here instead of https://github.com: a URL or directory the owner/name path is appended to, or a template with {owner} and {repo} (e.g. /srv/mirror/{owner}+{repo}.git); diff and patches then read the release tags from git instead of release tarballs',
  helpValue: 'URL',
});

export const timeoutFlag = Flags.integer({
  description: 'seconds the whole command may spend waiting on remotes (git and downloads together); what is not read by then is reported as not answered (default: no bound; a single git call is stopped after 120 s)',
  min: 1,
  helpValue: 'SECONDS',
});

/** What one git ls-remote or fetch may take when nothing bounds the whole. */
const PER_CALL_MS = 120_000;

/** The bound of a whole upstream command: --timeout seconds from now, or none (each call still stopped after 120 s). */
export function deadlineOf(seconds: number | undefined): Deadline {
  return new Deadline(seconds, PER_CALL_MS);
}

export const treeFlags = {
  'base-url': baseUrlFlag,
  distdir: Flags.string({ description: 'where release tarballs are found and downloaded to (default: $DISTDIR, else ~/.cache/rocm-ebuild/distfiles)', helpValue: 'DIR' }),
  offline: Flags.boolean({ description: 'download nothing: use only tarballs already in the distdir' }),
  mirror: Flags.string({
    description: 'a flat distfile mirror tried before upstream (repeat the flag for more; GENTOO_MIRRORS is honoured too)',
    multiple: true,
    multipleNonGreedy: true, // one value per --mirror, so the versions may follow it
    helpValue: 'URL',
  }),
  jobs: Flags.integer({ char: 'j', description: 'trees read (and downloads run) at once (default 2)', min: 1, max: 32 }),
  timeout: timeoutFlag,
};

export const formatFlag = Flags.string({ description: 'text for people, or markdown for a pull request (ignored with --json)', options: ['text', 'markdown'], default: 'text' });

export function requireVersion(v: string, what: string): string {
  if (!isVersion(v)) throw new UserError(`${what} ${JSON.stringify(v)} is not a release version such as 6.3.3`, ExitCode.invalidInput);
  return v;
}

/**
 * Where trees come from: git (with --base-url) or the release tarballs through
 * the distfiles engine. `timeout` is the upstream commands' --timeout, a
 * bound on the whole command; bump's --timeout means something else (the
 * idle time of one download attempt) and is passed as `attemptTimeout`.
 */
export function treeProvider(
  flags: { 'base-url'?: string; distdir?: string; offline: boolean; mirror?: string[]; jobs?: number },
  quiet: boolean,
  bounds: { deadline: Deadline; attemptTimeoutMs?: number },
): TreeProvider {
  const cacheDir = upstreamCacheDir();
  if (flags['base-url']) return new TreeProvider({ kind: 'git', baseUrl: flags['base-url'], cacheDir, deadline: bounds.deadline });
  // An attempt never outlasts the whole.
  const whole = bounds.deadline.seconds === undefined ? undefined : bounds.deadline.seconds * 1000;
  const attempt = bounds.attemptTimeoutMs !== undefined && whole !== undefined ? Math.min(bounds.attemptTimeoutMs, whole) : (bounds.attemptTimeoutMs ?? whole);
  return new TreeProvider({
    kind: 'archive',
    distdir: resolveDistdir(flags.distdir),
    offline: flags.offline,
    mirrors: [...(flags.mirror ?? []), ...mirrorsFromEnv()],
    ...(flags.jobs !== undefined ? { jobs: flags.jobs } : {}),
    ...(attempt !== undefined ? { timeoutMs: attempt } : {}),
    deadline: bounds.deadline,
    progress: createDistfileProgress({ quiet }),
    cacheDir,
  });
}

export { GITHUB };
