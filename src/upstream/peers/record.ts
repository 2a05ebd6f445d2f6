import type { LoadedComponent, Manifest } from '../../manifest/load.js';
import type { StackModel } from '../../model/resolve.js';
import { UserError } from '../../util/errors.js';
import { ExitCode } from '../../util/exit-codes.js';
import { checkRecordTarget, RecordError, rewriteComponentFile } from '../records/component-file.js';
import { setPeerRecord } from '../records/peer-records.js';
import { LocalDir, LocalDirError } from '../trees/local-dir.js';
import { comparePeers, type PeerComponentReport, type PeerReport } from './peer-report.js';
import { PeerReadError } from './read-error.js';
import { PEER_LABEL } from './recipe.js';

/**
 * `upstream peer` from paths to records: the peer trees opened, every recipe
 * read and compared (a tree or recipe that cannot be read stops the run
 * here, before anything is written), then each component file's peer records
 * set to what was computed — all of a file's records in one locked rewrite.
 */

export interface RunPeerOptions {
  version: string;
  components: LoadedComponent[];
  model: StackModel;
  gentoo?: string;
  spack?: string;
  record: boolean;
  onWait?: (holder: string, file: string) => void;
}

async function open(dir: string, what: string): Promise<LocalDir> {
  try {
    return await LocalDir.open(dir);
  } catch (err) {
    if (err instanceof LocalDirError) throw new UserError(`--${what}: ${err.message}`, ExitCode.invalidInput);
    throw err;
  }
}

/** The text of a component file with each compared peer's record of the release set (or the release taken out); `changed` gets the reports that changed it. */
function edit(text: string, file: string, version: string, reports: PeerComponentReport[], changed: Set<PeerComponentReport>): string | undefined {
  let out = text;
  changed.clear();
  for (const r of reports) {
    const next = setPeerRecord(out, version, `${PEER_LABEL[r.peer]} `, r.record, file);
    if (next !== undefined) {
      out = next;
      changed.add(r);
    }
  }
  return changed.size > 0 ? out : undefined;
}

export async function runPeer(manifest: Manifest, o: RunPeerOptions): Promise<PeerReport> {
  const gentoo = o.gentoo ? await open(o.gentoo, 'gentoo') : undefined;
  const spack = o.spack ? await open(o.spack, 'spack') : undefined;
  if (o.record) {
    // Refused before anything is read: a link out of the manifest is never read or replaced.
    for (const c of o.components) {
      try {
        await checkRecordTarget(c.source.file, manifest.dir);
      } catch (err) {
        if (err instanceof RecordError) throw new UserError(`${err.message}; nothing was compared or written`, ExitCode.invalidInput);
        throw err;
      }
    }
  }
  let report: PeerReport;
  try {
    report = await comparePeers(manifest, { version: o.version, components: o.components, model: o.model, ...(gentoo ? { gentoo } : {}), ...(spack ? { spack } : {}) });
  } catch (err) {
    if (err instanceof LocalDirError || err instanceof PeerReadError) throw new UserError(`${err.message}; nothing was written`, ExitCode.invalidInput, { file: err.file });
    throw err;
  }
  const byFile = new Map<string, PeerComponentReport[]>();
  for (const c of report.components) byFile.set(c.yaml, [...(byFile.get(c.yaml) ?? []), c]);
  const sources = new Map(o.components.map((c) => [c.source.file, c.source.text]));
  for (const [file, reports] of byFile) {
    let state: 'written' | 'unchanged' | 'would-write';
    const changed = new Set<PeerComponentReport>();
    try {
      if (o.record) state = await rewriteComponentFile(file, manifest.dir, (text) => edit(text, file, o.version, reports, changed), (holder) => o.onWait?.(holder, file));
      else state = edit(sources.get(file) ?? '', file, o.version, reports, changed) === undefined ? 'unchanged' : 'would-write';
    } catch (err) {
      if (!(err instanceof RecordError)) throw err;
      for (const r of reports) r.recordError = err.message;
      report.records.refused++;
      continue;
    }
    for (const r of reports) {
      const mine = changed.has(r);
      if (!mine) r.recorded = 'unchanged';
      else if (!r.record) r.recorded = state === 'written' ? 'removed' : 'would-remove';
      else r.recorded = state === 'written' ? 'written' : 'would-write';
      if (r.recorded === 'unchanged' && r.record) report.records.unchanged++;
      else if (r.recorded === 'written') report.records.written++;
      else if (r.recorded === 'would-write') report.records.wouldWrite++;
      else if (r.recorded === 'removed' || r.recorded === 'would-remove') report.records.removed++;
    }
  }
  return report;
}
