import { Args, Flags } from '#oclif';
import { BaseCommand } from '../../cli/base-command.js';
import { createProgress, useColor } from '../../cli/progress.js';
import { ExitCode } from '../../cli/exit-codes.js';
import { UserError } from '../../cli/errors.js';
import { loadManifestOrFail, manifestFlag } from '../../cli/stack.js';
import { deadlineOf, requireVersion, treeFlags, treeProvider } from '../../cli/upstream-flags.js';
import { checkEvidence, type EvidenceReport } from '../../upstream/evidence/check.js';
import { formatEvidenceText } from '../../upstream/evidence/format.js';
import { addEvidenceRecord, checkRecordTarget, recordEvidence, RecordError, type TagRecord } from '../../upstream/evidence/record.js';
import { selectComponents } from '../../upstream/select.js';

export default class UpstreamEvidence extends BaseCommand {
  static override summary = "Check a release's facts at the real upstream tags, and record them as `tag` evidence";
  static override description = `For every component of the release, opens its sources at the release's tags (the trees upstream diff and upstream patches read: the release tarballs, or with --base-url the git tags; a monorepo's project through a partial clone of its directory) and checks the facts that can be checked mechanically:
  sources  every source's tag or release asset exists, and the directory S points at holds the build files
  cmake    every -D name the ebuild passes is defined or read by the project's CMake files (option(), set(… CACHE), if(NAME), \${NAME}) or is CMake's own (CMAKE_*, BUILD_TESTING, the <Pkg>_DIR of a package it finds)
  fixups   every fix-up applies, replayed as upstream patches replays them (our patch files applied as git apply would; a patch fetched by URL is not replayed)
  offline  with the -D options the ebuild passes (USE flags tried on and off), the CMake of the tree the fix-ups leave reaches no FetchContent, ExternalProject, CPM, file(DOWNLOAD) or git clone, or makes FetchContent find the installed package (FIND_PACKAGE_ARGS, FETCHCONTENT_TRY_FIND_PACKAGE_MODE=ALWAYS, FETCHCONTENT_SOURCE_DIR_<NAME>)
Each fact held, failed (with the reason), was not checked (it cannot be decided here) or was unreadable (a tree could not be read, or a download sits behind a condition configure computes). deps, targets, tests and the other facts need a reviewer and are left out.

With --record, each component whose checked facts held, none failing, gets an evidence record in its YAML file: releases: ["VERSION"], kind: tag, source: "<owner/repo> at <tag>", facts: the facts that held. It is spliced in with every comment and other byte kept, and a second run changes nothing. The file is replaced by rename under a lock beside it (a second process waits for it); a symbolic link, or a file outside the manifest directory, is refused before anything is read.

Exit codes: 0 every checked fact held, 2 invalid input or a record refused, 5 some sources could not be read, 6 some facts failed (the data must change).`;

  static override examples = [
    { description: 'Which facts of 6.3.3 hold at the upstream tags?', command: '<%= config.bin %> <%= command.id %> 6.3.3' },
    { description: 'Record tag evidence for two components, from local mirrors', command: "<%= config.bin %> <%= command.id %> 6.3.3 rocPRIM hipcub --record --base-url '/srv/mirror/{owner}+{repo}.git'" },
    { description: 'The checks as JSON, bounded to ten minutes', command: '<%= config.bin %> <%= command.id %> 7.2.0 rocBLAS --json --timeout 600' },
  ];

  static override strict = false;
  static override args = {
    version: Args.string({ ignoreStdin: true, description: 'the release whose facts are checked, e.g. 6.3.3 (one the manifest has)', required: true }),
  };

  static override flags = {
    manifest: manifestFlag,
    ...treeFlags,
    record: Flags.boolean({ description: 'write a `tag` evidence record into each component file whose checked facts all held' }),
  };

  async run(): Promise<EvidenceReport> {
    const { args, argv, flags } = await this.parse(UpstreamEvidence);
    const json = this.jsonEnabled();
    const version = requireVersion(args.version, 'release');
    const manifest = await loadManifestOrFail(flags.manifest);
    if (!Object.hasOwn(manifest.stack.releases, version)) {
      throw new UserError(`release ${version} is not in ${manifest.file}: evidence is recorded for releases the manifest generates (add it with bump --derive-from first)`, ExitCode.invalidInput);
    }
    const components = selectComponents(manifest, (argv as string[]).slice(1));
    if (flags.record) {
      // Refused before anything is fetched: a link out of the manifest is never read or replaced.
      for (const c of components) {
        try {
          await checkRecordTarget(c.source.file, manifest.dir);
        } catch (err) {
          if (err instanceof RecordError) throw new UserError(`${err.message}; nothing was checked or written`, ExitCode.invalidInput);
          throw err;
        }
      }
    }
    const quiet = json || !process.stderr.isTTY;
    const report = await checkEvidence(manifest, {
      version,
      components,
      provider: treeProvider(flags, quiet, { deadline: deadlineOf(flags.timeout) }),
      jobs: flags.jobs ?? 2,
      progress: createProgress({ quiet }),
    });
    const byName = new Map(components.map((c) => [c.spec.name, c]));
    for (const c of report.components) {
      if (!c.record) continue;
      const record = c.record as TagRecord;
      try {
        if (flags.record) {
          c.recorded = await recordEvidence(c.file, manifest.dir, record, (holder) => {
            if (!quiet) process.stderr.write(`waiting for ${holder}, which is writing ${c.file}\n`);
          });
        } else {
          c.recorded = addEvidenceRecord(byName.get(c.component)!.source.text, record, c.file) === undefined ? 'unchanged' : 'would-write';
        }
      } catch (err) {
        if (!(err instanceof RecordError)) throw err;
        c.recordError = err.message;
        report.records.refused++;
        continue;
      }
      if (c.recorded === 'written') report.records.written++;
      else if (c.recorded === 'unchanged') report.records.unchanged++;
      else report.records.wouldWrite++;
    }
    if (!json) process.stdout.write(formatEvidenceText(report, { color: useColor(process.stdout), record: flags.record }));
    const k = report.counts;
    const code = report.records.refused > 0 && flags.record ? ExitCode.invalidInput : k.unreadable > 0 ? ExitCode.fetchFailed : k.failed > 0 ? ExitCode.qaFailed : ExitCode.ok;
    if (code !== ExitCode.ok) {
      if (json) this.logJson(report);
      this.exit(code);
    }
    return report;
  }
}
