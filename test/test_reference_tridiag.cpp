// reference::thomas, cyclic_reduction, parallel_cyclic_reduction,
// recursive_doubling, the hybrids cr_pcr and cr_rd, thomas_pcr, pscheme and
// bondeli against LAPACK's ?gtsv and the residual.
//
// Tolerances (eps = machine epsilon of T, ||.|| the infinity norm):
// - relative residual ||A x - d|| / (||A|| ||x||) <= C n eps, C = 4;
// - agreement with ?gtsv (partial pivoting) ||x - x_lapack|| / ||x_lapack||
//   <= C n eps kappa, kappa = ||A|| / min_i (|b_i| - |a_i| - |c_i|) >=
//   ||A|| ||A^-1|| (Varah's bound for diagonally dominant rows);
// - RD (and CR+RD), when it reports success, within those times 2^rd_backward_error_exponent
//   (2^6 in float, 2^13 in double): RD accepts its own result only up to that
//   componentwise backward error (see tridiag.hpp), since its error is eps
//   times the terms it cancels, which grow along the system, not eps times x.
//   A backward error beta gives a relative residual <= ~2 beta <= C n beta.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>
#include <boost/test/unit_test.hpp>
#include <recur/error.hpp>
#include <recur/reference/tridiag.hpp>
#include <recur/reference/tridiag_bondeli.hpp>

#include "common/cases.hpp"
#include "common/random.hpp"
#include "common/tridiag_systems.hpp"

extern "C" void sgtsv_(int* n, int* nrhs, float* dl, float* d, float* du, float* b, int* ldb, int* info);
extern "C" void dgtsv_(int* n, int* nrhs, double* dl, double* d, double* du, double* b, int* ldb, int* info);

namespace ref = recur::reference;
using recur::layout;

namespace {

enum class algorithm { thomas, cr, pcr, rd, cr_pcr, cr_rd, pscheme, thomas_pcr, bondeli };
constexpr int algorithm_count = 9;
char const* name(algorithm alg) {
  switch (alg) {
    case algorithm::thomas:
      return "thomas";
    case algorithm::cr:
      return "cyclic_reduction";
    case algorithm::pcr:
      return "parallel_cyclic_reduction";
    case algorithm::rd:
      return "recursive_doubling";
    case algorithm::cr_pcr:
      return "cr_pcr";
    case algorithm::cr_rd:
      return "cr_rd";
    case algorithm::pscheme:
      return "pscheme";
    case algorithm::thomas_pcr:
      return "thomas_pcr";
    case algorithm::bondeli:
      return "bondeli";
  }
  return "?";
}
constexpr algorithm all_algorithms[] = {algorithm::thomas,  algorithm::cr,         algorithm::pcr,
                                        algorithm::rd,      algorithm::cr_pcr,     algorithm::cr_rd,
                                        algorithm::pscheme, algorithm::thomas_pcr, algorithm::bondeli};
// RD and CR+RD accept their result only up to RD's backward error, and break
// down on long dominant systems.
bool rd_like(algorithm alg) { return alg == algorithm::rd || alg == algorithm::cr_rd; }

template <class T>
void solve(algorithm alg, T const* a, T const* b, T const* c, T const* d, T* x, layout const& lay,
           std::int64_t nrhs = 1, std::int64_t rhs_stride = 0, std::int32_t* info = nullptr) {
  switch (alg) {
    case algorithm::thomas:
      return ref::thomas(a, b, c, d, x, lay, nrhs, rhs_stride, info);
    case algorithm::cr:
      return ref::cyclic_reduction(a, b, c, d, x, lay, nrhs, rhs_stride, info);
    case algorithm::pcr:
      return ref::parallel_cyclic_reduction(a, b, c, d, x, lay, nrhs, rhs_stride, info);
    case algorithm::rd:
      return ref::recursive_doubling(a, b, c, d, x, lay, nrhs, rhs_stride, info);
    case algorithm::cr_pcr:
      return ref::cr_pcr(a, b, c, d, x, lay, nrhs, rhs_stride, info);
    case algorithm::cr_rd:
      return ref::cr_rd(a, b, c, d, x, lay, nrhs, rhs_stride, info);
    case algorithm::pscheme:
      return ref::pscheme(a, b, c, d, x, lay, nrhs, rhs_stride, info);
    case algorithm::thomas_pcr:
      return ref::thomas_pcr(a, b, c, d, x, lay, nrhs, rhs_stride, info);
    case algorithm::bondeli:
      return ref::bondeli(a, b, c, d, x, lay, nrhs, rhs_stride, info);
  }
}

using recur_test::rng;
using recur_test::tridiag_system;

// A batch of systems in one layout, nrhs right-hand sides one set after the
// other (rhs_stride = n * count).
template <class T>
struct batch {
  layout lay;
  std::int64_t nrhs = 1;
  std::vector<T> a, b, c, d;
  std::int64_t rhs_stride() const { return lay.n * lay.count; }
  std::int64_t at(std::int64_t i, std::int64_t k, std::int64_t r = 0) const {
    return lay.offset(i, k) + r * rhs_stride();
  }
  // System k's matrix, in long double.
  tridiag_system system(std::int64_t k) const {
    return tridiag_system::gather(
        lay.n, [&](std::int64_t i) { return a[at(i, k)]; }, [&](std::int64_t i) { return b[at(i, k)]; },
        [&](std::int64_t i) { return c[at(i, k)]; });
  }
};

// kind: 0 = diagonally dominant rows (recur_test::dominant_row), d uniform in
// [-1, 1); 1 = Zhang's "close values in rows" (recur_test::close_values_row),
// d = A x with |x_i| in [1/2, 1] (RD's domain, tridiag_systems.hpp).
// a[0] and c[n-1] are NaN: the solvers must not read them.
template <class T>
batch<T> make_batch(rng& r, layout lay, std::int64_t nrhs, int kind) {
  batch<T> s{lay, nrhs, {}, {}, {}, {}};
  std::int64_t const size = lay.n * lay.count;
  s.a.resize(size), s.b.resize(size), s.c.resize(size), s.d.resize(size * nrhs);
  for (std::int64_t k = 0; k < lay.count; ++k)
    for (std::int64_t i = 0; i < lay.n; ++i) {
      std::int64_t const o = lay.offset(i, k);
      auto const row =
          kind == 0 ? recur_test::dominant_row(r, i == 0, i + 1 == lay.n) : recur_test::close_values_row(r);
      s.a[o] = static_cast<T>(row.a), s.b[o] = static_cast<T>(row.b), s.c[o] = static_cast<T>(row.c);
      if (i == 0) s.a[o] = std::numeric_limits<T>::quiet_NaN();
      if (i + 1 == lay.n) s.c[o] = std::numeric_limits<T>::quiet_NaN();
    }
  for (std::int64_t rr = 0; rr < nrhs; ++rr)
    for (std::int64_t k = 0; k < lay.count; ++k) {
      if (kind == 0) {
        for (std::int64_t i = 0; i < lay.n; ++i) s.d[s.at(i, k, rr)] = static_cast<T>(r.symmetric());
        continue;
      }
      std::vector<double> x(static_cast<std::size_t>(lay.n));
      for (double& v : x) v = recur_test::solution_value(r);
      tridiag_system const m = s.system(k);
      for (std::int64_t i = 0; i < lay.n; ++i)
        s.d[s.at(i, k, rr)] = static_cast<T>(m.row_times(i, [&](std::int64_t j) { return x[j]; }));
    }
  return s;
}

// ||A x - d|| / (||A|| ||x||) of system k, right-hand side r.
template <class T>
double relative_residual(batch<T> const& s, std::int64_t k, std::int64_t r, std::vector<T> const& x) {
  auto const nm = s.system(k).residual([&](std::int64_t i) { return x[s.at(i, k, r)]; },
                                       [&](std::int64_t i) { return s.d[s.at(i, k, r)]; });
  if (!nm.finite) return std::numeric_limits<double>::infinity();
  return static_cast<double>(nm.residual / (nm.a * nm.x + std::numeric_limits<long double>::min()));
}

// ||A|| / min_i (|b_i| - |a_i| - |c_i|): a bound on the condition number.
template <class T>
double varah_condition(batch<T> const& s, std::int64_t k) {
  return static_cast<double>(s.system(k).varah_condition());
}

// ?gtsv on system k, right-hand side r (partial pivoting).
template <class T>
std::vector<T> lapack_solve(batch<T> const& s, std::int64_t k, std::int64_t r) {
  int n = static_cast<int>(s.lay.n), one = 1, ldb = n, info = 0;
  std::vector<T> dl(n > 1 ? n - 1 : 1), dg(n), du(n > 1 ? n - 1 : 1), x(n);
  for (int i = 0; i < n; ++i) {
    dg[i] = s.b[s.at(i, k)];
    x[i] = s.d[s.at(i, k, r)];
    if (i > 0) dl[i - 1] = s.a[s.at(i, k)];
    if (i + 1 < n) du[i] = s.c[s.at(i, k)];
  }
  if constexpr (std::is_same_v<T, float>)
    sgtsv_(&n, &one, dl.data(), dg.data(), du.data(), x.data(), &ldb, &info);
  else
    dgtsv_(&n, &one, dl.data(), dg.data(), du.data(), x.data(), &ldb, &info);
  BOOST_REQUIRE_EQUAL(info, 0);
  return x;
}

constexpr double residual_c = 4;

template <class T>
double rd_factor(algorithm alg) {
  return rd_like(alg) ? std::ldexp(1.0, ref::detail::rd_backward_error_exponent<T>) : 1.0;
}

template <class T>
void sweep(std::uint64_t seed) {
  double const eps = std::numeric_limits<T>::epsilon();
  rng r{seed};
  int rd_solved[algorithm_count] = {}, rd_broke[algorithm_count] = {};
  double worst[algorithm_count][2] = {};  // per algorithm: residual and error, in units of their tolerance
  recur_test::case_count cases(fmt::format("references {}", recur_test::type_name<T>));
  for (algorithm const alg : all_algorithms)
    for (bool const interleaved : {false, true})
      for (std::int64_t const n : {1, 2, 3, 5, 31, 32, 33, 127, 512, 513, 1000})
        for (std::int64_t const count : {1, 3})
          for (std::int64_t const nrhs : {1, 2}) {
            cases.run();
            layout const lay = interleaved ? layout::interleaved(n, count) : layout::contiguous(n, count);
            batch<T> const s = make_batch<T>(r, lay, nrhs, 0);
            std::vector<T> x(s.d.size(), std::numeric_limits<T>::quiet_NaN()), inplace = s.d;
            std::vector<std::int32_t> info(count, -7), info2(count, -7);
            solve<T>(alg, s.a.data(), s.b.data(), s.c.data(), s.d.data(), x.data(), lay, nrhs, s.rhs_stride(),
                     info.data());
            solve<T>(alg, s.a.data(), s.b.data(), s.c.data(), inplace.data(), inplace.data(), lay, nrhs,
                     s.rhs_stride(), info2.data());
            std::string const ctx = std::string(name(alg)) + (interleaved ? " interleaved" : " contiguous") +
                                    " n=" + std::to_string(n) + " count=" + std::to_string(count) +
                                    " nrhs=" + std::to_string(nrhs);
            BOOST_TEST(info == info2, ctx);
            // In place gives the same bits (NaN where broken down).
            bool same = true;
            for (std::size_t j = 0; j < x.size(); ++j)
              same &= (x[j] == inplace[j]) || (std::isnan(x[j]) && std::isnan(inplace[j]));
            BOOST_TEST(same, ctx << ": x aliasing d differs");
            for (std::int64_t k = 0; k < count; ++k) {
              if (rd_like(alg)) {
                // See tridiag.hpp: RD's growth on dominant rows is >= 2 per
                // row, so it solves only short systems; n = 1 always works.
                // CR+RD is RD itself up to 128 equations.
                (info[k] == 0 ? rd_solved : rd_broke)[static_cast<int>(alg)]++;
                if (n == 1) BOOST_TEST(info[k] == 0, ctx);
                BOOST_TEST(info[k] >= 0, ctx);
                BOOST_TEST(info[k] <= n, ctx);
                if (info[k] != 0) continue;
              } else {
                BOOST_TEST(info[k] == 0, ctx << " k=" << k);
                if (info[k] != 0) continue;
              }
              double const kappa = varah_condition(s, k), loose = rd_factor<T>(alg);
              for (std::int64_t rr = 0; rr < nrhs; ++rr) {
                double const res = relative_residual(s, k, rr, x);
                double& wr = worst[static_cast<int>(alg)][0];
                wr = std::fmax(wr, res / (residual_c * n * eps * loose));
                BOOST_TEST(res <= residual_c * n * eps * loose,
                           ctx << " k=" << k << " r=" << rr << " residual " << res);
                std::vector<T> const want = lapack_solve(s, k, rr);
                double err = 0, wn = 0;
                for (std::int64_t i = 0; i < n; ++i) {
                  err = std::fmax(err, std::fabs(double(x[s.at(i, k, rr)]) - double(want[i])));
                  wn = std::fmax(wn, std::fabs(double(want[i])));
                }
                double& we = worst[static_cast<int>(alg)][1];
                we = std::fmax(we, err / (residual_c * n * eps * kappa * loose * wn));
                BOOST_TEST(err <= residual_c * n * eps * kappa * loose * wn,
                           ctx << " k=" << k << " r=" << rr << " error vs gtsv " << err / wn);
              }
            }
          }
  for (algorithm const alg : {algorithm::rd, algorithm::cr_rd}) {
    int const i = static_cast<int>(alg);
    BOOST_TEST_MESSAGE(name(alg) << " on dominant systems: " << rd_solved[i] << " solved, " << rd_broke[i]
                                 << " reported breakdown");
    BOOST_TEST(rd_solved[i] > 0);
  }
  for (algorithm const alg : all_algorithms)
    BOOST_TEST_MESSAGE(name(alg) << ": worst residual " << worst[static_cast<int>(alg)][0] << " and error "
                                 << worst[static_cast<int>(alg)][1] << " of their tolerances");
  cases.require(algorithm_count * 2 * 11 * 2 * 2);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(reference_tridiag)

BOOST_AUTO_TEST_CASE(dominant_systems_float) { sweep<float>(0x7121d1a9); }
BOOST_AUTO_TEST_CASE(dominant_systems_double) { sweep<double>(0x7121d1aa); }

// b_0 = 0 with a nonsingular matrix (row 0 is c_0 x_1 = d_0). Thomas divides
// by b_0 first: info = 1. CR's first level divides row 1 by b_0, and PCR
// checks every b before its first step: info = 1 too. RD never divides by b
// (only by c_i), so it solves the system; it breaks where c_i = 0 instead.
BOOST_AUTO_TEST_CASE(zero_pivot_breakdown) {
  std::int64_t const n = 5;
  std::vector<double> const a = {0, 1, 1, 1, 1}, c = {1, 1, 1, 1, 0}, d = {1, -2, 3, 0.5, 1};
  std::vector<double> b = {0, 2.5, 3, 2.5, 3};
  layout const lay = layout::contiguous(n);
  for (algorithm const alg : all_algorithms) {
    std::vector<double> x(n, 0);
    std::int32_t info = -1;
    solve<double>(alg, a.data(), b.data(), c.data(), d.data(), x.data(), lay, 1, 0, &info);
    BOOST_TEST_CONTEXT(name(alg)) {
      if (rd_like(alg)) {  // CR+RD: 5 equations are RD's alone
        BOOST_TEST(info == 0);
        batch<double> const s{lay, 1, a, b, c, d};
        std::vector<double> const want = lapack_solve(s, 0, 0);
        for (std::int64_t i = 0; i < n; ++i) BOOST_TEST(std::fabs(x[i] - want[i]) <= 1e-13);
      } else {
        BOOST_TEST(info == 1);
        for (double v : x) BOOST_TEST(std::isnan(v));  // no half-solution left behind
      }
    }
  }
  // RD's own breakdown: c_2 = 0 (row 3), which Thomas does not mind.
  std::vector<double> const c0 = {1, 1, 0, 1, 0};
  b = {4, 4, 4, 4, 4};
  std::vector<double> x(n);
  std::int32_t info = -1;
  ref::recursive_doubling(a.data(), b.data(), c0.data(), d.data(), x.data(), lay, 1, 0, &info);
  BOOST_TEST(info == 3);
  ref::thomas(a.data(), b.data(), c0.data(), d.data(), x.data(), lay, 1, 0, &info);
  BOOST_TEST(info == 0);
  // A non-finite pivot: b_3 = inf gives Thomas info = 4.
  b[3] = std::numeric_limits<double>::infinity();
  ref::thomas(a.data(), b.data(), c0.data(), d.data(), x.data(), lay, 1, 0, &info);
  BOOST_TEST(info == 4);
}

// Zhang et al.'s "close values in rows" matrices, where RD's products stay
// near 1, with right-hand sides d = A x (make_batch). RD and CR+RD must solve
// every system of RD's domain (tridiag_systems.hpp, rd_must_solve: n <= 128
// in f32, n <= 512 in f64, kappa bounded), within RD's looser tolerance; any
// other system they solve so, or they report breakdown with NaN x; most
// systems are solved. Many systems of small n, a few of large n.
template <class T>
void close_values(algorithm alg, std::uint64_t seed) {
  double const eps = std::numeric_limits<T>::epsilon(), loose = rd_factor<T>(alg);
  rng r{seed};
  int solved = 0, total = 0, in_domain = 0;
  for (std::int64_t const n : {1, 2, 3, 5, 31, 32, 33, 127, 128, 512, 513, 1000}) {
    std::int64_t const count = std::max<std::int64_t>(4, 2048 / n);
    layout const lay = layout::interleaved(n, count);
    batch<T> const s = make_batch<T>(r, lay, 1, 1);
    std::vector<T> x(s.d.size());
    std::vector<std::int32_t> info(count);
    solve<T>(alg, s.a.data(), s.b.data(), s.c.data(), s.d.data(), x.data(), lay, 1, 0, info.data());
    for (std::int64_t k = 0; k < count; ++k, ++total) {
      BOOST_TEST(info[k] >= 0);
      BOOST_TEST(info[k] <= n);
      if (recur_test::rd_must_solve<T>(s.system(k))) {
        ++in_domain;
        BOOST_TEST(info[k] == 0, name(alg) << " n=" << n << " k=" << k << ": info " << info[k]
                                           << " on a system of RD's domain");
      }
      if (info[k] != 0) {
        for (std::int64_t i = 0; i < n; ++i) BOOST_TEST_REQUIRE(std::isnan(x[s.at(i, k)]));
        continue;
      }
      ++solved;
      double const res = relative_residual(s, k, 0, x);
      BOOST_TEST(res <= residual_c * n * eps * loose, name(alg)
                                                          << " n=" << n << " k=" << k << " residual " << res);
    }
  }
  BOOST_TEST_MESSAGE(name(alg) << ", close values in rows: " << solved << " of " << total << " solved, "
                               << in_domain << " of them in RD's domain");
  BOOST_TEST(2 * solved >= total);
  BOOST_TEST(in_domain >= 3000, name(alg) << ": only " << in_domain << " systems of RD's domain drawn");
}
BOOST_AUTO_TEST_CASE(recursive_doubling_close_values_float) {
  close_values<float>(algorithm::rd, 0xc105e);
  close_values<float>(algorithm::cr_rd, 0xc1060);
}
BOOST_AUTO_TEST_CASE(recursive_doubling_close_values_double) {
  close_values<double>(algorithm::rd, 0xc105f);
  close_values<double>(algorithm::cr_rd, 0xc1061);
}

// The hybrids at other intermediate sizes (1 and 2: CR down to one or two
// equations; 3, 8, 64: a few PCR levels), Thomas-PCR with as many chunks,
// and pscheme, against Thomas:
// ||x - x_thomas|| <= C n eps kappa ||x_thomas|| (both are within half of that
// of the exact solution). CR+RD only with an intermediate system of one
// equation (RD's x_0 = d / b): CR makes dominant rows far more dominant (the
// off-diagonals shrink quadratically per level), so RD breaks down on
// reduced systems of even two or three equations (it reports it).
template <class T>
void hybrids_against_thomas(std::uint64_t seed) {
  double const eps = std::numeric_limits<T>::epsilon();
  rng r{seed};
  double worst = 0;
  recur_test::case_count cases(fmt::format("hybrids {}", recur_test::type_name<T>));
  for (std::int64_t const n : {1, 2, 3, 5, 31, 33, 127, 513, 1000})
    for (std::int64_t const m : {1, 2, 3, 8, 64}) {
      std::int64_t const count = 3, nrhs = 2;
      layout const lay = layout::contiguous(n, count);
      batch<T> const s = make_batch<T>(r, lay, nrhs, 0);
      std::vector<T> want(s.d.size()), x(s.d.size());
      std::vector<std::int32_t> info(count, -1);
      ref::thomas(s.a.data(), s.b.data(), s.c.data(), s.d.data(), want.data(), lay, nrhs, s.rhs_stride(),
                  info.data());
      for (std::int32_t const v : info) BOOST_TEST_REQUIRE(v == 0);
      for (int variant = 0; variant < 4; ++variant) {
        if ((variant == 2 || variant == 1) && m != 1) {  // pscheme: no intermediate size; CR+RD: see above
          cases.skip(variant == 2 ? "pscheme at one size" : "cr_rd at m = 1 only");
          continue;
        }
        cases.run();
        std::fill(x.begin(), x.end(), std::numeric_limits<T>::quiet_NaN());
        std::fill(info.begin(), info.end(), -1);
        char const* what = variant == 0   ? "cr_pcr"
                           : variant == 1 ? "cr_rd"
                           : variant == 2 ? "pscheme"
                                          : "thomas_pcr";
        if (variant == 0)
          ref::cr_pcr(s.a.data(), s.b.data(), s.c.data(), s.d.data(), x.data(), lay, nrhs, s.rhs_stride(),
                      info.data(), m);
        else if (variant == 1)
          ref::cr_rd(s.a.data(), s.b.data(), s.c.data(), s.d.data(), x.data(), lay, nrhs, s.rhs_stride(),
                     info.data(), m);
        else if (variant == 2)
          ref::pscheme(s.a.data(), s.b.data(), s.c.data(), s.d.data(), x.data(), lay, nrhs, s.rhs_stride(),
                       info.data());
        else
          ref::thomas_pcr(s.a.data(), s.b.data(), s.c.data(), s.d.data(), x.data(), lay, nrhs, s.rhs_stride(),
                          info.data(), m);
        double const loose = variant == 1 ? rd_factor<T>(algorithm::rd) : 1.0;
        for (std::int64_t k = 0; k < count; ++k) {
          BOOST_TEST(info[k] == 0, what << " n=" << n << " m=" << m << " k=" << k);
          if (info[k] != 0) continue;
          double const kappa = varah_condition(s, k);
          for (std::int64_t rr = 0; rr < nrhs; ++rr) {
            double err = 0, wn = 0;
            for (std::int64_t i = 0; i < n; ++i) {
              err = std::fmax(err, std::fabs(double(x[s.at(i, k, rr)]) - double(want[s.at(i, k, rr)])));
              wn = std::fmax(wn, std::fabs(double(want[s.at(i, k, rr)])));
            }
            double const tol = residual_c * n * eps * kappa * loose * wn;
            worst = std::fmax(worst, err / tol);
            BOOST_TEST(err <= tol, what << " n=" << n << " m=" << m << " k=" << k << " r=" << rr
                                        << ": differs from thomas by " << err / wn);
            double const res = relative_residual(s, k, rr, x);
            BOOST_TEST(res <= residual_c * n * eps * loose,
                       what << " n=" << n << " m=" << m << " residual " << res);
          }
        }
      }
    }
  BOOST_TEST_MESSAGE("hybrids and pscheme against thomas: worst difference " << worst << " of its tolerance");
  cases.require(9 * (5 * 2 + 2));  // n x (cr_pcr and thomas_pcr at 5 sizes, pscheme and cr_rd at one)
}
BOOST_AUTO_TEST_CASE(hybrids_and_pscheme_float) { hybrids_against_thomas<float>(0x4b1d); }
BOOST_AUTO_TEST_CASE(hybrids_and_pscheme_double) { hybrids_against_thomas<double>(0x4b1e); }

// A singular system with an all-zero row 3 (0-based) of 8: each algorithm
// reports the first unusable divisor in its own order. Thomas and pscheme: the
// pivot of row 3 (info 4). PCR: b_3 before its first step. RD: c_3 = 0. CR:
// row 3's equation stays all zero through the levels, and the last two
// equations (rows 3 and 7) have determinant 0, reported at the second (info
// 8). The hybrids with an intermediate system of two equations (rows 3 and 7)
// hand it to PCR (b = 0 at its first row) or RD (c = 0 at its first row):
// info 4, mapped back from the intermediate system's row 1.
BOOST_AUTO_TEST_CASE(breakdown_rows_of_a_zero_row) {
  std::int64_t const n = 8;
  std::vector<double> a(n, 1), b(n, 4), c(n, 1), d(n);
  for (std::int64_t i = 0; i < n; ++i) d[i] = 0.25 * double(i) - 1;
  a[3] = b[3] = c[3] = 0;
  layout const lay = layout::contiguous(n);
  auto const info_of = [&](auto&& call) {
    std::vector<double> x(n, 0);
    std::int32_t info = -1;
    call(x.data(), &info);
    if (info != 0)
      for (double v : x) BOOST_TEST(std::isnan(v));
    return info;
  };
  BOOST_TEST(info_of([&](double* x, std::int32_t* i) {
               ref::thomas(a.data(), b.data(), c.data(), d.data(), x, lay, 1, 0, i);
             }) == 4);
  BOOST_TEST(info_of([&](double* x, std::int32_t* i) {
               ref::pscheme(a.data(), b.data(), c.data(), d.data(), x, lay, 1, 0, i);
             }) == 4);
  BOOST_TEST(info_of([&](double* x, std::int32_t* i) {
               ref::parallel_cyclic_reduction(a.data(), b.data(), c.data(), d.data(), x, lay, 1, 0, i);
             }) == 4);
  BOOST_TEST(info_of([&](double* x, std::int32_t* i) {
               ref::recursive_doubling(a.data(), b.data(), c.data(), d.data(), x, lay, 1, 0, i);
             }) == 4);
  BOOST_TEST(info_of([&](double* x, std::int32_t* i) {
               ref::cyclic_reduction(a.data(), b.data(), c.data(), d.data(), x, lay, 1, 0, i);
             }) == 8);
  BOOST_TEST(info_of([&](double* x, std::int32_t* i) {
               ref::cr_pcr(a.data(), b.data(), c.data(), d.data(), x, lay, 1, 0, i, 2);
             }) == 4);
  BOOST_TEST(info_of([&](double* x, std::int32_t* i) {
               ref::cr_rd(a.data(), b.data(), c.data(), d.data(), x, lay, 1, 0, i, 2);
             }) == 4);
  // Thomas-PCR reports the smallest unusable divisor with every division
  // done: the chunk of rows {2, 3} meets b_3 = 0 (row 4), and the NaN it
  // makes spreads through the PCR steps to smaller rows' divisors.
  std::int32_t const tp = info_of([&](double* x, std::int32_t* i) {
    ref::thomas_pcr(a.data(), b.data(), c.data(), d.data(), x, lay, 1, 0, i);
  });
  BOOST_TEST((tp >= 1 && tp <= 4), "thomas_pcr info " << tp);
  // Bondeli, four blocks of two rows: block 1 is rows {2, 3}, whose second
  // pivot is b_3 - a_3 c'_2 = 0.
  BOOST_TEST(info_of([&](double* x, std::int32_t* i) {
               ref::bondeli(a.data(), b.data(), c.data(), d.data(), x, lay, 1, 0, i);
             }) == 4);
}

// A zero Thomas pivot with a non-zero diagonal: a_2 = 0 makes p_2 = b_2 = 2,
// c'_2 = 1 / 2, and b_3 = 1 / 2 with a_3 = 1 gives p_3 = 1/2 - 1/2 = 0 exactly
// (the P-scheme's form (b_3 p_2 - a_3 c_2) / p_2 = (1 - 1) / 2 too): info 4
// for thomas and pscheme; the other systems of the batch are solved. PCR's
// first step meets the same divisor: b'_2 = b_2 - a_3 c_2 / b_3 = 0 (its
// lower neighbour contributes a_2 = 0), reported at row 3.
template <class T>
void zero_thomas_pivot() {
  std::int64_t const n = 9, count = 3;
  layout const lay = layout::interleaved(n, count);
  rng r{0x9a11};
  batch<T> s = make_batch<T>(r, lay, 1, 0);
  std::int64_t const k = 1;
  s.a[s.at(2, k)] = 0;
  s.b[s.at(2, k)] = 2;
  s.c[s.at(2, k)] = 1;
  s.a[s.at(3, k)] = 1;
  s.b[s.at(3, k)] = T(0.5);
  for (algorithm const alg : {algorithm::thomas, algorithm::pscheme, algorithm::pcr}) {
    std::vector<T> x(s.d.size(), T(7));
    std::vector<std::int32_t> info(count, -1);
    solve<T>(alg, s.a.data(), s.b.data(), s.c.data(), s.d.data(), x.data(), lay, 1, 0, info.data());
    BOOST_TEST_CONTEXT(name(alg)) {
      BOOST_TEST(info[0] == 0);
      BOOST_TEST(info[2] == 0);
      BOOST_TEST(info[k] == (alg == algorithm::pcr ? 3 : 4));
      for (std::int64_t kk = 0; kk < count; ++kk)
        for (std::int64_t i = 0; i < n; ++i) BOOST_TEST(std::isnan(x[s.at(i, kk)]) == (info[kk] != 0));
    }
  }
}
BOOST_AUTO_TEST_CASE(zero_thomas_pivot_float) { zero_thomas_pivot<float>(); }
BOOST_AUTO_TEST_CASE(zero_thomas_pivot_double) { zero_thomas_pivot<double>(); }

BOOST_AUTO_TEST_CASE(bad_arguments) {
  std::vector<double> a(8, 1), b(8, 4), c(8, 1), d(8, 1), x(8);
  for (algorithm const alg : all_algorithms) {
    BOOST_TEST_CONTEXT(name(alg)) {
      layout const lay = layout::contiguous(4);
      BOOST_CHECK_THROW(
          solve<double>(alg, a.data(), b.data(), c.data(), d.data(), x.data(), layout{-1, 1, 1, 0}),
          recur::invalid_argument);
      BOOST_CHECK_THROW(
          solve<double>(alg, a.data(), b.data(), c.data(), d.data(), x.data(), layout{4, -1, 1, 4}),
          recur::invalid_argument);
      BOOST_CHECK_THROW(solve<double>(alg, a.data(), b.data(), c.data(), d.data(), x.data(), lay, -1),
                        recur::invalid_argument);
      BOOST_CHECK_THROW(solve<double>(alg, nullptr, b.data(), c.data(), d.data(), x.data(), lay),
                        recur::invalid_argument);
      BOOST_CHECK_THROW(solve<double>(alg, a.data(), nullptr, c.data(), d.data(), x.data(), lay),
                        recur::invalid_argument);
      BOOST_CHECK_THROW(solve<double>(alg, a.data(), b.data(), nullptr, d.data(), x.data(), lay),
                        recur::invalid_argument);
      BOOST_CHECK_THROW(solve<double>(alg, a.data(), b.data(), c.data(), nullptr, x.data(), lay),
                        recur::invalid_argument);
      BOOST_CHECK_THROW(solve<double>(alg, a.data(), b.data(), c.data(), d.data(), nullptr, lay),
                        recur::invalid_argument);
      // x on top of a diagonal, or straddling d, or rhs sets that overlap.
      BOOST_CHECK_THROW(solve<double>(alg, a.data(), b.data(), c.data(), d.data(), b.data() + 2, lay),
                        recur::invalid_argument);
      BOOST_CHECK_THROW(solve<double>(alg, a.data(), b.data(), c.data(), d.data(), d.data() + 1, lay),
                        recur::invalid_argument);
      BOOST_CHECK_THROW(solve<double>(alg, a.data(), b.data(), c.data(), d.data(), x.data(), lay, 2, 3),
                        recur::invalid_argument);
      // Nothing was written by any of these.
      for (double v : x) BOOST_TEST(v == 0);
      // Empty batches are fine with null pointers.
      BOOST_CHECK_NO_THROW(
          solve<double>(alg, nullptr, nullptr, nullptr, nullptr, nullptr, layout::contiguous(0, 3)));
    }
  }
}

// The tests' condition number (tridiag_system::inverse_norm, GEPP in long
// double) against ||A^-1||_inf from ?gtsv's columns, on matrices that need
// row interchanges (close values, and b = 0 rows) and on dominant ones.
BOOST_AUTO_TEST_CASE(condition_number_of_the_tests) {
  rng r{0xc0d1};
  for (int kind = 0; kind < 3; ++kind)
    for (std::int64_t const n : {1, 2, 3, 7, 40}) {
      batch<double> s = make_batch<double>(r, layout::contiguous(n), 1, kind == 0 ? 0 : 1);
      if (kind == 2)
        for (std::int64_t i = 1; i < n; i += 3) s.b[i] = 0;
      long double const got = s.system(0).inverse_norm();
      std::vector<double> rows(static_cast<std::size_t>(n), 0.0);
      batch<double> e = s;
      for (std::int64_t j = 0; j < n; ++j) {
        std::fill(e.d.begin(), e.d.end(), 0.0);
        e.d[j] = 1;
        std::vector<double> const col = lapack_solve(e, 0, 0);
        for (std::int64_t i = 0; i < n; ++i) rows[i] += std::fabs(col[i]);
      }
      double const want = *std::max_element(rows.begin(), rows.end());
      BOOST_TEST(std::fabs(double(got) - want) <= 1e-10 * want,
                 "kind " << kind << " n " << n << ": " << double(got) << " vs ?gtsv's " << want);
    }
}

BOOST_AUTO_TEST_CASE(bad_intermediate_size_or_chunks) {
  std::vector<double> a(8, 1), b(8, 4), c(8, 1), d(8, 1), x(8);
  layout const lay = layout::contiguous(8);
  BOOST_CHECK_THROW(ref::cr_pcr(a.data(), b.data(), c.data(), d.data(), x.data(), lay, 1, 0, nullptr, 0),
                    recur::invalid_argument);
  BOOST_CHECK_THROW(ref::cr_rd(a.data(), b.data(), c.data(), d.data(), x.data(), lay, 1, 0, nullptr, -3),
                    recur::invalid_argument);
  BOOST_CHECK_THROW(ref::thomas_pcr(a.data(), b.data(), c.data(), d.data(), x.data(), lay, 1, 0, nullptr, 0),
                    recur::invalid_argument);
  BOOST_CHECK_THROW(ref::bondeli(a.data(), b.data(), c.data(), d.data(), x.data(), lay, 1, 0, nullptr, 0),
                    recur::invalid_argument);
  for (double v : x) BOOST_TEST(v == 0);
}

BOOST_AUTO_TEST_SUITE_END()
