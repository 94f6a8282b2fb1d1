// ops::affine: the algebra every linrec algorithm is built on.
#include <cmath>
#include <cstdint>
#include <limits>

#include <boost/test/unit_test.hpp>
#include <recur/ops/affine.hpp>

#include "common/linrec_harness.hpp"

using recur::ops::affine;
using recur::ops::affine_identity;
using recur::ops::compose;
using recur::ops::compose_resetting;

namespace {

// Compile-time: the algebra is constexpr.
static_assert(affine<int>{2, 3}(5) == 13);
static_assert(compose{}(affine<int>{2, 1}, affine<int>{3, 0}) == affine<int>{6, 3});
static_assert(compose{}(affine_identity<int>(), affine<int>{4, 5}) == affine<int>{4, 5});

// Small integers as floats: every product and sum below is exact.
template <class T>
affine<T> small_int_map(recur_test::rng& r) {
  auto const v = [&] { return T(static_cast<int>(r.next() % 17) - 8); };
  return {v(), v()};
}

template <class T>
affine<T> random_map(recur_test::rng& r) {
  return {T(r.symmetric()), T(r.symmetric())};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(affine_algebra)

BOOST_AUTO_TEST_CASE(associative_exact_on_small_integers) {
  recur_test::rng r(recur_test::seed_for(1));
  for (int rep = 0; rep < 10000; ++rep) {
    auto const x = small_int_map<float>(r), y = small_int_map<float>(r), z = small_int_map<float>(r);
    auto const lhs = compose{}(compose{}(x, y), z), rhs = compose{}(x, compose{}(y, z));
    BOOST_TEST((lhs == rhs), "x=(" << x.a << "," << x.b << ") y=(" << y.a << "," << y.b << ") z=(" << z.a
                                   << "," << z.b << ")");
  }
}

BOOST_AUTO_TEST_CASE(associative_to_rounding_on_random) {
  recur_test::rng r(recur_test::seed_for(2));
  auto const run = [&](auto zero) {
    using T = decltype(zero);
    T const eps = std::numeric_limits<T>::epsilon();
    for (int rep = 0; rep < 10000; ++rep) {
      auto const x = random_map<T>(r), y = random_map<T>(r), z = random_map<T>(r);
      auto const lhs = compose{}(compose{}(x, y), z), rhs = compose{}(x, compose{}(y, z));
      // |a| and |b| of the result are at most 1 and 3; a few roundings each.
      BOOST_TEST(std::fabs(lhs.a - rhs.a) <= 4 * eps);
      BOOST_TEST(std::fabs(lhs.b - rhs.b) <= 12 * eps);
    }
  };
  run(0.0f);
  run(0.0);
}

BOOST_AUTO_TEST_CASE(not_commutative) {
  affine<float> const l{2, 1}, r{3, 0};
  auto const lr = compose{}(l, r), rl = compose{}(r, l);
  BOOST_TEST((lr == affine<float>{6, 3}));  // r(l(x)) = 3 (2x + 1)
  BOOST_TEST((rl == affine<float>{6, 1}));  // l(r(x)) = 2 (3x) + 1
  BOOST_TEST(!(lr == rl));
}

BOOST_AUTO_TEST_CASE(identity_left_and_right) {
  recur_test::rng r(recur_test::seed_for(3));
  auto const id = affine_identity<double>();
  BOOST_TEST(id.a == 1.0);
  BOOST_TEST(id.b == 0.0);
  for (int rep = 0; rep < 1000; ++rep) {
    auto const x = random_map<double>(r);
    BOOST_TEST((compose{}(id, x) == x));
    BOOST_TEST((compose{}(x, id) == x));
    BOOST_TEST((compose_resetting{}(id, x) == x));
    BOOST_TEST((compose_resetting{}(x, id) == x));
  }
}

BOOST_AUTO_TEST_CASE(call_applies_the_map) {
  BOOST_TEST((affine<float>{2, 3}(5.0f) == 13.0f));
  BOOST_TEST((affine<double>{-0.5, 1}(4.0) == -1.0));
  recur_test::rng r(recur_test::seed_for(4));
  for (int rep = 0; rep < 1000; ++rep) {
    auto const l = small_int_map<float>(r), m = small_int_map<float>(r);
    float const x = small_int_map<float>(r).a;
    BOOST_TEST(compose{}(l, m)(x) == m(l(x)));  // l first, then m
  }
}

// Folding the steps (s_i, t_i) with compose and applying the result to init
// is the recurrence: the scan view the parallel algorithms rely on.
BOOST_AUTO_TEST_CASE(fold_is_the_recurrence) {
  recur_test::rng r(recur_test::seed_for(5));
  for (int n = 1; n <= 20; ++n) {
    auto acc = affine_identity<double>();
    double const init = static_cast<double>(r.next() % 7) - 3;
    double x = init;
    for (int i = 0; i < n; ++i) {
      affine<double> const step{static_cast<double>(r.next() % 3) - 1, static_cast<double>(r.next() % 9) - 4};
      acc = compose{}(acc, step);
      x = step.a * x + step.b;
      BOOST_TEST(acc(init) == x);  // small integers: exact
    }
  }
}

BOOST_AUTO_TEST_CASE(compose_resetting_equals_compose_on_finite) {
  recur_test::rng r(recur_test::seed_for(6));
  for (int rep = 0; rep < 10000; ++rep) {
    auto l = random_map<float>(r), m = random_map<float>(r);
    if (rep % 10 == 0) m.a = 0.0f;  // a reset with finite history: the same too
    BOOST_TEST((compose_resetting{}(l, m) == compose{}(l, m)));
  }
}

BOOST_AUTO_TEST_CASE(compose_resetting_forgets_non_finite_history) {
  float const inf = std::numeric_limits<float>::infinity();
  float const nan = std::numeric_limits<float>::quiet_NaN();
  affine<float> const r{0.0f, 5.0f};
  for (auto const l : {affine<float>{inf, 1.0f}, affine<float>{1.0f, nan}, affine<float>{nan, -inf}}) {
    auto const c = compose_resetting{}(l, r);
    BOOST_TEST(c.a == 0.0f);
    BOOST_TEST(c.b == 5.0f);
    auto const plain = compose{}(l, r);  // 0 * inf or 0 * NaN: NaN leaks through
    BOOST_TEST((std::isnan(plain.a) || std::isnan(plain.b)));
  }
  // With r.a != 0 history is kept, non-finite or not.
  auto const kept = compose_resetting{}(affine<double>{1.0, std::numeric_limits<double>::infinity()},
                                        affine<double>{2.0, 1.0});
  BOOST_TEST(std::isinf(kept.b));
}

BOOST_AUTO_TEST_SUITE_END()
