#pragma once
// Periodic (cyclic) tridiagonal systems, sequentially: row 0 is
// a_0 x_(n-1) + b_0 x_0 + c_0 x_1 = d_0 and row n-1 is
// a_(n-1) x_(n-2) + b_(n-1) x_(n-1) + c_(n-1) x_0 = d_(n-1), n >= 3.
//
// Sherman-Morrison (e.g. Press et al., Numerical Recipes, sec. 2.7): with
//   u = (gamma, 0, ..., 0, c_(n-1))^T,  v = (1, 0, ..., 0, a_0 / gamma)^T,
// A = T + u v^T where T is A without its corners and with
//   T_00 = b_0 - gamma,  T_(n-1)(n-1) = b_(n-1) - c_(n-1) a_0 / gamma,
// a plain tridiagonal matrix. Then A^-1 d = y - (v^T y / (1 + v^T z)) z with
// T y = d and T z = u: two solves with one factorisation of T (z once per
// system, y once per right-hand side).
//
// gamma = -sign(b_0) max(|a_0|, |b_0|, |c_0|) (sign(0) = 1). On a diagonally
// dominant row 0 that is -b_0, the usual choice, which makes T_00 = 2 b_0
// and keeps T diagonally dominant when A is (|c_(n-1) a_0 / b_0| <
// |c_(n-1)|). Elsewhere it still adds no cancellation to T_00 (|T_00| =
// |b_0| + |gamma|) and changes T_(n-1)(n-1) by at most |c_(n-1)|, where
// gamma = -b_0 would let a tiny b_0 put a huge entry there. A zero row 0
// (gamma 0, or not a usable divisor) is a breakdown at row 1.
//
// The factorisation of T follows tridiag_options::pivoting (factor in
// tridiag_pivot.hpp: the growth test of `automatic` is T's). Breakdown: T's
// row, or row n when 1 + v^T z is not a usable divisor (A is singular to
// working precision, or T is much worse conditioned than A).
//
// Accuracy: the two solves with T are backward stable, and the correction
// x = y - s z with s = v^T y / (1 + v^T z) adds their errors, so the
// residual is bounded by a small multiple of
//   eps ||A|| ||x|| max(1, rho),  rho = ||T|| (||y|| + |s| ||z||) / (||A|| ||x||),
// where rho measures the cancellation in x = y - s z (1 or near it for
// diagonally dominant A; large when 1 + v^T z is small, i.e. when T is
// nearly singular although A is not). periodic_amplification computes rho;
// doc/tridiag-internals.md, "Periodic systems", discusses it and the
// bordered alternative.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <recur/reference/tridiag_batch.hpp>
#include <recur/reference/tridiag_pivot.hpp>
#include <recur/types.hpp>

namespace recur::reference::detail {

// ||A||_inf: the largest row sum (e's corners count where they are loaded).
template <class T>
T matrix_norm(equations<T> const& e) {
  T m = 0;
  for (std::size_t i = 0; i < e.b.size(); ++i)
    m = std::fmax(m, std::fabs(e.a[i]) + std::fabs(e.b[i]) + std::fabs(e.c[i]));
  return m;
}

// A factored plain or periodic system.
template <class T>
struct factored_system {
  tridiag_lu<T> lu;  // of A (plain) or of T (periodic)
  bool periodic = false;
  std::vector<T> z;      // periodic: T^-1 u
  T w = T(0);            // periodic: v_(n-1) = a_0 / gamma
  T denominator = T(0);  // periodic: 1 + v^T z
  T split_norm = T(0);   // periodic: ||T||_inf
};

// Factors e (its corners loaded when periodic: load_system(..., true)) by
// `pivoting`. Returns 0 or the breakdown row (1-based).
template <class T>
std::int32_t factor_system(equations<T> const& e, bool periodic, tridiag_pivoting pivoting,
                           factored_system<T>& f) {
  f.periodic = periodic;
  if (!periodic) return factor(e, pivoting, f.lu);
  std::int64_t const n = static_cast<std::int64_t>(e.b.size());
  T const size = std::fmax(std::fabs(e.b[0]), std::fmax(std::fabs(e.a[0]), std::fabs(e.c[0])));
  T const gamma = std::signbit(e.b[0]) ? size : -size;
  if (!usable_pivot(gamma)) return row_number(0);
  equations<T> t = e;
  t.a[0] = T(0);
  t.c[n - 1] = T(0);
  t.b[0] = e.b[0] - gamma;
  f.w = e.a[0] / gamma;
  t.b[n - 1] = e.b[n - 1] - e.c[n - 1] * f.w;
  f.split_norm = matrix_norm(t);
  if (std::int32_t const info = factor(t, pivoting, f.lu)) return info;
  f.z.assign(static_cast<std::size_t>(n), T(0));
  f.z[0] = gamma;
  f.z[n - 1] = e.c[n - 1];
  solve_lu(f.lu, f.z);
  f.denominator = T(1) + f.z[0] + f.w * f.z[n - 1];
  if (!usable_pivot(f.denominator)) return row_number(n - 1);
  return 0;
}

// rho of the accuracy note above, for the right-hand side d (1 for a plain
// system).
template <class T>
T periodic_amplification(equations<T> const& e, factored_system<T> const& f, std::vector<T> const& d) {
  if (!f.periodic) return T(1);
  std::vector<T> y = d;
  solve_lu(f.lu, y);
  std::size_t const last = y.size() - 1;
  T const s = (y[0] + f.w * y[last]) / f.denominator;
  T yn = 0, zn = 0, xn = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    yn = std::fmax(yn, std::fabs(y[i]));
    zn = std::fmax(zn, std::fabs(f.z[i]));
    xn = std::fmax(xn, std::fabs(y[i] - s * f.z[i]));
  }
  return f.split_norm * (yn + std::fabs(s) * zn) / (matrix_norm(e) * xn);
}

// x = A^-1 v in place, by a factorisation that returned 0.
template <class T>
void solve_factored(factored_system<T> const& f, std::vector<T>& v) {
  solve_lu(f.lu, v);
  if (!f.periodic) return;
  std::size_t const last = v.size() - 1;
  T const s = (v[0] + f.w * v[last]) / f.denominator;
  for (std::size_t i = 0; i < v.size(); ++i) v[i] -= s * f.z[i];
}

// r = d - A x in T's arithmetic; periodic: the corners couple x_0 and x_(n-1).
template <class T>
void residual(equations<T> const& e, bool periodic, std::vector<T> const& x, std::vector<T> const& d,
              std::vector<T>& r) {
  std::int64_t const n = static_cast<std::int64_t>(x.size());
  r.resize(x.size());
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t const lo = i > 0 ? i - 1 : n - 1, hi = i + 1 < n ? i + 1 : 0;
    bool const wraps_lo = i == 0, wraps_hi = i + 1 == n;
    T acc = d[i] - e.b[i] * x[i];
    if (!wraps_lo || periodic) acc -= e.a[i] * x[lo];
    if (!wraps_hi || periodic) acc -= e.c[i] * x[hi];
    r[i] = acc;
  }
}

}  // namespace recur::reference::detail
