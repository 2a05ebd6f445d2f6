import nunjucks from '#nunjucks';
import { templatesDir } from '../paths.js';
import { precompiledTemplates, TEMPLATE_OPTIONS } from './precompiled.js';

export interface CustomPhase {
  before: string[];
  after: string[];
  replace: string[] | null;
}

/**
 * `NAME="value"` for one short line, otherwise the multi-line form Gentoo
 * uses for dependencies and SRC_URI. Empty lists render nothing.
 */
export function assign(lines: string[] | string, name: string, inlineMax = 1): string {
  const list = Array.isArray(lines) ? lines : [lines];
  if (list.length === 0) return '';
  if (list.length <= inlineMax && list.every((l) => !l.includes('\n')) && `${name}="${list.join(' ')}"`.length <= 80) {
    return `${name}="${list.join(' ')}"\n`;
  }
  return `${name}="\n${list.map((l) => (l === '' ? '' : `\t${l}`)).join('\n')}\n"\n`;
}

/**
 * A phase function from its default body and the manifest's custom code:
 * `replace` swaps the body, `before`/`after` wrap it. A body that would only
 * call the eclass default (`elide`) is left out, as a reviewer would ask.
 */
export function phase(name: string, body: string, custom: CustomPhase | undefined, elide?: string): string {
  let lines = body.split('\n');
  if (custom?.replace) lines = custom.replace;
  if (custom) lines = [...custom.before, '', ...lines, '', ...custom.after];
  // Collapse runs of blank lines and trim them at both ends.
  const out: string[] = [];
  for (const l of lines) {
    const blank = l.trim() === '';
    if (blank && (out.length === 0 || out[out.length - 1]!.trim() === '')) continue;
    out.push(blank ? '' : l);
  }
  while (out.length && out[out.length - 1] === '') out.pop();
  const meaningful = out.filter((l) => l.trim() !== '');
  if (meaningful.length === 0) return '';
  if (elide && meaningful.length === 1 && meaningful[0]!.trim() === elide) return '';
  return `\n${name}() {\n${out.join('\n')}\n}\n`;
}

let env: nunjucks.Environment | undefined;

/**
 * The environment every template renders in. For the shipped templates it
 * takes the code compiled at build time when that was made from these very
 * files (precompiled.ts); any other directory, or edited templates, are
 * compiled from their source.
 */
export function templateEnv(dir = templatesDir): nunjucks.Environment {
  if (env && dir === templatesDir) return env;
  const compiled = dir === templatesDir ? precompiledTemplates(dir) : undefined;
  const source = new nunjucks.FileSystemLoader(dir, { noCache: false });
  // nunjucks asks its loaders in turn: a template the build did not compile
  // (one behind a directory link, which the walk does not follow) comes from its source.
  // PrecompiledLoader takes the templates by name (its types say a list).
  const loaders = compiled ? [new nunjucks.PrecompiledLoader(compiled as never), source] : [source];
  const e = new nunjucks.Environment(loaders, { ...TEMPLATE_OPTIONS });
  e.addFilter('assign', assign);
  e.addFilter('lines', (lines: string[]) => lines.join('\n'));
  e.addFilter('xml', (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;'));
  e.addGlobal('phase', phase);
  if (dir === templatesDir) env = e;
  return e;
}
