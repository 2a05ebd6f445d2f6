#!/bin/bash
# Copyright 2026 rocm-ebuild authors
# Distributed under the terms of the GNU General Public License v2
# shellcheck source-path=SCRIPTDIR

# Tests of eclass/rocm.eclass, run with real bash against the real eclass:
#   bash test/eclass/rocm.sh            (Gentoo style report)
#   ECLASS_TEST_TAP=1 bash test/eclass/rocm.sh   (TAP, for mocha)

# Variables set here are read by the eclass under test, and stubs defined
# here are called by it.
# shellcheck disable=SC2034,SC2317

# shellcheck source=tests-common.sh
source "${BASH_SOURCE[0]%/*}/tests-common.sh" || exit 1

# Run as "rocm.sh --check-amdgpu <root>" by the permission test: call
# check_amdgpu against the device tree <root> as the current user.
if [[ ${1} == --check-amdgpu ]]; then
	ROCM_SKIP_GLOBALS=1
	_ROCM_DEVICE_ROOT=${2}
	inherit rocm
	check_amdgpu
	exit 0
fi

# == expected values ==

iuse_of() {
	local word flags=()
	for word in "${@}"; do
		flags+=( "${word/gfx/amdgpu_targets_gfx}" )
	done
	echo "${flags[*]}"
}

IUSE_57=$(iuse_of gfx803 gfx900 +gfx906 +gfx908 +gfx90a gfx1010 gfx1011 gfx1012 +gfx1030 gfx1031 gfx1100 gfx1101 gfx1102)
IUSE_60_63=$(iuse_of gfx803 gfx900 +gfx906 +gfx908 +gfx90a gfx940 gfx941 +gfx942 gfx1010 gfx1011 gfx1012 +gfx1030 gfx1031 +gfx1100 gfx1101 gfx1102)
IUSE_640_642=$(iuse_of gfx803 gfx900 gfx906 +gfx908 +gfx90a gfx940 gfx941 +gfx942 gfx1010 gfx1011 gfx1012 +gfx1030 gfx1031 +gfx1100 gfx1101 gfx1102 gfx1200 gfx1201)
IUSE_643=$(iuse_of gfx803 gfx900 gfx906 +gfx908 +gfx90a gfx940 gfx941 +gfx942 gfx1010 gfx1011 gfx1012 +gfx1030 gfx1031 +gfx1100 +gfx1101 gfx1102 gfx1103 gfx1150 gfx1151 +gfx1200 +gfx1201)
IUSE_70=$(iuse_of gfx803 gfx900 gfx906 +gfx908 +gfx90a gfx940 gfx941 +gfx942 +gfx950 gfx1010 gfx1011 gfx1012 +gfx1030 gfx1031 +gfx1100 +gfx1101 gfx1102 gfx1103 gfx1150 gfx1151 +gfx1200 +gfx1201)
IUSE_79=$(iuse_of gfx900 gfx906 +gfx908 +gfx90a +gfx942 +gfx950 gfx1010 gfx1011 gfx1012 +gfx1030 gfx1031 gfx1032 gfx1033 gfx1034 gfx1035 gfx1036 +gfx1100 +gfx1101 gfx1102 gfx1103 gfx1150 gfx1151 gfx1152 gfx1153 +gfx1200 +gfx1201)
IUSE_10=$(iuse_of gfx900 gfx906 +gfx908 +gfx90a +gfx942 +gfx950 gfx1010 gfx1011 gfx1012 +gfx1030 gfx1031 gfx1032 gfx1033 gfx1034 gfx1035 gfx1036 +gfx1100 +gfx1101 +gfx1102 gfx1103 +gfx1150 +gfx1151 +gfx1152 gfx1153 +gfx1200 +gfx1201)

REQUIRED_USE_62="|| ( amdgpu_targets_gfx803 amdgpu_targets_gfx900 amdgpu_targets_gfx906 amdgpu_targets_gfx908 amdgpu_targets_gfx90a amdgpu_targets_gfx940 amdgpu_targets_gfx941 amdgpu_targets_gfx942 amdgpu_targets_gfx1010 amdgpu_targets_gfx1011 amdgpu_targets_gfx1012 amdgpu_targets_gfx1030 amdgpu_targets_gfx1031 amdgpu_targets_gfx1100 amdgpu_targets_gfx1101 amdgpu_targets_gfx1102 )"
USEDEP_62="amdgpu_targets_gfx803(-)?,amdgpu_targets_gfx900(-)?,amdgpu_targets_gfx906(-)?,amdgpu_targets_gfx908(-)?,amdgpu_targets_gfx90a(-)?,amdgpu_targets_gfx940(-)?,amdgpu_targets_gfx941(-)?,amdgpu_targets_gfx942(-)?,amdgpu_targets_gfx1010(-)?,amdgpu_targets_gfx1011(-)?,amdgpu_targets_gfx1012(-)?,amdgpu_targets_gfx1030(-)?,amdgpu_targets_gfx1031(-)?,amdgpu_targets_gfx1100(-)?,amdgpu_targets_gfx1101(-)?,amdgpu_targets_gfx1102(-)?"

# == globals ==

# test_globals <ROCM_VERSION> <policy> <IUSE> [<QA notice: newer|older>]
test_globals() {
	local version=${1} policy=${2} iuse=${3} notice=${4}
	tbegin "ROCM_VERSION=${version} -> ${policy}${notice:+ (${notice}, QA notice)}"
	(
		ROCM_VERSION=${version}
		inherit rocm
		fail=0
		expect "policy" "${_ROCM_POLICY}" "${policy}" || fail=1
		expect "IUSE" "${IUSE}" "${iuse}" || fail=1
		expect "ROCM_USE_DEP" "${ROCM_USE_DEP}" "${ROCM_USEDEP}" || fail=1
		local qa
		qa=$(grep '^eqawarn:' "${STUB_LOG}" | head -n 1)
		if [[ -n ${notice} ]]; then
			expect "QA notice" "${qa}" "eqawarn: ROCM_VERSION=${version} is ${notice} than the AMDGPU target table of rocm.eclass; using the targets of ROCm ${policy}." || fail=1
		else
			expect "QA notice" "${qa}" "" || fail=1
		fi
		exit "${fail}"
	) 2>/dev/null
	tend ${?}
}

test_globals 6.2.2 6.2 "${IUSE_60_63}"
test_globals 6.0.0 6.0 "${IUSE_60_63}"
test_globals 6.3.3 6.3 "${IUSE_60_63}"
test_globals 6.4.2 6.4.0-6.4.2 "${IUSE_640_642}"
test_globals 6.4.3 6.4.3+ "${IUSE_643}"
test_globals 6.4.10 6.4.3+ "${IUSE_643}"
test_globals 7.0.2 7.0-7.2 "${IUSE_70}"
test_globals 7.2.4 7.0-7.2 "${IUSE_70}"
test_globals 5.7.1 5.7 "${IUSE_57}"
test_globals 6.2.2_rc1 6.2 "${IUSE_60_63}"
test_globals 6.2.02 6.2 "${IUSE_60_63}"
test_globals 7.9.0 7.9-7.14 "${IUSE_79}"
test_globals 10.0.0 10.0+ "${IUSE_10}"
test_globals 10.1.2 10.0+ "${IUSE_10}"
# X.Y is a release line, as ::gentoo reads "6.1" (sci-ml/caffe2) as
# every 6.x release: the series of X.Y.0 and those continuing it without
# a gap, with the defaults of the last
test_globals 6.1 "6.1 6.2 6.3 6.4.0-6.4.2 6.4.3+" "${IUSE_643}"
test_globals 6.0 "6.0 6.1 6.2 6.3 6.4.0-6.4.2 6.4.3+" "${IUSE_643}"
test_globals 06.03 "6.3 6.4.0-6.4.2 6.4.3+" "${IUSE_643}"
test_globals 6.4 "6.4.0-6.4.2 6.4.3+" "${IUSE_643}"
test_globals 6.4_rc1 "6.4.0-6.4.2 6.4.3+" "${IUSE_643}"
test_globals 7.0 7.0-7.2 "${IUSE_70}"
test_globals 7.2 7.0-7.2 "${IUSE_70}"
test_globals 5.7 5.7 "${IUSE_57}"
test_globals 7.14 7.9-7.14 "${IUSE_79}"
# live ebuilds: the line of the live series, ::gentoo's 7.x lists
test_globals 9999 7.0-7.2 "${IUSE_70}"
# outside the known series of a known major
test_globals 6.5 6.4.3+ "${IUSE_643}" newer
test_globals 6.10.1 6.4.3+ "${IUSE_643}" newer
test_globals 7.5 7.0-7.2 "${IUSE_70}" newer
test_globals 7.8.1 7.0-7.2 "${IUSE_70}" newer
test_globals 5.1 5.7 "${IUSE_57}" older
# a major the table does not know yet: the newest series before it, never a die
test_globals 8.0 7.9-7.14 "${IUSE_79}" newer
test_globals 11.2 10.0+ "${IUSE_10}" newer
test_globals 4.5 5.7 "${IUSE_57}" older

tbegin "ROCM_VERSION=6.2.2: REQUIRED_USE and USEDEP"
(
	ROCM_VERSION=6.2.2
	inherit rocm
	expect "ROCM_REQUIRED_USE" "${ROCM_REQUIRED_USE}" "${REQUIRED_USE_62}" &&
	expect "ROCM_USEDEP" "${ROCM_USEDEP}" "${USEDEP_62}" &&
	expect "ROCM_USE_DEP" "${ROCM_USE_DEP}" "${USEDEP_62}" &&
	expect "REQUIRED_USE (left to the ebuild)" "${REQUIRED_USE-unset}" unset
)
tend ${?}

tbegin "QA notice is not printed while metadata is generated"
(
	EBUILD_PHASE=depend
	ROCM_VERSION=7.5
	inherit rocm
	expect "policy" "${_ROCM_POLICY}" 7.0-7.2 &&
	expect "log" "$(stub_log)" ""
) 2>/dev/null
tend ${?}

# test_dies <description> <expected message part> <commands...>
# Run the commands in a subshell; they must die with a message containing
# the expected part.
test_dies() {
	local what=${1} message=${2}
	shift 2
	tbegin "${what} dies"
	(
		"${@}"
		tdiag "did not die"
		exit 1
	) 2>/dev/null
	local status=${?}
	local died
	died=$(grep '^die:' "${STUB_LOG}")
	if [[ ${status} -eq 0 || -z ${died} ]]; then
		tend 1 "expected death with: ${message}"
	elif [[ ${died} != *"${message}"* ]]; then
		tdiag "die message: ${died}" "expected to contain: ${message}"
		tend 1
	else
		tend 0
	fi
}

inherit_with_version() {
	ROCM_VERSION=${1}
	inherit rocm
}
test_dies "ROCM_VERSION=6" "ROCM_VERSION=6 is not a ROCm version; set it to X.Y, X.Y.Z or 9999" inherit_with_version 6
test_dies "ROCM_VERSION=6.2.x" "is not a ROCm version" inherit_with_version 6.2.x
test_dies "unset ROCM_VERSION" "set ROCM_VERSION before inheriting rocm" inherit_with_version ""

eapi7() {
	EAPI=7
	inherit_with_version 6.2.2
}
test_dies "EAPI=7" "rocm: EAPI 7 not supported" eapi7

# == ROCM_SUPPORTED_TARGETS ==

# test_subset <ROCM_VERSION> "<supported>" <IUSE> <REQUIRED_USE> <USEDEP>
test_subset() {
	local version=${1} supported=${2} iuse=${3} required_use=${4} usedep=${5}
	tbegin "ROCM_VERSION=${version} ROCM_SUPPORTED_TARGETS=( ${supported} )"
	(
		ROCM_VERSION=${version}
		read -r -a ROCM_SUPPORTED_TARGETS <<<"${supported}"
		inherit rocm
		expect "IUSE" "${IUSE}" "${iuse}" &&
		expect "ROCM_REQUIRED_USE" "${ROCM_REQUIRED_USE}" "${required_use}" &&
		expect "ROCM_USEDEP" "${ROCM_USEDEP}" "${usedep}" &&
		expect "ROCM_USE_DEP" "${ROCM_USE_DEP}" "${usedep}"
	)
	tend ${?}
}

# gfx1250 is known but not offered in 6.2, gfx1300 is not known at all:
# both are ignored; default-on targets stay default-on.
test_subset 6.2.2 "gfx1101 gfx942 gfx90a gfx1100 gfx1250 gfx1300" \
	"+amdgpu_targets_gfx90a +amdgpu_targets_gfx942 +amdgpu_targets_gfx1100 amdgpu_targets_gfx1101" \
	"|| ( amdgpu_targets_gfx90a amdgpu_targets_gfx942 amdgpu_targets_gfx1100 amdgpu_targets_gfx1101 )" \
	"amdgpu_targets_gfx90a(-)?,amdgpu_targets_gfx942(-)?,amdgpu_targets_gfx1100(-)?,amdgpu_targets_gfx1101(-)?"
test_subset 6.2.2 "gfx1010 gfx1012" \
	"amdgpu_targets_gfx1010 amdgpu_targets_gfx1012" \
	"|| ( amdgpu_targets_gfx1010 amdgpu_targets_gfx1012 )" \
	"amdgpu_targets_gfx1010(-)?,amdgpu_targets_gfx1012(-)?"
test_subset 7.0.0 "gfx950 gfx1250" \
	"+amdgpu_targets_gfx950" \
	"|| ( amdgpu_targets_gfx950 )" \
	"amdgpu_targets_gfx950(-)?"

subset_scalar() {
	# shellcheck disable=SC2178 # deliberately not an array
	ROCM_SUPPORTED_TARGETS="gfx90a gfx942"
	inherit_with_version 6.2.2
}
test_dies "a scalar ROCM_SUPPORTED_TARGETS" "ROCM_SUPPORTED_TARGETS must be a bash array: ROCM_SUPPORTED_TARGETS=( gfx90a gfx942 )" subset_scalar
subset_feature() {
	ROCM_SUPPORTED_TARGETS=( gfx90a "gfx90a:xnack-" )
	inherit_with_version 6.2.2
}
test_dies "ROCM_SUPPORTED_TARGETS=( gfx90a:xnack- )" "'gfx90a:xnack-' is not a gfx target name" subset_feature
subset_disjoint() {
	ROCM_SUPPORTED_TARGETS=( gfx950 gfx1200 )
	inherit_with_version 6.2.2
}
test_dies "ROCM_SUPPORTED_TARGETS disjoint from the policy" \
	"none of ROCM_SUPPORTED_TARGETS (gfx950 gfx1200) is offered for ROCm 6.2.2 (series 6.2:" subset_disjoint
subset_empty() {
	ROCM_SUPPORTED_TARGETS=()
	inherit_with_version 6.2.2
}
test_dies "ROCM_SUPPORTED_TARGETS=()" "none of ROCM_SUPPORTED_TARGETS () is offered" subset_empty

# == ROCM_SKIP_GLOBALS and the include guard ==

tbegin "ROCM_SKIP_GLOBALS=1 without ROCM_VERSION"
(
	ROCM_SKIP_GLOBALS=1
	inherit rocm
	fail=0
	expect "IUSE" "${IUSE}" "" || fail=1
	expect "ROCM_REQUIRED_USE" "${ROCM_REQUIRED_USE-unset}" unset || fail=1
	expect "ROCM_USEDEP" "${ROCM_USEDEP-unset}" unset || fail=1
	expect "ROCM_USE_DEP" "${ROCM_USE_DEP-unset}" unset || fail=1
	expect "functions" "$(declare -F get_amdgpu_flags check_amdgpu rocm_add_sandbox rocm_use_hipcc rocm_use_clang | tr '\n' ' ')" \
		"get_amdgpu_flags check_amdgpu rocm_add_sandbox rocm_use_hipcc rocm_use_clang " || fail=1
	expect "internal setup functions left behind" "$(declare -F _rocm_set_globals _rocm_select_policy)" "" || fail=1
	exit "${fail}"
)
tend ${?}

tbegin "inheriting twice changes nothing"
(
	ROCM_VERSION=6.2.2
	inherit rocm
	ROCM_VERSION=7.0.0
	inherit rocm
	expect "policy" "${_ROCM_POLICY}" 6.2 &&
	expect "IUSE" "${IUSE}" "${IUSE_60_63}"
)
tend ${?}

tbegin "every series of the table sources cleanly from its first version"
(
	ROCM_SKIP_GLOBALS=1
	inherit rocm
	fail=0
	for entry in "${_ROCM_POLICIES[@]}"; do
		read -r series from _ <<<"${entry}"
		out=$(
			unset ROCM_SKIP_GLOBALS _ROCM_ECLASS
			ROCM_VERSION=${from}
			inherit rocm 2>&1
			echo "policy=${_ROCM_POLICY} iuse=${IUSE:+set}"
		)
		expect "ROCM_VERSION=${from}" "${out}" "policy=${series} iuse=set" || fail=1
	done
	expect "QA notices or errors" "$(stub_log)" "" || fail=1
	exit "${fail}"
)
tend ${?}

# == get_amdgpu_flags ==

# test_flags "<USE>" "<separator args>" <expected> [<ROCM_SUPPORTED_TARGETS>]
# <separator args> is "none" for no argument.
test_flags() {
	local use=${1} sep=${2} expected=${3} supported=${4}
	tbegin "get_amdgpu_flags${sep/#none/} with USE=\"${use}\"${supported:+ and ROCM_SUPPORTED_TARGETS=( ${supported} )}"
	(
		ROCM_VERSION=6.2.2
		[[ -n ${supported} ]] && read -r -a ROCM_SUPPORTED_TARGETS <<<"${supported}"
		inherit rocm
		USE=${use}
		if [[ ${sep} == none ]]; then
			got=$(get_amdgpu_flags)
		else
			got=$(get_amdgpu_flags "${sep# }")
		fi
		expect "output" "${got}" "${expected}"
	)
	tend ${?}
}

MANY="amdgpu_targets_gfx1100 amdgpu_targets_gfx906 amdgpu_targets_gfx90a"
test_flags "" none ";"
test_flags "" " ;" ""
test_flags "" " ," ""
test_flags "amdgpu_targets_gfx1030" none "gfx1030;"
test_flags "amdgpu_targets_gfx1030" " ;" "gfx1030"
test_flags "amdgpu_targets_gfx1030" " ," "gfx1030"
test_flags "${MANY}" none "gfx906;gfx90a;gfx1100;"
test_flags "${MANY}" " ;" "gfx906;gfx90a;gfx1100"
test_flags "${MANY}" " ," "gfx906,gfx90a,gfx1100"
test_flags "${MANY}" "  " "gfx906 gfx90a gfx1100"
test_flags "${MANY}" " , " "gfx906, gfx90a, gfx1100"
# enabled targets the package does not offer are not printed
test_flags "${MANY} amdgpu_targets_gfx1030" none "gfx90a;gfx1100;" "gfx90a gfx1100"

tbegin "get_amdgpu_flags with ROCM_SKIP_GLOBALS and the ebuild's own IUSE"
(
	ROCM_SKIP_GLOBALS=1
	inherit rocm
	IUSE="rocm +amdgpu_targets_gfx1030 amdgpu_targets_gfx90a amdgpu_targets_gfx1100"
	USE="rocm amdgpu_targets_gfx1030 amdgpu_targets_gfx90a"
	expect "output" "$(get_amdgpu_flags)" "gfx90a;gfx1030;" &&
	expect "output with ," "$(get_amdgpu_flags ,)" "gfx90a,gfx1030"
)
tend ${?}

tbegin "get_amdgpu_flags prints enabled targets of the ebuild's IUSE the table does not know, last"
(
	ROCM_SKIP_GLOBALS=1
	inherit rocm
	IUSE="amdgpu_targets_gfx1300 +amdgpu_targets_gfx1030 amdgpu_targets_gfx90a amdgpu_targets_gfx1299"
	USE="amdgpu_targets_gfx1030 amdgpu_targets_gfx1300 amdgpu_targets_gfx90a"
	expect "output" "$(get_amdgpu_flags)" "gfx90a;gfx1030;gfx1300;"
)
tend ${?}

# ::gentoo's get_amdgpu_flags ignores its arguments: more than a
# separator is a QA notice, never a die.
tbegin "get_amdgpu_flags with two arguments uses the first, with a QA notice"
(
	ROCM_VERSION=6.2.2
	inherit rocm
	USE="${MANY}"
	expect "output" "$(get_amdgpu_flags , ";" 2>/dev/null)" "gfx906,gfx90a,gfx1100" &&
	expect "QA notice" "$(grep '^eqawarn:' "${STUB_LOG}")" "eqawarn: get_amdgpu_flags: takes at most a separator; ignoring: ;"
)
tend ${?}

# == compilers ==

tbegin "rocm_use_hipcc"
(
	ROCM_VERSION=6.2.2
	inherit rocm
	USE="amdgpu_targets_gfx1100 amdgpu_targets_gfx90a"
	CXXFLAGS="-O2 -mtls-dialect=gnu2 -pipe"
	TEST_UNSUPPORTED_FLAGS="-mtls-dialect=gnu2"
	rocm_use_hipcc
	fail=0
	expect "ROCM_TARGET_LST" "${ROCM_TARGET_LST}" "${T}/gentoo_rocm_target.lst" || fail=1
	expect "target list" "$(cat "${ROCM_TARGET_LST}")" $'gfx90a\ngfx1100' || fail=1
	expect "CC CXX" "${CC} ${CXX}" "hipcc hipcc" || fail=1
	expect "exported" "$(declare -p CC CXX ROCM_TARGET_LST CXXFLAGS | cut -d' ' -f2 | tr '\n' ' ')" "-x -x -x -x " || fail=1
	expect "CXXFLAGS" "${CXXFLAGS}" "-O2 -pipe" || fail=1
	grep -qx strip-unsupported-flags "${STUB_LOG}" || { tdiag "strip-unsupported-flags not called"; fail=1; }
	exit "${fail}"
)
tend ${?}

tbegin "rocm_use_hipcc without targets writes gfx000"
(
	ROCM_VERSION=6.2.2
	inherit rocm
	rocm_use_hipcc
	expect "target list" "$(cat "${ROCM_TARGET_LST}")" gfx000
)
tend ${?}

# fake_llvm <root> <slot>: an LLVM slot with clang under <root>.
fake_llvm() {
	local bin=${1}/usr/lib/llvm/${2}/bin
	mkdir -p "${bin}"
	local tool
	for tool in clang clang++ "${CHOST}-clang" "${CHOST}-clang++"; do
		printf '#!/bin/sh\nexit 0\n' > "${bin}/${tool}"
		chmod +x "${bin}/${tool}"
	done
}

ROOT_LLVM=${tmpdir}/llvm-root
fake_llvm "${ROOT_LLVM}" 18
fake_llvm "${ROOT_LLVM}" 19
ROCM_FLAGS="--rocm-path=/usr --rocm-device-lib-path=/usr/lib/amdgcn/bitcode"

tbegin "rocm_use_clang with LLVM_SLOT from llvm-r2 where hip is not installed"
(
	ROCM_VERSION=6.3.0
	inherit rocm
	[[ -z $(type -t hipconfig) ]] || { tdiag "hipconfig is installed here"; exit 1; }
	BROOT=${ROOT_LLVM} LLVM_SLOT=19
	rocm_use_clang
	bin=${ROOT_LLVM}/usr/lib/llvm/19/bin
	fail=0
	expect "CC" "${CC}" "${bin}/${CHOST}-clang" || fail=1
	expect "CXX" "${CXX}" "${bin}/${CHOST}-clang++" || fail=1
	expect "HIPCXX" "${HIPCXX}" "${bin}/${CHOST}-clang++" || fail=1
	expect "HIPFLAGS" "${HIPFLAGS}" "${ROCM_FLAGS}" || fail=1
	expect "ROCM_PATH" "${ROCM_PATH}" "/usr" || fail=1
	expect "HIP_DEVICE_LIB_PATH" "${HIP_DEVICE_LIB_PATH}" "/usr/lib/amdgcn/bitcode" || fail=1
	expect "exported" "$(declare -p CC CXX HIPCXX HIPFLAGS ROCM_PATH HIP_DEVICE_LIB_PATH | cut -d' ' -f2 | tr '\n' ' ')" "-x -x -x -x -x -x " || fail=1
	grep -qx strip-unsupported-flags "${STUB_LOG}" || { tdiag "strip-unsupported-flags not called"; fail=1; }
	exit "${fail}"
)
tend ${?}

# As ::gentoo's eclass: hip's clang, whatever LLVM slot the consumer's
# llvm-r2 picked.
tbegin "rocm_use_clang prefers hip's clang to LLVM_SLOT's"
(
	ROCM_VERSION=6.3
	inherit rocm
	hipconfig() {
		[[ ${1} == --hipclangpath ]] || return 1
		echo "${ROOT_LLVM}/usr/lib/llvm/18/bin"
	}
	BROOT=${ROOT_LLVM} LLVM_SLOT=19
	rocm_use_clang
	expect "CC" "${CC}" "${ROOT_LLVM}/usr/lib/llvm/18/bin/${CHOST}-clang" &&
	expect "CXX" "${CXX}" "${ROOT_LLVM}/usr/lib/llvm/18/bin/${CHOST}-clang++"
)
tend ${?}

tbegin "rocm_use_clang with hip's LLVM slot, EPREFIX and HIPFLAGS, twice"
(
	ROCM_VERSION=6.2.2
	inherit rocm
	hipconfig() {
		[[ ${1} == --hipclangpath ]] || return 1
		echo "${ROOT_LLVM}/usr/lib/llvm/18/bin"
	}
	EPREFIX=/gentoo
	HIPFLAGS="-O3"
	rocm_use_clang
	rocm_use_clang
	expect "CXX" "${CXX}" "${ROOT_LLVM}/usr/lib/llvm/18/bin/${CHOST}-clang++" &&
	expect "HIPCXX" "${HIPCXX}" "${CXX}" &&
	expect "HIPFLAGS" "${HIPFLAGS}" "-O3 --rocm-path=/gentoo/usr --rocm-device-lib-path=/gentoo/usr/lib/amdgcn/bitcode" &&
	expect "HIP_DEVICE_LIB_PATH" "${HIP_DEVICE_LIB_PATH}" "/gentoo/usr/lib/amdgcn/bitcode"
)
tend ${?}

clang_without_hipconfig() {
	ROCM_VERSION=6.2.2
	inherit rocm
	hipconfig() { return 1; }
	rocm_use_clang
}
test_dies "rocm_use_clang when hipconfig fails" "'hipconfig --hipclangpath' failed; add dev-util/hip to BDEPEND" clang_without_hipconfig

# An installed hip that fails is not bypassed for LLVM_SLOT.
clang_broken_hipconfig() {
	ROCM_VERSION=6.2.2
	inherit rocm
	hipconfig() { return 1; }
	BROOT=${ROOT_LLVM} LLVM_SLOT=19
	rocm_use_clang
}
test_dies "rocm_use_clang when hipconfig fails and LLVM_SLOT is set" "'hipconfig --hipclangpath' failed" clang_broken_hipconfig

clang_missing() {
	ROCM_VERSION=6.2.2
	inherit rocm
	BROOT=${ROOT_LLVM} LLVM_SLOT=20
	rocm_use_clang
}
test_dies "rocm_use_clang without clang in the slot" \
	"${ROOT_LLVM}/usr/lib/llvm/20/bin/${CHOST}-clang++ is missing; add llvm-core/clang:20 to BDEPEND" clang_missing

# == sandbox ==

# test_sandbox "<args>" <expected log>
test_sandbox() {
	tbegin "rocm_add_sandbox ${1}"
	(
		ROCM_SKIP_GLOBALS=1
		inherit rocm
		_ROCM_DEVICE_ROOT=${3}
		# shellcheck disable=SC2086 # the arguments are words
		rocm_add_sandbox ${1}
		expect "calls" "$(stub_log)" "${2}"
	)
	tend ${?}
}
test_sandbox "" $'addpredict /dev/kfd\naddpredict /dev/dri'
test_sandbox "-w" $'addwrite /dev/kfd\naddwrite /dev/dri'
test_sandbox "-w" $'addwrite /fake/dev/kfd\naddwrite /fake/dev/dri' /fake

sandbox_bad() {
	ROCM_SKIP_GLOBALS=1
	inherit rocm
	rocm_add_sandbox "${@}"
}
test_dies "rocm_add_sandbox -x" "Usage: rocm_add_sandbox [-w]" sandbox_bad -x
test_dies "rocm_add_sandbox -w -w" "Usage: rocm_add_sandbox [-w]" sandbox_bad -w -w

# == check_amdgpu against fake device trees ==

# make_tree <root> <node>...: a fake /dev and KFD topology under <root>.
# A node is "cpu" or "gpu:<render minor>:<gfx_target_version>:<unique_id>";
# /dev/kfd and the render nodes of the GPUs are created as plain files.
make_tree() {
	local root=${1} n=0 node minor version uid dir
	shift
	rm -rf "${root}"
	mkdir -p "${root}/dev/dri" "${root}/sys/class/kfd/kfd/topology/nodes"
	: > "${root}/dev/kfd"
	for node in "${@}"; do
		dir=${root}/sys/class/kfd/kfd/topology/nodes/${n}
		mkdir -p "${dir}"
		if [[ ${node} == cpu ]]; then
			printf '%s\n' "cpu_cores_count 16" "simd_count 0" "gfx_target_version 0" \
				"vendor_id 0" "drm_render_minor 0" "unique_id 0" > "${dir}/properties"
		else
			IFS=: read -r _ minor version uid <<<"${node}"
			printf '%s\n' "cpu_cores_count 0" "simd_count 240" "gfx_target_version ${version}" \
				"vendor_id 4098" "drm_render_minor ${minor}" "unique_id ${uid}" > "${dir}/properties"
			: > "${root}/dev/dri/renderD${minor}"
		fi
		n=$(( n + 1 ))
	done
	chmod -R a+rX "${root}"
}

TREE=${tmpdir}/tree
UID_0=9876543210
UID_1=17361046040366211507  # above 2^63: f0eed364153ae1b3
GPU_0="gpu:128:100300:${UID_0}"   # gfx1030
GPU_1="gpu:129:90010:${UID_1}"    # gfx90a

# test_check <description> <USE> <expected addwrite calls> <expected warnings>
# The caller sets up ${TREE} and the environment (exported variables).
test_check() {
	local what=${1} use=${2} writes=${3} warnings=${4}
	tbegin "check_amdgpu: ${what}"
	(
		ROCM_VERSION=6.2.2
		inherit rocm
		_ROCM_DEVICE_ROOT=${TREE}
		USE=${use}
		check_amdgpu
		expect "addwrite calls" "$(grep '^addwrite' "${STUB_LOG}")" "${writes}" &&
		expect "warnings" "$(grep '^ewarn' "${STUB_LOG}")" "${warnings}"
	) 2>/dev/null
	tend ${?}
}

BOTH="amdgpu_targets_gfx1030 amdgpu_targets_gfx90a"
W_KFD="addwrite ${TREE}/dev/kfd"
W_128="addwrite ${TREE}/dev/dri/renderD128"
W_129="addwrite ${TREE}/dev/dri/renderD129"

make_tree "${TREE}" cpu "${GPU_0}" "${GPU_1}"
test_check "two GPUs" "${BOTH}" "${W_KFD}"$'\n'"${W_128}"$'\n'"${W_129}" ""
HIP_VISIBLE_DEVICES=1 test_check "HIP_VISIBLE_DEVICES=1" "${BOTH}" "${W_KFD}"$'\n'"${W_129}" ""
ROCR_VISIBLE_DEVICES=GPU-F0EED364153AE1B3 test_check "ROCR_VISIBLE_DEVICES by UUID" "${BOTH}" "${W_KFD}"$'\n'"${W_129}" ""
ROCR_VISIBLE_DEVICES=1,0 HIP_VISIBLE_DEVICES=1 test_check "HIP_VISIBLE_DEVICES among ROCR_VISIBLE_DEVICES" \
	"${BOTH}" "${W_KFD}"$'\n'"${W_128}" ""
test_check "a GPU whose target is not enabled" "amdgpu_targets_gfx90a" "${W_KFD}"$'\n'"${W_128}"$'\n'"${W_129}" \
	"ewarn: ${TREE}/dev/dri/renderD128 is a gfx1030 GPU, but dev-eclass/tests is not built for gfx1030:"$'\n'"ewarn: its tests will fail there.  Enable AMDGPU_TARGETS=\"gfx1030\" if the package"$'\n'"ewarn: offers it, or choose another GPU with HIP_VISIBLE_DEVICES."
HSA_OVERRIDE_GFX_VERSION=9.0.10 test_check "HSA_OVERRIDE_GFX_VERSION=9.0.10 on gfx1030" "amdgpu_targets_gfx90a" \
	"${W_KFD}"$'\n'"${W_128}"$'\n'"${W_129}" ""

tbegin "check_amdgpu: a subset library lacking the GPU's target warns"
(
	ROCM_VERSION=6.2.2
	ROCM_SUPPORTED_TARGETS=( gfx90a gfx942 )
	inherit rocm
	_ROCM_DEVICE_ROOT=${TREE}
	USE="amdgpu_targets_gfx90a"
	HIP_VISIBLE_DEVICES=0
	check_amdgpu
	expect "first warning" "$(grep -m1 '^ewarn' "${STUB_LOG}")" \
		"ewarn: ${TREE}/dev/dri/renderD128 is a gfx1030 GPU, but dev-eclass/tests is not built for gfx1030:"
) 2>/dev/null
tend ${?}

tbegin "check_amdgpu: no warnings without amdgpu_targets flags (ROCM_SKIP_GLOBALS)"
(
	ROCM_SKIP_GLOBALS=1
	inherit rocm
	_ROCM_DEVICE_ROOT=${TREE}
	check_amdgpu
	expect "warnings" "$(grep '^ewarn' "${STUB_LOG}")" "" &&
	expect "addwrite calls" "$(grep -c '^addwrite' "${STUB_LOG}")" 3
) 2>/dev/null
tend ${?}

make_tree "${TREE}" cpu "gpu:128:100399:1"
test_check "a GPU the table does not know" "${BOTH}" "${W_KFD}"$'\n'"${W_128}" \
	"ewarn: ${TREE}/dev/dri/renderD128: the GPU's gfx_target_version 100399 is unknown to rocm.eclass."

# check_dies <description> <expected message part>: check_amdgpu on ${TREE}
check_in_tree() {
	ROCM_VERSION=6.2.2
	inherit rocm
	_ROCM_DEVICE_ROOT=${TREE}
	USE=${BOTH}
	check_amdgpu
}

make_tree "${TREE}" cpu "${GPU_0}" "${GPU_1}"
HIP_VISIBLE_DEVICES=2 test_dies "check_amdgpu with HIP_VISIBLE_DEVICES=2 of 2 GPUs" \
	"HIP_VISIBLE_DEVICES=2 names GPU 2, but only 2 GPU(s) are visible (numbered from 0); fix HIP_VISIBLE_DEVICES" check_in_tree
ROCR_VISIBLE_DEVICES=1 HIP_VISIBLE_DEVICES=1 test_dies "check_amdgpu with HIP_VISIBLE_DEVICES=1 of ROCR_VISIBLE_DEVICES=1" \
	"names GPU 1, but only 1 GPU(s) are visible" check_in_tree
ROCR_VISIBLE_DEVICES=GPU-0123 test_dies "check_amdgpu with an unknown UUID" \
	"ROCR_VISIBLE_DEVICES=GPU-0123: no visible GPU has the UUID GPU-0123; list the UUIDs with rocminfo" check_in_tree
HIP_VISIBLE_DEVICES=first test_dies "check_amdgpu with HIP_VISIBLE_DEVICES=first" \
	"'first' is neither a GPU ordinal nor a GPU-<id> UUID" check_in_tree

rm "${TREE}/dev/kfd"
test_dies "check_amdgpu without /dev/kfd" "check_amdgpu: ${TREE}/dev/kfd is missing; see the messages above" check_in_tree
tbegin "check_amdgpu without /dev/kfd explains CONFIG_HSA_AMD"
(check_in_tree) 2>/dev/null
grep -q '^eerror: Enable CONFIG_HSA_AMD' "${STUB_LOG}"
tend ${?}

make_tree "${TREE}" cpu "${GPU_0}" "${GPU_1}"
rm "${TREE}/dev/dri/renderD129"
test_dies "check_amdgpu when a GPU's render node is missing" \
	"check_amdgpu: ${TREE}/dev/dri/renderD129 is missing" check_in_tree
tbegin "check_amdgpu when a GPU's render node is missing names the --device to pass"
(check_in_tree) 2>/dev/null
grep -qF 'eerror: In a container, pass it with --device /dev/dri/renderD129.' "${STUB_LOG}"
tend ${?}

make_tree "${TREE}" cpu
test_dies "check_amdgpu without any GPU" "check_amdgpu: no GPU to run the tests on" check_in_tree

# Without a KFD topology every render node is checked.
make_tree "${TREE}"
rm -r "${TREE}/sys"
: > "${TREE}/dev/dri/renderD128"
: > "${TREE}/dev/dri/renderD130"
test_check "without a KFD topology" "${BOTH}" "${W_KFD}"$'\n'"${W_128}"$'\n'"addwrite ${TREE}/dev/dri/renderD130" ""
HIP_VISIBLE_DEVICES=0 test_check "without a KFD topology, HIP_VISIBLE_DEVICES is ignored" "${BOTH}" \
	"${W_KFD}"$'\n'"${W_128}"$'\n'"addwrite ${TREE}/dev/dri/renderD130" \
	"ewarn: No KFD topology under ${TREE}/sys/class/kfd/kfd/topology/nodes: ignoring ROCR_VISIBLE_DEVICES"$'\n'"ewarn: and HIP_VISIBLE_DEVICES, checking every render node."

# A render node the build user cannot open.  Root can open anything, so
# as root the check runs as nobody.
make_tree "${TREE}" cpu "${GPU_0}"
chmod 0666 "${TREE}/dev/kfd"
chmod 0600 "${TREE}/dev/dri/renderD128"
tbegin "check_amdgpu on a render node the build user cannot read and write"
if [[ ${EUID} -ne 0 ]]; then
	chmod 0000 "${TREE}/dev/dri/renderD128"
	out=$( (ROCM_SKIP_GLOBALS=1; inherit rocm; _ROCM_DEVICE_ROOT=${TREE}; check_amdgpu) 2>&1 )
	status=${?}
elif command -v setpriv >/dev/null; then
	# nobody may not be able to read this checkout (a clone in a private
	# temporary directory): run copies from the world-readable ${tmpdir}.
	suite=${tmpdir}/suite
	mkdir -p "${suite}/test/eclass" "${suite}/eclass" &&
		cp "${TESTS_DIR}"/*.sh "${suite}/test/eclass/" &&
		cp "${TESTS_ECLASS_SEARCH_PATHS[0]}/rocm.eclass" "${suite}/eclass/" &&
		chmod -R a+rX "${suite}" || exit 1
	out=$(cd / && setpriv --reuid=65534 --regid=65534 --clear-groups \
		bash "${suite}/test/eclass/rocm.sh" --check-amdgpu "${TREE}" 2>&1)
	status=${?}
else
	out="die: check_amdgpu: cannot read and write (skipped: root without setpriv)"
	status=1
fi
if [[ ${status} -eq 0 ]]; then
	tend 1 "check_amdgpu did not die"
elif [[ ${out} != *"Add the portage user to the render and video groups:"*"usermod -a -G render,video portage"*"die: check_amdgpu: cannot read and write ${TREE}/dev/dri/renderD128"* ]]; then
	tdiag "output: ${out}"
	tend 1
else
	tend 0
fi

usage_check() {
	ROCM_SKIP_GLOBALS=1
	inherit rocm
	check_amdgpu now
}
test_dies "check_amdgpu with an argument" "Usage: check_amdgpu" usage_check

texit
