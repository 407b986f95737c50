// ours_fused, ours_unfused, ours_checkpoint (CUDA) and ours_cpu: the project's operator sdtw::nn::soft_dtw.
// The CUDA ones name their memory mode, so that a point measures the mode its name says.
#include "torch/implementation.hpp"

#ifdef SDTW_BENCH_HAVE_OURS
#include <sdtw/torch/soft_dtw.hpp>
#endif

namespace sdtw::bench {

namespace {

class Ours final : public Implementation {
 public:
  explicit Ours(std::string name) : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  std::string description() const override {
    if (name_ == "ours_fused") return "sdtw::nn::soft_dtw, CUDA, fused squared-Euclidean cost (no B x N x M cost tensor)";
    if (name_ == "ours_unfused") return "sdtw::nn::soft_dtw, CUDA, cost tensor materialised";
    if (name_ == "ours_checkpoint")
      return "sdtw::nn::soft_dtw, CUDA, fused, memory=\"checkpoint\" (R kept every S rows, bands recomputed)";
    return "sdtw::nn::soft_dtw on the CPU";
  }
  bool built() const override {
#ifdef SDTW_BENCH_HAVE_OURS
    return true;
#else
    return false;
#endif
  }
  Support supports(const Point& p) const override {
    if (!built()) return {false, "sdtw_torch not built"};
    const std::string want = name_ == "ours_cpu" ? "cpu" : "cuda";
    if (p.device != want) return {false, name_ + " runs on " + want + " only"};
    // The library refuses fused with these (they go through a cost tensor).
    if ((name_ == "ours_fused" || name_ == "ours_checkpoint") && (p.problem.warp != 0.0 || p.problem.subsequence))
      return {false, name_ + " is fused, and warp and subsequence are not: use ours_unfused"};
    return device_support(p);
  }
  at::Tensor forward(const at::Tensor& x, const at::Tensor& y, const Point& p) const override {
#ifdef SDTW_BENCH_HAVE_OURS
    sdtw::nn::SoftDtwOptions o;
    o.gamma = p.gamma;
    if (p.bandwidth) o.bandwidth = *p.bandwidth;
    o.normalize = p.normalize;
    o.dist = p.problem.dist;
    o.global_constraint = p.problem.global_constraint;
    o.sakoe_chiba_radius = p.problem.sakoe_chiba_radius;
    o.itakura_max_slope = p.problem.itakura_max_slope;
    o.warp = p.problem.warp;
    o.subsequence = p.problem.subsequence;
    if (name_ == "ours_fused" || name_ == "ours_checkpoint") o.fused = true;
    if (name_ == "ours_unfused") o.fused = false;
    if (name_ != "ours_cpu") o.memory = name_ == "ours_checkpoint" ? "checkpoint" : "full";
    o.reduction = "none";
    return sdtw::nn::soft_dtw(x, y, o);
#else
    (void)x, (void)y, (void)p;
    throw NotSupported("sdtw_torch not built");
#endif
  }
  Tolerance tolerance(const Point& p) const override {
    if (p.dtype == "float64") return {1e-10, 1e-8};
    return {1e-5, 1e-4};  // the project's accuracy target (docs/DESIGN.md §3.5)
  }

 private:
  std::string name_;
};

}  // namespace

std::unique_ptr<Implementation> make_ours(const std::string& name) { return std::make_unique<Ours>(name); }

}  // namespace sdtw::bench
