#pragma once
// Mixed-precision iterative refinement of one double-precision system
// (tridiag_options::refinement = mixed), sequentially: Goeddeke and
// Strzodka's scheme (2011, sec. 2.5) with a direct solver inside, and
// LAPACK's dsgesv's rules around it.
//
// The matrix is scaled by a power of two (exactly) so that its largest row
// sum lies in [1, 2), rounded to float and factored once in float, with the
// pivoting that tridiag_options::pivoting asks for (automatic: the growth
// test on the float factors). Each right-hand side then starts from x = 0
// with residual r = d and repeats
//   c = the float solve of r (r scaled by a power of two into [1, 2) first,
//       so that small residuals do not underflow float),
//   x = x + c,  r = d - A x  (in double),
// until the normwise backward error (Rigal and Gaches; Higham, Accuracy and
// Stability of Numerical Algorithms, sec. 7.1)
//   eta = ||r||_inf / (||A||_inf ||x||_inf + ||d||_inf)
// is at most refinement_tolerance * eps(double), which the double solve
// itself reaches (doc/tridiag-internals.md, "Mixed-precision refinement",
// gives the figures).
// The first float solve is not a correction; steps counts the corrections
// after it. A right-hand side that has not reached the tolerance after
// max_refinement_steps corrections, or whose x or r stops being finite, is
// solved again from d in double (as dsgesv falls back to dgesv), and the
// system reports -1 steps; so does one whose float factorisation breaks
// down (a pivot the float range cannot hold). Either way x is the double
// solve's then, and so is info.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <recur/reference/tridiag_batch.hpp>
#include <recur/reference/tridiag_periodic.hpp>
#include <recur/types.hpp>

namespace recur::reference::detail {

// eta <= refinement_tolerance * eps(double) ends the refinement.
inline constexpr double refinement_tolerance = 2;

// What one system's solve reports: tridiag_options' info, pivoted and
// refinement_steps.
struct system_outcome {
  std::int32_t info = 0;
  std::int32_t pivoted = 0;
  std::int32_t steps = 0;
};

// ||v||_inf, infinite where v holds a NaN (which fmax would drop).
inline double max_abs(std::vector<double> const& v) {
  double m = 0;
  for (double const x : v) {
    if (std::isnan(x)) return std::numeric_limits<double>::infinity();
    m = std::fmax(m, std::fabs(x));
  }
  return m;
}

// One right-hand side d: x refined with the float factors f of 2^scale A.
// Returns the corrections taken, or -1 where it gave up.
inline std::int32_t refine_rhs(equations<double> const& e, bool periodic, double norm_a,
                               factored_system<float> const& f, int scale, std::vector<double> const& d,
                               std::vector<double>& x, int max_steps) {
  std::size_t const n = d.size();
  double const norm_d = max_abs(d);
  if (!std::isfinite(norm_d)) return -1;
  double const tol = refinement_tolerance * std::numeric_limits<double>::epsilon();
  x.assign(n, 0.0);
  std::vector<double> r = d;
  std::vector<float> c(n);
  for (int step = 0;; ++step) {
    double const rn = max_abs(r);
    if (rn == 0) return step;  // x is exact (d = 0, or a solve that lands on it)
    // A c = r is 2^scale A (2^(-scale-k) c) = 2^-k r, |2^-k r| in [1, 2).
    int const k = std::ilogb(rn);
    for (std::size_t i = 0; i < n; ++i) c[i] = static_cast<float>(std::ldexp(r[i], -k));
    solve_factored(f, c);
    for (std::size_t i = 0; i < n; ++i) x[i] += std::ldexp(static_cast<double>(c[i]), scale + k);
    residual(e, periodic, x, d, r);
    double const xn = max_abs(x), rn_new = max_abs(r);
    if (!std::isfinite(xn) || !std::isfinite(rn_new)) return -1;
    if (rn_new <= tol * (norm_a * xn + norm_d)) return step;
    if (step >= max_steps) return -1;
  }
}

// A double system (e: its corners loaded when periodic) refined for each of
// the right-hand sides v[r], which receive the solutions (NaN where the
// system broke down).
inline system_outcome solve_refined(equations<double> const& e, std::vector<std::vector<double>>& v,
                                    bool periodic, tridiag_pivoting pivoting, int max_steps) {
  system_outcome out;
  std::size_t const n = e.b.size();
  double const norm_a = matrix_norm(e);
  // 2^scale A has its largest row sum in [1, 2) (scale 0 for a zero or
  // non-finite matrix, whose float factorisation breaks down).
  int const scale = norm_a > 0 && std::isfinite(norm_a) ? -std::ilogb(norm_a) : 0;
  equations<float> e32{std::vector<float>(n), std::vector<float>(n), std::vector<float>(n), {}};
  for (std::size_t i = 0; i < n; ++i) {
    e32.a[i] = static_cast<float>(std::ldexp(e.a[i], scale));
    e32.b[i] = static_cast<float>(std::ldexp(e.b[i], scale));
    e32.c[i] = static_cast<float>(std::ldexp(e.c[i], scale));
  }
  factored_system<float> f32;
  bool const factored = factor_system(e32, periodic, pivoting, f32) == 0;
  out.pivoted = f32.lu.pivoted;
  std::vector<std::size_t> fallback;
  std::vector<double> x;
  for (std::size_t r = 0; r < v.size(); ++r) {
    std::int32_t const steps =
        factored ? refine_rhs(e, periodic, norm_a, f32, scale, v[r], x, max_steps) : -1;
    if (steps < 0) {
      fallback.push_back(r);
    } else {
      out.steps = std::max(out.steps, steps);
      v[r] = x;
    }
  }
  if (fallback.empty()) return out;
  out.steps = -1;
  factored_system<double> f64;
  out.info = factor_system(e, periodic, pivoting, f64);
  out.pivoted |= f64.lu.pivoted;
  if (out.info) {
    for (auto& s : v) std::fill(s.begin(), s.end(), std::numeric_limits<double>::quiet_NaN());
    return out;
  }
  for (std::size_t const r : fallback) solve_factored(f64, v[r]);
  return out;
}

}  // namespace recur::reference::detail
