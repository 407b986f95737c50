# shellcheck shell=bash
# Sourced by run.sh, reproduce.sh and gpu_check.sh: what they share (the GPU, the build, the
# commit a result is measured at, the sanitizer's tests). Functions only; nothing runs on source.

# have_gpu: true when nvidia-smi lists a GPU.
have_gpu() {
  command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '
}

# gpu_name: the first GPU's name ("" without one).
gpu_name() {
  have_gpu && nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null | head -1 || true
}

# gpu_slug NAME: the results folder of a GPU, as sdtw-bench names it (harness/src/core
# metadata.cpp gpu_slug): lower case words without vendor, memory size, HBM, PCIe, SXM, NVL.
gpu_slug() {
  local slug
  slug=$(tr '[:upper:]' '[:lower:]' <<<"$1" | tr -cs 'a-z0-9' '\n' |
    grep -Ev '^(nvidia|tesla|cpu|pcie|nvl|sxm.*|hbm.*|[0-9][a-z0-9]*gb)$' | grep . | paste -sd- -)
  echo "${slug:-cpu}"
}

# gpu_driver: the first GPU's NVIDIA driver version ("" without one).
gpu_driver() {
  have_gpu && nvidia-smi --query-gpu=driver_version --format=csv,noheader -i 0 2>/dev/null | head -1 || true
}

# tools_python BUILD ARG...: python3, in the repository root, with the Python tools' path (sdtw_results,
# sdtw_torch and the operators of BUILD), as every measuring tool and paper/ are run; absolute, so that
# the processes a tool starts elsewhere find them too. SDTW_PYTHON names another interpreter (the one
# with torch, where python3 first on PATH has none).
tools_python() {
  local build=$1 root
  shift
  root=$(pwd)
  [[ "$build" = /* ]] || build=$root/$build
  PYTHONPATH=$root/harness/python:$root/pytorch/python${PYTHONPATH:+:$PYTHONPATH} \
    SDTW_TORCH_LIBRARY="$build/pytorch/libsdtw_torch.so" "${SDTW_PYTHON:-python3}" "$@"
}

# torch_cuda: the CUDA runtime version torch reports ("" without CUDA torch).
torch_cuda() {
  python3 -c 'import torch; print(torch.version.cuda or "")' 2>/dev/null || true
}

# commit_label: the commit measured (SDTW_GIT_COMMIT wins where the copy has no .git), short.
commit_short() {
  local full=${SDTW_GIT_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}
  echo "${full:0:7}"
}

commit_full() {
  echo "${SDTW_GIT_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}"
}

# tree_dirty: true when the tree is modified outside results/, runs/ and paper/, untracked files
# included (SDTW_GIT_DIRTY wins): the run folder's -dirty suffix. The results' git_dirty field is
# sdtw-bench's own (tracked files outside results/, harness/src/core/metadata.cpp).
tree_dirty() {
  if [ -n "${SDTW_GIT_DIRTY:-}" ]; then
    [ "$SDTW_GIT_DIRTY" = true ]
    return
  fi
  git status --porcelain -- . ':!results' ':!runs' ':!paper' 2>/dev/null | grep -q .
}

# build_sdtw DIR TARGET...: configure (Release, the CUDA architecture of the GPU present, a pip
# LibTorch found through Python) and build TARGETs (none: everything) in DIR. Of the configure
# output it prints the `sdtw:` lines (each optional part built or skipped, and why); CMake's
# warnings and errors go to stderr as they come.
build_sdtw() {
  local dir=$1
  shift
  local configure=()
  # A pip LibTorch (the GPU machine) is found through Python; Debian's libtorch-dev needs nothing.
  local torch_prefix
  # From / : in the source tree, a folder of the tree would pass for torch when none is installed.
  torch_prefix=$(cd / && python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null || true)
  if [ -n "$torch_prefix" ] && [ -f "$torch_prefix/Torch/TorchConfig.cmake" ]; then
    configure+=("-DCMAKE_PREFIX_PATH=$torch_prefix")
  fi
  if have_gpu; then
    # Build for the GPU that is here (torch's CMake reads TORCH_CUDA_ARCH_LIST, ours CMAKE_CUDA_ARCHITECTURES).
    local cap
    cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 2>/dev/null | head -1 | tr -d ' ')
    if [ -n "$cap" ]; then
      export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-$cap}
      configure+=("-DCMAKE_CUDA_ARCHITECTURES=${cap/./}")
    fi
  fi
  local status
  cmake --preset default -B "$dir" "${configure[@]}" | sed -n 's/^-- \(sdtw: \)/\1/p'
  status=${PIPESTATUS[0]}
  [ "$status" = 0 ] || return "$status"
  local targets=()
  [ $# -gt 0 ] && targets=(--target "$@")
  cmake --build "$dir" -j "$(nproc)" "${targets[@]}"
}

# The kernel tests compute-sanitizer runs: agreement cases 0, 3, 4, 7, 9 (N = M = 1, 32 x 32,
# 33 x 31, per-pair lengths, 257 x 130; both modes and dtypes), the launch tests (repeats, graph
# capture), the cost tensor, and the values-only forward at 1 x 1, 32 x 32, per-pair lengths and
# with pair indices; the constrained, named-cost and non-finite cases; the checkpointed mode's bands
# (300 x 200, ragged lengths, 256-row bands with a bandwidth) and its graph capture.
# shellcheck disable=SC2034  # used by the scripts that source this file
SANITIZER_FILTER='Shapes/Agreement.*/0:Shapes/Agreement.*/3:Shapes/Agreement.*/4:Shapes/Agreement.*/7:Shapes/Agreement.*/9:Launch.*:Shapes/CostTensor.*:Shapes/ValuesOnly.*/0:Shapes/ValuesOnly.*/3:Shapes/ValuesOnly.*/6:ValuesOnly.PairIndicesGiveTheGatheredPairs:Shapes/HardMin.*/0:Shapes/HardMin.*/3:HardMinAlone.*:Shapes/AlignmentBackward.*/0:Shapes/AlignmentBackward.*/7:AlignmentBackwardNonFinite.*:Shapes/Constrained.*/4:Shapes/Constrained.*/8:Shapes/Constrained.*/12:Constrained.HessianProductIsTheReferencesOnMaskedCosts:Shapes/NamedCosts.*/3:Shapes/NamedCosts.*/6:Gammas/NonFiniteCost.*:Bands/Checkpoint.*/2:Bands/Checkpoint.*/5:Bands/Checkpoint.*/8:CheckpointGraph.*'

# sanitize TESTS OUT FILTER TOOL...: compute-sanitizer TOOL on the kernel tests binary TESTS with
# the gtest FILTER, the output of each in OUT/sanitizer_TOOL.txt; prints one summary line a tool
# and returns 1 when any reported an error.
sanitize() {
  local tests=$1 out=$2 filter=$3 rc=0 tool status
  shift 3
  for tool in "$@"; do
    status=0
    compute-sanitizer --tool "$tool" --error-exitcode 9 "$tests" --gtest_filter="$filter" \
      >"$out/sanitizer_$tool.txt" 2>&1 || status=$?
    [ "$status" = 0 ] || rc=1
    echo "compute-sanitizer $tool: exit $status $(grep -hE 'PASSED|FAILED|ERROR SUMMARY|RACECHECK SUMMARY' \
      "$out/sanitizer_$tool.txt" | tr '\n' ' ')"
  done
  return $rc
}
