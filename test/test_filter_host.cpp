// recur::lfilter, lfilter_zi, sosfilt, dpcm_encode and dpcm_decode with
// recur::host: bitwise against the sequential references (the same
// arithmetic), against analytic responses, in place, zi/zf continuation,
// layouts, thread counts, argument errors (nothing written), DPCM round trips.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <numbers>
#include <span>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>
#include <recur/filter.hpp>
#include <recur/reference/dpcm.hpp>
#include <recur/reference/lfilter.hpp>

#include "common/dpcm.hpp"
#include "common/layouts.hpp"
#include "common/poison.hpp"
#include "common/random.hpp"

namespace ref = recur::reference;
using recur::host;
using recur::layout;
using recur_test::layout_kind;
using recur_test::rng;
using recur_test::seed_for;

namespace {

constexpr auto const& all_kinds = recur_test::all_layout_kinds;

// A stable filter: a = a0 prod_j (1 - r_j z^-1), real poles |r_j| < 0.8, a0
// not 1 (normalisation is exercised), b random.
template <class T>
struct filter {
  std::vector<T> b, a;
};

template <class T>
filter<T> random_filter(rng& r, int nb, int poles) {
  std::vector<double> a = {1.0};
  for (int j = 0; j < poles; ++j) {
    double const root = 0.8 * r.symmetric();
    a.push_back(0.0);
    for (std::size_t i = a.size() - 1; i > 0; --i) a[i] -= root * a[i - 1];
  }
  double const a0 = 0.5 + r.uniform();
  filter<T> f;
  for (double v : a) f.a.push_back(static_cast<T>(v * a0));
  for (int j = 0; j < nb; ++j) f.b.push_back(static_cast<T>(r.symmetric()));
  return f;
}

using recur_test::covered;
using recur_test::gaps_untouched;
using recur_test::random_values;
using recur_test::same_bytes;

template <class T>
void lfilter_matches_reference(std::uint64_t seed) {
  rng r(seed);
  for (int nb = 1; nb <= 5; ++nb)
    for (int poles = 0; poles <= 4; ++poles) {
      auto const f = random_filter<T>(r, nb, poles);
      std::int64_t const m = std::max(nb, poles + 1) - 1;
      for (auto const kind : all_kinds)
        for (std::int64_t const count : {1, 3, 67}) {
          std::int64_t const n = 37;
          layout const lay = recur_test::make_layout(kind, n, count);
          std::size_t const ext = static_cast<std::size_t>(recur_test::extent(lay));
          auto const x = random_values<T>(r, ext);
          auto const zi = random_values<T>(r, static_cast<std::size_t>(count * m));
          std::vector<T> want(ext, recur_test::poison<T>()), want_zf(zi.size(), recur_test::poison<T>());
          ref::lfilter<T>(f.b, f.a, x.data(), want.data(), lay, zi.data(), want_zf.data());
          for (int const threads : {0, 1}) {
            std::vector<T> y(ext, recur_test::poison<T>()), zf(zi.size(), recur_test::poison<T>());
            recur::lfilter(host{threads}, f.b, f.a, x.data(), y.data(), lay, {zi.data(), zf.data()});
            BOOST_TEST(same_bytes(y, want), "nb=" << nb << " poles=" << poles << " " << recur_test::name(kind)
                                                  << " count=" << count << " threads=" << threads);
            BOOST_TEST(same_bytes(zf, want_zf));
            BOOST_TEST(gaps_untouched(y, lay));
          }
          // Without state: zero initial state, as the reference with null zi.
          std::vector<T> want0(ext, recur_test::poison<T>()), y0(ext, recur_test::poison<T>());
          ref::lfilter<T>(f.b, f.a, x.data(), want0.data(), lay, nullptr, nullptr);
          recur::lfilter(host{}, f.b, f.a, x.data(), y0.data(), lay);
          BOOST_TEST(same_bytes(y0, want0));
        }
    }
}

template <class T>
void sosfilt_matches_reference(std::uint64_t seed) {
  rng r(seed);
  for (int const sections : {1, 2, 4}) {
    std::vector<T> sos;
    for (int j = 0; j < sections; ++j) {
      auto const f = random_filter<T>(r, 3, 2);
      sos.insert(sos.end(), f.b.begin(), f.b.end());
      sos.insert(sos.end(), f.a.begin(), f.a.end());
    }
    for (auto const kind : all_kinds) {
      std::int64_t const n = 53, count = 70;
      layout const lay = recur_test::make_layout(kind, n, count);
      std::size_t const ext = static_cast<std::size_t>(recur_test::extent(lay));
      auto const x = random_values<T>(r, ext);
      auto const zi = random_values<T>(r, static_cast<std::size_t>(count * 2 * sections));
      std::vector<T> want(ext, recur_test::poison<T>()), want_zf(zi.size());
      ref::sosfilt<T>(sos, x.data(), want.data(), lay, zi.data(), want_zf.data());
      for (int const threads : {0, 1}) {
        std::vector<T> y(ext, recur_test::poison<T>()), zf(zi.size(), recur_test::poison<T>());
        recur::sosfilt(host{threads}, sos, x.data(), y.data(), lay, {zi.data(), zf.data()});
        BOOST_TEST(same_bytes(y, want), "sections=" << sections << " " << recur_test::name(kind));
        BOOST_TEST(same_bytes(zf, want_zf));
        BOOST_TEST(gaps_untouched(y, lay));
      }
      // The cascade equals lfilter section after section (same DF2T steps).
      std::vector<T> v = x;
      for (int j = 0; j < sections; ++j) {
        std::span<T const> const row(sos.data() + 6 * j, 6);
        recur::lfilter(host{}, row.subspan(0, 3), row.subspan(3, 3), v.data(), v.data(), lay);
      }
      std::vector<T> y(ext, recur_test::poison<T>());
      recur::sosfilt(host{}, sos, x.data(), y.data(), lay);
      auto const in = covered(lay);
      bool same = true;
      for (std::size_t o = 0; o < ext; ++o)
        if (in[o]) same = same && recur_test::same_bits(y[o], v[o]);
      BOOST_TEST(same);
    }
  }
}

// Filtering [0, h) then [h, n) with zf -> zi gives the bits of one call.
template <class T>
void continuation(std::uint64_t seed) {
  rng r(seed);
  auto const f = random_filter<T>(r, 4, 3);
  std::vector<T> sos;
  for (int j = 0; j < 3; ++j) {
    auto const s = random_filter<T>(r, 3, 2);
    sos.insert(sos.end(), s.b.begin(), s.b.end());
    sos.insert(sos.end(), s.a.begin(), s.a.end());
  }
  std::int64_t const m = 3;
  for (auto const kind : all_kinds)
    for (std::int64_t const h : {0, 1, 20, 60}) {
      std::int64_t const n = 61, count = 5;
      layout const lay = recur_test::make_layout(kind, n, count);
      std::size_t const ext = static_cast<std::size_t>(recur_test::extent(lay));
      auto const x = random_values<T>(r, ext);
      // The two halves as layouts of their own over the same memory.
      layout first = lay, second = lay;
      first.n = h;
      second.n = n - h;
      std::int64_t const shift = h * lay.element_stride;

      std::vector<T> once(ext, recur_test::poison<T>()), zf_once(count * m);
      recur::lfilter(host{}, f.b, f.a, x.data(), once.data(), lay, {nullptr, zf_once.data()});
      std::vector<T> halves(ext, recur_test::poison<T>()), z(count * m, recur_test::poison<T>());
      recur::lfilter(host{}, f.b, f.a, x.data(), halves.data(), first, {nullptr, z.data()});
      // init == final_state: the state updated in place.
      recur::lfilter(host{}, f.b, f.a, x.data() + shift, halves.data() + shift, second, {z.data(), z.data()});
      BOOST_TEST(same_bytes(once, halves), recur_test::name(kind) << " h=" << h);
      BOOST_TEST(same_bytes(z, zf_once));

      std::vector<T> sonce(ext, recur_test::poison<T>()), szf(count * 6);
      recur::sosfilt(host{}, sos, x.data(), sonce.data(), lay, {nullptr, szf.data()});
      std::vector<T> shalves = x, sz(count * 6);  // in place as well
      recur::sosfilt(host{}, sos, shalves.data(), shalves.data(), first, {nullptr, sz.data()});
      recur::sosfilt(host{}, sos, shalves.data() + shift, shalves.data() + shift, second,
                     {sz.data(), sz.data()});
      auto const in = covered(lay);
      bool same = true;
      for (std::size_t o = 0; o < ext; ++o)
        if (in[o]) same = same && recur_test::same_bits(sonce[o], shalves[o]);
      BOOST_TEST(same);
      BOOST_TEST(same_bytes(sz, szf));
    }
}

template <class T>
void in_place(std::uint64_t seed) {
  rng r(seed);
  auto const f = random_filter<T>(r, 3, 4);
  for (auto const kind : all_kinds) {
    layout const lay = recur_test::make_layout(kind, 45, 9);
    std::size_t const ext = static_cast<std::size_t>(recur_test::extent(lay));
    auto const x = random_values<T>(r, ext);
    std::vector<T> y(ext, recur_test::poison<T>());
    recur::lfilter(host{}, f.b, f.a, x.data(), y.data(), lay);
    std::vector<T> v = x;
    recur::lfilter(host{}, f.b, f.a, v.data(), v.data(), lay);
    auto const in = covered(lay);
    bool same = true, gaps_kept = true;
    for (std::size_t o = 0; o < ext; ++o) {
      if (in[o]) same = same && recur_test::same_bits(v[o], y[o]);
      if (!in[o]) gaps_kept = gaps_kept && recur_test::same_bits(v[o], x[o]);
    }
    BOOST_TEST(same, recur_test::name(kind));
    BOOST_TEST(gaps_kept);
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(filter_host)

BOOST_AUTO_TEST_CASE(lfilter_matches_reference_f32) { lfilter_matches_reference<float>(seed_for(501)); }
BOOST_AUTO_TEST_CASE(lfilter_matches_reference_f64) { lfilter_matches_reference<double>(seed_for(502)); }
BOOST_AUTO_TEST_CASE(sosfilt_matches_reference_f32) { sosfilt_matches_reference<float>(seed_for(503)); }
BOOST_AUTO_TEST_CASE(sosfilt_matches_reference_f64) { sosfilt_matches_reference<double>(seed_for(504)); }
BOOST_AUTO_TEST_CASE(zi_zf_continuation_f32) { continuation<float>(seed_for(505)); }
BOOST_AUTO_TEST_CASE(zi_zf_continuation_f64) { continuation<double>(seed_for(506)); }
BOOST_AUTO_TEST_CASE(in_place_f32) { in_place<float>(seed_for(507)); }
BOOST_AUTO_TEST_CASE(in_place_f64) { in_place<double>(seed_for(508)); }

namespace {

// Batches big enough to be spread over threads (at least 2^14 samples per
// thread): the same bits for every thread count, every layout.
template <class T>
void thread_counts(std::uint64_t seed) {
  rng r(seed);
  auto const f = random_filter<T>(r, 4, 4);
  std::vector<T> sos;
  for (int j = 0; j < 2; ++j) {
    auto const s = random_filter<T>(r, 3, 2);
    sos.insert(sos.end(), s.b.begin(), s.b.end());
    sos.insert(sos.end(), s.a.begin(), s.a.end());
  }
  std::vector<std::int64_t> const c = {3, -3, 1};
  for (auto const kind : all_kinds) {
    std::int64_t const n = 300, count = 600;  // interleaved: blocks of 256, 256 and 88 sequences
    layout const lay = recur_test::make_layout(kind, n, count);
    std::size_t const ext = static_cast<std::size_t>(recur_test::extent(lay));
    auto const x = random_values<T>(r, ext);
    auto const zi = random_values<T>(r, static_cast<std::size_t>(count * 4));
    std::vector<std::int16_t> xi(ext);
    for (auto& v : xi) v = static_cast<std::int16_t>(r.next());
    std::vector<T> want(ext, recur_test::poison<T>()), want_zf(zi.size()),
        want_s(ext, recur_test::poison<T>());
    ref::lfilter<T>(f.b, f.a, x.data(), want.data(), lay, zi.data(), want_zf.data());
    ref::sosfilt<T>(sos, x.data(), want_s.data(), lay, nullptr, nullptr);
    std::vector<std::int16_t> want_e(ext, -1);
    ref::dpcm_encode<std::int16_t>(c, 0, xi.data(), want_e.data(), lay);
    for (int const threads : {1, 2, 3, 0}) {
      std::vector<T> y(ext, recur_test::poison<T>()), zf(zi.size(), recur_test::poison<T>());
      recur::lfilter(host{threads}, f.b, f.a, x.data(), y.data(), lay, {zi.data(), zf.data()});
      BOOST_TEST(same_bytes(y, want), recur_test::name(kind) << " threads=" << threads);
      BOOST_TEST(same_bytes(zf, want_zf));
      std::vector<T> ys(ext, recur_test::poison<T>());
      recur::sosfilt(host{threads}, sos, x.data(), ys.data(), lay);
      BOOST_TEST(same_bytes(ys, want_s));
      std::vector<std::int16_t> e(ext, -1), back(ext, -1);
      recur::dpcm_encode(host{threads}, c, 0, xi.data(), e.data(), lay);
      BOOST_TEST(same_bytes(e, want_e));
      recur::dpcm_decode(host{threads}, c, 0, e.data(), back.data(), lay);
      auto const in = covered(lay);
      bool exact = true;
      for (std::size_t o = 0; o < ext; ++o)
        if (in[o]) exact = exact && back[o] == xi[o];
      BOOST_TEST(exact);
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(thread_counts_give_the_same_bits_f32) { thread_counts<float>(seed_for(516)); }
BOOST_AUTO_TEST_CASE(thread_counts_give_the_same_bits_f64) { thread_counts<double>(seed_for(517)); }

// y_i = b0 x_i + p y_{i-1}, a0 = 2 (normalised away): impulse response
// b0 p^i, step response b0 (1 - p^{i+1}) / (1 - p); a batch of both inputs.
BOOST_AUTO_TEST_CASE(one_pole_impulse_and_step) {
  std::int64_t const n = 200;
  for (double const p : {0.5, -0.9, 0.99}) {
    std::vector<double> const b = {0.6}, a = {2.0, -2.0 * p};
    layout const lay = layout::interleaved(n, 2);  // sequence 0: impulse, 1: step
    std::vector<double> x(2 * n, 0.0), y(2 * n, recur_test::poison<double>());
    x[lay.offset(0, 0)] = 1.0;
    for (std::int64_t i = 0; i < n; ++i) x[lay.offset(i, 1)] = 1.0;
    recur::lfilter(host{}, b, a, x.data(), y.data(), lay);
    for (std::int64_t i = 0; i < n; ++i) {
      double const imp = 0.3 * std::pow(p, double(i)),
                   step = 0.3 * (1 - std::pow(p, double(i + 1))) / (1 - p);
      BOOST_TEST(std::fabs(y[lay.offset(i, 0)] - imp) <= 1e-14 * (i + 1));
      BOOST_TEST(std::fabs(y[lay.offset(i, 1)] - step) <= 1e-13 * (i + 1) * (1 + std::fabs(step)));
    }
  }
}

// Two complex-conjugate poles r e^{+-iw}: y_i = x_i + 2 r cos(w) y_{i-1} -
// r^2 y_{i-2}, impulse response r^i sin((i+1) w) / sin(w); step response the
// running sum of it.
BOOST_AUTO_TEST_CASE(two_pole_impulse_and_step) {
  std::int64_t const n = 300;
  for (auto const& [rad, w] : {std::pair{0.9, 0.3}, std::pair{0.99, 1.7}, std::pair{0.5, 2.9}}) {
    std::vector<float> const b = {1.0f};
    std::vector<float> const a = {1.0f, static_cast<float>(-2 * rad * std::cos(w)),
                                  static_cast<float>(rad * rad)};
    layout const lay = layout::contiguous(n, 2);
    std::vector<float> x(2 * n, 0.0f), y(2 * n, recur_test::poison<float>());
    x[0] = 1.0f;
    std::fill(x.begin() + n, x.end(), 1.0f);
    recur::lfilter(host{2}, b, a, x.data(), y.data(), lay);
    // The analytic response of the float-rounded coefficients, in double.
    double const c1 = -static_cast<double>(a[1]), c2 = -static_cast<double>(a[2]);
    std::complex<double> const disc = std::sqrt(std::complex<double>(c1 * c1 + 4 * c2));
    std::complex<double> const p1 = (c1 + disc) / 2.0, p2 = (c1 - disc) / 2.0;
    double sum = 0, mag = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      double const h = ((std::pow(p1, double(i + 1)) - std::pow(p2, double(i + 1))) / (p1 - p2)).real();
      sum += h;
      mag += std::fabs(h);
      double const tol = 64 * std::numeric_limits<float>::epsilon() * (1 + mag) * std::sqrt(double(i + 1));
      BOOST_TEST(std::fabs(y[i] - h) <= tol, "r=" << rad << " w=" << w << " i=" << i);
      BOOST_TEST(std::fabs(y[n + i] - sum) <= tol * (1 + mag));
    }
    // The closed form in r and w agrees with the poles' form (the rounded
    // coefficients move the poles by ~1e-7).
    for (std::int64_t i = 0; i < 20; ++i)
      BOOST_TEST(std::fabs(y[i] - std::pow(rad, double(i)) * std::sin(double(i + 1) * w) / std::sin(w)) <=
                 1e-4);
  }
}

// A long stable filter in f32 stays at its steady state: the step response
// of y_i = 0.01 x_i + 0.99 y_{i-1} over 2^22 samples converges to 1 and
// stays within a few hundred eps of it (the error is bounded by the memory
// 1 / (1 - 0.99) = 100, not by n).
BOOST_AUTO_TEST_CASE(long_stable_filter_stays_accurate) {
  std::int64_t const n = std::int64_t{1} << 22;
  std::vector<float> const b = {0.01f}, a = {1.0f, -0.99f};
  std::vector<float> x(n, 1.0f);
  recur::lfilter(host{}, b, a, x.data(), x.data(), layout::contiguous(n));
  double const gain = 0.01f / (1.0 - double(0.99f));
  double worst = 0;
  for (std::int64_t i = n / 2; i < n; ++i) worst = std::max(worst, std::fabs(double(x[i]) - gain));
  BOOST_TEST(worst <= 400 * std::numeric_limits<float>::epsilon());
}

BOOST_AUTO_TEST_CASE(fir_and_order_zero) {
  // b only (a = {a0}): y = (b / a0) * x, no state; a moving sum.
  std::vector<double> const b = {1, 1, 1}, a = {2};
  std::vector<double> x = {1, 2, 3, 4, 5}, y(5), zf(2);
  recur::lfilter(host{}, b, a, x.data(), y.data(), layout::contiguous(5), {nullptr, zf.data()});
  BOOST_TEST(y == (std::vector<double>{0.5, 1.5, 3.0, 4.5, 6.0}), boost::test_tools::per_element());
  BOOST_TEST(zf == (std::vector<double>{4.5, 2.5}), boost::test_tools::per_element());
  std::vector<double> const g = {3}, one = {1};
  recur::lfilter(host{}, g, one, x.data(), y.data(), layout::contiguous(5));
  BOOST_TEST(y == (std::vector<double>{3, 6, 9, 12, 15}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(lfilter_zi_steady_state) {
  rng r(seed_for(509));
  for (int poles = 1; poles <= 4; ++poles) {
    auto const f = random_filter<double>(r, poles + 1, poles);
    auto const zi = recur::lfilter_zi(std::span<double const>(f.b), std::span<double const>(f.a));
    auto const want = ref::lfilter_zi<double>(f.b, f.a);
    BOOST_TEST(same_bytes(zi, want));
    // A constant input c with zi = c * lfilter_zi is constant from the start.
    std::int64_t const n = 50, count = 3;
    std::vector<double> x(n * count), state(zi.size() * count), y(x.size());
    for (std::int64_t k = 0; k < count; ++k) {
      double const c = double(k) - 1.5;
      for (std::int64_t i = 0; i < n; ++i) x[k * n + i] = c;
      for (std::size_t j = 0; j < zi.size(); ++j) state[k * zi.size() + j] = c * zi[j];
    }
    recur::lfilter(host{}, f.b, f.a, x.data(), y.data(), layout::contiguous(n, count), {state.data()});
    for (std::int64_t k = 0; k < count; ++k)
      for (std::int64_t i = 1; i < n; ++i) BOOST_TEST(std::fabs(y[k * n + i] - y[k * n]) <= 1e-12);
  }
  std::vector<float> const bf = {1.0f, 0.5f}, af = {1.0f, -0.25f};
  auto const zf = recur::lfilter_zi(std::span<float const>(bf), std::span<float const>(af));
  BOOST_TEST(same_bytes(zf, ref::lfilter_zi<float>(bf, af)));
  // A pole at z = 1 has no steady state.
  std::vector<double> const b1 = {1.0}, a1 = {1.0, -1.0};
  BOOST_CHECK_EXCEPTION(recur::lfilter_zi(std::span<double const>(b1), std::span<double const>(a1)),
                        recur::invalid_argument, [](recur::invalid_argument const& e) {
                          return std::string(e.what()).starts_with("recur::lfilter_zi: ") &&
                                 std::string(e.what()).find("singular") != std::string::npos;
                        });
  std::vector<double> const a0 = {0.0, 1.0};
  BOOST_CHECK_THROW(recur::lfilter_zi(std::span<double const>(b1), std::span<double const>(a0)),
                    recur::invalid_argument);
}

BOOST_AUTO_TEST_CASE(empty_problems) {
  std::vector<double> const b = {1, 2, 3}, a = {1, -0.5};
  // No sequences: no pointer needed.
  recur::lfilter<double>(host{}, b, a, nullptr, nullptr, layout::contiguous(5, 0));
  recur::sosfilt<double>(host{}, std::vector<double>{1, 0, 0, 1, 0, 0}, nullptr, nullptr,
                         layout::contiguous(5, 0));
  // Empty sequences: final_state receives init (or zeros).
  std::vector<double> const zi = {1, 2, 3, 4};
  std::vector<double> zf(4, recur_test::poison<double>());
  recur::lfilter<double>(host{}, b, a, nullptr, nullptr, layout::contiguous(0, 2), {zi.data(), zf.data()});
  BOOST_TEST(zf == zi, boost::test_tools::per_element());
  recur::lfilter<double>(host{}, b, a, nullptr, nullptr, layout::contiguous(0, 2), {nullptr, zf.data()});
  BOOST_TEST(zf == (std::vector<double>(4, 0.0)), boost::test_tools::per_element());
  std::vector<std::int64_t> const c = {1};
  recur::dpcm_encode<std::int16_t>(host{}, c, 0, nullptr, nullptr, layout::contiguous(0, 3));
  recur::dpcm_decode<float>(host{}, std::span<float const>(), nullptr, nullptr, layout::contiguous(4, 0));
}

// ------------------------------------------------------------------- DPCM --

namespace {

using recur_test::predictor;
using recur_test::predictors;
using recur_test::random_sample;

template <class S>
void integer_round_trip(std::uint64_t seed) {
  rng r(seed);
  for (auto const& p : predictors)
    for (auto const kind : all_kinds)
      for (bool const with_init : {false, true}) {
        std::int64_t const n = 131, count = 70;
        layout const lay = recur_test::make_layout(kind, n, count);
        std::size_t const ext = static_cast<std::size_t>(recur_test::extent(lay));
        std::vector<S> x(ext), init;
        for (auto& v : x) v = random_sample<S>(r);
        if (with_init)
          for (std::size_t j = 0; j < p.c.size() * count; ++j) init.push_back(random_sample<S>(r));
        S const* const ip = init.empty() ? nullptr : init.data();
        std::vector<S> want(ext, recur_test::poison<S>()), e(ext, recur_test::poison<S>());
        ref::dpcm_encode<S>(p.c, p.shift, x.data(), want.data(), lay, ip);
        recur::dpcm_encode(host{}, p.c, p.shift, x.data(), e.data(), lay, {ip});
        BOOST_TEST(same_bytes(e, want), "order " << p.c.size() << " " << recur_test::name(kind));
        std::vector<S> back(ext, recur_test::poison<S>());
        recur::dpcm_decode(host{3}, p.c, p.shift, e.data(), back.data(), lay, {ip});
        auto const in = covered(lay);
        bool exact = true, gaps = true;
        for (std::size_t o = 0; o < ext; ++o) {
          if (in[o]) exact = exact && back[o] == x[o];
          if (!in[o]) gaps = gaps && recur_test::is_poison(back[o]) && recur_test::is_poison(e[o]);
        }
        BOOST_TEST(exact, "round trip, order " << p.c.size() << " " << recur_test::name(kind));
        BOOST_TEST(gaps);
        // In place, both ways.
        std::vector<S> v = x;
        recur::dpcm_encode(host{2}, p.c, p.shift, v.data(), v.data(), lay, {ip});
        bool same = true;
        for (std::size_t o = 0; o < ext; ++o)
          if (in[o]) same = same && v[o] == e[o];
        BOOST_TEST(same);
        recur::dpcm_decode(host{}, p.c, p.shift, v.data(), v.data(), lay, {ip});
        BOOST_TEST(v == x, boost::test_tools::per_element());
      }
}

}  // namespace

BOOST_AUTO_TEST_CASE(dpcm_round_trip_int16) { integer_round_trip<std::int16_t>(seed_for(511)); }
BOOST_AUTO_TEST_CASE(dpcm_round_trip_int32) { integer_round_trip<std::int32_t>(seed_for(512)); }
BOOST_AUTO_TEST_CASE(dpcm_round_trip_uint8) { integer_round_trip<std::uint8_t>(seed_for(513)); }

// An image-like field, rows as lanes (layout::contiguous(width, height)): a
// smooth gradient plus noise, saturated in one corner, in uint8 and int16;
// the gradient predictor leaves small residuals and the round trip is exact.
// Columns as lanes (the interleaved view of the same memory) too.
BOOST_AUTO_TEST_CASE(dpcm_image_rows_as_lanes) {
  rng r(seed_for(514));
  std::int64_t const width = 317, height = 203;
  std::vector<std::int16_t> img(width * height);
  std::vector<std::uint8_t> img8(img.size());
  for (std::int64_t y = 0; y < height; ++y)
    for (std::int64_t x = 0; x < width; ++x) {
      double const v = 150.0 * x + 60.0 * y - 20000.0 + double(r.next() % 9) - 4;
      img[y * width + x] = static_cast<std::int16_t>(std::fmin(std::fmax(v, -32768.0), 32767.0));
      double const v8 = 0.5 * x + 0.7 * y + double(r.next() % 5) - 2;
      img8[y * width + x] = static_cast<std::uint8_t>(std::fmin(std::fmax(v8, 0.0), 255.0));
    }
  std::vector<std::int64_t> const c = {2, -1};
  for (layout const lay : {layout::contiguous(width, height), layout::interleaved(height, width)}) {
    std::vector<std::int16_t> e(img.size(), -1), back(img.size(), -1);
    recur::dpcm_encode(host{}, c, 0, img.data(), e.data(), lay);
    recur::dpcm_decode(host{}, c, 0, e.data(), back.data(), lay);
    BOOST_TEST(back == img, boost::test_tools::per_element());
    std::int64_t small = 0;
    for (std::int64_t k = 0; k < lay.count; ++k)
      for (std::int64_t i = 2; i < lay.n; ++i) small += std::abs(e[lay.offset(i, k)]) <= 16;
    BOOST_TEST(small > (lay.n - 2) * lay.count / 2);
    std::vector<std::uint8_t> e8(img8.size()), back8(img8.size());
    recur::dpcm_encode(host{}, c, 0, img8.data(), e8.data(), lay);
    recur::dpcm_decode(host{}, c, 0, e8.data(), back8.data(), lay);
    BOOST_TEST(back8 == img8, boost::test_tools::per_element());
    std::vector<std::uint8_t> want8(img8.size());
    ref::dpcm_encode<std::uint8_t>(c, 0, img8.data(), want8.data(), lay);
    BOOST_TEST(e8 == want8, boost::test_tools::per_element());
  }
}

BOOST_AUTO_TEST_CASE(dpcm_float_matches_reference) {
  rng r(seed_for(515));
  std::vector<double> const c = {1.2, -0.5, 0.1};
  std::vector<float> const cf(c.begin(), c.end());
  for (auto const kind : all_kinds) {
    std::int64_t const n = 300, count = 21;
    layout const lay = recur_test::make_layout(kind, n, count);
    std::size_t const ext = static_cast<std::size_t>(recur_test::extent(lay));
    std::vector<double> x(ext), init = random_values<double>(r, 3 * count);
    for (std::int64_t k = 0; k < count; ++k)
      for (std::int64_t i = 0; i < n; ++i)
        x[lay.offset(i, k)] = std::sin(0.05 * double(i) + double(k)) + 0.01 * r.symmetric();
    std::vector<double> e(ext, recur_test::poison<double>()), want(ext, recur_test::poison<double>());
    recur::dpcm_encode(host{}, c, x.data(), e.data(), lay, {init.data()});
    ref::dpcm_encode<double>(c, x.data(), want.data(), lay, init.data());
    BOOST_TEST(same_bytes(e, want));
    std::vector<double> back(ext, recur_test::poison<double>()), want_back(ext, recur_test::poison<double>());
    recur::dpcm_decode(host{2}, c, e.data(), back.data(), lay, {init.data()});
    ref::dpcm_decode<double>(c, e.data(), want_back.data(), lay, init.data());
    BOOST_TEST(same_bytes(back, want_back));
    auto const in = covered(lay);
    for (std::size_t o = 0; o < ext; ++o)
      if (in[o]) BOOST_TEST(std::fabs(back[o] - x[o]) <= 1e-13);
    std::vector<float> xf(x.begin(), x.end()), ef(ext), bf(ext), wf(ext);
    recur::dpcm_encode(host{}, cf, xf.data(), ef.data(), lay);
    recur::dpcm_decode(host{}, cf, ef.data(), bf.data(), lay);
    ref::dpcm_decode<float>(cf, ef.data(), wf.data(), lay);
    BOOST_TEST(same_bytes(bf, wf));
    for (std::size_t o = 0; o < ext; ++o)
      if (in[o]) BOOST_TEST(std::fabs(bf[o] - xf[o]) <= 1e-5f);
  }
}

// ------------------------------------------------------- bad arguments ----

namespace {

// One memory arena holds every array of a call, so that overlaps can be
// built; it is poisoned (inputs filled) before the call and must be
// unchanged, byte for byte, after the throw.
template <class T>
struct arena {
  std::vector<T> mem;
  explicit arena(std::size_t size) : mem(size, recur_test::poison<T>()) {}
  T* at(std::size_t i) { return mem.data() + i; }
};

template <class F>
void expect_rejected(std::string const& what, F&& call, std::function<bool()> const& untouched) {
  bool thrown = false;
  try {
    call();
  } catch (recur::invalid_argument const& e) {
    thrown = true;
    BOOST_TEST(std::string(e.what()).find(what) != std::string::npos,
               "message '" << e.what() << "' lacks '" << what << "'");
  }
  BOOST_TEST(thrown, "no invalid_argument for: " << what);
  BOOST_TEST(untouched(), "something was written for: " << what);
}

template <class T>
void lfilter_bad_arguments() {
  std::int64_t const n = 8, count = 3, m = 2;
  arena<T> ar(256);
  // x at 0, y at 32, zi at 64, zf at 80, b at 96, a at 104.
  for (std::int64_t i = 0; i < n * count; ++i) *ar.at(i) = static_cast<T>(i % 5) - T(2);
  for (std::int64_t j = 0; j < count * m; ++j) *ar.at(64 + j) = T(0.25) * static_cast<T>(j);
  T* const x = ar.at(0);
  T* const y = ar.at(32);
  T* const zi = ar.at(64);
  T* const zf = ar.at(80);
  T* const b = ar.at(96);
  T* const a = ar.at(104);
  b[0] = T(1), b[1] = T(2), b[2] = T(3);
  a[0] = T(1), a[1] = T(-0.5);
  std::vector<T> const before = ar.mem;
  auto untouched = [&] { return same_bytes(ar.mem, before); };
  layout const lay = layout::contiguous(n, count);
  std::span<T const> const sb(b, 3), sa(a, 2);
  auto call = [&](host ex, std::span<T const> bb, std::span<T const> aa, T const* xx, T* yy, layout const& l,
                  T const* i0, T* f0) {
    return [=] { recur::lfilter(ex, bb, aa, xx, yy, l, recur::filter_options<T>{i0, f0}); };
  };
  // Sanity: the valid call works (on copies, to keep the arena as it is).
  {
    std::vector<T> yc(n * count), zc(count * m);
    recur::lfilter(host{}, sb, sa, x, yc.data(), lay, {zi, zc.data()});
  }
  std::vector<T> const nan_b = {T(1), std::numeric_limits<T>::quiet_NaN()};
  std::vector<T> const inf_a = {T(1), std::numeric_limits<T>::infinity()};
  std::vector<T> const zero_a = {T(0), T(1)};
  std::vector<T> const tiny_a = {std::numeric_limits<T>::denorm_min(), T(0.5)};
  std::vector<T> const big_b = {std::numeric_limits<T>::max()};
  // A T that starts one byte into an element.
  auto const odd = [](T* p) { return reinterpret_cast<T*>(reinterpret_cast<char*>(p) + 1); };
  expect_rejected("a is empty", call(host{}, sb, {}, x, y, lay, zi, zf), untouched);
  expect_rejected("b is empty", call(host{}, {}, sa, x, y, lay, zi, zf), untouched);
  expect_rejected("a[0] = 0", call(host{}, sb, zero_a, x, y, lay, zi, zf), untouched);
  expect_rejected("b[1] = nan is not finite", call(host{}, nan_b, sa, x, y, lay, zi, zf), untouched);
  expect_rejected("a[1] = inf is not finite", call(host{}, sb, inf_a, x, y, lay, zi, zf), untouched);
  expect_rejected("b[0] / a[0]", call(host{}, big_b, tiny_a, x, y, lay, zi, zf), untouched);
  expect_rejected("host.threads = -1", call(host{-1}, sb, sa, x, y, lay, zi, zf), untouched);
  expect_rejected("x is null", call(host{}, sb, sa, nullptr, y, lay, zi, zf), untouched);
  expect_rejected("y is null", call(host{}, sb, sa, x, nullptr, lay, zi, zf), untouched);
  expect_rejected("layout.n = -1", call(host{}, sb, sa, x, y, layout{-1, 3, 1, 8}, zi, zf), untouched);
  expect_rejected("layout.count = -2", call(host{}, sb, sa, x, y, layout{8, -2, 1, 8}, zi, zf), untouched);
  expect_rejected("layout.element_stride = 0", call(host{}, sb, sa, x, y, layout{8, 3, 0, 8}, zi, zf),
                  untouched);
  expect_rejected("maps two elements to one address", call(host{}, sb, sa, x, y, layout{8, 3, 1, 4}, zi, zf),
                  untouched);
  expect_rejected("opt.init = ", call(host{}, sb, sa, x, y, lay, odd(zi), zf), untouched);
  expect_rejected("opt.final_state = ", call(host{}, sb, sa, x, y, lay, zi, odd(zf)), untouched);
  expect_rejected("y overlaps x (only y == x exactly is allowed)",
                  call(host{}, sb, sa, x, x + 1, lay, zi, zf), untouched);
  expect_rejected("y overlaps init", call(host{}, sb, sa, x, zi - 20, lay, zi, zf), untouched);
  expect_rejected("final_state overlaps y", call(host{}, sb, sa, x, y, lay, zi, y + 3), untouched);
  expect_rejected("final_state overlaps x", call(host{}, sb, sa, x, y, lay, zi, x + 10), untouched);
  expect_rejected("final_state overlaps init (only final_state == init exactly is allowed)",
                  call(host{}, sb, sa, x, y, lay, zi, zi + 1), untouched);
  expect_rejected("y overlaps b", call(host{}, sb, sa, x, b - 10, lay, zi, zf), untouched);
  expect_rejected("final_state overlaps a", call(host{}, sb, sa, x, y, lay, zi, a - 3), untouched);
  // Misaligned output.
  expect_rejected("is not aligned", call(host{}, sb, sa, x, odd(y), lay, zi, zf), untouched);
  // Messages start with the entry point's name.
  try {
    recur::lfilter(host{}, sb, std::span<T const>(zero_a), x, y, lay, {zi, zf});
  } catch (recur::invalid_argument const& e) {
    BOOST_TEST(std::string(e.what()).starts_with("recur::lfilter: "));
  }
}

template <class T>
void sosfilt_bad_arguments() {
  std::int64_t const n = 6, count = 2;
  arena<T> ar(128);
  for (std::int64_t i = 0; i < n * count; ++i) *ar.at(i) = static_cast<T>(i);
  T* const x = ar.at(0);
  T* const y = ar.at(16);
  T* const zi = ar.at(32);  // 2 sections: 4 values per sequence, 8 in all
  T* const zf = ar.at(48);
  T* const sos = ar.at(64);  // 2 sections
  T const rows[12] = {1, 2, 1, 1, -0.5, 0.1, 1, 0, -1, 2, 0.3, 0};
  std::copy(rows, rows + 12, sos);
  std::vector<T> const before = ar.mem;
  auto untouched = [&] { return same_bytes(ar.mem, before); };
  layout const lay = layout::contiguous(n, count);
  std::span<T const> const ss(sos, 12);
  auto call = [&](host ex, std::span<T const> s, T const* xx, T* yy, layout const& l, T const* i0, T* f0) {
    return [=] { recur::sosfilt(ex, s, xx, yy, l, recur::filter_options<T>{i0, f0}); };
  };
  {
    std::vector<T> yc(n * count), zc(8);
    recur::sosfilt(host{}, ss, x, yc.data(), lay, {zi, zc.data()});
  }
  std::vector<T> bad_nan(rows, rows + 12), bad_a0(rows, rows + 12);
  bad_nan[7] = std::numeric_limits<T>::quiet_NaN();
  bad_a0[9] = T(0);
  expect_rejected("sos has 11 values", call(host{}, std::span<T const>(sos, 11), x, y, lay, zi, zf),
                  untouched);
  expect_rejected("sos has 0 values", call(host{}, {}, x, y, lay, zi, zf), untouched);
  expect_rejected("sos[1][1] = nan is not finite", call(host{}, bad_nan, x, y, lay, zi, zf), untouched);
  expect_rejected("sos[1][3] = 0 (a0 of section 1)", call(host{}, bad_a0, x, y, lay, zi, zf), untouched);
  expect_rejected(
      "opt.init = ",
      call(host{}, ss, x, y, lay, reinterpret_cast<T const*>(reinterpret_cast<char*>(zi) + 1), zf),
      untouched);
  expect_rejected("y overlaps x", call(host{}, ss, x, x + 2, lay, zi, zf), untouched);
  expect_rejected("y overlaps sos", call(host{}, ss, x, sos - 4, lay, zi, zf), untouched);
  expect_rejected("x is null", call(host{}, ss, nullptr, y, lay, zi, zf), untouched);
  expect_rejected("host.threads = -4", call(host{-4}, ss, x, y, lay, zi, zf), untouched);
}

template <class S>
void dpcm_bad_arguments() {
  std::int64_t const n = 8, count = 3, k = 2;
  arena<S> ar(128);
  for (std::int64_t i = 0; i < n * count; ++i) *ar.at(i) = static_cast<S>(i * 7);
  S* const x = ar.at(0);
  S* const e = ar.at(32);
  S* const init = ar.at(64);
  for (std::int64_t j = 0; j < k * count; ++j) init[j] = static_cast<S>(j);
  std::vector<S> const before = ar.mem;
  auto untouched = [&] { return same_bytes(ar.mem, before); };
  layout const lay = layout::contiguous(n, count);
  std::vector<std::int64_t> const c = {2, -1};
  S const* const si = init;
  auto enc = [&](host ex, std::vector<std::int64_t> cc, int shift, S const* in, S* out, layout const& l,
                 S const* i0) { return [=] { recur::dpcm_encode(ex, cc, shift, in, out, l, {i0}); }; };
  auto dec = [&](host ex, std::vector<std::int64_t> cc, int shift, S const* in, S* out, layout const& l,
                 S const* i0) { return [=] { recur::dpcm_decode(ex, cc, shift, in, out, l, {i0}); }; };
  {
    std::vector<S> ec(n * count);
    recur::dpcm_encode(host{}, c, 0, x, ec.data(), lay, {si});
  }
  std::vector<std::int64_t> const huge = {std::int64_t{1} << 30, std::int64_t{1} << 30, 1};
  expect_rejected("shift = -1 is outside [0, 62]", enc(host{}, c, -1, x, e, lay, si), untouched);
  expect_rejected("shift = 63 is outside [0, 62]", dec(host{}, c, 63, x, e, lay, si), untouched);
  expect_rejected("sum |c_j| exceeds 2^31 (at c[2] = 1)", enc(host{}, huge, 0, x, e, lay, nullptr),
                  untouched);
  expect_rejected("recur::dpcm_encode: x is null", enc(host{}, c, 0, nullptr, e, lay, si), untouched);
  expect_rejected("recur::dpcm_decode: e is null", dec(host{}, c, 0, nullptr, e, lay, si), untouched);
  expect_rejected("recur::dpcm_decode: x is null", dec(host{}, c, 0, x, nullptr, lay, si), untouched);
  if constexpr (alignof(S) > 1)
    expect_rejected(
        "opt.init = ",
        enc(host{}, c, 0, x, e, lay, reinterpret_cast<S const*>(reinterpret_cast<char*>(init) + 1)),
        untouched);
  expect_rejected("e overlaps x (only e == x exactly is allowed)", enc(host{}, c, 0, x, x + 1, lay, si),
                  untouched);
  expect_rejected("x overlaps e (only x == e exactly is allowed)", dec(host{}, c, 0, x, x + 1, lay, si),
                  untouched);
  expect_rejected("e overlaps init", enc(host{}, c, 0, x, init - 20, lay, si), untouched);
  expect_rejected("layout.batch_stride = 0", enc(host{}, c, 0, x, e, layout{8, 3, 1, 0}, si), untouched);
  expect_rejected("host.threads = -1", dec(host{-1}, c, 0, x, e, lay, si), untouched);
}

}  // namespace

BOOST_AUTO_TEST_CASE(lfilter_bad_arguments_f32) { lfilter_bad_arguments<float>(); }
BOOST_AUTO_TEST_CASE(lfilter_bad_arguments_f64) { lfilter_bad_arguments<double>(); }
BOOST_AUTO_TEST_CASE(sosfilt_bad_arguments_f32) { sosfilt_bad_arguments<float>(); }
BOOST_AUTO_TEST_CASE(sosfilt_bad_arguments_f64) { sosfilt_bad_arguments<double>(); }
BOOST_AUTO_TEST_CASE(dpcm_bad_arguments_int16) { dpcm_bad_arguments<std::int16_t>(); }
BOOST_AUTO_TEST_CASE(dpcm_bad_arguments_int32) { dpcm_bad_arguments<std::int32_t>(); }
BOOST_AUTO_TEST_CASE(dpcm_bad_arguments_uint8) { dpcm_bad_arguments<std::uint8_t>(); }

BOOST_AUTO_TEST_CASE(dpcm_float_bad_arguments) {
  std::vector<double> x(10, 1.0), e(10, recur_test::poison<double>());
  std::vector<double> const nan_c = {0.5, std::numeric_limits<double>::quiet_NaN()}, c = {0.5};
  e[9] = 0.5;  // a finite coefficient, for the overlap case
  auto const before = e;
  expect_rejected(
      "c[1] = nan is not finite",
      [&] { recur::dpcm_encode(host{}, nan_c, x.data(), e.data(), layout::contiguous(10)); },
      [&] { return same_bytes(e, before); });
  std::vector<double> const init(3);
  expect_rejected(
      "opt.init = ",
      [&] {
        recur::dpcm_decode(host{}, c, x.data(), e.data(), layout::contiguous(5, 2),
                           {reinterpret_cast<double const*>(reinterpret_cast<char const*>(init.data()) + 1)});
      },
      [&] { return same_bytes(e, before); });
  expect_rejected(
      "e overlaps c",
      [&] {
        recur::dpcm_encode(host{}, std::span<double const>(e.data() + 9, 1), x.data(), e.data(),
                           layout::contiguous(10));
      },
      [&] { return same_bytes(e, before); });
}

BOOST_AUTO_TEST_SUITE_END()
