import { closest } from '../util/closest.js';

/**
 * What to say of a command line that names no command (`bmp 6.2.2`, `upstream tgs`): the words
 * that do name a topic, the first that does not, and the nearest command or topic a typo of it
 * could be, shown as the whole corrected command line. `id` is oclif's: the words before the
 * first flag, joined by ':'.
 */
export function unknownCommand(commandIds: readonly string[], id: string, argv: readonly string[] = []): string {
  const words = id.split(':').filter(Boolean);
  const known = commandIds.map((c) => c.split(':'));
  // The longest run of leading words that some command starts with, short of a whole command.
  let depth = 0;
  while (depth < words.length && known.some((k) => k.length > depth + 1 && k.slice(0, depth + 1).join(':') === words.slice(0, depth + 1).join(':'))) depth++;
  const prefix = words.slice(0, depth);
  const typed = words[depth];
  const place = prefix.length ? `\`rocm-ebuild ${prefix.join(' ')}\`` : 'rocm-ebuild';
  if (typed === undefined) return `${place} needs a command; see rocm-ebuild ${prefix.join(' ')} --help`;
  const next = [...new Set(known.filter((k) => k.length > depth && k.slice(0, depth).join(':') === prefix.join(':')).map((k) => k[depth]!))].sort();
  const near = closest(typed, next);
  const rest = [...words.slice(depth + 1), ...argv];
  const hint = near
    ? `did you mean \`rocm-ebuild ${[...prefix, near, ...rest].join(' ')}\`?`
    : `${prefix.length ? 'its' : 'the'} commands are ${next.join(', ')}; see rocm-ebuild ${[...prefix, '--help'].join(' ')}`;
  return `${typed} is not a command of ${place}; ${hint}`;
}
