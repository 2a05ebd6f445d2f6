import { shellLine } from '../util/argv.js';
import type { EmitOptions } from './emit.js';

/** The emitter options every `ci` command shares: how jobs call rocm-ebuild, and how to regenerate the file. */
export function emitOptions(tool: string | undefined, version: string, argv: readonly string[]): EmitOptions {
  return {
    tool: tool ?? `npx --yes rocm-ebuild@${version}`,
    regenerate: shellLine(['rocm-ebuild', ...argv.filter((a) => a !== '--json')]),
  };
}
