// The per-thread solver of the GPU's pivoted form
// (kernels/thread/thread_tridiag_pivot.cuh) on the CPU: the same functions
// the kernel runs, against LAPACK (?gtsv for plain systems, ?gesv on the
// dense matrix for periodic ones) and the references
// (reference/tridiag_pivot.hpp, tridiag_periodic.hpp, tridiag_refine.hpp).
// Bit for bit where the arithmetic is the reference's: partial pivoting
// (?gttrf and ?gtts2), the periodic split over it, the refinement with
// partial pivoting. The no-pivot path is the GPU's Thomas (a reciprocal per
// pivot), so against reference::thomas_one it agrees to rounding, and
// automatic gives none's bits where it does not pivot, and pivots where
// reference::detail::factor_thomas's growth test fails.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>
#include <boost/test/unit_test.hpp>
#include <recur/kernels/thread/thread_tridiag_pivot.cuh>
#include <recur/reference/tridiag.hpp>
#include <recur/reference/tridiag_refine.hpp>

#include "common/random.hpp"
#include "common/tridiag_pivot_harness.hpp"

extern "C" void sgtsv_(int* n, int* nrhs, float* dl, float* d, float* du, float* b, int* ldb, int* info);
extern "C" void dgtsv_(int* n, int* nrhs, double* dl, double* d, double* du, double* b, int* ldb, int* info);
extern "C" void dgesv_(int* n, int* nrhs, double* a, int* lda, int* ipiv, double* b, int* ldb, int* info);

namespace {

namespace kn = recur::kernels;
namespace rd = recur::reference::detail;
using recur::tridiag_pivoting;
using recur_test::rng;
using recur_test::seed_for;

enum class kind { dominant, random, tiny_first, tiny_middle, singular, laplacian };

// A system (a[0], c[n-1] zero unless periodic) and nrhs right-hand sides.
template <class T>
struct system {
  std::vector<T> a, b, c;
  std::vector<std::vector<T>> d;
  bool periodic = false;
  rd::equations<T> equations() const { return {a, b, c, {}}; }
};

template <class T>
system<T> make(kind k, std::int64_t n, bool periodic, int nrhs, std::uint64_t seed, double delta = 1e-4) {
  rng r(seed);
  system<T> s{std::vector<T>(n), std::vector<T>(n), std::vector<T>(n), {}, periodic};
  for (std::int64_t i = 0; i < n; ++i) {
    bool const has_a = i > 0 || periodic, has_c = i + 1 < n || periodic;
    double a = r.symmetric(), b = r.symmetric(), c = r.symmetric();
    if (k == kind::laplacian) a = -(1 + 0.1 * r.uniform()), c = -(1 + 0.1 * r.uniform());
    if (k != kind::random && k != kind::singular)
      b = (k == kind::laplacian ? 1.0 : r.sign()) * ((has_a ? std::fabs(a) : 0) + (has_c ? std::fabs(c) : 0) +
                                                     (k == kind::laplacian ? delta : 1 + r.uniform()));
    s.a[i] = has_a ? static_cast<T>(a) : T(0);
    s.b[i] = static_cast<T>(b);
    s.c[i] = has_c ? static_cast<T>(c) : T(0);
  }
  std::int64_t const j = k == kind::tiny_first ? 0 : n / 2;
  if ((k == kind::tiny_first || k == kind::tiny_middle) && j + 1 < n) {
    if (j > 0) s.a[j] = 0;
    s.b[j] = static_cast<T>(1e-14);
    s.c[j] = s.a[j + 1] = 1;
    s.b[j + 1] = static_cast<T>(3 + std::fabs(static_cast<double>(s.c[j + 1])));
  }
  if (k == kind::singular) {  // column n / 2 zero
    if (j > 0) s.c[j - 1] = 0;
    s.b[j] = 0;
    if (j + 1 < n) s.a[j + 1] = 0;
  }
  s.d.assign(static_cast<std::size_t>(nrhs), std::vector<T>(n));
  for (auto& v : s.d)
    for (auto& e : v) e = static_cast<T>(r.symmetric());
  return s;
}

template <class T>
struct result {
  kn::pivot_outcome out;
  std::vector<std::vector<T>> x;
};

// The thread solver on s, stored with element stride 2 (a word between
// rows), right-hand sides one after the other, x in place or apart.
template <class T>
result<T> run(system<T> const& s, tridiag_pivoting pivoting, bool in_place, bool refine = false,
              int max_steps = 10) {
  std::int64_t const n = static_cast<std::int64_t>(s.b.size()), es = 2;
  std::int64_t const nrhs = static_cast<std::int64_t>(s.d.size()), rs = n * es + 1;
  T const junk = std::numeric_limits<T>::quiet_NaN();
  std::vector<T> a(n * es, junk), b(n * es, junk), c(n * es, junk), d(nrhs * rs, junk), x;
  for (std::int64_t i = 0; i < n; ++i) {
    // The unread corners of a plain system hold NaN, as a caller's may.
    a[i * es] = i > 0 || s.periodic ? s.a[i] : junk;
    b[i * es] = s.b[i];
    c[i * es] = i + 1 < n || s.periodic ? s.c[i] : junk;
    for (std::int64_t r = 0; r < nrhs; ++r) d[r * rs + i * es] = s.d[r][i];
  }
  if (!in_place) x.assign(d.size(), junk);
  T* const xp = in_place ? d.data() : x.data();
  kn::pivot_system<T> const sys{a.data(), b.data(), c.data(), d.data(), xp, n, 0, es, nrhs, rs, s.periodic};
  result<T> res;
  if constexpr (std::is_same_v<T, double>) {
    if (refine) {
      std::vector<float> lo((kn::pivot_planes_needed + 1) * n);
      std::vector<double> xr(2 * n), hi(kn::pivot_planes_needed * n);
      kn::pivot_refine_planes const ws{{lo.data(), n, 1}, {xr.data(), n, 1}, {hi.data(), n, 1}};
      res.out = kn::pivot_refine_system(sys, pivoting, max_steps, ws);
    }
  }
  if (!refine) {
    std::vector<T> ws(kn::pivot_planes_needed * n);
    res.out = kn::pivot_solve_system(sys, pivoting, kn::pivot_planes<T>{ws.data(), n, 1});
  }
  for (std::int64_t r = 0; r < nrhs; ++r) {
    res.x.emplace_back(n);
    for (std::int64_t i = 0; i < n; ++i) res.x[r][i] = xp[r * rs + i * es];
  }
  // Nothing between the rows or past the sets is written.
  for (std::size_t j = 0; j < d.size(); ++j)
    if (j % rs % es != 0 || static_cast<std::int64_t>(j % rs) >= n * es)
      BOOST_TEST(std::isnan(xp[j]), "element " << j << " between rows was written");
  return res;
}

template <class T>
bool same_bits(std::vector<T> const& x, std::vector<T> const& y) {
  return x.size() == y.size() && std::equal(x.begin(), x.end(), y.begin(),
                                            [](T u, T v) { return std::memcmp(&u, &v, sizeof(T)) == 0; });
}

template <class T>
double rel_diff(std::vector<T> const& x, std::vector<double> const& y) {
  double e = 0, m = 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    e = std::max(e, std::fabs(static_cast<double>(x[i]) - y[i])), m = std::max(m, std::fabs(y[i]));
  return m > 0 ? e / m : e;
}

// ?gtsv in T.
template <class T>
std::vector<double> lapack_gtsv(system<T> const& s, std::vector<T> const& d, int& info) {
  int n = static_cast<int>(d.size()), one = 1;
  std::vector<T> dl(std::max(n - 1, 1)), dg = s.b, du(std::max(n - 1, 1)), x = d;
  for (int i = 0; i + 1 < n; ++i) dl[i] = s.a[i + 1], du[i] = s.c[i];
  if constexpr (std::is_same_v<T, float>)
    sgtsv_(&n, &one, dl.data(), dg.data(), du.data(), x.data(), &n, &info);
  else
    dgtsv_(&n, &one, dl.data(), dg.data(), du.data(), x.data(), &n, &info);
  return {x.begin(), x.end()};
}

// ?gesv in double on the dense periodic matrix.
template <class T>
std::vector<double> lapack_gesv(system<T> const& s, std::vector<T> const& d, int& info) {
  int n = static_cast<int>(d.size()), one = 1;
  std::vector<double> m(static_cast<std::size_t>(n) * n, 0.0), x(d.begin(), d.end());
  std::vector<int> ipiv(n);
  auto at = [&](int i, int j) -> double& { return m[static_cast<std::size_t>(j) * n + i]; };
  for (int i = 0; i < n; ++i) {
    at(i, (i + n - 1) % n) += s.a[i];
    at(i, i) += s.b[i];
    at(i, (i + 1) % n) += s.c[i];
  }
  dgesv_(&n, &one, m.data(), &n, ipiv.data(), x.data(), &n, &info);
  return x;
}

// The reference's factorisation and solve of every right-hand side.
template <class T>
std::vector<std::vector<T>> reference_solve(system<T> const& s, tridiag_pivoting pivoting, int& info,
                                            bool& pivoted) {
  rd::factored_system<T> f;
  info = rd::factor_system(s.equations(), s.periodic, pivoting, f);
  pivoted = f.lu.pivoted;
  std::vector<std::vector<T>> x = s.d;
  if (info == 0)
    for (auto& v : x) rd::solve_factored(f, v);
  return x;
}

constexpr std::int64_t sizes[] = {1, 2, 3, 4, 7, 33, 100, 300};
constexpr kind solvable[] = {kind::dominant, kind::random, kind::tiny_first, kind::tiny_middle};

template <class T>
void partial_cases() {
  double const eps = std::numeric_limits<T>::epsilon();
  int idx = 0;
  for (kind const k : {kind::dominant, kind::random, kind::tiny_first, kind::tiny_middle, kind::singular})
    for (std::int64_t const n : sizes)
      for (bool const in_place : {false, true}) {
        auto const s = make<T>(k, n, false, 1 + idx % 3, seed_for(700, idx, sizeof(T)));
        std::string const what = fmt::format("kind {} n {} in_place {} case {}", int(k), n, in_place, idx++);
        auto const got = run(s, tridiag_pivoting::partial, in_place);
        int info = 0;
        bool pivoted = false;
        auto const ref = reference_solve(s, tridiag_pivoting::partial, info, pivoted);
        BOOST_TEST(got.out.info == info, what);
        BOOST_TEST(got.out.pivoted == 1, what);
        for (std::size_t r = 0; r < s.d.size(); ++r) {
          if (info) {
            BOOST_TEST(std::all_of(got.x[r].begin(), got.x[r].end(), [](T v) { return std::isnan(v); }),
                       what);
            continue;
          }
          BOOST_TEST(same_bits(got.x[r], ref[r]), what << " rhs " << r << ": not the reference's bits");
          int linfo = 0;
          auto const lx = lapack_gtsv(s, s.d[r], linfo);
          BOOST_TEST(linfo == 0, what);
          // Random rows may be ill conditioned: their agreement is LAPACK's
          // arithmetic (the reference's bits above), not a bound.
          if (k != kind::random)
            BOOST_TEST(rel_diff(got.x[r], lx) <= 16 * n * eps, what << " rhs " << r << " vs ?gtsv");
        }
        if (k == kind::singular && n >= 2) {
          int linfo = 0;
          (void)lapack_gtsv(s, s.d[0], linfo);
          BOOST_TEST(got.out.info == linfo, what << ": LAPACK's info");
          BOOST_TEST(got.out.info > 0, what);
        }
      }
}

template <class T>
void automatic_cases() {
  double const eps = std::numeric_limits<T>::epsilon();
  int idx = 0;
  for (kind const k : solvable)
    for (std::int64_t const n : sizes)
      for (bool const in_place : {false, true}) {
        auto const s = make<T>(k, n, false, 2, seed_for(710, idx, sizeof(T)));
        std::string const what = fmt::format("kind {} n {} in_place {} case {}", int(k), n, in_place, idx++);
        auto const got = run(s, tridiag_pivoting::automatic, in_place);
        auto const none = run(s, tridiag_pivoting::none, !in_place);
        auto const partial = run(s, tridiag_pivoting::partial, in_place);
        int info = 0;
        bool pivoted = false;
        (void)reference_solve(s, tridiag_pivoting::automatic, info, pivoted);
        BOOST_TEST(got.out.info == 0, what);
        BOOST_TEST(got.out.pivoted == (pivoted ? 1 : 0), what << ": the reference's growth test");
        bool const tiny = (k == kind::tiny_first && n >= 2) || (k == kind::tiny_middle && n >= 3);
        if (k == kind::dominant) BOOST_TEST(got.out.pivoted == 0, what);
        if (tiny) BOOST_TEST(got.out.pivoted == 1, what);
        for (std::size_t r = 0; r < 2; ++r) {
          auto const& want = got.out.pivoted ? partial.x[r] : none.x[r];
          BOOST_TEST(same_bits(got.x[r], want), what << " rhs " << r << ": not the bits of the path taken");
          if (k == kind::dominant) {  // Thomas with reciprocals against thomas_one's divisions
            std::vector<T> tx;
            BOOST_TEST(rd::thomas_one(s.equations(), s.d[r], tx) == 0);
            BOOST_TEST(rel_diff(got.x[r], std::vector<double>(tx.begin(), tx.end())) <= 4 * n * eps, what);
          }
          if (tiny) {
            int linfo = 0;
            BOOST_TEST(rel_diff(got.x[r], lapack_gtsv(s, s.d[r], linfo)) <= 4 * eps, what << " vs ?gtsv");
          }
        }
      }
}

template <class T>
void periodic_cases() {
  double const eps = std::numeric_limits<T>::epsilon();
  int idx = 0;
  for (kind const k : solvable)
    for (std::int64_t const n : {3, 4, 5, 33, 100, 300})
      for (tridiag_pivoting const piv :
           {tridiag_pivoting::none, tridiag_pivoting::automatic, tridiag_pivoting::partial}) {
        if (piv == tridiag_pivoting::none && k != kind::dominant) continue;
        auto const s = make<T>(k, n, true, 3, seed_for(720, idx, sizeof(T)));
        bool const in_place = idx % 2 == 1;
        std::string const what = fmt::format("kind {} n {} pivoting {} case {}", int(k), n, int(piv), idx++);
        auto const got = run(s, piv, in_place);
        int info = 0;
        bool pivoted = false;
        auto const ref = reference_solve(s, piv, info, pivoted);
        BOOST_TEST(got.out.info == info, what);
        BOOST_TEST(got.out.pivoted == (pivoted ? 1 : 0), what);
        if (info) continue;
        for (std::size_t r = 0; r < s.d.size(); ++r) {
          if (piv == tridiag_pivoting::partial || got.out.pivoted)
            BOOST_TEST(same_bits(got.x[r], ref[r]), what << " rhs " << r << ": not the reference's bits");
          if (k == kind::random) continue;  // conditioning unbounded: the bits above say it
          int linfo = 0;
          auto const gx = lapack_gesv(s, s.d[r], linfo);
          BOOST_TEST(linfo == 0, what);
          BOOST_TEST(rel_diff(got.x[r], gx) <= 16 * n * eps, what << " rhs " << r << " vs ?gesv");
        }
      }
}

// A singular periodic system (a zero column) breaks down: info > 0, x NaN.
template <class T>
void periodic_singular() {
  for (tridiag_pivoting const piv : {tridiag_pivoting::automatic, tridiag_pivoting::partial}) {
    auto const s = make<T>(kind::singular, 40, true, 2, seed_for(725, int(piv), sizeof(T)));
    auto const got = run(s, piv, false);
    BOOST_TEST(got.out.info > 0);
    for (auto const& x : got.x)
      BOOST_TEST(std::all_of(x.begin(), x.end(), [](T v) { return std::isnan(v); }));
  }
}

// The pivoted form's automatic on the pivot harness's matrix classes, read
// through every layout kind, pivots where the reference's Thomas breaks
// down or fails its growth test (factor_thomas), and never on dominant rows.
template <class T>
void check_cases() {
  namespace pt = pivot_test;
  int idx = 0, flagged = 0, passed = 0;
  for (pt::matrix_class const cls :
       {pt::matrix_class::dominant, pt::matrix_class::close_values, pt::matrix_class::random,
        pt::matrix_class::tiny_first, pt::matrix_class::tiny_middle, pt::matrix_class::near_singular,
        pt::matrix_class::singular})
    for (recur_test::layout_kind const lk : recur_test::all_layout_kinds)
      for (std::int64_t const n : sizes) {
        recur::layout const lay = recur_test::make_layout(lk, n, 5);
        auto const p = pt::make_system_batch<T>(lay, 1, 0, cls, false, seed_for(715, idx++, sizeof(T)));
        for (std::int64_t k = 0; k < lay.count; ++k) {
          std::string const what = fmt::format("{} n {} layout {} system {}", pt::name(cls), n, int(lk), k);
          pt::system_values<T> const v = pt::values(p, k, false);
          rd::tridiag_lu<T> lu;
          bool const ref_fails = rd::factor_thomas(v.equations(), lu) != 0 || !lu.growth_acceptable();
          system<T> s{v.a, v.b, v.c, {std::vector<T>(n, T(1))}, false};
          bool const pivoted = run(s, tridiag_pivoting::automatic, false).out.pivoted == 1;
          BOOST_TEST(pivoted == ref_fails,
                     what << ": reference::detail::factor_thomas decides " << ref_fails);
          if (cls == pt::matrix_class::dominant) BOOST_TEST(!pivoted, what);
          (pivoted ? flagged : passed) += 1;
        }
      }
  BOOST_TEST(flagged > 50);
  BOOST_TEST(passed > 50);
}

// Rows diagonally dominant by rows (|b| >= |a| + |c| as the GPU's screen
// computes it, 0 to 3 units in the last place above) never fail Thomas'
// growth test with usable pivots (the growth stays near 2): it fails on
// them only where a pivot is unusable, a matrix singular to working
// precision (the zeros among a and c below make some). So the GPU keeps
// the fast forms' answer for such systems without running the test
// (block_tridiag.cuh's row_dominant), and reports their breakdowns as the
// fast forms meet them. a, b and c over 8 decades and both signs, some a
// and c zero, lengths 1 to 300.
template <class T>
void dominant_cases() {
  recur_test::rng r{seed_for(730, 0, sizeof(T))};
  auto const value = [&] {
    if (r.uniform() < 0.1) return T(0);
    T const v = static_cast<T>(std::pow(10.0, 4 * r.symmetric()));
    return r.uniform() < 0.5 ? -v : v;
  };
  int broke = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::int64_t const n = 1 + static_cast<std::int64_t>(r.uniform() * 300);
    std::vector<T> a(n), b(n), c(n);
    for (std::int64_t i = 0; i < n; ++i) {
      a[i] = i > 0 ? value() : T(0);
      c[i] = i + 1 < n ? value() : T(0);
      T bi = std::abs(a[i]) + std::abs(c[i]);
      if (bi == T(0)) bi = T(1);
      for (int u = static_cast<int>(r.uniform() * 4); u > 0; --u)
        bi = std::nextafter(bi, std::numeric_limits<T>::infinity());
      b[i] = r.uniform() < 0.5 ? -bi : bi;
    }
    rd::tridiag_lu<T> lu;
    int const info = rd::factor_thomas(rd::equations<T>{a, b, c, {}}, lu);
    if (info != 0) {
      ++broke;
      continue;
    }
    BOOST_TEST(lu.growth() <= 2.5,
               "trial " << trial << " n " << n << ": dominant rows, growth " << lu.growth());
  }
  BOOST_TEST(broke < 1000);  // most of the 3000 are regular
}

}  // namespace

BOOST_AUTO_TEST_SUITE(tridiag_pivot_thread)

BOOST_AUTO_TEST_CASE(dominant_rows_pass_thomas_f32) { dominant_cases<float>(); }
BOOST_AUTO_TEST_CASE(dominant_rows_pass_thomas_f64) { dominant_cases<double>(); }

BOOST_AUTO_TEST_CASE(partial_f32) { partial_cases<float>(); }
BOOST_AUTO_TEST_CASE(partial_f64) { partial_cases<double>(); }
BOOST_AUTO_TEST_CASE(automatic_f32) { automatic_cases<float>(); }
BOOST_AUTO_TEST_CASE(automatic_f64) { automatic_cases<double>(); }
BOOST_AUTO_TEST_CASE(check_f32) { check_cases<float>(); }
BOOST_AUTO_TEST_CASE(check_f64) { check_cases<double>(); }
BOOST_AUTO_TEST_CASE(periodic_f32) { periodic_cases<float>(); }
BOOST_AUTO_TEST_CASE(periodic_f64) { periodic_cases<double>(); }
BOOST_AUTO_TEST_CASE(periodic_singular_both) {
  periodic_singular<float>();
  periodic_singular<double>();
}

// Refinement with partial pivoting is the reference's, bit for bit (its
// float factorisation, corrections and double residuals); with automatic
// and none it reaches the same backward error. kappa up to about 4e5
// (laplacian, delta 1e-5).
BOOST_AUTO_TEST_CASE(refinement) {
  double const eps = std::numeric_limits<double>::epsilon();
  int idx = 0;
  for (bool const periodic : {false, true})
    for (double const delta : {1e-1, 1e-3, 1e-5})
      for (std::int64_t const n : {3, 10, 100, 1000})
        for (tridiag_pivoting const piv :
             {tridiag_pivoting::none, tridiag_pivoting::automatic, tridiag_pivoting::partial}) {
          auto const s = make<double>(kind::laplacian, n, periodic, 2, seed_for(730, idx), delta);
          bool const in_place = idx % 2 == 0;
          std::string const what = fmt::format("periodic {} delta {} n {} pivoting {} case {}", periodic,
                                               delta, n, int(piv), idx++);
          auto const got = run(s, piv, in_place, true);
          auto v = s.d;
          auto const ref = rd::solve_refined(s.equations(), v, periodic, piv, 10);
          BOOST_TEST(got.out.info == 0, what);
          BOOST_TEST(got.out.steps >= 1, what << ": steps " << got.out.steps);
          BOOST_TEST(got.out.steps <= 10, what);
          if (piv == tridiag_pivoting::partial) {
            BOOST_TEST(got.out.steps == ref.steps, what);
            for (std::size_t r = 0; r < v.size(); ++r)
              BOOST_TEST(same_bits(got.x[r], v[r]), what << " rhs " << r);
          }
          for (std::size_t r = 0; r < v.size(); ++r) {
            std::vector<double> res;
            rd::residual(s.equations(), periodic, got.x[r], s.d[r], res);
            double const eta = rd::max_abs(res) /
                               (rd::matrix_norm(s.equations()) * rd::max_abs(got.x[r]) + rd::max_abs(s.d[r]));
            BOOST_TEST(eta <= 3 * eps, what << " rhs " << r << ": backward error " << eta / eps << " eps");
          }
        }
}

// Where refinement gives up (no correction allowed) the double solve's bits
// and steps -1; a float-singular matrix scaled out of float's range is
// refined all the same.
BOOST_AUTO_TEST_CASE(refinement_gives_up) {
  int idx = 0;
  for (bool const periodic : {false, true})
    for (tridiag_pivoting const piv : {tridiag_pivoting::automatic, tridiag_pivoting::partial}) {
      auto s = make<double>(kind::laplacian, 200, periodic, 3, seed_for(740, idx++), 1e-3);
      auto const got = run(s, piv, true, true, 0);
      auto const plain = run(s, piv, false);
      BOOST_TEST(got.out.steps == -1);
      BOOST_TEST(got.out.info == 0);
      for (std::size_t r = 0; r < s.d.size(); ++r) BOOST_TEST(same_bits(got.x[r], plain.x[r]));
      for (auto* v : {&s.a, &s.b, &s.c})
        for (auto& e : *v) e = std::ldexp(e, 600);
      auto const big = run(s, piv, false, true);
      BOOST_TEST(big.out.info == 0);
      BOOST_TEST(big.out.steps >= 1);
    }
}

BOOST_AUTO_TEST_SUITE_END()
