import { Args, Flags } from '#oclif';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { BaseCommand } from '../cli/base-command.js';
import { describeCounts, EVIDENCE_MEANING, releaseEvidence } from '../model/evidence.js';
import { UserError } from '../cli/errors.js';
import { ExitCode } from '../cli/exit-codes.js';
import { loadManifestOrFail, manifestFlag, stackFor } from '../cli/stack.js';
import { lintComponent, lintComponents, type ComponentLint } from '../lint/component.js';
import { bashSyntaxAll, hasTool, shellcheckAll } from '../lint/external-tools.js';
import { failing, formatText, KEYWORDS, lintEbuild } from '../lint/index.js';
import { overlayIndex, overlayPackages, scanOverlay } from '../overlay/scan.js';
import { existsSync, readdirSync } from 'node:fs';
import { requirePackageNames } from '../model/package-names.js';
import { currentYear } from '../render/index.js';
import { compareVersions, withoutRevision } from '../model/version.js';
import { releaseOfEbuild } from '../model/held.js';
import { knownReleases, type ResolvedComponent, type StackModel } from '../model/resolve.js';
import type { Manifest } from '../manifest/load.js';
import { checkOverlayPath } from '../overlay/paths.js';
import { byCodePoint } from '../util/order.js';
import { createProgress } from '../cli/progress.js';
import { liveTerminal, notice } from '../util/terminal.js';
import { checkPackageSets } from '../stack-check/package-set-check.js';

export default class Lint extends BaseCommand {
  static override summary = 'Check ebuilds the way pkgcheck and a Gentoo reviewer would';
  static override description =
    'Without --overlay, renders every package of the release and checks it; with --overlay, checks the ' +
    'ebuilds the overlay holds, every package and version, as pkgcheck scans a repository (on a ::gentoo checkout, only the packages of the ' +
    "stack manifest, unless --all-packages): a stack package at a release the " +
    "manifest knows against that release's data, anything else (another package, a hand-made version) as any ebuild. The " +
    "ROCm stack's conventions (EAPI 8, SLOT=\"0/$(ver_cut 1-2)\") apply to the stack's packages only. " +
    'Checks: header and EAPI, variable order, eclass variables before inherit, missing/indirect/unused ' +
    'inherits, deprecated eclasses, USE flags not in IUSE, test RESTRICT, REQUIRED_USE under default USE, ' +
    'unquoted path variables, variable scope, commands lacking || die, metadata.xml use descriptions and ' +
    'remote-ids, whitespace, targets a library the package always needs cannot be built for, and (with --overlay) dependencies on ' +
    "the overlay's own packages at a slot or version no ebuild of the overlay provides; plus real `bash -n` " +
    'and shellcheck when installed. A whole release (--version, no packages named) is also checked as a stack: ' +
    'the package set of every GPU target resolves, and every package is in one. ' +
    'Exit codes: 0 clean (style and info results do not fail), 6 errors or warnings found, 2 invalid input.';

  static override examples = [
    { description: 'Check every generated ebuild of ROCm 6.2.2', command: '<%= config.bin %> <%= command.id %> --version 6.2.2' },
    { description: 'Check two packages only, as JSON (pkgcheck JSON fields)', command: '<%= config.bin %> <%= command.id %> sci-libs/rocBLAS dev-util/hip --version 6.2.2 --json' },
    { description: 'Check what an overlay holds', command: '<%= config.bin %> <%= command.id %> --overlay ~/rocm-overlay' },
    { description: "Check the ROCm stack's packages in a ::gentoo checkout (the rest of the tree is pkgcheck's)", command: '<%= config.bin %> <%= command.id %> --overlay ~/gentoo' },
    { description: 'List the result keywords', command: '<%= config.bin %> <%= command.id %> --keywords' },
  ];

  static override strict = false;
  static override args = { atoms: Args.string({ ignoreStdin: true, description: 'packages to check (default: all)' }) };

  static override flags = {
    version: Flags.string({ char: 'v', description: 'ROCm release whose stack is checked (required without --overlay)', helpValue: 'X.Y.Z' }),
    overlay: Flags.string({
      char: 'o',
      description: 'check the ebuilds in this overlay instead of rendering, each against its own release (then --version only narrows the packages)',
      helpValue: 'DIR',
    }),
    manifest: manifestFlag,
    'no-shellcheck': Flags.boolean({ description: 'skip shellcheck even when it is installed' }),
    keywords: Flags.boolean({ description: 'list the result keywords and exit' }),
    'all-packages': Flags.boolean({ description: "with --overlay on a ::gentoo checkout: check every package of the tree, not only the ROCm stack's" }),
  };

  async run(): Promise<unknown> {
    const { argv, flags } = await this.parse(Lint);
    if (flags.keywords) {
      const list = [...KEYWORDS.values()].sort((a, b) => byCodePoint(a.name, b.name));
      if (!this.jsonEnabled()) for (const k of list) this.log(`${k.name.padEnd(28)} ${k.level.padEnd(8)} ${k.description}`);
      return list;
    }
    if (!flags.version && !flags.overlay) {
      throw new UserError('--version is required without --overlay (the release whose generated ebuilds are checked)', ExitCode.invalidInput);
    }
    const manifest = await loadManifestOrFail(flags.manifest);
    const models = new Map<string, StackModel>();
    const modelOf = async (release: string): Promise<StackModel> => {
      let m = models.get(release);
      if (!m) models.set(release, (m = await stackFor(manifest, release)));
      return m;
    };
    // With --version, that release's packages; otherwise (an overlay) every package of any release the manifest knows.
    const pool = new Map<string, ResolvedComponent>();
    for (const release of flags.version ? [flags.version] : knownReleases(manifest)) {
      for (const c of (await modelOf(release)).components) pool.set(c.atom, c);
    }
    const shell = !flags['no-shellcheck'] && hasTool('shellcheck');
    // A line that redraws itself on a terminal; nothing in a pipe or a log, whose reader wants the results only.
    const progress = createProgress({ quiet: this.jsonEnabled() || !liveTerminal(process.stderr) });
    const lints: ComponentLint[] = [];
    const linted = new Set<string>(flags.version && !flags.overlay ? [flags.version] : []);
    if (flags.overlay) {
      lints.push(...(await this.lintOverlay({ overlay: flags.overlay, version: flags.version, allPackages: flags['all-packages'], names: argv as string[], manifest, pool, modelOf, progress, linted, shell })));
    } else {
      const wantedAtoms = requirePackageNames(argv as string[], [...pool.keys()], flags.version ? `ROCm ${flags.version}` : "the manifest's stack");
      const components = [...pool.values()].filter((c) => wantedAtoms.length === 0 || wantedAtoms.includes(c.atom));
      lints.push(...(await lintComponents(components, await modelOf(flags.version!), () => ({ tools: { shellcheck: shell } }), progress)));
    }
    progress.done();
    const results = lints.flatMap((l) => l.results);
    // How far the facts behind the checked releases were established: lint judges form, not that.
    const evidence = Object.fromEntries([...linted].sort(compareVersions).map((release) => [release, releaseEvidence(models.get(release)!.components)]));
    // The whole release: every GPU target's package set resolves as the ebuilds read.
    if (!flags.overlay && (argv as string[]).length === 0) results.push(...(await checkPackageSets(await modelOf(flags.version!))));
    const tools = lints.flatMap((l) => l.tools.map((t) => ({ file: l.file, ...t })));
    if (!this.jsonEnabled()) {
      process.stdout.write(formatText(results));
      for (const t of tools) this.log(`${t.file}:${t.line ?? '?'}: ${t.tool}${t.code ? ` ${t.code}` : ''} (${t.level}): ${t.message}`);
      if (!shell && !flags['no-shellcheck']) this.warn('shellcheck is not installed: only bash -n and the built-in checks ran');
      this.log(`${lints.length} ebuild${lints.length === 1 ? '' : 's'} checked: ${failing(results).length} errors/warnings, ${results.length - failing(results).length} style/info, ${tools.length} from bash/shellcheck`);
      for (const [release, e] of Object.entries(evidence)) this.log(`evidence of ROCm ${release}: ${e.level} (${describeCounts(e.counts)}): ${EVIDENCE_MEANING[e.level]}`);
    }
    const bad = failing(results).length + tools.length;
    if (bad > 0) {
      if (this.jsonEnabled()) this.logJson({ results, tools, evidence });
      this.exit(ExitCode.qaFailed);
    }
    return { results, tools, evidence };
  }

  /**
   * The ebuilds an overlay holds, as pkgcheck scans a repository: a stack
   * package against its release, anything else as any ebuild; bash -n and
   * shellcheck once over all of them.
   */
  private async lintOverlay(o: {
    overlay: string;
    version: string | undefined;
    allPackages: boolean;
    names: string[];
    manifest: Manifest;
    pool: Map<string, ResolvedComponent>;
    modelOf: (release: string) => Promise<StackModel>;
    progress: ReturnType<typeof createProgress>;
    linted: Set<string>;
    shell: boolean;
  }): Promise<ComponentLint[]> {
    const { manifest, pool, modelOf, progress, linted, shell } = o;
    const dir = path.resolve(o.overlay);
    if ((await checkOverlayPath(dir, { create: false })) === 'missing') throw new UserError(`no overlay at ${dir}`, ExitCode.invalidInput);
    const stackAtoms = new Set(manifest.components.map((c) => c.spec.atom));
    // Any package of the overlay, as pkgcheck scans a repository: the stack's against the manifest, others as any ebuild.
    // ::gentoo is a whole distribution (an hour of linting): there only the stack's packages, unless asked.
    const gentoo = (await readFile(path.join(dir, 'profiles', 'repo_name'), 'utf8').catch(() => '')).trim() === 'gentoo';
    const stackOnly = gentoo && !o.allPackages;
    // Named packages may be any of the tree's; the whole tree is then listed (directories only), never read.
    const inOverlay = stackOnly && o.names.length === 0 ? heldPackages(dir, [...stackAtoms]) : overlayPackages(dir);
    if (stackOnly && o.names.length === 0 && !this.jsonEnabled()) {
      notice(`::gentoo: checking the ${inOverlay.length} packages of the ROCm stack it holds (--all-packages checks every package of the tree)`);
    }
    const named = requirePackageNames(o.names, [...new Set([...inOverlay, ...pool.keys()])], `the overlay ${dir} or the stack`);
    const absent = named.filter((a) => !inOverlay.includes(a));
    if (absent.length) throw new UserError(`the overlay holds no ebuild of ${absent.join(', ')}`, ExitCode.invalidInput);
    const atoms = (named.length ? named : inOverlay).filter((a) => !o.version || pool.has(a));
    const state = await scanOverlay(dir, atoms);
    // Every ebuild of the overlay with its SLOT, named packages or not: what dependencies on its packages must be met by.
    // On ::gentoo, of the stack's packages and those named: reading every ebuild of the tree is what stackOnly avoids.
    const index = overlayIndex(dir, stackOnly ? [...new Set([...heldPackages(dir, [...stackAtoms]), ...named])] : inOverlay);
    const year = currentYear();
    const texts: string[] = [];
    const wanted: ComponentLint[] = [];
    const total = atoms.reduce((n, a) => n + (state.packages.get(a)?.versions.length ?? 0), 0);
    let n = 0;
    for (const atom of atoms) {
      const pkg = state.packages.get(atom);
      if (!pkg) continue;
      const c = pool.get(atom);
      const metadata = pkg.hasMetadata ? await readFile(path.join(dir, atom, 'metadata.xml'), 'utf8') : undefined;
      for (const v of pkg.versions) {
        const file = `${atom}/${atom.split('/')[1]}-${v}.ebuild`;
        const text = await readFile(path.join(dir, file), 'utf8');
        // A stack package at a release the manifest knows: against that release; anything else as pkgcheck would.
        // A version a release holds the package at belongs to that release (its SLOT says which).
        const release = c ? releaseOfEbuild(manifest, atom, v, text) : withoutRevision(v);
        progress.step(++n, total, `${atom}-${v}`);
        const other = c && manifest.stack.releases[release] ? await modelOf(release) : undefined;
        // As its release's stack resolves it: targets narrowed by what it needs.
        const at = other && c ? other.components.find((x) => x.loaded === c.loaded) : undefined;
        const l = at && other
          ? await lintComponent(at, other, { text, metadata: metadata ?? '', tools: undefined, overlay: index })
          : { atom, file, tools: [], results: await lintEbuild({ file, atom, version: v, text, ...(metadata !== undefined ? { metadata } : {}), year, rocm: stackAtoms.has(atom), overlay: index }) };
        if (at) linted.add(release);
        l.file = file;
        for (const r of l.results) r.file = file;
        texts.push(text);
        wanted.push(l);
      }
    }
    // bash -n and shellcheck once for every ebuild (one process each, not one per ebuild).
    const syntax = await bashSyntaxAll(texts);
    const style = shell ? await shellcheckAll(texts) : texts.map(() => []);
    wanted.forEach((l, i) => l.tools.push(...syntax[i]!, ...style[i]!));
    return wanted;
  }
}

/** Which of these packages the repository holds an ebuild of: a few directory reads, not a walk of the tree. */
function heldPackages(dir: string, atoms: readonly string[]): string[] {
  return atoms
    .filter((atom) => {
      const pkgDir = path.join(dir, atom);
      if (!existsSync(pkgDir)) return false;
      try {
        return readdirSync(pkgDir).some((f) => f.startsWith(`${atom.split('/')[1]}-`) && f.endsWith('.ebuild'));
      } catch {
        return false;
      }
    })
    .sort(byCodePoint);
}
