// The front's operators, which take every option of the loss and are what the C++ module
// (sdtw::nn) and the Python package both call: sdtw::soft_dtw_loss, sdtw::soft_dtw_cost_loss,
// sdtw::alignment, sdtw::alignment_from_cost; sdtw::soft_dtw_options, which resolves the options
// alone, and sdtw::zero_padding, the loss's first step (integer series promoted, padding zeroed),
// for Python's callable dist. They validate
// the options and name them; they are composites of the value operators, so autograd, autocast
// and fake tensors (torch.compile) come from those.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/autograd.h>
#include <torch/library.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <tuple>

#include "checks.hpp"
#include "memory.hpp"
#include "ops_internal.hpp"
#include "sdtw/torch/ops.hpp"

namespace sdtw::ops::detail {
namespace {

// A band at least this wide keeps every cell of any tensor that fits in memory: no band.
constexpr int64_t kNoBandFrom = int64_t{1} << 62;

std::string text(c10::string_view s) { return std::string(s.data(), s.size()); }

void check_reduction(c10::string_view reduction) {
  TORCH_CHECK_VALUE(reduction == "none" || reduction == "mean" || reduction == "sum",
                    "reduction must be 'none', 'mean' or 'sum' (got '", text(reduction), "')");
}

at::Tensor reduce(const at::Tensor& values, c10::string_view reduction) {
  if (reduction == "mean") return values.mean();
  if (reduction == "sum") return values.sum();
  return values;
}

// x or y with its time steps past `lengths` set to 0: the gradient products multiply padding by
// E = 0, which a NaN there would turn into NaN for the whole pair (a cost tensor needs none of
// this: its padding is never read). Lengths the value operators will refuse (dtype, count,
// device) are left to them, which name the argument.
at::Tensor padding_zeroed(const at::Tensor& t, const c10::optional<at::Tensor>& lengths) {
  if (!lengths || !lengths->defined() || !t.defined() || !at::isFloatingType(t.scalar_type())) return t;
  const at::Tensor& l = *lengths;
  if (!at::isIntegralType(l.scalar_type(), /*includeBool=*/false)) return t;
  if (!l.is_cpu() && l.device() != t.device()) return t;
  const bool batched = t.dim() == 3 && t.size(0) == l.numel();
  if (!batched && !(t.dim() == 2 && l.numel() == 1)) return t;
  const at::Tensor series = batched ? t : t.unsqueeze(0);
  const at::Tensor steps = at::arange(series.size(1), series.options().dtype(at::kLong));
  const at::Tensor past = steps.unsqueeze(0) >= l.to(t.device()).reshape({-1, 1});
  const at::Tensor masked = series.masked_fill(past.unsqueeze(2), 0);
  return batched ? masked : masked.squeeze(0);
}

// An integer or bool series (a target of class indices or levels) is promoted, as tslearn's float
// conversion does, to the other's floating dtype, or torch's default dtype when neither is floating;
// the value operators, called directly, still refuse it.
std::tuple<at::Tensor, at::Tensor> floating_pair(const at::Tensor& x, const at::Tensor& y) {
  if (!x.defined() || !y.defined()) return {x, y};
  const bool x_floating = at::isFloatingType(x.scalar_type()), y_floating = at::isFloatingType(y.scalar_type());
  const at::ScalarType to = x_floating   ? x.scalar_type()
                            : y_floating ? y.scalar_type()
                                         : at::typeMetaToScalarType(at::get_default_dtype());
  const auto promoted = [to](const at::Tensor& t) {
    return at::isIntegralType(t.scalar_type(), /*includeBool=*/true) ? t.to(to) : t;
  };
  return {promoted(x), promoted(y)};
}

}  // namespace

std::tuple<at::Tensor, at::Tensor> zero_padding(const at::Tensor& x, const at::Tensor& y,
                                                const c10::optional<at::Tensor>& x_lengths,
                                                const c10::optional<at::Tensor>& y_lengths) {
  const auto [xf, yf] = floating_pair(x, y);
  return {padding_zeroed(xf, x_lengths), padding_zeroed(yf, y_lengths)};
}

std::string canonical_dist(c10::string_view dist) {
  std::string d = text(dist);
  std::transform(d.begin(), d.end(), d.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  if (d == "sq_euclidean" || d == "squared_euclidean") return "sqeuclidean";
  if (d == "manhattan" || d == "cityblock") return "l1";
  TORCH_CHECK_VALUE(d == "sqeuclidean" || d == "euclidean" || d == "cosine" || d == "l1" || d == "negative_dot",
                    "dist must be 'sqeuclidean' (or 'sq_euclidean', 'squared_euclidean'), 'euclidean', 'cosine', "
                    "'l1' (or 'manhattan', 'cityblock'), 'negative_dot', or in Python a callable (x, y) -> cost (got '",
                    text(dist), "')");
  return d;
}

// Python hands over its numbers as they are (0.5 is the diagonal band, 0 none), hence a real.
int64_t operator_band(c10::optional<double> bandwidth) {
  if (!bandwidth) return -1;
  TORCH_CHECK_VALUE(!std::isnan(*bandwidth), "bandwidth must be None or a number (got nan)");
  return *bandwidth > 0 && *bandwidth < double(kNoBandFrom) ? int64_t(std::floor(*bandwidth)) : -1;
}

namespace {

// tslearn's keywords as the operators' pair (radius, slope): a radius or a slope alone implies
// its constraint (tslearn's compute_mask), the named constraint takes tslearn's defaults (radius
// 1, slope 2), and a keyword of the other constraint is refused rather than ignored.
std::pair<int64_t, double> resolve_constraint(c10::optional<c10::string_view> global_constraint,
                                              c10::optional<int64_t> sakoe_chiba_radius,
                                              c10::optional<double> itakura_max_slope) {
  std::string kind = global_constraint ? text(*global_constraint) : std::string();
  if (kind.empty()) {
    TORCH_CHECK_VALUE(!(sakoe_chiba_radius && itakura_max_slope),
                      "sakoe_chiba_radius and itakura_max_slope are two constraints: give one (with "
                      "global_constraint='sakoe_chiba' or 'itakura')");
    if (sakoe_chiba_radius) kind = "sakoe_chiba";
    if (itakura_max_slope) kind = "itakura";
  }
  if (kind.empty()) return {-1, 0.0};
  if (kind == "sakoe_chiba") {
    TORCH_CHECK_VALUE(!itakura_max_slope, "itakura_max_slope applies to global_constraint='itakura' (got ",
                      *itakura_max_slope, " with global_constraint='sakoe_chiba')");
    const int64_t radius = sakoe_chiba_radius.value_or(1);
    TORCH_CHECK_VALUE(radius >= 0, "sakoe_chiba_radius must be >= 0 (got ", radius, ")");
    return {radius, 0.0};
  }
  TORCH_CHECK_VALUE(kind == "itakura", "global_constraint must be None, 'sakoe_chiba' or 'itakura' (got '", kind, "')");
  TORCH_CHECK_VALUE(!sakoe_chiba_radius, "sakoe_chiba_radius applies to global_constraint='sakoe_chiba' (got ",
                    *sakoe_chiba_radius, " with global_constraint='itakura')");
  const double slope = itakura_max_slope.value_or(2.0);
  TORCH_CHECK_VALUE(slope > 0.0 && std::isfinite(slope), "itakura_max_slope must be finite and > 0 (got ", slope, ")");
  return {-1, slope};
}

}  // namespace

LossOptions resolve_options(double gamma, c10::optional<double> bandwidth, bool normalize, c10::string_view dist,
                            c10::optional<bool> fused, c10::string_view reduction,
                            c10::optional<c10::string_view> global_constraint,
                            c10::optional<int64_t> sakoe_chiba_radius, c10::optional<double> itakura_max_slope,
                            double warp, bool subsequence) {
  check_gamma(gamma);
  check_reduction(reduction);
  LossOptions o;
  o.gamma = gamma;
  o.bandwidth = operator_band(bandwidth);
  std::tie(o.sakoe_chiba_radius, o.itakura_max_slope) =
      resolve_constraint(global_constraint, sakoe_chiba_radius, itakura_max_slope);
  operator_constraint(o.bandwidth, o.sakoe_chiba_radius, o.itakura_max_slope);  // one constraint at most
  o.normalize = normalize;
  o.dist = canonical_dist(dist);
  TORCH_CHECK_VALUE(std::isfinite(warp), "warp must be finite (got ", warp, ")");
  o.warp = warp;
  o.subsequence = subsequence;
  const bool variant = warp != 0.0 || subsequence;
  // The fused kernels add no cost offset and have no free start (variants.cpp computes these).
  TORCH_CHECK_VALUE(!(variant && fused.value_or(false)), "fused=True does not apply with ",
                    subsequence ? "subsequence=True" : "warp != 0", " (got warp=", warp, ", subsequence=",
                    subsequence ? "True" : "False", "): leave fused unset (None) or pass False");
  if (subsequence) {
    const Constraint c = operator_constraint(o.bandwidth, o.sakoe_chiba_radius, o.itakura_max_slope);
    TORCH_CHECK_VALUE(c.kind == ConstraintKind::none, "subsequence=True takes no band or global constraint (got ",
                      describe(c), "): a band follows the diagonal from (0, 0) to (N-1, M-1), which a "
                      "subsequence alignment need not");
    TORCH_CHECK_VALUE(!normalize, "normalize=True does not apply with subsequence=True: the divergence compares "
                      "whole series");
  }
  // Every named cost is fused by default (a callable's cost, which only Python has, never is).
  o.fused = fused.value_or(!variant);
  o.reduction = text(reduction);
  return o;
}

namespace {

std::tuple<double, int64_t, bool, std::string, bool, std::string> soft_dtw_options(
    double gamma, c10::optional<double> bandwidth, bool normalize, c10::string_view dist, c10::optional<bool> fused,
    c10::string_view reduction, c10::optional<c10::string_view> global_constraint,
    c10::optional<int64_t> sakoe_chiba_radius, c10::optional<double> itakura_max_slope, double warp,
    bool subsequence) {
  // The constraint is validated here (and with the band) but resolved by each loss operator.
  const LossOptions o = resolve_options(gamma, bandwidth, normalize, dist, fused, reduction, global_constraint,
                                        sakoe_chiba_radius, itakura_max_slope, warp, subsequence);
  return {o.gamma, o.bandwidth, o.normalize, o.dist, o.fused, o.reduction};
}

std::tuple<int64_t, double> constraint_options(c10::optional<c10::string_view> global_constraint,
                                               c10::optional<int64_t> sakoe_chiba_radius,
                                               c10::optional<double> itakura_max_slope) {
  return resolve_constraint(global_constraint, sakoe_chiba_radius, itakura_max_slope);
}

namespace {

// The memory mode; warp and subsequence run their own paths and take no checkpointing.
std::string memory_for(const LossOptions& o, c10::string_view memory) {
  const std::string mode = canonical_memory(memory);
  TORCH_CHECK_VALUE(mode != "checkpoint" || (o.warp == 0.0 && !o.subsequence),
                    "memory='checkpoint' takes neither warp nor subsequence (got warp=", o.warp,
                    ", subsequence=", o.subsequence ? "True" : "False", ")");
  return mode;
}

}  // namespace

at::Tensor soft_dtw_loss(const at::Tensor& x, const at::Tensor& y, const c10::optional<at::Tensor>& x_lengths,
                         const c10::optional<at::Tensor>& y_lengths, double gamma, c10::optional<double> bandwidth,
                         bool normalize, c10::string_view dist, c10::optional<bool> fused,
                         c10::string_view reduction, bool check_inputs,
                         c10::optional<c10::string_view> global_constraint, c10::optional<int64_t> sakoe_chiba_radius,
                         c10::optional<double> itakura_max_slope, double warp, bool subsequence,
                         c10::string_view memory) {
  const LossOptions o = resolve_options(gamma, bandwidth, normalize, dist, fused, reduction, global_constraint,
                                        sakoe_chiba_radius, itakura_max_slope, warp, subsequence);
  const std::string mode = memory_for(o, memory);
  TORCH_CHECK_VALUE(mode != "checkpoint" || !o.fused || o.dist == "sqeuclidean",
                    "memory='checkpoint' takes dist='sqeuclidean' or fused=False (got dist='", o.dist, "')");
  const auto pair = [&](const at::Tensor& a, const at::Tensor& b, const c10::optional<at::Tensor>& la,
                        const c10::optional<at::Tensor>& lb) {
    if (o.warp != 0.0 || o.subsequence) return variant_soft_dtw_cost(ops::pairwise_cost(a, b, o.dist), o, la, lb);
    if (o.fused && o.dist == "sqeuclidean")
      return soft_dtw_sqeuclidean_memory(a, b, o.gamma, o.bandwidth, la, lb, o.sakoe_chiba_radius, o.itakura_max_slope,
                                         mode);
    if (o.fused)
      return soft_dtw_named_cost(a, b, o.dist, o.gamma, o.bandwidth, la, lb, o.sakoe_chiba_radius, o.itakura_max_slope);
    return soft_dtw_cost_memory(ops::pairwise_cost(a, b, o.dist), o.gamma, o.bandwidth, la, lb, o.sakoe_chiba_radius,
                                o.itakura_max_slope, mode);
  };
  const auto [xz, yz] = zero_padding(x, y, x_lengths, y_lengths);
  at::Tensor values = pair(xz, yz, x_lengths, y_lengths);
  if (check_inputs)
    check_finite_series(x, y, x_lengths, y_lengths, o.bandwidth, o.sakoe_chiba_radius, o.itakura_max_slope);
  if (o.normalize) values = values - 0.5 * (pair(xz, xz, x_lengths, x_lengths) + pair(yz, yz, y_lengths, y_lengths));
  return reduce(values, o.reduction);
}

at::Tensor soft_dtw_cost_loss(const at::Tensor& D, const c10::optional<at::Tensor>& x_lengths,
                              const c10::optional<at::Tensor>& y_lengths, double gamma,
                              c10::optional<double> bandwidth, c10::string_view reduction,
                              const c10::optional<at::Tensor>& D_xx, const c10::optional<at::Tensor>& D_yy,
                              bool check_inputs, c10::optional<c10::string_view> global_constraint,
                              c10::optional<int64_t> sakoe_chiba_radius, c10::optional<double> itakura_max_slope,
                              double warp, bool subsequence, c10::string_view memory) {
  const bool normalize = D_xx.has_value() && D_xx->defined();
  TORCH_CHECK_VALUE(normalize == (D_yy.has_value() && D_yy->defined()),
                    "D_xx and D_yy (the self-costs of normalize) must be given together (got ",
                    normalize ? "D_xx" : "D_yy", " alone)");
  const LossOptions o = resolve_options(gamma, bandwidth, normalize, "sqeuclidean", c10::nullopt, reduction,
                                        global_constraint, sakoe_chiba_radius, itakura_max_slope, warp, subsequence);
  const std::string mode = memory_for(o, memory);
  const auto cost = [&](const at::Tensor& C, const c10::optional<at::Tensor>& la, const c10::optional<at::Tensor>& lb) {
    if (o.warp != 0.0 || o.subsequence) return variant_soft_dtw_cost(C, o, la, lb);
    return soft_dtw_cost_memory(C, gamma, o.bandwidth, la, lb, o.sakoe_chiba_radius, o.itakura_max_slope, mode);
  };
  at::Tensor values = cost(D, x_lengths, y_lengths);
  if (check_inputs)
    check_finite_cost(D, x_lengths, y_lengths, o.bandwidth, o.sakoe_chiba_radius, o.itakura_max_slope);
  if (normalize) values = values - 0.5 * (cost(*D_xx, x_lengths, x_lengths) + cost(*D_yy, y_lengths, y_lengths));
  return reduce(values, reduction);
}

at::Tensor alignment_from_cost(const at::Tensor& D, const c10::optional<at::Tensor>& x_lengths,
                               const c10::optional<at::Tensor>& y_lengths, double gamma,
                               c10::optional<double> bandwidth, bool check_inputs,
                               c10::optional<c10::string_view> global_constraint,
                               c10::optional<int64_t> sakoe_chiba_radius, c10::optional<double> itakura_max_slope) {
  const LossOptions o = resolve_options(gamma, bandwidth, false, "sqeuclidean", c10::nullopt, "none", global_constraint,
                                        sakoe_chiba_radius, itakura_max_slope);
  at::Tensor E =
      alignment_of_cost(D, gamma, o.bandwidth, x_lengths, y_lengths, o.sakoe_chiba_radius, o.itakura_max_slope);
  if (check_inputs)
    check_finite_cost(D, x_lengths, y_lengths, o.bandwidth, o.sakoe_chiba_radius, o.itakura_max_slope);
  return E;
}

at::Tensor alignment(const at::Tensor& x, const at::Tensor& y, const c10::optional<at::Tensor>& x_lengths,
                     const c10::optional<at::Tensor>& y_lengths, double gamma, c10::optional<double> bandwidth,
                     c10::string_view dist, bool check_inputs, c10::optional<c10::string_view> global_constraint,
                     c10::optional<int64_t> sakoe_chiba_radius, c10::optional<double> itakura_max_slope) {
  const LossOptions o = resolve_options(gamma, bandwidth, false, dist, false, "none", global_constraint,
                                        sakoe_chiba_radius, itakura_max_slope);
  const auto [xf, yf] = floating_pair(x, y);
  const at::Tensor E = alignment_from_cost(ops::pairwise_cost(xf, yf, o.dist), x_lengths, y_lengths, gamma, bandwidth,
                                           false, global_constraint, sakoe_chiba_radius, itakura_max_slope);
  if (check_inputs)
    check_finite_series(x, y, x_lengths, y_lengths, o.bandwidth, o.sakoe_chiba_radius, o.itakura_max_slope);
  return E;
}

}  // namespace
}  // namespace sdtw::ops::detail

TORCH_LIBRARY_FRAGMENT(sdtw, m) {
  m.def(
      "soft_dtw_options(float gamma=1.0, float? bandwidth=None, bool normalize=False, str dist=\"sqeuclidean\","
      " bool? fused=None, str reduction=\"none\", str? global_constraint=None, int? sakoe_chiba_radius=None,"
      " float? itakura_max_slope=None, float warp=0.0, bool subsequence=False) -> (float, int, bool, str, bool, str)");
  // tslearn's constraint keywords as the value operators' (sakoe_chiba_radius, itakura_max_slope).
  m.def(
      "constraint_options(str? global_constraint=None, int? sakoe_chiba_radius=None, float? itakura_max_slope=None)"
      " -> (int, float)");
  m.def("zero_padding(Tensor x, Tensor y, Tensor? x_lengths=None, Tensor? y_lengths=None) -> (Tensor, Tensor)");
  m.def(
      "soft_dtw_loss(Tensor x, Tensor y, Tensor? x_lengths=None, Tensor? y_lengths=None, float gamma=1.0,"
      " float? bandwidth=None, bool normalize=False, str dist=\"sqeuclidean\", bool? fused=None,"
      " str reduction=\"none\", bool check_inputs=False, str? global_constraint=None, int? sakoe_chiba_radius=None,"
      " float? itakura_max_slope=None, float warp=0.0, bool subsequence=False, str memory=\"auto\") -> Tensor");
  m.def(
      "soft_dtw_cost_loss(Tensor D, Tensor? x_lengths=None, Tensor? y_lengths=None, float gamma=1.0,"
      " float? bandwidth=None, str reduction=\"none\", Tensor? D_xx=None, Tensor? D_yy=None,"
      " bool check_inputs=False, str? global_constraint=None, int? sakoe_chiba_radius=None,"
      " float? itakura_max_slope=None, float warp=0.0, bool subsequence=False, str memory=\"auto\") -> Tensor");
  m.def(
      "alignment(Tensor x, Tensor y, Tensor? x_lengths=None, Tensor? y_lengths=None, float gamma=1.0,"
      " float? bandwidth=None, str dist=\"sqeuclidean\", bool check_inputs=False, str? global_constraint=None,"
      " int? sakoe_chiba_radius=None, float? itakura_max_slope=None) -> Tensor");
  m.def(
      "alignment_from_cost(Tensor D, Tensor? x_lengths=None, Tensor? y_lengths=None, float gamma=1.0,"
      " float? bandwidth=None, bool check_inputs=False, str? global_constraint=None, int? sakoe_chiba_radius=None,"
      " float? itakura_max_slope=None) -> Tensor");
}

TORCH_LIBRARY_IMPL(sdtw, CompositeImplicitAutograd, m) {
  m.impl("soft_dtw_options", TORCH_FN(sdtw::ops::detail::soft_dtw_options));
  m.impl("zero_padding", TORCH_FN(sdtw::ops::detail::zero_padding));
  m.impl("constraint_options", TORCH_FN(sdtw::ops::detail::constraint_options));
  m.impl("soft_dtw_loss", TORCH_FN(sdtw::ops::detail::soft_dtw_loss));
  m.impl("soft_dtw_cost_loss", TORCH_FN(sdtw::ops::detail::soft_dtw_cost_loss));
  m.impl("alignment", TORCH_FN(sdtw::ops::detail::alignment));
  m.impl("alignment_from_cost", TORCH_FN(sdtw::ops::detail::alignment_from_cost));
}
