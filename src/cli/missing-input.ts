import { SETTINGS } from './user-defaults.js';

/**
 * A required flag or argument left out, said in the project's words: which
 * one, what it is and how to give it, instead of the parser's "The following
 * error occurred: Missing required flag overlay". Built from oclif's message
 * text, which names the flags and arguments (its errors carry nothing else
 * the bundled and unbundled oclif share).
 */

interface FlagInfo {
  description?: string;
  helpValue?: string | string[];
}

interface ArgInfo {
  description?: string;
}

/** The description's first clause: "the overlay (a git repository; created when missing)" → "the overlay". */
function what(description: string | undefined): string {
  return (description ?? '').split(/[;(]/)[0]!.trim();
}

/** The command's first example, as a pattern to follow ("e.g. rocm-ebuild bump 6.2.2 --overlay ~/rocm-overlay"), when it has one. */
function example(examples: readonly Example[] | undefined, bin: string, id: string): string {
  const first = examples?.[0];
  const command = typeof first === 'string' ? first : first?.command;
  if (!command) return '';
  return `, e.g. ${command.replaceAll('<%= config.bin %>', bin).replaceAll('<%= command.id %>', id.replaceAll(':', ' '))}`;
}

type Example = string | { command: string; description?: string };

export interface CommandInfo {
  bin: string;
  id: string;
  examples?: readonly Example[];
}

export function missingFlagsMessage(text: string, flags: Record<string, FlagInfo>, help: string, command?: CommandInfo): string | undefined {
  const names = [...text.matchAll(/^\s*Missing required flag ([\w-]+)\s*$/gm)].map((m) => m[1]!);
  if (names.length === 0) return undefined;
  const parts = names.map((name) => {
    const f = flags[name];
    const value = Array.isArray(f?.helpValue) ? f.helpValue.join('|') : (f?.helpValue ?? 'VALUE');
    const about = what(f?.description);
    const setting = SETTINGS.find((s) => s.flag === name);
    const elsewhere = setting ? `, set ${setting.env}, or ${setting.key} = "…" in ${setting.where}` : '';
    return `--${name} is required${about ? ` (${about})` : ''}: give it as --${name} ${value}${elsewhere}`;
  });
  return `${parts.join('; ')}${command ? example(command.examples, command.bin, command.id) : ''}; ${help}`;
}

export function missingArgsMessage(text: string, args: Record<string, ArgInfo>, help: string, command?: CommandInfo): string | undefined {
  if (!/^Missing \d+ required args?:/m.test(text)) return undefined;
  const listed = text
    .split('\n')
    .slice(1)
    .map((l) => /^(\S+)\s/.exec(l)?.[1] ?? l.trim())
    .filter((n) => n in args);
  if (listed.length === 0) return undefined;
  const parts = listed.map((name) => {
    const about = what(args[name]?.description);
    return `${name.toUpperCase()}${about ? ` (${about})` : ''}`;
  });
  return `missing ${parts.join(' and ')}${command ? example(command.examples, command.bin, command.id) : ''}; ${help}`;
}
