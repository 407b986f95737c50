#!/usr/bin/env bash
# The multi-GPU record on one host with two or more GPUs, in one run at the current commit:
# the GPU tests with every GPU visible (the multi-device tests by name), DDP weak scaling on 1 and 2
# GPUs and the one-vs-two-process parameter check (pytorch/bench/ddp_scaling.py), and the paper sweep
# with --gpus 0 and --gpus all (harness/bench/sweep_gpus.py). Writes results/<gpu-slug>x<count>/
# (or --out DIR): ddp.csv, sweep_gpus.csv (+ sidecars), ctest.txt, and a generated README.md.
#   scripts/two_gpus.sh [--out DIR] [--config configs/paper.yaml] [--skip-tests]
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
out=""
config=configs/paper.yaml
skip_tests=0
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --config) config=$2; shift 2 ;;
    --skip-tests) skip_tests=1; shift ;;
    *) echo "two_gpus.sh: unknown argument '$1' (expected --out DIR, --config FILE, --skip-tests)" >&2; exit 2 ;;
  esac
done
count=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
if [ "${count:-0}" -lt 2 ]; then
  echo "two_gpus.sh: needs a machine with at least two GPUs (nvidia-smi lists ${count:-0})" >&2
  exit 2
fi
build=${SDTW_BUILD_DIR:-build}
cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 | head -1 | tr -d ' ')
torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null || true)
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-$cap}
cmake --preset default -B "$build" -DCMAKE_CUDA_ARCHITECTURES="${cap/./}" ${torch_prefix:+-DCMAKE_PREFIX_PATH="$torch_prefix${CMAKE_PREFIX_PATH:+;$CMAKE_PREFIX_PATH}"} \
  -DSDTW_PYTHON="$(command -v python3)" >/dev/null || exit 1
# The build's output is kept: a failed build shows its end (a full build on a fresh two-GPU machine
# once failed with nothing to read, and built at the next call).
build_log=${TMPDIR:-/tmp}/two_gpus_build.log
if ! cmake --build "$build" -j "$(nproc)" >"$build_log" 2>&1; then
  grep -E "error|Error" "$build_log" | head -20 >&2
  tail -20 "$build_log" >&2
  echo "two_gpus.sh: build failed (whole log: $build_log)" >&2
  exit 1
fi
if [ -z "$out" ]; then
  slug=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 | awk '{print tolower($2)}')  # NVIDIA H100 ... -> h100
  out=results/${slug}x${count}
fi
mkdir -p "$out"
export PYTHONPATH=$PWD/harness/python:$PWD/pytorch/python${PYTHONPATH:+:$PYTHONPATH}
export SDTW_TORCH_LIBRARY=$PWD/$build/pytorch/libsdtw_torch.so
status=0
if [ $skip_tests = 0 ]; then
  # Every GPU test, the multi-device ones included; the CPU tests are CI's.
  echo "two_gpus.sh: ctest -L gpu with $count GPUs visible"
  ctest_rc=0
  ctest --test-dir "$build" -L gpu -j 4 --timeout 900 --output-on-failure >"$out/ctest.log" 2>&1 || ctest_rc=$?
  [ $ctest_rc = 0 ] || status=1
  # The multi-device tests by name: ctest keeps the output of sdtw_torch_pytest_gpu, which holds
  # them, only when it fails.
  python3 -m pytest -q -rA -p no:cacheprovider pytorch/tests/python/test_multi_device.py >"$out/multi_device.log" 2>&1 ||
    status=1
  {
    echo "ctest -L gpu at ${SDTW_GIT_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)} on $count x $(nvidia-smi --query-gpu=name --format=csv,noheader -i 0), $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    # ctest's own summary is its last such line: a test's output may hold such lines too. With no
    # failure ctest writes "100% tests passed out of N", without the failed count.
    grep -E "^[0-9]+% tests passed(, [0-9]+ tests failed)? out of [0-9]+" "$out/ctest.log" | tail -1
    grep -E "^Total Test time" "$out/ctest.log" | tail -1
    echo "multi-device tests (pytest -rA pytorch/tests/python/test_multi_device.py): $(tail -1 "$out/multi_device.log")"
    grep -E "^(PASSED|FAILED|SKIPPED|ERROR) " "$out/multi_device.log"
    grep -E "^\s*[0-9]+/[0-9]+ Test +#" "$out/ctest.log" | sed -E 's/ +/ /g'
  } >"$out/ctest.txt"
  # The failures' output stays beside the summary; the passing tests' output is not kept.
  if [ $ctest_rc != 0 ]; then
    awk '/The following tests FAILED/,0' "$out/ctest.log" >>"$out/ctest.txt"
    { echo "the failed tests' output (ctest --output-on-failure), from the run in ctest.txt"
      grep -B2 -A40 -E "\*\*\*Failed" "$out/ctest.log" | head -400; } >"$out/ctest-failures.txt"
  fi
  mv "$out/ctest.log" "${TMPDIR:-/tmp}/two_gpus_ctest.log"
  mv "$out/multi_device.log" "${TMPDIR:-/tmp}/two_gpus_multi_device.log"
  tail -n +2 "$out/ctest.txt" | head -3
fi
echo "two_gpus.sh: DDP scaling"
python3 pytorch/bench/ddp_scaling.py --out "$out" || status=1
echo "two_gpus.sh: $config on one GPU and on all"
python3 harness/bench/sweep_gpus.py --bench "$build/harness/sdtw-bench" --config "$config" --out "$out" || status=1
rm -rf "$out"/sweep-gpus-*/*.workers
python3 paper/results_readme.py "$out" || status=1
python3 paper/multi_gpu_summary.py "$out" || status=1
exit $status
