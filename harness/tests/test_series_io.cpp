// Series files for `eval`: .npy (v1 header, f4/f8, 1-D and 2-D) and CSV with or without a header;
// plus CSV quoting round trips.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "csv.hpp"
#include "metadata.hpp"
#include "series_io.hpp"

using namespace sdtw::bench;

namespace {

std::string tmp(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("sdtw_bench_io_" + std::to_string(::getpid()) + "_" + name)).string();
}

template <typename T>
void write_npy(const std::string& path, const std::string& descr, const std::string& shape, const std::vector<T>& v) {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  const uint16_t len = static_cast<uint16_t>(header.size());
  out.write(reinterpret_cast<const char*>(&len), 2);
  out << header;
  out.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(T)));
}

}  // namespace

TEST(BenchSeriesIO, Npy2DFloat32And1DFloat64) {
  const auto a = tmp("a.npy"), b = tmp("b.npy");
  write_npy<float>(a, "<f4", "(3, 2)", {1, 2, 3, 4, 5, 6.5f});
  write_npy<double>(b, "<f8", "(4,)", {0.25, -1, 2, 3});
  const auto sa = read_series(a);
  EXPECT_EQ(sa.rows, 3);
  EXPECT_EQ(sa.cols, 2);
  EXPECT_EQ(sa.data, (std::vector<double>{1, 2, 3, 4, 5, 6.5}));
  const auto sb = read_series(b);
  EXPECT_EQ(sb.rows, 4);
  EXPECT_EQ(sb.cols, 1);
  EXPECT_EQ(sb.data[0], 0.25);
  write_npy<double>(b, "<f8", "(4,)", {0.25});  // truncated data
  EXPECT_THROW(read_series(b), std::runtime_error);
  write_npy<int16_t>(b, "<i2", "(1,)", {1});
  EXPECT_THROW(read_series(b), std::runtime_error);
  std::filesystem::remove(a);
  std::filesystem::remove(b);
}

TEST(BenchSeriesIO, CsvWithAndWithoutHeader) {
  const auto a = tmp("a.csv");
  {
    std::ofstream(a) << "t0,t1\n1,2\n3,4\n";
  }
  auto s = read_series(a);
  EXPECT_EQ(s.rows, 2);
  EXPECT_EQ(s.cols, 2);
  EXPECT_EQ(s.data, (std::vector<double>{1, 2, 3, 4}));
  {
    std::ofstream(a) << "1.5\n-2\n1e-3\n";
  }
  s = read_series(a);
  EXPECT_EQ(s.rows, 3);
  EXPECT_EQ(s.cols, 1);
  EXPECT_EQ(s.data[2], 1e-3);
  {
    std::ofstream(a) << "1.0, +2\n 3 ,4e-310\n";  // spaces, a sign and a subnormal, as people write them
  }
  s = read_series(a);
  EXPECT_EQ(s.data, (std::vector<double>{1, 2, 3, 4e-310}));
  {
    std::ofstream(a) << "1,2\n3,x\n";
  }
  EXPECT_THROW(read_series(a), std::runtime_error);
  write_series_csv(a, Series{2, 1, {0.1, 2}});
  s = read_series(a);
  EXPECT_EQ(s.data, (std::vector<double>{0.1, 2}));
  std::filesystem::remove(a);
}

TEST(BenchCsv, QuotingRoundTrip) {
  const std::vector<std::string> fields = {"plain", "with,comma", "with \"quotes\"", "two\nlines", ""};
  const auto t = parse_csv(csv_line({"a", "b", "c", "d", "e"}) + csv_line(fields), "mem");
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.rows[0], fields);
  // A partial last line is dropped only on request.
  EXPECT_EQ(parse_csv("a,b\n1,2\n3", "mem", true).rows.size(), 1u);
  EXPECT_THROW(parse_csv("a,b\n1,2\n3", "mem", false), std::runtime_error);  // wrong width
}

TEST(BenchMetadata, HashAndSlug) {
  EXPECT_EQ(fnv1a64_hex(""), "cbf29ce484222325");
  EXPECT_EQ(fnv1a64_hex("a"), "af63dc4c8601ec8c");
  EXPECT_EQ(gpu_slug("NVIDIA H100 80GB HBM3"), "h100");
  EXPECT_EQ(gpu_slug("NVIDIA H200"), "h200");
  EXPECT_EQ(gpu_slug("NVIDIA A100-SXM4-40GB"), "a100");
  EXPECT_EQ(gpu_slug("NVIDIA GeForce RTX 4090"), "geforce-rtx-4090");
  EXPECT_EQ(gpu_slug(""), "cpu");
}
