import { formatBytes } from '../../distfiles/units.js';
import { printable } from '../../util/printable.js';
import type { ProjectsReport } from './projects.js';
import type { TagsReport } from './tags.js';

/**
 * Everything in these reports that comes from a repository nobody here wrote
 * (names, versions, paths, git's messages) passes through the terminal-safe
 * printer: an ESC in a CMake file must not reach the user's terminal.
 */
const p = (s: string | undefined): string => printable(s ?? '', { oneLine: true });

/** A repository that could not be asked, as the tags report lists it. */
export interface Unreachable {
  repo: string;
  url: string;
  error: string;
}

/** What went wrong, without what differs between repositories failing the same way (their URL, a time). */
function causeOf(u: Unreachable): string {
  const name = u.repo.split('/').pop()!;
  return u.error
    .replace(/^fatal: unable to access '[^']*': /, '')
    .replaceAll(u.url, '<repository>')
    .replace(/'[^']*'/g, (quoted) => (quoted.includes(name) ? "'<repository>'" : quoted))
    .replace(/ after \d+ ms/, '')
    .trim();
}

const NETWORK = /resolve host|Could not connect|Couldn't connect|Failed to connect|Connection refused|Connection timed out|Network is unreachable|no answer within|not answered before the --timeout|timed out|SSL|proxy|TLS/i;

function adviceFor(cause: string): string {
  if (NETWORK.test(cause)) {
    return (
      'what to do: no network, or the host cannot be reached: check the connection (and HTTPS_PROXY), raise --timeout, ' +
      'or read local mirrors with --base-url (a directory or URL the owner/name path is appended to, or a template such as /srv/mirror/{owner}+{repo}.git)'
    );
  }
  if (/not found|does not appear to be a git repository|no git repository|does not exist|HTTP 404/i.test(cause)) {
    return 'what to do: nothing answers for these repositories at that address: check --base-url (or its {owner} and {repo} template)';
  }
  return 'what to do: run again; if it persists, read mirrors with --base-url';
}

/**
 * Repositories that could not be asked, grouped by cause as bump groups failed downloads: one
 * line per cause with the repositories it hit and what to do, so fifty repositories behind one
 * missing network are one line, not fifty.
 */
export function describeUnreachable(list: readonly Unreachable[]): string[] {
  const groups = new Map<string, Unreachable[]>();
  for (const u of list) {
    let host = 'local';
    try {
      host = new URL(u.url).host || 'local';
    } catch {
      // A plain directory: no host.
    }
    const key = `${host}\u0000${causeOf(u)}`;
    groups.set(key, [...(groups.get(key) ?? []), u]);
  }
  const out: string[] = [];
  for (const [key, group] of groups) {
    const cause = key.split('\u0000')[1]!;
    if (group.length === 1) out.push(`unreachable: ${group[0]!.repo} (${p(group[0]!.url)}): ${p(group[0]!.error)}`);
    else {
      const names = group.map((u) => u.repo);
      const shown = names.length <= 4 ? names.join(', ') : `${names.slice(0, 4).join(', ')} and ${names.length - 4} more`;
      out.push(`unreachable: ${group.length} repositories (${shown}): ${p(cause)}`);
    }
    out.push(`  ${adviceFor(cause)}`);
  }
  return out;
}

export function formatTagsText(r: TagsReport): string {
  const out: string[] = [`The manifest knows ${r.known.join(', ')}.`];
  const asked = r.repositories.length;
  const answered = asked - r.unreachable.length;
  if (asked > 0 && answered === 0) {
    out.push(`No repository could be asked (none of ${asked} answered): nothing is known of upstream's releases.`);
  } else if (r.missing.length === 0) {
    out.push(`Upstream has no release the manifest lacks (${answered} of ${asked} repositories answered${r.unreachable.length ? '; those that did not may have some' : ''}).`);
  } else {
    out.push(`Releases upstream has that the manifest lacks (${answered} of ${asked} repositories answered):`);
    for (const m of r.missing) {
      const lacking = m.lacking.length === 0 ? 'in every repository' : `not in ${m.lacking.length <= 4 ? m.lacking.join(', ') : `${m.lacking.slice(0, 4).join(', ')} and ${m.lacking.length - 4} more`}`;
      const stream = m.stream === 'therock' ? ` (TheRock ${m.tag})` : '';
      out.push(`  ${m.version.padEnd(8)} ${`${m.repositories}/${m.total}`.padStart(7)}  ${lacking}${stream}${m.olderThanKnown ? ' (older than the manifest)' : ''}`);
      // The commit each tag points at: what a pin or an evidence record names.
      for (const c of m.commits) out.push(`    ${p(c.repo)} ${p(c.tag)} ${c.commit}`);
    }
  }
  if (r.hiddenOlder > 0) out.push(`(${r.hiddenOlder} older release${r.hiddenOlder === 1 ? '' : 's'} not shown: --all lists them)`);
  out.push(...describeUnreachable(r.unreachable));
  return `${out.join('\n')}\n`;
}

export function formatProjectsText(r: ProjectsReport): string {
  const out: string[] = [
    r.unread !== undefined
      ? `AMD's ROCm ${r.version} release manifest could not be read (${p(r.unread)}); the monorepos' projects only:`
      : `AMD's ROCm ${r.version} release manifest (${p(r.source)}) against ${r.against} (${p(r.againstSource)}):`,
  ];
  const who = (p: ProjectsReport['projects'][number]) =>
    p.packagedBy.length > 0 ? `packaged by ${p.packagedBy.join(', ')}` : p.excluded !== undefined ? `excluded: ${p.excluded.length > 70 ? `${p.excluded.slice(0, 69)}…` : p.excluded}` : '';
  // Names come from AMD's release manifest (or a file given as one): printable, and a long one does not widen every row.
  const name = (x: { name: string }) => p(x.name);
  const width = Math.min(40, Math.max(0, ...r.projects.map((x) => name(x).length)));
  for (const x of r.projects.filter((y) => y.status === 'new')) {
    out.push(`  new      ${name(x).padEnd(width)}  ${x.accounted ? who(x) : 'neither packaged nor excluded: decide'}`);
  }
  for (const x of r.projects.filter((y) => y.status === 'gone')) {
    out.push(`  gone     ${name(x).padEnd(width)}  ${who(x) || 'not accounted for before either'}`);
  }
  for (const x of r.projects.filter((y) => y.pathBefore !== undefined)) {
    out.push(`  path     ${name(x).padEnd(width)}  ${p(x.pathBefore)} → ${p(x.path)}`);
  }
  for (const x of r.projects.filter((y) => y.status === 'kept' && !y.accounted)) {
    out.push(`  unaccounted ${name(x)}: neither packaged nor excluded in ${r.version}`);
  }
  for (const rel of r.relations) {
    out.push(`  ${rel.kind.padEnd(8)} ${p(rel.from)} → ${p(rel.to)}${rel.at ? `/${p(rel.at)}` : ''}: ${rel.evidence.map(p).join('; ')}`);
  }
  if (r.drift && (r.drift.notInManifest.length > 0 || r.drift.notUpstream.length > 0)) {
    out.push(`  the manifest's own list for ${r.version} differs from AMD's: ${[...r.drift.notInManifest.map((x) => `+${p(x)}`), ...r.drift.notUpstream.map((x) => `-${p(x)}`)].join(' ')}`);
  }
  // Mirrors often hold only some repositories: a long list of misses is summarised.
  for (const x of r.problems.slice(0, r.problems.length > 6 ? 4 : 6)) out.push(`  note: ${p(x)}`);
  if (r.problems.length > 6) out.push(`  note: and ${r.problems.length - 4} more repositories could not be read (--json lists them)`);
  for (const m of r.monorepos) {
    if (m.error !== undefined) {
      out.push(`${m.repo} ${m.tag}: not listed: ${p(m.error)}`);
      continue;
    }
    out.push(`${m.repo} ${m.tag} (${m.projects.length} project directories${m.bytes > 0 ? `; ${formatBytes(m.bytes)} of trees fetched` : ''}):`);
    // Directory names come from the monorepo's tree.
    const w = Math.min(40, Math.max(0, ...m.projects.map((x) => p(x.dir).length)));
    for (const x of m.projects) {
      const what = x.packagedBy.length > 0 ? `packaged by ${x.packagedBy.join(', ')}` : x.excluded !== undefined ? `excluded: ${x.excluded.length > 70 ? `${x.excluded.slice(0, 69)}…` : x.excluded}` : 'neither packaged nor excluded: decide';
      out.push(`  ${p(x.dir).padEnd(w)}  ${what}`);
    }
  }
  const n = (s: string) => r.projects.filter((p) => p.status === s).length;
  const open = r.projects.filter((p) => p.status === 'new' && !p.accounted).length;
  const monoOpen = r.monorepos.flatMap((m) => m.projects).filter((p) => !p.accounted).length;
  if (r.unread === undefined) out.push(`${r.projects.length - n('gone')} projects in ${r.version}: ${n('kept')} kept, ${n('new')} new (${open} to decide), ${n('gone')} gone since ${r.against}${r.monorepos.length ? `; ${monoOpen} monorepo project${monoOpen === 1 ? '' : 's'} to decide` : ''}`);
  else out.push(`${r.monorepos.flatMap((m) => m.projects).length} monorepo projects in ${r.version}: ${monoOpen} to decide`);
  return `${out.join('\n')}\n`;
}
