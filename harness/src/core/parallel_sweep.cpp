#include "parallel_sweep.hpp"

#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

#include "lock.hpp"
#include "merge.hpp"
#include "row.hpp"
#include "store.hpp"
#include "sweep.hpp"

extern char** environ;

namespace sdtw::bench {

namespace fs = std::filesystem;

namespace {

// Every file a store leaves beside a CSV.
void remove_result_files(const std::string& csv) {
  for (const auto& f : {csv, json_sibling(csv), runs_log_path(csv), lock_path(csv)}) fs::remove(f);
}

// Not std::filesystem::remove_all: libtorch.so exports its own copy of it, which the dynamic
// linker binds in place of libstdc++'s, and on the GPU machine that copy calls a null pointer.
void remove_tree(const fs::path& dir) {
  const auto remove_one = [](const char* path, const struct stat*, int, struct FTW*) {
    ::remove(path);  // a file that stays is no reason to keep the others; the check below names it
    return 0;
  };
  ::nftw(dir.c_str(), remove_one, 16, FTW_DEPTH | FTW_PHYS);
  if (fs::exists(dir)) throw std::runtime_error("cannot remove " + dir.string() + ": " + std::strerror(errno));
}

// posix_spawn, not fork: the parent may hold CUDA and torch threads, and a fork runs every
// library's atfork handlers in it; the worker's only inheritance is its environment and log.
pid_t spawn(const std::vector<std::string>& argv, const std::string& gpu, const std::string& log) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "CUDA_VISIBLE_DEVICES=", 21) != 0 && std::strncmp(*e, "SDTW_BENCH_WORKER=", 18) != 0)
      env.emplace_back(*e);
  env.push_back("CUDA_VISIBLE_DEVICES=" + gpu);
  env.push_back("SDTW_BENCH_WORKER=1");
  std::vector<char*> args, envp;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start the worker " + argv[0] + ": " + std::strerror(rc));
  return pid;
}

}  // namespace

std::vector<std::string> parse_gpu_list(const std::string& text) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string id = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos)
      throw std::invalid_argument("--gpus expects 'all' or GPU indices like 0,1,3, got '" + text + "'");
    if (!seen.insert(id).second) throw std::invalid_argument("--gpus lists GPU " + id + " twice");
    out.push_back(id);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

ParallelOutcome run_parallel_sweep(const ParallelSweep& s) {
  if (s.gpus.empty()) throw std::invalid_argument("--gpus: no GPU to run on");
  const fs::path dir = fs::path(s.csv).parent_path();
  const OutputLock lock(lock_path(s.csv), s.csv);  // creates dir
  const fs::path work = dir / (s.name + ".workers");
  ParallelOutcome out;
  if (s.fresh) {
    remove_tree(work);
    for (const auto& f : {s.csv, json_sibling(s.csv), runs_log_path(s.csv)}) fs::remove(f);
  }
  // Leftovers of a run that was killed before its merge: merged first, so nothing is lost.
  std::optional<Table> before;  // the merged file's rows, once read
  if (fs::exists(work)) {
    std::vector<std::string> inputs;
    if (fs::exists(s.csv)) inputs.push_back(s.csv);
    for (const auto& e : fs::directory_iterator(work))
      if (e.path().extension() == ".csv" && e.path().string().find(".rejected.") == std::string::npos)
        inputs.push_back(e.path().string());
    if (inputs.size() > (fs::exists(s.csv) ? 1u : 0u)) before = merge_files(inputs, s.csv, &out.repairs);
    remove_tree(work);
  }
  fs::create_directories(work);

  // Deal the merged rows back to the shards that own their points, so each worker resumes.
  const size_t n = s.gpus.size();
  std::map<std::string, size_t> owner;  // point key -> shard (0-based), by the workers' own rule
  for (const auto& p : s.points) owner[point_key(p)] = shard_of(p, n);
  std::vector<std::string> shard_csv;
  for (size_t k = 0; k < n; ++k) {
    const Shard shard{static_cast<int>(k + 1), static_cast<int>(n)};
    shard_csv.push_back((work / (shard_stem(s.name, shard) + ".csv")).string());
  }
  if (!before && fs::exists(s.csv)) before = read_results_repairing(s.csv, &out.repairs);
  if (before) {
    const Table& merged = *before;
    std::vector<Table> dealt(n, Table{merged.header, {}});
    for (size_t r = 0; r < merged.rows.size(); ++r) {
      const auto it = owner.find(row_key(merged, r));
      if (it != owner.end()) dealt[it->second].rows.push_back(merged.rows[r]);
    }
    for (size_t k = 0; k < n; ++k)
      if (!dealt[k].rows.empty()) write_csv(shard_csv[k], dealt[k]);
  }

  std::vector<pid_t> pids;
  for (size_t k = 0; k < n; ++k) {
    std::vector<std::string> argv = {s.exe};
    argv.insert(argv.end(), s.worker_args.begin(), s.worker_args.end());
    argv.insert(argv.end(), {"--out", work.string(), "--shard", std::to_string(k + 1) + "/" + std::to_string(n)});
    WorkerOutcome w;
    w.gpu = s.gpus[k];
    w.log = (work / ("worker-" + std::to_string(k + 1) + "-gpu" + s.gpus[k] + ".log")).string();
    pids.push_back(spawn(argv, w.gpu, w.log));
    out.workers.push_back(w);
  }
  for (size_t k = 0; k < n; ++k) {
    int status = 0;
    while (::waitpid(pids[k], &status, 0) < 0 && errno == EINTR) {
    }
    out.workers[k].status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  // Whatever the workers wrote is merged, finished or not; the shard rows come first (newest).
  std::vector<std::string> inputs;
  for (const auto& c : shard_csv)
    if (fs::exists(c)) inputs.push_back(c);
  if (fs::exists(s.csv)) inputs.push_back(s.csv);
  if (!inputs.empty()) out.merged = merge_files(inputs, s.csv, &out.repairs);
  for (const auto& c : shard_csv) remove_result_files(c);
  bool all_ok = true;
  for (const auto& w : out.workers) all_ok = all_ok && w.status == 0;
  if (all_ok) remove_tree(work);
  return out;
}

void die_with_parent_if_worker() {
  const char* worker = std::getenv("SDTW_BENCH_WORKER");
  if (worker && std::string(worker) == "1") ::prctl(PR_SET_PDEATHSIG, SIGTERM);
}

}  // namespace sdtw::bench
