// recur::solve_batched through recur::cuda{stream} on systems larger than
// shared memory (the partitioned form, doc/tridiag-internals.md "Large systems on the GPU"):
//
// - backward_stable_*: one system of n = 10^5, 2^20 + 1 and 10^7 unknowns
//   (and 2^28 in f32 where memory allows), automatic, 1-D Poisson
//   (-1, 2, -1: symmetric positive definite, only weakly dominant) and
//   random diagonally dominant, f32 and f64: the normwise relative residual
//   ||A x - d||_inf / (||A||_inf ||x||_inf + ||d||_inf) within
//   residual_bound eps, as Thomas gives at every n;
// - named_*: every named algorithm at n = 10^5 + 3 and 2^20 (the partitioned
//   form, the algorithm solving its reduced systems) on random diagonally
//   dominant systems: residual_bound eps, and x within agreement_factor times that
//   (relative) of the CPU backend's Thomas. rd and cr_rd may instead report
//   that recursive doubling is unstable for the reduced system (info > 0,
//   x NaN), never a wrong answer; what they solve meets RD's own accuracy
//   bound (rd_bound);
// - rd_rhs_breakdown_*: rd and cr_rd there with two right-hand sides, a
//   random one and zeros (which RD accepts whatever the system): where one
//   breaks down, info says so and both are NaN.
//
// RECUR_TEST_SKIP_HUGE=1 skips the 2^28 case. Host code only.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <boost/test/unit_test.hpp>
#include <recur/tridiag.hpp>

#include "common/cuda_memory.hpp"

using recur::layout;
using recur::tridiag_algorithm;

namespace {

using recur_test::cuda_ok;
using recur_test::enough_memory;
using recur_test::test_stream;

// A few eps: what Thomas reaches (the partitioned form's chunk
// eliminations and its reduced systems' serial join reach it too).
constexpr double residual_bound = 16;
// The dominant systems are well conditioned (every row's margin |b| -
// |a| - |c| >= 1/2, so ||A^-1||_inf <= 2 and kappa_inf(A) <= 11): x agrees
// with Thomas's within 16 times the residual bound.
constexpr double agreement_factor = 16;
// RD accepts a result whose rows' residuals are within 2^6 eps (f32) or
// 2^13 eps (f64) of the rows' terms (include/recur/tridiag.hpp).
template <class T>
constexpr double rd_bound = sizeof(T) == 4 ? 64 : 8192;

enum class matrix { poisson, dominant };

template <class T>
struct system {
  std::vector<T> a, b, c, d;
};

// Poisson, or a_i, c_i uniform in [-1, 1] and b_i = |a_i| + |c_i| + [1/2, 3/2];
// d uniform in [-1, 1]. A 64-bit LCG: 2^28 rows in a few seconds.
template <class T>
system<T> make_system(std::int64_t n, matrix kind, std::uint64_t seed) {
  system<T> s{std::vector<T>(n), std::vector<T>(n), std::vector<T>(n), std::vector<T>(n)};
  std::uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  auto uniform = [&state] {  // [-1, 1)
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return double(state >> 11) * 0x1.0p-52 - 1.0;
  };
  for (std::int64_t i = 0; i < n; ++i) {
    if (kind == matrix::poisson) {
      s.a[i] = T(-1), s.b[i] = T(2), s.c[i] = T(-1);
    } else {
      T const a = T(uniform()), c = T(uniform());
      s.a[i] = a, s.c[i] = c, s.b[i] = std::abs(a) + std::abs(c) + T(1 + uniform() / 2);
    }
    s.d[i] = T(uniform());
  }
  return s;
}

// ||A x - d||_inf / (||A||_inf ||x||_inf + ||d||_inf) in long double.
template <class T>
double relative_residual(system<T> const& s, std::vector<T> const& x) {
  std::int64_t const n = std::int64_t(x.size());
  long double r = 0, an = 0, xn = 0, dn = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    long double const lo = i > 0 ? (long double)s.a[i] : 0.0L, hi = i + 1 < n ? (long double)s.c[i] : 0.0L;
    long double v = (long double)s.b[i] * x[i] - s.d[i];
    if (i > 0) v += lo * x[i - 1];
    if (i + 1 < n) v += hi * x[i + 1];
    r = std::max(r, std::abs(v));
    an = std::max(an, std::abs(lo) + std::abs((long double)s.b[i]) + std::abs(hi));
    xn = std::max(xn, std::abs((long double)x[i]));
    dn = std::max(dn, std::abs((long double)s.d[i]));
  }
  return double(r / (an * xn + dn));
}

// One system on the GPU: x and info.
template <class T>
std::vector<T> solve_gpu(system<T> const& s, tridiag_algorithm alg, std::int32_t& info) {
  std::int64_t const n = std::int64_t(s.b.size());
  auto const a = recur_test::upload(s.a), b = recur_test::upload(s.b), c = recur_test::upload(s.c),
             d = recur_test::upload(s.d);
  auto const x = recur_test::poisoned<T>(std::size_t(n));
  auto const inf = recur_test::poisoned<std::int32_t>(1);
  recur_test::settle();
  recur::tridiag_options opt;
  opt.algorithm = alg;
  opt.info = inf.p;
  recur::solve_batched(recur::cuda{test_stream()}, a.p, b.p, c.p, d.p, x.p, layout::contiguous(n), opt);
  recur_test::finish(test_stream());
  info = inf.read()[0];
  return x.read();
}

template <class T>
void expect_backward_stable(std::int64_t n, matrix kind) {
  auto const s = make_system<T>(n, kind, std::uint64_t(n) + (kind == matrix::poisson ? 1 : 2));
  std::int32_t info = -1;
  auto const x = solve_gpu(s, tridiag_algorithm::automatic, info);
  double const eps = std::numeric_limits<T>::epsilon();
  double const res = relative_residual(s, x) / eps;
  std::string const what =
      fmt::format("automatic n={} {} {}", n, kind == matrix::poisson ? "poisson" : "dominant",
                  sizeof(T) == 4 ? "f32" : "f64");
  BOOST_TEST_MESSAGE(what << ": residual " << res << " eps");
  BOOST_TEST(info == 0, what << ": info " << info);
  BOOST_TEST(res <= residual_bound, what << ": residual " << res << " eps");
}

template <class T>
void expect_backward_stable_all(std::int64_t n) {
  expect_backward_stable<T>(n, matrix::poisson);
  expect_backward_stable<T>(n, matrix::dominant);
}

// The named algorithms whose tiles hold systems in shared memory (larger
// systems run the partitioned form with them solving the reduced systems),
// and bondeli (its own form at any n).
constexpr tridiag_algorithm named[] = {tridiag_algorithm::cr,         tridiag_algorithm::pcr,
                                       tridiag_algorithm::rd,         tridiag_algorithm::cr_pcr,
                                       tridiag_algorithm::cr_rd,      tridiag_algorithm::cr_packed,
                                       tridiag_algorithm::pscheme,    tridiag_algorithm::cr_split,
                                       tridiag_algorithm::thomas_pcr, tridiag_algorithm::bondeli};

template <class T>
void expect_named(std::int64_t n) {
  auto const s = make_system<T>(n, matrix::dominant, std::uint64_t(n) + 3);
  std::vector<T> ref(std::size_t(n), T(0));
  recur::tridiag_options host_opt;
  host_opt.algorithm = tridiag_algorithm::thomas;
  recur::solve_batched(recur::host{}, s.a.data(), s.b.data(), s.c.data(), s.d.data(), ref.data(),
                       layout::contiguous(n), host_opt);
  double const eps = std::numeric_limits<T>::epsilon();
  double ref_norm = 0;
  for (T const v : ref) ref_norm = std::max(ref_norm, double(std::abs(v)));
  for (tridiag_algorithm const alg : named) {
    std::string const what =
        fmt::format("{} n={} {}", recur::to_string(alg), n, sizeof(T) == 4 ? "f32" : "f64");
    BOOST_TEST(
        (recur::resolve_tridiag_algorithm<T>(recur::cuda{test_stream()}, layout::contiguous(n), alg) == alg),
        what << " does not resolve to itself");
    std::int32_t info = -1;
    auto const x = solve_gpu(s, alg, info);
    bool const rd_like = alg == tridiag_algorithm::rd || alg == tridiag_algorithm::cr_rd;
    if (rd_like && info > 0) {  // RD unstable for a reduced system: said so, x NaN
      bool all_nan = true;
      for (T const v : x) all_nan = all_nan && std::isnan(v);
      BOOST_TEST(all_nan, what << ": info " << info << " but x not NaN");
      BOOST_TEST_MESSAGE(what << ": recursive doubling refused at row " << info);
      continue;
    }
    BOOST_TEST(info == 0, what << ": info " << info);
    double const res = relative_residual(s, x) / eps;
    double diff = 0;
    for (std::size_t i = 0; i < x.size(); ++i) diff = std::max(diff, std::abs(double(x[i]) - double(ref[i])));
    double const agree = diff / ref_norm / eps;
    BOOST_TEST_MESSAGE(what << ": residual " << res << " eps, from Thomas (CPU) " << agree << " eps");
    double const bound = rd_like ? rd_bound<T> : residual_bound;
    BOOST_TEST(res <= bound, what << ": residual " << res << " eps");
    BOOST_TEST(agree <= agreement_factor * bound,
               what << ": differs from Thomas (CPU) by " << agree << " eps");
  }
}

template <class T>
void expect_rd_rhs(std::int64_t n) {
  auto s = make_system<T>(n, matrix::dominant, std::uint64_t(n) + 5);
  s.d.resize(2 * std::size_t(n), T(0));  // set 1: zeros
  auto const a = recur_test::upload(s.a), b = recur_test::upload(s.b), c = recur_test::upload(s.c),
             d = recur_test::upload(s.d);
  for (tridiag_algorithm const alg : {tridiag_algorithm::rd, tridiag_algorithm::cr_rd}) {
    auto const x = recur_test::poisoned<T>(2 * std::size_t(n));
    auto const inf = recur_test::poisoned<std::int32_t>(1);
    recur_test::settle();
    recur::tridiag_options opt;
    opt.algorithm = alg;
    opt.info = inf.p;
    opt.nrhs = 2;
    recur::solve_batched(recur::cuda{test_stream()}, a.p, b.p, c.p, d.p, x.p, layout::contiguous(n), opt);
    recur_test::finish(test_stream());
    std::int32_t const info = inf.read()[0];
    auto const xs = x.read();
    std::int64_t nan = 0;
    for (T const v : xs) nan += std::isnan(v);
    std::string const what = fmt::format("{} n={} {} two right-hand sides", recur::to_string(alg), n,
                                         sizeof(T) == 4 ? "f32" : "f64");
    BOOST_TEST_MESSAGE(what << ": info " << info << ", " << nan << " NaN");
    BOOST_TEST(info >= 0, what << ": info " << info);
    BOOST_TEST(nan == (info > 0 ? 2 * n : 0),
               what << ": info " << info << " with " << nan << " NaN of " << 2 * n);
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(tridiag_cuda_large)

BOOST_AUTO_TEST_CASE(backward_stable_f32) {
  for (std::int64_t const n : {100000, (1 << 20) + 1, 10000000}) expect_backward_stable_all<float>(n);
}
BOOST_AUTO_TEST_CASE(backward_stable_f64) {
  for (std::int64_t const n : {100000, (1 << 20) + 1, 10000000}) expect_backward_stable_all<double>(n);
}
// 2^28 unknowns: 5 GiB of f32 arrays on the device (and the host's copies).
BOOST_AUTO_TEST_CASE(backward_stable_f32_2_pow_28, *boost::unit_test::precondition(enough_memory{8, 12})) {
  expect_backward_stable_all<float>(std::int64_t{1} << 28);
}

BOOST_AUTO_TEST_CASE(named_f32) {
  for (std::int64_t const n : {100003, 1 << 20}) expect_named<float>(n);
}
BOOST_AUTO_TEST_CASE(named_f64) {
  for (std::int64_t const n : {100003, 1 << 20}) expect_named<double>(n);
}

BOOST_AUTO_TEST_CASE(rd_rhs_breakdown_f32) { expect_rd_rhs<float>(100003); }
BOOST_AUTO_TEST_CASE(rd_rhs_breakdown_f64) { expect_rd_rhs<double>(100003); }

BOOST_AUTO_TEST_SUITE_END()
