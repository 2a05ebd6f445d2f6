# Copyright 2022-2026 Gentoo Authors
# Distributed under the terms of the GNU General Public License v2

# @ECLASS: rocm.eclass
# @MAINTAINER:
# Gentoo Science Project <sci@gentoo.org>
# @AUTHOR:
# Yiyang Wu <xgreenlandforwyy@gmail.com> (original ::gentoo eclass)
# @SUPPORTED_EAPIS: 8
# @BLURB: AMDGPU targets, HIP compilers and GPU test access for ROCm packages
# @DESCRIPTION:
# Packages of the ROCm stack (dev-libs/rocm-*, sci-libs/roc* and hip*) and
# packages that build HIP code on top of them use this eclass to:
#
# - offer the GPU architectures of a ROCm release as amdgpu_targets_*
#   USE flags (the AMDGPU_TARGETS USE_EXPAND), chosen by ROCM_VERSION from
#   a per-release target table, optionally narrowed by
#   ROCM_SUPPORTED_TARGETS;
#
# - keep those targets coherent across dependencies with ROCM_USEDEP and
#   require at least one of them with ROCM_REQUIRED_USE;
#
# - pass the enabled targets to the build system with get_amdgpu_flags;
#
# - compile with hipcc (rocm_use_hipcc) or with the vanilla clang of the
#   LLVM slot hip was built with (rocm_use_clang), including what CMake's
#   HIP language needs;
#
# - reach the GPU: check_amdgpu in src_test, rocm_add_sandbox for builds
#   whose configure step probes the GPU.
#
# The eclass is a drop-in replacement for the rocm.eclass of ::gentoo:
# every ebuild of ::gentoo that inherits rocm gets the same IUSE,
# ROCM_REQUIRED_USE and ROCM_USEDEP, or more targets where the table
# knows more, never fewer, and the functions ::gentoo's ebuilds call
# behave the same (get_amdgpu_flags without arguments, rocm_use_hipcc,
# rocm_use_clang with hip's clang, rocm_add_sandbox [-w], check_amdgpu).
# How ROCM_VERSION is read (X.Y as a release line, 9999, versions the
# table does not hold) is described there.  The target table is
# generated from data (manifest/targets.yaml of rocm-ebuild) by
# "rocm-ebuild eclass".
#
# src_configure should not access the GPU: a build system that probes it
# usually ignores the targets it is given.  Pass the targets explicitly
# (get_amdgpu_flags) and, where that is not possible, use rocm_add_sandbox.
# @EXAMPLE:
# A ROCm library built with CMake that supports only some targets, depends
# on rocBLAS built for the same targets and runs its tests on the GPU:
#
# @CODE
# ROCM_VERSION=${PV}
# ROCM_SUPPORTED_TARGETS=( gfx908 gfx90a gfx942 gfx1100 gfx1101 gfx1200 gfx1201 )
# inherit cmake rocm
#
# DESCRIPTION="Example ROCm library"
# SLOT="0/$(ver_cut 1-2)"
# IUSE="test"
# REQUIRED_USE="${ROCM_REQUIRED_USE}"
# RESTRICT="!test? ( test )"
#
# RDEPEND="
# 	dev-util/hip:${SLOT}
# 	sci-libs/rocBLAS:${SLOT}[${ROCM_USEDEP}]
# "
# DEPEND="${RDEPEND}"
#
# src_configure() {
# 	rocm_use_hipcc
# 	local mycmakeargs=(
# 		-DAMDGPU_TARGETS="$(get_amdgpu_flags)"
# 		-DBUILD_CLIENTS_TESTS=$(usex test ON OFF)
# 	)
# 	cmake_src_configure
# }
#
# src_test() {
# 	check_amdgpu
# 	cmake_src_test
# }
# @CODE
#
# A package outside the stack with optional ROCm support, whose CMake
# project uses the HIP language (project(foo LANGUAGES CXX HIP)):
#
# @CODE
# ROCM_VERSION=6.2
# inherit cmake rocm
#
# IUSE="rocm"
# REQUIRED_USE="rocm? ( ${ROCM_REQUIRED_USE} )"
# RDEPEND="
# 	rocm? (
# 		>=dev-util/hip-${ROCM_VERSION}:=
# 		>=sci-libs/hipBLAS-${ROCM_VERSION}:=[${ROCM_USEDEP}]
# 	)
# "
#
# src_configure() {
# 	local mycmakeargs=( -DFOO_HIP=$(usex rocm) )
# 	if use rocm; then
# 		rocm_use_clang
# 		mycmakeargs+=(
# 			-DCMAKE_HIP_ARCHITECTURES="$(get_amdgpu_flags ";")"
# 		)
# 	fi
# 	cmake_src_configure
# }
# @CODE

if [[ -z ${_ROCM_ECLASS} ]]; then
_ROCM_ECLASS=1

case ${EAPI} in
	8) ;;
	*) die "${ECLASS}: EAPI ${EAPI:-0} not supported, port the ebuild to EAPI 8" ;;
esac

inherit flag-o-matic

# @ECLASS_VARIABLE: ROCM_VERSION
# @PRE_INHERIT
# @REQUIRED
# @DESCRIPTION:
# The ROCm release whose target policy applies: ${PV} for packages of the
# ROCm stack, the oldest ROCm release a consumer supports otherwise.
# Not needed with ROCM_SKIP_GLOBALS.
#
# - X.Y.Z (ROCm's own packages): the targets of that release's series.
#
# - X.Y (consumers, e.g. ROCM_VERSION=6.1): a release line, every release
#   from X.Y.0 on that continues it without a gap in the table (6.1 to
#   6.4.x; 7.0 to 7.2, as AMD released no 7.3 to 7.8).  The package is
#   offered every target of those releases, and enabled by default are
#   the defaults of the newest: what ::gentoo's eclass gives "6.1" (its
#   6.x lists).
#
# - 9999 (live ebuilds): the line of the table's live series, read as its
#   X.Y: the 7.x lists, as ::gentoo's eclass gives 9999.
#
# Gentoo version suffixes such as _rc1 or _p2 are ignored.  A version no
# series holds (newer than the table, between two series, or of a major
# version the table does not know yet) uses the newest series that starts
# before it, one older than every series the oldest, both with a QA
# notice.
#
# The targets come from ROCM_VERSION alone, since metadata cannot depend
# on what is installed.  A consumer older than the installed stack keeps
# its line's targets: those the installed libraries lack cannot be
# enabled (ROCM_USEDEP's "(-)" makes the dependency unsatisfied, and emerge
# says so), and targets added by the newer stack (gfx950 in 7.0) are
# offered once ROCM_VERSION moves to it.
#
# @CODE
# ROCM_VERSION=${PV}
# @CODE

# @ECLASS_VARIABLE: ROCM_SKIP_GLOBALS
# @PRE_INHERIT
# @DEFAULT_UNSET
# @DESCRIPTION:
# If set to a non-empty value, the eclass sets no IUSE, ROCM_REQUIRED_USE
# or ROCM_USEDEP and ROCM_VERSION is not needed; only the functions are
# provided.  For packages that have no amdgpu_targets_* flags of their own
# but use check_amdgpu or the compiler helpers, such as dev-util/hip.
#
# @CODE
# ROCM_SKIP_GLOBALS=1
# inherit rocm
# @CODE

# @ECLASS_VARIABLE: ROCM_SUPPORTED_TARGETS
# @PRE_INHERIT
# @DEFAULT_UNSET
# @DESCRIPTION:
# A bash array of the gfx targets the package can be built for, for
# libraries that support only some of the targets of a release
# (hipBLASLt, rocWMMA, composable_kernel).  IUSE, ROCM_REQUIRED_USE and
# ROCM_USEDEP then hold the intersection of this list with the release's
# policy; a default-on target stays default-on.  Targets the policy does
# not offer are ignored, so the list may name future targets.  It is fatal
# if no target remains.  When unset, every target of the policy is
# offered.
#
# @CODE
# ROCM_SUPPORTED_TARGETS=( gfx90a gfx942 gfx950 gfx1200 gfx1201 )
# @CODE

# @ECLASS_VARIABLE: ROCM_REQUIRED_USE
# @OUTPUT_VARIABLE
# @DESCRIPTION:
# Requires at least one of the package's amdgpu_targets_* flags:
# "|| ( amdgpu_targets_gfx906 ... )".  For ROCm libraries:
# @CODE
# REQUIRED_USE="${ROCM_REQUIRED_USE}"
# @CODE
# For packages with optional ROCm support:
# @CODE
# REQUIRED_USE="rocm? ( ${ROCM_REQUIRED_USE} )"
# @CODE

# @ECLASS_VARIABLE: ROCM_USEDEP
# @OUTPUT_VARIABLE
# @DESCRIPTION:
# A USE dependency that requires a dependency to be built for every
# target enabled in this package: "amdgpu_targets_gfx906(-)?,...".
# A flag the dependency does not have counts as disabled, so a library
# that lacks a target enabled here cannot satisfy the dependency.
# @CODE
# RDEPEND="sci-libs/rocBLAS:${SLOT}[${ROCM_USEDEP}]"
# @CODE

# @ECLASS_VARIABLE: ROCM_USE_DEP
# @OUTPUT_VARIABLE
# @DESCRIPTION:
# The same value as ROCM_USEDEP, under the name the rocm-ebuild manifest
# uses.

# @ECLASS_VARIABLE: ROCM_TARGET_LST
# @OUTPUT_VARIABLE
# @DEFAULT_UNSET
# @DESCRIPTION:
# Exported by rocm_use_hipcc: a file listing the enabled targets, one per
# line ("gfx000" when none is enabled).  hipcc reads it instead of
# probing the GPU when it is called without --offload-arch, as CMake's
# compiler checks do.

# @ECLASS_VARIABLE: ROCM_PATH
# @OUTPUT_VARIABLE
# @DEFAULT_UNSET
# @DESCRIPTION:
# Exported by rocm_use_clang, unless already set: where ROCm is installed,
# ${EPREFIX}/usr on Gentoo.  clang and HIP's CMake configuration read it
# to find the HIP headers and runtime.

# @ECLASS_VARIABLE: HIP_DEVICE_LIB_PATH
# @OUTPUT_VARIABLE
# @DEFAULT_UNSET
# @DESCRIPTION:
# Exported by rocm_use_clang, unless already set: the directory of the
# device-library bitcode (${EPREFIX}/usr/lib/amdgcn/bitcode), which clang
# reads when HIP code is compiled without --rocm-device-lib-path, as
# happens for HIP sources compiled as C++.

# @ECLASS_VARIABLE: _ROCM_DEVICE_ROOT
# @INTERNAL
# @DEFAULT_UNSET
# @DESCRIPTION:
# A directory prefixed to every /dev and /sys path that check_amdgpu and
# rocm_add_sandbox use, so the eclass tests can run against a fake device
# tree without a GPU.  Empty in ebuilds.

# @ECLASS_VARIABLE: _ROCM_POLICY
# @INTERNAL
# @DESCRIPTION:
# The series of _ROCM_POLICIES chosen for ROCM_VERSION; empty with
# ROCM_SKIP_GLOBALS.

# ---- BEGIN GENERATED AMDGPU TARGET TABLE ----
# Written by "rocm-ebuild eclass" from manifest/targets.yaml of rocm-ebuild:
# edit that file and regenerate this section instead of editing it.

# @ECLASS_VARIABLE: _ROCM_ALL_TARGETS
# @INTERNAL
# @DESCRIPTION:
# Every AMDGPU target the table knows, ordered by gfx_target_version.
# Generated lists and get_amdgpu_flags follow this order.
_ROCM_ALL_TARGETS=(
	gfx803 gfx900 gfx906 gfx908 gfx90a gfx90c gfx940 gfx941 gfx942 gfx950
	gfx1010 gfx1011 gfx1012 gfx1030 gfx1031 gfx1032 gfx1033 gfx1034 gfx1035
	gfx1036 gfx1100 gfx1101 gfx1102 gfx1103 gfx1150 gfx1151 gfx1152 gfx1153
	gfx1200 gfx1201 gfx1250
)

# @ECLASS_VARIABLE: _ROCM_KFD_TARGETS
# @INTERNAL
# @DESCRIPTION:
# The gfx target of each gfx_target_version, as the kernel's KFD topology
# reports it (/sys/class/kfd/kfd/topology/nodes/<n>/properties).
_ROCM_KFD_TARGETS=(
	[80003]=gfx803 [90000]=gfx900 [90006]=gfx906 [90008]=gfx908 [90010]=gfx90a
	[90012]=gfx90c [90400]=gfx940 [90401]=gfx941 [90402]=gfx942 [90500]=gfx950
	[100100]=gfx1010 [100101]=gfx1011 [100102]=gfx1012 [100300]=gfx1030
	[100301]=gfx1031 [100302]=gfx1032 [100303]=gfx1033 [100304]=gfx1034
	[100305]=gfx1035 [100306]=gfx1036 [110000]=gfx1100 [110001]=gfx1101
	[110002]=gfx1102 [110003]=gfx1103 [110500]=gfx1150 [110501]=gfx1151
	[110502]=gfx1152 [110503]=gfx1153 [120000]=gfx1200 [120001]=gfx1201
	[120500]=gfx1250
)

# @ECLASS_VARIABLE: _ROCM_POLICIES
# @INTERNAL
# @DESCRIPTION:
# The target policy of each ROCm release series, oldest first.  The first
# line of an entry is "<series> <from> <until>": the policy applies from
# version <from> (inclusive) until <until> (exclusive).  The other words
# are its targets, "+" marking those enabled by default.
_ROCM_POLICIES=(
	"5.7 5.7.0 5.8.0
		gfx803 gfx900 +gfx906 +gfx908 +gfx90a gfx1010 gfx1011 gfx1012 +gfx1030
		gfx1031 gfx1100 gfx1101 gfx1102"
	"6.0 6.0.0 6.1.0
		gfx803 gfx900 +gfx906 +gfx908 +gfx90a gfx940 gfx941 +gfx942 gfx1010
		gfx1011 gfx1012 +gfx1030 gfx1031 +gfx1100 gfx1101 gfx1102"
	"6.1 6.1.0 6.2.0
		gfx803 gfx900 +gfx906 +gfx908 +gfx90a gfx940 gfx941 +gfx942 gfx1010
		gfx1011 gfx1012 +gfx1030 gfx1031 +gfx1100 gfx1101 gfx1102"
	"6.2 6.2.0 6.3.0
		gfx803 gfx900 +gfx906 +gfx908 +gfx90a gfx940 gfx941 +gfx942 gfx1010
		gfx1011 gfx1012 +gfx1030 gfx1031 +gfx1100 gfx1101 gfx1102"
	"6.3 6.3.0 6.4.0
		gfx803 gfx900 +gfx906 +gfx908 +gfx90a gfx940 gfx941 +gfx942 gfx1010
		gfx1011 gfx1012 +gfx1030 gfx1031 +gfx1100 gfx1101 gfx1102"
	"6.4.0-6.4.2 6.4.0 6.4.3
		gfx803 gfx900 gfx906 +gfx908 +gfx90a gfx940 gfx941 +gfx942 gfx1010
		gfx1011 gfx1012 +gfx1030 gfx1031 +gfx1100 gfx1101 gfx1102 gfx1200
		gfx1201"
	"6.4.3+ 6.4.3 6.5.0
		gfx803 gfx900 gfx906 +gfx908 +gfx90a gfx940 gfx941 +gfx942 gfx1010
		gfx1011 gfx1012 +gfx1030 gfx1031 +gfx1100 +gfx1101 gfx1102 gfx1103
		gfx1150 gfx1151 +gfx1200 +gfx1201"
	"7.0-7.2 7.0.0 7.3.0
		gfx803 gfx900 gfx906 +gfx908 +gfx90a gfx940 gfx941 +gfx942 +gfx950
		gfx1010 gfx1011 gfx1012 +gfx1030 gfx1031 +gfx1100 +gfx1101 gfx1102
		gfx1103 gfx1150 gfx1151 +gfx1200 +gfx1201"
	"7.9-7.14 7.9.0 8.0.0
		gfx900 gfx906 +gfx908 +gfx90a +gfx942 +gfx950 gfx1010 gfx1011 gfx1012
		+gfx1030 gfx1031 gfx1032 gfx1033 gfx1034 gfx1035 gfx1036 +gfx1100
		+gfx1101 gfx1102 gfx1103 gfx1150 gfx1151 gfx1152 gfx1153 +gfx1200
		+gfx1201"
	"10.0+ 10.0.0 11.0.0
		gfx900 gfx906 +gfx908 +gfx90a +gfx942 +gfx950 gfx1010 gfx1011 gfx1012
		+gfx1030 gfx1031 gfx1032 gfx1033 gfx1034 gfx1035 gfx1036 +gfx1100
		+gfx1101 +gfx1102 gfx1103 +gfx1150 +gfx1151 +gfx1152 gfx1153 +gfx1200
		+gfx1201"
)

# @ECLASS_VARIABLE: _ROCM_LIVE_POLICY
# @INTERNAL
# @DESCRIPTION:
# The series whose policy ROCM_VERSION=9999 uses.
_ROCM_LIVE_POLICY=7.0-7.2
# ---- END GENERATED AMDGPU TARGET TABLE ----

# @FUNCTION: _rocm_select_policy
# @USAGE: <version>
# @INTERNAL
# @DESCRIPTION:
# Set _ROCM_POLICY to the series of _ROCM_POLICIES whose targets apply to
# ROCm <version>, following the rules described for ROCM_VERSION.  Dies
# only on a malformed version.
_rocm_select_policy() {
	debug-print-function "${FUNCNAME[0]}" "$@"

	local version=${1} entry series from until
	if [[ ${version} == 9999 ]]; then
		# Live ebuilds: the release line of the live series, read as X.Y.
		for entry in "${_ROCM_POLICIES[@]}"; do
			read -r series from until <<<"${entry}"
			[[ ${series} == "${_ROCM_LIVE_POLICY}" ]] && break
		done
		version=${from%.*}
	fi

	# A glob, not =~: this runs while the eclass is sourced, and =~ would
	# leave BASH_REMATCH behind as an undocumented global.
	if [[ ${version} != +([0-9]).+([0-9])?(.+([0-9]))*(_@(alpha|beta|pre|rc|p)*([0-9])) ]]; then
		die "${ECLASS}: ROCM_VERSION=${version} is not a ROCm version; set it to X.Y, X.Y.Z or 9999 (ROCM_VERSION=\${PV} in ROCm packages) before inheriting ${ECLASS}"
	fi
	local major minor patch
	IFS=. read -r major minor patch <<<"${version%%_*}"
	local wanted=$(( 10#${major:-0} )).$(( 10#${minor:-0} )).$(( 10#${patch:-0} ))

	# The series are ordered and do not overlap: the last one starting
	# at or before the version is the nearest older one.
	local holder before oldest
	for entry in "${_ROCM_POLICIES[@]}"; do
		read -r series from until <<<"${entry}"
		[[ -z ${oldest} ]] && oldest=${series}
		ver_test "${wanted}" -ge "${from}" || continue
		if ver_test "${wanted}" -lt "${until}"; then
			holder=${series}
			break
		fi
		before=${series}
	done

	local notice
	if [[ -n ${holder} ]]; then
		_ROCM_POLICY=${holder}
	elif [[ -n ${before} ]]; then
		_ROCM_POLICY=${before}
		notice="ROCM_VERSION=${version} is newer than the AMDGPU target table of rocm.eclass; using the targets of ROCm ${before}"
	else
		_ROCM_POLICY=${oldest}
		notice="ROCM_VERSION=${version} is older than the AMDGPU target table of rocm.eclass; using the targets of ROCm ${oldest}"
	fi

	# X.Y (and 9999) names a release line, not one release: every series
	# that continues the chosen one without a gap joins it.
	if [[ -z ${patch} ]]; then
		local end='' joined=''
		for entry in "${_ROCM_POLICIES[@]}"; do
			read -r series from until <<<"${entry}"
			if [[ ${series} == "${_ROCM_POLICY}" ]]; then
				end=${until}
			elif [[ -n ${end} ]] && ver_test "${from}" -eq "${end}"; then
				_ROCM_POLICY+=" ${series}"
				end=${until} joined=1
			fi
		done
		[[ -n ${notice} && -n ${joined} ]] && notice+=" and the releases after it"
	fi

	# Stay quiet while metadata is generated; the notice is for builds.
	if [[ -n ${notice} && ${EBUILD_PHASE} != depend ]]; then
		eqawarn "${notice}."
		eqawarn "Add the release to manifest/targets.yaml of rocm-ebuild and regenerate the table with 'rocm-ebuild eclass'."
	fi
}

# @FUNCTION: _rocm_set_globals
# @INTERNAL
# @DESCRIPTION:
# Set IUSE, ROCM_REQUIRED_USE, ROCM_USEDEP and ROCM_USE_DEP from the
# policy of ROCM_VERSION, narrowed by ROCM_SUPPORTED_TARGETS, unless
# ROCM_SKIP_GLOBALS is set.
_rocm_set_globals() {
	debug-print-function "${FUNCNAME[0]}"

	_ROCM_POLICY=
	[[ -n ${ROCM_SKIP_GLOBALS} ]] && return

	if [[ -z ${ROCM_VERSION} ]]; then
		die "${ECLASS}: set ROCM_VERSION before inheriting ${ECLASS} (ROCM_VERSION=\${PV} in ROCm packages, the oldest supported ROCm release in consumers), or set ROCM_SKIP_GLOBALS=1 in packages without amdgpu_targets_* flags"
	fi

	local filter target
	if [[ ${ROCM_SUPPORTED_TARGETS@a} == *a* ]]; then
		filter=1
		for target in "${ROCM_SUPPORTED_TARGETS[@]}"; do
			if [[ ${target} != gfx[0-9]?([0-9])[0-9a-f][0-9a-f] ]]; then
				die "${ECLASS}: ROCM_SUPPORTED_TARGETS: '${target}' is not a gfx target name; write names such as gfx90a or gfx1100, without feature suffixes such as :xnack-"
			fi
		done
	elif [[ -n ${ROCM_SUPPORTED_TARGETS} ]]; then
		die "${ECLASS}: ROCM_SUPPORTED_TARGETS must be a bash array: ROCM_SUPPORTED_TARGETS=( ${ROCM_SUPPORTED_TARGETS} )"
	fi

	_rocm_select_policy "${ROCM_VERSION}"

	# Every series of the policy offers its targets; the last one says
	# which are enabled by default.  Words of an entry: series, from,
	# until, then the targets ("+" = default-on).
	local entry word offered=' ' defaults=' '
	local -a series=() words=()
	read -r -a series <<<"${_ROCM_POLICY}"
	for entry in "${_ROCM_POLICIES[@]}"; do
		has "${entry%% *}" "${series[@]}" || continue
		read -r -d '' -a words <<<"${entry}"
		defaults=' '
		for word in "${words[@]:3}"; do
			offered+="${word#+} "
			[[ ${word} == +* ]] && defaults+="${word#+} "
		done
	done

	local -a iuse=() targets=()
	for target in "${_ROCM_ALL_TARGETS[@]}"; do
		[[ ${offered} == *" ${target} "* ]] || continue
		if [[ -n ${filter} ]] && ! has "${target}" "${ROCM_SUPPORTED_TARGETS[@]}"; then
			continue
		fi
		if [[ ${defaults} == *" ${target} "* ]]; then
			iuse+=( "+amdgpu_targets_${target}" )
		else
			iuse+=( "amdgpu_targets_${target}" )
		fi
		targets+=( "${target}" )
	done
	if [[ ${#targets[@]} -eq 0 ]]; then
		die "${ECLASS}: none of ROCM_SUPPORTED_TARGETS (${ROCM_SUPPORTED_TARGETS[*]}) is offered for ROCm ${ROCM_VERSION} (series ${_ROCM_POLICY}:${offered% }); fix ROCM_SUPPORTED_TARGETS or ROCM_VERSION"
	fi

	# The package manager and ebuilds read these.
	# shellcheck disable=SC2034
	IUSE=${iuse[*]}
	local -a flags=( "${targets[@]/#/amdgpu_targets_}" )
	# shellcheck disable=SC2034
	ROCM_REQUIRED_USE="|| ( ${flags[*]} )"
	local usedep=${flags[*]/%/(-)?}
	ROCM_USEDEP=${usedep// /,}
	# shellcheck disable=SC2034
	ROCM_USE_DEP=${ROCM_USEDEP}
}
_rocm_set_globals
unset -f _rocm_set_globals _rocm_select_policy

# @FUNCTION: _rocm_enabled_targets
# @INTERNAL
# @DESCRIPTION:
# Print the enabled targets, separated by spaces: every target whose
# amdgpu_targets_* flag is in IUSE and enabled, in the order of
# _ROCM_ALL_TARGETS, then those the table does not know in the order of
# IUSE.  This covers flags set by the eclass as well as flags an ebuild
# with ROCM_SKIP_GLOBALS declares itself (hipBLASLt, rocWMMA), which may
# name a target newer than the table.
_rocm_enabled_targets() {
	local target word
	local -a enabled=()
	for target in "${_ROCM_ALL_TARGETS[@]}"; do
		if in_iuse "amdgpu_targets_${target}" && use "amdgpu_targets_${target}"; then
			enabled+=( "${target}" )
		fi
	done
	for word in ${IUSE}; do
		word=${word#[+-]}
		[[ ${word} == amdgpu_targets_* ]] || continue
		target=${word#amdgpu_targets_}
		has "${target}" "${_ROCM_ALL_TARGETS[@]}" "${enabled[@]}" && continue
		use "${word}" && enabled+=( "${target}" )
	done
	echo "${enabled[*]}"
}

# @FUNCTION: get_amdgpu_flags
# @USAGE: [separator]
# @DESCRIPTION:
# Print the enabled AMDGPU targets in the order of the target table.
#
# Without an argument the output is that of ::gentoo's rocm.eclass: each
# target followed by ";" ("gfx90a;gfx1100;"), and a lone ";" when no
# target is enabled.  CMake reads it as a list:
# @CODE
# -DAMDGPU_TARGETS="$(get_amdgpu_flags)"
# @CODE
#
# With a separator the targets are joined by it, without a trailing
# separator, and the output is empty when no target is enabled.  For
# CMake's HIP language and build systems that reject the trailing ";"
# (Tensile) or want commas or spaces:
# @CODE
# -DCMAKE_HIP_ARCHITECTURES="$(get_amdgpu_flags ";")"
# export PYTORCH_ROCM_ARCH=$(get_amdgpu_flags ";")
# export HCC_AMDGPU_TARGET=$(get_amdgpu_flags ,)
# @CODE
# Arguments after the separator are ignored with a QA notice, as
# ::gentoo's eclass ignores every argument.
get_amdgpu_flags() {
	debug-print-function "${FUNCNAME[0]}" "$@"

	if [[ ${#} -gt 1 ]]; then
		eqawarn "${FUNCNAME[0]}: takes at most a separator; ignoring: ${*:2}"
	fi

	local -a targets
	read -r -a targets <<<"$(_rocm_enabled_targets)"
	if [[ ${#} -eq 0 ]]; then
		# With no target, printf prints the format once: a lone ";".
		printf '%s;' "${targets[@]}"
		echo
		return
	fi

	local joined target
	for target in "${targets[@]}"; do
		joined+=${joined:+${1}}${target}
	done
	echo "${joined}"
}

# @FUNCTION: _rocm_strip_unsupported_flags
# @INTERNAL
# @DESCRIPTION:
# Drop flags the compilers just selected do not support, including flags
# that pass the C++ compiler check but break HIP device compilation.
_rocm_strip_unsupported_flags() {
	strip-unsupported-flags
	# Flags such as -mtls-dialect=* pass test-flags-CXX but not the device
	# compilation, bug #957893.
	# shellcheck disable=SC2086 # CXXFLAGS is a list of flags to test one by one
	CXXFLAGS=$(test-flags-HIPCXX ${CXXFLAGS})
	export CXXFLAGS
}

# @FUNCTION: rocm_use_hipcc
# @DESCRIPTION:
# Compile C and C++ with hipcc: export CC=hipcc and CXX=hipcc (CMake
# checks the C compiler even for C++ projects), drop unsupported flags,
# and write the enabled targets to a file exported as ROCM_TARGET_LST, so
# that hipcc never probes the GPU inside the sandbox.
rocm_use_hipcc() {
	debug-print-function "${FUNCNAME[0]}" "$@"

	[[ ${#} -eq 0 ]] || die "Usage: ${FUNCNAME[0]}"

	local -a targets
	read -r -a targets <<<"$(_rocm_enabled_targets)"
	# gfx000 means "no GPU code" and still keeps hipcc from probing.
	[[ ${#targets[@]} -gt 0 ]] || targets=( gfx000 )
	local target_lst=${T}/gentoo_rocm_target.lst
	printf '%s\n' "${targets[@]}" > "${target_lst}" ||
		die "${FUNCNAME[0]}: cannot write ${target_lst}; check that T points to a writable directory"
	export ROCM_TARGET_LST=${target_lst}

	export CC=hipcc CXX=hipcc
	_rocm_strip_unsupported_flags
}

# @FUNCTION: rocm_use_clang
# @DESCRIPTION:
# Compile with the vanilla clang hip was built with, as ::gentoo's eclass
# does: the directory "hipconfig --hipclangpath" prints.  Only when
# hipconfig is not installed (a package built without hip, such as
# hipify-clang) is the clang of LLVM_SLOT used, which the ebuild sets by
# inheriting llvm-r2.  Exports CC and CXX (${CHOST}-clang and
# ${CHOST}-clang++ there) and, for CMake's HIP language, HIPCXX (the same
# clang++, never hipcc, which CMake refuses) and HIPFLAGS with
# --rocm-path and --rocm-device-lib-path, without which clang cannot find
# the ROCm device library.  CMake reads HIPCXX and HIPFLAGS when it first
# configures the HIP language; pass CMAKE_HIP_ARCHITECTURES from
# get_amdgpu_flags ";".  HIP sources compiled as C++ (-x hip through CXX)
# never see HIPFLAGS, so ROCM_PATH and HIP_DEVICE_LIB_PATH, which clang and
# the HIP CMake configuration read, are exported too unless already set.
# Finally drops unsupported flags.
rocm_use_clang() {
	debug-print-function "${FUNCNAME[0]}" "$@"

	[[ ${#} -eq 0 ]] || die "Usage: ${FUNCNAME[0]}"

	local bindir
	if [[ -n $(type -t hipconfig) || -z ${LLVM_SLOT} ]]; then
		if ! bindir=$(hipconfig --hipclangpath) || [[ -z ${bindir} ]]; then
			die "${FUNCNAME[0]}: 'hipconfig --hipclangpath' failed; add dev-util/hip to BDEPEND, or inherit llvm-r2 so that LLVM_SLOT names the clang to use where hip is not installed"
		fi
	else
		bindir=${BROOT}/usr/lib/llvm/${LLVM_SLOT}/bin
	fi

	local slot=${bindir%/bin}
	slot=${slot##*/}
	local cxx=${bindir}/${CHOST}-clang++
	if [[ ! -x ${cxx} ]]; then
		die "${FUNCNAME[0]}: ${cxx} is missing; add llvm-core/clang:${slot} to BDEPEND"
	fi

	export CC=${bindir}/${CHOST}-clang
	export CXX=${cxx}
	export HIPCXX=${cxx}
	if [[ ${HIPFLAGS} != *--rocm-path=* ]]; then
		HIPFLAGS+="${HIPFLAGS:+ }--rocm-path=${EPREFIX}/usr"
		HIPFLAGS+=" --rocm-device-lib-path=${EPREFIX}/usr/lib/amdgcn/bitcode"
	fi
	export HIPFLAGS
	export ROCM_PATH=${ROCM_PATH:-${EPREFIX}/usr}
	export HIP_DEVICE_LIB_PATH=${HIP_DEVICE_LIB_PATH:-${EPREFIX}/usr/lib/amdgcn/bitcode}
	_rocm_strip_unsupported_flags
}

# @FUNCTION: rocm_add_sandbox
# @USAGE: [-w]
# @DESCRIPTION:
# For builds whose configure step probes the GPU (/dev/kfd and the DRM
# render nodes): without an argument, let such probes fail quietly instead
# of causing sandbox violations (addpredict), so the build uses the
# targets it was given; with -w, allow real access (addwrite), for builds
# that must run code on the GPU.
rocm_add_sandbox() {
	debug-print-function "${FUNCNAME[0]}" "$@"

	local action=addpredict
	case ${#}:${1} in
		0:) ;;
		1:-w) action=addwrite ;;
		*) die "Usage: ${FUNCNAME[0]} [-w]" ;;
	esac
	"${action}" "${_ROCM_DEVICE_ROOT}/dev/kfd"
	"${action}" "${_ROCM_DEVICE_ROOT}/dev/dri"
}

# @FUNCTION: _rocm_gpu_devices
# @INTERNAL
# @DESCRIPTION:
# Fill the array "gpus" of the caller with one entry per GPU that ROCm
# would use: "<render node> <gfx_target_version>".  GPUs come from the
# KFD topology (nodes whose simd_count is not 0, in node order), filtered
# by ROCR_VISIBLE_DEVICES and then HIP_VISIBLE_DEVICES.  Without a KFD
# topology every /dev/dri/renderD* node is listed, with version 0.
_rocm_gpu_devices() {
	local topology=${_ROCM_DEVICE_ROOT}/sys/class/kfd/kfd/topology/nodes
	local -a all=()
	local n key value simd minor version uid
	for (( n = 0; ; n++ )); do
		[[ -r ${topology}/${n}/properties ]] || break
		simd=0 minor='' version=0 uid=0
		while read -r key value; do
			case ${key} in
				simd_count) simd=${value} ;;
				drm_render_minor) minor=${value} ;;
				gfx_target_version) version=${value} ;;
				unique_id) uid=${value} ;;
			esac
		done < "${topology}/${n}/properties"
		[[ ${simd} =~ ^[0-9]+$ && ${simd} -gt 0 && ${minor} =~ ^[0-9]+$ ]] || continue
		all+=( "${_ROCM_DEVICE_ROOT}/dev/dri/renderD${minor} ${version} ${uid}" )
	done

	local node
	if [[ ${#all[@]} -eq 0 ]]; then
		if [[ -n ${ROCR_VISIBLE_DEVICES}${HIP_VISIBLE_DEVICES} ]]; then
			ewarn "No KFD topology under ${topology}: ignoring ROCR_VISIBLE_DEVICES"
			ewarn "and HIP_VISIBLE_DEVICES, checking every render node."
		fi
		for node in "${_ROCM_DEVICE_ROOT}"/dev/dri/renderD*; do
			[[ -e ${node} ]] && gpus+=( "${node} 0" )
		done
		return
	fi

	local var token i wanted
	local -a tokens picked
	for var in ROCR_VISIBLE_DEVICES HIP_VISIBLE_DEVICES; do
		[[ -n ${!var} ]] || continue
		IFS=, read -r -a tokens <<<"${!var}"
		picked=()
		for token in "${tokens[@]}"; do
			if [[ ${token} =~ ^[0-9]+$ ]]; then
				i=$(( 10#${token} ))
				if [[ ${i} -ge ${#all[@]} ]]; then
					die "${var}=${!var} names GPU ${token}, but only ${#all[@]} GPU(s) are visible (numbered from 0); fix ${var} (e.g. in package.env) or unset it"
				fi
				picked+=( "${all[i]}" )
			elif [[ ${token,,} =~ ^gpu-([0-9a-f]{1,16})$ ]]; then
				wanted=$(printf '%u' "0x${BASH_REMATCH[1]}")
				for i in "${!all[@]}"; do
					read -r _ _ uid <<<"${all[i]}"
					[[ ${uid} == "${wanted}" ]] && break
				done
				if [[ ${uid} != "${wanted}" ]]; then
					die "${var}=${!var}: no visible GPU has the UUID ${token}; list the UUIDs with rocminfo and fix ${var}"
				fi
				picked+=( "${all[i]}" )
			else
				die "${var}=${!var}: '${token}' is neither a GPU ordinal nor a GPU-<id> UUID; fix ${var} (e.g. in package.env)"
			fi
		done
		all=( "${picked[@]}" )
	done

	local entry
	for entry in "${all[@]}"; do
		gpus+=( "${entry% *}" )
	done
}

# @FUNCTION: check_amdgpu
# @RETURN: 0 when every GPU to test on is usable; dies otherwise
# @DESCRIPTION:
# For src_test: make the GPUs the tests will use writable in the sandbox
# (addwrite on /dev/kfd and their render nodes) and die with a hint when
# /dev/kfd is missing or a device is not readable and writable by the
# build user.  Warns about GPUs whose target the package is not built for,
# as tests would fail there.
#
# It honours the ROCm runtime's environment, which a user sets in
# package.env (and an ebuild may set for its tests), so that only the GPUs
# the tests will run on are checked:
#
# - ROCR_VISIBLE_DEVICES: comma-separated GPUs, ordinals among all GPUs of
#   the KFD topology or GPU-<unique id> UUIDs (as rocminfo prints them);
#
# - HIP_VISIBLE_DEVICES: the same, counted among the GPUs
#   ROCR_VISIBLE_DEVICES leaves visible, e.g. to run tests on one GPU of a
#   multi-GPU host;
#
# - HSA_OVERRIDE_GFX_VERSION=X.Y.Z: every GPU runs gfx target X.Y.Z code
#   (10.3.0 runs gfx1030 code on a gfx1032 GPU), which the comparison with
#   the enabled targets uses.
#
# The eclass does not document them as its user variables: they are the
# runtime's, and ::gentoo ebuilds set HIP_VISIBLE_DEVICES for their tests.
check_amdgpu() {
	debug-print-function "${FUNCNAME[0]}" "$@"

	[[ ${#} -eq 0 ]] || die "Usage: ${FUNCNAME[0]}"

	local kfd=${_ROCM_DEVICE_ROOT}/dev/kfd
	if [[ ! -e ${kfd} ]]; then
		eerror "${kfd} does not exist, so no AMD GPU can run ROCm code."
		eerror "Enable CONFIG_HSA_AMD (HSA kernel driver for AMD GPU devices) in the"
		eerror "kernel and load amdgpu; in a container, pass --device /dev/kfd and"
		eerror "--device /dev/dri."
		die "${FUNCNAME[0]}: ${kfd} is missing; see the messages above, or disable FEATURES=test for this package"
	fi

	local -a gpus=()
	_rocm_gpu_devices
	if [[ ${#gpus[@]} -eq 0 ]]; then
		eerror "No GPU render node (${_ROCM_DEVICE_ROOT}/dev/dri/renderD*) was found."
		eerror "Check that amdgpu drives the GPU; in a container, pass --device /dev/dri."
		die "${FUNCNAME[0]}: no GPU to run the tests on; see the messages above"
	fi

	local -a devices=( "${kfd}" "${gpus[@]% *}" )
	local device
	for device in "${devices[@]}"; do
		addwrite "${device}"
		if [[ ! -e ${device} ]]; then
			eerror "${device} does not exist although the KFD topology lists its GPU."
			eerror "In a container, pass it with --device ${device#"${_ROCM_DEVICE_ROOT}"}."
			die "${FUNCNAME[0]}: ${device} is missing; see the messages above"
		elif [[ ! -r ${device} || ! -w ${device} ]]; then
			eerror "${device} is not readable and writable by the build user."
			eerror "Add the portage user to the render and video groups:"
			eerror "  usermod -a -G render,video portage"
			die "${FUNCNAME[0]}: cannot read and write ${device}; see the messages above"
		fi
	done

	# Warn about GPUs the package has no code for.
	local target has_targets=
	for target in "${_ROCM_ALL_TARGETS[@]}"; do
		in_iuse "amdgpu_targets_${target}" && has_targets=1 && break
	done
	[[ -n ${has_targets} ]] || return 0

	local entry node version
	for entry in "${gpus[@]}"; do
		read -r node version <<<"${entry}"
		if [[ ${HSA_OVERRIDE_GFX_VERSION} =~ ^([0-9]+)\.([0-9]+)\.([0-9]+)$ ]]; then
			version=$(( 10#${BASH_REMATCH[1]} * 10000 + 10#${BASH_REMATCH[2]} * 100 + 10#${BASH_REMATCH[3]} ))
		fi
		[[ ${version} =~ ^[1-9][0-9]{0,6}$ ]] || continue
		target=${_ROCM_KFD_TARGETS[version]}
		if [[ -z ${target} ]]; then
			ewarn "${node}: the GPU's gfx_target_version ${version} is unknown to rocm.eclass."
		elif ! in_iuse "amdgpu_targets_${target}" || ! use "amdgpu_targets_${target}"; then
			ewarn "${node} is a ${target} GPU, but ${CATEGORY}/${PN} is not built for ${target}:"
			ewarn "its tests will fail there.  Enable AMDGPU_TARGETS=\"${target}\" if the package"
			ewarn "offers it, or choose another GPU with HIP_VISIBLE_DEVICES."
		fi
	done
	return 0
}

fi
