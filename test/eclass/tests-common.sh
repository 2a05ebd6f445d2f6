#!/bin/bash
# Copyright 2026 rocm-ebuild authors
# Distributed under the terms of the GNU General Public License v2

# A harness for eclass tests in the style of Gentoo's eclass/tests: stubs
# of the package manager functions the eclasses call, and tbegin/tend
# reporting.  Source it from a test script, which then sets variables in a
# subshell, inherits, and compares the results with the expected values.
#
# Stubs record what they were asked to do, one line per call, in the file
# ${STUB_LOG}; stub_log_reset empties it and stub_log prints it.  die prints
# its message to stderr, records it and exits the (sub)shell with status 1.
#
# Set ECLASS_TEST_TAP=1 to report in TAP ("ok 1 - ..."), as the mocha suite
# does; the default is Gentoo's "* Testing ... [ ok ]" style.

TESTS_DIR=$(cd "${BASH_SOURCE[0]%/*}" && pwd) || exit 1
# Eclasses are looked up here; overlays may prepend their own directories.
TESTS_ECLASS_SEARCH_PATHS=( "${TESTS_DIR}/../../eclass" )

tmpdir=$(mktemp -d "${TMPDIR:-/tmp}/eclass-tests.XXXXXX") || exit 1
chmod 755 "${tmpdir}" || exit 1
trap 'rm -rf "${tmpdir}"' EXIT
STUB_LOG=${tmpdir}/stub.log
: > "${STUB_LOG}"

# == output ==

_t_log() { echo "${*}" >> "${STUB_LOG}"; }
einfo() { echo " * ${*}"; }
elog() { einfo "${@}"; }
ewarn() { _t_log "ewarn: ${*}"; echo " * ${*}" >&2; }
eerror() { _t_log "eerror: ${*}"; echo " * ${*}" >&2; }
eqawarn() { _t_log "eqawarn: ${*}"; echo " * QA Notice: ${*}" >&2; }

stub_log() { cat "${STUB_LOG}"; }
stub_log_reset() { : > "${STUB_LOG}"; }

# == package manager stubs ==

die() {
	_t_log "die: ${*}"
	echo "die: ${*}" >&2
	exit 1
}

has() {
	local needle=${1} x
	shift
	for x in "${@}"; do
		[[ ${x} == "${needle}" ]] && return 0
	done
	return 1
}

# in_iuse: is the flag in IUSE (with or without a +/- default)?
in_iuse() {
	local flag=${1} x
	for x in ${IUSE}; do
		[[ ${x#[+-]} == "${flag}" ]] && return 0
	done
	return 1
}

# use: like Portage, refuse flags that are not in IUSE; enabled flags are
# those listed in USE.
use() {
	local flag=${1} invert=
	if [[ ${flag} == !* ]]; then
		invert=1
		flag=${flag#!}
	fi
	in_iuse "${flag}" || die "use: ${flag} is not in IUSE (${IUSE})"
	local x
	for x in ${USE}; do
		if [[ ${x} == "${flag}" ]]; then
			[[ -z ${invert} ]]
			return
		fi
	done
	[[ -n ${invert} ]]
}

addwrite() { _t_log "addwrite ${*}"; }
addpredict() { _t_log "addpredict ${*}"; }

debug-print() { :; }
debug-print-function() { :; }
debug-print-section() { :; }
EXPORT_FUNCTIONS() { :; }

# ver_test for plain dotted versions, compared as PMS does (1.0 < 1.0.0).
ver_test() {
	[[ ${#} -eq 3 ]] || die "ver_test: expected <v1> <op> <v2>, got: ${*}"
	local re='^[0-9]+(\.[0-9]+)*$'
	[[ ${1} =~ ${re} && ${3} =~ ${re} ]] || die "ver_test stub: only dotted numbers: ${*}"
	local -a a b
	IFS=. read -r -a a <<<"${1}"
	IFS=. read -r -a b <<<"${3}"
	local i cmp=0 n=$(( ${#a[@]} > ${#b[@]} ? ${#a[@]} : ${#b[@]} ))
	for (( i = 0; i < n && cmp == 0; i++ )); do
		if [[ -z ${a[i]} ]]; then
			cmp=-1
		elif [[ -z ${b[i]} ]]; then
			cmp=1
		elif (( 10#${a[i]} != 10#${b[i]} )); then
			cmp=$(( 10#${a[i]} < 10#${b[i]} ? -1 : 1 ))
		fi
	done
	case ${2} in
		-eq) (( cmp == 0 )) ;;
		-ne) (( cmp != 0 )) ;;
		-lt) (( cmp < 0 )) ;;
		-le) (( cmp <= 0 )) ;;
		-gt) (( cmp > 0 )) ;;
		-ge) (( cmp >= 0 )) ;;
		*) die "ver_test: unknown operator ${2}" ;;
	esac
}

# flag-o-matic, as far as rocm.eclass uses it.  test-flags-HIPCXX drops the
# flags listed in TEST_UNSUPPORTED_FLAGS.
strip-unsupported-flags() { _t_log "strip-unsupported-flags"; }
test-flags-HIPCXX() {
	_t_log "test-flags-HIPCXX ${*}"
	local flag kept=()
	for flag in "${@}"; do
		# shellcheck disable=SC2086 # a list of flags
		has "${flag}" ${TEST_UNSUPPORTED_FLAGS} || kept+=( "${flag}" )
	done
	echo "${kept[*]}"
}

# Eclasses the tests provide stubs for instead of sourcing them.  With
# TESTS_STUB_UNKNOWN_ECLASSES=1, eclasses not found in the search paths
# are skipped as well (for sourcing generated ebuilds).
_T_STUBBED_ECLASSES=( flag-o-matic )

inherit() {
	local e path prev_eclass=${ECLASS}
	for e in "${@}"; do
		if has "${e}" "${_T_STUBBED_ECLASSES[@]}"; then
			continue
		fi
		for path in "${TESTS_ECLASS_SEARCH_PATHS[@]}"; do
			if [[ -e ${path}/${e}.eclass ]]; then
				ECLASS=${e}
				# shellcheck source=/dev/null
				source "${path}/${e}.eclass"
				ECLASS=${prev_eclass}
				continue 2
			fi
		done
		[[ -n ${TESTS_STUB_UNKNOWN_ECLASSES} ]] || die "could not find ${e}.eclass"
	done
}

# == the ebuild environment ==

# The eclasses under test read these.
# shellcheck disable=SC2034
{
	EAPI=8
	CATEGORY=dev-eclass
	PN=tests
	PV=0
	P=${PN}-${PV}
	CHOST=x86_64-pc-linux-gnu
	EPREFIX=''
	BROOT=''
	IUSE=''
	USE=''
	T=${tmpdir}/temp
}
mkdir -p "${T}" || exit 1

# == reporting ==

tret=0
_t_count=0
_t_failed=0
_t_name=

# tbegin <description>: start a test.
tbegin() {
	_t_name=${*}
	stub_log_reset
	[[ -n ${ECLASS_TEST_TAP} ]] || printf ' * Testing %s ...' "${_t_name}"
}

# tend <status> [message]: finish the test begun last; non-zero fails it.
tend() {
	local status=${1:-0}
	shift
	_t_count=$(( _t_count + 1 ))
	if [[ ${status} -ne 0 ]]; then
		_t_failed=$(( _t_failed + 1 ))
		tret=1
	fi
	if [[ -n ${ECLASS_TEST_TAP} ]]; then
		echo "$( [[ ${status} -eq 0 ]] || echo 'not ' )ok ${_t_count} - ${_t_name}"
		[[ ${#} -gt 0 ]] && echo "# ${*}"
	else
		if [[ ${status} -eq 0 ]]; then
			echo ' [ ok ]'
		else
			echo ' [ !! ]'
			[[ ${#} -gt 0 ]] && echo " * ${*}" >&2
		fi
	fi
	return "${status}"
}

# texit: print the plan and exit with the combined status.
texit() {
	if [[ -n ${ECLASS_TEST_TAP} ]]; then
		echo "1..${_t_count}"
	fi
	echo "# ${_t_count} tests, ${_t_failed} failed" >&2
	exit "${tret}"
}

# expect <what> <actual> <expected>: compare, printing both on a mismatch.
# Returns non-zero on a mismatch, so checks can be chained with ||.
# Diagnostics go to stdout in TAP mode (before the "not ok" line they
# explain), to stderr otherwise.
expect() {
	if [[ ${2} != "${3}" ]]; then
		tdiag "${1}:" "      got: ${2}" " expected: ${3}"
		return 1
	fi
}

# tdiag <line>...: print diagnostics for the current test.
tdiag() {
	local line
	for line in "${@}"; do
		if [[ -n ${ECLASS_TEST_TAP} ]]; then
			echo "# ${line}"
		else
			echo " * ${line}" >&2
		fi
	done
}
