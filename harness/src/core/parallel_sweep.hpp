#pragma once
// One sweep over several GPUs: one worker process per GPU (CUDA_VISIBLE_DEVICES), each running
// the sweep's shard K/N into its own file, then `merge` into the one result file. Rerunning
// resumes: the rows already merged are dealt back to the shards first, so a worker that died
// loses nothing and its remaining points run again.
#include <string>
#include <vector>

#include "csv.hpp"
#include "point.hpp"

namespace sdtw::bench {

struct ParallelSweep {
  std::string exe;                       // the sdtw-bench executable the workers run
  std::vector<std::string> worker_args;  // e.g. {"sweep", "configs/x.yaml", "--no-table"}; --out and --shard are added
  std::vector<std::string> gpus;         // one worker per entry, given as its CUDA_VISIBLE_DEVICES
  std::string csv;                       // the merged result, dir/<name>.csv (its JSON and runs log beside it)
  std::string name;                      // the sweep's name (the shard files' stem)
  std::vector<Point> points;             // every point of the sweep, with its index
  bool fresh = false;                    // start over: the merged files and any leftovers are removed
};

struct WorkerOutcome {
  std::string gpu;
  int status = 0;  // exit status; 128 + signal when killed
  std::string log;
};

struct ParallelOutcome {
  Table merged;                          // the merged file's rows
  std::vector<WorkerOutcome> workers;
  std::vector<std::string> repairs;      // rows set aside while merging (row_check.hpp)
};

// Locks `csv` for the whole run (another sweep into it fails with LockHeld). Workers' files live
// in dir/<name>.workers/ and are removed once merged; a failed worker's log is kept there.
ParallelOutcome run_parallel_sweep(const ParallelSweep& s);

// In a worker (SDTW_BENCH_WORKER=1, set by run_parallel_sweep): die with the sweep that started it,
// so a worker never outlives the sweep that dealt its points.
void die_with_parent_if_worker();

// Parses "0,1,3" (distinct non-negative integers); throws std::invalid_argument naming --gpus.
std::vector<std::string> parse_gpu_list(const std::string& text);

}  // namespace sdtw::bench
