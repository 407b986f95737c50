#!/usr/bin/env bash
# The multi-GPU record on one host with two or more GPUs, in one run at the current commit:
# the test suite with every GPU visible (the multi-device tests run), DDP weak scaling on 1 and 2
# GPUs and the one-vs-two-process parameter check (pytorch/bench/ddp_scaling.py), and the paper sweep
# with --gpus 0 and --gpus all (harness/bench/sweep_gpus.py). Writes results/<gpu-slug>x<count>/
# (or --out DIR): ddp.csv, sweep_gpus.csv (+ sidecars), ctest.txt, and a generated README.md.
#   scripts/two_gpus.sh [--out DIR] [--config configs/paper.yaml] [--skip-tests]
set -uo pipefail
cd "$(dirname "$0")/.."
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
cmake --build "$build" -j "$(nproc)" >/dev/null || { echo "two_gpus.sh: build failed" >&2; exit 1; }
if [ -z "$out" ]; then
  slug=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 | awk '{print tolower($2)}')  # NVIDIA H100 ... -> h100
  out=results/${slug}x${count}
fi
mkdir -p "$out"
export PYTHONPATH=$PWD/harness/python:$PWD/pytorch/python${PYTHONPATH:+:$PYTHONPATH}
export SDTW_TORCH_LIBRARY=$PWD/$build/pytorch/libsdtw_torch.so
status=0
if [ $skip_tests = 0 ]; then
  echo "two_gpus.sh: ctest with $count GPUs visible"
  ctest --test-dir "$build" -j 4 --timeout 900 --output-on-failure >"$out/ctest.log" 2>&1 || status=1
  {
    echo "ctest at ${SDTW_GIT_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)} on $count x $(nvidia-smi --query-gpu=name --format=csv,noheader -i 0), $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    # The last summary line is ctest's own: a test's output may hold such lines too.
    grep -E "tests passed, [0-9]+ tests failed out of" "$out/ctest.log" | tail -1
    grep -E "^Total Test time" "$out/ctest.log" | tail -1
    grep -E "^\s*[0-9]+/[0-9]+ Test +#" "$out/ctest.log" | sed -E 's/ +/ /g'
    grep -E "multi_device|PASSED|SKIPPED|passed|skipped" "$out/ctest.log" | grep -i "multi_device" | head -20
  } >"$out/ctest.txt"
  # The failures' output stays beside the summary; the passing tests' output is not kept.
  if ! grep -E "tests passed, [0-9]+ tests failed out of" "$out/ctest.log" | tail -1 | grep -q " 0 tests failed"; then
    awk '/The following tests FAILED/,0' "$out/ctest.log" >>"$out/ctest.txt"
    { echo "the failed tests' output (ctest --output-on-failure), from the run in ctest.txt"
      grep -B2 -A40 -E "\*\*\*Failed" "$out/ctest.log" | head -400; } >"$out/ctest-failures.txt"
  fi
  mv "$out/ctest.log" "${TMPDIR:-/tmp}/two_gpus_ctest.log"
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
