// recur::solve_batched's pivoting, periodic and refinement options through
// recur::host: the shared cases of tridiag_pivot_harness.hpp with LAPACK as
// the oracle (?gtsv in the systems' type for plain systems; ?gesv in double
// on the dense matrix for periodic ones up to n = 300, the reference in long
// double beyond), plus what only the host has: the thread count changes no
// bit, the backend gives reference::solve_batched's bits, and the growth
// constants of the matrix classes the tests draw.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include <boost/test/unit_test.hpp>
#include <recur/reference/tridiag_solve.hpp>
#include <recur/tridiag.hpp>

#include "common/host_memory.hpp"
#include "common/tridiag_pivot_harness.hpp"

extern "C" void sgtsv_(int* n, int* nrhs, float* dl, float* d, float* du, float* b, int* ldb, int* info);
extern "C" void dgtsv_(int* n, int* nrhs, double* dl, double* d, double* du, double* b, int* ldb, int* info);
extern "C" void dgesv_(int* n, int* nrhs, double* a, int* lda, int* ipiv, double* b, int* ldb, int* info);

using namespace pivot_test;

namespace {

struct host_backend : recur_test::host_memory {
  static char const* name() { return "host"; }
  template <class T>
  static oracle_solution oracle(system_values<T> const& s, std::vector<T> const& d) {
    int n = static_cast<int>(d.size()), one = 1, info = 0;
    oracle_solution o;
    if (!s.periodic) {  // ?gtsv, partial pivoting
      std::vector<T> dl(n > 1 ? n - 1 : 1), dg = s.b, du(n > 1 ? n - 1 : 1), x = d;
      for (int i = 0; i + 1 < n; ++i) dl[i] = s.a[i + 1], du[i] = s.c[i];
      if constexpr (std::is_same_v<T, float>)
        sgtsv_(&n, &one, dl.data(), dg.data(), du.data(), x.data(), &n, &info);
      else
        dgtsv_(&n, &one, dl.data(), dg.data(), du.data(), x.data(), &n, &info);
      o.x.assign(x.begin(), x.end());
      o.info = info;
      return o;
    }
    if (n > 300) return long_double_solution(s, d);
    // ?gesv on the dense matrix, in double.
    std::vector<double> m(static_cast<std::size_t>(n) * n, 0.0), x(d.begin(), d.end());
    std::vector<int> ipiv(n);
    auto at = [&](int i, int j) -> double& {
      return m[static_cast<std::size_t>(j) * n + i];
    };  // column major
    for (int i = 0; i < n; ++i) {
      at(i, (i + n - 1) % n) += s.a[i];
      at(i, i) += s.b[i];
      at(i, (i + 1) % n) += s.c[i];
    }
    dgesv_(&n, &one, m.data(), &n, ipiv.data(), x.data(), &n, &info);
    o.x.assign(x.begin(), x.end());
    o.info = info;
    return o;
  }
  static constexpr bool automatic_tests_growth = true;
  static constexpr bool unscreened_in_place_is_thomas = false;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(tridiag_pivot_host)

BOOST_AUTO_TEST_CASE(partial_f32) { pivot_sweep<host_backend, float>(tridiag_pivoting::partial, false); }
BOOST_AUTO_TEST_CASE(partial_f64) { pivot_sweep<host_backend, double>(tridiag_pivoting::partial, false); }
BOOST_AUTO_TEST_CASE(automatic_f32) { pivot_sweep<host_backend, float>(tridiag_pivoting::automatic, false); }
BOOST_AUTO_TEST_CASE(automatic_f64) { pivot_sweep<host_backend, double>(tridiag_pivoting::automatic, false); }
BOOST_AUTO_TEST_CASE(periodic_partial_f32) {
  pivot_sweep<host_backend, float>(tridiag_pivoting::partial, true);
}
// The GPU's periodic_split_* and periodic_breakdown_* cases on the host.
BOOST_AUTO_TEST_CASE(periodic_split_f32) { periodic_split_sweep<host_backend, float>(); }
BOOST_AUTO_TEST_CASE(periodic_split_f64) { periodic_split_sweep<host_backend, double>(); }
BOOST_AUTO_TEST_CASE(periodic_breakdown_f32) { periodic_breakdown<host_backend, float>(); }
BOOST_AUTO_TEST_CASE(periodic_breakdown_f64) { periodic_breakdown<host_backend, double>(); }
BOOST_AUTO_TEST_CASE(periodic_zero_b0_f32) { periodic_zero_b0<host_backend, float>(); }
BOOST_AUTO_TEST_CASE(periodic_zero_b0_f64) { periodic_zero_b0<host_backend, double>(); }
BOOST_AUTO_TEST_CASE(periodic_partial_f64) {
  pivot_sweep<host_backend, double>(tridiag_pivoting::partial, true);
}
BOOST_AUTO_TEST_CASE(periodic_automatic_f32) {
  pivot_sweep<host_backend, float>(tridiag_pivoting::automatic, true);
}
BOOST_AUTO_TEST_CASE(periodic_automatic_f64) {
  pivot_sweep<host_backend, double>(tridiag_pivoting::automatic, true);
}
BOOST_AUTO_TEST_CASE(periodic_none_dominant) {
  pivot_sweep<host_backend, float>(tridiag_pivoting::none, true, true);
  pivot_sweep<host_backend, double>(tridiag_pivoting::none, true, true);
}

BOOST_AUTO_TEST_CASE(automatic_matches_none_every_algorithm) {
  for (recur::tridiag_algorithm const alg : tridiag_test::all_algorithms) {
    automatic_matches_none<host_backend, float>(alg);
    automatic_matches_none<host_backend, double>(alg);
  }
}

BOOST_AUTO_TEST_CASE(tiny_pivot_f32) { tiny_pivot<host_backend, float>(); }
BOOST_AUTO_TEST_CASE(tiny_pivot_f64) { tiny_pivot<host_backend, double>(); }

BOOST_AUTO_TEST_CASE(refinement) { refinement_sweep<host_backend>(); }
BOOST_AUTO_TEST_CASE(refinement_gives_up) { refinement_limits<host_backend>(); }

BOOST_AUTO_TEST_CASE(option_errors_f32) { option_errors<host_backend, float>(); }
BOOST_AUTO_TEST_CASE(option_errors_f64) { option_errors<host_backend, double>(); }
BOOST_AUTO_TEST_CASE(empty_outputs_f32) { empty_outputs<host_backend, float>(); }
BOOST_AUTO_TEST_CASE(empty_outputs_f64) { empty_outputs<host_backend, double>(); }

// The options' runs: the same bits on 1 thread and on several (systems go
// to threads whole), and the bits of reference::solve_batched (the batched
// Thomas with the growth test mirrors the reference's factorisation).
template <class T>
void options_bits() {
  constexpr std::int64_t g = problem<T>::guard;
  struct variant {
    tridiag_pivoting pivoting;
    bool periodic;
    bool refine;
    tridiag_algorithm algorithm;
  };
  std::vector<variant> variants = {{tridiag_pivoting::automatic, false, false, tridiag_algorithm::automatic},
                                   {tridiag_pivoting::partial, false, false, tridiag_algorithm::thomas},
                                   {tridiag_pivoting::automatic, true, false, tridiag_algorithm::automatic},
                                   {tridiag_pivoting::none, true, false, tridiag_algorithm::thomas},
                                   {tridiag_pivoting::automatic, false, false, tridiag_algorithm::cr}};
  if constexpr (std::is_same_v<T, double>)
    variants.push_back({tridiag_pivoting::automatic, true, true, tridiag_algorithm::automatic});
  int idx = 0;
  for (variant const& v : variants)
    for (layout const& lay : {layout::contiguous(127, 37), layout::interleaved(200, 37),
                              make_layout(layout_kind::strided_gaps, 33, 5)}) {
      auto const p = make_system_batch<T>(
          lay, 2, 0,
          v.pivoting == tridiag_pivoting::none ? matrix_class::dominant : matrix_class::tiny_middle,
          v.periodic, seed_for(670, static_cast<std::uint64_t>(idx++), sizeof(T)));
      tridiag_options opt;
      opt.pivoting = v.pivoting;
      opt.periodic = v.periodic;
      opt.algorithm = v.algorithm;
      if (v.refine) opt.refinement = tridiag_refinement::mixed;
      std::string const what =
          describe("host", opt, type_name<T>, matrix_class::tiny_middle, lay, 2, 0, false, 0);
      auto const one = run_options<host_backend>(p, opt, false, true, recur::host{1});
      BOOST_TEST_REQUIRE(!one.refused, one.what);
      for (int const threads : {0, 3}) {
        auto const many = run_options<host_backend>(p, opt, false, true, recur::host{threads});
        BOOST_TEST((same_bytes(many.x, one.x) && many.info == one.info && many.pivoted == one.pivoted &&
                    many.steps == one.steps),
                   what << ": host{" << threads << "} differs from host{1}");
      }
      if (v.algorithm == tridiag_algorithm::cr) continue;  // the reference solves by Thomas
      std::vector<T> x = p.d;
      std::vector<std::int32_t> info(lay.count), piv(lay.count), steps(lay.count);
      tridiag_options ro = opt;
      ro.nrhs = 2;
      ro.info = info.data();
      ro.pivoted = piv.data();
      ro.refinement_steps = steps.data();
      recur::reference::solve_batched(p.a.data() + g, p.b.data() + g, p.c.data() + g, x.data() + p.d_base,
                                      x.data() + p.d_base, lay, ro);
      bool same = true;
      for (std::int64_t k = 0; k < lay.count; ++k) {
        same = same && info[k] == one.info[g + k] && piv[k] == one.pivoted[g + k] &&
               steps[k] == one.steps[g + k];
        for (std::int64_t r = 0; r < 2; ++r)
          for (std::int64_t i = 0; i < lay.n; ++i)
            same = same && recur_test::same_bits(x[p.vi(i, k, r)], one.x[p.vi(i, k, r)]);
      }
      BOOST_TEST(same, what << ": the host's bits are not reference::solve_batched's");
    }
}
BOOST_AUTO_TEST_CASE(options_bits_f32) { options_bits<float>(); }
BOOST_AUTO_TEST_CASE(options_bits_f64) { options_bits<double>(); }

// gamma, the no-pivot LU's growth (reference/tridiag_pivot.hpp), on the
// matrix classes: at most 2 for rows diagonally dominant (the tests'
// dominant rows, and weakly dominant ones with |b| = |a| + |c| + 1e-3 U),
// at most 1 (up to rounding) for symmetric positive definite B^T B with B
// bidiagonal and well conditioned. Zhang's close-values rows and random
// rows grow: the log reports how many pass the bound of 16 (--log_level=message).
BOOST_AUTO_TEST_CASE(growth_constants) {
  rng r(seed_for(680));
  std::int64_t close_pass = 0, random_pass = 0, total = 0;
  double dominant = 0, weak = 0, spd = 0, close_max = 0;
  for (int t = 0; t < 600; ++t) {
    std::int64_t const n = std::int64_t{1} << (t % 10);  // 1 .. 512
    rd::equations<double> e{std::vector<double>(n), std::vector<double>(n), std::vector<double>(n), {}};
    rd::tridiag_lu<double> f;
    auto const growth = [&] {
      return rd::factor_thomas(e, f) == 0 ? f.growth() : std::numeric_limits<double>::infinity();
    };
    for (bool const weakly : {false, true}) {
      for (std::int64_t i = 0; i < n; ++i) {
        auto const row = recur_test::dominant_row(r, i == 0, i + 1 == n);
        e.a[i] = i > 0 ? row.a : 0, e.c[i] = i + 1 < n ? row.c : 0;
        double const m =
            std::fabs(e.a[i]) + std::fabs(e.c[i]) + (weakly ? 1e-3 * r.uniform() : 1 + r.uniform());
        e.b[i] = row.b < 0 ? -m : m;
      }
      (weakly ? weak : dominant) = std::max(weakly ? weak : dominant, growth());
    }
    // B bidiagonal, diagonal in [1, 2), superdiagonal in [-1/2, 1/2): kappa(B^T B) <= 9.
    std::vector<double> beta(n), up(n);
    for (std::int64_t i = 0; i < n; ++i) beta[i] = 1 + r.uniform(), up[i] = 0.5 * r.symmetric();
    for (std::int64_t i = 0; i < n; ++i) {
      e.b[i] = beta[i] * beta[i] + (i > 0 ? up[i - 1] * up[i - 1] : 0);
      e.c[i] = i + 1 < n ? beta[i] * up[i] : 0;
      e.a[i] = i > 0 ? e.c[i - 1] : 0;
    }
    spd = std::max(spd, growth());
    ++total;
    for (std::int64_t i = 0; i < n; ++i) {
      auto const row = recur_test::close_values_row(r);
      e.a[i] = i > 0 ? row.a : 0, e.b[i] = row.b, e.c[i] = i + 1 < n ? row.c : 0;
    }
    double const gc = growth();
    close_pass += gc <= 16;
    if (std::isfinite(gc)) close_max = std::max(close_max, gc);
    for (std::int64_t i = 0; i < n; ++i)
      e.a[i] = i > 0 ? r.symmetric() : 0, e.b[i] = r.symmetric(), e.c[i] = i + 1 < n ? r.symmetric() : 0;
    random_pass += growth() <= 16;
  }
  BOOST_TEST(dominant <= 2);
  BOOST_TEST(weak <= 2);
  BOOST_TEST(spd <= 1 + 1e-12);
  BOOST_TEST_MESSAGE("gamma: dominant rows " << dominant << ", weakly dominant " << weak << ", SPD " << spd
                                             << "; close values pass " << close_pass << " of " << total
                                             << " (largest finite " << close_max << "), random rows pass "
                                             << random_pass << " of " << total);
}

// One long system split over the threads (fewer systems than threads,
// n >= 2^15: lib/cpu/tridiag_split.hpp). Under pivoting = automatic the
// split methods test their growth: systems with a tiny first or middle
// pivot (the middle row is block 0's interface row on 2 threads, inside
// block 1 on 3) are solved again pivoted (pivoted = 1), in place too;
// dominant ones are not (pivoted = 0, the bits of pivoting = none).
// Periodic systems and partial pivoting under algorithm automatic run
// Thomas per system instead of the split: the bits of host{1}.
template <class T>
void split_options() {
  constexpr std::int64_t split_n = (std::int64_t{1} << 15) + 5;
  int idx = 0;
  for (int const threads : {2, 3})
    for (tridiag_algorithm const alg : {tridiag_algorithm::automatic, tridiag_algorithm::bondeli})
      for (matrix_class const cls :
           {matrix_class::dominant, matrix_class::tiny_first, matrix_class::tiny_middle})
        for (bool const in_place : {false, true}) {
          layout const lay = layout::contiguous(split_n, threads - 1);
          std::uint64_t const seed = seed_for(671, static_cast<std::uint64_t>(idx++), sizeof(T));
          auto const p = make_system_batch<T>(lay, 2, 0, cls, false, seed);
          tridiag_options opt;
          opt.algorithm = alg;
          std::string const what = describe("host{" + std::to_string(threads) + "}", opt, type_name<T>, cls,
                                            lay, 2, 0, in_place, seed);
          auto const out = run_options<host_backend>(p, opt, in_place, true, recur::host{threads});
          // The tiny middle pivot on 2 threads is the partition method's
          // interface row, which it eliminates last, where it is no pivot:
          // re-solving is then its choice; the accuracy checks hold either way.
          bool const interface_row =
              cls == matrix_class::tiny_middle && threads == 2 && alg == tridiag_algorithm::automatic;
          int const pivoted = cls == matrix_class::dominant ? 0 : interface_row ? -1 : 1;
          // The residual checks of check_outputs (its oracle comparison needs
          // kappa, O(n^2) here), then the forward error against ?gtsv: these
          // matrices are well conditioned (kappa ~ 30), and the no-pivot
          // solve of the tiny pivots is off by 1e-3 or more.
          std::string const msg = check_outputs(
              p, out, opt,
              [&](std::int64_t) {
                return expected_system{0, pivoted, false};
              },
              [&](std::int64_t, std::int64_t) { return oracle_solution{}; });
          BOOST_TEST(msg.empty(), what << "\n" << msg);
          double worst = 0;
          for (std::int64_t k = 0; k < lay.count; ++k)
            for (std::int64_t r = 0; r < p.nrhs; ++r) {
              oracle_solution const o = host_backend::oracle(values(p, k, false), rhs_values(p, k, r));
              long double err = 0, xn = 0;
              for (std::int64_t i = 0; i < lay.n; ++i)
                err = std::max(err, std::fabs(static_cast<long double>(out.x[p.vi(i, k, r)]) - o.x[i])),
                xn = std::max(xn, std::fabs(o.x[i]));
              worst = std::max(worst, static_cast<double>(err / xn));
            }
          BOOST_TEST(worst <= 2000 * std::numeric_limits<T>::epsilon(),
                     what << ": forward error " << worst << " against ?gtsv");
          if (cls == matrix_class::dominant) {
            tridiag_options none = opt;
            none.pivoting = tridiag_pivoting::none;
            auto const plain = run_options<host_backend>(p, none, in_place, true, recur::host{threads});
            BOOST_TEST(same_bytes(plain.x, out.x), what << ": automatic's bits are not none's");
          }
        }
  for (int const threads : {2, 3})
    for (int const variant : {0, 1, 2}) {
      bool const periodic = variant == 0, refine = variant == 2;
      if (refine && !std::is_same_v<T, double>) continue;
      layout const lay = layout::contiguous(split_n, threads - 1);
      auto const p = make_system_batch<T>(lay, 1, 0, matrix_class::tiny_middle, periodic,
                                          seed_for(672, static_cast<std::uint64_t>(idx++), sizeof(T)));
      tridiag_options opt;
      opt.periodic = periodic;
      opt.pivoting = variant == 1 ? tridiag_pivoting::partial : tridiag_pivoting::automatic;
      if (refine) opt.refinement = tridiag_refinement::mixed;
      std::string const what = describe("host{" + std::to_string(threads) + "}", opt, type_name<T>,
                                        matrix_class::tiny_middle, lay, 1, 0, false, 0);
      auto const many = run_options<host_backend>(p, opt, false, true, recur::host{threads});
      auto const one = run_options<host_backend>(p, opt, false, true, recur::host{1});
      BOOST_TEST_REQUIRE(!one.refused, one.what);
      BOOST_TEST((!many.refused && same_bytes(many.x, one.x) && many.info == one.info &&
                  many.pivoted == one.pivoted && many.steps == one.steps),
                 what << ": differs from host{1} (Thomas per system)");
    }
}
BOOST_AUTO_TEST_CASE(split_options_f32) { split_options<float>(); }
BOOST_AUTO_TEST_CASE(split_options_f64) { split_options<double>(); }

BOOST_AUTO_TEST_SUITE_END()
