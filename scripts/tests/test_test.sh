#!/usr/bin/env bash
# ctest sdtw_test_script: scripts/test.sh with deps.sh, cmake and ctest faked: it shows the
# configure's `sdtw:` lines (not the rest) and CMake's stderr, ends with the parts not built and
# the tests not run by name, and exits with ctest's status (a failed configure stops it).
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=scripts/tests/checks.sh
source "$(dirname "$0")/checks.sh"

repo=$work/repo
mkdir -p "$repo/scripts" "$work/bin"
cp "$src/scripts/test.sh" "$src/scripts/common.sh" "$repo/scripts/"
printf '#!/bin/sh\nexit 0\n' >"$repo/scripts/deps.sh"
printf '#!/bin/sh\nexit 0\n' >"$work/bin/python3"  # no torch to find: the build is faked
cat >"$work/bin/cmake" <<'FAKE'
#!/bin/sh
if [ "$1" = --preset ]; then
  echo "-- The CXX compiler identification is GNU 12.2.0"
  echo "-- sdtw: CUDA not found: skipping kernels/ and the GPU tests"
  echo "-- sdtw: LibTorch found: building pytorch/"
  echo "CMake Warning: a warning from configure" >&2
  [ -z "${FAKE_CONFIGURE_FAILS:-}" ] || { echo "CMake Error: configure failed" >&2; exit 1; }
  echo "-- Configuring done"
  exit 0
fi
echo "[1/1] Linking CXX executable fake"
FAKE
cat >"$work/bin/ctest" <<'FAKE'
#!/bin/sh
printf '1/2 Test #1: sdtw_a ....   Passed    0.1 sec\n2/2 Test #2: sdtw_gpu ....***Skipped   0.1 sec\n\n'
printf '100%% tests passed, 0 tests failed out of 2\n\nThe following tests did not run:\n\t  2 - sdtw_gpu (Skipped)\n'
exit "${FAKE_CTEST_STATUS:-0}"
FAKE
chmod +x "$work/bin/"*

run() {  # run NAME: test.sh with the fakes first on PATH; output in $work/NAME.txt, status in $rc
  rc=0
  PATH=$work/bin:$PATH bash "$repo/scripts/test.sh" >"$work/$1.txt" 2>&1 || rc=$?
}

run passing
[ $rc = 0 ] || fail "exit $rc with every test passing: $(cat "$work/passing.txt")"
grep -qx 'sdtw: CUDA not found: skipping kernels/ and the GPU tests' "$work/passing.txt" ||
  fail "the configure's sdtw: line is not shown: $(cat "$work/passing.txt")"
grep -q 'CMake Warning: a warning from configure' "$work/passing.txt" || fail "CMake's stderr is hidden"
! grep -q -- '-- Configuring done\|compiler identification' "$work/passing.txt" || fail "the rest of the configure output is shown"
summary=$(sed -n '/^sdtw: test.sh summary$/,$p' "$work/passing.txt")
grep -qx '  CUDA not found: skipping kernels/ and the GPU tests' <<<"$summary" || fail "summary lacks the part skipped: $summary"
! grep -q 'LibTorch found' <<<"$summary" || fail "summary lists a part that was built: $summary"
grep -qx '  sdtw_gpu (Skipped)' <<<"$summary" || fail "summary lacks the skipped test: $summary"

FAKE_CTEST_STATUS=8 run failing
[ $rc = 8 ] || fail "exit $rc when ctest exits 8"
grep -qx '  sdtw_gpu (Skipped)' "$work/failing.txt" || fail "no summary when ctest fails: $(cat "$work/failing.txt")"

FAKE_CONFIGURE_FAILS=1 run configure
[ $rc != 0 ] || fail "a failed configure exits 0"
grep -q 'CMake Error: configure failed' "$work/configure.txt" || fail "the configure error is hidden"
! grep -q 'sdtw_gpu' "$work/configure.txt" || fail "ctest ran after a failed configure"

checks_done test.sh
