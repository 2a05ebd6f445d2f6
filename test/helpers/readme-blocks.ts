import { readFileSync } from 'node:fs';
import path from 'node:path';
import { root } from './project.js';

/**
 * The body of the README's ```sh block whose info string names `id=NAME`:
 * tests that run a block the README test cannot (it clones, installs or
 * downloads) take its text from the README itself, so what they run is what
 * users read.
 */
export function readmeBlock(id: string): { line: number; body: string } {
  const lines = readFileSync(path.join(root, 'README.md'), 'utf8').split('\n');
  const start = lines.findIndex((l) => /^```sh\b/.test(l) && new RegExp(`(^|\\s)id=${id}(\\s|$)`).test(l));
  if (start < 0) throw new Error(`README.md has no \`\`\`sh block with id=${id}`);
  const end = lines.findIndex((l, i) => i > start && /^```\s*$/.test(l));
  return { line: start + 1, body: lines.slice(start + 1, end).join('\n') };
}
