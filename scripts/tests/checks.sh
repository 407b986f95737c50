# shellcheck shell=bash
# Sourced by the scripts' tests: $work, a scratch folder removed on exit; fail MESSAGE counts a
# failed check; checks_done NAME prints the verdict and exits 1 when any check failed.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
checks_done() {
  if [ "$failures" = 0 ]; then echo "$1: all checks passed"; else exit 1; fi
}
