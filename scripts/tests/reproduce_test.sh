#!/usr/bin/env bash
# ctest sdtw_reproduce_parts: scripts/reproduce.sh on a machine faked through PATH (nvidia-smi,
# cmake, ctest, compute-sanitizer and python3 are stubs that log their arguments and write small
# outputs; SDTW_BUILD_DIR holds stub binaries): the part list and its budget, the refusal without
# a GPU, --cpu, part selection, a sweep stopped and resumed row by row, skipping what is done at
# this commit, --force, another commit, and a part stopped at its time limit.
set -euo pipefail
script=$(cd "$(dirname "$0")/.." && pwd)/reproduce.sh
# shellcheck source=scripts/tests/checks.sh
source "$(dirname "$0")/checks.sh"

mkdir -p "$work/bin" "$work/nogpu" "$work/build/harness" "$work/build/kernels/bench" "$work/build/kernels/tests"
log=$work/calls.log
stub() {  # stub FILE BODY: an executable logging "name args" to the calls log, then BODY
  printf '#!/usr/bin/env bash\necho "$(basename "$0") $*" >>%s\n%s\n' "$log" "$2" >"$1"
  chmod +x "$1"
}
out_of='out=; prev=; for a in "$@"; do [ "$prev" = --out ] && out=$a; prev=$a; done'
stub "$work/bin/nvidia-smi" 'case "$*" in -L) echo "GPU 0: Fake H100 (UUID: x)" ;; *compute_cap*) echo 9.0 ;;
  *name*) echo "NVIDIA H100 80GB HBM3" ;; esac'
for bin in "$work/bin" "$work/nogpu"; do
  stub "$bin/cmake" 'exit 0'
  stub "$bin/ctest" 'echo "100% tests passed, 0 tests failed out of 3"'
  stub "$bin/compute-sanitizer" 'echo "========= ERROR SUMMARY: 0 errors"'
  # python3: each tool writes a CSV with two rows where it is told to.
  stub "$bin/python3" "$out_of"'
case "$*" in
  *-m\ baselines.originals*) f=originals.csv ;; *step.py*) f=step.csv ;; *features.py*) f=features.csv ;;
  *ladder_report.py*) prev=; for a in "$@"; do [ "$prev" = --csv ] && out=$(dirname "$a"); prev=$a; done; f=ladder.csv ;;
  *checkpoint_report.py*) prev=; for a in "$@"; do [ "$prev" = --csv ] && out=$(dirname "$a"); prev=$a; done; f=checkpoint.csv ;;
  *report.py*) prev=; for a in "$@"; do [ "$prev" = --csv ] && out=$(dirname "$a"); prev=$a; done; f=kernels.csv ;;
  *sdtw_results.check_accuracy*) out=$(dirname "$4"); f=$(basename "$4") ;;
  *) exit 0 ;;
esac
printf "tool,impl\nx,a\nx,b\n" >"$out/$f"'
done
# sdtw-bench: --sweep appends a row per point of 5 not yet in paper.csv (all again with --fresh),
# and stops after STOP_AFTER rows when that is set; check writes its --accuracy-csv table.
stub "$work/build/harness/sdtw-bench" "$out_of"'
if [ "$1" = check ]; then
  prev=; for a in "$@"; do [ "$prev" = --accuracy-csv ] && printf "impl\nacc\n" >"$a"; prev=$a; done; exit 0
fi
csv=$out/paper.csv
case " $* " in *" --fresh "*) rm -f "$csv" ;; esac
[ -f "$csv" ] || echo "point" >"$csv"
[ -n "${SLEEP:-}" ] && sleep "$SLEEP"
n=$(($(wc -l <"$csv") - 1))
while [ $n -lt 5 ]; do
  [ -n "${STOP_AFTER:-}" ] && [ $n -ge "$STOP_AFTER" ] && exit 3
  echo "$n" >>"$csv"; n=$((n + 1))
done
echo "sdtw-bench: ran some"'
# Without a GPU nvidia-smi may still be installed (as on a GPU machine, where this test also runs).
stub "$work/nogpu/nvidia-smi" 'echo "NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver." >&2; exit 9'
stub "$work/build/kernels/bench/sdtw_kernels_bench" 'exit 0'
stub "$work/build/kernels/bench/sdtw_kernels_checkpoint_bench" 'exit 0'
stub "$work/build/kernels/bench/sdtw_kernels_ladder" 'echo "{\"device\": \"Fake H100\"}"'
stub "$work/build/kernels/tests/sdtw_kernels_tests" 'echo "[ accuracy ] N=64 gamma=1 grad_rel_l2=1e-6"; echo "[  PASSED  ] 4 tests."'

run() {  # run NAME PATHDIR ARGS...: reproduce.sh into $work/out; output in $work/NAME.txt, exit status in rc
  local name=$1 bin=$2
  shift 2
  rc=0
  env PATH="$bin:/usr/bin:/bin" SDTW_BUILD_DIR="$work/build" SDTW_SKIP_DEPS=1 SDTW_GIT_COMMIT="${COMMIT:-c0ffee1111}" \
    SDTW_GIT_DIRTY=false bash "$script" --out "$work/out" --paper "$work/paper" "$@" >"$work/$name.txt" 2>&1 || rc=$?
}
calls() { grep -c "$1" "$log" || true; }
state() { awk -F'\t' -v p="$1" '$1 == p { s = $2 } END { print s }' "$work/out/reproduce.tsv"; }

# --list: every part, each within 9 minutes, 32.5 minutes in all (quick: 6.2).
run list "$work/nogpu" --list
[ $rc = 0 ] || fail "--list exits $rc"
for p in build sweep originals step features kernels checkpoint ladder accuracy gpu-tests sanitizer paper; do
  grep -q "^$p " "$work/list.txt" || fail "--list lacks $p"
done
awk '$2 ~ /min$/ && ($2 + 0 > 9 || $3 + 0 > 9) { bad = 1 } END { exit bad }' "$work/list.txt" || fail "a part over 9 minutes"
grep -q 'expected in total on one H100: 32.5 min (quick: 6.2 min)' "$work/list.txt" || fail "--list total: $(tail -1 "$work/list.txt")"

# Without a GPU: a clear refusal, nothing run; --cpu runs build and paper only.
run nogpu "$work/nogpu"
[ $rc = 2 ] && grep -q 'no GPU here' "$work/nogpu.txt" || fail "without a GPU: exit $rc, $(cat "$work/nogpu.txt")"
[ ! -e "$work/out" ] || fail "without a GPU the output folder was made"
run cpu "$work/nogpu" --cpu
[ $rc = 0 ] || fail "--cpu exits $rc: $(cat "$work/cpu.txt")"
[ "$(state build)" = "done" ] && [ "$(state paper)" = "done" ] || fail "--cpu: build $(state build), paper $(state paper)"
grep -q '^sweep' "$work/out/reproduce.tsv" && fail "--cpu ran the sweep"
grep -q 'python3 paper/make_paper.py --results' "$log" || fail "the paper part did not call make_paper.py"
run cpu-sweep "$work/nogpu" --cpu --part sweep
[ $rc = 2 ] && grep -q 'runs without a GPU' "$work/cpu-sweep.txt" || fail "--cpu --part sweep: exit $rc"

# Part selection: unknown names are refused; the pipeline's order whatever the order asked.
run bogus "$work/bin" --part sweep,bogus
[ $rc = 2 ] && grep -q "unknown part 'bogus'" "$work/bogus.txt" || fail "--part bogus: exit $rc"
rm -rf "$work/out"
: >"$log"
STOP_AFTER=2 run stopped "$work/bin" --part paper,sweep
[ $rc = 1 ] || fail "a stopped sweep exits $rc"
[ "$(state sweep)" = "failed (exit 3)" ] || fail "stopped sweep recorded as '$(state sweep)'"
[ "$(tail -n +2 "$work/out/paper.csv" | wc -l)" = 2 ] || fail "stopped sweep kept $(wc -l <"$work/out/paper.csv") lines"
grep -q 'sdtw-bench --sweep configs/paper.yaml .*--fresh' "$log" || fail "a first sweep did not start afresh"
[ "$(grep -n '' "$log" | grep -E 'sdtw-bench|make_paper' | head -1 | grep -c sdtw-bench)" = 1 ] ||
  fail "paper ran before the sweep"
grep -Eq '^sweep +failed \(exit 3\) +[0-9]+ +2$' "$work/stopped.txt" || fail "summary: $(tail -4 "$work/stopped.txt")"

# Run again: the sweep goes on without --fresh, row by row, to 5 rows.
: >"$log"
run resumed "$work/bin" --part sweep,paper
[ $rc = 0 ] || fail "resume exits $rc: $(cat "$work/resumed.txt")"
grep -q -- '--fresh' "$log" && fail "resume passed --fresh"
[ "$(tail -n +2 "$work/out/paper.csv" | tr '\n' ' ')" = "0 1 2 3 4 " ] || fail "resumed rows: $(cat "$work/out/paper.csv")"
grep -Eq '^sweep +done +[0-9]+ +5$' "$work/resumed.txt" || fail "summary after resume: $(tail -4 "$work/resumed.txt")"

# Again: both done at this commit, skipped; --force runs the sweep afresh; another commit too.
: >"$log"
run again "$work/bin" --part sweep,paper
[ $rc = 0 ] && [ "$(calls sdtw-bench)" = 0 ] && [ "$(calls make_paper)" = 0 ] || fail "done parts ran again"
grep -Eq '^sweep +skipped \(done\) +- +5$' "$work/again.txt" || fail "summary of skipped: $(tail -4 "$work/again.txt")"
run force "$work/bin" --part sweep --force
grep -q 'sdtw-bench --sweep .*--fresh' "$log" || fail "--force did not start afresh"
: >"$log"
COMMIT=beef222222 run newcommit "$work/bin" --part sweep
grep -q 'sdtw-bench --sweep .*--fresh' "$log" || fail "another commit did not start afresh"

# A part over its limit stops, is recorded as timeout, and the run says so.
SLEEP=5 SDTW_PART_LIMIT_S=1 COMMIT=fade333333 run slow "$work/bin" --part sweep
[ $rc = 1 ] && [ "$(state sweep)" = timeout ] || fail "slow part: exit $rc, state $(state sweep)"

# --quick: the small configs.
rm -rf "$work/out"
: >"$log"
run quick "$work/bin" --quick --part sweep,originals,step,ladder,paper
[ $rc = 0 ] || fail "--quick exits $rc: $(cat "$work/quick.txt")"
grep -q 'sdtw-bench --sweep configs/paper-quick.yaml' "$log" || fail "--quick sweep: $(grep sdtw-bench "$log")"
grep -q 'python3 -m baselines.originals --quick' "$log" || fail "--quick originals"
grep -q 'sdtw_kernels_ladder --quick' "$log" || fail "--quick ladder"
grep -q 'python3 pytorch/bench/step.py --out .* --no-compile' "$log" || fail "--quick step without torch.compile"
grep -q "make_paper.py --results $work/out --sweep $work/out/paper-quick.csv" "$log" || fail "--quick paper"

# Every part on the faked GPU: all done, their files written, a summary row each.
rm -rf "$work/out"
mkdir -p "$work/out"
echo old >"$work/out/chain_probe.txt"
run all "$work/bin"
grep -q 'written by no part, so not measured at this commit: chain_probe.txt $' "$work/all.txt" ||
  fail "a file no part writes was not named: $(tail -3 "$work/all.txt")"
[ $rc = 0 ] || fail "all parts exit $rc: $(cat "$work/all.txt")"
for f in paper.csv grad-accuracy.csv accuracy.txt originals.csv step.csv features.csv kernels.csv checkpoint.csv ladder.csv gpu-tests.txt \
  sanitizer.txt; do
  [ -s "$work/out/$f" ] || fail "all parts: $f not written"
done
[ "$(grep -cE '^[a-z-]+ +done ' "$work/all.txt")" = 12 ] || fail "all parts summary: $(tail -13 "$work/all.txt")"
grep -q 'ERROR SUMMARY: 0 errors' "$work/out/sanitizer.txt" || fail "sanitizer summary: $(cat "$work/out/sanitizer.txt")"
grep -q "python3 paper/results_readme.py $work/out" "$log" || fail "the results README was not rewritten at the end"
grep -q 'python3 -m baselines.originals --config configs/originals-reproduce.yaml' "$log" || fail "originals command"
grep -q 'python3 pytorch/bench/features.py --out .* --reps 2' "$log" || fail "features command"
grep -q 'python3 paper/accuracy_grid.py --out .*accuracy-grid.csv kernels-grid=' "$log" || fail "accuracy grid command"
grep -q 'sdtw-bench check --seed 1 --accuracy-csv .*/logs/check-accuracy.csv' "$log" || fail "check command"
grep -q 'python3 -m sdtw_results.check_accuracy .*/logs/check-accuracy.csv .*/grad-accuracy.csv --seed 1' "$log" ||
  fail "the check's table is not rewritten as a results file"
grep -q 'python3 kernels/bench/report.py .* --driver .* --cuda ' "$log" || fail "kernels report command"
grep -q 'python3 kernels/bench/ladder_report.py .*/logs/ladder.jsonl .* --csv .*/ladder.csv' "$log" || fail "ladder report command"
grep -q 'python3 kernels/bench/checkpoint_report.py .*/logs/checkpoint_bench.json .* --csv .*/checkpoint.csv' "$log" \
  || fail "checkpoint report command"
grep -q 'sdtw_kernels_tests --gtest_filter=\*AccuracyGrid\*/2' "$log" || fail "known worst input not replayed"

checks_done reproduce.sh
