#!/usr/bin/env bash
# One call on the GPU machine: configure, build, run the GPU tests and the kernel micro-benchmark,
# write logs under $OUT (or ./gpu-out) and print a short summary last.
# Usage: scripts/gpu_check.sh [--skip "baselines;pytorch;harness"] [--bench-filter REGEX] [--tests REGEX]
# Environment: SDTW_TRAIN=1 runs examples/train.py (fused and not); SDTW_SANITIZE=1 runs
# compute-sanitizer (memcheck, racecheck, synccheck) on a subset of the kernel tests;
# SDTW_BENCH_REPS sets the benchmark repetitions; SDTW_NCU=<benchmark filter> profiles with ncu;
# SDTW_GIT_COMMIT (and SDTW_GIT_DIRTY) name the commit where the copy's .git is missing or stale.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
# shellcheck source=scripts/common.sh
source scripts/common.sh
out=${OUT:-gpu-out}
mkdir -p "$out"
skip=""
bench_filter="."
tests=""
exclude=""
while [ $# -gt 0 ]; do
  case "$1" in
    --skip) skip=$2; shift 2 ;;
    --bench-filter) bench_filter=$2; shift 2 ;;
    --tests) tests=$2; shift 2 ;;
    --exclude) exclude=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
export TORCH_CUDA_ARCH_LIST=9.0
{
  echo "commit: ${SDTW_GIT_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)$(git status --porcelain 2>/dev/null | grep -q . && echo ' (dirty)')}"
  echo "date: $(date -u +%Y-%m-%d)"
} >"$out/meta.txt"
torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null || true)
summary=()
t0=$(date +%s)
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_PREFIX_PATH="$torch_prefix" "-DSDTW_SKIP_PARTS=$skip" -DSDTW_PYTHON="$(command -v python3)" >"$out/build.log" 2>&1 \
  || { tail -40 "$out/build.log"; exit 1; }
grep "sdtw:" "$out/build.log"
cmake --build build-gpu -j 16 -- -k 0 >>"$out/build.log" 2>&1 || { echo "---- BUILD ERRORS"; grep -E "error|FAILED" -A3 "$out/build.log" | head -40; }
summary+=("build: ok in $(( $(date +%s) - t0 )) s")
echo "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1)" >>"$out/meta.txt"
ctest_args=(--test-dir build-gpu --output-on-failure --timeout 600 -j 4)
[ -n "$tests" ] && ctest_args+=(-R "$tests")
[ -n "$exclude" ] && ctest_args+=(-E "$exclude")
ctest "${ctest_args[@]}" >"$out/ctest.log" 2>&1
summary+=("ctest: $(grep -E 'tests passed|tests failed' "$out/ctest.log" | tail -1)")
grep -hE "^\[ accuracy \]" build-gpu/Testing/Temporary/LastTest.log >"$out/accuracy.txt" 2>/dev/null || true
if [ -x build-gpu/kernels/bench/sdtw_kernels_bench ] && [ "$bench_filter" != "none" ]; then
  build-gpu/kernels/bench/sdtw_kernels_bench --benchmark_filter="$bench_filter" --benchmark_counters_tabular=true \
    --benchmark_repetitions="${SDTW_BENCH_REPS:-1}" --benchmark_out="$out/kernels_bench.json" --benchmark_out_format=json >"$out/kernels_bench.txt" 2>&1
  summary+=("bench: exit $?")
fi
if [ -n "${SDTW_TRAIN:-}" ] && [ -f build-gpu/pytorch/libsdtw_torch.so ]; then
  for fused in true false; do
    PYTHONPATH=pytorch/python SDTW_TORCH_LIBRARY=build-gpu/pytorch/libsdtw_torch.so \
      python3 examples/train.py --device cuda --fused $fused >>"$out/train.txt" 2>&1
    summary+=("train fused=$fused: exit $? $(tail -1 "$out/train.txt")")
  done
fi
if [ -n "${SDTW_SANITIZE:-}" ] && [ -x build-gpu/kernels/tests/sdtw_kernels_tests ]; then
  while IFS= read -r line; do summary+=("$line"); done < <(sanitize build-gpu/kernels/tests/sdtw_kernels_tests "$out" \
    "$SANITIZER_FILTER" memcheck racecheck synccheck || true)
fi
echo "---- failed tests"; grep -E "^\s+[0-9]+ - .*\((Failed|Timeout|SEGFAULT|Subprocess)" "$out/ctest.log" | head -30
echo "---- accuracy"; cat "$out/accuracy.txt"
echo "---- bench"; grep -E "BM_|Benchmark" "$out/kernels_bench.txt" 2>/dev/null | cut -c1-160
echo "---- summary"; cat "$out/meta.txt"; printf '%s\n' "${summary[@]}"
if [ -n "${SDTW_NCU:-}" ] && command -v ncu >/dev/null; then
  echo "---- ncu"
  ncu --kernel-name regex:"forward_kernel|backward_kernel|jacobian" --launch-skip 3 --launch-count 4 \
    --section SpeedOfLight --section WarpStateStats --section Occupancy --section LaunchStats \
    build-gpu/kernels/bench/sdtw_kernels_bench --benchmark_filter="$SDTW_NCU" --benchmark_min_time=0.01s >"$out/ncu.txt" 2>&1
  grep -E "forward_kernel|backward_kernel|jacobian_kernel|Duration|Stall|Achieved Occupancy|Registers|Compute \(SM\) Throughput|Memory Throughput|Warp Cycles Per Issued|Issue Slot|Eligible" "$out/ncu.txt" | cut -c1-150 | head -80
fi
