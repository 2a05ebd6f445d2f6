import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { projectRoot } from '../paths.js';
import { writeFileAtomically } from '../util/atomic-write.js';
import { helpParagraphs } from './help-text.js';

/**
 * rocm-ebuild(1), made from the command manifest (oclif.manifest.json): every command with its
 * description, arguments, flags and examples, as `--help` shows them. `npm run man` writes
 * docs/rocm-ebuild.1; a test fails when the committed page differs from what the commands say.
 */
export const MAN_PAGE = path.join('docs', 'rocm-ebuild.1');

interface ManifestFlag {
  name: string;
  char?: string;
  type: 'option' | 'boolean';
  description?: string;
  helpValue?: string;
  options?: string[];
  default?: unknown;
  required?: boolean;
  multiple?: boolean;
  hidden?: boolean;
  helpGroup?: string;
}

interface ManifestCommand {
  id: string;
  summary?: string;
  description?: string;
  hidden?: boolean;
  args?: Record<string, { name: string; description?: string; required?: boolean }>;
  flags: Record<string, ManifestFlag>;
  examples?: ({ description: string; command: string } | string)[];
}

export interface ManPageInput {
  bin: string;
  version: string;
  description: string;
  commands: Record<string, ManifestCommand>;
}

/** Text for roff: backslashes, hyphens and non-ASCII escaped, a line never starting as a request. */
function roff(text: string): string {
  const escaped = text
    .replace(/\\/g, '\\e')
    .replace(/-/g, '\\-')
    // Any other character as its Unicode name, so the page reads the same without preconv.
    .replace(/[^\x00-\x7f]/gu, (c) => `\\[u${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}]`);
  return escaped.replace(/^([.'])/gm, '\\&$1');
}

const bold = (text: string) => `\\fB${roff(text)}\\fR`;

function paragraphs(text: string): string[] {
  const out: string[] = [];
  for (const blocks of helpParagraphs(text)) {
    out.push('.PP');
    for (const b of blocks) {
      if (b.kind === 'prose') out.push(roff(b.text));
      else if (b.kind === 'item') out.push('.IP \\(bu 2', roff(b.text.slice(2)));
      else out.push(`.TP ${Math.max(4, b.column - b.indent)}`, roff(b.term), roff(b.text));
    }
  }
  return out;
}

function flagHead(f: ManifestFlag): string {
  const value = f.type === 'option' ? `=${f.helpValue ?? (f.options ? f.options.join('|') : 'VALUE')}` : '';
  return [f.char ? `${bold(`-${f.char}`)}, ` : '', bold(`--${f.name}`), roff(value)].join('');
}

function flagText(f: ManifestFlag): string {
  const notes: string[] = [];
  if (f.required) notes.push('required');
  if (f.default !== undefined && f.type === 'option') notes.push(`default: ${String(f.default)}`);
  if (f.options && f.helpValue) notes.push(`one of: ${f.options.join(', ')}`);
  return roff(`${f.description ?? ''}${notes.length ? ` (${notes.join('; ')})` : ''}`);
}

export function renderManPage(input: ManPageInput): string {
  const { bin } = input;
  const commands = Object.values(input.commands)
    .filter((c) => !c.hidden)
    .sort((a, b) => (a.id < b.id ? -1 : 1));
  const name = (c: ManifestCommand) => `${bin} ${c.id.replaceAll(':', ' ')}`;
  const out = [
    `.\\" Generated from the command manifest by "npm run man"; do not edit.`,
    `.TH "${bin.toUpperCase()}" 1 "" "${bin} ${input.version}" "User Commands"`,
    '.SH "NAME"',
    `${bin} \\- ${roff(input.description)}`,
    '.SH "SYNOPSIS"',
    `${bold(bin)} \\fICOMMAND\\fR [\\fIARGUMENTS\\fR] [\\fIFLAGS\\fR]`,
    '.br',
    `${bold(`${bin} help`)} [\\fICOMMAND\\fR]`,
    '.SH "DESCRIPTION"',
    roff(input.description),
    '.PP',
    `Every command takes ${bold('--help')} and ${bold('--json')} (its result as JSON on standard output, an error as`,
    `{"error": {"message", "exitCode", "details"}}). Errors are one line on standard error, ${roff(`"${bin}: message"`)}, and`,
    'a usage error (an unknown command, flag or package; a missing argument) exits 2.',
    `${bold('--quiet')} (${bold('-q')}) leaves out progress and notices on standard error (results, warnings and errors stay);`,
    `${bold('--verbose')} adds detail where a command has it (bump: the diffs of revision bumps and carried hand edits).`,
    '.SH "COMMANDS"',
  ];
  for (const c of commands) {
    out.push(`.SS "${roff(name(c))}"`);
    if (c.summary) out.push(roff(c.summary));
    if (c.description) out.push(...paragraphs(c.description));
    const args = Object.values(c.args ?? {});
    if (args.length) {
      out.push('.PP', 'Arguments:');
      for (const a of args) out.push('.TP', `\\fI${roff(a.name.toUpperCase())}\\fR${a.required ? '' : ' (optional)'}`, roff(a.description ?? ''));
    }
    const flags = Object.values(c.flags).filter((f) => !f.hidden && f.helpGroup !== 'GLOBAL');
    if (flags.length) {
      out.push('.PP', 'Flags:');
      for (const f of flags.sort((a, b) => (a.name < b.name ? -1 : 1))) out.push('.TP', flagHead(f), flagText(f));
    }
    const examples = (c.examples ?? []).map((e) => (typeof e === 'string' ? { description: '', command: e } : e));
    if (examples.length) {
      out.push('.PP', 'Examples:');
      for (const e of examples) {
        const command = e.command.replaceAll('<%= config.bin %>', bin).replaceAll('<%= command.id %>', c.id.replaceAll(':', ' '));
        out.push('.PP', roff(e.description), '.RS 4', '.nf', roff(`$ ${command}`), '.fi', '.RE');
      }
    }
  }
  out.push(
    '.SH "EXIT STATUS"',
    'Each command lists its own; they share these meanings:',
    '.TP',
    '0',
    'done (for checking commands: no problem found)',
    '.TP',
    '2',
    'invalid input: an unknown command, flag, package or release, an invalid manifest',
    '.TP',
    '3',
    'distfiles missing with \\-\\-offline',
    '.TP',
    '4',
    'the overlay or its repository was refused',
    '.TP',
    '5',
    'a download, fetch or push failed',
    '.TP',
    '6',
    'a QA failure: checks found errors, a generated file is stale, a test failed',
    '.TP',
    '130',
    'interrupted',
    '.SH "ENVIRONMENT"',
    '.TP',
    'NO_COLOR',
    'no colour in any output',
    '.TP',
    'DISTDIR, GENTOO_MIRRORS, HTTP_PROXY, HTTPS_PROXY, NO_PROXY, NODE_EXTRA_CA_CERTS',
    'where distfiles go and how they are fetched',
    '.TP',
    'ROCM_EBUILD_NO_CACHE',
    'do not keep checked manifests and digests between runs',
    '.TP',
    'ROCM_EBUILD_OVERLAY, ROCM_EBUILD_MANIFEST',
    `the default of ${bold('--overlay')} and ${bold('--manifest')}; a flag wins over them, they win over the configuration file`,
    '.TP',
    'TERM',
    'dumb: progress in plain lines, as in a pipe',
    '.SH "FILES"',
    '.TP',
    roff('$XDG_CONFIG_HOME/rocm-ebuild/config.toml (default ~/.config/rocm-ebuild/config.toml)'),
    roff('overlay = "…" and manifest = "…": the defaults of --overlay and --manifest, absolute or ~/ paths; nothing else may be set'),
    '.SH "SEE ALSO"',
    `${bold('rocm.eclass')}(5), ${bold('ebuild')}(5), ${bold('pkgcheck')}(1)`,
    '',
  );
  return out.join('\n');
}

/** The page for the package at `root`, from its command manifest and package.json. */
export async function manPageOf(root = projectRoot): Promise<string> {
  const pkg = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as { version: string; description: string; oclif: { bin: string } };
  const manifest = JSON.parse(await readFile(path.join(root, 'oclif.manifest.json'), 'utf8')) as { commands: Record<string, ManifestCommand> };
  return renderManPage({ bin: pkg.oclif.bin, version: pkg.version, description: pkg.description, commands: manifest.commands });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const file = path.join(projectRoot, MAN_PAGE);
  await writeFileAtomically(file, await manPageOf());
  process.stdout.write(`${MAN_PAGE}: written\n`);
}
