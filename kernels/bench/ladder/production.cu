// Rungs d to g: the production kernels through their public API (soft_dtw.hpp), float32, gamma 1,
// at the kernels issue's points. (d) the values-only forward: strips of 32 rows handing their last
// row to the strip below; (d') the forward that saves the state; (e) + the backward sweep, through
// cost_backward, which writes E (4 B per cell) where the fused backward would hand it to the
// gradient product; (f) the full fused step, forward + backward with the gradient product; (g) the
// full step with a Sakoe-Chiba band of N / 4 and the even pairs' lengths cut to N - N / 8.
// Cells are B x N x M in every rung, band and lengths included, so that (g) compares with (f).
#include <string>
#include <vector>

#include "ladder.hpp"
#include "sdtw/kernels/soft_dtw.hpp"

namespace sdtw::kernels::ladder {
namespace {

struct Point {
  int64_t B, N, D;
};

void run_point(const Settings& settings, const Point& pt) {
  Buffers buf;
  const int64_t B = pt.B, N = pt.N, D = pt.D;
  Problem p{B, N, N, D, 1.0};
  float* x = buf.alloc<float>(B * N * D);
  float* y = buf.alloc<float>(B * N * D);
  fill_uniform(x, B * N * D, 0x9e3779b9u);
  fill_uniform(y, B * N * D, 0x85ebca6bu);
  float* values = buf.alloc<float>(B);
  float* dvalues = buf.alloc<float>(B);
  const std::vector<float> ones(B, 1.0f);
  check(cudaMemcpy(dvalues, ones.data(), B * sizeof(float), cudaMemcpyHostToDevice));
  float* gx = buf.alloc<float>(B * N * D);
  float* gy = buf.alloc<float>(B * N * D);
  char* workspace = buf.alloc<char>(workspace_bytes<float>(p));
  const auto rung = [&](const char* name, const char* previous, const char* mode, const char* label) {
    Rung r{name, label, mode, previous, B, N, N, D};
    r.cells = B * N * N;
    return r;
  };
  {
    char* values_workspace = buf.alloc<char>(values_workspace_bytes<float>(p));
    emit(rung("d", "b", "values", "+ strips and their hand-off (production values-only forward)"),
         time_ms([&] { sqeuclidean_values<float>(p, x, y, values, values_workspace, nullptr); }, settings), settings);
  }
  emit(rung("d'", "d", "forward", "+ state saved (production forward)"),
       time_ms([&] { sqeuclidean_forward<float>(p, x, y, values, workspace, nullptr); }, settings), settings);
  {
    Buffers e_buf;
    float* E = e_buf.alloc<float>(B * N * N);
    emit(rung("e", "d'", "forward+sweep", "+ backward sweep (E written out, 4 B per cell)"), time_ms([&] {
      sqeuclidean_forward<float>(p, x, y, values, workspace, nullptr);
      cost_backward<float>(p, dvalues, E, workspace, nullptr);
    }, settings), settings);
  }
  const auto step = [&] {
    sqeuclidean_forward<float>(p, x, y, values, workspace, nullptr);
    sqeuclidean_backward<float>(p, x, y, dvalues, gx, gy, workspace, nullptr);
  };
  emit(rung("f", "e", "step", "+ gradient product (the full fused step)"), time_ms(step, settings), settings);
  std::vector<int64_t> lengths(B);
  for (int64_t b = 0; b < B; ++b) lengths[b] = b % 2 == 0 ? N - N / 8 : N;
  int64_t* len = buf.alloc<int64_t>(B);
  check(cudaMemcpy(len, lengths.data(), B * sizeof(int64_t), cudaMemcpyHostToDevice));
  p.bandwidth = N / 4;
  p.x_len = len;
  p.y_len = len;
  Rung g = rung("g", "f", "step", "+ band N/4 and per-pair lengths (N - N/8 on even pairs)");
  g.bandwidth = p.bandwidth;
  g.lengths = true;
  emit(g, time_ms(step, settings), settings);
}

// The values of every pair of `rows` x sequences with `rows` y sequences, through pair indices.
void run_pairwise(const Settings& settings, int64_t rows, int64_t N, int64_t D) {
  Buffers buf;
  Problem p{rows * rows, N, N, D, 1.0};
  float* x = buf.alloc<float>(rows * N * D);
  float* y = buf.alloc<float>(rows * N * D);
  fill_uniform(x, rows * N * D, 0x9e3779b9u);
  fill_uniform(y, rows * N * D, 0x85ebca6bu);
  std::vector<int64_t> xi(p.batch), yi(p.batch);
  for (int64_t b = 0; b < p.batch; ++b) xi[b] = b / rows, yi[b] = b % rows;
  int64_t* x_index = buf.alloc<int64_t>(p.batch);
  int64_t* y_index = buf.alloc<int64_t>(p.batch);
  check(cudaMemcpy(x_index, xi.data(), p.batch * sizeof(int64_t), cudaMemcpyHostToDevice));
  check(cudaMemcpy(y_index, yi.data(), p.batch * sizeof(int64_t), cudaMemcpyHostToDevice));
  p.x_index = x_index;
  p.y_index = y_index;
  float* values = buf.alloc<float>(p.batch);
  char* workspace = buf.alloc<char>(values_workspace_bytes<float>(p));
  Rung r{"d", "+ a pair's strips and their hand-off (production values-only forward, every pair of two sets: one pair a thread)", "cdist", "b",
         p.batch, N, N, D};
  r.cells = p.batch * N * N;
  emit(r, time_ms([&] { sqeuclidean_values<float>(p, x, y, values, workspace, nullptr); }, settings), settings);
}

}  // namespace

void run_production(const Settings& settings) {
  const std::vector<Point> full = {{1024, 1024, 64}, {16, 8192, 16}, {1, 65536, 8}, {16, 128, 64}, {32, 512, 64}};
  const std::vector<Point> quick = {{16, 128, 64}, {32, 512, 64}, {16, 2048, 16}};
  for (const Point& pt : settings.quick ? quick : full) run_point(settings, pt);
  run_pairwise(settings, settings.quick ? 256 : 1024, 128, 8);
}

}  // namespace sdtw::kernels::ladder
