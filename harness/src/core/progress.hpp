#pragma once
// Sweep progress: a redrawn bar with the current point and an ETA on a terminal, one plain line
// per finished point otherwise (logs, CI).
#include <chrono>
#include <cstdio>
#include <string>

#include "row.hpp"

namespace sdtw::bench {

class Progress {
 public:
  // `total_weight`: sum of point_weight() over the points that will run.
  Progress(size_t total_points, double total_weight, bool tty, std::FILE* out);
  void start(const Point& p);
  void finish(const Result& r);
  void done();
  static double point_weight(const Point& p);  // rough relative cost, for the ETA
  static std::string format_seconds(double s);

 private:
  size_t total_, done_ = 0;
  double total_weight_, done_weight_ = 0;
  bool tty_;
  std::FILE* out_;
  std::chrono::steady_clock::time_point t0_;
  std::string eta() const;
};

}  // namespace sdtw::bench
