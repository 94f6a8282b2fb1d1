// ops::mobius with rescaling, and reference::mobius.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include <boost/test/unit_test.hpp>
#include <recur/ops/mobius.hpp>
#include <recur/reference/mobius.hpp>

#include "common/linrec_harness.hpp"

namespace ops = recur::ops;
namespace ref = recur::reference;
using recur::layout;
using recur_test::rng;
using recur_test::seed_for;

namespace {

static_assert(ops::mobius<double>{2, 1, 0, 1}(3.0) == 7.0);
static_assert(ops::mobius_compose_unscaled{}(ops::mobius<int>{1, 1, 0, 1}, ops::mobius<int>{2, 0, 0, 1}) ==
              ops::mobius<int>{2, 2, 0, 1});

// The pivot map of a diagonally dominant tridiagonal row, p -> b / (a - b p)
// with |a| >= 2.5 |b| (Wakatani eq. 5): contractive, |p| <= 1/2 throughout.
// unit_b: |b| = 1, so that products neither shrink nor grow too fast.
template <class T>
ops::mobius<T> pivot_map(rng& r, bool unit_b = false) {
  T const b = T(unit_b ? r.sign() : r.symmetric());
  T const a = T(r.sign() * (2.5 + r.uniform())) * (b == T(0) ? T(1) : std::fabs(b));
  return {T(0), b, -b, a};
}

using recur_test::same_bits;

}  // namespace

BOOST_AUTO_TEST_SUITE(mobius_algebra)

BOOST_AUTO_TEST_CASE(fold_equals_sequential_application) {
  rng r(seed_for(201));
  for (int rep = 0; rep < 200; ++rep) {
    double const p0 = 0.5 * r.symmetric();
    auto acc = ops::mobius_identity<double>();
    double p = p0;
    for (int i = 0; i < 100; ++i) {
      auto const m = pivot_map<double>(r);
      acc = ops::mobius_compose{}(acc, m);
      p = m(p);
      // Contractive maps: errors do not grow; a few ulps of |p| <= 1/2.
      BOOST_TEST(std::fabs(acc(p0) - p) <= 1e-14, "rep " << rep << " step " << i);
    }
  }
}

BOOST_AUTO_TEST_CASE(associative_as_maps) {
  rng r(seed_for(202));
  ops::mobius_compose const op;
  for (int rep = 0; rep < 1000; ++rep) {
    auto const x = pivot_map<double>(r), y = pivot_map<double>(r), z = pivot_map<double>(r);
    double const p = 0.5 * r.symmetric();
    BOOST_TEST(std::fabs(op(op(x, y), z)(p) - op(x, op(y, z))(p)) <= 1e-15);
  }
}

BOOST_AUTO_TEST_CASE(not_commutative) {
  ops::mobius<double> const l{1, 1, 0, 1}, r{0, 1, 1, 0};  // p + 1, 1 / p
  BOOST_TEST(ops::mobius_compose{}(l, r)(1.0) == 0.5);     // 1 / (1 + 1): l first
  BOOST_TEST(ops::mobius_compose{}(r, l)(1.0) == 2.0);     // 1/1 + 1
}

BOOST_AUTO_TEST_CASE(identity_is_neutral_as_a_map) {
  rng r(seed_for(203));
  auto const id = ops::mobius_identity<float>();
  for (int rep = 0; rep < 1000; ++rep) {
    auto const x = pivot_map<float>(r);
    float const p = float(0.5 * r.symmetric());
    // Entries change by a power of two (the rescaling); the map does not, to the bit.
    BOOST_TEST(same_bits(ops::mobius_compose{}(id, x)(p), x(p)));
    BOOST_TEST(same_bits(ops::mobius_compose{}(x, id)(p), x(p)));
  }
}

// Where the unscaled product stays in the normal range, the rescaled one is
// the same up to one power of two per entry, and apply() agrees bit for bit.
BOOST_AUTO_TEST_CASE(rescaling_is_exact_in_range) {
  rng r(seed_for(204));
  for (int rep = 0; rep < 200; ++rep) {
    auto scaled = ops::mobius_identity<float>(), plain = scaled;
    for (int i = 0; i < 20; ++i) {  // |entries| grow at most like 4.5^i: far from overflow
      auto const m = pivot_map<float>(r, true);
      scaled = ops::mobius_compose{}(scaled, m);
      plain = ops::mobius_compose_unscaled{}(plain, m);
      int e = 0;
      std::frexp(std::max({std::fabs(plain.a), std::fabs(plain.b), std::fabs(plain.c), std::fabs(plain.d)}),
                 &e);
      BOOST_TEST(same_bits(scaled.a, std::ldexp(plain.a, -e)));
      BOOST_TEST(same_bits(scaled.b, std::ldexp(plain.b, -e)));
      BOOST_TEST(same_bits(scaled.c, std::ldexp(plain.c, -e)));
      BOOST_TEST(same_bits(scaled.d, std::ldexp(plain.d, -e)));
      float const p = float(0.25 * r.symmetric());
      BOOST_TEST(same_bits(scaled(p), plain(p)));
    }
  }
}

// p -> 1 / (3 - p): the unscaled product grows like 2.618^n and overflows
// float after ~90 steps (and, scaled down by 2^-20 per step, underflows);
// the rescaled product stays finite and agrees with double.
BOOST_AUTO_TEST_CASE(long_products_overflow_only_unscaled) {
  for (float const scale : {1.0f, 0x1.0p-20f}) {
    ops::mobius<float> const m{0, scale, -scale, 3 * scale};
    auto scaled = ops::mobius_identity<float>(), plain = scaled;
    double p = 0.25;  // sequential, in double
    for (int i = 0; i < 300; ++i) {
      scaled = ops::mobius_compose{}(scaled, m);
      plain = ops::mobius_compose_unscaled{}(plain, m);
      p = 1.0 / (3.0 - p);
    }
    float const got = scaled(0.25f), bad = plain(0.25f);
    BOOST_TEST(std::isfinite(scaled.a));
    BOOST_TEST(std::isfinite(got));
    BOOST_TEST(std::fabs(got - p) <= 4 * std::numeric_limits<float>::epsilon(), "scale " << scale);
    BOOST_TEST(!std::isfinite(bad), "the unscaled product should have broken down, got " << bad);
  }
}

BOOST_AUTO_TEST_CASE(rescale_leaves_zero_and_non_finite_alone) {
  float const inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  ops::mobius<float> const zero{0, 0, 0, 0}, big{inf, 1, 0, 1};
  BOOST_TEST((ops::rescale(zero) == zero));
  BOOST_TEST((ops::rescale(big) == big));
  auto const n = ops::rescale(ops::mobius<float>{nan, 4, 0, 1});
  BOOST_TEST(std::isnan(n.a));
  auto const n2 = ops::rescale(ops::mobius<float>{4, nan, 0, 1});
  BOOST_TEST(std::isnan(n2.b));
  // A subnormal largest entry scales up without overflowing the factor.
  float const tiny = std::numeric_limits<float>::denorm_min();
  auto const t = ops::rescale(ops::mobius<float>{tiny, 0, 0, -tiny});
  BOOST_TEST(t.a == 0.5f);
  BOOST_TEST(t.d == -0.5f);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(reference_mobius)

// Against a fold of ops::mobius, per sequence, across layouts; and the pivot
// recurrence of a constant tridiagonal matrix against its fixed point.
BOOST_AUTO_TEST_CASE(matches_fold_across_layouts) {
  rng r(seed_for(205));
  for (auto const kind : {recur_test::layout_kind::contiguous, recur_test::layout_kind::interleaved,
                          recur_test::layout_kind::strided_gaps}) {
    std::int64_t const n = 37, count = 4;
    layout const lay = recur_test::make_layout(kind, n, count);
    std::int64_t const ext = recur_test::extent(lay);
    std::vector<double> al(ext), be(ext), ga(ext), de(ext), p(ext, recur_test::poison<double>()), init(count),
        fin(count);
    for (std::int64_t i = 0; i < ext; ++i) {
      auto const m = pivot_map<double>(r);
      al[i] = m.a, be[i] = m.b, ga[i] = m.c, de[i] = m.d;
    }
    for (auto& v : init) v = 0.5 * r.symmetric();
    ref::mobius(al.data(), be.data(), ga.data(), de.data(), p.data(), lay, init.data(), 0.0, fin.data());
    for (std::int64_t k = 0; k < count; ++k) {
      auto acc = ops::mobius_identity<double>();
      for (std::int64_t i = 0; i < n; ++i) {
        auto const o = lay.offset(i, k);
        acc = ops::mobius_compose{}(acc, ops::mobius<double>{al[o], be[o], ga[o], de[o]});
        BOOST_TEST(std::fabs(p[o] - acc(init[k])) <= 1e-14, recur_test::name(kind)
                                                                << " k=" << k << " i=" << i);
      }
      BOOST_TEST(fin[k] == p[lay.offset(n - 1, k)]);
    }
  }
  // Constant rows (-1, 4, -1): p -> 1 / (4 - p) converges to 2 - sqrt(3).
  std::int64_t const n = 60;
  std::vector<float> al(n, 0.0f), be(n, 1.0f), ga(n, -1.0f), de(n, 4.0f), p(n);
  ref::mobius<float>(al.data(), be.data(), ga.data(), de.data(), p.data(), layout::contiguous(n), nullptr,
                     0.0f, nullptr);
  BOOST_TEST(p[0] == 0.25f);
  BOOST_TEST(std::fabs(p[n - 1] - float(2 - std::sqrt(3.0))) <= 1e-7f);
}

BOOST_AUTO_TEST_CASE(argument_errors) {
  double v[1] = {1};
  BOOST_CHECK_THROW(ref::mobius<double>(v, v, nullptr, v, v, layout::contiguous(1), nullptr, 0.0, nullptr),
                    recur::invalid_argument);
  BOOST_CHECK_THROW(ref::mobius<double>(v, v, v, v, v, layout{1, -2, 1, 1}, nullptr, 0.0, nullptr),
                    recur::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()
