#pragma once
// The sweep loop: shard selection, resume (skip points whose key is already a row), running
// each point, appending its row, progress.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "config.hpp"
#include "progress.hpp"
#include "store.hpp"

namespace sdtw::bench {

struct Shard {
  int k = 1;  // 1-based
  int n = 1;
};
// Parses "K/N" with 1 <= K <= N; throws std::invalid_argument otherwise.
Shard parse_shard(const std::string& text);
// The stem of a shard's result files: the sweep's name, with ".shard-K-of-N" when N > 1.
std::string shard_stem(const std::string& name, const Shard& s);
// The shard (0-based: index % n) of n that owns the point; Shard::k is this + 1.
size_t shard_of(const Point& p, size_t n);
// The points shard s owns, in order.
std::vector<Point> select_shard(const std::vector<Point>& points, const Shard& s);

using Runner = std::function<Result(const Point&)>;

struct SweepSummary {
  size_t selected = 0;  // points in this shard
  size_t skipped = 0;   // already in the results file
  size_t ran = 0;
  std::map<std::string, size_t> dispositions;  // of the rows run now
};

// Runs the points not yet in `store`, at most `limit` of them (< 0: all). The runner must not
// throw for a failing point (it returns a row with a disposition); an exception stops the sweep.
SweepSummary run_sweep(const std::vector<Point>& points, ResultsStore& store, const Runner& runner, Progress* progress,
                       long limit = -1);

}  // namespace sdtw::bench
