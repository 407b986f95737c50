// Times the Hessian-vector product's three launches apart (the forward that saves the weights, the
// R_dot sweep, the E / A sweep) beside the first order's float32 forward on the same cost, CUDA
// events, median of 20 after 3 warm-ups; then, with "accuracy", compares the float32 weights'
// product with the float64 weights' one on the same float32 cost over gamma. Last, the forward and
// an R_dot sweep (on another workspace) on two streams at once. Usage: [SDTW_PARTS_DIM=d]
// hessian_parts B N [M] [accuracy] (M = N by default; N = 32 and a long M give strips that wait on
// no other strip; the costs are uniform on [0, 8), or with SDTW_PARTS_DIM the benchmark's kind).
// Target sdtw_hessian_parts (-DSDTW_BUILD_LAB=ON), or by hand: nvcc -O3 -std=c++17 -arch=sm_90
// --expt-relaxed-constexpr -Ikernels/include lab/kernels/hessian_parts.cu kernels/src/workspace.cpp
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "../../kernels/src/hessian_product.cuh"
#include "../../kernels/src/launch.cuh"

using namespace sdtw::kernels;

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("%s: %s\n", #x, cudaGetErrorString(e)); std::exit(1); } } while (0)

template <typename F>
float median_ms(F&& f) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  for (int k = 0; k < 3; ++k) f();
  std::vector<float> t;
  for (int k = 0; k < 20; ++k) {
    cudaEventRecord(a);
    f();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    t.push_back(ms);
  }
  CHECK(cudaGetLastError());
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

template <typename T, typename State>
void run(int64_t B, int64_t N, int64_t M, const char* name) {
  Problem p{B, N, M, 1, 1.0};
  std::mt19937 rng(1);
  std::uniform_real_distribution<double> cost(0.0, 8.0);
  std::normal_distribution<double> normal;
  std::vector<T> Dh(B * N * M);
  std::vector<double> Gh(B * N * M);
  for (auto& v : Dh) v = static_cast<T>(cost(rng));
  // SDTW_PARTS_DIM=d: the kernel benchmark's kind of cost instead, squared distances of standard
  // normal series in d features (E is then 0 on most of a long pair).
  if (const char* dim = std::getenv("SDTW_PARTS_DIM")) {
    const int64_t d = std::atoll(dim);
    std::vector<float> x(B * N * d), y(B * M * d);
    for (auto& v : x) v = static_cast<float>(normal(rng));
    for (auto& v : y) v = static_cast<float>(normal(rng));
    for (int64_t b = 0; b < B; ++b)
      for (int64_t i = 0; i < N; ++i)
        for (int64_t j = 0; j < M; ++j) {
          float c = 0;
          for (int64_t k = 0; k < d; ++k) {
            const float diff = x[(b * N + i) * d + k] - y[(b * M + j) * d + k];
            c += diff * diff;
          }
          Dh[(b * N + i) * M + j] = static_cast<T>(c);
        }
  }
  for (auto& v : Gh) v = normal(rng);
  T* D; double* G; double* E_dot; double* r_dot; T* values; float* fvalues; int* bad; void* ws; void* fws;
  const detail::WorkspaceLayout w = detail::workspace_layout(p, 16, 32);
  const detail::WorkspaceLayout fw = detail::layout_for<float>(p);
  const std::size_t words = (B * w.strips * M + 31) * 32;
  CHECK(cudaMalloc(&D, Dh.size() * sizeof(T)));
  CHECK(cudaMalloc(&G, Gh.size() * 8));
  CHECK(cudaMalloc(&E_dot, Gh.size() * 8));
  CHECK(cudaMalloc(&r_dot, words * 8));
  CHECK(cudaMalloc(&values, B * sizeof(T)));
  CHECK(cudaMalloc(&fvalues, B * 4));
  CHECK(cudaMalloc(&bad, B * 4));
  CHECK(cudaMemset(bad, 0, B * 4));
  CHECK(cudaMemcpy(D, Dh.data(), Dh.size() * sizeof(T), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(G, Gh.data(), Gh.size() * 8, cudaMemcpyHostToDevice));
  CHECK(cudaMalloc(&ws, w.total));
  CHECK(cudaMalloc(&fws, fw.total));
  float* Df = nullptr;
  CHECK(cudaMalloc(&Df, Dh.size() * 4));
  std::vector<float> Dfh(Dh.begin(), Dh.end());
  CHECK(cudaMemcpy(Df, Dfh.data(), Dfh.size() * 4, cudaMemcpyHostToDevice));
  using Cost = PrecomputedCost<T>;
  const auto forward = [&] {
    detail::reset_scratch(w, ws, nullptr);
    detail::launch_forward_kernel<T, Cost, true, false, false, false, State>(p, w, Cost{D, N, M}, values, ws, nullptr);
  };
  const auto forward32 = [&] {
    detail::reset_scratch(fw, fws, nullptr);
    detail::launch_forward_kernel<float, PrecomputedCost<float>, true, false, false>(p, fw, PrecomputedCost<float>{Df, N, M}, fvalues, fws, nullptr);
  };
  auto* base = static_cast<char*>(ws);
  const detail::HessianProductArgs<State> args{detail::schedule_for(p, w, ws), 1.0,
                                               reinterpret_cast<const typename State::Word*>(base + w.state), values, G,
                                               r_dot, E_dot, reinterpret_cast<uint64_t*>(base + w.ring), bad};
  const auto sweep1 = [&] { detail::hessian_forward_sweep<State><<<detail::grid_for<double, detail::hessian_forward_sweep<State>>(args.s.total()), 64>>>(args); };
  const auto sweep2 = [&] { detail::hessian_backward_sweep<State><<<detail::grid_for<double, detail::hessian_backward_sweep<State>>(args.s.total()), 64>>>(args); };
  const float t32 = median_ms(forward32);
  const float tf = median_ms(forward);
  forward();
  const float ts1 = median_ms(sweep1);
  const float ts2 = median_ms([&] { sweep1(); sweep2(); }) - ts1;
  const float all = median_ms([&] { forward(); sweep1(); sweep2(); });
  std::printf("%s B %lld N %lld M %lld: first-order float32 forward %.3f ms | product: forward %.3f ms, R_dot sweep %.3f ms, E/A sweep %.3f ms, all three %.3f ms\n",
              name, (long long)B, (long long)N, (long long)M, t32, tf, ts1, ts2, all);
  // Whether an R_dot sweep can run beside a forward without slowing it: the forward on ws, on one
  // stream, while the sweep runs on a second workspace's weights (a finished forward's), on another.
  void* ws2;
  double* r_dot2;
  int* bad2;
  CHECK(cudaMalloc(&ws2, w.total));
  CHECK(cudaMalloc(&r_dot2, words * 8));
  CHECK(cudaMalloc(&bad2, B * 4));
  CHECK(cudaMemset(bad2, 0, B * 4));
  T* values2;
  CHECK(cudaMalloc(&values2, B * sizeof(T)));
  detail::reset_scratch(w, ws2, nullptr);
  detail::launch_forward_kernel<T, Cost, true, false, false, false, State>(p, w, Cost{D, N, M}, values2, ws2, nullptr);
  CHECK(cudaDeviceSynchronize());
  auto* base2 = static_cast<char*>(ws2);
  const detail::HessianProductArgs<State> args2{detail::schedule_for(p, w, ws2), 1.0,
                                                reinterpret_cast<const typename State::Word*>(base2 + w.state), values2, G,
                                                r_dot2, E_dot, reinterpret_cast<uint64_t*>(base2 + w.ring), bad2};
  cudaStream_t side;
  cudaEvent_t fork, join;
  CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
  const float both = median_ms([&] {
    cudaEventRecord(fork, nullptr);
    cudaStreamWaitEvent(side, fork, 0);
    forward();
    detail::hessian_forward_sweep<State><<<detail::grid_for<double, detail::hessian_forward_sweep<State>>(args2.s.total()), 64, 0, side>>>(args2);
    cudaEventRecord(join, side);
    cudaStreamWaitEvent(nullptr, join, 0);
  });
  std::printf("%s B %lld N %lld M %lld: forward and an R_dot sweep on two streams %.3f ms (apart %.3f + %.3f)\n", name,
              (long long)B, (long long)N, (long long)M, both, tf, ts1);
  cudaEventDestroy(fork); cudaEventDestroy(join); cudaStreamDestroy(side); cudaFree(ws2); cudaFree(r_dot2); cudaFree(bad2); cudaFree(values2);
  cudaFree(D); cudaFree(G); cudaFree(E_dot); cudaFree(r_dot); cudaFree(values); cudaFree(fvalues); cudaFree(bad); cudaFree(ws); cudaFree(fws); cudaFree(Df);
}

// H G on the device for a float32 cost read as T, with State's weights.
template <typename T, typename State>
std::vector<double> product(const Problem& p, const std::vector<float>& Dh, const std::vector<double>& Gh) {
  const std::vector<T> DT(Dh.begin(), Dh.end());
  T *D, *values;
  double *G, *E_dot, *r_dot;
  int* bad;
  void* ws;
  const detail::WorkspaceLayout w = detail::workspace_layout(p, 16, 32);
  const std::size_t words = (p.batch * w.strips * p.m + 31) * 32;
  CHECK(cudaMalloc(&D, DT.size() * sizeof(T)));
  CHECK(cudaMalloc(&G, Gh.size() * 8));
  CHECK(cudaMalloc(&E_dot, Gh.size() * 8));
  CHECK(cudaMalloc(&r_dot, words * 8));
  CHECK(cudaMalloc(&values, p.batch * sizeof(T)));
  CHECK(cudaMalloc(&bad, p.batch * 4));
  CHECK(cudaMalloc(&ws, w.total));
  CHECK(cudaMemset(bad, 0, p.batch * 4));
  CHECK(cudaMemcpy(D, DT.data(), DT.size() * sizeof(T), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(G, Gh.data(), Gh.size() * 8, cudaMemcpyHostToDevice));
  detail::reset_scratch(w, ws, nullptr);
  detail::launch_forward_kernel<T, PrecomputedCost<T>, true, false, false, false, State>(p, w, PrecomputedCost<T>{D, p.n, p.m}, values, ws, nullptr);
  auto* base = static_cast<char*>(ws);
  const detail::HessianProductArgs<State> args{detail::schedule_for(p, w, ws), 1.0 / p.gamma,
                                               reinterpret_cast<const typename State::Word*>(base + w.state), values, G,
                                               r_dot, E_dot, reinterpret_cast<uint64_t*>(base + w.ring), bad};
  detail::hessian_forward_sweep<State><<<detail::grid_for<double, detail::hessian_forward_sweep<State>>(args.s.total()), 64>>>(args);
  detail::hessian_backward_sweep<State><<<detail::grid_for<double, detail::hessian_backward_sweep<State>>(args.s.total()), 64>>>(args);
  CHECK(cudaDeviceSynchronize());
  std::vector<double> out(Gh.size());
  CHECK(cudaMemcpy(out.data(), E_dot, out.size() * 8, cudaMemcpyDeviceToHost));
  cudaFree(D); cudaFree(G); cudaFree(E_dot); cudaFree(r_dot); cudaFree(values); cudaFree(bad); cudaFree(ws);
  return out;
}

// Costs ||x_i - y_j||^2 of random walks in 8 dimensions (steps N(0, 1/8)), a direction N(0, 1).
void accuracy(int64_t B, int64_t N) {
  std::mt19937 rng(7);
  std::normal_distribution<double> normal;
  const int64_t dim = 8;
  std::vector<double> x(B * N * dim), y(B * N * dim);
  for (auto* walk : {&x, &y})
    for (int64_t b = 0; b < B; ++b)
      for (int64_t d = 0; d < dim; ++d) {
        double v = 0;
        for (int64_t i = 0; i < N; ++i) (*walk)[(b * N + i) * dim + d] = v += normal(rng) / std::sqrt(8.0);
      }
  std::vector<float> Dh(B * N * N);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < N; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double c = 0;
        for (int64_t d = 0; d < dim; ++d) c += std::pow(x[(b * N + i) * dim + d] - y[(b * N + j) * dim + d], 2);
        Dh[(b * N + i) * N + j] = static_cast<float>(c);
      }
  std::vector<double> Gh(B * N * N);
  for (auto& v : Gh) v = normal(rng);
  for (double gamma : {10.0, 1.0, 0.1, 0.05, 0.01, 0.001}) {
    const Problem p{B, N, N, 1, gamma};
    const std::vector<double> want = product<double, detail::CellState<double>>(p, Dh, Gh);
    const std::vector<double> got = product<float, detail::FloatWeights>(p, Dh, Gh);
    double worst = 0, scale = 0, diff2 = 0, norm2 = 0;
    for (std::size_t k = 0; k < want.size(); ++k) {
      worst = std::max(worst, std::abs(got[k] - want[k]));
      scale = std::max(scale, std::abs(want[k]));
      diff2 += (got[k] - want[k]) * (got[k] - want[k]);
      norm2 += want[k] * want[k];
    }
    std::printf("accuracy B %lld N %lld gamma %g: float32 weights against float64 weights, max error / max %.3g, relative L2 %.3g (|H G| max %.3g)\n",
                (long long)B, (long long)N, gamma, worst / scale, std::sqrt(diff2 / norm2), scale);
  }
}

int main(int argc, char** argv) {
  const int64_t B = argc > 1 ? std::atoll(argv[1]) : 32, N = argc > 2 ? std::atoll(argv[2]) : 512;
  const bool has_m = argc > 3 && std::atoll(argv[3]) > 0;
  const int64_t M = has_m ? std::atoll(argv[3]) : N;
  if (argc > (has_m ? 4 : 3)) return accuracy(B, N), 0;
  run<float, detail::FloatWeights>(B, N, M, "float32 weights");
  run<double, detail::CellState<double>>(B, N, M, "float64 weights");
}
