import { REPORT_FILES } from './layout.js';
import { emergeAtom, portageFiles, type ContainerJob } from './portage.js';
import { shellWord } from '../util/argv.js';
import { maskedLlvmSlotFlags } from '../model/llvm-masks.js';

/** Exit statuses of the script (the host reads the status file; these are a summary). */
export const SCRIPT_EXIT = { passed: 0, failed: 1, setup: 2, gpuAccess: 3, interrupted: 130 } as const;

/**
 * The script the container runs (POSIX sh: Gentoo's bash and busybox both run
 * it). It gives user portage the host's device groups, installs the Portage
 * configuration, checks that portage can open the GPU, resolves, builds the
 * dependencies (binary packages first), then emerges each atom under test in
 * build order with FEATURES=test, skipping those whose dependencies under test
 * failed. Every command's exit status goes to the status file: the host takes
 * results from there, never from the console. A signal, or rocm-ebuild going
 * away (stdin closes, even after kill -9), stops the running emerge and ends
 * the script. Written as its parts, in the order they run.
 */
export function containerScript(job: ContainerJob): string {
  return [
    ...preamble(job),
    ...processControl(),
    ...stepRecords(),
    ...setupFunctions(job),
    ...setupSteps(job),
    ...dependencySteps(job),
    ...atomSteps(job),
  ].join('\n');
}

const COMMON = '--oneshot --usepkg --binpkg-respect-use=y --with-bdeps=y --quiet-build=y --color=n --nospinner';

/** The emerge arguments of the atoms under test, and the --usepkg-exclude list that keeps them from binary packages. */
function emergeArgs(job: ContainerJob): { args: string[]; exclude: string } {
  return {
    args: job.plan.atoms.map((a) => shellWord(emergeAtom(a, job.repoName))),
    exclude: shellWord(job.plan.atoms.map((a) => a.atom).join(' ')),
  };
}

/** What the script is, and the paths and limits it works with. */
function preamble(job: ContainerJob): string[] {
  return [
    '#!/bin/sh',
    `# Written by rocm-ebuild test: ROCm ${job.plan.release} ${job.gfx ? `on ${job.gfx}` : 'without a GPU'}, ${job.plan.tier} tests.`,
    '# Runs inside the container as root; results go to the status file.',
    'set -u',
    `LOG=${shellWord(job.paths.log)}`,
    `SETUP=${shellWord(job.paths.setup)}`,
    `STATUS="$LOG/${REPORT_FILES.status}"`,
    `TIMEOUT=${job.timeoutSeconds}`,
    "child=''",
    "interrupted=''",
    "failed=''",
    '',
  ];
}

/**
 * Events and records for the host, and the running of commands: each in the
 * background so a signal is handled at once, stopped when rocm-ebuild goes
 * away, killed after the timeout.
 */
function processControl(): string[] {
  return [
    "event() { printf '@@rocm-ebuild %s\\n' \"$*\"; }",
    '# record STEP ATOM STATUS SECONDS NOTE',
    "record() { printf '%s|%s|%s|%s|%s\\n' \"$1\" \"$2\" \"$3\" \"$4\" \"$5\" >>\"$STATUS\"; }",
    '',
    '# shellcheck disable=SC2317 # called through trap',
    'on_signal() {',
    '\tinterrupted=1',
    '\tif [ -n "$child" ]; then kill -TERM "$child" 2>/dev/null; fi',
    '}',
    'trap on_signal INT TERM HUP',
    '',
    '# rocm-ebuild holds our stdin open: when it closes (rocm-ebuild ended, even by kill -9), stop.',
    'exec 3<&0',
    '( cat <&3 >/dev/null; kill -TERM $$ 2>/dev/null ) &',
    'watchdog=$!',
    '',
    '# run CMD…: in the background, so that a signal is handled at once; sets rc.',
    'run() {',
    '\t"$@" &',
    '\tchild=$!',
    '\twait "$child"',
    '\trc=$?',
    '\twhile [ -n "$interrupted" ] && kill -0 "$child" 2>/dev/null; do',
    '\t\twait "$child"',
    '\t\trc=$?',
    '\tdone',
    "\tchild=''",
    '}',
    '',
    '# timed CMD…: run, killed after $TIMEOUT seconds (0: never); sets rc and timedout.',
    'timed() {',
    "\ttimedout=''",
    '\tt0=$(date +%s)',
    '\tif [ "$TIMEOUT" -gt 0 ]; then run timeout -s TERM "$TIMEOUT" "$@"; else run "$@"; fi',
    '\t# coreutils says 124; busybox execs the command, which then dies of SIGTERM (143).',
    '\tif [ "$TIMEOUT" -gt 0 ] && [ -z "$interrupted" ] && { [ "$rc" -eq 124 ] || { [ "$rc" -eq 143 ] && [ $(($(date +%s) - t0)) -ge "$TIMEOUT" ]; }; }; then',
    '\t\ttimedout=1',
    '\tfi',
    '}',
    '',
    'finish() {',
    '\tkill "$watchdog" 2>/dev/null',
    '\t# Portage writes as user portage: let the host user read and delete everything.',
    '\tchmod -R a+rwX "$LOG" 2>/dev/null',
    '\tevent finish "$1"',
    '\texit "$1"',
    '}',
    '',
  ];
}

/** Steps and their records: the phases file is split by the marks, as the console is by the events. */
function stepRecords(): string[] {
  return [
    '# mark SEGMENT: the phases file is split by these, as the console is by the events.',
    `mark() { printf '%s - %s\\n' "$(date +%s)" "$1" >>"$LOG/${REPORT_FILES.phases}"; }`,
    'step_start() { event step "$1"; mark "step:$1"; s0=$(date +%s); }',
    'step_end() { record "$1" "" "$rc" $(($(date +%s) - s0)) "${2:-}"; }',
    'check_interrupted() { if [ -n "$interrupted" ]; then finish ' + SCRIPT_EXIT.interrupted + '; fi; }',
    '',
  ];
}

/** Installing a Portage file, giving user portage a group, checking a device node. */
function setupFunctions(job: ContainerJob): string[] {
  return [
    '# put KIND: our conf/KIND as /etc/portage/KIND/rocm-ebuild, or appended where the image has KIND as a file.',
    'put() {',
    '\tif [ -f "/etc/portage/$1" ]; then',
    '\t\tcat "$SETUP/conf/$1" >>"/etc/portage/$1"',
    '\telse',
    '\t\tmkdir -p "/etc/portage/$1" && cp "$SETUP/conf/$1" "/etc/portage/$1/rocm-ebuild"',
    '\tfi',
    '}',
    '',
    "# setup_group GID: user portage joins group GID, created as rocm-gpu-GID when the image has none.",
    'setup_group() {',
    "\tif ! awk -F: -v gid=\"$1\" '$3 == gid { found = 1 } END { exit !found }' /etc/group; then",
    "\t\tprintf 'rocm-gpu-%s:x:%s:\\n' \"$1\" \"$1\" >>/etc/group",
    '\tfi',
    "\tawk -F: -v OFS=: -v gid=\"$1\" '$3 == gid && (\",\" $4 \",\") !~ /,portage,/ { $4 = ($4 == \"\" ? \"portage\" : $4 \",portage\") } { print }' \\",
    '\t\t/etc/group >/etc/group.rocm-ebuild && cat /etc/group.rocm-ebuild >/etc/group && rm -f /etc/group.rocm-ebuild',
    '}',
    '',
    '# gpu_check NODE…: each node is a character device that the build user can read and write.',
    'gpu_check() {',
    '\tfor node in "$@"; do',
    '\t\tif [ ! -c "$node" ]; then',
    '\t\t\techo "rocm-ebuild: $node is not a character device in the container (was it passed with --device?)"',
    '\t\t\treturn 1',
    '\t\tfi',
    job.userpriv
      ? '\t\tif ! su -s /bin/sh portage -c "test -r $node && test -w $node"; then'
      : '\t\tif ! { test -r "$node" && test -w "$node"; }; then',
    `\t\t\techo "rocm-ebuild: ${job.userpriv ? 'user portage' : 'root'} cannot open $node read-write: $(ls -ln "$node")"`,
    '\t\t\treturn 1',
    '\t\tfi',
    '\tdone',
    '}',
    '',
  ];
}

/** The report directory, the Portage configuration and the GPU check: nothing is built before these pass. */
function setupSteps(job: ContainerJob): string[] {
  const unmask = maskedLlvmSlotFlags([job.plan.llvmSlot]).length > 0;
  return [
    'mkdir -p "$LOG/' + REPORT_FILES.build + '" "$LOG/' + REPORT_FILES.gtest + '"',
    'chmod 1777 "$LOG/' + REPORT_FILES.build + '" "$LOG/' + REPORT_FILES.gtest + '"',
    `: >"$LOG/${REPORT_FILES.phases}"`,
    `chmod 0666 "$LOG/${REPORT_FILES.phases}"`,
    ': >"$STATUS"',
    '',
    'step_start setup',
    `for gid in ${job.gids.join(' ')}; do setup_group "$gid" || { rc=$?; step_end setup 'cannot edit /etc/group'; finish ${SCRIPT_EXIT.setup}; }; done`,
    'for kind in repos.conf package.use package.accept_keywords; do put "$kind" || { rc=$?; step_end setup "cannot write /etc/portage/$kind"; finish ' + SCRIPT_EXIT.setup + '; }; done',
    ...(unmask
      ? [`{ mkdir -p /etc/portage/profile && cat "$SETUP/profile/use.mask" >>/etc/portage/profile/use.mask; } || { rc=$?; step_end setup 'cannot write /etc/portage/profile/use.mask'; finish ${SCRIPT_EXIT.setup}; }`]
      : []),
    'mkdir -p /etc/portage/env /etc/sandbox.d && cp -R "$SETUP/env/." /etc/portage/env/',
    'if [ -d /etc/portage/make.conf ]; then cp "$SETUP/make.conf" /etc/portage/make.conf/zz-rocm-ebuild; else cat "$SETUP/make.conf" >>/etc/portage/make.conf; fi',
    'cat "$SETUP/bashrc" >>/etc/portage/bashrc',
    'cp "$SETUP/sandbox.conf" /etc/sandbox.d/90rocm-ebuild',
    'rc=0',
    'step_end setup',
    '',
    'step_start gpu',
    `gpu_check ${job.devices.map(shellWord).join(' ')}`,
    'rc=$?',
    'step_end gpu',
    `if [ "$rc" -ne 0 ]; then finish ${SCRIPT_EXIT.gpuAccess}; fi`,
    '',
  ];
}

/** Resolving everything, then building the dependencies (from binary packages where they match), with no tests. */
function dependencySteps(job: ContainerJob): string[] {
  const { args, exclude } = emergeArgs(job);
  return [
    'step_start resolve',
    `run emerge --pretend --verbose ${COMMON} --usepkg-exclude ${exclude} ${args.join(' ')}`,
    'step_end resolve',
    'check_interrupted',
    `if [ "$rc" -ne 0 ]; then finish ${SCRIPT_EXIT.failed}; fi`,
    '',
    'step_start deps',
    `run emerge ${COMMON} --onlydeps --usepkg-exclude ${exclude} ${args.join(' ')}`,
    'step_end deps',
    'check_interrupted',
    `if [ "$rc" -ne 0 ]; then finish ${SCRIPT_EXIT.failed}; fi`,
    '',
  ];
}

/** Each atom under test in build order with FEATURES=test, unless one it needs failed; then the script's verdict. */
function atomSteps(job: ContainerJob): string[] {
  const lines = [
    '# Only now FEATURES=test for the atoms under test: no dependency ran its tests above.',
    'put package.env',
    '',
    '# atom CATEGORY/PN EMERGE-ATOM NEEDED…: emerge one atom under test unless an atom it needs failed.',
    'atom() {',
    '\ta=$1',
    '\tspec=$2',
    '\tshift 2',
    '\tfor need in "$@"; do',
    '\t\tcase " $failed " in',
    '\t\t*" $need "*)',
    '\t\t\trecord atom "$a" - 0 "needs $need, which failed"',
    '\t\t\tfailed="$failed $a"',
    '\t\t\treturn',
    '\t\t\t;;',
    '\t\tesac',
    '\tdone',
    '\tevent atom "$a"',
    '\tmark "atom:$a"',
    '\ta0=$(date +%s)',
    `\ttimed emerge ${COMMON} --usepkg-exclude "$a" "$spec"`,
    '\tif [ "$rc" -ne 0 ]; then failed="$failed $a"; fi',
    '\trecord atom "$a" "$rc" $(($(date +%s) - a0)) "${timedout:+timeout}"',
    '\tcheck_interrupted',
    '}',
    '',
  ];
  for (const a of job.plan.atoms) {
    lines.push(['atom', a.atom, shellWord(emergeAtom(a, job.repoName)), ...a.needs].join(' '));
  }
  lines.push('', `if [ -n "$failed" ]; then finish ${SCRIPT_EXIT.failed}; fi`, `finish ${SCRIPT_EXIT.passed}`, '');
  return lines;
}

/** Everything a container gets in its setup directory: the Portage configuration and this script. */
export function setupFiles(job: ContainerJob): Record<string, string> {
  return { ...portageFiles(job), 'run.sh': containerScript(job) };
}
