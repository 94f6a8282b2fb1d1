#pragma once
// Shared by test_tridiag_default_host.cpp (recur::host) and
// test_tridiag_default_cuda.cpp (recur::cuda): recur::solve_batched with the
// defaults, tridiag_options with only info set (pivoting = automatic, no
// pivoted or refinement_steps array, no refinement; periodic or a named
// algorithm where a case says so), at the shapes where each of the GPU's
// forms runs. A Backend is tridiag_pivot_harness.hpp's without the oracle
// (executor_type, executor(), name(), array<T>, finish()).
//
// The defaults never give an unscreened no-pivot answer for a system that
// fails automatic's stability test (include/recur/tridiag.hpp), whatever
// form solves it:
// - random_large: a, b and c uniform in [-1, 1] (matrix_class::random: none
//   of these systems is diagonally dominant, and at these lengths every one
//   fails the growth test), n = 10^5 and 2^20 + 1, one system and three,
//   contiguous and interleaved, in place and not. On the GPU: the
//   partitioned form (systems too long for one block).
// - random_periodic: the same rows with periodic = true, at the direct
//   form's exact lengths (16 .. 512 rows, contiguous: its one-pass Periodic
//   instances), odd lengths (1000, 4097) and long ones (10^5), one system
//   and batches of up to 4096, contiguous and interleaved (the split around
//   the other forms).
// - random_named: every tridiag_algorithm, periodic false, at batch shapes
//   its shared-memory tile runs (300 systems of 33 rows, 64 of 200) and at
//   the partitioned form's (three systems of 10^5; for thomas its
//   global-memory form, for bondeli its own form at any n).
// Each run is checked per system against pivoting = partial (algorithm
// automatic) on the same batch through the same backend:
// - info 0 where partial's is 0, > 0 where it is not (x all NaN there);
// - the normwise backward error
//     eta = ||A x - d||_inf / (||A||_inf ||x||_inf + ||d||_inf)
//   (backward_error, in long double, corners included) within ratio_bound
//   times partial's, or times floor_eps eps rho where that is larger, so
//   that two errors of a few eps do not fail on their ratio. rho is the
//   periodic split's amplification of its solves' errors (max(1, rho) of
//   reference/tridiag_periodic.hpp, in long double; 1 for plain systems):
//   automatic and partial solve periodic systems through the same split,
//   and both errors scale with it.
// Both backends keep a named algorithm's own solve only of dominant
// systems: Thomas's growth test bounds Thomas's backward error only (on
// non-dominant systems of 33 and 200 rows that pass it, pcr, cr_pcr,
// thomas_pcr, cr_split, rd and others reach 10^2 to 10^7 eps where partial
// gives 0.1 eps).
// The right-hand sides are d = A x for x with every |x_i| in [1/2, 1]
// (make_system_batch's from_solution): an unscreened no-pivot solve's error
// at a pivot near zero (about one row in n has |u_i| below 1 / n) then shows
// in the normwise residual wherever that row lies, eta about the growth
// times eps (10^3 to 10^5 times partial's at n = 10^5 and 2^20 + 1), or its
// pivots overflow (info > 0). With d uniform, x is large in a few rows only
// and such an error often hides in ||x||.
//
// The counterparts on diagonally dominant systems (dominant_large,
// dominant_named; periodic ones: tridiag_pivot_harness.hpp's
// periodic_split_sweep compares automatic without pivoted with none from 3
// to 10^5 + 3 rows): the growth test passes (gamma <= 2), so the defaults
// give pivoting = none's bits and info, in place and not. Where none breaks
// down (rd and cr_rd: RD's self check refuses dominant systems beyond a
// handful of rows), the defaults solve the system (info 0) within the bound
// above.
//
// Every run also leaves its inputs, the x buffer outside the systems and
// the outputs' guards alone (check_untouched; x starts poisoned where it is
// not d). Inputs from recur_test::seed_for; failures print the case and its
// seed, and each sweep logs its worst ratio to its bound.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <boost/test/unit_test.hpp>
#include <recur/tridiag.hpp>

#include "tridiag_pivot_harness.hpp"

namespace default_test {

using namespace pivot_test;

// eta of the defaults <= ratio_bound max(eta of partial, floor_eps eps rho).
inline constexpr double ratio_bound = 10;
inline constexpr double floor_eps = 4;

// The defaults, but for `alg` and `periodic` (run_options sets info, nrhs
// and rhs_stride; a case has one right-hand side and rhs_stride 0).
inline tridiag_options defaults(tridiag_algorithm alg = tridiag_algorithm::automatic, bool periodic = false) {
  tridiag_options o;
  o.algorithm = alg;
  o.periodic = periodic;
  return o;
}

// The largest eta / bound a sweep saw (1 is the bound), for its log line.
struct worst_ratio {
  double value = 0;
  std::string where;
  void add(double r, std::string const& what) {
    if (r > value) value = r, where = what;
  }
};

// The checks of the top of this file on the defaults' run `out` against
// partial's run `ref` of the same batch, for the systems k with only(k).
template <class T, class OnlyT>
void check_against_partial(problem<T> const& p, run_result<T> const& out, run_result<T> const& ref,
                           bool periodic, OnlyT&& only, failures& f, worst_ratio& worst,
                           std::string const& what) {
  constexpr std::int64_t g = problem<T>::guard;
  double const eps = std::numeric_limits<T>::epsilon();
  std::int64_t const n = p.lay.n;
  for (std::int64_t k = 0; k < p.lay.count; ++k) {
    if (!only(k)) continue;
    std::int32_t const info = out.info[g + k], want = ref.info[g + k];
    auto const x = [&](std::int64_t i) { return out.x[p.vi(i, k, 0)]; };
    if (info < 0 || info > n || (info == 0) != (want == 0)) {
      f.add([&] { return fmt::format("system {}: info {} where partial's is {}", k, info, want); });
      continue;
    }
    if (info != 0) {
      bool nan = true;
      for (std::int64_t i = 0; i < n; ++i) nan = nan && std::isnan(x(i)) && !is_poison(x(i));
      if (!nan) f.add([&] { return fmt::format("system {} (info {}): x not all NaN", k, info); });
      continue;
    }
    system_values<T> const s = values(p, k, periodic);
    std::vector<T> const d = rhs_values(p, k, 0);
    double const eta = backward_error(s, x, d);
    double const eta_p = backward_error(
        s, [&](std::int64_t i) { return ref.x[p.vi(i, k, 0)]; }, d);
    if (eta_p < 0) {
      f.add([&] { return fmt::format("system {}: partial's x is not finite (info 0)", k); });
      continue;
    }
    double const rho = periodic ? std::max(1.0, static_cast<double>(amplification(s, d))) : 1.0;
    double const base = std::max(eta_p, floor_eps * eps * rho);
    if (eta >= 0) worst.add(eta / (ratio_bound * base), fmt::format("{} system {}", what, k));
    if (!(eta >= 0 && eta <= ratio_bound * base))
      f.add([&] {
        return fmt::format(
            "system {}: backward error {:.3g} eps{}, partial's {:.3g} eps, bound {:.3g} eps (rho {:.3g})", k,
            eta / eps, eta < 0 ? " (x not finite)" : "", eta_p / eps, ratio_bound * base / eps, rho);
      });
  }
}

// pivoting = partial (algorithm automatic) on p, not in place, without
// pivoted: the reference run.
template <class Backend, class T>
run_result<T> partial_run(problem<T> const& p, tridiag_options opt) {
  opt.algorithm = tridiag_algorithm::automatic;
  opt.pivoting = tridiag_pivoting::partial;
  return run_options<Backend>(p, opt, false, false);
}

// One run of `opt` (the defaults but for algorithm and periodic) on p,
// checked against partial's run.
template <class Backend, class T>
void default_like_partial(problem<T> const& p, tridiag_options const& opt, bool in_place,
                          std::string const& what, worst_ratio& worst) {
  auto const out = run_options<Backend>(p, opt, in_place, false);
  auto const ref = partial_run<Backend>(p, opt);
  BOOST_TEST_REQUIRE(!out.refused, what << ": " << out.what);
  BOOST_TEST_REQUIRE(!ref.refused, what << " (partial): " << ref.what);
  failures f;
  check_untouched(p, out, f);
  check_against_partial(
      p, out, ref, opt.periodic, [](std::int64_t) { return true; }, f, worst, what);
  BOOST_TEST(f.count == 0, what << "\n" << f.report());
}

// One run of `opt` on a dominant batch p: pivoting = none's bits and info
// (the same call but for pivoting), or, where none breaks down, the checks
// against partial's run. Returns the systems none broke down on.
template <class Backend, class T>
std::int64_t default_like_none(problem<T> const& p, tridiag_options const& opt, bool in_place,
                               std::string const& what, worst_ratio& worst) {
  constexpr std::int64_t g = problem<T>::guard;
  tridiag_options none = opt;
  none.pivoting = tridiag_pivoting::none;
  auto const out = run_options<Backend>(p, opt, in_place, false);
  auto const ref = run_options<Backend>(p, none, in_place, false);
  BOOST_TEST_REQUIRE(!out.refused, what << ": " << out.what);
  BOOST_TEST_REQUIRE(!ref.refused, what << " (none): " << ref.what);
  auto const same = [&](run_result<T> const& r, std::int64_t k) {
    bool s = r.info[g + k] == out.info[g + k];
    for (std::int64_t i = 0; i < p.lay.n && s; ++i)
      s = recur_test::same_bits(r.x[p.vi(i, k, 0)], out.x[p.vi(i, k, 0)]);
    return s;
  };
  failures f;
  check_untouched(p, out, f);
  std::int64_t broke = 0;
  for (std::int64_t k = 0; k < p.lay.count; ++k) {
    if (ref.info[g + k] != 0) {
      ++broke;
      continue;
    }
    if (!same(ref, k))
      f.add([&] {
        return fmt::format("system {}: the defaults (info {}) are not none's bits (info {})", k,
                           out.info[g + k], ref.info[g + k]);
      });
  }
  if (broke > 0) {
    auto const part = partial_run<Backend>(p, opt);
    BOOST_TEST_REQUIRE(!part.refused, what << " (partial): " << part.what);
    check_against_partial(
        p, out, part, opt.periodic, [&](std::int64_t k) { return ref.info[g + k] != 0; }, f, worst, what);
  }
  BOOST_TEST(f.count == 0, what << "\n" << f.report());
  return broke;
}

// --------------------------------------------------------------- shapes ---

struct large_shape {
  std::int64_t n, count;
  layout_kind kind;
  bool in_place;
};

// One system and three of 10^5 and 2^20 + 1 rows. One interleaved system is
// laid out as a contiguous one, so only the batches of three are interleaved.
inline constexpr std::int64_t huge_n = (std::int64_t(1) << 20) + 1;
inline constexpr large_shape large_shapes[] = {
    {100000, 1, layout_kind::contiguous, false},  {100000, 1, layout_kind::contiguous, true},
    {100000, 3, layout_kind::contiguous, false},  {100000, 3, layout_kind::contiguous, true},
    {100000, 3, layout_kind::interleaved, false}, {100000, 3, layout_kind::interleaved, true},
    {huge_n, 1, layout_kind::contiguous, false},  {huge_n, 1, layout_kind::contiguous, true},
    {huge_n, 3, layout_kind::contiguous, true},   {huge_n, 3, layout_kind::interleaved, false},
};

struct batch_shape {
  std::int64_t n, count;
};

// Periodic: the direct form's exact lengths (f32: 32 .. 512 rows, f64:
// 16 .. 256; one segment of lanes a system), odd ones and long ones.
inline constexpr batch_shape periodic_shapes[] = {
    {16, 1},    {16, 4096}, {32, 4096}, {64, 1},   {64, 4096}, {128, 1000}, {256, 3},    {256, 1000},
    {512, 300}, {1000, 1},  {1000, 37}, {4097, 1}, {4097, 3},  {100000, 1}, {100000, 3},
};

// The named algorithms: their shared-memory tiles, then the partitioned
// form (n past every tile).
inline constexpr batch_shape named_shapes[] = {{33, 300}, {200, 64}, {100000, 3}};

inline constexpr layout_kind dense_kinds[] = {layout_kind::contiguous, layout_kind::interleaved};

// ---------------------------------------------------------------- cases ---

template <class Backend, class T>
void random_large() {
  recur_test::case_count cases(
      fmt::format("{} {} defaults on random large systems", Backend::name(), type_name<T>));
  worst_ratio worst;
  int idx = 0;
  for (large_shape const sh : large_shapes) {
    layout const lay = make_layout(sh.kind, sh.n, sh.count);
    std::uint64_t const seed = seed_for(700, static_cast<std::uint64_t>(idx++), sizeof(T));
    auto const p = make_system_batch<T>(lay, 1, 0, matrix_class::random, false, seed, true);
    tridiag_options const opt = defaults();
    std::string const what =
        describe(Backend::name(), opt, type_name<T>, matrix_class::random, lay, 1, 0, sh.in_place, seed);
    cases.run();
    default_like_partial<Backend>(p, opt, sh.in_place, what, worst);
  }
  cases.require(std::size(large_shapes));
  BOOST_TEST_MESSAGE(cases.what << ": worst " << worst.value << " of the bound (" << worst.where << ")");
}

template <class Backend, class T>
void random_periodic() {
  recur_test::case_count cases(
      fmt::format("{} {} defaults on random periodic systems", Backend::name(), type_name<T>));
  worst_ratio worst;
  int idx = 0;
  for (batch_shape const sh : periodic_shapes)
    for (layout_kind const kind : dense_kinds) {
      layout const lay = make_layout(kind, sh.n, sh.count);
      int const rot = idx++;
      bool const in_place = (rot + rot / 2) % 2 == 1;  // both for each layout kind
      std::uint64_t const seed = seed_for(710, static_cast<std::uint64_t>(rot), sizeof(T));
      auto const p = make_system_batch<T>(lay, 1, 0, matrix_class::random, true, seed, true);
      tridiag_options const opt = defaults(tridiag_algorithm::automatic, true);
      std::string const what =
          describe(Backend::name(), opt, type_name<T>, matrix_class::random, lay, 1, 0, in_place, seed);
      cases.run();
      default_like_partial<Backend>(p, opt, in_place, what, worst);
    }
  cases.require(2 * std::size(periodic_shapes));
  BOOST_TEST_MESSAGE(cases.what << ": worst " << worst.value << " of the bound (" << worst.where << ")");
}

// Every algorithm at named_shapes in both dense layout kinds (dominant:
// matrix_class::dominant, the counterpart), in place and not in turn.
template <class Backend, class T>
void named_sweep(bool dominant) {
  matrix_class const cls = dominant ? matrix_class::dominant : matrix_class::random;
  recur_test::case_count cases(fmt::format("{} {} defaults of every algorithm on {} systems", Backend::name(),
                                           type_name<T>, name(cls)));
  worst_ratio worst;
  std::int64_t broke = 0;
  int idx = 0;
  for (tridiag_algorithm const alg : recur::tridiag_algorithms)
    for (batch_shape const sh : named_shapes)
      for (layout_kind const kind : dense_kinds) {
        layout const lay = make_layout(kind, sh.n, sh.count);
        int const rot = idx++;
        if (auto const why = tridiag_test::unsupported<T, Backend>(alg, lay)) {
          cases.skip(*why);
          continue;
        }
        bool const in_place = (rot + rot / 2) % 2 == 1;
        std::uint64_t const seed = seed_for(720 + dominant, static_cast<std::uint64_t>(rot), sizeof(T));
        auto const p = make_system_batch<T>(lay, 1, 0, cls, false, seed, true);
        tridiag_options const opt = defaults(alg);
        std::string const what = describe(Backend::name(), opt, type_name<T>, cls, lay, 1, 0, in_place, seed);
        cases.run();
        if (dominant)
          broke += default_like_none<Backend>(p, opt, in_place, what, worst);
        else
          default_like_partial<Backend>(p, opt, in_place, what, worst);
      }
  cases.require(std::size(recur::tridiag_algorithms) * std::size(named_shapes) * std::size(dense_kinds));
  BOOST_TEST_MESSAGE(cases.what << ": worst " << worst.value << " of the bound (" << worst.where << ")"
                                << (dominant ? fmt::format("; {} systems that none refuses", broke) : ""));
}

template <class Backend, class T>
void random_named() {
  named_sweep<Backend, T>(false);
}

template <class Backend, class T>
void dominant_named() {
  named_sweep<Backend, T>(true);
}

template <class Backend, class T>
void dominant_large() {
  recur_test::case_count cases(
      fmt::format("{} {} defaults on dominant large systems", Backend::name(), type_name<T>));
  worst_ratio worst;
  int idx = 0;
  for (large_shape const sh : large_shapes) {
    layout const lay = make_layout(sh.kind, sh.n, sh.count);
    std::uint64_t const seed = seed_for(730, static_cast<std::uint64_t>(idx++), sizeof(T));
    auto const p = make_system_batch<T>(lay, 1, 0, matrix_class::dominant, false, seed, true);
    tridiag_options const opt = defaults();
    std::string const what =
        describe(Backend::name(), opt, type_name<T>, matrix_class::dominant, lay, 1, 0, sh.in_place, seed);
    cases.run();
    std::int64_t const broke = default_like_none<Backend>(p, opt, sh.in_place, what, worst);
    BOOST_TEST(broke == 0, what << ": none broke down on " << broke << " systems");
  }
  cases.require(std::size(large_shapes));
}

}  // namespace default_test

// The cases of this file for Backend, one test case per sweep and type.
#define RECUR_TRIDIAG_DEFAULT_CASES(Backend)                                                      \
  BOOST_AUTO_TEST_CASE(random_large_f32) { default_test::random_large<Backend, float>(); }        \
  BOOST_AUTO_TEST_CASE(random_large_f64) { default_test::random_large<Backend, double>(); }       \
  BOOST_AUTO_TEST_CASE(random_periodic_f32) { default_test::random_periodic<Backend, float>(); }  \
  BOOST_AUTO_TEST_CASE(random_periodic_f64) { default_test::random_periodic<Backend, double>(); } \
  BOOST_AUTO_TEST_CASE(random_named_f32) { default_test::random_named<Backend, float>(); }        \
  BOOST_AUTO_TEST_CASE(random_named_f64) { default_test::random_named<Backend, double>(); }       \
  BOOST_AUTO_TEST_CASE(dominant_large_f32) { default_test::dominant_large<Backend, float>(); }    \
  BOOST_AUTO_TEST_CASE(dominant_large_f64) { default_test::dominant_large<Backend, double>(); }   \
  BOOST_AUTO_TEST_CASE(dominant_named_f32) { default_test::dominant_named<Backend, float>(); }    \
  BOOST_AUTO_TEST_CASE(dominant_named_f64) { default_test::dominant_named<Backend, double>(); }
