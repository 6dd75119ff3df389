#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs what proctimes needs on Debian 12 (apt-get), then configures and
# builds the product into ./build — the library, build/bin/proctimes, the
# Python module and the man pages (the proctimes_product target), not the test
# programs, which scripts/test.sh (or `cmake --build build`) builds — and
# installs the Python module (python/) into the site directory of Debian's
# /usr/bin/python3, so that `import proctimes` works there. Safe to run again:
# installs only what is missing.
#   scripts/bootstrap.sh [extra cmake -D options]
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  g++ cmake make pkg-config
  libgtest-dev libgmock-dev libbenchmark-dev   # tests, bench/
  libcli11-dev nlohmann-json3-dev libfmt-dev   # the proctimes command
  libncurses-dev                               # proctimes top's full-screen view (ncursesw)
  tmux htop btop atop                          # tests/top drives proctimes top in tmux; bench/ runs its peers
  clang-format clang-tidy                      # scripts/lint.sh and the layout.format test
  clang libclang-rt-14-dev                     # fuzzers (libFuzzer) and sanitizer builds
  util-linux procps                            # unshare/setpriv for the hidden-/proc tests, ps for bench/
  libboost-chrono-dev libboost-timer-dev python3-psutil   # peers measured in bench/
  pybind11-dev python3-dev python3-pytest      # the Python module and its tests
  libbpf-dev bpftool libelf-dev zlib1g-dev    # the eBPF source (clang above compiles it; docs/BPF.md)
  pandoc dpkg-dev lintian man-db bash-completion          # man pages, scripts/package.sh and its test
  g++-mingw-w64-x86-64-posix wine64 wine                # the Windows backend: cross build and its tests under Wine (docs/WINDOWS.md)
  libcpp-httplib-dev libyaml-cpp-dev                     # serve tests (HTTP client), proctimes serve (process-exporter config)
  libmicrohttpd-dev libre2-dev libdeflate-dev            # serve's HTTP server, its rule matching (linear time), its gzip
  prometheus prometheus-process-exporter                 # serve tests (a real Prometheus) and bench/ (the peer)
  libgnutls28-dev libcrypt-dev openssl curl              # serve's TLS and bcrypt (web config); its tests' certificates and client
  libsqlite3-dev sqlite3                                 # the recording store (docs/STORE.md) and its sqlite3 queries
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "bootstrap: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# compile_commands.json: the input of scripts/lint.sh tidy and the layout.tidy test.
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_EXPORT_COMPILE_COMMANDS=ON "$@"
cmake --build build -j "$(nproc)" --target proctimes_product

# The Python module (built when PROCTIMES_PYTHON is ON): into /usr/bin/python3's
# platlib (/usr/local/lib/python3.11/dist-packages), outside the install prefix,
# hence its own component.
if grep -q '^PROCTIMES_PYTHON:BOOL=ON' build/CMakeCache.txt; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo cmake --install build --component python --strip >/dev/null
fi
