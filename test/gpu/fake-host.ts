import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { root, tempDir } from '../helpers/project.js';

export const kfdFixtures = path.join(root, 'test', 'fixtures', 'kfd');

/** Whether this process may create device nodes and give files away (CI runs as root). */
export const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

export interface FakeHost {
  /** ROCM_EBUILD_SYSFS_ROOT: the fixture's tree, read only. */
  sysfs: string;
  /** ROCM_EBUILD_DEV_ROOT: a temp dir holding the scenario's device nodes. */
  dev: string;
  env: NodeJS.ProcessEnv;
  /** Group of each device node, as the scenario's dev.json asks (what stat will report when root). */
  gids: Record<string, number>;
}

/**
 * A host for the seam production code reads: the fixture's KFD topology and
 * its /dev nodes created in a temp dir with the groups dev.json names. With
 * `char: true` (root only) the nodes are real character devices — /dev/null's
 * and /dev/zero's numbers — that a container engine accepts for --device;
 * otherwise plain files, whose group stat reads just the same. Without root
 * the groups cannot be given away, and the files keep the caller's group.
 */
export async function fakeHost(scenario: string, options: { char?: boolean; dev?: string } = {}): Promise<FakeHost> {
  const sysfs = path.join(kfdFixtures, scenario);
  const dev = options.dev ?? (await tempDir('rocm-ebuild-dev-'));
  const wanted = JSON.parse(readFileSync(path.join(sysfs, 'dev.json'), 'utf8')) as Record<string, number>;
  const gids: Record<string, number> = {};
  for (const [node, gid] of Object.entries(wanted)) {
    const file = path.join(dev, node);
    mkdirSync(path.dirname(file), { recursive: true });
    if (options.char) {
      if (!isRoot) throw new Error('character device nodes need root');
      execFileSync('mknod', ['-m', '0660', file, 'c', '1', node === '/dev/kfd' ? '3' : '5']);
    } else {
      writeFileSync(file, '');
      chmodSync(file, 0o660);
    }
    if (isRoot) chownSync(file, 0, gid);
    gids[node] = isRoot ? gid : (process.getgid?.() ?? 0);
  }
  return { sysfs, dev, gids, env: { ROCM_EBUILD_SYSFS_ROOT: sysfs, ROCM_EBUILD_DEV_ROOT: dev } };
}
