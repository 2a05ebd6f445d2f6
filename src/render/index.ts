import { upstreamRepos, type ResolvedComponent, type StackModel } from '../model/resolve.js';
import { buildContext } from './context.js';
import { templateEnv } from './env.js';
import { isUseExpand } from '../model/use-flags.js';
import { byCodePoint } from '../util/order.js';

export interface RenderOptions {
  /** The copyright year in the header; defaults to this year (or SOURCE_DATE_EPOCH's). */
  year?: number;
}

/** The year for copyright headers; SOURCE_DATE_EPOCH makes output reproducible. */
export function currentYear(): number {
  const epoch = process.env.SOURCE_DATE_EPOCH;
  const date = epoch && /^\d+$/.test(epoch) ? new Date(Number(epoch) * 1000) : new Date();
  return date.getUTCFullYear();
}

export function renderEbuild(c: ResolvedComponent, model: StackModel, options: RenderOptions = {}): string {
  const context = buildContext(c, model, { year: options.year ?? currentYear() });
  const text = templateEnv().render('ebuild.njk', context);
  // Templates may leave a run of blank lines where optional blocks are absent.
  return `${text.replace(/\n{3,}/g, '\n\n').replace(/\s+$/, '')}\n`;
}

export interface MetadataContext {
  maintainers: { type: string; email: string; name?: string }[];
  useFlags: { name: string; description: string }[];
  remoteIds: { type: string; id: string }[];
  bugsTo?: string;
}

const DEFAULT_MAINTAINERS = [{ type: 'project', email: 'sci@gentoo.org', name: 'Gentoo Science Project' }];

/** The stack manifest's maintainers: the choice for work bound for ::gentoo. */
export function stackMaintainers(model: StackModel): MetadataContext['maintainers'] {
  return model.manifest.stack.defaults?.maintainers ?? DEFAULT_MAINTAINERS;
}

export interface MetadataOptions {
  /** The overlay's maintainers (its settings); default: the stack manifest's. */
  maintainers?: MetadataContext['maintainers'];
}

export function metadataContext(c: ResolvedComponent, model: StackModel, options: MetadataOptions = {}): MetadataContext {
  const repos = upstreamRepos(c);
  return {
    maintainers: options.maintainers ?? stackMaintainers(model),
    useFlags: Object.entries(c.spec.use ?? {})
      .filter((e): e is [string, { description: string }] => e[1].description !== undefined && !isUseExpand(e[0]))
      .map(([name, f]) => ({ name, description: f.description }))
      .sort((a, b) => byCodePoint(a.name, b.name)),
    remoteIds: repos.map((id) => ({ type: 'github', id })),
    ...(repos[0] ? { bugsTo: `https://github.com/${repos[0]}/issues` } : {}),
  };
}

export function renderMetadata(c: ResolvedComponent, model: StackModel, options: MetadataOptions = {}): string {
  return templateEnv().render('metadata.xml.njk', metadataContext(c, model, options));
}

export function renderLayoutConf(repoName: string, signCommits: boolean): string {
  return templateEnv().render('repo/layout.conf.njk', { repoName, signCommits });
}
