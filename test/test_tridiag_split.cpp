// Bondeli's algorithm (reference::bondeli, tridiag_algorithm::bondeli) and
// one long system split over CPU threads (lib/cpu/tridiag_split.hpp: Bondeli,
// and the partition method that automatic and thomas_pcr run there):
// - the reference against LAPACK's ?gtsv on the 1-D Poisson matrix (SPD, not
//   diagonally dominant) for many block counts, on couplings of 0 (where its
//   reduced system needs its row interchanges), and its breakdown rows;
// - the split: Bondeli's bits are the reference's with one block per
//   thread; both methods agree with ?gtsv through the harness's checks
//   (every layout, several right-hand sides, in place, poison and guards);
//   breakdown; what automatic resolves to;
// - backward stability where it is hard: relative residuals of a few eps at
//   n = 10^5, 2^20 + 1 and 10^7 (memory allowing) on dominant and Poisson
//   systems, for 1, 2, 3 and 7 threads, each giving the same bits run to run.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>
#include <boost/test/unit_test.hpp>
#include <recur/reference/tridiag_bondeli.hpp>
#include <recur/tridiag.hpp>

#include "common/cases.hpp"
#include "common/tridiag_harness.hpp"
#include "common/tridiag_host_backend.hpp"

namespace ref = recur::reference;
using recur::layout;
using recur::tridiag_algorithm;
using namespace tridiag_test;

BOOST_AUTO_TEST_SUITE(tridiag_split)

// The 1-D Poisson matrix (-1, 2, -1) over problem p's systems.
template <class T>
void make_poisson(problem<T>& p) {
  for (std::int64_t k = 0; k < p.lay.count; ++k)
    for (std::int64_t i = 0; i < p.lay.n; ++i) {
      std::size_t const o = p.mi(i, k);
      p.a[o] = i > 0 ? T(-1) : std::numeric_limits<T>::quiet_NaN();
      p.b[o] = T(2);
      p.c[o] = i + 1 < p.lay.n ? T(-1) : std::numeric_limits<T>::quiet_NaN();
    }
}

// kappa_inf of the n-row Poisson matrix (computed once per n: O(n^2)).
inline double poisson_condition(std::int64_t n) {
  static std::map<std::int64_t, double> known;
  auto const it = known.find(n);
  if (it != known.end()) return it->second;
  auto const s = recur_test::tridiag_system::gather(
      n, [](std::int64_t) { return -1.0; }, [](std::int64_t) { return 2.0; },
      [](std::int64_t) { return -1.0; });
  return known[n] = static_cast<double>(s.condition());
}

// ||x - x_gtsv|| / ||x_gtsv|| of Poisson system k, right-hand side r, and
// its bound C n eps kappa.
template <class T>
std::pair<double, double> error_vs_lapack(problem<T> const& p, std::vector<T> const& x, std::int64_t k,
                                          std::int64_t r) {
  std::vector<long double> const want = host_backend::oracle(p, k, r);
  long double err = 0, wn = 0;
  for (std::int64_t i = 0; i < p.lay.n; ++i) {
    err = std::max(err, std::fabs(static_cast<long double>(x[p.vi(i, k, r)]) - want[i]));
    wn = std::max(wn, std::fabs(want[i]));
  }
  double const kappa = poisson_condition(p.lay.n);
  return {static_cast<double>(err / wn),
          residual_c * static_cast<double>(p.lay.n) * std::numeric_limits<T>::epsilon() * kappa};
}

// reference::bondeli on problem p (x poisoned, or d itself), info per system.
template <class T>
outputs<T> reference_bondeli(problem<T> const& p, std::int64_t blocks, bool in_place) {
  constexpr std::int64_t g = problem<T>::guard;
  outputs<T> out;
  out.x = in_place ? p.d : std::vector<T>(p.d.size(), recur_test::poison<T>());
  out.info.assign(static_cast<std::size_t>(p.lay.count + 2 * g), info_poison);
  T const* const d = (in_place ? out.x.data() : p.d.data()) + p.d_base;
  ref::bondeli(p.a.data() + g, p.b.data() + g, p.c.data() + g, d, out.x.data() + p.d_base, p.lay, p.nrhs,
               p.rhs_stride, out.info.data() + g, blocks);
  return out;
}

// ------------------------------------------------------------ reference ---

// Poisson systems, right-hand sides uniform in [-1, 1): any block count
// (beyond n / 2 it is clamped), residual within C n eps and agreement with
// ?gtsv within C n eps kappa.
template <class T>
void bondeli_poisson() {
  recur_test::case_count cases(fmt::format("bondeli reference, Poisson, {}", type_name<T>));
  int idx = 0;
  for (layout_kind const kind : basic_layout_kinds)
    for (std::int64_t const n : {1, 2, 3, 5, 8, 64, 1000, 4097})
      for (std::int64_t const blocks : {1, 2, 3, 4, 7, 16, 5000}) {
        std::int64_t const nrhs = idx % 3 == 1 ? 3 : 1;
        bool const in_place = idx % 2 == 1;
        auto p = make_problem<T>(make_layout(kind, n, 2), nrhs, 0, matrix_kind::dominant,
                                 seed_for(900, idx++, sizeof(T)));
        make_poisson(p);
        auto const out = reference_bondeli(p, blocks, in_place);
        tally t;
        std::string const msg = check(
            p, out, tridiag_algorithm::bondeli, [](std::int64_t) { return info_zero; },
            [](auto const& q, std::int64_t k, std::int64_t r) { return host_backend::oracle(q, k, r); }, t);
        BOOST_TEST(msg.empty(), "blocks " << blocks << " " << p.describe() << "\n" << msg);
        for (std::int64_t k = 0; k < 2; ++k) {
          auto const [err, tol] = error_vs_lapack(p, out.x, k, nrhs - 1);
          BOOST_TEST(err <= tol, "blocks " << blocks << " " << p.describe() << ": error vs ?gtsv " << err
                                           << " > " << tol);
        }
        cases.run();
      }
  cases.require(3 * 8 * 7);
}
BOOST_AUTO_TEST_CASE(bondeli_poisson_f32) { bondeli_poisson<float>(); }
BOOST_AUTO_TEST_CASE(bondeli_poisson_f64) { bondeli_poisson<double>(); }

// A coupling coefficient of 0 puts 0 on the diagonal of H (a (v_j)_last or
// c (w_(j+1))_0): elimination without interchanges would break down there.
// Here c at block 0's last row, a at block 2's first, and both at block 3's
// ends (the system falls apart there) are 0; the solution matches ?gtsv.
BOOST_AUTO_TEST_CASE(bondeli_zero_couplings) {
  std::int64_t const n = 40;  // four blocks of 10 rows
  auto p = make_problem<double>(layout::contiguous(n, 1), 2, 0, matrix_kind::dominant, seed_for(901));
  p.c[p.mi(9, 0)] = 0;
  p.a[p.mi(20, 0)] = 0;
  p.c[p.mi(29, 0)] = p.a[p.mi(30, 0)] = 0;
  for (bool const in_place : {false, true}) {
    auto const out = reference_bondeli(p, 4, in_place);
    tally t;
    std::string const msg = check(
        p, out, tridiag_algorithm::bondeli, [](std::int64_t) { return info_zero; },
        [](auto const& q, std::int64_t k, std::int64_t r) { return host_backend::oracle(q, k, r); }, t);
    BOOST_TEST(msg.empty(), msg);
  }
}

// Breakdown rows. A zero pivot inside a block: its row (here row 6, the
// second of block 1 of 4 blocks of 4: a_6 = b_6 = 0). A singular matrix whose
// blocks are not: H is singular, and the row of the column whose pivot
// vanishes is reported. A = (1 1 0 0; 1 2 1 0; 0 1 2 1; 0 0 1 1) in two
// blocks (Thomas's last pivot is 0): B_0^-1 e_2 = (-1, 1) and
// B_1^-1 e_1 = (1, -1), so H = (1 1; 1 1); its second column (x_(l_0), row 2)
// has the pivot 1 - 1 = 0.
BOOST_AUTO_TEST_CASE(bondeli_breakdown_rows) {
  {
    std::int64_t const n = 16;
    auto p = make_problem<double>(layout::interleaved(n, 3), 1, 0, matrix_kind::dominant, seed_for(902));
    p.a[p.mi(6, 1)] = p.b[p.mi(6, 1)] = 0;
    auto const out = reference_bondeli(p, 4, false);
    tally t;
    std::string const msg = check(
        p, out, tridiag_algorithm::bondeli, [](std::int64_t k) { return k == 1 ? 7 : info_zero; },
        [](auto const& q, std::int64_t k, std::int64_t r) { return host_backend::oracle(q, k, r); }, t);
    BOOST_TEST(msg.empty(), msg);
  }
  std::vector<double> const a = {0, 1, 1, 1}, b = {1, 2, 2, 1}, c = {1, 1, 1, 0}, d = {1, 2, 3, 4};
  std::vector<double> x(4, 0);
  std::int32_t info = -1;
  ref::bondeli(a.data(), b.data(), c.data(), d.data(), x.data(), layout::contiguous(4), 1, 0, &info, 2);
  BOOST_TEST(info == 2);
  for (double v : x) BOOST_TEST(std::isnan(v));
  ref::thomas(a.data(), b.data(), c.data(), d.data(), x.data(), layout::contiguous(4), 1, 0, &info);
  BOOST_TEST(info == 4);
}

// ---------------------------------------------------------------- split ---

// Systems of at least tridiag_split_min_n rows (lib/cpu/tridiag_split.hpp).
constexpr std::int64_t split_n = (std::int64_t{1} << 15) + 5;

// Split over t threads, Bondeli gives the reference's bits with t blocks:
// every layout, one and three right-hand sides, in place, one system and
// two (fewer systems than threads).
template <class T>
void split_bondeli_is_reference() {
  recur_test::case_count cases(fmt::format("split bondeli = reference, {}", type_name<T>));
  int idx = 0;
  for (layout_kind const kind : basic_layout_kinds)
    for (int const threads : {2, 3, 7}) {
      std::int64_t const count = threads > 2 ? 2 : 1, nrhs = idx % 2 ? 3 : 1;
      bool const in_place = idx % 3 == 1;
      auto const p = make_problem<T>(make_layout(kind, split_n, count), nrhs, 0, matrix_kind::dominant,
                                     seed_for(910, idx++, sizeof(T)));
      auto const got = run<host_backend>(p, tridiag_algorithm::bondeli, in_place, recur::host{threads});
      auto const want = reference_bondeli(p, threads, in_place);
      BOOST_TEST((same_bytes(got.x, want.x) && got.info == want.info),
                 "host{" << threads << "} " << p.describe());
      cases.run();
    }
  cases.require(9);
}
BOOST_AUTO_TEST_CASE(split_bondeli_is_reference_f32) { split_bondeli_is_reference<float>(); }
BOOST_AUTO_TEST_CASE(split_bondeli_is_reference_f64) { split_bondeli_is_reference<double>(); }

// Both methods (automatic runs the partition method) through the harness's
// check: solved, residual within C n eps, agreement with ?gtsv, nothing
// written outside x; dominant and Poisson matrices.
template <class T>
void split_against_lapack() {
  recur_test::case_count cases(fmt::format("split against ?gtsv, {}", type_name<T>));
  int idx = 0;
  for (tridiag_algorithm const alg : {tridiag_algorithm::automatic, tridiag_algorithm::bondeli})
    for (layout_kind const kind : basic_layout_kinds)
      for (int const threads : {2, 3, 7})
        for (bool const poisson : {false, true}) {
          layout const lay = make_layout(kind, split_n, threads > 2 ? 2 : 1);
          // 1-4 right-hand sides run in locals, more through memory (partition_split).
          constexpr std::int64_t rhs_counts[] = {1, 3, 2, 6};
          std::int64_t const nrhs = rhs_counts[idx % 4], stride = idx % 4 == 3 ? -(extent(lay) + 3) : 0;
          bool const in_place = idx % 3 == 2;
          auto p = make_problem<T>(lay, nrhs, stride, matrix_kind::dominant, seed_for(920, idx++, sizeof(T)));
          if (poisson) make_poisson(p);
          auto const out = run<host_backend>(p, alg, in_place, recur::host{threads});
          tally t;
          std::string const msg = check(
              p, out, alg, [](std::int64_t) { return info_zero; },
              [](auto const& q, std::int64_t k, std::int64_t r) { return host_backend::oracle(q, k, r); }, t);
          BOOST_TEST(msg.empty(), recur::to_string(alg) << " host{" << threads << "} "
                                                        << (poisson ? "Poisson " : "") << p.describe() << "\n"
                                                        << msg);
          cases.run();
        }
  cases.require(2 * 3 * 3 * 2);
}
BOOST_AUTO_TEST_CASE(split_against_lapack_f32) { split_against_lapack<float>(); }
BOOST_AUTO_TEST_CASE(split_against_lapack_f64) { split_against_lapack<double>(); }

// Breakdown on the split path: a zero pivot inside a block (a_j = b_j = 0 at
// row 15000, inside block 1 of 2 or 3) is reported at its row by both
// methods, b_0 = 0 at row 1; the other system is solved; x of a broken
// system is NaN with and without info.
template <class T>
void split_breakdown() {
  recur_test::case_count cases(fmt::format("split breakdown, {}", type_name<T>));
  int idx = 0;
  for (tridiag_algorithm const alg : {tridiag_algorithm::automatic, tridiag_algorithm::bondeli})
    for (int const threads : {2, 3}) {
      layout const lay = layout::contiguous(split_n, threads > 2 ? 2 : 1);
      auto p = make_problem<T>(lay, 2, 0, matrix_kind::dominant, seed_for(930, idx++, sizeof(T)));
      std::int64_t const row = 15000;
      p.a[p.mi(row, 0)] = p.b[p.mi(row, 0)] = 0;
      if (lay.count > 1) p.b[p.mi(0, 1)] = 0;
      auto const expected = [&](std::int64_t k) { return k == 0 ? static_cast<int>(row + 1) : 1; };
      auto const oracle = [](auto const& q, std::int64_t k, std::int64_t r) {
        return host_backend::oracle(q, k, r);
      };
      for (bool const in_place : {false, true}) {
        tally t;
        auto const out = run<host_backend>(p, alg, in_place, recur::host{threads});
        std::string const msg = check(p, out, alg, expected, oracle, t);
        BOOST_TEST(msg.empty(), recur::to_string(alg) << " host{" << threads << "} " << p.describe() << "\n"
                                                      << msg);
      }
      auto const no_info = run<host_backend>(p, alg, false, recur::host{threads}, false);
      bool all_nan = true;
      for (std::int64_t r = 0; r < p.nrhs; ++r)
        for (std::int64_t i = 0; i < lay.n; ++i) all_nan &= std::isnan(no_info.x[p.vi(i, 0, r)]);
      BOOST_TEST(all_nan, recur::to_string(alg) << " without info: not NaN");
      cases.run();
    }
  cases.require(4);
}
BOOST_AUTO_TEST_CASE(split_breakdown_f32) { split_breakdown<float>(); }
BOOST_AUTO_TEST_CASE(split_breakdown_f64) { split_breakdown<double>(); }

// automatic: the partition method (thomas_pcr) where systems are split
// (fewer systems than threads, n >= 2^15), Thomas elsewhere; a named
// algorithm is itself either way.
BOOST_AUTO_TEST_CASE(split_resolution) {
  auto const pick = [](int threads, std::int64_t n, std::int64_t count) {
    return recur::resolve_tridiag_algorithm<double>(recur::host{threads}, layout::contiguous(n, count));
  };
  std::int64_t const m = std::int64_t{1} << 15;
  BOOST_TEST((pick(2, m, 1) == tridiag_algorithm::thomas_pcr));
  BOOST_TEST((pick(3, m, 2) == tridiag_algorithm::thomas_pcr));
  BOOST_TEST((pick(1, m, 1) == tridiag_algorithm::thomas));
  BOOST_TEST((pick(2, m - 1, 1) == tridiag_algorithm::thomas));
  BOOST_TEST((pick(2, m, 2) == tridiag_algorithm::thomas));
  BOOST_TEST(
      (recur::resolve_tridiag_algorithm<float>(recur::host{2}, layout::interleaved(m, 1),
                                               tridiag_algorithm::bondeli) == tridiag_algorithm::bondeli));
}

// ------------------------------------------------- backward stability ---

// Whether n-row systems of T fit: their five arrays, the solver's scratch
// and a second x, within half the memory available now.
template <class T>
bool fits_in_memory(std::int64_t n) {
  long const pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return true;
  double const need = 9.0 * static_cast<double>(n) * sizeof(T);
  return need <= 0.5 * static_cast<double>(pages) * static_cast<double>(page);
}

// ||A x - d|| / (||A|| ||x||) in units of eps (infinity norms, long double).
template <class T>
double residual_eps(std::vector<T> const& a, std::vector<T> const& b, std::vector<T> const& c,
                    std::vector<T> const& d, std::vector<T> const& x) {
  std::int64_t const n = static_cast<std::int64_t>(b.size());
  long double r = 0, xn = 0, an = 0;
  bool finite = true;
  for (std::int64_t i = 0; i < n; ++i) {
    long double v = static_cast<long double>(b[i]) * x[i] - d[i],
                row = std::fabs(static_cast<long double>(b[i]));
    if (i > 0)
      v += static_cast<long double>(a[i]) * x[i - 1], row += std::fabs(static_cast<long double>(a[i]));
    if (i + 1 < n)
      v += static_cast<long double>(c[i]) * x[i + 1], row += std::fabs(static_cast<long double>(c[i]));
    finite &= std::isfinite(x[i]);
    r = std::max(r, std::fabs(v));
    xn = std::max(xn, std::fabs(static_cast<long double>(x[i])));
    an = std::max(an, row);
  }
  if (!finite) return std::numeric_limits<double>::infinity();
  return static_cast<double>(r / (an * xn)) / std::numeric_limits<T>::epsilon();
}

// The residual every split must reach: Thomas's own is about 1 eps on these.
constexpr double stable_residual_eps = 8;

// One system of n rows, diagonally dominant (d uniform in [-1, 1)) or 1-D
// Poisson (d = A x for |x_i| in [1/2, 1]: a solution of moderate size, so
// that the residual is not hidden behind a large ||x||), by automatic and
// bondeli on 1, 2, 3 and 7 threads: relative residual <= 8 eps, and the
// same bits from a second run. At n = 10^7 the second runs are one per
// algorithm (7 threads) and 1 thread is left out, to keep the time down.
template <class T>
void large_systems() {
  recur_test::case_count cases(fmt::format("split large systems, {}", type_name<T>));
  for (std::int64_t const n : {100000, (1 << 20) + 1, 10000000}) {
    if (!fits_in_memory<T>(n)) {
      cases.skip(
          fmt::format("n = {}: 9 n values of {} bytes exceed half the available memory", n, sizeof(T)));
      continue;
    }
    bool const huge = n > 2000000;
    for (bool const poisson : {false, true}) {
      std::vector<T> a(static_cast<std::size_t>(n)), b(a), c(a), d(a), x(a), again(a);
      recur_test::rng r(seed_for(940, static_cast<std::uint64_t>(n), poisson + 2 * sizeof(T)));
      std::vector<double> sol(poisson ? static_cast<std::size_t>(n) : 0);
      for (double& v : sol) v = recur_test::solution_value(r);
      for (std::int64_t i = 0; i < n; ++i) {
        auto const row = recur_test::dominant_row(r, i == 0, i + 1 == n);
        a[i] = poisson ? T(-1) : static_cast<T>(row.a);
        b[i] = poisson ? T(2) : static_cast<T>(row.b);
        c[i] = poisson ? T(-1) : static_cast<T>(row.c);
        d[i] = poisson ? static_cast<T>(2 * sol[i] - (i > 0 ? sol[i - 1] : 0) - (i + 1 < n ? sol[i + 1] : 0))
                       : static_cast<T>(r.symmetric());
      }
      a[0] = c[static_cast<std::size_t>(n - 1)] = std::numeric_limits<T>::quiet_NaN();  // never read
      for (tridiag_algorithm const alg : {tridiag_algorithm::automatic, tridiag_algorithm::bondeli})
        for (int const threads : {1, 2, 3, 7}) {
          if (huge && threads == 1) continue;
          std::string const what = fmt::format("{} host{{{}}} {} n={} {}", recur::to_string(alg), threads,
                                               poisson ? "Poisson" : "dominant", n, type_name<T>);
          recur::tridiag_options opt;
          std::int32_t info = -1;
          opt.info = &info;
          opt.algorithm = alg;
          recur::solve_batched(recur::host{threads}, a.data(), b.data(), c.data(), d.data(), x.data(), n,
                               opt);
          BOOST_TEST(info == 0, what);
          double const res = residual_eps(a, b, c, d, x);
          BOOST_TEST(res <= stable_residual_eps, what << ": relative residual " << res << " eps");
          BOOST_TEST_MESSAGE(what << ": relative residual " << res << " eps");
          if (!huge || threads == 7) {
            recur::solve_batched(recur::host{threads}, a.data(), b.data(), c.data(), d.data(), again.data(),
                                 n, opt);
            BOOST_TEST(same_bytes(x, again), what << ": a second run gives other bits");
          }
          cases.run();
        }
    }
  }
  cases.require(2 * 2 * 4 * 2);  // n = 10^5 and 2^20 + 1 always fit
}
BOOST_AUTO_TEST_CASE(large_systems_f32) { large_systems<float>(); }
BOOST_AUTO_TEST_CASE(large_systems_f64) { large_systems<double>(); }

BOOST_AUTO_TEST_SUITE_END()
