#!/bin/bash
# scripts/slurm/sweep.sbatch without Slurm: the array's tasks run as parallel processes (each
# with its SLURM_ARRAY_TASK_ID), then the merge step; the merged file must hold the same points
# and numbers as a plain sweep of configs/ci.yaml. A task killed halfway and rerun resumes.
# Usage: slurm_array_local.sh SDTW_BENCH REPO_ROOT
set -euo pipefail
bench=$1
root=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
script=$root/scripts/slurm/sweep.sbatch
config=$root/configs/ci.yaml
export SDTW_BENCH=$bench

"$bench" sweep "$config" --out "$work/plain" --no-table > "$work/plain.log"

# Task 2 first dies after one point (as if its node went down), then the array is resubmitted.
SLURM_ARRAY_TASK_ID=2 "$bench" sweep "$config" --out "$work/array/shards" --shard 2/3 --limit 1 --no-table > /dev/null
pids=()
for k in 1 2 3; do
  SLURM_ARRAY_TASK_ID=$k bash "$script" task "$config" 3 "$work/array" > "$work/task-$k.log" 2>&1 &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done
grep -q "1 rows already in" "$work/task-2.log" || { echo "task 2 did not resume"; cat "$work/task-2.log"; exit 1; }
bash "$script" merge "$config" 3 "$work/array"

# Same keys in the same order, same dispositions and errors (same seeds, same inputs): the
# columns point..disposition and value_err, grad_err.
cols() { /usr/bin/python3 - "$1" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for r in rows:
    print(",".join(r[c] for c in ["point", "impl", "device", "dtype", "B", "N", "M", "D", "gamma", "bandwidth",
                                  "normalize", "disposition", "value_err", "grad_err"]))
PY
}
cols "$work/plain/ci.csv" > "$work/plain.txt"
cols "$work/array/ci.csv" > "$work/array.txt"
points=$("$bench" sweep "$config" --dry-run | tail -1 | cut -d' ' -f1)
[ "$(wc -l < "$work/array.txt")" = "$points" ] || { echo "expected $points rows"; cat "$work/array.txt"; exit 1; }
diff "$work/plain.txt" "$work/array.txt"
# Three shard runs plus task 2's first attempt.
runs=$(/usr/bin/python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['runs']))" "$work/array/ci.json")
[ "$runs" = 4 ] || { echo "expected 4 runs in the merged JSON, got $runs"; exit 1; }
# Merging again (a resubmitted merge job) changes nothing.
bash "$script" merge "$config" 3 "$work/array"
cols "$work/array/ci.csv" | diff "$work/plain.txt" -
echo "slurm array run locally: $points points in 3 shards, merged equal to the plain sweep"
