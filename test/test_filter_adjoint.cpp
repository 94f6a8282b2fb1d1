// The pieces of lfilter's and sosfilt's backward passes with recur::host:
// filtering in direction::reverse (bitwise the references' forward filter of
// the flipped sequences, every layout, state in and out, in place), the
// reverse filter as the forward filter's adjoint, and correlate_lags against
// a straightforward sum in long double (f32 and f64, every layout, odd
// lengths, batches, lags 0 to 12, one to three arrays, both directions,
// thread counts giving the same bits), the coefficient gradients it gives
// against direct computations, and argument errors with nothing written.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>
#include <recur/filter.hpp>

#include "common/expect_invalid.hpp"
#include "common/iir.hpp"
#include "common/layouts.hpp"
#include "common/poison.hpp"
#include "common/random.hpp"

using recur::direction;
using recur::host;
using recur::layout;
using recur_test::rng;
using recur_test::seed_for;

namespace {

using recur_test::all_poison;
using recur_test::flipped;
using recur_test::iir;
using recur_test::poison;
using recur_test::random_values;
using recur_test::same_bytes;

std::string describe(layout const& lay) {
  return "n=" + std::to_string(lay.n) + " count=" + std::to_string(lay.count) +
         " element_stride=" + std::to_string(lay.element_stride) +
         " batch_stride=" + std::to_string(lay.batch_stride);
}

// FIR and IIR filters of 1 to 5 coefficients b and 0, 2 or 4 poles, and
// cascades of 1 and 3 sections.
template <class T>
std::vector<iir<T>> filters(rng& r) {
  std::vector<iir<T>> fs;
  for (int nb = 1; nb <= 5; ++nb)
    for (int poles = 0; poles <= 4; poles += 2) fs.push_back(iir<T>::filter(r, nb, poles, 0.7));
  for (int sections : {1, 3}) fs.push_back(iir<T>::cascade(r, sections, 0.7));
  return fs;
}

// direction::reverse gives, bit for bit, the reference's forward filter of
// the flipped sequences, flipped back (the state likewise), whatever the
// layout, thread count, or in place.
template <class T>
void reverse_is_flipped_forward(std::uint64_t seed) {
  rng r(seed);
  for (auto const& g : filters<T>(r))
    for (auto const kind : recur_test::all_layout_kinds)
      for (std::int64_t const count : {1, 3, 67})
        for (std::int64_t const n : {0, 1, 2, 37}) {
          layout const lay = recur_test::make_layout(kind, n, count);
          std::size_t const ext = static_cast<std::size_t>(recur_test::extent(lay));
          std::int64_t const m = g.state();
          auto const x = random_values<T>(r, ext);
          auto const zi = random_values<T>(r, static_cast<std::size_t>(count * m));
          std::vector<T> want(ext, poison<T>()), want_zf(zi.size(), poison<T>());
          auto const xf = flipped(x, lay);
          g.reference(xf.data(), want.data(), lay, zi.data(), want_zf.data());
          want = flipped(want, lay);
          for (int const threads : {0, 1}) {
            std::vector<T> y(ext, poison<T>()), zf(zi.size(), poison<T>());
            recur::filter_options<T> const opt{zi.data(), zf.data(), direction::reverse};
            g.run(host{threads}, x.data(), y.data(), lay, opt);
            BOOST_TEST(same_bytes(y, want), g.name() << " " << describe(lay) << " threads=" << threads);
            BOOST_TEST(same_bytes(zf, want_zf), describe(lay));
            BOOST_TEST(recur_test::gaps_untouched(y, lay));
          }
          // In place, the state updated in place.
          std::vector<T> v = x, z = zi;
          g.run(host{}, v.data(), v.data(), lay, {z.data(), z.data(), direction::reverse});
          for (std::int64_t k = 0; k < count; ++k)
            for (std::int64_t i = 0; i < n; ++i)
              BOOST_TEST(recur_test::same_bits(v[lay.offset(i, k)], want[lay.offset(i, k)]));
          BOOST_TEST(same_bytes(z, want_zf));
        }
}

// --- correlate_lags -----------------------------------------------------------

// The sums in long double, and the sums of the terms' magnitudes (for the
// tolerance).
struct correlation {
  std::vector<long double> c, size;
};

template <class T>
correlation reference_correlation(std::vector<T> const& u, std::vector<std::vector<T>> const& v,
                                  std::int64_t lags, layout const& lay, direction dir) {
  std::int64_t const nv = static_cast<std::int64_t>(v.size());
  correlation r{std::vector<long double>(static_cast<std::size_t>(nv * lags), 0),
                std::vector<long double>(static_cast<std::size_t>(nv * lags), 0)};
  auto at = [&](std::int64_t i, std::int64_t k) {
    return lay.offset(dir == direction::forward ? i : lay.n - 1 - i, k);
  };
  for (std::int64_t j = 0; j < nv; ++j)
    for (std::int64_t l = 0; l < lags; ++l)
      for (std::int64_t k = 0; k < lay.count; ++k)
        for (std::int64_t i = l; i < lay.n; ++i) {
          long double const t = static_cast<long double>(u[at(i, k)]) * v[j][at(i - l, k)];
          r.c[j * lags + l] += t;
          r.size[j * lags + l] += std::fabs(t);
        }
  return r;
}

template <class T>
std::vector<T const*> pointers(std::vector<std::vector<T>> const& v) {
  std::vector<T const*> p;
  for (auto const& a : v) p.push_back(a.data());
  return p;
}

// Within (terms per sum of the backend's unit of 4096, plus the units) eps
// of the sum of magnitudes: a sequential sum's bound, far below any wrong
// term.
template <class T>
bool close(std::vector<T> const& got, correlation const& want, layout const& lay) {
  std::int64_t const terms = std::min<std::int64_t>(lay.n * lay.count, 4096) + lay.count + lay.n / 16 + 2;
  double const eps = std::numeric_limits<T>::epsilon();
  for (std::size_t o = 0; o < got.size(); ++o)
    if (!(std::fabs(double(got[o]) - double(want.c[o])) <= double(terms) * eps * double(want.size[o])))
      return false;
  return true;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(filter_adjoint)

BOOST_AUTO_TEST_CASE(reverse_is_the_flipped_forward_filter) {
  reverse_is_flipped_forward<float>(seed_for(3601));
  reverse_is_flipped_forward<double>(seed_for(3602));
}

// <g, lfilter(b, a, x)> = <lfilter(b, a, g) in reverse, x>: the reverse
// filter is the forward one's adjoint (zero initial states), for lfilter and
// sosfilt, on a batch.
BOOST_AUTO_TEST_CASE(reverse_filter_is_the_adjoint) {
  rng r(seed_for(3603));
  std::int64_t const n = 1001, count = 3;
  layout const lay = layout::contiguous(n, count);
  for (auto const& g : filters<double>(r)) {
    auto const x = random_values<double>(r, static_cast<std::size_t>(n * count));
    auto const gy = random_values<double>(r, x.size());
    std::vector<double> y(x.size()), ax(x.size());
    g.run(host{}, x.data(), y.data(), lay, {});
    g.run(host{}, gy.data(), ax.data(), lay, {nullptr, nullptr, direction::reverse});
    long double lhs = 0, rhs = 0, size = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      lhs += static_cast<long double>(gy[i]) * y[i];
      rhs += static_cast<long double>(ax[i]) * x[i];
      size += std::fabs(static_cast<long double>(gy[i]) * y[i]);
    }
    BOOST_TEST(std::fabs(double(lhs - rhs)) <= 1e-12 * double(size),
               g.name() << ": " << double(lhs) << " vs " << double(rhs));
  }
}

// An empty sequence in reverse: final_state = init, as forward.
BOOST_AUTO_TEST_CASE(empty_sequences_in_reverse) {
  std::vector<double> const b = {0.5, 0.2}, a = {1.0, -0.3}, zi = {1.5, -2.5};
  std::vector<double> zf(2, poison<double>());
  recur::lfilter(host{}, std::span<double const>(b), std::span<double const>(a), nullptr,
                 static_cast<double*>(nullptr), layout::contiguous(0, 2),
                 {zi.data(), zf.data(), direction::reverse});
  BOOST_TEST(same_bytes(zf, zi));
}

template <class T>
void correlate_matches_reference(std::uint64_t seed) {
  rng r(seed);
  std::int64_t const max_nv = 3, max_lags = 12;
  for (auto const kind : recur_test::all_layout_kinds)
    for (std::int64_t const count : {1, 3, 67})
      for (std::int64_t const n : {1, 2, 37, 4099, 8211}) {
        if (count == 67 && n > 37) continue;  // time: the reference
        layout const lay = recur_test::make_layout(kind, n, count);
        std::size_t const ext = static_cast<std::size_t>(recur_test::extent(lay));
        auto const u = random_values<T>(r, ext);
        std::vector<std::vector<T>> v;
        for (int j = 0; j < max_nv; ++j) v.push_back(random_values<T>(r, ext));
        for (direction const dir : {direction::forward, direction::reverse}) {
          // Every (nv, lags) below is a block of the largest one's sums.
          auto const all = reference_correlation(u, v, max_lags, lay, dir);
          for (std::int64_t const nv : {1, 2, 3})
            for (std::int64_t const lags : {1, 2, 5, 9, 12}) {
              correlation want;
              for (std::int64_t j = 0; j < nv; ++j)
                for (std::int64_t l = 0; l < lags; ++l) {
                  want.c.push_back(all.c[j * max_lags + l]);
                  want.size.push_back(all.size[j * max_lags + l]);
                }
              std::vector<std::vector<T>> const vs(v.begin(), v.begin() + nv);
              auto const ptrs = pointers(vs);
              std::vector<T> first;
              for (int const threads : {0, 1, 2}) {
                if (threads > 0 && lags != 9) continue;  // thread counts on one lag count (time)
                std::vector<T> c(static_cast<std::size_t>(nv * lags), poison<T>());
                recur::correlate_lags(host{threads}, u.data(), std::span<T const* const>(ptrs), c.data(),
                                      lags, lay, dir);
                BOOST_TEST(close(c, want, lay), describe(lay) << " nv=" << nv << " lags=" << lags
                                                              << " reverse=" << (dir == direction::reverse));
                if (first.empty())
                  first = c;
                else
                  BOOST_TEST(same_bytes(c, first), describe(lay)
                                                       << " threads=" << threads << " changes the bits");
              }
            }
        }
      }
}

BOOST_AUTO_TEST_CASE(correlate_lags_against_long_double) {
  correlate_matches_reference<float>(seed_for(3604));
  correlate_matches_reference<double>(seed_for(3605));
}

// An empty batch gives zeros; no lags or no arrays write nothing.
BOOST_AUTO_TEST_CASE(correlate_lags_empty) {
  std::vector<double> const u(8, 1.0);
  std::vector<double const*> const v = {u.data(), u.data()};
  for (layout const lay : {layout::contiguous(0, 3), layout::contiguous(4, 0)}) {
    std::vector<double> c(6, poison<double>());
    recur::correlate_lags(host{}, u.data(), std::span<double const* const>(v), c.data(), 3, lay);
    BOOST_TEST(c == std::vector<double>(6, 0.0));
  }
  std::vector<double> c(6, poison<double>());
  recur::correlate_lags(host{}, u.data(), std::span<double const* const>(v), c.data(), 0,
                        layout::contiguous(4, 2));
  recur::correlate_lags(host{}, u.data(), std::span<double const* const>(), c.data(), 3,
                        layout::contiguous(4, 2));
  BOOST_TEST(all_poison(c));
}

// The gradients of loss = <g, lfilter(b, a, x)> (a[0] = 1) from lambda, the
// reverse filter lfilter(1, a, g): d b_k = c[k], d a_k = -c[lags + k] for
// k >= 1, against <g, lfilter(e_k, a, x)> (the loss is linear in b) and
// central differences in a.
BOOST_AUTO_TEST_CASE(coefficient_gradients) {
  rng r(seed_for(3606));
  std::int64_t const n = 301, count = 2;
  layout const lay = layout::interleaved(n, count);
  auto const f = iir<double>::filter(r, 3, 2, 0.7);
  std::vector<double> b = f.b, a = f.a;
  for (double& v : b) v /= a[0];
  for (double& v : a) v /= f.a[0];
  auto const x = random_values<double>(r, static_cast<std::size_t>(n * count));
  auto const g = random_values<double>(r, x.size());
  auto loss = [&](std::vector<double> const& bb, std::vector<double> const& aa) {
    std::vector<double> y(x.size());
    recur::lfilter(host{}, std::span<double const>(bb), std::span<double const>(aa), x.data(), y.data(), lay);
    long double s = 0;
    for (std::size_t i = 0; i < y.size(); ++i) s += static_cast<long double>(g[i]) * y[i];
    return double(s);
  };
  std::vector<double> y(x.size()), lam(x.size());
  recur::lfilter(host{}, std::span<double const>(b), std::span<double const>(a), x.data(), y.data(), lay);
  std::vector<double> const one = {1.0};
  recur::lfilter(host{}, std::span<double const>(one), std::span<double const>(a), g.data(), lam.data(), lay,
                 {nullptr, nullptr, direction::reverse});
  std::int64_t const lags = 3;
  std::vector<double const*> const v = {x.data(), y.data()};
  std::vector<double> c(6);
  recur::correlate_lags(host{}, lam.data(), std::span<double const* const>(v), c.data(), lags, lay);
  for (int k = 0; k < 3; ++k) {
    std::vector<double> e(3, 0.0);
    e[k] = 1;
    double const db = loss(e, a);
    BOOST_TEST(std::fabs(c[k] - db) <= 1e-12 * (1 + std::fabs(db)),
               "b_" << k << ": " << c[k] << " vs " << db);
  }
  for (int k = 1; k < 3; ++k) {
    double const h = 1e-6;
    std::vector<double> ap = a, am = a;
    ap[k] += h;
    am[k] -= h;
    double const da = (loss(b, ap) - loss(b, am)) / (2 * h);
    BOOST_TEST(std::fabs(-c[lags + k] - da) <= 1e-6 * (1 + std::fabs(da)),
               "a_" << k << ": " << -c[lags + k] << " vs " << da);
  }
}

// Bad arguments: invalid_argument naming the argument, c left as it was.
BOOST_AUTO_TEST_CASE(correlate_lags_errors_nothing_written) {
  std::int64_t const n = 10, count = 2;
  layout const lay = layout::contiguous(n, count);
  std::vector<double> u(20, 1.0), v0(20, 2.0), v1(20, 3.0);
  std::vector<double> c(4, poison<double>());
  std::vector<double const*> ok = {v0.data(), v1.data()}, null_v1 = {v0.data(), nullptr},
                             into_c = {c.data(), v1.data()};
  auto rejected = [&](auto&& call, char const* what) {
    recur_test::expect_invalid(
        call, [&] { return c; }, {what}, "recur::correlate_lags: ");
    BOOST_TEST(all_poison(c), what);
  };
  using span = std::span<double const* const>;
  rejected([&] { recur::correlate_lags(host{}, u.data(), span(ok), c.data(), -1, lay); },
           "lags = -1 is negative");
  rejected([&] { recur::correlate_lags(host{}, nullptr, span(ok), c.data(), 2, lay); }, "u is null");
  rejected([&] { recur::correlate_lags(host{}, u.data(), span(null_v1), c.data(), 2, lay); }, "v[1] is null");
  rejected([&] { recur::correlate_lags<double>(host{}, u.data(), span(ok), nullptr, 2, lay); }, "c is null");
  rejected([&] { recur::correlate_lags(host{}, u.data(), span(ok), v0.data() + 3, 2, lay); },
           "c overlaps v[0]");
  rejected([&] { recur::correlate_lags(host{}, c.data(), span(ok), c.data(), 2, layout::contiguous(2, 1)); },
           "c overlaps u");
  rejected(
      [&] { recur::correlate_lags(host{}, u.data(), span(into_c), c.data(), 2, layout::contiguous(2, 1)); },
      "c overlaps v[0]");
  rejected(
      [&] {
        recur::correlate_lags(host{}, u.data(), span(ok), c.data(), 2, layout::strided(n, count, 0, n));
      },
      "layout.element_stride = 0");
  rejected([&] { recur::correlate_lags(host{-1}, u.data(), span(ok), c.data(), 2, lay); },
           "host.threads = -1");
  rejected(
      [&] { recur::correlate_lags(host{}, u.data(), span(ok), c.data(), 2, lay, static_cast<direction>(5)); },
      "dir = 5");
}

// A direction that is neither forward nor reverse: invalid_argument, nothing written.
BOOST_AUTO_TEST_CASE(filter_direction_checked) {
  std::vector<double> const b = {0.5, 0.2}, a = {1.0, -0.3}, x(8, 1.0), sos = {1, 0.5, 0, 1, -0.2, 0};
  std::vector<double> y(8, poison<double>());
  recur::filter_options<double> const opt{nullptr, nullptr, static_cast<direction>(2)};
  auto check = [&](auto&& call, char const* fn) {
    BOOST_CHECK_EXCEPTION(call(), recur::invalid_argument, [&](recur::invalid_argument const& e) {
      std::string const m = e.what();
      return m.rfind(fn, 0) == 0 && m.find("opt.dir = 2 is not forward or reverse") != std::string::npos;
    });
    BOOST_TEST(all_poison(y));
  };
  check(
      [&] {
        recur::lfilter(host{}, std::span<double const>(b), std::span<double const>(a), x.data(), y.data(),
                       layout::contiguous(8), opt);
      },
      "recur::lfilter: ");
  check(
      [&] {
        recur::sosfilt(host{}, std::span<double const>(sos), x.data(), y.data(), layout::contiguous(8), opt);
      },
      "recur::sosfilt: ");
}

BOOST_AUTO_TEST_SUITE_END()
