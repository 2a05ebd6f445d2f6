import { Args, Flags } from '#oclif';
import { BaseCommand } from '../../cli/base-command.js';
import { useColor } from '../../cli/progress.js';
import { ExitCode } from '../../cli/exit-codes.js';
import { UserError } from '../../cli/errors.js';
import { loadManifestOrFail, manifestFlag, stackFor } from '../../cli/stack.js';
import { requireVersion } from '../../cli/upstream-flags.js';
import { runPeer } from '../../upstream/peers/record.js';
import { formatPeerText } from '../../upstream/peers/format.js';
import type { PeerReport } from '../../upstream/peers/peer-report.js';
import { selectComponents } from '../../upstream/select.js';

export default class UpstreamPeer extends BaseCommand {
  static override summary = "Compare a release's packages with ::gentoo's ebuilds and Spack's recipes of that version, and record `peer` evidence";
  static override description = `Reads the peers' recipes of the release's version — in a Gentoo repository (--gentoo: a ::gentoo checkout or any repository laid out category/package/), the ebuild of the same version, else the nearest lower one (said so); in a spack-packages checkout (--spack), the package's package.py with its version("X.Y.Z") and the when= conditions decided for it — and sets them beside the ebuilds the manifest generates, fact by fact:
  sources  SRC_URI and S (Spack: the trees it builds from and the directory CMake starts in)
  deps     dependencies: atom, classes, USE conditions, slot (Spack: the package, mapped to its Gentoo atom, and its conditions); a dependency ours gets through another package agrees
  cmake    every -D option and flag, its value and the USE flag that switches it
  fixups   ::gentoo's PATCHES and src_prepare seds, Spack's patch() and filter_file: the files each touches and what it changes, compared with our fix-ups and patches by file and change, not by text
  llvm     LLVM_COMPAT (::gentoo)
  tests    RESTRICT's test restriction (::gentoo)
Each item agrees, differs (both sides shown) or is unreadable. Recipes are read as text, never run: ebuilds through the bash parser, package.py through a parser for the Python recipes are written in. A peer tree that leads out of itself (a symbolic link), holds something other than regular files where recipes are, a file over 4 MiB, text that is not UTF-8 or nesting no recipe has is refused with the file, line and column, and nothing is written.

A difference the component's YAML argues (a differences: entry naming the peer, the fact and the item, with why ours is right) stays a difference here but counts for the record. A peer fix-up on a file of our source that we carry no equivalent edit for is a finding.

With --record, each component whose comparison has facts that agree (or whose every difference is argued) gets a peer record for the release: releases: ["VERSION"], kind: peer, source: "::gentoo <file>" or "Spack <file>", facts, a note when the recipe is of a lower version, and lacks: the findings. Records of the same peer that named the release before lose it (a computed record replaces a typed one). Comments and other bytes of the file are kept; a second run changes nothing; the file is replaced by rename under the lock upstream evidence uses. validate and lint fail on a finding no differences: entry argues.

Exit codes: 0 compared, 2 invalid input (a bad or hostile peer tree, the release or a component is not in the manifest; with --record, a component file that is a symbolic link, not a regular file, hard-linked, outside the manifest, read-only or immutable: refused before anything is compared, nothing written), 6 some peer fix-up on our source is neither carried nor argued (the report names it; that peer's record of the component is withheld, the others are written).`;

  static override examples = [
    { description: "Compare 7.2.0 with a ::gentoo checkout's ebuilds", command: '<%= config.bin %> <%= command.id %> 7.2.0 --gentoo /var/db/repos/gentoo' },
    { description: 'Two components against ::gentoo and Spack, recording the computed evidence', command: '<%= config.bin %> <%= command.id %> 7.2.0 rocPRIM hipCUB --gentoo ~/gentoo --spack ~/spack-packages --record' },
    { description: 'Every item, agreeing ones too, as JSON', command: '<%= config.bin %> <%= command.id %> 7.1.0 rocSOLVER --gentoo ~/gentoo --json' },
  ];

  static override strict = false;
  static override args = {
    version: Args.string({ ignoreStdin: true, description: 'the release compared, e.g. 7.2.0 (one the manifest has)', required: true }),
  };

  static override flags = {
    manifest: manifestFlag,
    gentoo: Flags.string({ description: 'a Gentoo repository (category/package/*.ebuild): a ::gentoo checkout, or an overlay (default: none, ::gentoo is not compared)', helpValue: 'PATH' }),
    spack: Flags.string({ description: 'a spack-packages checkout (repos/spack_repo/builtin/packages/<name>/package.py) (default: none, Spack is not compared)', helpValue: 'PATH' }),
    record: Flags.boolean({ description: 'write the computed `peer` evidence records into the component files' }),
    all: Flags.boolean({ description: 'list agreeing items and the facts set aside as well, not only differences' }),
  };

  async run(): Promise<PeerReport> {
    const { args, argv, flags } = await this.parse(UpstreamPeer);
    const json = this.jsonEnabled();
    const version = requireVersion(args.version, 'release');
    if (!flags.gentoo && !flags.spack) throw new UserError('name a peer to compare with: --gentoo PATH (a Gentoo repository) and/or --spack PATH (a spack-packages checkout)', ExitCode.invalidInput);
    const manifest = await loadManifestOrFail(flags.manifest);
    if (!Object.hasOwn(manifest.stack.releases, version)) {
      throw new UserError(`release ${version} is not in ${manifest.file}: peers are compared for releases the manifest generates`, ExitCode.invalidInput);
    }
    const components = selectComponents(manifest, (argv as string[]).slice(1));
    const model = await stackFor(manifest, version);
    const report = await runPeer(manifest, {
      version,
      components,
      model,
      ...(flags.gentoo ? { gentoo: flags.gentoo } : {}),
      ...(flags.spack ? { spack: flags.spack } : {}),
      record: flags.record,
      onWait: (holder, file) => {
        if (!json && process.stderr.isTTY) process.stderr.write(`waiting for ${holder}, which is writing ${file}\n`);
      },
    });
    if (!json) process.stdout.write(formatPeerText(report, { color: useColor(process.stdout), record: flags.record, all: flags.all }));
    const code = report.records.refused > 0 && flags.record ? ExitCode.invalidInput : report.counts.unargued > 0 ? ExitCode.qaFailed : ExitCode.ok;
    if (code !== ExitCode.ok) {
      if (json) this.logJson(report);
      this.exit(code);
    }
    return report;
  }
}
