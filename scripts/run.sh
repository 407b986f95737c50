#!/usr/bin/env bash
# The main job: installs what is missing, configures and builds (preset `default`, build dir
# `build`), then runs the paper sweep on a GPU (configs/paper.yaml) or, without one, the CPU sweep
# (configs/cpu.yaml), and prints a readable table of the results at the end.
#   scripts/run.sh                 # pick the sweep by the presence of a GPU
#   scripts/run.sh configs/X.yaml  # any other sweep; extra arguments go to sdtw-bench
# Rows are written as points finish; rerunning resumes where an interrupted run stopped.
# SDTW_BUILD_DIR=dir builds there instead of `build`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh run
jobs=$(nproc)
have_gpu=0
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  have_gpu=1
fi
configure=()
# A pip LibTorch (the GPU machine) is found through Python; Debian's libtorch-dev needs nothing.
torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null || true)
if [ -n "$torch_prefix" ] && [ -f "$torch_prefix/Torch/TorchConfig.cmake" ]; then
  configure+=("-DCMAKE_PREFIX_PATH=$torch_prefix")
fi
if [ $have_gpu = 1 ]; then
  # Build for the GPU that is here (torch's CMake reads TORCH_CUDA_ARCH_LIST, ours CMAKE_CUDA_ARCHITECTURES).
  cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 2>/dev/null | head -1 | tr -d ' ')
  if [ -n "$cap" ]; then
    export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-$cap}
    configure+=("-DCMAKE_CUDA_ARCHITECTURES=${cap/./}")
  fi
fi
build=${SDTW_BUILD_DIR:-build}  # the preset's build dir unless overridden
cmake --preset default -B "$build" "${configure[@]}" >/dev/null
cmake --build "$build" -j "$jobs" --target sdtw-bench
bench=$build/harness/sdtw-bench
if [ ! -x "$bench" ]; then
  echo "sdtw: $bench was not built (LibTorch not found; see the configure output)" >&2
  exit 1
fi
if [ $# -gt 0 ] && [ -f "$1" ]; then
  config=$1
  shift
elif [ $have_gpu = 1 ]; then
  config=configs/paper.yaml
else
  config=configs/cpu.yaml
fi
echo "sdtw: running $bench --sweep $config $*"
"$bench" --sweep "$config" "$@"
