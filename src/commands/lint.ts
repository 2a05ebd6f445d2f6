import { Args, Flags } from '@oclif/core';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { BaseCommand } from '../cli/base-command.js';
import { UserError } from '../cli/errors.js';
import { ExitCode } from '../cli/exit-codes.js';
import { loadManifestOrFail, manifestFlag, stackFor } from '../cli/stack.js';
import { lintComponent, lintComponents, type ComponentLint } from '../lint/component.js';
import { hasTool } from '../lint/external-tools.js';
import { failing, formatText, KEYWORDS } from '../lint/index.js';
import { scanOverlay } from '../overlay/scan.js';
import { withoutRevision } from '../model/version.js';
import { resolveComponent } from '../model/resolve.js';

export default class Lint extends BaseCommand {
  static override summary = 'Check ebuilds the way pkgcheck and a Gentoo reviewer would';
  static override description =
    'Without --overlay, renders every package of the release and checks it; with --overlay, checks the ' +
    "ebuilds the overlay holds for the stack's packages (every version whose release the manifest knows). " +
    'Checks: header and EAPI, variable order, eclass variables before inherit, missing/indirect/unused ' +
    'inherits, deprecated eclasses, USE flags not in IUSE, test RESTRICT, REQUIRED_USE under default USE, ' +
    'unquoted path variables, variable scope, commands lacking || die, metadata.xml use descriptions and ' +
    'remote-ids, whitespace; plus real `bash -n` and shellcheck when installed. ' +
    'Exit codes: 0 clean (style and info results do not fail), 6 errors or warnings found, 2 invalid input.';

  static override examples = [
    { description: 'Check every generated ebuild of ROCm 6.2.2', command: '<%= config.bin %> <%= command.id %> --version 6.2.2' },
    { description: 'Check two packages only, as JSON (pkgcheck JSON fields)', command: '<%= config.bin %> <%= command.id %> sci-libs/rocBLAS dev-util/hip --version 6.2.2 --json' },
    { description: 'Check what an overlay holds', command: '<%= config.bin %> <%= command.id %> --overlay ~/rocm-overlay --version 6.2.2' },
    { description: 'List the result keywords', command: '<%= config.bin %> <%= command.id %> --keywords' },
  ];

  static override strict = false;
  static override args = { atoms: Args.string({ description: 'packages to check (default: all)' }) };

  static override flags = {
    version: Flags.string({ char: 'v', description: 'ROCm release whose stack is checked', helpValue: 'X.Y.Z' }),
    overlay: Flags.string({ char: 'o', description: 'check the ebuilds in this overlay instead of rendering', helpValue: 'DIR' }),
    manifest: manifestFlag,
    'no-shellcheck': Flags.boolean({ description: 'skip shellcheck even when it is installed' }),
    keywords: Flags.boolean({ description: 'list the result keywords and exit' }),
  };

  async run(): Promise<unknown> {
    const { argv, flags } = await this.parse(Lint);
    if (flags.keywords) {
      const list = [...KEYWORDS.values()].sort((a, b) => a.name.localeCompare(b.name));
      if (!this.jsonEnabled()) for (const k of list) this.log(`${k.name.padEnd(28)} ${k.level.padEnd(8)} ${k.description}`);
      return list;
    }
    if (!flags.version) throw new UserError('--version is required (the release whose stack is checked)', ExitCode.invalidInput);
    const manifest = await loadManifestOrFail(flags.manifest);
    const model = await stackFor(manifest, flags.version);
    const wanted = (argv as string[]).map((a) => model.byAtom.get(a)?.atom ?? model.components.find((c) => c.pn === a)?.atom ?? a);
    const unknown = wanted.filter((a) => !model.byAtom.has(a));
    if (unknown.length) throw new UserError(`not in the ${flags.version} stack: ${unknown.join(', ')}`, ExitCode.invalidInput);
    const components = model.components.filter((c) => wanted.length === 0 || wanted.includes(c.atom));
    const shell = !flags['no-shellcheck'] && hasTool('shellcheck');
    const lints: ComponentLint[] = [];
    if (flags.overlay) {
      const dir = path.resolve(flags.overlay);
      const state = await scanOverlay(dir, components.map((c) => c.atom));
      for (const c of components) {
        const pkg = state.packages.get(c.atom);
        if (!pkg) continue;
        const metadata = pkg.hasMetadata ? await readFile(path.join(dir, c.atom, 'metadata.xml'), 'utf8') : '';
        for (const v of pkg.versions) {
          const release = withoutRevision(v);
          const other = release === model.release.version ? model : manifest.stack.releases[release] ? await stackFor(manifest, release) : undefined;
          const at = other ? resolveComponent(manifest, c.loaded, other.release) : undefined;
          if (!other || !at) continue;
          const text = await readFile(path.join(dir, c.atom, `${c.pn}-${v}.ebuild`), 'utf8');
          const l = await lintComponent(at, other, { text, metadata, tools: { shellcheck: shell } });
          lints.push({ ...l, file: `${c.atom}/${c.pn}-${v}.ebuild` });
        }
      }
    } else {
      lints.push(...(await lintComponents(components, model, () => ({ tools: { shellcheck: shell } }))));
    }
    const results = lints.flatMap((l) => l.results);
    const tools = lints.flatMap((l) => l.tools.map((t) => ({ file: l.file, ...t })));
    if (!this.jsonEnabled()) {
      process.stdout.write(formatText(results));
      for (const t of tools) this.log(`${t.file}:${t.line ?? '?'}: ${t.tool}${t.code ? ` ${t.code}` : ''} (${t.level}): ${t.message}`);
      if (!shell && !flags['no-shellcheck']) this.warn('shellcheck is not installed: only bash -n and the built-in checks ran');
      this.log(`${lints.length} ebuild${lints.length === 1 ? '' : 's'} checked: ${failing(results).length} errors/warnings, ${results.length - failing(results).length} style/info, ${tools.length} from bash/shellcheck`);
    }
    const bad = failing(results).length + tools.length;
    if (bad > 0) {
      if (this.jsonEnabled()) this.logJson({ results, tools });
      this.exit(ExitCode.qaFailed);
    }
    return { results, tools };
  }
}
