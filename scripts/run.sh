#!/usr/bin/env bash
# The main job: installs what is missing, configures and builds (preset `default`, build dir
# `build`), then runs the paper sweep on a GPU (configs/paper.yaml) or, without one, the CPU sweep
# (configs/cpu.yaml), and prints a readable table of the results at the end.
#   scripts/run.sh                 # pick the sweep by the presence of a GPU
#   scripts/run.sh configs/X.yaml  # any other sweep; extra arguments go to sdtw-bench
# Rows are written as points finish; rerunning resumes where an interrupted run stopped.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
jobs=$(nproc)
cmake --preset default >/dev/null
cmake --build build -j "$jobs" --target sdtw-bench
bench=build/harness/sdtw-bench
if [ ! -x "$bench" ]; then
  echo "sdtw: build/harness/sdtw-bench was not built (LibTorch not found; see the configure output)" >&2
  exit 1
fi
if [ $# -gt 0 ] && [ -f "$1" ]; then
  config=$1
  shift
elif command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  config=configs/paper.yaml
else
  config=configs/cpu.yaml
fi
echo "sdtw: running $bench --sweep $config $*"
"$bench" --sweep "$config" "$@"
