// reference::lfilter, lfilter_zi and sosfilt (scipy.signal semantics).
#include <cmath>
#include <complex>
#include <cstdint>
#include <numeric>
#include <vector>

#include <boost/test/unit_test.hpp>
#include <recur/reference/lfilter.hpp>

#include "common/linrec_harness.hpp"

namespace ref = recur::reference;
using recur::layout;
using recur_test::rng;
using recur_test::seed_for;

namespace {

// A stable filter: a = a0 * prod_j (1 - r_j z^-1) with real poles |r_j| < 0.8,
// a0 not 1 (normalisation is exercised), b random.
struct filter {
  std::vector<double> b, a;
};
filter random_filter(rng& r, int nb, int poles) {
  filter f;
  f.a = {1.0};
  for (int j = 0; j < poles; ++j) {
    double const root = 0.8 * r.symmetric();
    f.a.push_back(0.0);
    for (std::size_t i = f.a.size() - 1; i > 0; --i) f.a[i] -= root * f.a[i - 1];
  }
  double const a0 = 0.5 + r.uniform();
  for (auto& v : f.a) v *= a0;
  for (int j = 0; j < nb; ++j) f.b.push_back(r.symmetric());
  return f;
}

// DF2T as in scipy's C loop, written out for one sequence.
std::vector<double> df2t(filter const& f, std::vector<double> const& x, std::vector<double> z = {}) {
  std::size_t const n = std::max(f.a.size(), f.b.size());
  std::vector<double> b(n, 0.0), a(n, 0.0), y(x.size());
  for (std::size_t j = 0; j < f.b.size(); ++j) b[j] = f.b[j] / f.a[0];
  for (std::size_t j = 0; j < f.a.size(); ++j) a[j] = f.a[j] / f.a[0];
  z.resize(n - 1, 0.0);
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (n == 1) {
      y[i] = x[i] * b[0];
      continue;
    }
    y[i] = z[0] + b[0] * x[i];
    for (std::size_t j = 0; j + 2 < n; ++j) z[j] = z[j + 1] + x[i] * b[j + 1] - y[i] * a[j + 1];
    z[n - 2] = x[i] * b[n - 1] - y[i] * a[n - 1];
  }
  return y;
}

// Direct form I: a_0 y_i = sum_j b_j x_{i-j} - sum_{j>0} a_j y_{i-j}; a
// different rounding order, so compared with a tolerance.
std::vector<double> direct_form_1(filter const& f, std::vector<double> const& x) {
  std::vector<double> y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    double acc = 0;
    for (std::size_t j = 0; j < f.b.size() && j <= i; ++j) acc += f.b[j] * x[i - j];
    for (std::size_t j = 1; j < f.a.size() && j <= i; ++j) acc -= f.a[j] * y[i - j];
    y[i] = acc / f.a[0];
  }
  return y;
}

std::vector<double> run(filter const& f, std::vector<double> const& x, double const* zi = nullptr,
                        double* zf = nullptr) {
  std::vector<double> y(x.size());
  ref::lfilter<double>(f.b, f.a, x.data(), y.data(), layout::contiguous(static_cast<std::int64_t>(x.size())),
                       zi, zf);
  return y;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(reference_lfilter)

BOOST_AUTO_TEST_CASE(matches_df2t_and_direct_form_across_layouts) {
  rng r(seed_for(301));
  for (int nb = 1; nb <= 5; ++nb)
    for (int poles = 0; poles <= 4; ++poles) {
      filter const f = random_filter(r, nb, poles);
      for (auto const kind : {recur_test::layout_kind::contiguous, recur_test::layout_kind::interleaved,
                              recur_test::layout_kind::strided_gaps}) {
        std::int64_t const n = 41, count = 3;
        layout const lay = recur_test::make_layout(kind, n, count);
        std::int64_t const ext = recur_test::extent(lay);
        std::vector<double> x(ext), y(ext, recur_test::poison<double>());
        for (auto& v : x) v = r.symmetric();
        ref::lfilter<double>(f.b, f.a, x.data(), y.data(), lay, nullptr, nullptr);
        std::vector<bool> written(ext, false);
        for (std::int64_t k = 0; k < count; ++k) {
          std::vector<double> xs(n);
          for (std::int64_t i = 0; i < n; ++i) xs[i] = x[lay.offset(i, k)];
          auto const want = df2t(f, xs), dfi = direct_form_1(f, xs);
          for (std::int64_t i = 0; i < n; ++i) {
            double const got = y[lay.offset(i, k)];
            written[lay.offset(i, k)] = true;
            BOOST_TEST(got == want[i], "nb=" << nb << " poles=" << poles << " " << recur_test::name(kind)
                                             << " k=" << k << " i=" << i);
            BOOST_TEST(std::fabs(got - dfi[i]) <= 1e-12 * (1 + std::fabs(dfi[i])));
          }
        }
        for (std::int64_t o = 0; o < ext; ++o)
          if (!written[o]) BOOST_TEST(recur_test::is_poison(y[o]));
      }
    }
}

// y_i = b0 x_i + p y_{i-1}: impulse response b0 p^i, step response
// b0 (1 - p^{i+1}) / (1 - p).
BOOST_AUTO_TEST_CASE(one_pole_impulse_and_step) {
  std::int64_t const n = 64;
  for (double const p : {0.5, -0.9, 0.99}) {
    filter const f{{0.3}, {1.0, -p}};
    std::vector<double> impulse(n, 0.0), step(n, 1.0);
    impulse[0] = 1.0;
    auto const h = run(f, impulse), s = run(f, step);
    for (std::int64_t i = 0; i < n; ++i) {
      double const hi = 0.3 * std::pow(p, double(i)), si = 0.3 * (1 - std::pow(p, double(i + 1))) / (1 - p);
      BOOST_TEST(h[i] == hi, boost::test_tools::tolerance(1e-12));
      BOOST_TEST(s[i] == si, boost::test_tools::tolerance(1e-12));
    }
  }
}

// Two poles r1, r2 (a = 1 - (r1 + r2) z^-1 + r1 r2 z^-2, b = 1): impulse
// response (r1^{i+1} - r2^{i+1}) / (r1 - r2), real or complex conjugate poles
// (then rho^i sin((i+1) theta) / sin theta). The step response is its
// running sum.
BOOST_AUTO_TEST_CASE(two_pole_impulse_and_step) {
  using cd = std::complex<double>;
  std::int64_t const n = 80;
  for (auto const& [r1, r2] : {std::pair{cd(0.9), cd(-0.5)}, std::pair{cd(0.6), cd(0.3)},
                               std::pair{std::polar(0.95, 0.3), std::polar(0.95, -0.3)}}) {
    filter const f{{1.0}, {1.0, -(r1 + r2).real(), (r1 * r2).real()}};
    std::vector<double> impulse(n, 0.0), step(n, 1.0);
    impulse[0] = 1.0;
    auto const h = run(f, impulse), s = run(f, step);
    double sum = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      double const hi = ((std::pow(r1, double(i + 1)) - std::pow(r2, double(i + 1))) / (r1 - r2)).real();
      sum += hi;
      BOOST_TEST(std::fabs(h[i] - hi) <= 1e-12, "r1=" << r1 << " i=" << i);
      BOOST_TEST(std::fabs(s[i] - sum) <= 1e-11);
    }
  }
}

// Filtering in two pieces, the first piece's zf as the second's zi, equals
// filtering at once, bit for bit; zi may equal zf (state updated in place).
BOOST_AUTO_TEST_CASE(zi_zf_chaining) {
  rng r(seed_for(302));
  filter const f = random_filter(r, 4, 3);
  std::int64_t const n = 50, count = 2, m = 3;
  std::vector<double> x(n * count), zi(count * m);
  for (auto& v : x) v = r.symmetric();
  for (auto& v : zi) v = r.symmetric();
  std::vector<double> whole(n * count), zf(count * m);
  ref::lfilter<double>(f.b, f.a, x.data(), whole.data(), layout::contiguous(n, count), zi.data(), zf.data());
  for (std::int64_t const cut : {0, 1, 23, 50}) {
    std::vector<double> y(n * count), z = zi;
    ref::lfilter<double>(f.b, f.a, x.data(), y.data(), layout::strided(cut, count, 1, n), z.data(), z.data());
    ref::lfilter<double>(f.b, f.a, x.data() + cut, y.data() + cut, layout::strided(n - cut, count, 1, n),
                         z.data(), z.data());
    BOOST_TEST(y == whole, boost::test_tools::per_element());
    BOOST_TEST(z == zf, boost::test_tools::per_element());
  }
  BOOST_TEST(ref::lfilter_order(f.b.size(), f.a.size()) == m);
}

// FIR (a = {a0}): a scaled convolution, with no state when b has one tap.
BOOST_AUTO_TEST_CASE(fir) {
  std::vector<double> const x = {1, 2, 3, 4};
  std::vector<double> y(4);
  ref::lfilter<double>(std::vector<double>{1, 1}, std::vector<double>{2}, x.data(), y.data(),
                       layout::contiguous(4), nullptr, nullptr);
  BOOST_TEST(y == (std::vector<double>{0.5, 1.5, 2.5, 3.5}), boost::test_tools::per_element());
  ref::lfilter<double>(std::vector<double>{3}, std::vector<double>{1}, x.data(), y.data(),
                       layout::contiguous(4), nullptr, nullptr);
  BOOST_TEST(y == (std::vector<double>{3, 6, 9, 12}), boost::test_tools::per_element());
}

// lfilter_zi: with zi = c * lfilter_zi(b, a), a step of height c gives a
// constant output c * sum(b) / sum(a) from the first sample.
BOOST_AUTO_TEST_CASE(lfilter_zi_gives_a_constant_step_response) {
  rng r(seed_for(303));
  // Hand-checked: y = x + 0.5 y_prev settles at 2, with z = 0.5 y = 1.
  auto const one = ref::lfilter_zi<double>(std::vector<double>{1}, std::vector<double>{1, -0.5});
  BOOST_TEST(one.size() == 1u);
  BOOST_TEST(one[0] == 1.0);
  for (int nb = 1; nb <= 5; ++nb)
    for (int poles = 0; poles <= 4; ++poles) {
      filter const f = random_filter(r, nb, poles);
      auto zi = ref::lfilter_zi<double>(f.b, f.a);
      BOOST_TEST(static_cast<std::int64_t>(zi.size()) == ref::lfilter_order(f.b.size(), f.a.size()));
      double const c = 2.5;
      for (auto& v : zi) v *= c;
      auto const y = run(f, std::vector<double>(30, c), zi.data());
      double const gain =
          c * std::accumulate(f.b.begin(), f.b.end(), 0.0) / std::accumulate(f.a.begin(), f.a.end(), 0.0);
      for (double v : y) BOOST_TEST(std::fabs(v - gain) <= 1e-12 * (1 + std::fabs(gain)));
    }
}

BOOST_AUTO_TEST_CASE(argument_errors) {
  double v[4] = {1, 2, 3, 4};
  std::vector<double> const one = {1};
  auto const lay = layout::contiguous(4);
  BOOST_CHECK_THROW(ref::lfilter<double>(one, std::vector<double>{0, 1}, v, v, lay, nullptr, nullptr),
                    recur::invalid_argument);
  BOOST_CHECK_THROW(ref::lfilter<double>(one, {}, v, v, lay, nullptr, nullptr), recur::invalid_argument);
  BOOST_CHECK_THROW(ref::lfilter<double>({}, one, v, v, lay, nullptr, nullptr), recur::invalid_argument);
  BOOST_CHECK_THROW(ref::lfilter<double>(one, one, nullptr, v, lay, nullptr, nullptr),
                    recur::invalid_argument);
  BOOST_CHECK_THROW(ref::lfilter_zi<double>(one, std::vector<double>{0, 1}), recur::invalid_argument);
  // A pole at z = 1: no steady state.
  BOOST_CHECK_THROW(ref::lfilter_zi<double>(one, std::vector<double>{1, -1}), recur::invalid_argument);
  BOOST_CHECK_THROW(ref::sosfilt<double>(std::vector<double>(5, 1.0), v, v, lay, nullptr, nullptr),
                    recur::invalid_argument);
  BOOST_CHECK_THROW(ref::sosfilt<double>(std::vector<double>{1, 0, 0, 0, 1, 0}, v, v, lay, nullptr, nullptr),
                    recur::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(reference_sosfilt)

// sosfilt equals lfilter applied section by section (the state of section j
// at zi + j * 2), bit for bit, for every sequence of an interleaved batch.
BOOST_AUTO_TEST_CASE(equals_cascaded_lfilter) {
  rng r(seed_for(304));
  for (int sections = 1; sections <= 4; ++sections) {
    std::vector<double> sos;
    for (int j = 0; j < sections; ++j) {
      filter const f = random_filter(r, 3, 2);
      sos.insert(sos.end(), f.b.begin(), f.b.end());
      sos.insert(sos.end(), f.a.begin(), f.a.end());
    }
    std::int64_t const n = 33, count = 3;
    layout const lay = layout::interleaved(n, count);
    std::vector<double> x(n * count), zi(count * sections * 2), y(n * count), zf(zi.size());
    for (auto& v : x) v = r.symmetric();
    for (auto& v : zi) v = r.symmetric();
    ref::sosfilt<double>(sos, x.data(), y.data(), lay, zi.data(), zf.data());
    std::vector<double> cascade = x;
    for (std::int64_t k = 0; k < count; ++k)
      for (int j = 0; j < sections; ++j) {
        std::span<double const> const s(sos.data() + 6 * j, 6);
        double z[2] = {zi[(k * sections + j) * 2], zi[(k * sections + j) * 2 + 1]};
        ref::lfilter<double>(s.subspan(0, 3), s.subspan(3, 3), cascade.data() + k, cascade.data() + k,
                             layout::strided(n, 1, count, 0), z, z);
        BOOST_TEST(zf[(k * sections + j) * 2] == z[0]);
        BOOST_TEST(zf[(k * sections + j) * 2 + 1] == z[1]);
      }
    BOOST_TEST(y == cascade, boost::test_tools::per_element());
  }
}

BOOST_AUTO_TEST_SUITE_END()
