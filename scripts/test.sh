#!/usr/bin/env bash
# The whole test suite: installs what is missing, configures, builds, runs every test (ctest runs
# the C++ and the Python suites; GPU tests are reported as skipped by name without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
jobs=$(nproc)
cmake --preset default >/dev/null
cmake --build build -j "$jobs"
ctest --test-dir build -j "$jobs" --output-on-failure --timeout 900
