#!/usr/bin/env bash
# The whole test suite: installs what is missing, configures (printing each optional part built or
# skipped, and why), builds, runs every test (ctest runs the C++ and the Python suites; GPU tests
# are reported as skipped by name without a GPU), then sums up what was not built and not run.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/common.sh
source scripts/common.sh
bash scripts/deps.sh
notes=$(mktemp -d)
trap 'rm -rf "$notes"' EXIT
build_sdtw build | tee "$notes/build.txt"
status=0
ctest --test-dir build -j "$(nproc)" --output-on-failure --timeout 900 | tee "$notes/ctest.txt" || status=$?

echo
echo "sdtw: test.sh summary"
sed -n 's/^sdtw: \(.*\(not found\|skipp\).*\)/  \1/p' "$notes/build.txt" >"$notes/parts.txt"
echo "parts not built (configure):"
[ -s "$notes/parts.txt" ] && cat "$notes/parts.txt" || echo "  none"
# ctest lists the tests that did not run, with why in brackets (Skipped: the test said so).
awk '/^The following tests did not run:/ { on = 1; next }
     on && /^[[:space:]]+[0-9]+ - / { sub(/^[[:space:]]+[0-9]+ - /, "  "); print; next }
     { on = 0 }' "$notes/ctest.txt" >"$notes/not_run.txt"
echo "tests not run (ctest):"
if [ -s "$notes/not_run.txt" ]; then
  cat "$notes/not_run.txt"
  echo "  (each one's output says why: ctest --test-dir build -V -R '^NAME\$')"
else
  echo "  none"
fi
if [ "$status" = 0 ]; then
  echo "sdtw: every test that ran passed"
else
  echo "sdtw: ctest failed (exit $status): see the output above"
fi
exit "$status"
