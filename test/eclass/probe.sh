#!/bin/bash
# Copyright 2026 rocm-ebuild authors
# Distributed under the terms of the GNU General Public License v2
# shellcheck source-path=SCRIPTDIR

# probe.sh <ROCM_VERSION>...: inherit rocm.eclass once per version, each in
# a fresh subshell, and print one tab-separated line per version:
#
#   version status policy IUSE ROCM_REQUIRED_USE ROCM_USEDEP qa die stderr
#
# status is the subshell's exit status; qa and die are the first eqawarn
# and die messages; stderr is everything else printed there (" | "-joined).
# PROBE_SUPPORTED, if set, becomes ROCM_SUPPORTED_TARGETS.  The TypeScript
# tests compare these lines with policyFor and eclassGlobals.

# shellcheck source=tests-common.sh
source "${BASH_SOURCE[0]%/*}/tests-common.sh" || exit 1

for version in "${@}"; do
	stub_log_reset
	# The eclass reads ROCM_VERSION and ROCM_SUPPORTED_TARGETS.
	# shellcheck disable=SC2034
	out=$(
		ROCM_VERSION=${version}
		if [[ -n ${PROBE_SUPPORTED+set} ]]; then
			read -r -a ROCM_SUPPORTED_TARGETS <<<"${PROBE_SUPPORTED}"
		fi
		inherit rocm 2>"${tmpdir}/stderr"
		printf '%s\t%s\t%s\t%s' "${_ROCM_POLICY}" "${IUSE}" "${ROCM_REQUIRED_USE}" "${ROCM_USEDEP}"
	) 2>>"${tmpdir}/stderr"
	status=${?}
	[[ ${status} -eq 0 ]] || out=$'\t\t\t'
	qa=$(sed -n 's/^eqawarn: //p' "${STUB_LOG}" | head -n 1)
	died=$(sed -n 's/^die: //p' "${STUB_LOG}" | head -n 1)
	errors=$(grep -v -e '^die: ' -e '^ \* QA Notice: ' "${tmpdir}/stderr" 2>/dev/null | paste -sd '|' -)
	: > "${tmpdir}/stderr"
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "${version}" "${status}" "${out}" "${qa}" "${died}" "${errors}"
done
