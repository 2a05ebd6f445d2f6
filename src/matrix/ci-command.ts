import { shellLine } from '../util/argv.js';
import type { EmitOptions } from './emit.js';
import { toolSource, type ToolFlags } from './tool-source.js';

/** The emitter options every `ci` command shares: where jobs get rocm-ebuild, and how to regenerate the file. */
export function emitOptions(flags: ToolFlags, argv: readonly string[]): EmitOptions {
  return {
    tool: toolSource(flags),
    regenerate: shellLine(['rocm-ebuild', ...argv.filter((a) => a !== '--json')]),
  };
}
