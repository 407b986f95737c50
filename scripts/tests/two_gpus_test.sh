#!/usr/bin/env bash
# ctest sdtw_two_gpus_script: scripts/two_gpus.sh on a machine faked through PATH (nvidia-smi with
# one or two GPUs, cmake, ctest and python3 are stubs that log their arguments): the refusal below
# two GPUs, a failed build's error shown, ctest -L gpu with ctest's own summary (not a line a test
# printed), the failures' output kept, the multi-device tests by name, then the tools in order.
set -euo pipefail
script=$(cd "$(dirname "$0")/.." && pwd)/two_gpus.sh
# shellcheck source=scripts/tests/checks.sh
source "$(dirname "$0")/checks.sh"

mkdir -p "$work/two" "$work/one"
log=$work/calls.log
stub() {  # stub FILE BODY: an executable logging "name args" to the calls log, then BODY
  printf '#!/usr/bin/env bash\necho "$(basename "$0") $*" >>%s\n%s\n' "$log" "$2" >"$1"
  chmod +x "$1"
}
stub "$work/two/nvidia-smi" 'case "$*" in -L) echo "GPU 0: Fake H100 (UUID: a)"; echo "GPU 1: Fake H100 (UUID: b)" ;;
  *compute_cap*) echo 9.0 ;; *name*) echo "NVIDIA H100 80GB HBM3" ;; esac'
stub "$work/one/nvidia-smi" 'case "$*" in -L) echo "GPU 0: Fake H100 (UUID: a)" ;; esac'
stub "$work/two/cmake" 'if [ "$1" = --build ] && [ -n "${BUILD_FAIL:-}" ]; then echo "x.cu(3): error: boom"; exit 1; fi'
# ctest: a test whose own output holds a passing summary line, then ctest's summary in its own
# wording (no failed count when every test passed).
stub "$work/two/ctest" 'echo "test output: 100% tests passed, 0 tests failed out of 3"
if [ -n "${CTEST_FAIL:-}" ]; then
  echo " 9/10 Test  #9: gpu_thing ........***Failed    1.00 sec"; echo "the assertion that failed"
  echo "90% tests passed, 1 tests failed out of 10"; echo "The following tests FAILED:"; echo "	  9 - gpu_thing (Failed)"; exit 8
fi
echo "10/10 Test #10: gpu_other ........   Passed    1.00 sec"; echo; echo "100% tests passed out of 10"'
stub "$work/two/python3" 'case "$*" in
  *pytest*test_multi_device.py*) echo "PASSED pytorch/tests/python/test_multi_device.py::test_on_cuda1"; echo "1 passed in 0.1s" ;;
esac'

run() {  # run NAME PATHDIR ARGS...: output in $work/NAME.txt, exit status in rc
  local name=$1 bin=$2
  shift 2
  rc=0
  : >"$log"
  env PATH="$bin:/usr/bin:/bin" SDTW_BUILD_DIR="$work/build" TMPDIR="$work" SDTW_GIT_COMMIT=c0ffee1 \
    bash "$script" --out "$work/out-$name" "$@" >"$work/$name.txt" 2>&1 || rc=$?
}

run one "$work/one"
[ $rc = 2 ] && grep -q "needs a machine with at least two GPUs (nvidia-smi lists 1)" "$work/one.txt" || fail "one GPU: exit $rc"

BUILD_FAIL=1 run build "$work/two"
[ $rc = 1 ] && grep -q "error: boom" "$work/build.txt" && grep -q "build failed (whole log: " "$work/build.txt" ||
  fail "a failed build: exit $rc, $(cat "$work/build.txt")"

run pass "$work/two"
[ $rc = 0 ] || fail "passing run exits $rc: $(cat "$work/pass.txt")"
grep -q "^ctest .*-L gpu" "$log" || fail "ctest not limited to the GPU tests: $(grep ^ctest "$log")"
txt=$work/out-pass/ctest.txt
[ "$(sed -n 2p "$txt")" = "100% tests passed out of 10" ] || fail "summary line: $(sed -n 2p "$txt")"
grep -q "^ctest -L gpu at c0ffee1 on 2 x NVIDIA H100 80GB HBM3" "$txt" || fail "header: $(head -1 "$txt")"
grep -q "^PASSED pytorch/tests/python/test_multi_device.py::test_on_cuda1" "$txt" || fail "multi-device tests not named"
grep -q "multi-device tests (.*): 1 passed" "$txt" || fail "multi-device count"
[ ! -e "$work/out-pass/ctest-failures.txt" ] || fail "failures file without a failure"
order=$(grep -oE "ddp_scaling.py|sweep_gpus.py|results_readme.py|multi_gpu_summary.py" "$log" | tr '\n' ' ')
[ "$order" = "ddp_scaling.py sweep_gpus.py results_readme.py multi_gpu_summary.py " ] || fail "tools: $order"

CTEST_FAIL=1 run fail "$work/two"
[ $rc = 1 ] || fail "failing ctest exits $rc"
txt=$work/out-fail/ctest.txt
[ "$(sed -n 2p "$txt")" = "90% tests passed, 1 tests failed out of 10" ] || fail "failing summary: $(sed -n 2p "$txt")"
grep -q "9 - gpu_thing (Failed)" "$txt" || fail "failed list not in ctest.txt"
head -1 "$work/out-fail/ctest-failures.txt" 2>/dev/null | grep -q "^the failed tests' output" &&
  grep -q "the assertion that failed" "$work/out-fail/ctest-failures.txt" || fail "failures' output not kept"

checks_done two_gpus.sh
