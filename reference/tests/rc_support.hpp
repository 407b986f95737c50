#pragma once
// RapidCheck glue shared by the *_property_test.cpp files: a property macro with a per-property
// case count, and the one way every property draws shapes, gammas, bands and input seeds.
#include <rapidcheck.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "rapidcheck_seed.hpp"
#include "test_support.hpp"

namespace sdtw::test {

// `cases` successes per property, unless RC_PARAMS names max_success (then it wins, e.g. for a
// long soak: RC_PARAMS="max_success=5000"). Seed and reproduce strings still come from RC_PARAMS;
// the seed is fixed unless SDTW_FRESH_SEEDS=1 (rapidcheck_seed.hpp).
template <class Testable>
void check_property(Testable&& testable, int cases) {
  fix_rapidcheck_seed();
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  const char* env = std::getenv("RC_PARAMS");
  if (!env || !std::strstr(env, "max_success")) params.maxSuccess = cases;
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  rc::detail::TestMetadata metadata;
  metadata.id = std::string(info->test_suite_name()) + "/" + info->name();
  metadata.description = info->name();
  const auto result = rc::detail::checkTestable(std::forward<Testable>(testable), metadata, params);
  std::ostringstream msg;
  rc::detail::printResultMessage(result, msg);
  if (!result.template is<rc::detail::SuccessResult>()) FAIL() << msg.str() << "\n" << rapidcheck_seed();
  std::cout << msg.str() << std::endl;
}

// N, M in 1..12 (one time in five up to 40), dim in 1..4, gamma log-uniform in [1e-3, 10], and a
// Sakoe-Chiba band |N - M| + 0..3 one time in three. RapidCheck's inRange widens with the case
// size, so the first cases favour N, M = 1 and small gamma (measured: about half below 1e-2).
inline Shape draw_shape() {
  const bool big = *rc::gen::weightedElement<bool>({{4, false}, {1, true}});
  const long max_len = big ? 40 : 12;
  Shape s{*rc::gen::inRange<long>(1, max_len + 1), *rc::gen::inRange<long>(1, max_len + 1),
          *rc::gen::inRange<long>(1, 5), 0.0, std::nullopt};
  s.gamma = std::pow(10.0, -3.0 + *rc::gen::inRange(0, 4001) / 1000.0);
  if (*rc::gen::weightedElement<bool>({{2, false}, {1, true}})) s.band = std::labs(s.n - s.m) + *rc::gen::inRange<long>(0, 4);
  return s;
}

// Inputs come from a drawn seed through random_matrix (uniform, portable) rather than from
// RapidCheck's own double generators, which favour huge and special values.
inline std::uint64_t draw_seed() { return *rc::gen::inRange<std::uint64_t>(0, 1u << 30); }

// A cost matrix for the shape, uniform in [0, 2).
inline Matrix draw_cost(const Shape& s) { return random_matrix(s.n, s.m, draw_seed(), 0.0, 2.0); }

// A series of `rows` points in `dim` features, uniform in [-1, 1).
inline Matrix draw_series(long rows, long dim) { return random_matrix(rows, dim, draw_seed()); }

}  // namespace sdtw::test

#define SDTW_PROPERTY(Suite, Name, Cases)                                                   \
  void sdtw_property_##Suite##_##Name();                                                    \
  TEST(Suite, Name) { ::sdtw::test::check_property(&sdtw_property_##Suite##_##Name, Cases); } \
  void sdtw_property_##Suite##_##Name()

// RC_ASSERT for a ::testing::AssertionResult, keeping its message.
#define SDTW_RC_EXPECT(expr)                                                         \
  do {                                                                               \
    const ::testing::AssertionResult sdtw_rc_result_ = (expr);                       \
    if (!sdtw_rc_result_) RC_FAIL(std::string(#expr) + ": " + sdtw_rc_result_.message()); \
  } while (0)
