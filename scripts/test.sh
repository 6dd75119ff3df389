#!/usr/bin/env bash
# The whole test suite: installs dependencies, builds, and runs every CTest
# test (labels: unit, system, capi, example, cli, packaging). This is what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
ctest --test-dir build --output-on-failure --timeout 900
