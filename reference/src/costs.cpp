#include "sdtw/reference/costs.hpp"

#include <stdexcept>

#include "sdtw/reference/soft_dtw.hpp"

namespace sdtw::reference {

void check_cost_inputs(const Matrix& x, const Matrix& y) {
  check_nonempty(x.rows(), x.cols(), "x");
  check_nonempty(y.rows(), y.cols(), "y");
  if (x.cols() != y.cols())
    throw std::invalid_argument("x and y must have the same number of features (x has " +
                                std::to_string(x.cols()) + ", y has " + std::to_string(y.cols()) + ")");
  check_finite(x, "x");
  check_finite(y, "y");
}

void check_alignment_shape(const Matrix& E, const Matrix& x, const Matrix& y) {
  check_shape(E.rows(), E.cols(), x.rows(), y.rows(), "E", "rows of x by rows of y");
}

PairwiseCost::PairwiseCost(const Matrix& x, const Matrix& y) : x_(x), y_(y) { check_cost_inputs(x, y); }

Gradients PairwiseCost::zero_gradients(const Matrix& E) const {
  check_alignment_shape(E, x_, y_);
  return {Matrix::Zero(x_.rows(), x_.cols()), Matrix::Zero(y_.rows(), y_.cols())};
}

namespace {

double sign(double v) { return v > 0 ? 1.0 : v < 0 ? -1.0 : 0.0; }

// Row i of a divided by max(||a_i||, eps), and whether that norm reached eps (the norm's branch).
struct UnitRows {
  Matrix unit;
  Vector norm;
  std::vector<bool> radial;
};

UnitRows unit_rows(const Matrix& a) {
  UnitRows u{Matrix(a.rows(), a.cols()), Vector(a.rows()), std::vector<bool>(a.rows())};
  for (long i = 0; i < a.rows(); ++i) {
    const double n = a.row(i).norm();
    u.radial[i] = n >= kCosineEps;
    u.norm(i) = u.radial[i] ? n : kCosineEps;
    u.unit.row(i) = a.row(i) / u.norm(i);
  }
  return u;
}

}  // namespace

Matrix L1Cost::compute() const {
  Matrix D(x_.rows(), y_.rows());
  for (long i = 0; i < x_.rows(); ++i)
    for (long j = 0; j < y_.rows(); ++j) D(i, j) = (x_.row(i) - y_.row(j)).cwiseAbs().sum();
  return D;
}

Gradients L1Cost::jacobian_product(const Matrix& E) const {
  Gradients g = zero_gradients(E);
  for (long i = 0; i < x_.rows(); ++i)
    for (long j = 0; j < y_.rows(); ++j)
      for (long k = 0; k < x_.cols(); ++k) {
        const double s = E(i, j) * sign(x_(i, k) - y_(j, k));
        g.x(i, k) += s;
        g.y(j, k) -= s;
      }
  return g;
}

Matrix EuclideanCost::compute() const {
  Matrix D(x_.rows(), y_.rows());
  for (long i = 0; i < x_.rows(); ++i)
    for (long j = 0; j < y_.rows(); ++j) D(i, j) = (x_.row(i) - y_.row(j)).norm();
  return D;
}

Gradients EuclideanCost::jacobian_product(const Matrix& E) const {
  Gradients g = zero_gradients(E);
  for (long i = 0; i < x_.rows(); ++i)
    for (long j = 0; j < y_.rows(); ++j) {
      const Matrix diff = x_.row(i) - y_.row(j);
      const double dist = diff.norm();
      if (dist == 0.0) continue;
      g.x.row(i) += E(i, j) / dist * diff;
      g.y.row(j) -= E(i, j) / dist * diff;
    }
  return g;
}

Matrix CosineCost::compute() const {
  const UnitRows ux = unit_rows(x_), uy = unit_rows(y_);
  return Matrix::Ones(x_.rows(), y_.rows()) - ux.unit * uy.unit.transpose();
}

// With u = a / n(a): du/da = (I - [radial] u u^T) / n(a), so
// dD(i,j)/dx_i = -(uy_j - [radial x_i] c_ij ux_i) / n(x_i) with c_ij = <ux_i, uy_j>, and likewise for y_j.
Gradients CosineCost::jacobian_product(const Matrix& E) const {
  Gradients g = zero_gradients(E);
  const UnitRows ux = unit_rows(x_), uy = unit_rows(y_);
  for (long i = 0; i < x_.rows(); ++i)
    for (long j = 0; j < y_.rows(); ++j) {
      const double c = ux.unit.row(i).dot(uy.unit.row(j));
      const double cx = ux.radial[i] ? c : 0.0, cy = uy.radial[j] ? c : 0.0;
      g.x.row(i) -= E(i, j) / ux.norm(i) * (uy.unit.row(j) - cx * ux.unit.row(i));
      g.y.row(j) -= E(i, j) / uy.norm(j) * (ux.unit.row(i) - cy * uy.unit.row(j));
    }
  return g;
}

Matrix NegativeDotCost::compute() const { return -(x_ * y_.transpose()); }

Gradients NegativeDotCost::jacobian_product(const Matrix& E) const {
  check_alignment_shape(E, x_, y_);
  return {-(E * y_), -(E.transpose() * x_)};
}

namespace {

template <class C>
NamedCost::Any construct(const Matrix& x, const Matrix& y) {
  return C(x, y);
}

struct CostEntry {
  const char* name;
  NamedCost::Any (*construct)(const Matrix&, const Matrix&);
};

const CostEntry kCosts[] = {
    {"sqeuclidean", construct<SqEuclideanCost>}, {"l1", construct<L1Cost>},
    {"euclidean", construct<EuclideanCost>},     {"cosine", construct<CosineCost>},
    {"negative_dot", construct<NegativeDotCost>},
};

NamedCost::Any construct_named(std::string_view name, const Matrix& x, const Matrix& y) {
  for (const CostEntry& entry : kCosts)
    if (name == entry.name) return entry.construct(x, y);
  std::string known;
  for (const std::string& n : cost_names()) known += (known.empty() ? "'" : ", '") + n + "'";
  throw std::invalid_argument("cost must be one of " + known + " (got '" + std::string(name) + "')");
}

}  // namespace

std::vector<std::string> cost_names() {
  std::vector<std::string> names;
  for (const CostEntry& entry : kCosts) names.emplace_back(entry.name);
  return names;
}

NamedCost::NamedCost(std::string_view name, const Matrix& x, const Matrix& y)
    : cost_(construct_named(name, x, y)) {}

Matrix NamedCost::compute() const {
  return std::visit([](const auto& cost) { return cost.compute(); }, cost_);
}

Gradients NamedCost::jacobian_product(const Matrix& E) const {
  return std::visit([&](const auto& cost) { return cost.jacobian_product(E); }, cost_);
}

SoftDtwGradResult soft_dtw_with_cost(std::string_view cost, const Matrix& x, const Matrix& y, const Options& options) {
  const NamedCost c(cost, x, y);
  const SoftDtwResult r = soft_dtw_with_alignment(c.compute(), options);
  return {r.value, c.jacobian_product(r.E)};
}

}  // namespace sdtw::reference
