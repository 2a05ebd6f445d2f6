import type { ManifestIssue } from '../manifest/issues.js';
import type { EvidenceSpec } from '../manifest/types.js';
import { issueAt, type ResolvedComponent } from '../model/resolve.js';
import { expand, isTarball } from '../model/sources/index.js';

/**
 * What a release's sources at pinned commits must agree with: a `pinned`
 * source has a commit (the release pins its repository, or it names one);
 * `extract` lists directories of a tarball, the main tree among them; and a
 * `pin` evidence record is what the ebuild fetches: the repository and
 * directory it names, at its commit, by the commit's own archive
 * (`fetch: commit`) or by the tag it says `upstream tags` saw at that commit.
 */
export function checkPinnedSources(c: ResolvedComponent): ManifestIssue[] {
  const issues: ManifestIssue[] = [];
  c.sources.forEach(({ spec, at, location }, index) => {
    if (location.commit && location.commit.value === undefined) {
      issues.push(
        issueAt(
          c,
          ['sources', at, 'pinned'],
          `ROCm ${c.release} pins no commit of ${spec.pinned}: this source has none to fetch`,
          `add it to stack.yaml's releases."${c.release}".pins ({ ${spec.pinned}: <40 hex> }), or give the source its own \`commit\``,
        ),
      );
    }
    if (spec.extract) {
      if (!isTarball(location.name)) {
        issues.push(issueAt(c, ['sources', at, 'extract'], `extract needs a tar archive; ${location.name} is not one`, 'remove `extract`: the file is unpacked whole'));
      }
      const s = index === 0 ? spec.subdir : undefined;
      if (s !== undefined && !spec.extract.some((e) => s === e || s.startsWith(`${e}/`))) {
        issues.push(
          issueAt(c, ['sources', at, 'extract'], `extract leaves out ${s}, the package's own tree (S)`, `add ${s} (or a directory holding it) to extract`),
        );
      }
    }
  });
  const records = c.loaded.spec.evidence ?? [];
  for (const record of c.evidence.records) {
    if (record.kind !== 'pin' || !record.pin) continue;
    issues.push(...checkPinRecord(c, record, records.indexOf(record)));
  }
  return issues;
}

function checkPinRecord(c: ResolvedComponent, record: EvidenceSpec, i: number): ManifestIssue[] {
  const pin = record.pin!;
  const at = ['evidence', i, 'pin'];
  const fetching = c.sources.filter((s) => s.location.repo === pin.repo);
  if (fetching.length === 0) {
    const repos = [...new Set(c.sources.map((s) => s.location.repo).filter((r) => r !== undefined))];
    return [
      issueAt(
        c,
        [...at, 'repo'],
        `the pin record names ${pin.repo}, which no source of ${c.atom} fetches in ${c.release}${repos.length ? ` (they fetch ${repos.join(', ')})` : ''}`,
        'make the record name the repository the source fetches, or the source fetch the one TheRock pins',
      ),
    ];
  }
  const main = fetching[0]!;
  const place = main.spec.subdir ?? main.location.path;
  const issues: ManifestIssue[] = [];
  if (pin.path !== undefined && place !== pin.path) {
    issues.push(
      issueAt(c, [...at, 'path'], `the pin record names ${pin.path} of ${pin.repo}; the source builds ${place ?? 'the whole repository'}`, 'make the source\'s `subdir` the directory TheRock builds, or correct the record'),
    );
  }
  if (pin.fetch === 'commit') {
    const commit = main.location.commit?.value;
    if (commit !== pin.commit) {
      issues.push(
        issueAt(
          c,
          [...at, 'commit'],
          commit === undefined
            ? `the pin record says the ebuild fetches ${pin.repo} at commit ${pin.commit}, but the source fetches ${main.location.tag ? `tag ${main.location.tag}` : main.location.url}`
            : `the pin record names commit ${pin.commit} of ${pin.repo}; the source fetches ${commit}`,
          commit === undefined
            ? `make the source \`pinned: ${pin.repo}\` (the archive of the pinned commit)`
            : `correct stack.yaml's releases."${c.release}".pins or the record: they must name the commit TheRock pins`,
        ),
      );
    }
  } else {
    const tag = expand(pin.fetch.tag, c.pn, c.version);
    if (main.location.commit !== undefined || main.location.tag !== tag) {
      issues.push(
        issueAt(
          c,
          [...at, 'fetch', 'tag'],
          `the pin record says the ebuild fetches ${pin.repo} by tag ${tag}, but the source fetches ${main.location.commit ? `commit ${main.location.commit.value ?? '(none pinned)'}` : `tag ${main.location.tag ?? '(none)'}`}`,
          `fetch ${tag} with \`github: ${pin.repo}\`, or say \`fetch: commit\` and fetch the commit with \`pinned: ${pin.repo}\``,
        ),
      );
    }
  }
  return issues;
}
