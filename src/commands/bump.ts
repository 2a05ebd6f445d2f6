import { Args, Flags } from '#oclif';
import path from 'node:path';
import { BaseCommand } from '../cli/base-command.js';
import { CONFIG_DISPLAY, settingFlagOptions } from '../cli/user-defaults.js';
import { createProgress } from '../cli/progress.js';
import { loadManifestOrFail, manifestFlag, stackFor } from '../cli/stack.js';
import { maskedLlvmText } from '../manifest/gentoo-masks.js';
import { maskedLlvmOfRelease } from '../model/llvm-masks.js';
import { defaultManifestPath } from '../paths.js';
import { runBump, type BumpResult } from '../bump/run.js';
import { describeSigning } from '../git/signing.js';
import { describeCounts, EVIDENCE_MEANING, LEVELS, levelRank, type EvidenceLevel } from '../model/evidence.js';
import { hasTool } from '../lint/external-tools.js';
import { notice, verbosity } from '../util/terminal.js';
import { compareVersions, withoutRevision } from '../model/version.js';
import { checkOverlayPath } from '../overlay/paths.js';
import { createProgress as createDistfileProgress } from '../distfiles/index.js';
import { distfileSettings } from '../portage/distfile-settings.js';
import { useColor } from '../cli/progress.js';
import { baseUrlFlag, deadlineOf, GITHUB, treeProvider } from '../cli/upstream-flags.js';
import { upstreamCacheDir } from '../upstream/trees/sources.js';

export default class Bump extends BaseCommand {
  static override summary = 'Move an overlay to a ROCm release: ebuilds, Manifests, one commit per package';
  static override description = [
    'Generates every package of the release from the stack manifest and commits them to the overlay in build order, ' +
      'one commit per package ("cat/pkg: add 6.2.2", or "new package, add 6.2.2"), each signed off with your git identity ' +
      '(git config, or GIT_AUTHOR_* / GIT_COMMITTER_* in the environment) and dated now, in your time zone. ' +
      'Packages already at the release are kept untouched, so re-running changes nothing. Distfiles are downloaded into ' +
      'the distdir (see --offline) and hashed into thin Manifests.',
    'A missing overlay is created as a git repository, on the branch git makes (init.defaultBranch), with ' +
      'profiles/repo_name, metadata/layout.conf (thin Manifests, BLAKE2B SHA512) and metadata/rocm-ebuild.conf, then ' +
      'profiles/desc/amdgpu_targets.desc and eclass/rocm.eclass, each in its own first commit. metadata/rocm-ebuild.conf ' +
      "names the maintainer of new packages' metadata.xml, set once: --maintainer, else your git identity; " +
      '"--maintainer gentoo" names the Gentoo Science Project, for work bound for ::gentoo. Bump says which it used.',
    'One run at a time: a lock in .git is taken before the overlay is read (a dead run\'s lock is taken over, with a ' +
      'message). The commits are built off the branch, and the branch moves once, at the end, only if it still points where ' +
      'the plan was made: interrupted at any point, even by SIGKILL, the branch is either as before or fully bumped, and the ' +
      'next run finishes or undoes what the interrupted one left in the worktree. Files bump writes are committed even where ' +
      'ignore rules match them. A refused overlay is left as it was.',
    'Commits are signed the way your git signs them (commit.gpgSign, gpg.format openpgp or ssh, user.signingKey, gpg.program), ' +
      'and always when metadata/layout.conf says sign-commits = true (::gentoo does): a test signature is made first, and when it ' +
      'fails the bump is refused before anything is written. --dry-run says whether the commits will be signed, with which key. ' +
      "A new overlay's layout.conf says sign-commits = true when your git signs commits, false otherwise.",
    'A release the overlay already holds is rendered again and compared with what was generated for it (bump records that ' +
      'on the ref refs/rocm-ebuild-generated, outside every commit): a package whose generated text changed gets the next ' +
      'revision (-r1), replacing the old one in the same commit, with the changed lines in the message; --dry-run shows the diff. ' +
      'An ebuild changed by hand is never dropped or superseded silently: the change is merged into the new ebuild (reported), ' +
      'or the bump is refused with the change shown, unless --discard-local. Files in files/ that no remaining ebuild uses are ' +
      'removed in the same commit. With --drop-old, one commit per package adds the new version and drops the old ones.',
    'A package the overlay holds that the stack manifest describes but the release does not generate (AMD dropped it, or the ' +
      "manifest excludes it from this release) has left the release: it is reported with the reason (stack.yaml's excluded:), " +
      'and kept. With --drop-old it is removed in a commit of its own, "cat/pkg: treeclean", saying why, placed before the ' +
      'commits that drop what it depends on; a package that also holds versions newer than the release (or 9999) stays, and ' +
      'only its older versions whose dependencies the bump leaves unmet go. On ::gentoo a package is never removed: ' +
      '--drop-old is refused until it is last-rited (profiles/package.mask).',
    'Exit codes: 0 done (or nothing to do); 2 invalid manifest, unknown release or package name, bad flags, a downgrade ' +
      'without --allow-downgrade, --overlay or --distdir not a directory; 3 distfiles missing with --offline (nothing written); 4 overlay refused: dirty worktree, not a git ' +
      'repository, no git identity, detached HEAD, incompatible layout.conf, another run holds the lock, index.lock present, ' +
      'ignored files where bump writes, read-only overlay or directory, a Manifest line that cannot be read, an ebuild changed by hand that would be lost, --drop-old on ::gentoo holding packages that left the release, ::gentoo rocm.eclass lacking names the new ebuilds use (run `eclass update` first), ' +
      'commits that must be signed while git cannot sign (nothing written); 5 a download or verification failed (nothing written; what was fetched ' +
      'stays in the distdir); 6 a generated ebuild failed the QA checks (nothing written); 130 (Ctrl-C) or 143 (SIGTERM) interrupted ' +
      'before the branch moved (nothing was changed). With --derive-from: 2 also ' +
      'when the draft does not validate (the draft stays in the manifest to be fixed; no ebuild is generated), 5 when ' +
      "AMD's release manifest (with --therock: TheRock) cannot be fetched.",
  ].join('\n\n');

  static override examples = [
    {
      description: 'Bump (or create) an overlay to ROCm 6.2.2, downloading distfiles into the default distdir',
      command: '<%= config.bin %> <%= command.id %> 6.2.2 --overlay ~/rocm-overlay',
    },
    { description: 'Show the plan as JSON, change nothing', command: '<%= config.bin %> <%= command.id %> 6.2.2 --overlay ~/rocm-overlay --dry-run --json' },
    {
      description: 'Use only distfiles already on disk, and drop the older versions of the stack',
      command: '<%= config.bin %> <%= command.id %> 6.2.2 --overlay ~/rocm-overlay --distdir /var/cache/distfiles --offline --drop-old',
    },
    {
      description: 'Offline: list the distfiles the distdir lacks (name, then URLs) to fetch where there is network, then bump with --offline',
      command: '<%= config.bin %> <%= command.id %> 6.2.2 --overlay ~/rocm-overlay --list-distfiles > distfiles.txt',
    },
    { description: 'Write the files but leave committing to you', command: '<%= config.bin %> <%= command.id %> 6.2.2 --overlay ~/rocm-overlay --no-commit' },
    {
      description: 'Bump two packages alone; nothing else in the overlay is touched',
      command: '<%= config.bin %> <%= command.id %> 6.2.4 sci-libs/rocBLAS hip --overlay ~/rocm-overlay',
    },
    {
      description: 'After a manifest fix: regenerate the release the overlay holds; what changed gets a new revision (-r1), shown first',
      command: '<%= config.bin %> <%= command.id %> 6.2.2 --overlay ~/rocm-overlay --dry-run',
    },
    {
      description: 'A release the manifest lacks: draft it from 6.2.2, read the reports, bump if the draft validates',
      command: '<%= config.bin %> <%= command.id %> 6.3.3 --derive-from 6.2.2 --overlay ~/rocm-overlay',
    },
    {
      description: "TheRock's ROCm 10.0 from its release branch: its composition against 7.2.4, then the bump if the draft validates",
      command: '<%= config.bin %> <%= command.id %> 10.0.0 --derive-from 7.2.4 --therock release/therock-10.0 --overlay ~/rocm-overlay',
    },
    {
      description: 'Create an overlay bound for ::gentoo: new packages name the Gentoo Science Project as maintainer',
      command: '<%= config.bin %> <%= command.id %> 6.2.2 --overlay ~/gentoo-rocm --maintainer gentoo',
    },
    {
      description: 'Reference the tracker bug from every commit, close one package\'s bump request with its commit',
      command: '<%= config.bin %> <%= command.id %> 6.2.2 --overlay ~/gentoo --bug 940123 --closes sci-libs/rocBLAS=940200',
    },
  ];

  static override strict = false;
  static override args = {
    version: Args.string({ ignoreStdin: true, description: 'ROCm release, e.g. 6.2.2', required: true }),
    packages: Args.string({ ignoreStdin: true, description: 'only these packages (category/PN, or PN when one category has it); default: the whole release' }),
  };

  static override flags = {
    overlay: Flags.string({ char: 'o', description: `the overlay (a git repository; created when missing) (default: overlay in ${CONFIG_DISPLAY})`, required: true, helpValue: 'DIR', ...settingFlagOptions('overlay') }),
    manifest: manifestFlag,
    distdir: Flags.string({ description: "where distfiles are found and downloaded to (default: $DISTDIR, else Portage's DISTDIR (portageq, or make.conf), else ~/.cache/rocm-ebuild/distfiles)", helpValue: 'DIR' }),
    offline: Flags.boolean({ description: 'do not download: use only what the distdir holds (exit 3 listing what is missing)' }),
    mirror: Flags.string({
      description: "a flat mirror tried before upstream as URL/<file> (repeat the flag for more; GENTOO_MIRRORS, from the environment or Portage's configuration, is honoured too)",
      multiple: true,
      multipleNonGreedy: true,
      helpValue: 'URL',
    }),
    maintainer: Flags.string({
      description: "who new packages' metadata.xml name, saved in the overlay once (when it is created, or has no setting): \"Name <email>\", or \"gentoo\" for the Gentoo Science Project (::gentoo-bound work); default: your git identity",
      helpValue: 'WHO',
    }),
    timeout: Flags.integer({ description: 'seconds without progress before a download attempt is abandoned and retried (default 30)', min: 1, helpValue: 'SECONDS' }),
    retries: Flags.integer({ description: 'extra attempts of a URL after a transient failure: 5xx, reset, timeout (default 3)', min: 0, max: 20 }),
    jobs: Flags.integer({ char: 'j', description: 'downloads at once (default 4); with --derive-from, also source trees read at once (default 2)', min: 1, max: 64 }),
    'max-size': Flags.integer({ description: 'largest download accepted for a distfile no Manifest lists yet, in MiB (default 4096)', min: 1, helpValue: 'MIB' }),
    'drop-old': Flags.boolean({
      description:
        "remove the stack's older versions from the overlay, in each package's commit (\"cat/pkg: add 6.3.3, drop 6.2.2\"), and packages that left the release (\"cat/pkg: treeclean\"; refused on ::gentoo)",
    }),
    'separate-drops': Flags.boolean({ description: 'with --drop-old: the drops in commits of their own ("cat/pkg: drop 6.2.2"), after every add' }),
    'allow-downgrade': Flags.boolean({ description: 'add a release older than versions the overlay holds (refused otherwise)' }),
    'discard-local': Flags.boolean({ description: 'drop or supersede ebuilds changed by hand even where the change cannot be carried to the new ebuild (refused otherwise, with the change shown)' }),
    'dry-run': Flags.boolean({ char: 'n', description: 'print the plan; change nothing' }),
    'list-distfiles': Flags.boolean({
      description:
        'print the distfiles the bump needs that the distdir lacks, one per line: the file name, then its URLs (each --mirror first, then upstream), for curl or wget where there is network, before an --offline bump; changes nothing',
      exclusive: ['derive-from', 'no-commit'],
    }),
    'no-commit': Flags.boolean({ description: 'write the changes into the worktree without committing' }),
    'derive-from': Flags.string({
      description:
        'for a release the manifest lacks: write a draft entry derived from this known release into the manifest (no evidence recorded yet; LLVM slot carried over; new upstream projects excluded as not packaged yet), print the upstream project, build-file and fix-up reports, and bump only if the manifest then validates (with --dry-run: print the draft, write nothing)',
      helpValue: 'VERSION',
    }),
    therock: Flags.string({
      description:
        "with --derive-from: the release is TheRock's: read ROCm/TheRock at this tag or branch (its version.json must be VERSION), print its composition against the release derived from, and draft the release with `stream: therock` (default, when --derive-from names a TheRock release: the therock-X.Y tag)",
      helpValue: 'REF',
      dependsOn: ['derive-from'],
    }),
    'base-url': { ...baseUrlFlag, description: `with --derive-from: ${baseUrlFlag.description}` },
    bug: Flags.string({
      description: "a Bug: trailer: a bug number (https://bugs.gentoo.org/N) or https URL, on every package commit, or on one package's as cat/pkg=N (repeat the flag for more)",
      multiple: true,
      multipleNonGreedy: true,
      helpValue: 'N',
    }),
    closes: Flags.string({
      description: "a Closes: trailer: on the last commit, or on one package's as cat/pkg=N (repeat the flag for more)",
      multiple: true,
      multipleNonGreedy: true,
      helpValue: 'N',
    }),
  };

  async run(): Promise<BumpResult | unknown> {
    const { args, argv, flags } = await this.parse(Bump);
    const packages = (argv as string[]).slice(1);
    const json = this.jsonEnabled();
    // A wrong --overlay is one line before any work, drafting a release included.
    // Listing what to fetch is a dry run that prints only the list.
    const dryRun = flags['dry-run'] || flags['list-distfiles'];
    await checkOverlayPath(path.resolve(flags.overlay), { create: !dryRun });
    // Where distfiles go: --distdir, DISTDIR (the environment, else Portage's configuration), else the cache.
    // A distdir that can never hold a file is refused before any work (a dry run uses none).
    const settings = await distfileSettings({ distdir: flags.distdir, mirror: flags.mirror, offline: flags.offline }, { check: !dryRun });
    if (!json) notice(`distdir: ${settings.distdir} (${settings.distdirFrom}); mirrors: ${settings.mirrorsFrom}`);
    // What the ebuilds are checked with before anything is written: said before the work, where it can still be acted on.
    if (!json && !dryRun && !hasTool('shellcheck')) {
      this.warn('shellcheck is not installed: the ebuilds are checked with bash -n and rocm-ebuild\'s own checks only (Debian: apt-get install shellcheck; `rocm-ebuild lint --overlay` runs it once installed)');
    }
    if (flags['derive-from']) {
      // Imported here: the upstream code (and the YAML library it writes drafts with) is 60 ms of loading a plain bump does not need.
      const { deriveForBump } = await import('../upstream/draft/derive.js');
      const derived = await deriveForBump({
        manifest: flags.manifest ?? defaultManifestPath,
        version: args.version,
        from: flags['derive-from'],
        ...(flags.therock !== undefined ? { therock: flags.therock } : {}),
        baseUrl: flags['base-url'] ?? GITHUB,
        cacheDir: upstreamCacheDir(),
        deadline: deadlineOf(undefined),
        provider: treeProvider(flags, json, { deadline: deadlineOf(undefined), ...(flags.timeout !== undefined ? { attemptTimeoutMs: flags.timeout * 1000 } : {}) }),
        dryRun: flags['dry-run'],
        jobs: flags.jobs ?? 2,
        progress: createProgress({ quiet: json }),
        json,
        color: useColor(process.stdout),
        write: (t) => process.stdout.write(t),
      });
      if (flags['dry-run']) return derived;
    }
    const result = await runBump({
      version: args.version,
      overlay: flags.overlay,
      ...(flags.manifest ? { manifest: flags.manifest } : {}),
      distdir: settings.distdir,
      offline: flags.offline,
      dropOld: flags['drop-old'],
      ...(packages.length ? { packages } : {}),
      allowDowngrade: flags['allow-downgrade'],
      discardLocal: flags['discard-local'],
      separateDrops: flags['separate-drops'],
      dryRun,
      commit: !flags['no-commit'],
      ...(flags.maintainer !== undefined ? { maintainer: flags.maintainer } : {}),
      ...(flags.jobs ? { jobs: flags.jobs } : {}),
      ...(flags.timeout !== undefined ? { timeoutMs: flags.timeout * 1000 } : {}),
      ...(flags.retries !== undefined ? { retries: flags.retries } : {}),
      ...(flags['max-size'] !== undefined ? { maxSize: flags['max-size'] * 1024 * 1024 } : {}),
      mirrors: settings.mirrors,
      ...(flags.bug ? { bug: flags.bug } : {}),
      ...(flags.closes ? { closes: flags.closes } : {}),
      progress: createProgress({ quiet: json }),
      distfileProgress: createDistfileProgress({ quiet: json }),
      warn: (m) => (json ? process.stderr.write(`warning: ${m}\n`) : this.warn(m)),
    });
    if (flags['list-distfiles']) {
      const list = missingDistfiles(result, flags.mirror ?? []);
      if (!json) for (const d of list) process.stdout.write(`${[d.name, ...d.urls].join(' ')}\n`);
      return { ...result, missingDistfiles: list };
    }
    if (!json) {
      this.report(result);
      this.warnEvidence(result);
      // Packages an LLVM slot ::gentoo's profiles mask holds back, with the local setting that lifts the mask.
      const added = result.packages.filter((p) => p.action === 'add' || p.action === 'revbump').map((p) => p.atom);
      const model = added.length ? await stackFor(await loadManifestOrFail(flags.manifest), args.version) : undefined;
      for (const line of model ? maskedLlvmText(maskedLlvmOfRelease(model, added)) : []) this.log(line);
    }
    return result;
  }

  /**
   * How far the facts of the packages this bump adds were checked, said once: a line when they rest on a
   * peer's recipe or the tags, one warning naming the packages when not. Only the added ones count: a bump of
   * hip alone is not about the 47 other packages of its release. (--json carries the evidence instead.)
   */
  private addedEvidence(r: BumpResult): { level: EvidenceLevel; counts: Record<EvidenceLevel, number>; weakest: string[] } | undefined {
    const added = r.packages.filter((p) => p.action === 'add' && p.evidence !== undefined);
    if (added.length === 0) return undefined;
    const counts: Record<EvidenceLevel, number> = { none: 0, pin: 0, peer: 0, tag: 0 };
    for (const p of added) counts[p.evidence!]++;
    const level = LEVELS.find((l) => counts[l] > 0)!;
    return { level, counts, weakest: added.filter((p) => p.evidence === level).map((p) => p.atom).sort() };
  }

  private warnEvidence(r: BumpResult): void {
    const e = this.addedEvidence(r);
    if (!e || levelRank(e.level) >= levelRank('peer')) return;
    const few = e.weakest.slice(0, 6).join(', ') + (e.weakest.length > 6 ? `, and ${e.weakest.length - 6} more` : '');
    const added = Object.values(e.counts).reduce((a, b) => a + b, 0);
    const release = Object.values(r.evidence.counts).reduce((a, b) => a + b, 0);
    const whose = added === release ? `ROCm ${r.version}'s evidence` : `the evidence of the ${added === 1 ? 'package' : `${added} packages`} added`;
    this.warn(
      `${whose} is ${e.level} (${describeCounts(e.counts)}): the facts of ${few} were checked neither at the upstream tag nor against another packager's recipe; review those ebuilds (rocm-ebuild render ATOM --version ${r.version} says what each rests on)`,
    );
  }

  private report(r: BumpResult): void {
    const count = (a: string) => r.packages.filter((p) => p.action === a).length;
    const who = r.maintainer.maintainers.map((m) => `${m.name ? `${m.name} ` : ''}<${m.email}>`).join(', ');
    const types = [...new Set(r.maintainer.maintainers.map((m) => m.type))].join('/');
    if (count('add') > 0) this.log(`metadata.xml maintainer: ${who} (${types}, ${r.maintainer.source})`);
    // A weak level is the warning's to say (once, after the plan); a strong one is said here.
    const e = this.addedEvidence(r);
    if (e && levelRank(e.level) >= levelRank('peer')) this.log(`evidence: ${e.level}, the weakest of the packages added (${describeCounts(e.counts)}): ${EVIDENCE_MEANING[e.level]}`);
    if (r.dryRun) {
      this.log(`ROCm ${r.version} → ${r.overlay} (dry run: nothing written)`);
      const names: Record<string, string> = {
        repository: 'repository scaffolding',
        eclass: 'eclass/rocm.eclass',
        'targets-desc': 'profiles/desc/amdgpu_targets.desc',
        'package-sets': 'package sets (sets.conf, metadata/sets/rocm-<target>)',
      };
      for (const s of r.scaffold) if (s.action !== 'keep') this.log(`  ${s.action.padEnd(5)} ${names[s.what] ?? s.what}`);
      for (const p of r.packages) {
        const files = p.distfiles.map((d) => d.name).join(' ');
        const what = p.action === 'revbump' ? `${p.atom}-${p.version} (replaces ${p.replaces})` : `${p.atom}-${p.version}${p.newPackage ? ' (new package)' : ''}`;
        this.log(`  ${p.action.padEnd(7)} ${what}${p.held ? `  at its own version in ${p.held.release}` : ''}${p.action === 'add' && files ? `  [${files}]` : ''}${p.evidence ? `  evidence: ${p.evidence}` : ''}`);
      }
      this.changes(r, true);
      if (r.download) {
        const d = r.download;
        const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;
        if (d.files > 0) this.log(`distfiles: ${d.files} file${d.files === 1 ? '' : 's'}; ${d.present} already in ${d.distdir} (${mib(d.presentBytes)}), ${d.missing.length} to download`);
      }
      this.leftReport(r);
      this.signingReport(r);
    } else if (r.commits.length === 0) {
      this.log(`${r.overlay} already holds ROCm ${r.version}: nothing to do`);
      this.leftReport(r);
      return;
    } else {
      for (const c of r.commits) this.log(`  ${c.subject}`);
      // The diffs a dry run shows, with --verbose on a real run too (the commit messages hold the changed lines).
      this.changes(r, verbosity() === 'verbose');
      this.leftReport(r);
      this.signingReport(r);
      if (r.qa) {
        const q = r.qa;
        this.log(
          `checked: ${q.ebuilds} ebuild${q.ebuilds === 1 ? '' : 's'} with rocm-ebuild's checks, bash -n${q.shellcheck ? ' and shellcheck' : ' (shellcheck not installed)'}: ` +
            `0 errors/warnings, ${q.findings} style/info finding${q.findings === 1 ? '' : 's'}${q.findings ? ` (rocm-ebuild lint --overlay ${r.overlay} lists them)` : ''}`,
        );
      }
      this.log(
        r.committed
          ? `${r.commits.length} commit${r.commits.length === 1 ? '' : 's'} on ${r.branch} (${r.head?.slice(0, 12)}); review with: git -C ${r.overlay} log --stat`
          : `${r.commits.length} commits' worth of changes left uncommitted in ${r.overlay} (--no-commit)`,
      );
    }
    this.heldReport(r);
    const gone = r.left.filter((l) => l.action === 'treeclean').length;
    this.log(
      `${count('add')} to add, ${count('revbump')} revision bump${count('revbump') === 1 ? '' : 's'}, ${count('keep')} kept, ${count('drop')} dropped` +
        (r.left.length ? `; ${r.left.length} package${r.left.length === 1 ? '' : 's'} left ROCm ${r.version} (${gone} removed)` : ''),
    );
  }

  /** Signed or not, with which key and why; what a new overlay's layout.conf says of it; on a dry run, why a real run would refuse. */
  private signingReport(r: BumpResult): void {
    const creating = r.scaffold.some((s) => s.what === 'repository' && s.action === 'add');
    const layout = creating ? `; the new overlay's metadata/layout.conf says sign-commits = ${r.signing.sign}` : '';
    this.log(`${describeSigning(r.signing)}${layout}`);
    if (r.signing.problem) this.warn(r.signing.problem);
  }

  /** Why a package that left is kept, by what it holds: only older versions, only newer ones (or 9999), or both. */
  private keptWhy(versions: string[], release: string): string {
    const older = versions.filter((v) => v !== '9999' && compareVersions(withoutRevision(v), release) < 0);
    if (older.length === versions.length) return 'kept (its ebuilds need the older stack: --drop-old without package names removes it)';
    if (older.length === 0) return 'kept (newer than this release)';
    return `kept (it holds newer versions or 9999; --drop-old drops ${older.join(', ')} once a bump leaves their dependencies unmet)`;
  }

  /** Packages the release holds at their own version: which version, and why (the manifest's reason). */
  private heldReport(r: BumpResult): void {
    const held = r.packages.filter((p) => p.held && p.action !== 'drop' && p.action !== 'treeclean');
    if (held.length === 0) return;
    this.log(`at their own version in ROCm ${r.version}, built against its libraries (SLOT is the release's):`);
    for (const p of held) this.log(`  ${p.atom}-${p.version}${p.held!.reason ? `: ${p.held!.reason}` : ''}`);
  }

  /** Packages the overlay holds that this release no longer has: what happens to them, and why they left. */
  private leftReport(r: BumpResult): void {
    if (r.left.length === 0) return;
    this.log(`not part of ROCm ${r.version} (the stack manifest describes them, this release does not generate them):`);
    for (const l of r.left) {
      const what =
        l.action === 'treeclean'
          ? `${r.dryRun ? 'to be removed' : 'removed'} (treeclean${this.otherFiles(l)})`
          : l.action === 'drop'
            ? `${l.removed.join(', ')} ${r.dryRun ? 'to be dropped' : 'dropped'}, ${l.versions.filter((v) => !l.removed.includes(v)).join(', ')} kept`
            : this.keptWhy(l.versions, r.version);
      this.log(`  ${l.atom} ${l.versions.join(', ')}: ${what}; ${l.reason}`);
    }
  }

  /** A treeclean's files besides ebuilds, Manifest, metadata.xml and files/: the whole directory goes, and they with it. */
  private otherFiles(l: BumpResult['left'][number]): string {
    const pn = l.atom.split('/')[1]!;
    const others = (l.files ?? [])
      .map((f) => f.slice(l.atom.length + 1))
      .filter((f) => f !== 'Manifest' && f !== 'metadata.xml' && !f.startsWith('files/') && !(!f.includes('/') && f.startsWith(`${pn}-`) && f.endsWith('.ebuild')));
    return others.length > 0 ? `: the whole directory, with ${others.join(', ')}` : '';
  }

  /** Revision bumps, carried and discarded hand edits, added and removed files: with their diffs on a dry run. */
  private changes(r: BumpResult, diffs: boolean): void {
    const show = (diff: string) => {
      if (diffs && diff) this.log(diff.trimEnd().replace(/^/gm, '      '));
    };
    for (const c of r.changes) {
      if (c.revbump) {
        const held = r.packages.some((p) => p.atom === c.atom && p.held);
        this.log(
          held
            ? `  ${c.atom}-${c.version}: ROCm ${r.version}'s revision of ${c.revbump.replaces}, held at its own version and built against ${r.version}'s libraries`
            : `  ${c.atom}-${c.version}: what rocm-ebuild generates for ${c.revbump.replaces} changed; ${c.revbump.replaces} is replaced`,
        );
        show(c.revbump.diff);
      }
      if (c.carried) {
        this.log(`  ${c.atom}-${c.version}: keeps the changes made by hand to ${c.carried.from}`);
        show(c.carried.diff);
      }
      for (const d of c.discarded) {
        this.log(`  ${c.atom}-${d.version}: changes made by hand discarded (--discard-local)`);
        show(d.diff);
      }
      if (c.addedFiles.length) this.log(`  ${c.atom}-${c.version}: ${r.dryRun ? 'adds' : 'added'} ${c.addedFiles.map((f) => `files/${f}`).join(', ')}: the manifest's ${c.addedFiles.length === 1 ? 'patch' : 'patches'}, which it applies`);
      if (c.removedFiles.length) this.log(`  ${c.atom}: removed ${c.removedFiles.map((f) => `files/${f}`).join(', ')}: no remaining ebuild uses ${c.removedFiles.length === 1 ? 'it' : 'them'}`);
    }
  }
}

/**
 * The distfiles a planned bump would download, each with where to get it: the
 * flat --mirror directories first (name appended), then the upstream URLs of
 * the ebuilds' SRC_URI. File names and URLs hold no spaces (SRC_URI is
 * space-separated too), so one line per file splits safely.
 */
export function missingDistfiles(r: BumpResult, mirrors: readonly string[]): { name: string; urls: string[] }[] {
  const missing = new Set(r.download?.missing ?? []);
  const byName = new Map<string, string[]>();
  for (const p of r.packages) for (const d of p.distfiles) if (missing.has(d.name) && !byName.has(d.name)) byName.set(d.name, d.urls);
  return [...byName]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, urls]) => ({ name, urls: [...mirrors.map((m) => `${m.replace(/\/+$/, '')}/${encodeURIComponent(name)}`), ...urls] }));
}
