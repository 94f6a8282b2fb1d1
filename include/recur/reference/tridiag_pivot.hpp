#pragma once
// Sequential references for tridiagonal systems that need pivoting: the
// factorisations behind tridiag_options::pivoting, one system at a time.
//
// - factor_thomas: Gaussian elimination without pivoting in the arithmetic
//   of reference::detail::thomas_one (so it gives its bits), which also
//   measures the growth of the LU factors.
// - factor_pivoted: Gaussian elimination with row partial pivoting, LAPACK's
//   ?gttrf; with solve_lu's substitutions (?gtts2) it is ?gtsv's arithmetic,
//   operation for operation. Where row i + 1 has the larger entry in column
//   i the rows change places, and U gains a second superdiagonal.
// - factor: one of them by tridiag_pivoting (automatic: factor_thomas,
//   replaced by factor_pivoted when the growth test fails).
//
// The growth test of `pivoting = automatic`. With A = L U the no-pivot
// factors (l_i = a_i / u_(i-1), u_i the Thomas pivots), the computed factors
// are the exact ones of A + dA with |dA| <= c eps |L| |U| for a small
// constant c (Higham, Accuracy and Stability of Numerical Algorithms, 2nd
// ed., ch. 9, tridiagonal matrices), and the substitutions add a term of
// the same form. Row i of |L| |U| is (|a_i|, |l_i| |c_(i-1)| + |u_i|,
// |c_i|): only the diagonal term can exceed A's own entries. So
//   gamma = max_i (|l_i| |c_(i-1)| + |u_i|) / max_i (|a_i| + |b_i| + |c_i|)
// bounds the growth of the backward error over A's size, and a system is
// accepted without pivoting when gamma <= lu_growth_bound and every pivot is
// usable. (|l_i| |c_(i-1)| = |a_i c'_(i-1)| with c'_(i-1) = c_(i-1) / u_(i-1),
// a product Thomas forms anyway.) For a matrix diagonally dominant by rows,
// |c_(i-1) / u_(i-1)| <= 1 and |u_i| <= |b_i| + |a_i|, so gamma <= 2; for a
// symmetric positive definite one the two terms add to b_i, so gamma <= 1.
// The bound 16 leaves room above those classes for matrices that are close
// to them (the no-pivot solve is then still accurate to a few eps) and
// sends the systems whose pivots grow by orders of magnitude, like a tiny
// first pivot, to partial pivoting, whose growth factor is at most 2 on a
// tridiagonal matrix (Higham ch. 9).
//
// Breakdown: a factorisation returns the row (1-based) of the first unusable
// pivot (usable_pivot: zero or not finite; in float also outside 2^-126 <=
// |p| < 2^126), 0 when every pivot is usable. For factor_pivoted that is
// the first zero diagonal entry of U, LAPACK's info, where LAPACK proceeds
// past a non-zero one that is unusable here.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include <recur/layout/layout.hpp>
#include <recur/reference/tridiag_batch.hpp>
#include <recur/types.hpp>

namespace recur::reference {
namespace detail {

// gamma <= lu_growth_bound accepts the no-pivot LU (see the top of this file).
inline constexpr int lu_growth_bound = 16;

// The growth test on its two running maxima, written without a division: a
// NaN (or an infinite numerator) fails.
template <class T>
bool growth_acceptable(T numerator, T denominator) {
  return numerator <= T(lu_growth_bound) * denominator;
}

// One system's LU factors.
// - pivoted = false (factor_thomas): u the pivots p_i, u1 the c'_i = c_i / p_i,
//   l the a_i (the forward substitution d'_i = (d_i - a_i d'_(i-1)) / p_i
//   uses them as thomas_one does).
// - pivoted = true (factor_pivoted, ?gttrf's storage): l the multipliers,
//   u the diagonal of U, u1 and u2 its two superdiagonals, swap[i] set where
//   rows i and i + 1 changed places.
// growth_numerator / growth_denominator: gamma of the no-pivot LU
// (factor_thomas only; the numerator is infinite when a pivot is unusable).
template <class T>
struct tridiag_lu {
  bool pivoted = false;
  std::vector<T> l, u, u1, u2;
  std::vector<unsigned char> swap;
  T growth_numerator = T(0), growth_denominator = T(0);

  T growth() const { return growth_numerator / growth_denominator; }
  bool growth_acceptable() const { return detail::growth_acceptable(growth_numerator, growth_denominator); }
};

// Thomas' elimination as thomas_one performs it, and the growth gamma.
template <class T>
std::int32_t factor_thomas(equations<T> const& e, tridiag_lu<T>& f) {
  std::int64_t const n = static_cast<std::int64_t>(e.b.size());
  f.pivoted = false;
  f.l = e.a;
  f.u.assign(n, T(0));
  f.u1.assign(n, T(0));
  f.u2.clear();
  f.swap.clear();
  T c_prev = 0;
  growth_maxima<T> g;
  for (std::int64_t i = 0; i < n; ++i) {
    T const p = e.b[i] - e.a[i] * c_prev;
    g.row(e.a[i] * c_prev, p, e.a[i], e.b[i], e.c[i]);
    if (!usable_pivot(p)) {
      f.growth_numerator = std::numeric_limits<T>::infinity();
      f.growth_denominator = g.denominator;
      return row_number(i);
    }
    f.u[i] = p;
    c_prev = f.u1[i] = e.c[i] / p;
  }
  f.growth_numerator = g.numerator;
  f.growth_denominator = g.denominator;
  return 0;
}

// ?gttrf: row partial pivoting, the larger of |u_i| and |a_(i+1)| the pivot
// of column i (ties keep the rows), as LAPACK compares them.
template <class T>
std::int32_t factor_pivoted(equations<T> const& e, tridiag_lu<T>& f) {
  std::int64_t const n = static_cast<std::int64_t>(e.b.size());
  f.pivoted = true;
  f.l.assign(n, T(0));  // l[i]: multiplier of column i (i < n - 1)
  f.u = e.b;
  f.u1.assign(n, T(0));
  f.u2.assign(n, T(0));
  f.swap.assign(n, 0);
  for (std::int64_t i = 0; i + 1 < n; ++i) f.l[i] = e.a[i + 1], f.u1[i] = e.c[i];
  for (std::int64_t i = 0; i + 1 < n; ++i) {
    if (std::fabs(f.u[i]) >= std::fabs(f.l[i])) {  // no interchange
      if (!usable_pivot(f.u[i])) return row_number(i);
      T const fact = f.l[i] / f.u[i];
      f.l[i] = fact;
      f.u[i + 1] -= fact * f.u1[i];
    } else {  // rows i and i + 1 change places
      T const fact = f.u[i] / f.l[i];
      f.u[i] = f.l[i];
      f.l[i] = fact;
      T const temp = f.u1[i];
      f.u1[i] = f.u[i + 1];
      f.u[i + 1] = temp - fact * f.u[i + 1];
      if (i + 2 < n) {
        f.u2[i] = f.u1[i + 1];
        f.u1[i + 1] = -fact * f.u1[i + 1];
      }
      f.swap[i] = 1;
      if (!usable_pivot(f.u[i])) return row_number(i);
    }
  }
  if (!usable_pivot(f.u[n - 1])) return row_number(n - 1);
  return 0;
}

// The factorisation `pivoting` asks for: none, factor_thomas; partial,
// factor_pivoted; automatic, factor_thomas, replaced by factor_pivoted where
// a pivot is unusable or the growth test fails (f.pivoted says which).
template <class T>
std::int32_t factor(equations<T> const& e, tridiag_pivoting pivoting, tridiag_lu<T>& f) {
  if (pivoting == tridiag_pivoting::partial) return factor_pivoted(e, f);
  std::int32_t const info = factor_thomas(e, f);
  if (pivoting == tridiag_pivoting::none) return info;
  if (info == 0 && f.growth_acceptable()) return 0;
  return factor_pivoted(e, f);
}

// x = A^-1 v in place, by the factors of a factorisation that returned 0.
template <class T>
void solve_lu(tridiag_lu<T> const& f, std::vector<T>& v) {
  std::int64_t const n = static_cast<std::int64_t>(v.size());
  if (!f.pivoted) {  // thomas_one's substitutions
    T d_prev = 0;
    for (std::int64_t i = 0; i < n; ++i) d_prev = v[i] = (v[i] - f.l[i] * d_prev) / f.u[i];
    for (std::int64_t i = n - 2; i >= 0; --i) v[i] = v[i] - f.u1[i] * v[i + 1];
    return;
  }
  // ?gtts2: L (with the interchanges), then U.
  for (std::int64_t i = 0; i + 1 < n; ++i) {
    if (!f.swap[i]) {
      v[i + 1] -= f.l[i] * v[i];
    } else {
      T const temp = v[i];
      v[i] = v[i + 1];
      v[i + 1] = temp - f.l[i] * v[i];
    }
  }
  v[n - 1] /= f.u[n - 1];
  if (n > 1) v[n - 2] = (v[n - 2] - f.u1[n - 2] * v[n - 1]) / f.u[n - 2];
  for (std::int64_t i = n - 3; i >= 0; --i) v[i] = (v[i] - f.u1[i] * v[i + 1] - f.u2[i] * v[i + 2]) / f.u[i];
}

// The pivoted Thomas as a per-system solver of for_each_system.
template <class T>
std::int32_t thomas_pivoted_one(equations<T> const& e, std::vector<T> d, std::vector<T>& x) {
  tridiag_lu<T> f;
  if (std::int32_t const info = factor_pivoted(e, f)) return info;
  solve_lu(f, d);
  x = std::move(d);
  return 0;
}

}  // namespace detail

// Gaussian elimination with partial pivoting, system by system, in ?gtsv's
// arithmetic. Layout, nrhs/rhs_stride, aliasing and info conventions: those
// of reference/tridiag.hpp (a[0] and c[n-1] are not read).
template <class T>
void thomas_pivoted(T const* a, T const* b, T const* c, T const* d, T* x, layout const& lay,
                    std::int64_t nrhs = 1, std::int64_t rhs_stride = 0, std::int32_t* info = nullptr) {
  detail::require_tridiag("thomas_pivoted", a, b, c, d, x, lay, nrhs, rhs_stride);
  detail::for_each_system(a, b, c, d, x, lay, nrhs, rhs_stride, info, [](auto const& e, auto rhs, auto& xs) {
    return detail::thomas_pivoted_one(e, std::move(rhs), xs);
  });
}

}  // namespace recur::reference
