// Where the time of the dependent chain goes, to tell a strip's steps from its hand-offs: forward and backward
// timed apart (CUDA events, median of 22 runs after 3) at B = 32, D = 64, at shapes that separate a
// lone strip's time per step (N = 32, M 512 -> 2048), a hop between strips (M = 512, N 512 ->
// 2048) and the pace of a strip that follows another (N = 512, M 512 -> 2048); and at N = M = 2048,
// where fused and unfused part (issue 13's B32 N2048 D64 point).
// With --chain, the pace (M 512 -> 2048) at N = 32, 64, ..., 512 instead: whether a strip's pace
// depends on how many strips run before it in its pair.
// Run: sdtw_kernels_probe [--chain]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "device_buffers.hpp"
#include "sdtw/kernels/soft_dtw.hpp"

namespace {

using sdtw::kernels::bench::Buffers;
using sdtw::kernels::bench::check;

struct Times {
  double forward_us, backward_us;
};

Times time_directions(int64_t n, int64_t m, bool fused) {
  constexpr int64_t B = 32, D = 64;
  const sdtw::kernels::Problem p{B, n, m, D, 1.0};
  Buffers buf;
  float* x = buf.alloc<float>(B * n * D);
  float* y = buf.alloc<float>(B * m * D);
  float* gx = buf.alloc<float>(B * n * D);
  float* gy = buf.alloc<float>(B * m * D);
  float* values = buf.alloc<float>(B);
  float* dvalues = buf.alloc<float>(B);
  float* cost = fused ? nullptr : buf.alloc<float>(B * n * m);
  float* E = fused ? nullptr : buf.alloc<float>(B * n * m);
  char* workspace = buf.alloc<char>(sdtw::kernels::workspace_bytes<float>(p));
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  std::vector<float> host(B * std::max(n, m) * D);
  for (auto& v : host) v = normal(rng);
  check(cudaMemcpy(x, host.data(), B * n * D * 4, cudaMemcpyHostToDevice));
  check(cudaMemcpy(y, host.data(), B * m * D * 4, cudaMemcpyHostToDevice));
  const std::vector<float> ones(B, 1.0f);
  check(cudaMemcpy(dvalues, ones.data(), B * 4, cudaMemcpyHostToDevice));
  if (!fused) sdtw::kernels::sqeuclidean_cost<float>(p, x, y, cost, nullptr);
  cudaEvent_t e[3];
  for (auto& ev : e) check(cudaEventCreate(&ev));
  std::vector<double> fwd, bwd;
  for (int r = 0; r < 25; ++r) {
    check(cudaEventRecord(e[0]));
    if (fused)
      sdtw::kernels::sqeuclidean_forward<float>(p, x, y, values, workspace, nullptr);
    else
      sdtw::kernels::cost_forward<float>(p, cost, values, workspace, nullptr);
    check(cudaEventRecord(e[1]));
    if (fused)
      sdtw::kernels::sqeuclidean_backward<float>(p, x, y, dvalues, gx, gy, workspace, nullptr);
    else
      sdtw::kernels::cost_backward<float>(p, dvalues, E, workspace, nullptr);
    check(cudaEventRecord(e[2]));
    check(cudaEventSynchronize(e[2]));
    float a = 0, b = 0;
    check(cudaEventElapsedTime(&a, e[0], e[1]));
    check(cudaEventElapsedTime(&b, e[1], e[2]));
    if (r >= 3) {
      fwd.push_back(a * 1e3);
      bwd.push_back(b * 1e3);
    }
  }
  for (auto& ev : e) cudaEventDestroy(ev);
  std::sort(fwd.begin(), fwd.end());
  std::sort(bwd.begin(), bwd.end());
  return {fwd[fwd.size() / 2], bwd[bwd.size() / 2]};
}

void print_chain_paces() {
  std::printf("N forward_unfused backward_unfused forward_fused backward_fused (us per step, M 512 -> 2048)\n");
  for (const int64_t n : {32, 64, 96, 128, 256, 512}) {
    std::printf("%lld", static_cast<long long>(n));
    for (const bool fused : {false, true}) {
      const Times a = time_directions(n, 512, fused), b = time_directions(n, 2048, fused);
      std::printf(" %.3f %.3f", (b.forward_us - a.forward_us) / 1536, (b.backward_us - a.backward_us) / 1536);
    }
    std::printf("\n");
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--chain") {
    print_chain_paces();
    return 0;
  }
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{32, 512}, {32, 2048}, {512, 512}, {2048, 512}, {512, 2048}, {2048, 2048}};
  std::printf("B N M D mode forward_us backward_us\n");
  for (const bool fused : {false, true}) {
    std::map<std::pair<int64_t, int64_t>, Times> t;
    for (const auto& s : shapes) {
      t[s] = time_directions(s.first, s.second, fused);
      std::printf("32 %lld %lld 64 %s %.1f %.1f\n", static_cast<long long>(s.first), static_cast<long long>(s.second),
                  fused ? "fused" : "unfused", t[s].forward_us, t[s].backward_us);
    }
    const auto per = [&](std::pair<int64_t, int64_t> a, std::pair<int64_t, int64_t> b, double count, bool forward) {
      return ((forward ? t[b].forward_us : t[b].backward_us) - (forward ? t[a].forward_us : t[a].backward_us)) / count;
    };
    for (const bool forward : {true, false})
      std::printf("%s %s: lone strip %.3f us/step, following strip %.3f us/step, hop %.1f us\n",
                  fused ? "fused" : "unfused", forward ? "forward" : "backward", per({32, 512}, {32, 2048}, 1536, forward),
                  per({512, 512}, {512, 2048}, 1536, forward), per({512, 512}, {2048, 512}, 48, forward));
  }
}
