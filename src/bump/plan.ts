import path from 'node:path';
import { type Plan } from '../plan/plan.js';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';

/** A downgrade is refused unless asked for: the overlay holds newer versions of the packages. */
export function refuseDowngrade(plan: Plan): never {
  const n = plan.newer.length;
  const shown = plan.newer.slice(0, 5).map((p) => `  ${p.atom}: ${p.versions.join(', ')}`);
  if (n > 5) shown.push(`  … and ${n - 5} more`);
  throw new UserError(
    `the overlay holds versions newer than ${plan.version} of ${n} package${n === 1 ? '' : 's'}; adding ${plan.version} would be a downgrade:\n${shown.join('\n')}\n` +
      'hint: pass --allow-downgrade to add the older release next to them, or check the version you asked for',
    ExitCode.invalidInput,
    { newer: plan.newer },
  );
}

/** ::gentoo: a package that left the release is last-rited, then removed; a bump never removes it. Nothing is written. */
export function refuseGentooTreeclean(dir: string, plan: Plan): never {
  const gone = plan.left.filter((l) => l.action === 'treeclean');
  const lines = gone.map((l) => `  ${path.join(dir, l.atom)}: ${l.versions.join(', ')}: not part of ROCm ${plan.version}: ${l.reason}`);
  throw new UserError(
    `${dir} is ::gentoo, and ${gone.length === 1 ? 'a package' : `${gone.length} packages`} it holds left ROCm ${plan.version}; --drop-old would remove ${gone.length === 1 ? 'it' : 'them'} (the older stack ${gone.length === 1 ? 'it needs' : 'they need'} goes), and ::gentoo removes a package only after its last rites; nothing was written:\n${lines.join('\n')}\n` +
      `hint: last-rite ${gone.length === 1 ? 'it' : 'them'} first: mask ${gone.map((l) => l.atom).join(' ')} in ${path.join(dir, 'profiles/package.mask')} with the reason and a removal date (pkgdev mask), announce it on gentoo-dev, and remove ${gone.length === 1 ? 'it' : 'them'} after 30 days; ` +
      `or bump without --drop-old, which keeps ${gone.length === 1 ? 'it' : 'them'} and the older stack ${gone.length === 1 ? 'it needs' : 'they need'}`,
    ExitCode.overlayRefused,
    { left: gone.map((l) => ({ atom: l.atom, versions: l.versions, reason: l.reason })) },
  );
}
