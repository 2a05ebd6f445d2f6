import path from 'node:path';
import { type OverlayState } from '../overlay/scan.js';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';

export function checkLayout(state: OverlayState): void {
  const layout = state.layout;
  if (!layout) return;
  const problems: string[] = [];
  if (layout.get('thin-manifests') !== 'true') problems.push('thin-manifests = true');
  const hashes = (layout.get('manifest-hashes') ?? '').split(/\s+/);
  if (!hashes.includes('BLAKE2B') || !hashes.includes('SHA512')) problems.push('manifest-hashes = BLAKE2B SHA512');
  if (problems.length > 0) {
    throw new UserError(
      `${path.join(state.dir, 'metadata/layout.conf')} must have ${problems.join(' and ')}: the Manifests rocm-ebuild writes are thin, with BLAKE2B and SHA512 hashes`,
      ExitCode.overlayRefused,
    );
  }
}
