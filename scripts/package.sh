#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the Debian packages of proctimes with CMake and CPack:
#   dist/proctimes_<version>_<arch>.deb         the command, libproctimes.so.*, proctimes(1), bash completion
#   dist/libproctimes-dev_<version>_<arch>.deb  headers, CMake package, proctimes.pc, proctimes(3)
# Usage: scripts/package.sh [BUILD_DIR [DIST_DIR]]   (defaults: build-deb, dist)
# Needs g++ cmake pandoc dpkg-dev (scripts/bootstrap.sh installs them). See docs/PACKAGING.md.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-deb}
dist=${2:-dist}

# The compiler and linker flags of a Debian package build (hardening: stack
# protector, fortify, RELRO, BIND_NOW, PIE), as debian/rules would get them.
export DEB_BUILD_MAINT_OPTIONS=hardening=+all
CFLAGS="$(dpkg-buildflags --get CFLAGS) $(dpkg-buildflags --get CPPFLAGS)"
CXXFLAGS="$(dpkg-buildflags --get CXXFLAGS) $(dpkg-buildflags --get CPPFLAGS)"
LDFLAGS="$(dpkg-buildflags --get LDFLAGS)"
export CFLAGS CXXFLAGS LDFLAGS

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr \
  -DBUILD_SHARED_LIBS=ON -DPROCTIMES_BUILD_TESTS=OFF -DPROCTIMES_BUILD_EXAMPLES=OFF \
  -DPROCTIMES_MAN_PAGES=ON -DPROCTIMES_DEBIAN_DOCS=ON -DPROCTIMES_PYTHON=OFF -DPROCTIMES_UNITY=ON >/dev/null
cmake --build "$build" -j 2
rm -f "$build"/dist/*.deb
(cd "$build" && cpack -G DEB >/dev/null)
mkdir -p "$dist"
for deb in "$build"/dist/*.deb; do
  cp "$deb" "$dist"/
  echo "$dist/$(basename "$deb")"
done
