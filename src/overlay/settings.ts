import { UserError } from '../util/errors.js';
import { hasActiveCharacters } from '../util/printable.js';
import { ExitCode } from '../util/exit-codes.js';
import { parseLayoutConf } from './scan.js';

/**
 * The overlay's own rocm-ebuild settings, committed with it so every clone
 * and co-maintainer gets the same: today only the maintainer that new
 * packages' metadata.xml names. Written once, when bump creates the overlay.
 */
export const SETTINGS_FILE = 'metadata/rocm-ebuild.conf';

/** A <maintainer> of metadata.xml (GLEP 68). */
export interface Maintainer {
  type: 'person' | 'project';
  email: string;
  name?: string;
}

/** "gentoo": the stack manifest's maintainers (the Gentoo Science Project), for work bound for ::gentoo; or one person. */
export type MaintainerSetting = { kind: 'gentoo' } | { kind: 'person'; name: string; email: string };

// The stack schema's rules for maintainer names and emails, and no control characters (they break metadata.xml);
// the domain has a dot, as metadata.xsd's email pattern [^@]+@[^.]+\..+ demands (pkgcheck's PkgInvalidXml).
const PERSON = /^([^<>&\p{Cc}]*[^<>&\s\p{Cc}]) <([^<>&\s@\p{Cc}]+@[^<>&\s@.\p{Cc}]+\.[^<>&\s@\p{Cc}]+)>$/u;

export function parseMaintainer(value: string): MaintainerSetting | undefined {
  const v = value.trim();
  if (v === 'gentoo') return { kind: 'gentoo' };
  // Bidirectional controls and line separators are not controls (\p{Cc}) but make metadata.xml,
  // commit messages and terminals show another name than the one stored (Trojan Source).
  if (hasActiveCharacters(v) || v.includes('\ufeff')) return undefined;
  const m = PERSON.exec(v);
  return m ? { kind: 'person', name: m[1]!.trim(), email: m[2]! } : undefined;
}

export const MAINTAINER_FORMAT =
  'must be "gentoo" (the stack\'s maintainers, for ::gentoo) or "Name <email>", the email\'s domain with a dot (metadata.xsd), without control, line-separator or bidirectional characters';

export function formatMaintainer(s: MaintainerSetting): string {
  return s.kind === 'gentoo' ? 'gentoo' : `${s.name} <${s.email}>`;
}

/** The maintainers a setting stands for; `stack` is the stack manifest's (the choice for ::gentoo). */
export function maintainersFor(s: MaintainerSetting, stack: Maintainer[]): Maintainer[] {
  return s.kind === 'gentoo' ? stack : [{ type: 'person', email: s.email, name: s.name }];
}

/** The file's text for a setting. */
export function renderSettings(s: MaintainerSetting): string {
  return [
    '# rocm-ebuild settings of this overlay (key = value).',
    '#',
    "# maintainer: who new packages' metadata.xml names. \"gentoo\" stands for the stack",
    "# manifest's maintainers (the Gentoo Science Project), for work bound for ::gentoo;",
    '# otherwise "Name <email>" of the person maintaining this overlay.',
    `maintainer = ${formatMaintainer(s)}`,
    '',
  ].join('\n');
}

/** The maintainer an existing settings file sets, or undefined when it sets none. */
export function settingsMaintainer(text: string): MaintainerSetting | undefined {
  const raw = parseLayoutConf(text).get('maintainer');
  if (raw === undefined) return undefined;
  const s = parseMaintainer(raw);
  if (!s) {
    const line = text.split('\n').findIndex((l) => /^\s*maintainer\s*=/.test(l)) + 1;
    throw new UserError(`${SETTINGS_FILE}:${line}: maintainer ${MAINTAINER_FORMAT}, not "${raw}"`, ExitCode.invalidInput);
  }
  return s;
}
