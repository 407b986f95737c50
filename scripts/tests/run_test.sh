#!/usr/bin/env bash
# ctest sdtw_run_script: scripts/run.sh in a copy of scripts/ and configs/ (so runs/ and results/
# are made there), with cmake, python3 and nvidia-smi faked through PATH and a stub sdtw-bench that writes
# one row per call and resumes as the real one does: each call makes a new run folder named by
# date and commit, --resume goes on in the newest (a finished sweep prints its table), --resume DIR
# in that one, and --publish copies the sweep into results/<gpu>/.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=scripts/tests/checks.sh
source "$(dirname "$0")/checks.sh"

repo=$work/repo
mkdir -p "$repo/scripts" "$work/bin" "$work/gpu" "$work/build/harness"
cp "$src/scripts/run.sh" "$src/scripts/common.sh" "$repo/scripts/"
cp -r "$src/configs" "$repo/configs"
printf '#!/bin/sh\nexit 0\n' >"$work/bin/cmake"
printf '#!/bin/sh\ncase "$*" in -L) echo "GPU 0: Fake (UUID: x)" ;; *compute_cap*) echo 9.0 ;; *name*) echo "NVIDIA H100 80GB HBM3" ;; esac\n' \
  >"$work/gpu/nvidia-smi"
# The machine without a GPU has nvidia-smi failing, as where a GPU machine runs this test: the real
# one in /usr/bin must not be found.
printf '#!/bin/sh\necho "NVIDIA-SMI has failed: no NVIDIA driver" >&2\nexit 9\n' >"$work/bin/nvidia-smi"
chmod +x "$work/bin/nvidia-smi"
cp "$work/bin/cmake" "$work/gpu/cmake"
cp "$work/bin/cmake" "$work/bin/python3"  # no torch to find: the build is faked
cp "$work/bin/cmake" "$work/gpu/python3"
# sdtw-bench --sweep CONFIG --out DIR: two points; a call runs the first point not in DIR/<stem>.csv.
cat >"$work/build/harness/sdtw-bench" <<'EOF'
#!/usr/bin/env bash
if [ "$1" = table ]; then echo "TABLE $2 $(($(wc -l <"$2") - 1)) rows"; exit 0; fi
config=$2 out=$4
csv=$out/$(basename "$config" .yaml).csv
[ -f "$csv" ] || echo point >"$csv"
echo '{}' >"${csv%.csv}.json"
n=$(($(wc -l <"$csv") - 1))
if [ $n -lt 2 ]; then echo $n >>"$csv"; echo "table of the run: point $n"; echo "sdtw-bench: ran 1, skipped $n (already in the file)"
else echo "sdtw-bench: ran 0, skipped 2 (already in the file)"; fi
EOF
chmod +x "$work/bin/cmake" "$work/gpu/nvidia-smi" "$work/gpu/cmake" "$work/bin/python3" "$work/gpu/python3" "$work/build/harness/sdtw-bench"

run() {  # run NAME PATHDIR ARGS...: output in $work/NAME.txt, exit status in rc
  local name=$1 bin=$2
  shift 2
  rc=0
  (cd "$work" && env PATH="$bin:/usr/bin:/bin" SDTW_BUILD_DIR="$work/build" SDTW_SKIP_DEPS=1 \
    SDTW_GIT_COMMIT=0123456789abcdef SDTW_GIT_DIRTY="${DIRTY:-false}" bash "$repo/scripts/run.sh" "$@") \
    >"$work/$name.txt" 2>&1 || rc=$?
}
today=$(date -u +%Y-%m-%d)

# No GPU: configs/cpu.yaml into a fresh folder runs/<date>-<commit>; a second call, another folder.
run first "$work/bin"
[ $rc = 0 ] || fail "first run exits $rc: $(cat "$work/first.txt")"
[ -f "$repo/runs/$today-0123456/cpu.csv" ] || fail "first run wrote $(find "$repo/runs" -type f)"
grep -q 'ran 1,' "$work/first.txt" || fail "first run measured nothing: $(cat "$work/first.txt")"
run second "$work/bin"
[ -f "$repo/runs/$today-0123456-2/cpu.csv" ] || fail "second run did not make a new folder: $(ls "$repo/runs")"
grep -q 'ran 1,' "$work/second.txt" || fail "second run measured nothing"
[ ! -e "$repo/results" ] || fail "a run without --publish wrote results/"

# --resume: the folder changed last (not the last by name); once finished, the file's table.
mkdir "$repo/runs/zzzz-older" && touch -d '2001-01-01' "$repo/runs/zzzz-older"
run resume1 "$work/bin" --resume
grep -q "ran 1, skipped 1" "$work/resume1.txt" || fail "--resume did not go on: $(cat "$work/resume1.txt")"
run resume2 "$work/bin" --resume
grep -q "TABLE runs/$today-0123456-2/cpu.csv 2 rows" "$work/resume2.txt" ||
  fail "a finished sweep did not print its table: $(cat "$work/resume2.txt")"
run resumedir "$work/bin" --resume "runs/$today-0123456"
grep -q "ran 1, skipped 1" "$work/resumedir.txt" && [ "$(ls "$repo/runs" | wc -l)" = 3 ] ||
  fail "--resume DIR: $(cat "$work/resumedir.txt")"

# A modified tree is named in the folder; on a GPU, paper.yaml, and --publish copies to results/h100/.
DIRTY=true run gpu "$work/gpu" --publish
[ $rc = 0 ] || fail "GPU run exits $rc: $(cat "$work/gpu.txt")"
[ -f "$repo/runs/$today-0123456-dirty/paper.csv" ] || fail "dirty GPU run folder: $(ls "$repo/runs")"
[ -f "$repo/results/h100/paper.csv" ] && [ -f "$repo/results/h100/paper.json" ] || fail "--publish: $(cat "$work/gpu.txt")"

# Bad arguments are named.
run badconfig "$work/bin" configs/none.yaml
[ $rc = 2 ] && grep -q "config 'configs/none.yaml' does not exist" "$work/badconfig.txt" || fail "missing config: exit $rc"
rm -rf "$repo/runs"
run noruns "$work/bin" --resume
[ $rc = 2 ] && grep -q 'no run folder under runs/' "$work/noruns.txt" || fail "--resume without runs/: exit $rc"

checks_done run.sh
