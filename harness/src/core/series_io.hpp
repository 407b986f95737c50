#pragma once
// Time series read from files for `sdtw-bench eval`: a .npy array (float32/float64/int32/int64,
// C order, 1-D = N x 1, 2-D = N x D) or a CSV with one time step per line (a non-numeric first
// line is taken as a header), values as float64.
#include <string>
#include <vector>

namespace sdtw::bench {

struct Series {
  long rows = 0;  // time steps
  long cols = 0;  // features
  std::vector<double> data;  // row-major
};

Series read_npy(const std::string& path);
Series read_series_csv(const std::string& path);
Series read_series(const std::string& path);  // by extension: .npy, else CSV
void write_series_csv(const std::string& path, const Series& s);

}  // namespace sdtw::bench
