import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The templates compiled to JavaScript at build time (build-templates.ts),
 * so that a run does not compile them: nunjucks' compiler, cold, took 25-35
 * ms of every process that renders (bump, render, lint) for 8 KB of
 * templates. The file carries the digest of the templates it was made from,
 * and is used only for those very templates: an edited template is compiled
 * from its source as before, so a stale file costs time, never a wrong
 * ebuild.
 */

/** Where `npm run build` writes the compiled templates. */
export const GENERATED_TEMPLATES = fileURLToPath(new URL('./templates.generated.cjs', import.meta.url));

/**
 * The options of the template environment. trimBlocks and lstripBlocks change
 * the lexing and throwOnUndefined the code nunjucks generates, so the build
 * compiles with these very options. Frozen, and handed to nunjucks as a copy:
 * its Environment writes its defaults into the object it is given, which
 * would change the digest below.
 */
export const TEMPLATE_OPTIONS = Object.freeze({ autoescape: false, trimBlocks: true, lstripBlocks: true, throwOnUndefined: true } as const);

/** Every template under `dir` (name relative, with `/`) and its text, by name; with a digest of names and texts. */
export function templateSources(dir: string): { files: Map<string, string>; digest: string } {
  const names: string[] = [];
  const walk = (at: string, prefix: string) => {
    for (const e of readdirSync(at, { withFileTypes: true })) {
      if (e.isDirectory()) walk(path.join(at, e.name), `${prefix}${e.name}/`);
      else if (e.name.endsWith('.njk')) names.push(`${prefix}${e.name}`);
    }
  };
  walk(dir, '');
  names.sort();
  const hash = createHash('sha256').update(`rocm-ebuild templates 1\0${JSON.stringify(TEMPLATE_OPTIONS)}\0`);
  const files = new Map<string, string>();
  for (const name of names) {
    const text = readFileSync(path.join(dir, ...name.split('/')), 'utf8');
    files.set(name, text);
    hash.update(`${name}\0${text.length}\0${text}\0`);
  }
  return { files, digest: hash.digest('hex') };
}

/** The compiled templates of `dir`, if the generated file was made from exactly these; else undefined. */
export function precompiledTemplates(dir: string, file = GENERATED_TEMPLATES): Record<string, unknown> | undefined {
  let mod: { digest?: unknown; templates?: Record<string, unknown> };
  try {
    mod = createRequire(import.meta.url)(file) as typeof mod;
  } catch {
    return undefined; // not built (npx tsc -p . alone) or unreadable
  }
  try {
    return mod.digest === templateSources(dir).digest ? mod.templates : undefined;
  } catch {
    return undefined; // the templates cannot be read: the loader reports that
  }
}
