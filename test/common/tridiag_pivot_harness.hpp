#pragma once
// Shared by the suites of tridiag_options' pivoting, periodic and refinement
// options: test_tridiag_pivot_host.cpp runs them through recur::host with
// LAPACK (?gtsv, ?gesv) as the oracle, test_tridiag_pivot_cuda.cpp through
// recur::cuda with the references in long double. A Backend is
// tridiag_harness.hpp's (executor_type, executor(), name(), array<T>,
// finish()) without oracle and must_run, plus:
//
//   // An independent solution of one system (a[0] and c[n-1] zero unless
//   // periodic) for one right-hand side, and its breakdown row (0: solved).
//   template <class T> static oracle_solution oracle(system_values<T> const&, std::vector<T> const& d);
//   // Whether pivoting = automatic runs its stability test (else it is
//   // pivoting = none, bit for bit), with the outputs pivoted or
//   // refinement_steps requested.
//   static constexpr bool automatic_tests_growth;
//   // Whether automatic in place (x == d) with rd or cr_rd and several
//   // right-hand sides runs the Thomas algorithm (the GPU: its pivoted
//   // form, one system per thread, whose stability test is a Thomas; their
//   // breakdown depends on the right-hand side, so their forms cannot
//   // screen as they solve), so that its bits are those of pivoting = none
//   // with algorithm thomas.
//   static constexpr bool unscreened_in_place_is_thomas;
//
// Every case poisons x, info, pivoted and refinement_steps (with guards) and
// checks that every output of every system is written and nothing else, that
// the inputs are not, and per system:
// - info: the oracle's (LAPACK's info for ?gtsv, which the pivoted Thomas
//   reproduces), > 0 for the singular matrices; x all NaN where info > 0;
// - pivoted: 1 for partial; for automatic what the growth test decides
//   (reference::detail::factor_system), and 0 on every diagonally dominant
//   system; refinement_steps 0 without refinement;
// - info 0: the relative residual ||A x - d|| / (||A|| ||x||) (in long
//   double, corners included) <= 4 n eps rho, and on a sample of systems
//   the forward error against the oracle ||x - x_o|| / ||x_o|| <= 4 n eps
//   rho kappa(A), kappa in long double (compared where kappa eps < 1/100).
//   rho is 1 for plain systems; for periodic ones the Sherman-Morrison
//   split's amplification of its solves' errors (max(1, rho) of
//   reference/tridiag_periodic.hpp, in long double).
//
// Matrix kinds (matrix_class): Zhang et al.'s two test classes (diagonally
// dominant rows and random rows with close values), random rows, a tiny first
// pivot and a tiny middle one (b_0 = 1e-14, c_0 = a_1 = 1, the rest
// dominant), a near-singular matrix (a column scaled to 1e-8 in
// double, 1e-3 in float) and a singular one (a zero column: LAPACK's info is
// its row). Inputs from recur_test::seed_for; failures print the case.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <boost/test/unit_test.hpp>
#include <recur/error.hpp>
#include <recur/reference/tridiag_solve.hpp>
#include <recur/tridiag.hpp>

#include "cases.hpp"
#include "layouts.hpp"
#include "poison.hpp"
#include "random.hpp"
#include "tridiag_harness.hpp"

namespace pivot_test {

using recur::layout;
using recur::tridiag_algorithm;
using recur::tridiag_options;
using recur::tridiag_pivoting;
using recur::tridiag_refinement;
using recur_test::all_layout_kinds;
using recur_test::is_poison;
using recur_test::layout_kind;
using recur_test::make_layout;
using recur_test::poison;
using recur_test::rng;
using recur_test::same_bytes;
using recur_test::seed_for;
using recur_test::type_name;
using tridiag_test::failures;
using tridiag_test::info_poison;
using tridiag_test::problem;

namespace rd = recur::reference::detail;

// ---------------------------------------------------------------- systems ---

enum class matrix_class { dominant, close_values, random, tiny_first, tiny_middle, near_singular, singular };

inline char const* name(matrix_class m) {
  switch (m) {
    case matrix_class::dominant:
      return "dominant";
    case matrix_class::close_values:
      return "close_values";
    case matrix_class::random:
      return "random";
    case matrix_class::tiny_first:
      return "tiny_first";
    case matrix_class::tiny_middle:
      return "tiny_middle";
    case matrix_class::near_singular:
      return "near_singular";
    case matrix_class::singular:
      return "singular";
  }
  return "?";
}

// One system's coefficients, a[0] and c[n-1] zero unless periodic.
template <class T>
struct system_values {
  std::vector<T> a, b, c;
  bool periodic = false;
  rd::equations<T> equations() const { return {a, b, c, {}}; }
};

// Every row diagonally dominant, |b_i| >= |a_i| + |c_i| (plain systems).
template <class T>
bool rows_dominant(system_values<T> const& s) {
  for (std::size_t i = 0; i < s.b.size(); ++i) {
    T const a = i > 0 ? s.a[i] : T(0), c = i + 1 < s.b.size() ? s.c[i] : T(0);
    if (!(std::fabs(s.b[i]) >= std::fabs(a) + std::fabs(c))) return false;
  }
  return true;
}

struct oracle_solution {
  std::vector<long double> x;
  int info = 0;
};

// The column whose entries near_singular and singular scale, the row
// tiny_middle's tiny pivot is on.
inline std::int64_t middle(std::int64_t n) { return n / 2; }

// A batch of `cls` systems (the corners filled when periodic, NaN otherwise)
// with right-hand sides uniform in [-1, 1), or, from_solution, d = A x
// (in long double, then rounded) for x with every |x_i| in [1/2, 1]
// (recur_test::solution_value): x then spreads over every row, so an error
// that a row's pivot makes shows in the normwise residual wherever the row
// lies, where with d uniform x may be large in a few rows only.
template <class T>
problem<T> make_system_batch(layout const& lay, std::int64_t nrhs, std::int64_t rhs_stride_arg,
                             matrix_class cls, bool periodic, std::uint64_t seed,
                             bool from_solution = false) {
  auto p =
      tridiag_test::make_problem<T>(lay, nrhs, rhs_stride_arg, tridiag_test::matrix_kind::dominant, seed);
  rng r(seed ^ 0x9e3779b97f4a7c15ull);
  std::int64_t const n = lay.n, m = middle(n);
  double const tiny = 1e-14, scale = sizeof(T) == 8 ? 1e-8 : 1e-3;
  for (std::int64_t k = 0; k < lay.count; ++k) {
    std::vector<double> a(n), b(n), c(n);
    for (std::int64_t i = 0; i < n; ++i) {
      recur_test::row_values v{};
      bool const first = i == 0 && !periodic, last = i + 1 == n && !periodic;
      switch (cls) {
        case matrix_class::close_values:
          v = recur_test::close_values_row(r);
          break;
        case matrix_class::random:
        case matrix_class::near_singular:
        case matrix_class::singular:
          v = {r.symmetric(), r.symmetric(), r.symmetric()};
          break;
        default:
          v = recur_test::dominant_row(r, first, last);
      }
      a[i] = v.a, b[i] = v.b, c[i] = v.c;
    }
    if ((cls == matrix_class::tiny_first && n >= 2) || (cls == matrix_class::tiny_middle && n >= 3)) {
      std::int64_t const j = cls == matrix_class::tiny_first ? 0 : m;
      if (j + 1 < n) {
        // Row j's pivot is b_j: in the middle, a_j = 0 decouples the rows above.
        if (j > 0) a[j] = 0;
        b[j] = tiny;
        c[j] = a[j + 1] = 1;
        // Row j + 1 dominant again with its new a.
        b[j + 1] = (b[j + 1] < 0 ? -1 : 1) *
                   (1 + (j + 2 < n || periodic ? std::fabs(c[j + 1]) : 0) + 1 + r.uniform());
      }
    }
    if (cls == matrix_class::near_singular || cls == matrix_class::singular) {
      // Column m: c[m - 1], b[m], a[m + 1] (in a periodic system of n >= 3
      // also the corners when m is 0 or n - 1, never here: m = n / 2).
      double const f = cls == matrix_class::singular ? 0 : scale;
      if (m > 0) c[m - 1] *= f;
      b[m] *= f;
      if (m + 1 < n) a[m + 1] *= f;
    }
    for (std::int64_t i = 0; i < n; ++i) {
      std::size_t const o = p.mi(i, k);
      p.a[o] = i == 0 && !periodic ? std::numeric_limits<T>::quiet_NaN() : static_cast<T>(a[i]);
      p.b[o] = static_cast<T>(b[i]);
      p.c[o] = i + 1 == n && !periodic ? std::numeric_limits<T>::quiet_NaN() : static_cast<T>(c[i]);
    }
  }
  if (from_solution) {
    std::vector<long double> x(static_cast<std::size_t>(n));
    for (std::int64_t rr = 0; rr < nrhs; ++rr)
      for (std::int64_t k = 0; k < lay.count; ++k) {
        for (long double& v : x) v = recur_test::solution_value(r);
        for (std::int64_t i = 0; i < n; ++i) {
          long double acc = static_cast<long double>(p.b[p.mi(i, k)]) * x[i];
          if (i > 0 || periodic) acc += static_cast<long double>(p.a[p.mi(i, k)]) * x[(i + n - 1) % n];
          if (i + 1 < n || periodic) acc += static_cast<long double>(p.c[p.mi(i, k)]) * x[(i + 1) % n];
          p.d[p.vi(i, k, rr)] = static_cast<T>(acc);
        }
      }
  }
  return p;
}

template <class T>
system_values<T> values(problem<T> const& p, std::int64_t k, bool periodic) {
  std::int64_t const n = p.lay.n;
  system_values<T> s{std::vector<T>(n), std::vector<T>(n), std::vector<T>(n), periodic};
  for (std::int64_t i = 0; i < n; ++i) {
    s.a[i] = i > 0 || periodic ? p.a[p.mi(i, k)] : T(0);
    s.b[i] = p.b[p.mi(i, k)];
    s.c[i] = i + 1 < n || periodic ? p.c[p.mi(i, k)] : T(0);
  }
  return s;
}

template <class T>
std::vector<T> rhs_values(problem<T> const& p, std::int64_t k, std::int64_t r) {
  std::vector<T> d(static_cast<std::size_t>(p.lay.n));
  for (std::int64_t i = 0; i < p.lay.n; ++i) d[i] = p.d[p.vi(i, k, r)];
  return d;
}

// Backend's reference solution of system k of p, right-hand side r (the
// corners kept where periodic), as check_outputs takes it.
template <class Backend, class T>
auto oracle_of(problem<T> const& p, bool periodic) {
  return [&p, periodic](std::int64_t k, std::int64_t r) {
    return Backend::oracle(values(p, k, periodic), rhs_values(p, k, r));
  };
}

// The system in long double.
template <class T>
rd::equations<long double> widened(system_values<T> const& s) {
  std::size_t const n = s.b.size();
  rd::equations<long double> e{std::vector<long double>(n, 0.0L),
                               std::vector<long double>(n, 0.0L),
                               std::vector<long double>(n, 0.0L),
                               {}};
  for (std::size_t i = 0; i < n; ++i) e.a[i] = s.a[i], e.b[i] = s.b[i], e.c[i] = s.c[i];
  return e;
}

// The reference's pivoted solve in long double: the GPU suites' oracle.
template <class T>
oracle_solution long_double_solution(system_values<T> const& s, std::vector<T> const& d) {
  rd::factored_system<long double> f;
  oracle_solution o;
  o.info = rd::factor_system(widened(s), s.periodic, tridiag_pivoting::partial, f);
  o.x.assign(d.begin(), d.end());
  if (o.info == 0) rd::solve_factored(f, o.x);
  return o;
}

// rho, the periodic split's amplification of the solves' errors
// (reference/tridiag_periodic.hpp), in long double; 1 for a plain system.
template <class T>
long double amplification(system_values<T> const& s, std::vector<T> const& d) {
  if (!s.periodic) return 1;
  auto const e = widened(s);
  rd::factored_system<long double> f;
  if (rd::factor_system(e, true, tridiag_pivoting::partial, f))
    return std::numeric_limits<long double>::infinity();
  return rd::periodic_amplification(e, f, std::vector<long double>(d.begin(), d.end()));
}

// kappa_inf(A) in long double, by the pivoted factors' columns of A^-1
// (O(n^2)); infinity where they break down.
template <class T>
long double condition(system_values<T> const& s) {
  auto const e = widened(s);
  rd::factored_system<long double> f;
  if (rd::factor_system(e, s.periodic, tridiag_pivoting::partial, f))
    return std::numeric_limits<long double>::infinity();
  std::size_t const n = s.b.size();
  std::vector<long double> rows(n, 0.0L), col(n);
  for (std::size_t j = 0; j < n; ++j) {
    std::fill(col.begin(), col.end(), 0.0L);
    col[j] = 1;
    rd::solve_factored(f, col);
    for (std::size_t i = 0; i < n; ++i) rows[i] += std::fabs(col[i]);
  }
  return rd::matrix_norm(e) * *std::max_element(rows.begin(), rows.end());
}

// The infinity norms of r = A x - d, A, x and d in long double (corners
// included); finite false where x is not.
struct residual_norms {
  long double r = 0, a = 0, x = 0, d = 0;
  bool finite = true;
};

template <class T, class XT>
residual_norms norms_of(system_values<T> const& s, XT&& x, std::vector<T> const& d) {
  auto const e = widened(s);
  std::vector<long double> xl(d.size()), dl(d.begin(), d.end()), r;
  residual_norms m;
  for (std::size_t i = 0; i < d.size(); ++i) {
    xl[i] = static_cast<long double>(x(static_cast<std::int64_t>(i)));
    if (!std::isfinite(xl[i])) {
      m.finite = false;
      return m;
    }
  }
  rd::residual(e, s.periodic, xl, dl, r);
  for (std::size_t i = 0; i < d.size(); ++i)
    m.r = std::max(m.r, std::fabs(r[i])), m.x = std::max(m.x, std::fabs(xl[i])),
    m.d = std::max(m.d, std::fabs(dl[i]));
  m.a = rd::matrix_norm(e);
  return m;
}

// ||A x - d|| / (||A|| ||x||) in long double (corners included), or -1 where
// x is not finite.
template <class T, class XT>
double relative_residual(system_values<T> const& s, XT&& x, std::vector<T> const& d) {
  residual_norms const m = norms_of(s, x, d);
  if (!m.finite) return -1;
  return static_cast<double>(m.r / (m.a * m.x + std::numeric_limits<long double>::min()));
}

// The normwise backward error ||A x - d|| / (||A|| ||x|| + ||d||) in long
// double (corners included), or -1 where x is not finite.
template <class T, class XT>
double backward_error(system_values<T> const& s, XT&& x, std::vector<T> const& d) {
  residual_norms const m = norms_of(s, x, d);
  if (!m.finite) return -1;
  return static_cast<double>(m.r / (m.a * m.x + m.d + std::numeric_limits<long double>::min()));
}

// --------------------------------------------------------------- running ---

template <class T>
struct run_result {
  bool refused = false;
  std::string what;                                // the refusal's message
  std::vector<T> x;                                // the whole buffer x lives in
  std::vector<std::int32_t> info, pivoted, steps;  // guard + count + guard each
  std::string inputs_written;
};

// One call with `opt` (nrhs, rhs_stride and the three outputs set here;
// `outputs` false leaves pivoted and refinement_steps null).
template <class Backend, class T>
run_result<T> run_options(problem<T> const& p, tridiag_options opt, bool in_place, bool outputs = true,
                          typename Backend::executor_type const& ex = Backend::executor()) {
  constexpr std::int64_t g = problem<T>::guard;
  using array_t = typename Backend::template array<T>;
  using iarray_t = typename Backend::template array<std::int32_t>;
  array_t const da(p.a), db(p.b), dc(p.c), dd(p.d);
  std::optional<array_t> dx;
  if (!in_place) dx.emplace(std::vector<T>(p.d.size(), poison<T>()));
  std::vector<std::int32_t> const fresh(static_cast<std::size_t>(p.lay.count + 2 * g), info_poison);
  iarray_t const di(fresh), dp(fresh), ds(fresh);
  opt.nrhs = p.nrhs;
  opt.rhs_stride = p.rhs_stride_arg;
  opt.info = di.data() + g;
  opt.pivoted = outputs ? dp.data() + g : nullptr;
  opt.refinement_steps = outputs ? ds.data() + g : nullptr;
  T* const x = (in_place ? dd.data() : dx->data()) + p.d_base;
  run_result<T> out;
  try {
    recur::solve_batched(ex, da.data() + g, db.data() + g, dc.data() + g, dd.data() + p.d_base, x, p.lay,
                         opt);
  } catch (recur::invalid_argument const& e) {
    out.refused = true;
    out.what = e.what();
  }
  Backend::finish();
  out.x = in_place ? dd.read() : dx->read();
  out.info = di.read();
  out.pivoted = dp.read();
  out.steps = ds.read();
  out.inputs_written = tridiag_test::inputs_written(p, da, db, dc, dd, in_place);
  return out;
}

// What a run must leave alone, into f: the inputs (d unless in place), the
// x buffer outside the systems' right-hand sides, and the guards of info,
// pivoted and refinement_steps.
template <class T>
void check_untouched(problem<T> const& p, run_result<T> const& out, failures& f) {
  constexpr std::int64_t g = problem<T>::guard;
  layout const& lay = p.lay;
  if (!out.inputs_written.empty()) f.add([&] { return "inputs written: " + out.inputs_written; });
  std::vector<bool> inside(out.x.size(), false);
  for (std::int64_t r = 0; r < p.nrhs; ++r)
    for (std::int64_t k = 0; k < lay.count; ++k)
      for (std::int64_t i = 0; i < lay.n; ++i) inside[p.vi(i, k, r)] = true;
  for (std::size_t j = 0; j < out.x.size(); ++j)
    if (!inside[j] && !is_poison(out.x[j]))
      f.add([&] { return fmt::format("x buffer element {} outside the systems was written", j); });
  for (auto const* v : {&out.info, &out.pivoted, &out.steps})
    for (std::int64_t j = 0; j < g; ++j)
      if ((*v)[j] != info_poison || (*v)[g + lay.count + j] != info_poison)
        f.add([&] { return fmt::format("an output's guard element {} was written", j); });
}

// What a system's outputs must be.
struct expected_system {
  int info = 0;         // the exact row, or tridiag_test::info_positive
  int pivoted = -1;     // 0, 1, or -1: not checked
  bool compare = true;  // forward error against the oracle (info 0)
};

// The checks of the top of this file for one run; oracle(k, r) gives the
// independent solution.
template <class T, class ExpectedT, class OracleT>
std::string check_outputs(problem<T> const& p, run_result<T> const& out, tridiag_options const& opt,
                          ExpectedT&& expected, OracleT&& oracle) {
  constexpr std::int64_t g = problem<T>::guard;
  layout const& lay = p.lay;
  std::int64_t const n = lay.n;
  failures f;
  if (out.refused) return "refused: " + out.what;
  check_untouched(p, out, f);
  double const eps = std::numeric_limits<T>::epsilon();
  double const tol = tridiag_test::residual_c * static_cast<double>(n) * eps;
  for (std::int64_t k = 0; k < lay.count; ++k) {
    std::int32_t const info = out.info[g + k], piv = out.pivoted[g + k], steps = out.steps[g + k];
    expected_system const want = expected(k);
    bool const info_ok =
        info >= 0 && info <= n && (want.info == tridiag_test::info_positive ? info > 0 : info == want.info);
    if (!info_ok) f.add([&] { return fmt::format("system {}: info = {}, expected {}", k, info, want.info); });
    if (!(piv == 0 || piv == 1) || (want.pivoted >= 0 && piv != want.pivoted))
      f.add([&] { return fmt::format("system {}: pivoted = {}, expected {}", k, piv, want.pivoted); });
    if (steps != 0)
      f.add([&] { return fmt::format("system {}: refinement_steps = {} without refinement", k, steps); });
    system_values<T> const s = values(p, k, opt.periodic);
    // A system that automatic solved without pivoting passed the growth test:
    // Thomas' backward error may reach gamma (<= lu_growth_bound) times the
    // stable solve's (reference/tridiag_pivot.hpp). The GPU's fast forms
    // eliminate in another order (Thomas-PCR: chunks, then PCR), whose error
    // on such non-dominant systems measured up to 3.4 times Thomas' bound
    // (H100, close-values rows, n = 200): a factor 4 above gamma.
    double growth = 1;
    if (opt.pivoting == tridiag_pivoting::automatic && piv == 0 && !opt.periodic) {
      rd::tridiag_lu<long double> lu;
      if (rd::factor_thomas(widened(s), lu) == 0 && lu.growth() > 1)
        growth = 4 * static_cast<double>(lu.growth());
    }
    bool const sample = k < 2 || k == lay.count / 2 || k == lay.count - 1;
    long double const kappa = want.compare && sample && info == 0 ? condition(s) : 0.0L;
    for (std::int64_t r = 0; r < p.nrhs; ++r) {
      auto const xr = [&](std::int64_t i) { return out.x[p.vi(i, k, r)]; };
      if (info != 0) {
        for (std::int64_t i = 0; i < n; ++i)
          if (!std::isnan(xr(i)) || is_poison(xr(i)))
            f.add([&] {
              return fmt::format("system {} (info {}) rhs {} element {} is not NaN", k, info, r, i);
            });
        continue;
      }
      std::vector<T> const d = rhs_values(p, k, r);
      double const rel = relative_residual(s, xr, d);
      double const rho = std::max(1.0, static_cast<double>(amplification(s, d))) * growth;
      if (!(rel >= 0 && rel <= tol * rho))
        f.add([&] {
          return fmt::format("system {} rhs {}: relative residual {:.3g} > {:.3g} (rho {:.3g})", k, r, rel,
                             tol * rho, rho);
        });
      if (kappa == 0 || !(kappa * eps < 0.01L)) continue;
      oracle_solution const o = oracle(k, r);
      long double err = 0, xn = 0;
      for (std::int64_t i = 0; i < n; ++i)
        err = std::max(err, std::fabs(static_cast<long double>(xr(i)) - o.x[i])),
        xn = std::max(xn, std::fabs(o.x[i]));
      long double const bound = tol * rho * kappa * xn;
      if (o.info != 0 || !(err <= bound))
        f.add([&] {
          return fmt::format(
              "system {} rhs {}: differs from the oracle (info {}) by {:.3g} relative, bound {:.3g} "
              "(kappa {:.3g})",
              k, r, o.info, static_cast<double>(err / xn), static_cast<double>(bound / xn),
              static_cast<double>(kappa));
        });
    }
  }
  return f.report();
}

// One run of opt on p through Backend (in place or not), its outputs
// checked by check_outputs against Backend's oracle and expected(k), the
// failures reported under `what`. Returns the run.
template <class Backend, class T, class ExpectedT>
run_result<T> solve_and_check(problem<T> const& p, tridiag_options const& opt, bool in_place,
                              ExpectedT&& expected, std::string const& what) {
  run_result<T> out = run_options<Backend>(p, opt, in_place);
  std::string const msg = check_outputs(p, out, opt, expected, oracle_of<Backend>(p, opt.periodic));
  BOOST_TEST(msg.empty(), what << "\n" << msg);
  return out;
}

// The right-hand sides of case `rot`: 1; 3 one after the other; 3 with a
// gap between sets; 2 with a negative stride.
inline void rhs_rotation(int rot, std::int64_t ext, std::int64_t& nrhs, std::int64_t& stride) {
  switch (rot % 4) {
    case 0:
      nrhs = 1, stride = 0;
      break;
    case 1:
      nrhs = 3, stride = 0;
      break;
    case 2:
      nrhs = 3, stride = ext + 5;
      break;
    default:
      nrhs = 2, stride = -(ext + 3);
  }
}

inline std::string describe(std::string const& backend, tridiag_options const& o, char const* type,
                            matrix_class m, layout const& lay, std::int64_t nrhs, std::int64_t stride,
                            bool in_place, std::uint64_t seed) {
  return fmt::format(
      "{} {} pivoting={} periodic={} refinement={} algorithm={} {} layout {{n={}, count={}, es={}, bs={}}} "
      "nrhs={} rhs_stride={}{} seed={:#x}",
      backend, type, recur::to_string(o.pivoting), o.periodic, recur::to_string(o.refinement),
      recur::to_string(o.algorithm), name(m), lay.n, lay.count, lay.element_stride, lay.batch_stride, nrhs,
      stride, in_place ? " in place" : "", seed);
}

// --------------------------------------------------------------- the cases ---

// What pivoting = automatic decides for system s (algorithm thomas): the
// growth test on its (or its periodic split's) no-pivot factors.
template <class T>
int automatic_pivots(system_values<T> const& s) {
  rd::factored_system<T> f;
  (void)rd::factor_system(s.equations(), s.periodic, tridiag_pivoting::automatic, f);
  return f.lu.pivoted ? 1 : 0;
}

// pivoting (partial or automatic, algorithm thomas) on every matrix class,
// plain or periodic, every layout, n and count, both right-hand side
// arrangements, in place and not, against Backend::oracle. Periodic systems
// need n >= 3; the singular periodic ones may report any row.
// dominant_only: the diagonally dominant class alone (for pivoting = none).
template <class Backend, class T>
void pivot_sweep(tridiag_pivoting pivoting, bool periodic, bool dominant_only = false) {
  static constexpr std::int64_t ns[] = {1, 2, 3, 4, 5, 33, 200, 1000};
  static constexpr std::int64_t counts[] = {1, 3, 37};
  static constexpr matrix_class classes[] = {
      matrix_class::dominant,    matrix_class::close_values,  matrix_class::random,  matrix_class::tiny_first,
      matrix_class::tiny_middle, matrix_class::near_singular, matrix_class::singular};
  tridiag_options opt;
  opt.pivoting = pivoting;
  opt.periodic = periodic;
  recur_test::case_count cases(fmt::format("{} {} pivoting={} periodic={}", Backend::name(), type_name<T>,
                                           recur::to_string(pivoting), periodic));
  int idx = 0;
  for (matrix_class const cls : classes)
    for (layout_kind const kind : all_layout_kinds)
      for (std::int64_t const n : ns)
        for (std::int64_t const count : counts) {
          if (periodic && n < 3) continue;
          if (dominant_only && cls != matrix_class::dominant) continue;
          if (n * count > 8000) continue;
          layout const lay = make_layout(kind, n, count);
          int const rot = idx++;
          std::int64_t nrhs = 1, stride = 0;
          rhs_rotation(rot, recur_test::extent(lay), nrhs, stride);
          bool const in_place = rot % 3 == 1;
          std::uint64_t const seed = seed_for(610 + periodic, static_cast<std::uint64_t>(rot),
                                              sizeof(T) + 16 * static_cast<int>(pivoting));
          auto const p = make_system_batch<T>(lay, nrhs, stride, cls, periodic, seed);
          std::string const what =
              describe(Backend::name(), opt, type_name<T>, cls, lay, nrhs, stride, in_place, seed);
          cases.run();
          auto const oracle = oracle_of<Backend>(p, periodic);
          auto const expected = [&](std::int64_t k) {
            expected_system e;
            system_values<T> const s = values(p, k, periodic);
            // LAPACK's row for a plain singular matrix; a periodic one may
            // break down in its split's factorisation or in the correction.
            if (cls == matrix_class::singular)
              e.info = periodic ? tridiag_test::info_positive : oracle(k, 0).info;
            // automatic never pivots a diagonally dominant system (gamma <= 2).
            e.pivoted = pivoting == tridiag_pivoting::partial ? 1
                        : pivoting == tridiag_pivoting::none || cls == matrix_class::dominant
                            ? 0
                            : automatic_pivots(values(p, k, periodic));
            // ?gesv, the periodic oracle, for n up to a few hundred; the
            // residual beyond.
            e.compare = !(periodic && n > 300);
            return e;
          };
          solve_and_check<Backend>(p, opt, in_place, expected, what);
        }
  cases.require(dominant_only ? 60 : periodic ? 400 : 600);
}

// pivoting = automatic gives pivoting = none's bits on the batches `alg` is
// stable on: diagonally dominant rows (RD and CR+RD: close values, their
// domain). For RD and CR+RD, whose self check refuses some systems, only the
// systems that none solves and automatic does not pivot are compared bit for
// bit; those none refuses are solved by automatic's pivoted Thomas (where
// the backend runs the stability test). pivoted and refinement_steps: 0 for
// every compared system.
template <class Backend, class T>
void automatic_matches_none(tridiag_algorithm alg) {
  static constexpr std::int64_t ns[] = {1, 2, 3, 33, 128, 513};
  static constexpr std::int64_t counts[] = {1, 37};
  constexpr std::int64_t g = problem<T>::guard;
  bool const rd_like = tridiag_test::rd_like(alg);
  matrix_class const cls = rd_like ? matrix_class::close_values : matrix_class::dominant;
  recur_test::case_count cases(
      fmt::format("{} {} {} automatic = none", Backend::name(), recur::to_string(alg), type_name<T>));
  std::int64_t resolved = 0;
  int idx = 0;
  for (layout_kind const kind : all_layout_kinds)
    for (std::int64_t const n : ns)
      for (std::int64_t const count : counts) {
        layout const lay = make_layout(kind, n, count);
        if (auto const why = tridiag_test::unsupported<T, Backend>(alg, lay)) {
          cases.skip(*why);
          continue;
        }
        int const rot = idx++;
        std::int64_t nrhs = 1, stride = 0;
        rhs_rotation(rot, recur_test::extent(lay), nrhs, stride);
        bool const in_place = rot % 3 == 2;
        std::uint64_t const seed = seed_for(620, static_cast<std::uint64_t>(rot), sizeof(T));
        auto const p = make_system_batch<T>(lay, nrhs, stride, cls, false, seed);
        tridiag_options none, automatic;
        none.algorithm = automatic.algorithm = alg;
        none.pivoting = tridiag_pivoting::none;
        automatic.pivoting = tridiag_pivoting::automatic;
        if (in_place && rd_like && nrhs > 1 && Backend::unscreened_in_place_is_thomas)
          none.algorithm = tridiag_algorithm::thomas;
        cases.run();
        auto const a = run_options<Backend>(p, none, in_place, false);
        auto const b = run_options<Backend>(p, automatic, in_place);
        std::string const what =
            describe(Backend::name(), automatic, type_name<T>, cls, lay, nrhs, stride, in_place, seed);
        BOOST_TEST_REQUIRE((!a.refused && !b.refused), what << ": " << a.what << b.what);
        failures f;
        for (std::int64_t k = 0; k < lay.count; ++k) {
          std::int32_t const info_none = a.info[g + k], info_auto = b.info[g + k];
          std::int32_t const piv = b.pivoted[g + k], steps = b.steps[g + k];
          // automatic keeps a named algorithm's answer only for diagonally
          // dominant systems and solves the others again (Thomas or partial
          // pivoting): not none's bits.
          bool const kept = alg == tridiag_algorithm::thomas || rows_dominant(values(p, k, false));
          bool const compared = (!rd_like || (info_none == 0 && piv == 0)) && kept;
          bool same = info_none == info_auto && steps == 0 && piv == 0;
          for (std::int64_t r = 0; r < nrhs && compared; ++r)
            for (std::int64_t i = 0; i < n; ++i)
              same = same && recur_test::same_bits(a.x[p.vi(i, k, r)], b.x[p.vi(i, k, r)]);
          if (compared && !same)
            f.add([&] {
              return fmt::format("system {}: automatic (info {}, pivoted {}) differs from none (info {})", k,
                                 info_auto, piv, info_none);
            });
          if (rd_like && info_none != 0 && Backend::automatic_tests_growth) {
            ++resolved;
            if (info_auto != 0)
              f.add([&] {
                return fmt::format("system {}: none broke down (info {}), automatic gives info {} pivoted {}",
                                   k, info_none, info_auto, piv);
              });
          }
        }
        BOOST_TEST(f.count == 0, what << "\n" << f.report());
      }
  bool const every_shape = alg == tridiag_algorithm::automatic || alg == tridiag_algorithm::thomas;
  cases.require(every_shape ? 48 : 8);
  BOOST_TEST_MESSAGE(cases.what << ": " << resolved
                                << " systems that none refuses solved by the pivoted Thomas");
}

// A tiny first pivot: b_0 = 1e-14, c_0 = a_1 = 1, the rest dominant (a
// well-conditioned matrix), and the same tiny pivot in the middle row.
// pivoting = none loses most digits (relative error above 1e-6 in both
// types); automatic, the default, pivots it (pivoted 1) and agrees with the
// oracle (LAPACK's ?gtsv on the host) to 4 eps, as does partial. Where the
// backend runs automatic without its stability test (automatic_tests_growth
// false), automatic must give none's bits instead.
template <class Backend, class T>
void tiny_pivot() {
  constexpr std::int64_t g = problem<T>::guard;
  recur_test::case_count cases(fmt::format("{} {} tiny pivot", Backend::name(), type_name<T>));
  int idx = 0;
  for (layout_kind const kind : all_layout_kinds)
    for (matrix_class const cls : {matrix_class::tiny_first, matrix_class::tiny_middle}) {
      layout const lay = make_layout(kind, 100, 3);
      std::uint64_t const seed = seed_for(630, static_cast<std::uint64_t>(idx++), sizeof(T));
      auto const p = make_system_batch<T>(lay, 2, 0, cls, false, seed);
      tridiag_options none, automatic, partial;
      none.pivoting = tridiag_pivoting::none;
      partial.pivoting = tridiag_pivoting::partial;
      cases.run();
      auto const x_none = run_options<Backend>(p, none, false, false);
      auto const x_auto = run_options<Backend>(p, automatic, false, true);
      std::string const what =
          describe(Backend::name(), automatic, type_name<T>, cls, lay, 2, 0, false, seed);
      BOOST_TEST_REQUIRE(!x_none.refused, x_none.what);
      BOOST_TEST_REQUIRE(!x_auto.refused, x_auto.what);
      auto const error = [&](run_result<T> const& out, std::int64_t k, std::int64_t r) {
        oracle_solution const o = Backend::oracle(values(p, k, false), rhs_values(p, k, r));
        long double err = 0, xn = 0;
        for (std::int64_t i = 0; i < lay.n; ++i)
          err = std::max(err, std::fabs(static_cast<long double>(out.x[p.vi(i, k, r)]) - o.x[i])),
          xn = std::max(xn, std::fabs(o.x[i]));
        return static_cast<double>(err / xn);
      };
      double const eps = std::numeric_limits<T>::epsilon();
      for (std::int64_t k = 0; k < lay.count; ++k)
        for (std::int64_t r = 0; r < 2; ++r) {
          double const e_none = error(x_none, k, r);
          BOOST_TEST(!(e_none <= 1e-6), what << ": pivoting none is accurate (" << e_none << ")");
          if (!Backend::automatic_tests_growth) {
            bool same = true;
            for (std::int64_t i = 0; i < lay.n; ++i)
              same = same && recur_test::same_bits(x_auto.x[p.vi(i, k, r)], x_none.x[p.vi(i, k, r)]);
            BOOST_TEST(same, what << ": automatic without the stability test differs from none");
            continue;
          }
          double const e_auto = error(x_auto, k, r);
          BOOST_TEST(e_auto <= 4 * eps, what << " system " << k << ": automatic's error " << e_auto);
          BOOST_TEST(x_auto.pivoted[g + k] == 1, what);
        }
      auto const x_part = run_options<Backend>(p, partial, false, false);
      for (std::int64_t k = 0; k < lay.count; ++k)
        BOOST_TEST(error(x_part, k, 1) <= 4 * eps, what << " partial, system " << k);
    }
  cases.require(8);
}

// --------------------------------------------------------------- refinement ---

// Systems of a chosen condition: a_i, c_i = -(1 + U[0, 0.1)) and b_i =
// |a_i| + |c_i| + delta (1/2 + U[0, 1)), weakly diagonally dominant (the
// discrete Laplacian shifted by about delta): kappa about 4 / delta for
// periodic systems, 4 / (delta + pi^2 / n^2) for plain ones. `exact`: a_i =
// c_i = -1 and b_i = 2 cos(pi / (n + 1)) + delta (plain) or 2 + delta
// (periodic), whose smallest eigenvalue is delta, so kappa is about 4 /
// delta for plain systems too. Scaled by 2^scale (beyond float's range for
// |scale| > 128: the refinement scales the matrix into it).
template <class T>
problem<T> make_laplacian_batch(layout const& lay, std::int64_t nrhs, std::int64_t stride, bool periodic,
                                double delta, int scale, std::uint64_t seed, bool exact = false) {
  auto p = tridiag_test::make_problem<T>(lay, nrhs, stride, tridiag_test::matrix_kind::dominant, seed);
  rng r(seed ^ 0x5ca1ab1eull);
  std::int64_t const n = lay.n;
  for (std::int64_t k = 0; k < lay.count; ++k)
    for (std::int64_t i = 0; i < n; ++i) {
      std::size_t const o = p.mi(i, k);
      bool const has_a = i > 0 || periodic, has_c = i + 1 < n || periodic;
      double const a = exact ? -1 : -(1 + 0.1 * r.uniform()), c = exact ? -1 : -(1 + 0.1 * r.uniform());
      double const shift = periodic ? 2 : 2 * std::cos(3.14159265358979323846 / static_cast<double>(n + 1));
      double const b =
          exact ? shift + delta : (has_a ? -a : 0) + (has_c ? -c : 0) + delta * (0.5 + r.uniform());
      p.a[o] = has_a ? static_cast<T>(std::ldexp(a, scale)) : std::numeric_limits<T>::quiet_NaN();
      p.b[o] = static_cast<T>(std::ldexp(b, scale));
      p.c[o] = has_c ? static_cast<T>(std::ldexp(c, scale)) : std::numeric_limits<T>::quiet_NaN();
    }
  return p;
}

// refinement = mixed on double systems with kappa from 10 to about 1e6 (and
// random, close-values and dominant rows), plain and periodic, pivoting
// none (on the dominant kinds), automatic and partial, every layout, several
// right-hand sides, in place. Each system: info 0, 0 <= refinement_steps <=
// max_refinement_steps, and at least 1 (float alone does not reach
// double's accuracy), a normwise backward error (in long
// double) within 3 eps, the stopping rule's 2 eps plus the rounding of the
// residual it was computed from, and a forward error against the oracle
// within 4 n eps kappa, what the double solve guarantees.
template <class Backend>
void refinement_sweep() {
  using T = double;
  constexpr std::int64_t g = problem<T>::guard;
  struct family {
    char const* name;
    double delta;  // > 0: make_laplacian_batch; 0: matrix_class cls
    matrix_class cls;
  };
  static constexpr family families[] = {
      {"laplacian 1e-1", 1e-1, {}},           {"laplacian 1e-3", 1e-3, {}},
      {"laplacian 1e-5", 1e-5, {}},           {"laplacian 4e-6", 4e-6, {}},
      {"random", 0, matrix_class::random},    {"close_values", 0, matrix_class::close_values},
      {"dominant", 0, matrix_class::dominant}};
  recur_test::case_count cases(fmt::format("{} refinement", Backend::name()));
  long double kappa_max = 0;
  int idx = 0;
  for (family const& fam : families)
    for (bool const periodic : {false, true})
      for (tridiag_pivoting const piv :
           {tridiag_pivoting::none, tridiag_pivoting::automatic, tridiag_pivoting::partial})
        for (std::int64_t const n : {3, 10, 100, 1000}) {
          bool const dominant_kind = fam.delta > 0 || fam.cls == matrix_class::dominant;
          if (piv == tridiag_pivoting::none && !dominant_kind) continue;
          int const rot = idx++;
          layout const lay = make_layout(all_layout_kinds[rot % 4], n, n >= 1000 ? 3 : 7);
          std::int64_t nrhs = 1, stride = 0;
          rhs_rotation(rot, recur_test::extent(lay), nrhs, stride);
          bool const in_place = rot % 3 == 0;
          std::uint64_t const seed = seed_for(640, static_cast<std::uint64_t>(rot));
          auto const p = fam.delta > 0
                             ? make_laplacian_batch<T>(lay, nrhs, stride, periodic, fam.delta, 0, seed)
                             : make_system_batch<T>(lay, nrhs, stride, fam.cls, periodic, seed);
          tridiag_options opt;
          opt.pivoting = piv;
          opt.periodic = periodic;
          opt.refinement = tridiag_refinement::mixed;
          std::string const what =
              std::string(fam.name) + " " +
              describe(Backend::name(), opt, "f64", fam.cls, lay, nrhs, stride, in_place, seed);
          cases.run();
          auto const out = run_options<Backend>(p, opt, in_place);
          BOOST_TEST_REQUIRE(!out.refused, what << ": " << out.what);
          failures f;
          double const eps = std::numeric_limits<T>::epsilon();
          for (std::int64_t k = 0; k < lay.count; ++k) {
            std::int32_t const info = out.info[g + k], steps = out.steps[g + k], pv = out.pivoted[g + k];
            system_values<T> const s = values(p, k, periodic);
            long double const kappa = condition(s);
            kappa_max = std::max(kappa_max, kappa);
            if (info != 0) f.add([&] { return fmt::format("system {}: info {}", k, info); });
            if (steps < 1 || steps > opt.max_refinement_steps)
              f.add([&] {
                return fmt::format("system {} (kappa {:.3g}): refinement_steps {}", k,
                                   static_cast<double>(kappa), steps);
              });
            if ((piv == tridiag_pivoting::partial && pv != 1) || (piv == tridiag_pivoting::none && pv != 0))
              f.add([&] { return fmt::format("system {}: pivoted {}", k, pv); });
            auto const e = widened(s);
            for (std::int64_t r = 0; r < nrhs; ++r) {
              std::vector<T> const d = rhs_values(p, k, r);
              std::vector<long double> xl(n), dl(d.begin(), d.end()), res;
              for (std::int64_t i = 0; i < n; ++i) xl[i] = out.x[p.vi(i, k, r)];
              rd::residual(e, periodic, xl, dl, res);
              long double rn = 0, xn = 0, dn = 0;
              for (std::int64_t i = 0; i < n; ++i)
                rn = std::max(rn, std::fabs(res[i])), xn = std::max(xn, std::fabs(xl[i])),
                dn = std::max(dn, std::fabs(dl[i]));
              double const eta = static_cast<double>(rn / (rd::matrix_norm(e) * xn + dn)) / eps;
              if (!(eta <= 3))
                f.add([&] { return fmt::format("system {} rhs {}: backward error {:.3g} eps", k, r, eta); });
              oracle_solution const o = Backend::oracle(s, d);
              long double err = 0, on = 0;
              for (std::int64_t i = 0; i < n; ++i)
                err = std::max(err, std::fabs(xl[i] - o.x[i])), on = std::max(on, std::fabs(o.x[i]));
              long double const bound = tridiag_test::residual_c * n * eps * kappa;
              if (o.info != 0 || !(err <= bound * on))
                f.add([&] {
                  return fmt::format("system {} rhs {}: forward error {:.3g}, bound {:.3g} (kappa {:.3g})", k,
                                     r, static_cast<double>(err / on), static_cast<double>(bound),
                                     static_cast<double>(kappa));
                });
            }
          }
          BOOST_TEST(f.count == 0, what << "\n" << f.report());
        }
  cases.require(120);
  if (cases.ran > 0)
    BOOST_TEST(kappa_max >= 1e6L,
               "the refinement sweep's largest kappa is " << static_cast<double>(kappa_max));
}

// Where refinement gives up: the double solve's x (its bits: the same
// factorisation and substitutions as refinement = none) and
// refinement_steps -1. max_refinement_steps = 0 on a system that needs a
// correction; kappa about 4e12, beyond float's reach. And matrices scaled by
// 2^600 and 2^-600, beyond float's range, are refined all the same.
template <class Backend>
void refinement_limits() {
  using T = double;
  constexpr std::int64_t g = problem<T>::guard;
  recur_test::case_count cases(fmt::format("{} refinement limits", Backend::name()));
  int idx = 0;
  for (layout_kind const kind : all_layout_kinds)
    for (bool const periodic : {false, true}) {
      layout const lay = make_layout(kind, 200, 5);
      std::int64_t nrhs = 1, stride = 0;
      rhs_rotation(idx, recur_test::extent(lay), nrhs, stride);
      std::uint64_t const seed = seed_for(650, static_cast<std::uint64_t>(idx++));
      for (int const which : {0, 1, 2, 3}) {
        double const delta = which == 1 ? 1e-12 : 1e-3;
        int const scale = which == 2 ? 600 : which == 3 ? -600 : 0;
        auto const p = make_laplacian_batch<T>(lay, nrhs, stride, periodic, delta, scale, seed, which == 1);
        tridiag_options opt;
        opt.periodic = periodic;
        opt.pivoting = tridiag_pivoting::partial;
        opt.refinement = tridiag_refinement::mixed;
        if (which == 0) opt.max_refinement_steps = 0;
        std::string const what = fmt::format(
            "case {} {}", which,
            describe(Backend::name(), opt, "f64", matrix_class::dominant, lay, nrhs, stride, true, seed));
        cases.run();
        auto const out = run_options<Backend>(p, opt, true);
        BOOST_TEST_REQUIRE(!out.refused, what << ": " << out.what);
        tridiag_options plain = opt;
        plain.refinement = tridiag_refinement::none;
        auto const ref = run_options<Backend>(p, plain, false);
        for (std::int64_t k = 0; k < lay.count; ++k) {
          BOOST_TEST(out.info[g + k] == 0, what);
          if (which <= 1) {
            BOOST_TEST(out.steps[g + k] == -1, what << " system " << k);
            bool same = true;
            for (std::int64_t r = 0; r < nrhs; ++r)
              for (std::int64_t i = 0; i < lay.n; ++i)
                same = same && recur_test::same_bits(out.x[p.vi(i, k, r)], ref.x[p.vi(i, k, r)]);
            BOOST_TEST(same, what << " system " << k << ": not the double solve's bits");
          } else {
            BOOST_TEST(out.steps[g + k] >= 1, what << " system " << k << ": steps " << out.steps[g + k]);
          }
        }
      }
    }
  cases.require(32);
}

// ------------------------------------------------------- periodic split ---

// Periodic systems without pivoting (pivoting none, and automatic without
// pivoted or refinement_steps: on the GPU the Sherman-Morrison split around
// the fast no-pivot forms), diagonally dominant rows and the shifted
// periodic Laplacian of ADI steps (b = |a| + |c| + 1e-2 (1/2 + U[0, 1))),
// every layout kind, n from 3 to 10^5 + 3, batches of 1 to 4096 systems, 1
// or 3 right-hand sides (the rotation of rhs_rotation), in place and not:
// check_outputs against Backend::oracle (forward error where n <= 1024, the
// residual throughout), and automatic without the outputs gives pivoting =
// none's bits and info.
template <class Backend, class T>
void periodic_split_sweep() {
  struct shape {
    std::int64_t n, count;
  };
  // With the direct form's exact shapes (32 .. 512 rows: one segment of
  // lanes a system), whose Periodic instances solve in one pass.
  static constexpr shape shapes[] = {{3, 1},       {3, 37},    {3, 4096},  {4, 1},      {4, 4096},
                                     {31, 1},      {31, 300},  {31, 4096}, {32, 4096},  {64, 37},
                                     {128, 1},     {256, 300}, {512, 64},  {1024, 1},   {1024, 37},
                                     {1024, 1025}, {4097, 1},  {4097, 64}, {100003, 1}, {100003, 3}};
  constexpr std::int64_t g = problem<T>::guard;
  recur_test::case_count cases(fmt::format("{} {} periodic split", Backend::name(), type_name<T>));
  int idx = 0;
  for (bool const laplacian : {false, true})
    for (layout_kind const kind : all_layout_kinds)
      for (shape const sh : shapes) {
        layout const lay = make_layout(kind, sh.n, sh.count);
        int const rot = idx++;
        std::int64_t nrhs = 1, stride = 0;
        rhs_rotation(rot % 2, recur_test::extent(lay), nrhs, stride);
        bool const in_place = rot % 3 == 1;
        std::uint64_t const seed = seed_for(680 + laplacian, static_cast<std::uint64_t>(rot), sizeof(T));
        auto const p = laplacian
                           ? make_laplacian_batch<T>(lay, nrhs, stride, true, 1e-2, 0, seed)
                           : make_system_batch<T>(lay, nrhs, stride, matrix_class::dominant, true, seed);
        tridiag_options none, automatic;
        none.pivoting = tridiag_pivoting::none;
        none.periodic = automatic.periodic = true;
        std::string const what = describe(Backend::name(), none, type_name<T>, matrix_class::dominant, lay,
                                          nrhs, stride, in_place, seed) +
                                 (laplacian ? " (laplacian)" : "");
        cases.run();
        auto const expected = [&](std::int64_t) {
          expected_system e;
          e.pivoted = 0;
          e.compare = sh.n <= 1024;
          return e;
        };
        auto const out = solve_and_check<Backend>(p, none, in_place, expected, what);
        auto const fast = run_options<Backend>(p, automatic, in_place, false);
        BOOST_TEST_REQUIRE(!fast.refused, what << ": " << fast.what);
        failures f;
        for (std::int64_t k = 0; k < lay.count; ++k) {
          bool same = fast.info[g + k] == out.info[g + k];
          for (std::int64_t r = 0; r < nrhs; ++r)
            for (std::int64_t i = 0; i < lay.n; ++i)
              same = same && recur_test::same_bits(fast.x[p.vi(i, k, r)], out.x[p.vi(i, k, r)]);
          if (!same) f.add([&] { return fmt::format("system {}: automatic is not none's bits", k); });
        }
        BOOST_TEST(f.count == 0, what << " automatic without outputs\n" << f.report());
      }
  cases.require(2 * 4 * std::size(shapes));
}

// The split's breakdowns, in one batch with solvable dominant systems
// (k % 3 == 0), every pivoting, layout kind, several right-hand sides and
// in place: the divisor 1 + v^T z exactly zero (k % 3 == 1: the rows
// x_0 + x_(n-1) = d_0 and x_0 + x_(n-1) = d_(n-1), b = 2 between them and
// no other coupling, where A' is diagonal, z = (-1/2, 0, ..., 0, 1/2) and
// w = -1 exactly): info n, x NaN; and row 0 zero (k % 3 == 2: gamma is
// zero): info > 0 (1 for the pivoted form), x NaN. The dominant systems
// beside them are solved.
template <class Backend, class T>
void periodic_breakdown() {
  recur_test::case_count cases(fmt::format("{} {} periodic breakdown", Backend::name(), type_name<T>));
  int idx = 0;
  for (tridiag_pivoting const piv :
       {tridiag_pivoting::none, tridiag_pivoting::automatic, tridiag_pivoting::partial})
    for (layout_kind const kind : all_layout_kinds)
      for (std::int64_t const n : {3, 4, 31, 64, 1024}) {
        layout const lay = make_layout(kind, n, 30);
        int const rot = idx++;
        std::int64_t nrhs = 1, stride = 0;
        rhs_rotation(rot, recur_test::extent(lay), nrhs, stride);
        bool const in_place = rot % 3 == 1;
        std::uint64_t const seed = seed_for(690, static_cast<std::uint64_t>(rot), sizeof(T));
        auto p = make_system_batch<T>(lay, nrhs, stride, matrix_class::dominant, true, seed);
        for (std::int64_t k = 0; k < lay.count; ++k) {
          if (k % 3 == 0) continue;
          for (std::int64_t i = 0; i < n; ++i) {
            std::size_t const o = p.mi(i, k);
            bool const end = i == 0 || i == n - 1;
            p.a[o] = i == 0 && k % 3 == 1 ? T(1) : T(0);
            p.c[o] = i == n - 1 ? T(1) : T(0);
            p.b[o] = end ? T(1) : T(2);
          }
          if (k % 3 == 2) p.b[p.mi(0, k)] = T(0);
        }
        tridiag_options opt;
        opt.pivoting = piv;
        opt.periodic = true;
        std::string const what = describe(Backend::name(), opt, type_name<T>, matrix_class::singular, lay,
                                          nrhs, stride, in_place, seed);
        cases.run();
        auto const expected = [&](std::int64_t k) {
          expected_system e;
          e.info = k % 3 == 0 ? 0 : k % 3 == 1 ? static_cast<int>(n) : tridiag_test::info_positive;
          e.pivoted = k % 3 != 0 ? -1 : piv == tridiag_pivoting::partial ? 1 : 0;
          return e;
        };
        solve_and_check<Backend>(p, opt, in_place, expected, what);
      }
  cases.require(60);
}

// Periodic systems whose row 0 has b_0 = 0 (a_0 and c_0 as generated, the
// other rows dominant): the split's gamma keeps T regular, so pivoting none
// solves them (against the dense oracle) in every layout kind, at lengths
// that run the split and the direct form's one-pass solve (64, 256).
template <class Backend, class T>
void periodic_zero_b0() {
  recur_test::case_count cases(fmt::format("{} {} periodic b_0 = 0", Backend::name(), type_name<T>));
  int idx = 0;
  for (layout_kind const kind : all_layout_kinds)
    for (std::int64_t const n : {5, 64, 256, 1000}) {
      layout const lay = make_layout(kind, n, 33);
      std::uint64_t const seed = seed_for(695, static_cast<std::uint64_t>(idx++), sizeof(T));
      auto p = make_system_batch<T>(lay, 1, 0, matrix_class::dominant, true, seed);
      for (std::int64_t k = 0; k < lay.count; ++k) p.b[p.mi(0, k)] = T(0);
      tridiag_options opt;
      opt.pivoting = tridiag_pivoting::none;
      opt.periodic = true;
      std::string const what =
          describe(Backend::name(), opt, type_name<T>, matrix_class::dominant, lay, 1, 0, false, seed) +
          " (b_0 = 0)";
      cases.run();
      solve_and_check<Backend>(
          p, opt, false,
          [](std::int64_t) {
            expected_system e;
            e.pivoted = 0;
            return e;
          },
          what);
    }
  cases.require(16);
}

// ------------------------------------------------------------ arguments ---

// Every bad option is named, nothing written (tridiag_harness.hpp's arena).
// A backend that does not implement an option refuses it in its own words.
template <class Backend, class T>
void option_errors() {
  using tridiag_test::arena;
  using tridiag_test::expect_invalid;
  arena<Backend, T> m;
  auto const snap = [&] { return m.snapshot(); };
  auto const ex = Backend::executor();
  constexpr std::int64_t n = 50, count = 2;
  std::int32_t* const info = m.info();
  std::int32_t* const piv = info + 16;
  std::int32_t* const steps = info + 32;
  auto const call_on = [&](tridiag_options const& o, layout const& lay) {
    return [&ex, o, lay, &m] { recur::solve_batched(ex, m.a(), m.b(), m.c(), m.d(), m.x(), lay, o); };
  };
  auto const call = [&](tridiag_options const& o) { return call_on(o, layout::contiguous(n, count)); };
  auto const with = [&](auto&& change) {
    tridiag_options o;
    o.info = info;
    change(o);
    return o;
  };
  expect_invalid(call(with([](auto& o) { o.pivoting = static_cast<tridiag_pivoting>(9); })), snap,
                 {"pivoting = 9", "tridiag_pivoting"});
  expect_invalid(call(with([](auto& o) { o.refinement = static_cast<tridiag_refinement>(5); })), snap,
                 {"refinement = 5", "tridiag_refinement"});
  expect_invalid(call(with([](auto& o) { o.max_refinement_steps = -1; })), snap,
                 {"max_refinement_steps = -1"});
  if constexpr (sizeof(T) == 4)
    expect_invalid(call(with([](auto& o) { o.refinement = tridiag_refinement::mixed; })), snap,
                   {"refinement = mixed needs double"});
  expect_invalid(call(with([](auto& o) {
                   o.pivoting = tridiag_pivoting::partial;
                   o.algorithm = tridiag_algorithm::cr;
                 })),
                 snap, {"pivoting = partial", "algorithm = cr"});
  expect_invalid(call(with([](auto& o) {
                   o.periodic = true;
                   o.algorithm = tridiag_algorithm::pcr;
                 })),
                 snap, {"periodic = true", "algorithm = pcr"});
  if constexpr (sizeof(T) == 8)
    expect_invalid(call(with([](auto& o) {
                     o.refinement = tridiag_refinement::mixed;
                     o.algorithm = tridiag_algorithm::rd;
                   })),
                   snap, {"refinement = mixed", "algorithm = rd"});
  for (std::int64_t const small : {1, 2})
    expect_invalid(call_on(with([](auto& o) { o.periodic = true; }), layout::contiguous(small, count)), snap,
                   {"periodic = true needs n >= 3", small == 1 ? "(n = 1)" : "(n = 2)"});
  // The outputs: misaligned, overlapping.
  auto const misaligned = reinterpret_cast<std::int32_t*>(reinterpret_cast<char*>(piv) + 2);
  auto const output_error = [&](auto&& change, std::initializer_list<char const*> needles) {
    expect_invalid(call(with(change)), snap, needles);
  };
  output_error([&](auto& o) { o.pivoted = misaligned; }, {"pivoted = ", "not aligned"});
  output_error([&](auto& o) { o.refinement_steps = misaligned; }, {"refinement_steps = ", "not aligned"});
  output_error([&](auto& o) { o.pivoted = reinterpret_cast<std::int32_t*>(m.x() + 3); },
               {"pivoted = ", "overlaps x"});
  output_error([&](auto& o) { o.pivoted = reinterpret_cast<std::int32_t*>(m.d() + 2 * n - 1); },
               {"pivoted = ", "overlaps d"});
  output_error([&](auto& o) { o.pivoted = info + 1; }, {"pivoted = ", "overlaps info"});
  output_error([&](auto& o) { o.refinement_steps = reinterpret_cast<std::int32_t*>(m.a()); },
               {"refinement_steps = ", "overlaps a"});
  output_error(
      [&](auto& o) {
        o.pivoted = piv;
        o.refinement_steps = piv + 1;
      },
      {"refinement_steps = ", "overlaps pivoted"});
  output_error([&](auto& o) { o.refinement_steps = info; }, {"refinement_steps = ", "overlaps info"});
  // Valid outputs, disjoint: no error (an empty batch, nothing to solve).
  {
    tridiag_options o;
    o.info = info;
    o.pivoted = piv;
    o.refinement_steps = steps;
    BOOST_CHECK_NO_THROW(
        recur::solve_batched(ex, m.a(), m.b(), m.c(), m.d(), m.x(), layout::contiguous(n, 0), o));
  }
  Backend::finish();
}

// An empty problem (n = 0, or nrhs = 0) writes 0 to every system's info,
// pivoted and refinement_steps, and nothing else.
template <class Backend, class T>
void empty_outputs() {
  constexpr std::int64_t g = problem<T>::guard;
  std::int64_t const count = 4;
  for (int const which : {0, 1}) {
    layout const lay = which == 0 ? layout::contiguous(0, count) : layout::contiguous(8, count);
    auto p =
        tridiag_test::make_problem<T>(lay, 1, 0, tridiag_test::matrix_kind::dominant, seed_for(660, which));
    tridiag_options opt;
    opt.pivoting = tridiag_pivoting::partial;
    p.nrhs = which == 0 ? 1 : 0;
    auto const out = run_options<Backend>(p, opt, false);
    BOOST_TEST_REQUIRE(!out.refused, out.what);
    for (auto const* v : {&out.info, &out.pivoted, &out.steps}) {
      for (std::int64_t k = 0; k < count; ++k) BOOST_TEST((*v)[g + k] == 0, "empty case " << which);
      BOOST_TEST((*v)[g + count] == info_poison, "empty case " << which << ": written past count");
    }
    BOOST_TEST(recur_test::all_poison(out.x), "empty case " << which << ": x written");
  }
}

}  // namespace pivot_test
