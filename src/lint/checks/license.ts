import type { Check } from '../types.js';

/**
 * The licenses of a LICENSE value that Portage's default ACCEPT_LICENSE
 * ("-* @FREE") would refuse: every license of a plain list must be free, one
 * alternative of `|| ( … )` is enough, and a `flag? ( … )` group counts as if
 * its flag were set (a user may set it). Returns the names that are not free,
 * once each, in order.
 */
export function nonFreeLicenses(value: string, free: ReadonlySet<string>): string[] {
  type Item = { license: string } | { anyOf: boolean; items: Item[] };
  const tokens = value.split(/\s+/).filter(Boolean);
  let i = 0;
  // The items up to the `)` closing the current group (or the end).
  const items = (): Item[] => {
    const out: Item[] = [];
    while (i < tokens.length && tokens[i] !== ')') {
      const t = tokens[i++]!;
      if (t === '||' || t.endsWith('?') || t === '(') {
        if (t !== '(' && tokens[i] === '(') i++;
        const inner = items();
        i++; // the closing `)`
        out.push({ anyOf: t === '||', items: inner });
      } else {
        out.push({ license: t });
      }
    }
    return out;
  };
  const refused = (item: Item): string[] => {
    if ('license' in item) return free.has(item.license) ? [] : [item.license];
    const each = item.items.map(refused);
    if (item.anyOf && each.some((r) => r.length === 0)) return [];
    return each.flat();
  };
  return [...new Set(items().flatMap(refused))];
}

/**
 * Portage masks a package whose LICENSE the user has not accepted, and the
 * default ACCEPT_LICENSE is "-* @FREE": a license in no group of ::gentoo's
 * license_groups (NCSA-AMD, for one) stops a plain `emerge` of the stack at
 * that package. The free list is data (stack.yaml's licenses.free, Gentoo's
 * @FREE expanded); a package that must carry another license accepts the
 * finding with its reason, rendered above LICENSE.
 */
export const licenseCheck: Check = {
  name: 'LicenseCheck',
  keywords: [
    {
      name: 'NonFreeLicense',
      level: 'warning',
      description: "LICENSE names a license outside Gentoo's @FREE: Portage's default ACCEPT_LICENSE masks the package",
    },
  ],
  run(f) {
    const free = f.input.freeLicenses;
    const license = f.globalMap.get('LICENSE');
    if (!free || !license) return [];
    const outside = nonFreeLicenses(license.value, free);
    if (outside.length === 0) return [];
    return [
      {
        keyword: 'NonFreeLicense',
        message: `${outside.join(', ')} ${outside.length === 1 ? 'is' : 'are'} not in @FREE, so Portage's default ACCEPT_LICENSE ("-* @FREE") masks the package: use Gentoo's name for the same text (e.g. UoI-NCSA for AMD's copy of the University of Illinois/NCSA license), or accept NonFreeLicense with the reason`,
        line: license.line,
      },
    ];
  },
};
