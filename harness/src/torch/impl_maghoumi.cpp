// maghoumi: the reimplementation of pytorch-softdtw-cuda (baselines/maghoumi), CUDA and CPU.
#include <algorithm>
#include <cmath>

#include "torch/implementation.hpp"

#ifdef SDTW_BENCH_HAVE_MAGHOUMI
#include <sdtw/baselines/maghoumi.hpp>
#endif

namespace sdtw::bench {

namespace {

class Maghoumi final : public Implementation {
 public:
  std::string name() const override { return "maghoumi"; }
  std::string description() const override {
    return "Maghoumi pytorch-softdtw-cuda reimplementation: one block per pair, N <= 1024 (CUDA), or its CPU path";
  }
  bool built() const override {
#ifdef SDTW_BENCH_HAVE_MAGHOUMI
    return true;
#else
    return false;
#endif
  }
  Support supports(const Point& p) const override {
    if (auto s = library_options_refused(p, name()); !s.ok) return s;
    if (!built()) return {false, "Maghoumi baseline not built"};
    if (auto s = device_support(p); !s.ok) return s;
#ifdef SDTW_BENCH_HAVE_MAGHOUMI
    namespace mg = sdtw::baselines::maghoumi;
    if (p.device == "cuda" && !mg::cuda_compiled()) return {false, "Maghoumi baseline built without CUDA"};
    if (p.normalize && p.n != p.m) return {false, "the original's normalize needs N == M (torch.cat)"};
    if (p.gamma == 0) return {false, "the original divides by gamma: gamma = 0 (exact DTW) is not supported"};
    if (p.device == "cuda") {
      const long limit = mg::max_cuda_length(p.dtype == "float64" ? at::kDouble : at::kFloat);
      if (std::max(p.n, p.m) > limit)
        return {false, "one block per pair: max(N, M) = " + std::to_string(std::max(p.n, p.m)) + " > " +
                           std::to_string(limit) + " threads on this device"};
    }
#endif
    return {};
  }
  at::Tensor forward(const at::Tensor& x, const at::Tensor& y, const Point& p) const override {
#ifdef SDTW_BENCH_HAVE_MAGHOUMI
    namespace mg = sdtw::baselines::maghoumi;
    try {
      mg::SoftDTW sdtw;
      sdtw.gamma = p.gamma;
      sdtw.bandwidth = p.bandwidth ? static_cast<double>(*p.bandwidth) : 0.0;
      sdtw.normalize = p.normalize;
      return sdtw.forward(x, y);
    } catch (const mg::NotSupported& e) {
      throw NotSupported(e.what());
    }
#else
    (void)x, (void)y, (void)p;
    throw NotSupported("Maghoumi baseline not built");
#endif
  }
  Tolerance tolerance(const Point& p) const override {
    if (p.dtype == "float64") return {1e-10, 1e-8};
    // Expected fp32 gradient error u * N^1.5 * D / gamma (u = 2^-24): the backward recomputes
    // exp((R' - R - D) / gamma) from float32 R, whose entries (~2 N D for N(0,1) inputs) carry
    // rounding ~u N D; that error divided by gamma accumulates over ~N steps as a random walk.
    // Measured (results/h100/grad-accuracy.csv, paper.csv, CPU sweeps): 0.14-0.57 of it at D >= 8,
    // 0.01-0.2 at D = 1 (the paths find near-zero costs). Floor 1e-4 (ours' fp32 target); cap 0.1:
    // beyond it the gradient is not usable, and the fp32 recursion breaks down (errors >> 1).
    const double n = static_cast<double>(std::max(p.n, p.m));
    const double expected = 0x1p-24 * n * std::sqrt(n) * static_cast<double>(p.dim) / p.gamma;
    return {1e-4, std::clamp(expected, 1e-4, 0.1)};
  }
};

}  // namespace

std::unique_ptr<Implementation> make_maghoumi() { return std::make_unique<Maghoumi>(); }

}  // namespace sdtw::bench
