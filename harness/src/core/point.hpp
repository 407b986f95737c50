#pragma once
// One measured point of a sweep: every parameter that changes what is computed. The key built
// from these (and nothing else) identifies a row for resume, shard merging and compare.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sdtw::bench {

// The library's keywords beyond the sweep's (sdtw::nn::SoftDtwOptions), set by `sdtw-bench eval` only:
// they are not key columns, so every swept point keeps these defaults (today's problem).
struct ProblemOptions {
  std::string dist = "sqeuclidean";
  std::optional<std::string> global_constraint;  // "sakoe_chiba" or "itakura"
  std::optional<int64_t> sakoe_chiba_radius;
  std::optional<double> itakura_max_slope;
  double warp = 0.0;
  bool subsequence = false;
  // The keywords set away from their defaults as eval's options ("--dist cosine --warp 0.5"); "" when none.
  std::string set_options() const;
};

struct Point {
  std::string impl;    // registry name: ours_fused, ours_unfused, ours_cpu, reference_cpu, maghoumi, ...
  std::string device;  // "cuda" or "cpu"
  std::string dtype = "float32";  // "float32" or "float64"
  int64_t batch = 1;
  int64_t n = 1;
  int64_t m = 1;
  int64_t dim = 1;
  double gamma = 1.0;
  std::optional<int64_t> bandwidth;  // none: full grid
  bool normalize = false;
  ProblemOptions problem;   // not part of the key (see ProblemOptions)
  std::string grid;         // the config block the point came from (not part of the key)
  int64_t index = 0;        // position in the whole sweep's point list (not part of the key)

  int64_t cells() const { return batch * n * m; }
};

// Shortest decimal text that reads back to the same double ("1", "0.1", "0.001").
std::string format_double(double v);

// The key columns, in order, and their values for a point; rows with equal keys are one point.
const std::vector<std::string>& key_columns();
std::vector<std::string> key_values(const Point& p);
std::string point_key(const Point& p);

// The schema's api and mode columns of an implementation: every sdtw-bench implementation is called as
// a function on (x, y); ours_fused and ours_unfused differ in mode, the others have none.
struct ApiMode {
  std::string api, mode;
};
ApiMode api_and_mode(const std::string& impl);

// "ours_fused cuda float32 B=32 N=512 M=512 D=64 gamma=1" (bandwidth/normalize only when set).
std::string describe(const Point& p);

// Every implementation name the harness knows, built or not (config validation uses this list),
// and the device an implementation runs on when the config does not say.
const std::vector<std::string>& known_implementations();
std::string known_implementations_text();  // "ours_fused, ours_unfused, ..." for messages
std::string default_device(const std::string& impl);

}  // namespace sdtw::bench
