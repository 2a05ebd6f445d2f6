#!/bin/bash
# Sources every file of a directory in its own subshell, with PATH pointing
# nowhere and the ebuild helpers stubbed, and records in LOG:
#  - "canary": the function rocm_canary ran;
#  - "exec": a command ran that is neither a builtin nor a stub;
#  - "file": the canary file appeared;
#  - "syntax": bash found a syntax error while reading the file.
# Files named *.run.* also get their phase functions called, once with every
# USE flag on and once with all off; *.source.* files are only sourced (their
# phases hold the manifest's own phase code, which is meant to run).
# Usage: canary-harness.sh DIR LOG CANARY-FILE
# shellcheck disable=SC2317  # the stubs are called by the sourced files
# shellcheck disable=SC2123,SC1090  # PATH emptied on purpose; the cases are not known in advance
CASES=$1 LOG=$2 CANARY=$3
ERR=$(mktemp)
rocm_canary() { echo "canary $CASE" >> "$LOG"; }
command_not_found_handle() { echo "exec $CASE: $*" >> "$LOG"; return 127; }
for f in inherit distutils_enable_tests cmake_src_prepare cmake_src_configure cmake_src_compile cmake_src_test \
	cmake_src_install distutils-r1_src_prepare distutils-r1_src_configure distutils-r1_src_compile \
	distutils-r1_src_test distutils-r1_src_install default eapply eapply_user rocm_use_hipcc rocm_use_clang \
	check_amdgpu edob einfo elog ewarn die sed rm dostrip python_has_version llvm-r2_pkg_setup \
	python-single-r1_pkg_setup python-any-r1_pkg_setup check-reqs_pkg_setup linux-info_pkg_setup fortran-2_pkg_setup; do
	eval "$f() { :; }"
done
for f in ver_cut llvm_gen_dep python_gen_cond_dep python_gen_any_dep get_amdgpu_flags get_libdir makeopts_jobs \
	get_llvm_prefix python_get_sitedir; do
	eval "$f() { echo stub; }"
done
use() { [[ $USE_ALL == 1 ]]; }
usex() { if use "$1"; then echo "${2-yes}"; else echo "${3-no}"; fi; }
PHASES="pkg_pretend pkg_setup python_check_deps src_prepare src_configure src_compile src_test src_install pkg_postinst"
for f in "$CASES"/*; do
	CASE=${f##*/}
	(
		PATH=/nonexistent-rocm-ebuild-canary
		USE_ALL=1
		source "$f"
		if [[ $CASE == *.run.* ]]; then
			for USE_ALL in 1 0; do
				for p in $PHASES; do declare -F "$p" > /dev/null && "$p"; done
			done
		fi
	) < /dev/null > /dev/null 2> "$ERR"
	err=$(< "$ERR")
	case $err in
		*"syntax error"* | *"unexpected EOF"* | *"here-document"*) echo "syntax $CASE: ${err//$'\n'/ | }" >> "$LOG" ;;
	esac
	[[ -e $CANARY ]] && { echo "file $CASE" >> "$LOG"; rm -f "$CANARY"; }
done
rm -f "$ERR"
exit 0
