import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { removeDir, root, tempDir } from '../helpers/project.js';

/**
 * The test engine setup: podman as Debian ships it, with the containers.conf
 * this kind of machine needs given through CONTAINERS_CONF (the same
 * environment variable podman honours for every user; rocm-ebuild passes its
 * environment through and adds nothing to the command lines for it).
 */
export async function podmanEnv(): Promise<{ env: NodeJS.ProcessEnv; dir: string }> {
  const dir = await tempDir('rocm-ebuild-podman-');
  const conf = path.join(dir, 'containers.conf');
  // runc: crun cannot raise RLIMIT_NOFILE without CAP_SYS_RESOURCE here, and the cgroup hierarchy is hybrid v1.
  writeFileSync(conf, '[containers]\ndefault_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]\n[engine]\nruntime = "runc"\n');
  return { env: { ...process.env, CONTAINERS_CONF: conf }, dir };
}

/** Why podman cannot run containers here, or undefined when it can. */
export function podmanUnavailable(env: NodeJS.ProcessEnv): string | undefined {
  const version = spawnSync('podman', ['version', '--format', '{{.Client.Version}}'], { env, encoding: 'utf8' });
  if (version.error || version.status !== 0) return `podman is not installed or does not run (${version.error?.message ?? version.stderr.trim()})`;
  if (process.getuid?.() !== 0) return 'the container tests create device nodes (mknod) and need root';
  if (spawnSync('busybox', ['true']).status !== 0) return 'busybox (Debian: busybox-static) is missing';
  // ldd fails on a static executable: a dynamic busybox could not run in an image without a libc.
  if (spawnSync('sh', ['-c', 'ldd "$(command -v busybox)"']).status === 0) return 'busybox is dynamically linked; the test image needs Debian\'s busybox-static';
  return undefined;
}

const standIn = path.join(root, 'test', 'container', 'stand-in', 'emerge');

/**
 * A tiny image in place of a Gentoo stage3: Debian's static busybox with its
 * applets, users root and portage, a make.conf, and the stand-in emerge.
 * Tagged by the hash of what goes in, so it is built once and reused by every
 * later test run until the stand-in changes.
 */
export async function standInImage(env: NodeJS.ProcessEnv): Promise<string> {
  const busybox = execFileSync('sh', ['-c', 'command -v busybox'], { encoding: 'utf8' }).trim();
  const emerge = readFileSync(standIn);
  const hash = createHash('sha256').update(emerge).update(readFileSync(busybox)).digest('hex').slice(0, 12);
  const tag = `localhost/rocm-ebuild-stand-in:${hash}`;
  if (spawnSync('podman', ['image', 'exists', tag], { env }).status === 0) return tag;
  const dir = await tempDir('rocm-ebuild-image-');
  try {
    const rootfs = path.join(dir, 'rootfs');
    for (const d of ['bin', 'sbin', 'usr/bin', 'etc/portage', 'tmp', 'var/tmp', 'var/db/repos', 'root', 'dev', 'proc', 'sys']) mkdirSync(path.join(rootfs, d), { recursive: true });
    chmodSync(path.join(rootfs, 'tmp'), 0o1777);
    copyFileSync(busybox, path.join(rootfs, 'bin', 'busybox'));
    chmodSync(path.join(rootfs, 'bin', 'busybox'), 0o755);
    for (const applet of execFileSync(busybox, ['--list'], { encoding: 'utf8' }).split('\n').filter(Boolean)) {
      if (applet === 'busybox' || applet.includes('/')) continue;
      symlinkSync('busybox', path.join(rootfs, 'bin', applet));
    }
    symlinkSync('../bin/busybox', path.join(rootfs, 'sbin', 'nologin'));
    copyFileSync(standIn, path.join(rootfs, 'usr', 'bin', 'emerge'));
    chmodSync(path.join(rootfs, 'usr', 'bin', 'emerge'), 0o755);
    // Gentoo's numbers: portage is 250, video 27, render 28 (none of them the host's).
    writeFileSync(path.join(rootfs, 'etc', 'passwd'), 'root:x:0:0:root:/root:/bin/sh\nportage:x:250:250:portage:/var/lib/portage/home:/sbin/nologin\n');
    writeFileSync(path.join(rootfs, 'etc', 'group'), 'root:x:0:root\nvideo:x:27:root\nrender:x:28:\nportage:x:250:portage\n');
    writeFileSync(path.join(rootfs, 'etc', 'portage', 'make.conf'), '# stand-in for a stage3 make.conf\nCOMMON_FLAGS="-O2 -pipe"\n');
    const tarball = path.join(dir, 'rootfs.tar');
    execFileSync('tar', ['-C', rootfs, '--numeric-owner', '--owner=0', '--group=0', '-cf', tarball, '.']);
    execFileSync('podman', ['import', '--quiet', tarball, tag], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    return tag;
  } finally {
    await removeDir(dir);
  }
}
