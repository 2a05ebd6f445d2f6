import nunjucks from 'nunjucks';
import { templatesDir } from '../paths.js';
import type { TargetTable } from './table.js';

let env: nunjucks.Environment | undefined;

function environment(): nunjucks.Environment {
  env ??= new nunjucks.Environment(new nunjucks.FileSystemLoader(templatesDir), {
    autoescape: false,
    throwOnUndefined: true,
    trimBlocks: true,
    lstripBlocks: true,
  });
  return env;
}

/**
 * profiles/desc/amdgpu_targets.desc: the Gentoo header with `year`, then one
 * "<target> - <description>" line per target, in table order. By default the
 * targets are those some policy offers: a flag no ebuild can have would be
 * reported by pkgcheck as UnusedGlobalUseExpand. An overlay holding only some
 * releases can pass `only` (e.g. the targets of those releases' policies).
 */
export function renderAmdgpuTargetsDesc(table: TargetTable, year: number, only?: Iterable<string>): string {
  const wanted = new Set(only ?? table.policies.flatMap((p) => [...p.defaultOn, ...p.optional]));
  return environment().render('profiles/amdgpu_targets.desc.njk', {
    year,
    targets: table.targets.filter((t) => wanted.has(t.name)),
  });
}

const COPYRIGHT_RE = /^# Copyright (?:(\d{4})-)?(\d{4}) Gentoo Authors/;

/** The last year of the "# Copyright [YYYY-]YYYY Gentoo Authors" first line, if any. */
export function copyrightYear(text: string): number | undefined {
  const m = COPYRIGHT_RE.exec(text);
  return m ? Number(m[2]) : undefined;
}

/** `text` with its copyright line ending in `year` ("2024" becomes "2024-2026"). */
export function withCopyrightYear(text: string, year: number): string {
  return text.replace(COPYRIGHT_RE, (_all, first: string | undefined, last: string) => {
    const start = first ?? last;
    return start === String(year) ? `# Copyright ${year} Gentoo Authors` : `# Copyright ${start}-${year} Gentoo Authors`;
  });
}
