/**
 * Peer trees for the `upstream peer` tests, written for them: a Gentoo
 * repository laid out as ::gentoo is and a spack-packages checkout laid out
 * as Spack's is, with recipes in the peers' style that hold the same kinds of
 * facts (sources, dependencies, options, patches and seds, conditions), and
 * a small stack whose components they describe.
 */

export const STACK = `name: Peer test stack
repo_name: peer-test
defaults:
  tag: rocm-\${PV}
releases:
  "7.1.1": { llvm_slot: 20 }
  "7.2.0": { llvm_slot: 22 }
python:
  compat: python3_{11..14}
  current: [python3_11, python3_12, python3_13, python3_14]
  default: [python3_13]
targets: targets.yaml
external:
  - external.yaml
components:
  - components/*.yaml
`;

export const EXTERNAL = `packages:
  dev-cpp/gtest: { subslot: false }
  sys-process/numactl: { subslot: false }
`;

export const HIP = `name: hip
atom: dev-util/hip
description: The runtime the test library builds on
homepage: https://github.com/ROCm/clr
license: MIT
sources:
  - github: ROCm/clr
build: cmake
deps:
  - atom: sys-process/numactl
    classes: [RDEPEND, DEPEND]
`;

/** Our library: its fix-ups and a patch of our own; a record typed by hand for two releases; one argued difference. */
export const ALPHA = `# alpha: a library the peer tests compare, with comments --record keeps.
name: alpha   # a trailing comment
atom: sci-libs/alpha
description: A library the peer tests compare with their recipes
homepage: https://github.com/ROCm/alpha
license: MIT
sources:
  - github: ROCm/alpha
build: cmake
cmake:
  defines:
    CMAKE_SKIP_RPATH: "ON"
    BUILD_TEST: { use: test }
    ALPHA_USE_HMM: "OFF"
deps:
  - atom: dev-util/hip
    classes: [RDEPEND, DEPEND]
  - atom: dev-cpp/gtest
    classes: [DEPEND]
    when: test
tests:
  gpu: false
prepare:
  - reason: ROCm's prefix is /usr here
    replace: { files: [src/config.h], from: /opt/rocm, to: "\${EPREFIX}/usr" }
patches:
  - alpha-cstdint.patch

# Typed by hand, before the comparison was computed.
evidence:
  - releases: ["7.1.1", "7.2.0"]
    kind: peer   # a packager's recipe
    source: "::gentoo sci-libs/alpha/alpha-7.2.0.ebuild"
    facts: [sources, deps, cmake, fixups]
differences:
  - peer: gentoo
    fact: cmake
    item: ALPHA_USE_HMM
    why: host-mapped memory is slower on discrete GPUs, and upstream's default is OFF
# (end)
`;

/** The argument for ::gentoo's test-only sed, which --record needs before it writes a record. */
export const TEST_SED_ARGUED = `  - peer: gentoo
    fact: fixups
    item: sed test/CMakeLists.txt
    why: the tests build without -Werror here because CMAKE_COMPILE_WARNING_AS_ERROR is not set
`;

/** Our own patch, written from upstream's fix: it adds the same line as ::gentoo's at another place, in other words. */
export const OUR_PATCH = `The fixed-width integer types need <cstdint> (written from upstream's fix).
--- a/src/alpha.cpp
+++ b/src/alpha.cpp
@@ -1,3 +1,4 @@
 #include <vector>
+#include <cstdint>
 
 namespace alpha {
`;

export const GENTOO_ALPHA_720 = `# Copyright 1999-2026 Gentoo Authors
# Distributed under the terms of the GNU General Public License v2

EAPI=8

ROCM_VERSION=\${PV}
inherit cmake rocm

DESCRIPTION="A test library"
HOMEPAGE="https://github.com/ROCm/alpha"
if [[ \${PV} == *9999 ]]; then
	inherit git-r3
	EGIT_REPO_URI="https://github.com/ROCm/alpha.git"
	S="\${WORKDIR}/\${P}"
else
	SRC_URI="https://github.com/ROCm/alpha/archive/rocm-\${PV}.tar.gz -> \${P}.tar.gz"
	S="\${WORKDIR}/alpha-rocm-\${PV}"
	KEYWORDS="~amd64"
fi

LICENSE="MIT"
SLOT="0/$(ver_cut 1-2)"
IUSE="test"
RESTRICT="!test? ( test )"

RDEPEND="dev-util/hip:\${SLOT}"
DEPEND="\${RDEPEND}
	sys-process/numactl
	test? ( dev-cpp/gtest )
"

PATCHES=(
	"\${FILESDIR}"/\${PN}-7.0.0-include-cstdint.patch
)

src_prepare() {
	# the ROCm prefix of the config header
	sed -e "s:/opt/rocm:\${EPREFIX}/usr:" -i src/config.h || die
	if use test; then
		local testdir="test"
		sed -i '/-Werror/d' "\${testdir}"/CMakeLists.txt || die
	fi
	cmake_src_prepare
}

src_configure() {
	local mycmakeargs=(
		-DCMAKE_SKIP_RPATH=ON
		-DBUILD_TEST=$(usex test)
		-DALPHA_USE_HMM=ON
	)
	use test && mycmakeargs+=( -DALPHA_TEST_DATA="\${WORKDIR}/data" )
	cmake_src_configure
}
`;

/** The same change as our patch, in other words: another hunk, other context. */
export const GENTOO_PATCH = `--- a/src/alpha.cpp	2025-01-01 00:00:00.000000000 +0000
+++ b/src/alpha.cpp	2025-01-01 00:00:00.000000000 +0000
@@ -1,2 +1,3 @@
+#include <cstdint>
 #include <vector>
 
`;

/** An older ebuild: what a release ::gentoo lacks (7.1.1) is compared with. */
export const GENTOO_ALPHA_710 = GENTOO_ALPHA_720.replace('\t\t-DALPHA_USE_HMM=ON\n', '\t\t-DALPHA_USE_HMM=OFF\n');

export const SPACK_ALPHA = `# A recipe in Spack's style, written for rocm-ebuild's tests.
from spack_repo.builtin.build_systems.cmake import CMakePackage

from spack.package import *


class Alpha(CMakePackage):
    """A test library."""

    homepage = "https://github.com/ROCm/alpha"
    url = "https://github.com/ROCm/alpha/archive/rocm-6.4.0.tar.gz"
    tags = ["rocm"]
    license("MIT")

    version("7.2.0", sha256="0000000000000000000000000000000000000000000000000000000000000000")
    version("7.1.0", sha256="1111111111111111111111111111111111111111111111111111111111111111")
    version("6.4.0", sha256="2222222222222222222222222222222222222222222222222222222222222222")

    variant("asan", default=False, description="Build with address-sanitizer")
    variant("hmm", default=True, description="Use host-mapped memory")

    depends_on("cxx", type="build")
    depends_on("cmake@3.21:", type="build")
    depends_on("googletest@1.10.0:", type="test")
    depends_on("numactl", when="@7.2:")
    depends_on("libx11", when="+asan")
    with when("@:6.4"):
        depends_on("boost")
    for ver in ["6.4.0", "7.1.0", "7.2.0"]:
        depends_on(f"hip@{ver}", when=f"@{ver}")

    patch("0001-include-cstdint.patch", when="@7:")
    patch("0002-old-fix.patch", when="@:6.4")

    def patch(self):
        filter_file("/opt/rocm", self.spec["hip"].prefix, "src/config.h", string=True)

    def cmake_args(self):
        args = [
            self.define("BUILD_TEST", self.run_tests),
            self.define_from_variant("ALPHA_USE_HMM", "hmm"),
        ]
        if self.spec.satisfies("@7.2:"):
            args.append(self.define("CMAKE_SKIP_RPATH", True))
        if "+asan" in self.spec:
            args.append("-DALPHA_ASAN=ON")
        if self.spec.satisfies("^cmake@3.21.0:3.21.2"):
            args.append(self.define("__skip_rocmclang", "ON"))
        return args
`;

export const SPACK_PATCH = `From: A Packager
Subject: include cstdint

--- a/src/alpha.cpp
+++ b/src/alpha.cpp
@@ -1,1 +1,2 @@
 #include <vector>
+#include <cstdint>
`;

export const SPACK_OLD_PATCH = `--- a/src/old.cpp
+++ b/src/old.cpp
@@ -1 +1 @@
-old
+new
`;

/** A ::gentoo-shaped tree and a spack-packages-shaped one, as relative path → text. */
export function peerTrees(): { gentoo: Record<string, string>; spack: Record<string, string> } {
  return {
    gentoo: {
      'profiles/repo_name': 'gentoo\n',
      'sci-libs/alpha/alpha-7.2.0.ebuild': GENTOO_ALPHA_720,
      'sci-libs/alpha/alpha-7.1.0.ebuild': GENTOO_ALPHA_710,
      'sci-libs/alpha/alpha-9999.ebuild': GENTOO_ALPHA_720,
      'sci-libs/alpha/files/alpha-7.0.0-include-cstdint.patch': GENTOO_PATCH,
      'sci-libs/alpha/metadata.xml': '<?xml version="1.0" encoding="UTF-8"?>\n<pkgmetadata/>\n',
    },
    spack: {
      'repos/spack_repo/builtin/packages/alpha/package.py': SPACK_ALPHA,
      'repos/spack_repo/builtin/packages/alpha/0001-include-cstdint.patch': SPACK_PATCH,
      'repos/spack_repo/builtin/packages/alpha/0002-old-fix.patch': SPACK_OLD_PATCH,
    },
  };
}
