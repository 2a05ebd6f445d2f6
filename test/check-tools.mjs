#!/usr/bin/env node
// What `npm test` checks first, before it builds: the programs the tests run
// for real. Plain JavaScript, so that it runs on a fresh clone in a second.
// Without one of the first group a third of the suite would fail with errors
// that say nothing of the cause, so the run stops at once, with one message
// naming every missing program and the Debian packages that have them.
// Without the second group only the container tests cannot run: they are
// skipped (each says why), and the message says so. `.ci/run` installs all
// of them, so CI always runs everything.
import { spawnSync } from 'node:child_process';

/** @typedef {{ command: string, debian: string, why: string }} Tool */

/** @type {Tool[]} */
const REQUIRED = [
  { command: 'bash', debian: 'bash', why: 'the eclass tests and `bash -n` of every generated ebuild' },
  { command: 'git', debian: 'git', why: 'bump, pr and upstream work on real repositories' },
  { command: 'shellcheck', debian: 'shellcheck', why: 'lint of the generated ebuilds, the eclass and the container script' },
  { command: 'xmllint', debian: 'libxml2-utils', why: "metadata.xml against Gentoo's DTD" },
  { command: 'openssl', debian: 'openssl', why: 'the HTTPS download tests (a test certificate)' },
  { command: 'gpg', debian: 'gnupg', why: 'signed commits (a key in a temporary GNUPGHOME)' },
  { command: 'ssh-keygen', debian: 'openssh-client', why: 'commits signed with an SSH key' },
  { command: 'groff', debian: 'groff-base', why: 'the man page' },
];

/** @type {Tool[]} */
const CONTAINERS = [
  { command: 'podman', debian: 'podman', why: 'the container tests' },
  { command: 'runc', debian: 'runc', why: 'the container tests' },
];

/** @param {string} command */
function onPath(command) {
  return spawnSync('sh', ['-c', 'command -v "$1"', 'sh', command], { stdio: 'ignore' }).status === 0;
}

const missing = REQUIRED.filter((t) => !onPath(t.command));
const containers = CONTAINERS.filter((t) => !onPath(t.command));
// A static busybox: the container tests copy it into an image with no libc (ldd fails on a static binary).
if (!onPath('busybox') || spawnSync('sh', ['-c', 'ldd "$(command -v busybox)"'], { stdio: 'ignore' }).status === 0) {
  containers.push({ command: 'busybox', debian: 'busybox-static', why: 'the container tests (a static busybox)' });
}

if (missing.length > 0 || containers.length > 0) {
  const packages = [...new Set([...missing, ...containers].map((t) => t.debian))];
  const lines = [];
  if (missing.length) lines.push(`npm test: the tests need programs that are not installed: ${missing.map((t) => `${t.command} (${t.why})`).join('; ')}.`);
  if (containers.length) {
    lines.push(`${missing.length ? 'Also missing' : 'npm test: missing'}, for the container tests only (skipped without them, each saying why): ${containers.map((t) => t.command).join(', ')}.`);
  }
  lines.push(`Install them (Debian, Ubuntu): ${process.getuid?.() === 0 ? '' : 'sudo '}apt-get install ${packages.join(' ')}`);
  if (missing.length) lines.push('Nothing was built or tested. (.ci/run installs everything the tests need, then runs them.)');
  process.stderr.write(`${lines.join('\n')}\n`);
}
process.exitCode = missing.length > 0 ? 1 : 0;
