#!/usr/bin/env bash
# The main job: installs what is missing, configures and builds (preset `default`, build dir
# `build`), then runs the paper sweep on a GPU (configs/paper.yaml) or, without one, the CPU sweep
# (configs/cpu.yaml) into a fresh run folder, and prints a readable table of the results at the end.
#   scripts/run.sh                         # runs/<date>-<commit>[-dirty]/ (a new folder each call)
#   scripts/run.sh --resume                # goes on in the folder under runs/ changed last (a finished
#                                          # sweep prints its table)
#   scripts/run.sh --resume runs/X         # goes on in that folder
#   scripts/run.sh --publish               # and then copies the sweep's .csv/.json to results/<gpu>/
#   scripts/run.sh configs/X.yaml [ARGS]   # another sweep; ARGS go to sdtw-bench
# Rows are written as points finish, so --resume goes on where an interrupted run stopped.
# SDTW_BUILD_DIR=dir builds there instead of `build`; SDTW_SKIP_DEPS=1 skips scripts/deps.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/common.sh
source scripts/common.sh
resume=""
publish=0
config=""
bench_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --resume)
      resume=latest
      if [ $# -gt 1 ] && [ -d "$2" ]; then resume=$2; shift; fi ;;
    --publish) publish=1 ;;
    -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' scripts/run.sh; exit 0 ;;
    *)
      if [ -z "$config" ] && [ ${#bench_args[@]} = 0 ] && [[ "$1" == *.yaml ]]; then
        [ -f "$1" ] || { echo "sdtw: run.sh: config '$1' does not exist" >&2; exit 2; }
        config=$1
      else
        bench_args+=("$1")
      fi ;;
  esac
  shift
done
if [ -z "$config" ]; then
  if have_gpu; then config=configs/paper.yaml; else config=configs/cpu.yaml; fi
fi

# The run folder: a new one named by date and commit, or the one to resume.
if [ "$resume" = latest ]; then
  # The folder changed last, not the last by name: names of one day sort by commit, not by time.
  out=$( (find runs -mindepth 1 -maxdepth 1 -type d -printf '%T@ %p\n' 2>/dev/null || true) | sort -n | tail -1 | cut -d' ' -f2-)
  [ -n "$out" ] || { echo "sdtw: run.sh --resume: no run folder under runs/ (run without --resume first)" >&2; exit 2; }
elif [ -n "$resume" ]; then
  out=${resume%/}
else
  base=runs/$(date -u +%Y-%m-%d)-$(commit_short)$(tree_dirty && echo -dirty || true)
  out=$base
  k=2
  while [ -e "$out" ]; do out=$base-$k; k=$((k + 1)); done
fi
mkdir -p "$out"

[ "${SDTW_SKIP_DEPS:-0}" = 1 ] || bash scripts/deps.sh run
build=${SDTW_BUILD_DIR:-build}
build_sdtw "$build" sdtw-bench
bench=$build/harness/sdtw-bench
if [ ! -x "$bench" ]; then
  echo "sdtw: $bench was not built (LibTorch not found; see the configure output)" >&2
  exit 1
fi
name=$(sed -n 's/^name:[[:space:]]*\([^[:space:]#]*\).*/\1/p' "$config" | head -1)
name=${name:-$(basename "$config" .yaml)}
echo "sdtw: running $bench --sweep $config --out $out ${bench_args[*]}"
"$bench" --sweep "$config" --out "$out" "${bench_args[@]}" | tee "$out/$name.log"
# A sweep with nothing left to run prints an empty table: show the file's instead.
if grep -q 'sdtw-bench: ran 0,' "$out/$name.log"; then
  "$bench" table "$out/$name.csv"
fi
if [ $publish = 1 ]; then
  dest=results/$(gpu_slug "$(gpu_name)")
  mkdir -p "$dest"
  cp "$out/$name.csv" "$out/$name.json" "$dest/"
  echo "sdtw: published $out/$name.csv and .json to $dest/"
fi
echo "sdtw: results in $out/$name.csv (scripts/run.sh --resume $out goes on there)"
