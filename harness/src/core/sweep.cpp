#include "sweep.hpp"

#include <stdexcept>

namespace sdtw::bench {

std::string shard_stem(const std::string& name, const Shard& s) {
  return s.n > 1 ? name + ".shard-" + std::to_string(s.k) + "-of-" + std::to_string(s.n) : name;
}

Shard parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  Shard s;
  try {
    if (slash == std::string::npos) throw std::invalid_argument("no slash");
    size_t used = 0;
    s.k = std::stoi(text.substr(0, slash), &used);
    if (used != slash) throw std::invalid_argument("junk");
    const auto rest = text.substr(slash + 1);
    s.n = std::stoi(rest, &used);
    if (used != rest.size()) throw std::invalid_argument("junk");
  } catch (const std::out_of_range&) {
    throw std::invalid_argument("--shard K/N needs K and N of at most 2147483647, got '" + text + "'");
  } catch (const std::exception&) {
    throw std::invalid_argument("--shard expects K/N (e.g. 2/4), got '" + text + "'");
  }
  if (s.n < 1 || s.k < 1 || s.k > s.n) throw std::invalid_argument("--shard K/N needs 1 <= K <= N, got '" + text + "'");
  return s;
}

size_t shard_of(const Point& p, size_t n) { return static_cast<size_t>(p.index) % n; }

std::vector<Point> select_shard(const std::vector<Point>& points, const Shard& s) {
  std::vector<Point> out;
  for (const auto& p : points)
    if (shard_of(p, static_cast<size_t>(s.n)) + 1 == static_cast<size_t>(s.k)) out.push_back(p);
  return out;
}

SweepSummary run_sweep(const std::vector<Point>& points, ResultsStore& store, const Runner& runner, Progress* progress,
                       long limit) {
  SweepSummary sum;
  sum.selected = points.size();
  for (const auto& p : points) {
    if (store.has(point_key(p))) {
      ++sum.skipped;
      continue;
    }
    if (limit >= 0 && static_cast<long>(sum.ran) >= limit) break;
    if (progress) progress->start(p);
    Result r = runner(p);
    r.point.grid = p.grid;
    r.point.index = p.index;
    store.append(r);
    ++sum.ran;
    ++sum.dispositions[r.disposition];
    if (progress) progress->finish(r);
  }
  if (progress) progress->done();
  return sum;
}

}  // namespace sdtw::bench
