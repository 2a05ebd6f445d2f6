import { shellLine } from '../util/argv.js';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';
import { hasGithubExpression, isGitUrl, isHttpsUrl } from '../util/names.js';
import { printable } from '../util/printable.js';

/**
 * Where the jobs of a generated CI definition get rocm-ebuild. Never a
 * registry name that anyone could publish first: a source the user pinned —
 * a git repository at a full commit id, or a source tarball with its SHA-256
 * — installed with `npm ci` from that source's own package-lock.json; or,
 * with --tool, a command the user wrote out.
 */
export type ToolSource =
  | { kind: 'command'; command: string }
  | { kind: 'git'; url: string; commit: string }
  | { kind: 'tarball'; url: string; sha256: string };

export interface ToolFlags {
  tool?: string;
  'tool-git'?: string;
  'tool-commit'?: string;
  'tool-tarball'?: string;
  'tool-sha256'?: string;
}

export const TOOL_FLAGS_HINT =
  'pin the rocm-ebuild the jobs run: --tool-git URL --tool-commit COMMIT (a full commit id), or --tool-tarball URL --tool-sha256 SHA256 (a source archive with package-lock.json), or give the command with --tool';

const bad = (message: string) => new UserError(message, ExitCode.invalidInput);

/** The tool source the flags name, validated; exit 2 without one. */
export function toolSource(flags: ToolFlags): ToolSource {
  const given = (['tool', 'tool-git', 'tool-tarball'] as const).filter((k) => flags[k] !== undefined);
  if (given.length > 1) throw bad(`--${given.join(' and --')} name two sources of rocm-ebuild; give one`);
  if (flags['tool-commit'] !== undefined && flags['tool-git'] === undefined) throw bad('--tool-commit needs --tool-git: the repository the commit is in');
  if (flags['tool-sha256'] !== undefined && flags['tool-tarball'] === undefined) throw bad('--tool-sha256 needs --tool-tarball: the archive it is the checksum of');
  if (flags.tool !== undefined) {
    const command = flags.tool.trim();
    if (command === '' || /[\x00-\x1f\x7f-\x9f\u2028\u2029]/.test(command) || hasGithubExpression(command)) {
      throw bad(`--tool ${printable(JSON.stringify(flags.tool))}: one line of shell that runs rocm-ebuild, without control characters or \${{ }} expressions`);
    }
    return { kind: 'command', command };
  }
  if (flags['tool-git'] !== undefined) {
    const url = flags['tool-git'];
    const commit = flags['tool-commit'];
    if (!isGitUrl(url)) throw bad(`--tool-git ${printable(JSON.stringify(url))} is not a git URL (https://, ssh://, git:// or user@host:path)`);
    if (commit === undefined || !/^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(commit)) {
      throw bad(`--tool-commit ${commit === undefined ? 'is missing' : printable(JSON.stringify(commit))}: the full commit id (40 or 64 lower-case hex digits) of the rocm-ebuild the jobs run; a branch or tag can move`);
    }
    return { kind: 'git', url, commit };
  }
  if (flags['tool-tarball'] !== undefined) {
    const url = flags['tool-tarball'];
    const sha256 = flags['tool-sha256'];
    if (!isHttpsUrl(url)) throw bad(`--tool-tarball ${printable(JSON.stringify(url))} is not an https URL`);
    if (sha256 === undefined || !/^[0-9a-f]{64}$/.test(sha256)) {
      throw bad(`--tool-sha256 ${sha256 === undefined ? 'is missing' : printable(JSON.stringify(sha256))}: the SHA-256 of the archive, 64 lower-case hex digits (sha256sum prints it)`);
    }
    return { kind: 'tarball', url, sha256 };
  }
  throw bad(`the jobs need rocm-ebuild, and no source for it was given; ${TOOL_FLAGS_HINT}`);
}

/** Where a job installs a pinned rocm-ebuild, relative to its working directory (a dot directory: never a category). */
export const TOOL_DIR = '.rocm-ebuild-tool';

export interface ToolSetup {
  /** Shell lines that install it (none for --tool). */
  install: string[];
  /** How a job runs it, as the first words of a shell line. */
  run: string;
  /** The install needs git in the job's image. */
  needsGit: boolean;
  /** For the generated file's header: what the jobs run. */
  describe: string[];
}

/**
 * The install steps of a source, as shell lines: every value a word of its
 * own, quoted, after `--` where the program takes one. The commit is fetched
 * by its id and checked out detached; the tarball is checked against its
 * SHA-256 before it is unpacked; `npm ci` installs exactly the dependencies
 * the source's package-lock.json names (and builds it).
 */
export function toolSetup(source: ToolSource): ToolSetup {
  const npmCi = shellLine(['npm', '--prefix', TOOL_DIR, 'ci', '--no-audit', '--no-fund']);
  const run = shellLine(['node', `${TOOL_DIR}/bin/run.js`]);
  if (source.kind === 'command') {
    return { install: [], run: source.command, needsGit: false, describe: [`Jobs run rocm-ebuild as: ${source.command} (--tool).`] };
  }
  if (source.kind === 'git') {
    return {
      install: [
        shellLine(['git', 'init', '-q', '--', TOOL_DIR]),
        shellLine(['git', '-C', TOOL_DIR, 'fetch', '-q', '--depth=1', '--', source.url, source.commit]),
        shellLine(['git', '-C', TOOL_DIR, 'checkout', '-q', '--detach', source.commit, '--']),
        npmCi,
      ],
      run,
      needsGit: true,
      describe: [`Jobs run rocm-ebuild from ${source.url} at commit ${source.commit},`, 'installed with npm ci from that commit\'s package-lock.json.'],
    };
  }
  const archive = `${TOOL_DIR}.tar.gz`;
  return {
    install: [
      shellLine(['wget', '-q', '-O', archive, '--', source.url]),
      `echo ${shellLine([`${source.sha256}  ${archive}`])} | sha256sum -c -`,
      shellLine(['mkdir', '--', TOOL_DIR]),
      shellLine(['tar', '-xzf', archive, '-C', TOOL_DIR, '--strip-components=1']),
      npmCi,
    ],
    run,
    needsGit: false,
    describe: [`Jobs run rocm-ebuild from ${source.url} (SHA-256 ${source.sha256}),`, "installed with npm ci from the archive's package-lock.json."],
  };
}
