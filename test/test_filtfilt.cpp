// recur::filtfilt, sosfiltfilt, sosfilt_zi and lfiltic with recur::host.
// filtfilt and sosfiltfilt against scipy's algorithm written out here with
// the sequential references (extend the sequence, lfilter forward from
// zi * ext[0], reverse, lfilter from zi * (last value), reverse, cut): the
// same arithmetic, so bit for bit, in every layout, in place, for every
// padtype and padlen; sosfilt_zi and lfiltic by the properties that define
// them; argument errors with nothing written.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>
#include <recur/filter.hpp>
#include <recur/reference/lfilter.hpp>

#include "common/linrec_harness.hpp"

namespace ref = recur::reference;
using recur::filtfilt_options;
using recur::filtfilt_pad;
using recur::host;
using recur::layout;
using recur_test::layout_kind;
using recur_test::rng;
using recur_test::seed_for;

namespace {

constexpr layout_kind all_kinds[] = {layout_kind::contiguous, layout_kind::interleaved,
                                     layout_kind::strided_gaps, layout_kind::interleaved_padded};
constexpr filtfilt_pad all_pads[] = {filtfilt_pad::odd, filtfilt_pad::even, filtfilt_pad::constant,
                                     filtfilt_pad::none};

// A stable filter of `poles` real poles inside radius 0.8, a[0] not 1.
template <class T>
void random_filter(rng& r, int nb, int poles, std::vector<T>& b, std::vector<T>& a) {
  std::vector<double> p = {1.0};
  for (int j = 0; j < poles; ++j) {
    double const root = 0.8 * r.symmetric();
    p.push_back(0.0);
    for (std::size_t i = p.size() - 1; i > 0; --i) p[i] -= root * p[i - 1];
  }
  double const a0 = 0.5 + r.uniform();
  a.clear();
  b.clear();
  for (double v : p) a.push_back(static_cast<T>(v * a0));
  for (int j = 0; j < nb; ++j) b.push_back(static_cast<T>(r.symmetric()));
}

// A stable second-order section per row, a0 = 1 as scipy designs them.
template <class T>
std::vector<T> random_sos(rng& r, int sections) {
  std::vector<T> sos;
  for (int s = 0; s < sections; ++s) {
    double const p = 0.85 * r.uniform(), q = 0.85 * r.symmetric();
    double const row[6] = {r.symmetric(), r.symmetric(), r.symmetric(), 1.0, -(p + q), p * q};
    for (double v : row) sos.push_back(static_cast<T>(v));
  }
  return sos;
}

// scipy's filtfilt on one sequence: `filter(in, out, zi)` runs the
// reference filter over a contiguous sequence from the given state.
template <class T, class Filter>
std::vector<T> scipy_filtfilt(std::vector<T> const& x, std::vector<T> const& zi, std::int64_t edge,
                              filtfilt_pad pad, Filter filter) {
  std::int64_t const n = static_cast<std::int64_t>(x.size());
  std::vector<T> ext;
  for (std::int64_t j = -edge; j < n + edge; ++j) {
    if (j >= 0 && j < n) {
      ext.push_back(x[j]);
      continue;
    }
    bool const left = j < 0;
    T const end = left ? x[0] : x[n - 1];
    std::int64_t const m = left ? -j : 2 * (n - 1) - j;
    ext.push_back(pad == filtfilt_pad::odd ? T(2) * end - x[m] : pad == filtfilt_pad::even ? x[m] : end);
  }
  auto pass = [&](std::vector<T>& v) {
    std::vector<T> z(zi.size());
    for (std::size_t j = 0; j < zi.size(); ++j) z[j] = zi[j] * v[0];
    std::vector<T> out(v.size());
    filter(v, out, z);
    v = out;
  };
  pass(ext);
  std::reverse(ext.begin(), ext.end());
  pass(ext);
  std::reverse(ext.begin(), ext.end());
  return std::vector<T>(ext.begin() + edge, ext.begin() + edge + n);
}

template <class T>
std::vector<T> poisoned(std::int64_t size) {
  return std::vector<T>(static_cast<std::size_t>(size), std::numeric_limits<T>::quiet_NaN());
}

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// Runs `call(x, y, lay)` over layouts, lengths, counts, in place and out of
// place, and compares every sequence bit for bit with `expect(sequence)`;
// gaps of the layout are left alone.
template <class T, class Call, class Expect>
void sweep(rng& r, std::int64_t min_n, Call call, Expect expect) {
  for (layout_kind kind : all_kinds)
    for (std::int64_t n : {min_n, min_n + 1, min_n + 30, std::int64_t{1009}})
      for (std::int64_t count : {1, 3, 17})
        for (bool in_place : {false, true}) {
          layout const lay = recur_test::make_layout(kind, n, count);
          std::int64_t const ext = recur_test::extent(lay);
          std::vector<T> x(static_cast<std::size_t>(ext));
          for (auto& v : x) v = static_cast<T>(r.symmetric());
          std::vector<T> const x0 = x;
          std::vector<T> y = in_place ? x : poisoned<T>(ext);
          call(in_place ? y.data() : x.data(), y.data(), lay);
          BOOST_TEST_CONTEXT(recur_test::name(kind)
                             << " n=" << n << " count=" << count << " in_place=" << in_place) {
            BOOST_TEST((in_place || x == x0));  // the input is not written
            std::vector<bool> in(static_cast<std::size_t>(ext), false);
            for (std::int64_t k = 0; k < count; ++k) {
              std::vector<T> seq(static_cast<std::size_t>(n));
              for (std::int64_t i = 0; i < n; ++i) {
                seq[i] = x0[lay.offset(i, k)];
                in[lay.offset(i, k)] = true;
              }
              std::vector<T> const want = expect(seq);
              std::int64_t bad = 0;
              for (std::int64_t i = 0; i < n; ++i) bad += !same_bits(y[lay.offset(i, k)], want[i]);
              BOOST_TEST(bad == 0, "sequence " << k << ": " << bad << " elements differ");
            }
            std::int64_t touched = 0;
            for (std::int64_t p = 0; p < ext; ++p)
              if (!in[p]) touched += in_place ? !same_bits(y[p], x0[p]) : !std::isnan(y[p]);
            BOOST_TEST(touched == 0);
          }
        }
}

template <class T>
void filtfilt_matches_scipy_algorithm(std::uint64_t seed) {
  rng r(seed);
  for (int poles : {0, 1, 2, 5})
    for (int nb : {1, 3, 6}) {
      std::vector<T> b, a;
      random_filter<T>(r, nb, poles, b, a);
      std::vector<T> const zi = recur::lfilter_zi<T>(b, a);
      std::int64_t const ntaps = static_cast<std::int64_t>(std::max(a.size(), b.size()));
      for (filtfilt_pad pad : all_pads)
        for (std::int64_t padlen : {std::int64_t{-1}, std::int64_t{0}, std::int64_t{2}}) {
          filtfilt_options opt{pad, {}};
          if (padlen >= 0) opt.padlen = padlen;
          std::int64_t const edge = pad == filtfilt_pad::none ? 0 : padlen >= 0 ? padlen : 3 * ntaps;
          BOOST_TEST_CONTEXT("poles=" << poles << " nb=" << nb << " pad=" << static_cast<int>(pad)
                                      << " padlen=" << padlen) {
            sweep<T>(
                r, edge + 1,
                [&](T const* x, T* y, layout const& lay) { recur::filtfilt(host{}, b, a, x, y, lay, opt); },
                [&](std::vector<T> const& seq) {
                  return scipy_filtfilt<T>(seq, zi, edge, pad, [&](auto const& in, auto& out, auto& z) {
                    ref::lfilter<T>(b, a, in.data(), out.data(),
                                    layout::contiguous(static_cast<std::int64_t>(in.size()), 1), z.data(),
                                    nullptr);
                  });
                });
          }
        }
    }
}

template <class T>
void sosfiltfilt_matches_scipy_algorithm(std::uint64_t seed) {
  rng r(seed);
  for (int sections : {1, 2, 5}) {
    std::vector<T> const sos = random_sos<T>(r, sections);
    std::vector<T> const zi = recur::sosfilt_zi<T>(sos);
    for (filtfilt_pad pad : all_pads) {
      filtfilt_options const opt{pad, {}};
      std::int64_t const edge = pad == filtfilt_pad::none ? 0 : 3 * (2 * sections + 1);
      BOOST_TEST_CONTEXT("sections=" << sections << " pad=" << static_cast<int>(pad)) {
        sweep<T>(
            r, edge + 1,
            [&](T const* x, T* y, layout const& lay) { recur::sosfiltfilt(host{}, sos, x, y, lay, opt); },
            [&](std::vector<T> const& seq) {
              return scipy_filtfilt<T>(seq, zi, edge, pad, [&](auto const& in, auto& out, auto& z) {
                ref::sosfilt<T>(sos, in.data(), out.data(),
                                layout::contiguous(static_cast<std::int64_t>(in.size()), 1), z.data(),
                                nullptr);
              });
            });
      }
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(filtfilt_host)

BOOST_AUTO_TEST_CASE(filtfilt_f32) { filtfilt_matches_scipy_algorithm<float>(seed_for(901)); }
BOOST_AUTO_TEST_CASE(filtfilt_f64) { filtfilt_matches_scipy_algorithm<double>(seed_for(902)); }
BOOST_AUTO_TEST_CASE(sosfiltfilt_f32) { sosfiltfilt_matches_scipy_algorithm<float>(seed_for(903)); }
BOOST_AUTO_TEST_CASE(sosfiltfilt_f64) { sosfiltfilt_matches_scipy_algorithm<double>(seed_for(904)); }

// sosfiltfilt counts scipy's ntaps: sections whose b2 and a2 are both zero
// (first-order sections) shorten the default padding.
BOOST_AUTO_TEST_CASE(sosfiltfilt_default_padlen_counts_first_order_sections) {
  std::vector<double> const sos = {1, 0.5, 0, 1, -0.5, 0, 1, 2, 1, 1, -0.2, 0.1};  // ntaps = 5 - 1
  std::vector<double> x(12, 1.0), y(12);
  // n = 12 = 3 * 4: not greater than the default padlen, which is 12.
  BOOST_CHECK_EXCEPTION(recur::sosfiltfilt(host{}, sos, x.data(), y.data(), 12), recur::invalid_argument,
                        [](recur::invalid_argument const& e) {
                          return std::string(e.what()).find("padlen, which is 12") != std::string::npos;
                        });
  x.push_back(1.0);
  y.push_back(0.0);
  recur::sosfiltfilt(host{}, sos, x.data(), y.data(), 13);
  // A constant input is a steady state from both ends: the output is the
  // squared DC gain of the cascade.
  double const gain = (1.5 / 0.5) * (4.0 / 0.9);
  for (double v : y) BOOST_TEST(v == gain * gain, boost::test_tools::tolerance(1e-12));
}

// sosfilt_zi: the cascade started from c * zi on a constant c is constant.
BOOST_AUTO_TEST_CASE(sosfilt_zi_is_the_steady_state) {
  rng r(seed_for(905));
  for (int sections : {1, 3, 6}) {
    std::vector<double> sos = random_sos<double>(r, sections);
    sos[3] = 2.0;  // a0 != 1 is normalised
    std::vector<double> const zi = recur::sosfilt_zi<double>(sos);
    BOOST_TEST(zi.size() == static_cast<std::size_t>(2 * sections));
    double const c = 1.75;
    std::vector<double> init(zi.size());
    for (std::size_t j = 0; j < zi.size(); ++j) init[j] = c * zi[j];
    std::vector<double> x(50, c), y(50);
    recur::sosfilt(host{}, sos, x.data(), y.data(), 50, {init.data(), nullptr});
    for (double v : y) BOOST_TEST(v == y[0], boost::test_tools::tolerance(1e-12));
  }
}

// lfiltic: the state after filtering x equals lfiltic of the last outputs
// and inputs, newest first (to rounding); missing past values are zero.
BOOST_AUTO_TEST_CASE(lfiltic_continues_a_filtering) {
  rng r(seed_for(906));
  for (int poles : {0, 1, 3, 6})
    for (int nb : {1, 2, 5}) {
      std::vector<double> b, a;
      random_filter<double>(r, nb, poles, b, a);
      std::size_t const m = std::max(a.size(), b.size()) - 1;
      std::vector<double> x(40), y(40), zf(m);
      for (auto& v : x) v = r.symmetric();
      recur::lfilter(host{}, b, a, x.data(), y.data(), 40, {nullptr, zf.data()});
      std::vector<double> yp(y.rbegin(), y.rend()), xp(x.rbegin(), x.rend());
      std::vector<double> const zi = recur::lfiltic<double>(b, a, yp, xp);
      BOOST_TEST(zi.size() == m);
      for (std::size_t j = 0; j < m; ++j) BOOST_TEST(zi[j] == zf[j], boost::test_tools::tolerance(1e-12));
      // From rest: no past values give a zero state.
      for (double v : recur::lfiltic<double>(b, a, {}, {})) BOOST_TEST(v == 0.0);
    }
}

BOOST_AUTO_TEST_CASE(bad_arguments_write_nothing) {
  std::vector<double> const b = {1, 2}, a = {1, -0.5};
  std::vector<double> const x(20, 1.0);
  std::vector<double> y(20, -7.0);
  auto const fails = [&](auto call, std::string const& text) {
    BOOST_CHECK_EXCEPTION(call(), recur::invalid_argument, [&](recur::invalid_argument const& e) {
      BOOST_TEST_INFO(e.what());
      return std::string(e.what()).find(text) != std::string::npos;
    });
    BOOST_TEST(std::all_of(y.begin(), y.end(), [](double v) { return v == -7.0; }));
  };
  fails(
      [&] {
        recur::filtfilt(host{}, b, a, x.data(), y.data(), 20, {filtfilt_pad::odd, -1});
      },
      "recur::filtfilt: opt.padlen = -1 is negative");
  fails([&] { recur::filtfilt(host{}, b, a, x.data(), y.data(), 6); },
        "recur::filtfilt: layout.n = 6 must be greater than padlen, which is 6");
  fails(
      [&] {
        recur::filtfilt(host{}, b, a, x.data(), y.data(), 20, {filtfilt_pad::even, 20});
      },
      "which is 20");
  fails(
      [&] {
        recur::filtfilt(host{}, b, std::vector<double>{1, -1}, x.data(), y.data(), 20);
      },
      "recur::filtfilt: I - A^T is singular");
  fails([&] { recur::filtfilt(host{}, b, std::vector<double>{0, 1}, x.data(), y.data(), 20); }, "a[0] = 0");
  fails([&] { recur::filtfilt(host{}, b, a, y.data(), y.data() + 1, 19); }, "y overlaps x");
  fails(
      [&] {
        recur::sosfiltfilt(host{}, std::vector<double>{1, 0, 0, 1, -1}, x.data(), y.data(), 20);
      },
      "recur::sosfiltfilt: sos has 5 values");
  fails(
      [&] {
        recur::sosfiltfilt(host{}, std::vector<double>{1, 0, 0, 1, -2, 1}, x.data(), y.data(), 20);
      },
      "recur::sosfiltfilt: section 0: I - A^T is singular");
  BOOST_CHECK_THROW(recur::sosfilt_zi<double>(std::vector<double>{1, 0, 0, 0, 1, 0}),
                    recur::invalid_argument);
  BOOST_CHECK_THROW(recur::lfiltic<double>(b, a, std::vector<double>{NAN}), recur::invalid_argument);
  // padtype none takes any length > 0 and ignores padlen.
  recur::filtfilt(host{}, b, a, x.data(), y.data(), 1, {filtfilt_pad::none, 100});
  BOOST_TEST(std::isfinite(y[0]));
}

BOOST_AUTO_TEST_SUITE_END()
