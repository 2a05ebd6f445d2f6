import { Args, Flags } from '#oclif';
import path from 'node:path';
import { BaseCommand } from '../cli/base-command.js';
import { CONFIG_DISPLAY, settingFlagOptions } from '../cli/user-defaults.js';
import { UserError } from '../cli/errors.js';
import { ExitCode } from '../cli/exit-codes.js';
import { loadManifestOrFail, manifestFlag } from '../cli/stack.js';
import { createProgress, describeProblems, prewarmHashWorkers } from '../distfiles/index.js';
import { distfileSettings } from '../portage/distfile-settings.js';
import { ManifestError } from '../manifest/issues.js';
import { knownReleases, packagesOfEveryRelease, releaseModel, resolveStack } from '../model/resolve.js';
import { compareVersions, withoutRevision } from '../model/version.js';
import { buildGraph, orderAcross } from '../plan/graph.js';
import { policiesOf } from '../stack-check/index.js';
import { refreshManifests } from '../overlay/manifests.js';
import { checkOverlayPath } from '../overlay/paths.js';
import { overlayPackages, scanOverlay } from '../overlay/scan.js';
import { requirePackageNames } from '../model/package-names.js';
import { byCodePoint } from '../util/order.js';

export default class ManifestCommand extends BaseCommand {
  static override summary = "Fetch, hash and rewrite packages' thin Manifests in an overlay";
  static override description = [
    'For each package (default: every package the overlay holds, of the stack or not) the distfiles of the ebuild versions present are ' +
      'fetched into the distdir when missing (several at once, resuming partial files, retrying transient failures), ' +
      "hashed with BLAKE2B and SHA512 in one read, and the package's Manifest is rewritten: sorted DIST lines, lines of " +
      'removed versions dropped. The distfiles of an ebuild the stack manifest does not generate (another package, a ' +
      "version it does not know) come from the ebuild's own SRC_URI, evaluated from its text as pkgdev would, never run; one " +
      'it cannot evaluate leaves that package\'s Manifest as it was (exit 2). Existing lines are trusted: a ' +
      'file that disagrees with one is rejected (--force recomputes). Packages whose distfiles all succeeded get their ' +
      'Manifest even when others fail; other packages are never touched. Nothing is committed. Nothing is written ' +
      'through a symlink that leads out of the overlay.',
    'Packages are reported in build order. Failures are grouped by cause: a host that cannot be reached is one line with what to do; --json keeps every file. ' +
      'A Manifest line that cannot be read is reported as FILE:LINE and nothing is written.',
    'Network: HTTP_PROXY, HTTPS_PROXY and NO_PROXY are honoured (https through CONNECT); a private or intercepting CA ' +
      'is given with NODE_EXTRA_CA_CERTS=FILE. Another run downloading the same file into the same distdir is waited ' +
      'for, and the file it installed is verified.',
    'Exit codes: 0 done, 2 invalid input, unknown package, an ebuild whose SRC_URI cannot be evaluated, --overlay or --distdir not a directory, 3 distfiles missing ' +
      'with --offline, 4 a package directory or Manifest is a symlink leading out of the overlay, or a Manifest line ' +
      'cannot be read (nothing written), 5 a download or verification failed (packages that succeeded were still written).',
  ].join('\n\n');

  static override examples = [
    { description: 'Every stack package of an overlay', command: '<%= config.bin %> <%= command.id %> --overlay ~/rocm-overlay' },
    { description: 'Two packages, through a local mirror, 8 downloads at once', command: '<%= config.bin %> <%= command.id %> sci-libs/rocBLAS dev-util/hip --overlay ~/rocm-overlay --mirror http://mirror.lan/distfiles --jobs 8' },
    { description: 'Only what the distdir already holds, results as JSON', command: '<%= config.bin %> <%= command.id %> --overlay ~/rocm-overlay --distdir /var/cache/distfiles --offline --json' },
  ];

  static override strict = false;
  static override args = { atoms: Args.string({ ignoreStdin: true, description: 'packages (category/PN or PN); default: every package in the overlay' }) };

  static override flags = {
    overlay: Flags.string({ char: 'o', description: `the overlay (default: overlay in ${CONFIG_DISPLAY})`, required: true, helpValue: 'DIR', ...settingFlagOptions('overlay') }),
    manifest: manifestFlag,
    distdir: Flags.string({ description: "where distfiles are found and downloaded to (default: $DISTDIR, else Portage's DISTDIR (portageq, or make.conf), else ~/.cache/rocm-ebuild/distfiles)", helpValue: 'DIR' }),
    offline: Flags.boolean({ description: 'do not download; use only what the distdir holds' }),
    mirror: Flags.string({
      description: 'a flat mirror tried before upstream as URL/<file> (repeat the flag for more; GENTOO_MIRRORS is honoured too)',
      multiple: true,
      multipleNonGreedy: true,
      helpValue: 'URL',
    }),
    timeout: Flags.integer({ description: 'seconds without progress before a download attempt is abandoned and retried (default 30)', min: 1, helpValue: 'SECONDS' }),
    retries: Flags.integer({ description: 'extra attempts of a URL after a transient failure: 5xx, reset, timeout (default 3)', min: 0, max: 20 }),
    jobs: Flags.integer({ char: 'j', description: 'downloads at once (default 4)', min: 1, max: 64 }),
    'max-size': Flags.integer({ description: 'largest download accepted for a distfile no Manifest lists yet, in MiB (default 4096)', min: 1, helpValue: 'MIB' }),
    force: Flags.boolean({ description: 'recompute every line: trust neither the existing Manifest nor cached digests (every distfile is read again)' }),
  };

  async run(): Promise<unknown> {
    const { argv, flags } = await this.parse(ManifestCommand);
    // This command exists to hash: its workers boot while the manifest loads.
    prewarmHashWorkers();
    const settings = await distfileSettings({ distdir: flags.distdir, mirror: flags.mirror, offline: flags.offline });
    const distdir = settings.distdir;
    const manifest = await loadManifestOrFail(flags.manifest);
    const policies = await policiesOf(manifest);
    if ('issues' in policies) throw new ManifestError(policies.issues);
    // Every component in any release, so packages of every version present are found.
    const all = packagesOfEveryRelease(manifest, (v) => releaseModel(manifest, v, policies.byRelease.get(v)!)!);
    const dir = path.resolve(flags.overlay);
    if ((await checkOverlayPath(dir, { create: false })) === 'missing') throw new UserError(`no overlay at ${dir}`, ExitCode.invalidInput);
    // Any package of the overlay, as pkgdev manifest: the stack's by the manifest's knowledge, others by their own SRC_URI.
    const inOverlay = overlayPackages(dir);
    const asked = requirePackageNames(argv as string[], [...new Set([...inOverlay, ...all.keys()])], `the overlay ${dir} or the stack`);
    const absent = asked.filter((a) => !inOverlay.includes(a));
    if (absent.length > 0) throw new UserError(`the overlay holds no ebuild of ${absent.join(', ')}`, ExitCode.invalidInput);
    const chosen = asked.length ? asked : inOverlay;
    const state = await scanOverlay(dir, chosen);
    // In build order, so the report reads like a bump's: that of the newest release the overlay holds,
    // then of older ones for what that one lacks; packages outside the stack last.
    const held = new Set([...state.packages.values()].flatMap((p) => p.versions.map(withoutRevision)));
    const order = orderAcross(
      knownReleases(manifest)
        .filter((v) => held.has(v))
        .sort((a, b) => compareVersions(b, a))
        .map((v) => buildGraph(resolveStack(manifest, releaseModel(manifest, v, policies.byRelease.get(v)!)!))),
    );
    const rank = (atom: string) => (order.includes(atom) ? order.indexOf(atom) : order.length);
    const atoms = [...chosen].sort((a, b) => rank(a) - rank(b) || byCodePoint(a, b));
    const targets = atoms.map((atom) => ({ atom, ...(all.has(atom) ? { component: all.get(atom)! } : {}) }));

    const json = this.jsonEnabled();
    const { packages, distfiles } = await refreshManifests(manifest, policies, state, targets, {
      distdir,
      offline: flags.offline,
      mirrors: settings.mirrors,
      force: flags.force,
      ...(flags.jobs ? { jobs: flags.jobs } : {}),
      ...(flags.timeout !== undefined ? { timeoutMs: flags.timeout * 1000 } : {}),
      ...(flags.retries !== undefined ? { retries: flags.retries } : {}),
      ...(flags['max-size'] !== undefined ? { maxSize: flags['max-size'] * 1024 * 1024 } : {}),
      progress: createProgress({ quiet: json }),
    });
    const bad = distfiles.filter((r) => r.status === 'missing' || r.status === 'failed');
    const result = { overlay: dir, distdir, packages, distfiles };
    if (!json) {
      for (const p of packages) {
        const extra = p.fromEbuild.length ? ` (${p.fromEbuild.join(', ')}: distfiles from the ebuild's SRC_URI)` : '';
        const said = p.status === 'no-distfiles' ? ': no distfiles, no Manifest needed' : p.status === 'unevaluated' ? `: ${p.why}, which rocm-ebuild does not evaluate; the Manifest was left as it was` : '';
        this.log(`${p.status.padEnd(12)} ${p.atom}${said}${said ? '' : extra}`);
      }
      if (bad.length > 0) process.stderr.write(`${describeProblems(bad, { distdir, offline: flags.offline })}\n`);
    }
    const unevaluated = packages.filter((p) => p.status === 'unevaluated');
    if (bad.length > 0 || unevaluated.length > 0) {
      if (json) this.logJson(result);
      this.exit(bad.some((r) => r.status === 'failed') ? ExitCode.fetchFailed : bad.length > 0 ? ExitCode.missingDistfiles : ExitCode.invalidInput);
    }
    return result;
  }
}
