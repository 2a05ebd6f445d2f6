import type { DistfileFailureCause, DistfileResult } from './types.js';

/**
 * A failed or missing distfile as the user should read it: what failed, who
 * needs it, every URL tried with its outcome, and what to do.
 */
export function describeProblem(r: DistfileResult): string {
  const lines = [`${r.status === 'missing' ? 'missing' : 'failed'}: ${r.name}`];
  if (r.error) lines.push(`  ${r.error}`);
  for (const n of r.neededBy) lines.push(`  needed by ${n.atom} (${n.ebuild})`);
  if (r.attempts.length > 0) {
    lines.push('  tried:');
    for (const a of r.attempts) lines.push(`    ${a.url}: ${a.outcome}`);
  }
  if (r.hint) lines.push(`  what to do: ${r.hint}`);
  return lines.join('\n');
}

/** True when every distfile is usable, i.e. each has a verified Manifest entry. */
export function allVerified(results: DistfileResult[]): boolean {
  return results.every((r) => (r.status === 'present' || r.status === 'fetched') && r.entry !== undefined);
}

/**
 * What to do when a host cannot be talked to at all. The same advice serves
 * one file or a whole release: check the network or proxy, fetch through a
 * mirror, or bring the files over and run offline.
 */
export function hostAdvice(cause: DistfileFailureCause, host: string, summary: string, distdir: string): string {
  const elsewhere =
    `fetch through a mirror that has the files (--mirror URL, or GENTOO_MIRRORS), or copy them into ${distdir} ` +
    `from a machine that has them and run with --distdir ${distdir} --offline.`;
  switch (cause) {
    case 'dns':
      return (
        `${host} cannot be resolved from here (no network, or DNS blocked). Check the connection, and HTTP(S)_PROXY ` +
        `if this network needs a proxy; or ${elsewhere}`
      );
    case 'proxy':
      return (
        `The proxy refused to connect to ${host} (${summary.replace(/^the proxy refused the connection: /, '')}). Check the proxy's rules and HTTP(S)_PROXY, add the ` +
        `host to NO_PROXY if it is reachable directly; or ${elsewhere}`
      );
    case 'tls':
      return (
        `The TLS connection to ${host} failed (${summary}): check the system clock and CA certificates; a proxy or ` +
        `firewall that intercepts TLS needs its CA certificate given to Node (NODE_EXTRA_CA_CERTS=/path/to/ca.pem); or ${elsewhere}`
      );
    default:
      return (
        `${host} cannot be reached (${summary}: a firewall, no route, or the server is down). Check the connection ` +
        `and HTTP(S)_PROXY, and run again later; or ${elsewhere}`
      );
  }
}

const GROUPED: ReadonlySet<DistfileFailureCause> = new Set(['dns', 'connect', 'proxy', 'tls', 'network', 'interrupted']);
const SHOWN_NAMES = 5;

/** Failures that say something about a host rather than a file are reported once per host. */
function groupKey(r: DistfileResult): string | undefined {
  if (r.status === 'missing') return 'missing';
  const f = r.failure;
  if (!f) return undefined;
  if (GROUPED.has(f.cause) || (f.cause === 'http' && /^HTTP (5\d\d|408|425|429)\b/.test(f.summary))) {
    return `${f.cause}\0${f.host ?? ''}\0${f.summary}`;
  }
  return undefined;
}

function names(group: DistfileResult[]): string {
  const shown = group.slice(0, SHOWN_NAMES).map((r) => r.name);
  const more = group.length - shown.length;
  const count = `${group.length} file${group.length === 1 ? '' : 's'}`;
  return `${count}: ${shown.join(', ')}${more > 0 ? `, … and ${more} more` : ''}`;
}

/**
 * Every failed or missing distfile of a run, grouped by cause: one line (and
 * one piece of advice) per unreachable host, per host that kept failing, for
 * the interrupted files and for the missing ones, instead of a block per
 * file; files that failed for reasons of their own (not found, content that
 * contradicts the Manifest, a lock, a size cap), and a cause only one file
 * has, keep their detailed block. Per-file detail stays in the results
 * (`--json`).
 */
export function describeProblems(results: DistfileResult[], context: { distdir: string; offline?: boolean }): string {
  const bad = results.filter((r) => r.status === 'failed' || r.status === 'missing');
  const groups = new Map<string, DistfileResult[]>();
  const single: DistfileResult[] = [];
  for (const r of bad) {
    const key = groupKey(r);
    if (key === undefined) {
      single.push(r);
      continue;
    }
    const list = groups.get(key);
    if (list) list.push(r);
    else groups.set(key, [r]);
  }
  const out: string[] = [];
  for (const [key, group] of groups) {
    // One file is better told in full: which package needs it, every URL tried.
    if (group.length === 1) {
      single.unshift(group[0]!);
      continue;
    }
    if (key === 'missing') {
      out.push(`missing from ${context.distdir}: ${names(group)}`);
      out.push(
        `  what to do: copy them into ${context.distdir} (or point --distdir at a directory that has them)` +
          `${context.offline ? ', or run without --offline to download them' : ''}.`,
      );
      continue;
    }
    const f = group[0]!.failure!;
    if (f.cause === 'interrupted') {
      out.push(`interrupted: ${names(group)}`);
      out.push('  what to do: run again: finished files are kept and partial downloads resume.');
      continue;
    }
    out.push(`${f.host ?? 'unknown host'}: ${f.summary} (${names(group)})`);
    if (f.cause === 'network' || f.cause === 'http') {
      out.push(
        `  what to do: network trouble with ${f.host ?? 'the server'}. Run again: files already fetched are not fetched ` +
          `again and partial downloads resume. If it persists, raise --timeout, check HTTP(S)_PROXY, or add a --mirror.`,
      );
    } else {
      out.push(`  what to do: ${hostAdvice(f.cause, f.host ?? 'the host', f.summary, context.distdir)}`);
    }
  }
  for (const r of single) out.push(describeProblem(r));
  return out.join('\n');
}
