// Times the Hessian-vector product's three launches apart (the forward that saves the weights, the
// R_dot sweep, the E / A sweep) beside the first order's float32 forward on the same cost, CUDA
// events, median of 20 after 3 warm-ups; then, with "accuracy", compares the float32 weights'
// product with the float64 weights' one on the same float32 cost over gamma. Then the R_dot
// sweep's chain alone and that sweep with staged inputs (float32 weights), and last the forward and an
// R_dot sweep (on another workspace) on two streams at once. Usage: [SDTW_PARTS_DIM=d]
// hessian_parts B N [M] [accuracy] (M = N by default; N = 32 and a long M give strips that wait on
// no other strip; the costs are uniform on [0, 8), or with SDTW_PARTS_DIM the benchmark's kind).
// Target sdtw_hessian_parts (-DSDTW_BUILD_LAB=ON), or by hand: nvcc -O3 -std=c++17 -arch=sm_90
// --expt-relaxed-constexpr -Ikernels/include lab/kernels/hessian_parts.cu kernels/src/workspace.cpp
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <type_traits>
#include <vector>

#include "../../kernels/src/hessian_product.cuh"
#include "../../kernels/src/launch.cuh"

using namespace sdtw::kernels;

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("%s: %s\n", #x, cudaGetErrorString(e)); std::exit(1); } } while (0)

// Where FloatWeights' forward stages its costs: the half of the 16-byte state region its words leave
// (as alignment_backward places them).
template <typename T, typename State>
T* staged_costs(const Problem& p, const detail::WorkspaceLayout& w, void* ws) {
  if constexpr (!State::kCostsApart) {
    return nullptr;
  } else {
    const std::size_t words = (static_cast<std::size_t>(p.batch * w.strips * p.m) + 31) * 32;
    return reinterpret_cast<T*>(static_cast<char*>(ws) + w.state + words * sizeof(typename State::Word));
  }
}

// The product's sweeps run a strip a block, as many blocks as the device holds (launch_sweep).
template <auto kernel>
int strip_grid(int64_t strips) {
  return static_cast<int>(std::min<int64_t>(strips, detail::resident_blocks<kernel, detail::kStripBlock>()));
}

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

// One step of the R_dot recursion as hessian_forward_sweep takes it, for the lab's copies of that
// sweep: R_dot from the lane's left and diagonal predecessors and the one above (lane 0: the
// border of the strip above, the lane `step`'s word), handed down the ring; it carries the chain.
struct RDotChain {
  double left = 0.0, diag = 0.0, out = 0.0;
  __device__ double step(detail::FloatPair word, double g, double border, int step, bool active, uint64_t* ring_word,
                         bool writes_ring) {
    using namespace detail;
    const int lane = threadIdx.x & 31;
    double up = __shfl_up_sync(kFullMask, out, 1);
    const double border_j = __shfl_sync(kFullMask, border, step);
    up = lane == 0 ? border_j : up;
    const Weights<FloatWeights> w(word);
    const double r_dot = active ? g + w.diag * diag + w.up * up + w.left * left : 0.0;
    ring_store(ring_word, seal(r_dot), writes_ring && active);
    left = r_dot;
    diag = up;
    out = r_dot;
    return r_dot;
  }
};

// The R_dot sweep's chain alone: the same strips, steps, shuffles, selects and ring as
// hessian_forward_sweep, with each cell's weights and G made in registers instead of loaded and R_dot
// not stored. Its step against the real sweep's is what the loads and stores cost a step.
__global__ void __launch_bounds__(2 * detail::kWarp, 1) chain_only_sweep(detail::HessianProductArgs<detail::FloatWeights> a) {
  using namespace detail;
  using State = FloatWeights;
  const int lane = threadIdx.x & 31;
  const Schedule& s = a.s;
  for (int64_t ticket = take_ticket(s.ticket); ticket < s.total(); ticket = take_ticket(s.ticket)) {
    Strip strip;
    if (!begin_strip(s, ticket, false, strip)) continue;
    const int rows = strip.rows, cols = strip.cols, i = strip.row0 + lane;
    const bool writes_ring = strip.row0 + kWarp < rows && lane == kWarp - 1;
    uint64_t* ring_out = a.ring + strip.slot * s.m;
    uint64_t* ring_in = a.ring + strip.previous * s.m;
    const int last_step = cols + kWarp - 1, j_end = i < rows ? cols : 0;
    RDotChain chain;
    const auto in_grid_of = [&](int t0) { return step_mask(lane - t0, j_end - t0 + lane); };
    await_claim(s, strip.id, strip.order);
    for (int t0 = 0; t0 < last_step; t0 += kWarp) {
      double border = 0.0;
      const bool reads_border = strip.k > 0 && t0 + lane < cols;
      uint32_t border_ready = __ballot_sync(kFullMask, !reads_border);
      const auto take_border = [&] {
        const uint64_t w = ring_load(ring_in + t0 + lane);
        if (w != 0) border = unseal(w);
        return w != 0;
      };
      const uint32_t in_grid = in_grid_of(t0);
#pragma unroll
      for (int piece = 0; piece < kPieces; ++piece) {
        border_ready = await_border(border_ready, piece * kBorderPiece, take_border);
#pragma unroll
        for (int q = 0; q < kBorderPiece; ++q) {
          const int step = piece * kBorderPiece + q, t = t0 + step, j = t - lane;
          const bool active = (in_grid >> step) & 1u;
          const FloatPair word = active ? FloatPair{0.25f + 0.001f * (t & 7), 0.25f} : State::empty();
          chain.step(word, 0.001 * ((t + lane) & 15), border, step, active, ring_out + j, writes_ring);
        }
      }
      ring_store(ring_in + t0 + lane, 0, reads_border);
      __syncwarp();
    }
    if (lane == kWarp - 1) publish(s.progress + strip.id, kDone);
  }
  finish_launch(s);
}

// The R_dot sweep with its inputs staged: each block is a strip's two warps, a loader that copies
// the weights and G of the pieces ahead into shared memory (kStagedSlots pieces in flight) and the
// chain's warp, which reads them from there, so that no global load waits on the chain. Named
// barriers hand the slots over (full: 1 + slot, empty: 1 + kStagedSlots + slot). Same arithmetic
// as hessian_forward_sweep, so its R_dot is the same bit for bit.
constexpr int kStagedSlots = 4;

// The lane's row of G, clamped into the pair so that every load stays in bounds.
__device__ inline int64_t row_offset(const detail::Schedule& s, int64_t b, int i, int rows) {
  return (b * s.n + min(i, rows - 1)) * s.m;
}

__device__ inline int clamp_column(int j, int cols) { return max(0, min(j, cols - 1)); }

__device__ inline void bar_sync(int id) { asm volatile("bar.sync %0, 64;" ::"r"(id) : "memory"); }
__device__ inline void bar_arrive(int id) { asm volatile("bar.arrive %0, 64;" ::"r"(id) : "memory"); }

__global__ void __launch_bounds__(2 * detail::kWarp) staged_r_dot_sweep(detail::HessianProductArgs<detail::FloatWeights> a) {
  using namespace detail;
  using State = FloatWeights;
  __shared__ FloatPair word_slot[kStagedSlots][kBorderPiece][kWarp];
  __shared__ double g_slot[kStagedSlots][kBorderPiece][kWarp];
  __shared__ long long shared_ticket;
  const int lane = threadIdx.x & 31;
  const bool loader = threadIdx.x >= kWarp;
  const Schedule& s = a.s;
  for (;;) {
    if (!loader) {
      const int64_t t = take_ticket(s.ticket);
      if (lane == 0) shared_ticket = t;
    }
    __syncthreads();
    const int64_t ticket = shared_ticket;
    __syncthreads();
    if (ticket >= s.total()) break;
    Strip strip;
    if (loader) {
      if (!locate_strip(s, ticket, false, strip)) continue;
    } else if (!begin_strip(s, ticket, false, strip)) {
      continue;
    }
    const int rows = strip.rows, cols = strip.cols, i = strip.row0 + lane;
    const int last_step = cols + kWarp - 1, j_end = i < rows ? cols : 0;
    const int pieces = (last_step + kWarp - 1) / kWarp * kPieces;
    const auto in_grid_of = [&](int t0) { return step_mask(lane - t0, j_end - t0 + lane); };
    const int64_t first_word = state_index(strip.b * s.strips + strip.k, s.m, 0, lane);
    if (loader) {
      const typename State::Word* st = a.state + first_word;
      const double* g_row = a.G + row_offset(s, strip.b, i, rows);
      for (int k = 0; k < pieces; ++k) {
        const int slot = k % kStagedSlots, t0 = k / kPieces * kWarp, piece = k % kPieces;
        if (k >= kStagedSlots) bar_sync(1 + kStagedSlots + slot);
        const uint32_t in_grid = in_grid_of(t0);
#pragma unroll
        for (int q = 0; q < kBorderPiece; ++q) {
          const int step = piece * kBorderPiece + q, t = t0 + step;
          const bool active = (in_grid >> step) & 1u;
          word_slot[slot][q][lane] = active ? st[static_cast<int64_t>(t) * kWarp] : State::empty();
          g_slot[slot][q][lane] = __ldg(g_row + clamp_column(t - lane, cols));
        }
        bar_arrive(1 + slot);
      }
      continue;
    }
    const bool writes_ring = strip.row0 + kWarp < rows && lane == kWarp - 1;
    uint64_t* ring_out = a.ring + strip.slot * s.m;
    uint64_t* ring_in = a.ring + strip.previous * s.m;
    double* r_dot_out = a.r_dot + first_word;
    RDotChain chain;
    bool bad = false;
    await_claim(s, strip.id, strip.order);
    for (int t0 = 0; t0 < last_step; t0 += kWarp) {
      double border = 0.0;
      const bool reads_border = strip.k > 0 && t0 + lane < cols;
      uint32_t border_ready = __ballot_sync(kFullMask, !reads_border);
      const auto take_border = [&] {
        const uint64_t w = ring_load(ring_in + t0 + lane);
        if (w != 0) border = unseal(w);
        return w != 0;
      };
      const uint32_t in_grid = in_grid_of(t0);
#pragma unroll
      for (int piece = 0; piece < kPieces; ++piece) {
        const int k = t0 / kWarp * kPieces + piece, slot = k % kStagedSlots;
        bar_sync(1 + slot);
        FloatPair word[kBorderPiece];
        double g[kBorderPiece];
#pragma unroll
        for (int q = 0; q < kBorderPiece; ++q) {
          word[q] = word_slot[slot][q][lane];
          g[q] = g_slot[slot][q][lane];
        }
        if (k < pieces - kStagedSlots) bar_arrive(1 + kStagedSlots + slot);
        border_ready = await_border(border_ready, piece * kBorderPiece, take_border);
#pragma unroll
        for (int q = 0; q < kBorderPiece; ++q) {
          const int step = piece * kBorderPiece + q, t = t0 + step, j = t - lane;
          const bool active = (in_grid >> step) & 1u;
          const double r_dot = chain.step(word[q], g[q], border, step, active, ring_out + j, writes_ring);
          bad |= active && !isfinite(g[q]);
          if (active) r_dot_out[static_cast<int64_t>(t) * kWarp] = r_dot;
        }
      }
      ring_store(ring_in + t0 + lane, 0, reads_border);
      __syncwarp();
    }
    if (__any_sync(kFullMask, bad) && lane == 0) a.bad_direction[strip.b] = 1;
    if (lane == kWarp - 1) publish(s.progress + strip.id, kDone);
  }
  finish_launch(s);
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
    detail::launch_forward_kernel<T, Cost, true, false, false, false, State>(p, w, Cost{D, N, M}, values, ws, nullptr, 0, {},
                                                                             nullptr, staged_costs<T, State>(p, w, ws));
  };
  const auto forward32 = [&] {
    detail::reset_scratch(fw, fws, nullptr);
    detail::launch_forward_kernel<float, PrecomputedCost<float>, true, false, false>(p, fw, PrecomputedCost<float>{Df, N, M}, fvalues, fws, nullptr);
  };
  auto* base = static_cast<char*>(ws);
  const detail::HessianProductArgs<State> args{detail::schedule_for(p, w, ws), 1.0,
                                               reinterpret_cast<const typename State::Word*>(base + w.state), values, G,
                                               r_dot, E_dot, reinterpret_cast<uint64_t*>(base + w.ring), bad};
  const auto sweep1 = [&] { detail::hessian_forward_sweep<State><<<strip_grid<detail::hessian_forward_sweep<State>>(args.s.total()), detail::kStripBlock>>>(args); };
  const auto sweep2 = [&] { detail::hessian_backward_sweep<State><<<strip_grid<detail::hessian_backward_sweep<State>>(args.s.total()), detail::kStripBlock>>>(args); };
  const float t32 = median_ms(forward32);
  const float tf = median_ms(forward);
  forward();
  const float ts1 = median_ms(sweep1);
  const float ts2 = median_ms([&] { sweep1(); sweep2(); }) - ts1;
  const float all = median_ms([&] { forward(); sweep1(); sweep2(); });
  std::printf("%s B %lld N %lld M %lld: first-order float32 forward %.3f ms | product: forward %.3f ms, R_dot sweep %.3f ms, E/A sweep %.3f ms, all three %.3f ms\n",
              name, (long long)B, (long long)N, (long long)M, t32, tf, ts1, ts2, all);
  if constexpr (std::is_same_v<State, detail::FloatWeights>) {
    const int grid = detail::grid_for<double, chain_only_sweep>(args.s.total());
    const float tc = median_ms([&] { chain_only_sweep<<<grid, 64>>>(args); });
    std::printf("%s B %lld N %lld M %lld: the R_dot sweep's chain alone (no loads, no R_dot stores) %.3f ms\n", name,
                (long long)B, (long long)N, (long long)M, tc);
    // The staged sweep's R_dot against hessian_forward_sweep's, word for word, then its time.
    std::vector<double> want((B * w.strips * M + 31) * 32), got(want.size());
    CHECK(cudaMemset(r_dot, 0, want.size() * 8));
    forward();
    sweep1();
    CHECK(cudaMemcpy(want.data(), r_dot, want.size() * 8, cudaMemcpyDeviceToHost));
    CHECK(cudaMemset(r_dot, 0, want.size() * 8));
    int blocks = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, staged_r_dot_sweep, 64, 0));
    int sms = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const int staged_grid = static_cast<int>(std::min<int64_t>(args.s.total(), int64_t{blocks} * sms));
    staged_r_dot_sweep<<<staged_grid, 64>>>(args);
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(got.data(), r_dot, got.size() * 8, cudaMemcpyDeviceToHost));
    int64_t differ = 0;
    for (std::size_t k = 0; k < want.size(); ++k) differ += std::memcmp(&want[k], &got[k], 8) != 0;
    const float tstaged = median_ms([&] { staged_r_dot_sweep<<<staged_grid, 64>>>(args); });
    std::printf("%s B %lld N %lld M %lld: staged R_dot sweep %.3f ms (%d blocks an SM), %lld of %zu words differ from the R_dot sweep's\n",
                name, (long long)B, (long long)N, (long long)M, tstaged, blocks, (long long)differ, want.size());
  }
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
  detail::launch_forward_kernel<T, Cost, true, false, false, false, State>(p, w, Cost{D, N, M}, values2, ws2, nullptr, 0, {},
                                                                           nullptr, staged_costs<T, State>(p, w, ws2));
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
    detail::hessian_forward_sweep<State><<<strip_grid<detail::hessian_forward_sweep<State>>(args2.s.total()), detail::kStripBlock, 0, side>>>(args2);
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
  detail::launch_forward_kernel<T, PrecomputedCost<T>, true, false, false, false, State>(
      p, w, PrecomputedCost<T>{D, p.n, p.m}, values, ws, nullptr, 0, {}, nullptr, staged_costs<T, State>(p, w, ws));
  auto* base = static_cast<char*>(ws);
  const detail::HessianProductArgs<State> args{detail::schedule_for(p, w, ws), 1.0 / p.gamma,
                                               reinterpret_cast<const typename State::Word*>(base + w.state), values, G,
                                               r_dot, E_dot, reinterpret_cast<uint64_t*>(base + w.ring), bad};
  detail::hessian_forward_sweep<State><<<strip_grid<detail::hessian_forward_sweep<State>>(args.s.total()), detail::kStripBlock>>>(args);
  detail::hessian_backward_sweep<State><<<strip_grid<detail::hessian_backward_sweep<State>>(args.s.total()), detail::kStripBlock>>>(args);
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
