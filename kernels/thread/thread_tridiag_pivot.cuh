#pragma once
// One tridiagonal system solved by one thread with every tridiag_options
// field: pivoting (none, automatic, partial), periodic systems and mixed
// refinement, several right-hand sides on one factorisation. Plain C++ (host
// and device), no CUDA header: the GPU's pivoted form
// (kernels/agent/agent_tridiag_pivot.cuh) runs these functions, and the CPU
// tests (test/test_tridiag_pivot_thread.cpp) run the same ones against
// LAPACK and the references (include/recur/reference/tridiag_pivot.hpp,
// tridiag_periodic.hpp, tridiag_refine.hpp), whose methods they follow:
//
// - Thomas (pivoting none, and automatic's first attempt): the GPU's
//   no-pivot arithmetic, thread_tridiag.cuh's thomas_factor and its
//   substitutions, which the Thomas tile (block_tridiag.cuh's thread_thomas)
//   runs too: p_i = b_i - a_i c'_(i-1), r_i = 1 / p_i, c'_i = c_i r_i,
//   d'_i = (d_i - a_i d'_(i-1)) r_i, x_i = d'_i - c'_i x_(i+1); so automatic
//   gives the tile's bits where it does not pivot. automatic measures the
//   growth of the no-pivot LU as it factors (reference::detail::
//   factor_thomas's numerator and denominator, growth_acceptable) and
//   factors again with partial pivoting where the test fails or a pivot is
//   unusable; the Thomas attempt writes only the workspace, so d is intact
//   for the second.
// - Partial pivoting: LAPACK's ?gttrf streamed row by row (rows i and i + 1
//   change places where |u_i| < |a_(i+1)|) and ?gtts2's substitutions, in
//   their arithmetic (the reference's factor_pivoted and solve_lu):
//   thread_tridiag.cuh's gtsv_factor and its substitutions, which the tile's
//   thread_gtsv runs too.
// - Periodic (n >= 3): the reference's Sherman-Morrison split (gamma, T, z =
//   T^-1 u once per system, then x = y - s z per right-hand side).
// - Refinement (double systems): the reference's solve_refined: 2^scale A
//   factored in float, each right-hand side refined with double residuals
//   until its backward error is at most refinement_tolerance eps, else (or
//   where the float factorisation breaks down) solved in double.
//
// Storage: the factors live in a per-system workspace of planes (word j of
// row i at p[(j n + i) stride]; stride = the batch's count on the GPU, so
// adjacent threads touch adjacent words): pivot_planes_needed planes of the
// factorisation's type. A right-hand side is read through a strided vector
// and its solution written through another, which may be the same memory
// (x aliasing d): every substitution reads element i + 1 of the input
// before it writes element i + 1 of the output.

#include <cmath>
#include <cstdint>
#include <limits>

#include <recur/config.hpp>
#include <recur/types.hpp>

#include "thread_tridiag.cuh"

namespace recur::kernels {

// gamma <= pivot_growth_bound accepts the no-pivot LU
// (reference::detail::lu_growth_bound).
inline constexpr int pivot_growth_bound = 16;
// Refinement ends at a backward error of refinement_tolerance eps(double)
// (reference::detail::refinement_tolerance).
inline constexpr double pivot_refinement_tolerance = 2;

// Workspace planes of one factorisation: 0 u (Thomas: r = 1 / p), 1 u1
// (Thomas: c'), 2 u2, 3 l (Thomas: a), 4 the interchange flags, 5 z
// (periodic).
inline constexpr int pivot_planes_needed = 6;

template <class F>
struct pivot_planes {
  F* p;
  std::int64_t n, stride;
  RECUR_HD F& operator()(int j, std::int64_t i) const { return p[(j * n + i) * stride]; }
};

// Element i of a right-hand side or solution at p[i * stride].
template <class F>
struct pivot_vector {
  F* p;
  std::int64_t stride;
  RECUR_HD F& operator[](std::int64_t i) const { return p[i * stride]; }
};

template <class F>
struct pivot_row {
  F a, b, c;
};

// One factored system: which factorisation the planes hold, and the
// periodic split's scalars.
template <class F>
struct pivot_factors {
  bool pivoted = false;
  bool periodic = false;
  F w = F(0);            // a_0 / gamma
  F denominator = F(1);  // 1 + v^T z
};

template <class F>
RECUR_HD inline F pivot_abs(F v) {
  return v < F(0) ? -v : v;
}
// max as std::max: a NaN second argument is dropped.
template <class F>
RECUR_HD inline F pivot_max(F m, F v) {
  return m < v ? v : m;
}

// Thomas' elimination (thread_tridiag.cuh's thomas_factor) with the growth
// test, factors to the planes (r, c', a). Returns 0 or the first row
// (1-based) with an unusable pivot; growth_ok: the growth test passed (false
// on breakdown).
template <class F, class RowsT>
RECUR_HD int pivot_factor_thomas(RowsT const& row, std::int64_t n, pivot_planes<F> const& ws,
                                 bool& growth_ok) {
  F numerator = 0, denominator = 0;
  int const info = thomas_factor<true, 1>(
      indexed_rows<RowsT>{{}, row}, n, [&](std::int64_t i, F a, F b, F c, F p, F r, F cp, F) {
        // |l_i c_(i-1)| = |a_i c'_(i-1)| as |b_i - p_i|: the product is not
        // formed apart from p, so the device fuses p's multiply-add as the
        // Thomas forms do (their bits), and the test differs from the
        // reference's by rounding only.
        numerator = pivot_max(numerator, pivot_abs(b - p) + pivot_abs(p));
        denominator = pivot_max(denominator, pivot_abs(a) + pivot_abs(b) + pivot_abs(c));
        ws(0, i) = r;
        ws(1, i) = cp;
        ws(3, i) = a;
      });
  growth_ok = info == 0 && numerator <= F(pivot_growth_bound) * denominator;
  return info;
}

// gtsv_factor, factors to the planes (u, u1, u2, l, flags).
template <class F, class RowsT>
RECUR_HD int pivot_factor_partial(RowsT const& row, std::int64_t n, pivot_planes<F> const& ws) {
  return gtsv_factor<true>(
      indexed_rows<RowsT>{{}, row}, n,
      [&](std::int64_t i, pivot_row<F> const&, gtsv_u_row<F> const& u, F l, bool swapped) {
        ws(0, i) = u.u, ws(1, i) = u.u1, ws(2, i) = u.u2, ws(3, i) = l, ws(4, i) = swapped ? F(1) : F(0);
      },
      [&](std::int64_t i, F u) { ws(0, i) = u, ws(1, i) = F(0), ws(2, i) = F(0); });
}

// The substitutions of a factorisation that returned 0: out = A^-1 in (out
// may be in).
template <class F, class In>
RECUR_HD void pivot_substitute(bool pivoted, pivot_planes<F> const& ws, std::int64_t n, pivot_vector<In> in,
                               pivot_vector<F> out) {
  auto const x = [&](std::int64_t i) -> F& { return out[i]; };
  if (!pivoted) {
    F y = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      y = thomas_rhs(F(in[i]), ws(3, i), y, ws(0, i));
      out[i] = y;
    }
    thomas_back(index_places{}, n, y, x, [&](std::int64_t i) { return ws(1, i); });
    return;
  }
  // ?gtts2: L with the interchanges (carry is row i's value being
  // eliminated), then U.
  F carry = in[0];
  for (std::int64_t i = 0; i + 1 < n; ++i) {
    F const next = in[i + 1];
    F const l = ws(3, i);
    out[i] = gtsv_rhs(ws(4, i) != F(0), l, carry, next);
  }
  out[n - 1] = carry;
  gtsv_back(index_places{}, n, x, [&](std::int64_t i) {
    return gtsv_u_row<F>{ws(0, i), ws(1, i), ws(2, i)};
  });
}

// The periodic split's gamma for row 0 (a_0, b_0, c_0): the largest of
// |a_0|, |b_0|, |c_0| with the sign opposite to b_0's, so that b_0 - gamma
// does not cancel and a_0 / gamma is at most 1 in magnitude. The split is
// usable where gamma is (usable_pivot); otherwise row 0 is zero (or not
// finite) and the system breaks down at row 1. The pivoted form and the
// split around the fast forms (agent_tridiag_periodic.cuh) both take it.
template <class F>
RECUR_HD F pivot_periodic_gamma(pivot_row<F> const& r0) {
  F const size = pivot_max(pivot_abs(r0.b), pivot_max(pivot_abs(r0.a), pivot_abs(r0.c)));
  return std::signbit(r0.b) ? size : -size;
}

// Factors the system of rows row(i) (periodic: the corners loaded, n >= 3;
// plain: a_0 = c_(n-1) = 0) by `pivoting` into the planes and f. Returns 0
// or the breakdown row (1-based): a pivot, row 1 for a zero row 0 of a
// periodic system, row n for its correction's divisor.
template <class F, class RowsT>
RECUR_HD int pivot_factor(RowsT const& row, std::int64_t n, bool periodic, tridiag_pivoting pivoting,
                          pivot_planes<F> const& ws, pivot_factors<F>& f) {
  f = pivot_factors<F>{};
  f.periodic = periodic;
  F gamma = 0, corner = 0;  // corner: c_(n-1)
  if (periodic) {
    pivot_row<F> const r0 = row(0);
    gamma = pivot_periodic_gamma(r0);
    if (!usable_pivot(gamma)) return 1;
    f.w = r0.a / gamma;
  }
  // The split's T: row 0 without a_0 and b_0 - gamma; row n-1 without
  // c_(n-1) and b_(n-1) - c_(n-1) w.
  auto const split = [&](std::int64_t i) {
    pivot_row<F> e = row(i);
    if (!periodic) return e;
    if (i == 0) {
      e.a = F(0);
      e.b = e.b - gamma;
    }
    if (i == n - 1) {
      corner = e.c;
      e.b = e.b - e.c * f.w;
      e.c = F(0);
    }
    return e;
  };
  int info = 0;
  bool growth_ok = false;
  if (pivoting != tridiag_pivoting::partial) {
    info = pivot_factor_thomas(split, n, ws, growth_ok);
    if (pivoting == tridiag_pivoting::none && info) return info;
  }
  bool const thomas_failed = pivoting == tridiag_pivoting::automatic && !(info == 0 && growth_ok);
  if (pivoting == tridiag_pivoting::partial || thomas_failed) {
    f.pivoted = true;
    info = pivot_factor_partial(split, n, ws);
    if (info) return info;
  }
  if (!periodic) return 0;
  // z = T^-1 (gamma, 0, ..., 0, c_(n-1)), in plane 5.
  pivot_vector<F> const z{&ws(5, 0), ws.stride};
  for (std::int64_t i = 0; i < n; ++i) z[i] = i == 0 ? gamma : i == n - 1 ? corner : F(0);
  pivot_substitute(f.pivoted, ws, n, z, z);
  f.denominator = F(1) + z[0] + f.w * z[n - 1];
  if (!usable_pivot(f.denominator)) return static_cast<int>(n);
  return 0;
}

// out = A^-1 in by a factorisation that returned 0 (out may be in).
template <class F, class In>
RECUR_HD void pivot_solve(pivot_factors<F> const& f, pivot_planes<F> const& ws, std::int64_t n,
                          pivot_vector<In> in, pivot_vector<F> out) {
  pivot_substitute(f.pivoted, ws, n, in, out);
  if (!f.periodic) return;
  F const s = (out[0] + f.w * out[n - 1]) / f.denominator;
  for (std::int64_t i = 0; i < n; ++i) out[i] = out[i] - s * ws(5, i);
}

// ------------------------------------------------------------ one system ---

// System k of a batch: row i at base + i * element_stride of a, b and c,
// right-hand side r at the same offsets + r * rhs_stride of d and x.
template <class T>
struct pivot_system {
  T const* a;
  T const* b;
  T const* c;
  T const* d;
  T* x;
  std::int64_t n, base, element_stride, nrhs, rhs_stride;
  bool periodic;

  // Row i in F (scaled by 2^scale first): the corners zero unless periodic.
  template <class F = T>
  RECUR_HD pivot_row<F> row(std::int64_t i, int scale = 0) const {
    std::int64_t const o = base + i * element_stride;
    T const ai = i > 0 || periodic ? a[o] : T(0);
    T const ci = i + 1 < n || periodic ? c[o] : T(0);
    if (scale == 0) return {static_cast<F>(ai), static_cast<F>(b[o]), static_cast<F>(ci)};
    return {static_cast<F>(std::ldexp(ai, scale)), static_cast<F>(std::ldexp(b[o], scale)),
            static_cast<F>(std::ldexp(ci, scale))};
  }
  RECUR_HD pivot_vector<T const> rhs(std::int64_t r) const {
    return {d + base + r * rhs_stride, element_stride};
  }
  RECUR_HD pivot_vector<T> sol(std::int64_t r) const { return {x + base + r * rhs_stride, element_stride}; }
};

// What one system's solve reports (tridiag_options' info, pivoted,
// refinement_steps).
struct pivot_outcome {
  int info = 0;
  int pivoted = 0;
  int steps = 0;
};

template <class T>
RECUR_HD void pivot_fill_nan(pivot_system<T> const& s) {
  for (std::int64_t r = 0; r < s.nrhs; ++r)
    for (std::int64_t i = 0; i < s.n; ++i) s.sol(r)[i] = std::numeric_limits<T>::quiet_NaN();
}

// The whole system in its own precision: factored once, every right-hand
// side solved into x (NaN, all of them, on breakdown).
template <class T>
RECUR_HD pivot_outcome pivot_solve_system(pivot_system<T> const& s, tridiag_pivoting pivoting,
                                          pivot_planes<T> const& ws) {
  pivot_factors<T> f;
  pivot_outcome out;
  out.info = pivot_factor([&](std::int64_t i) { return s.row(i); }, s.n, s.periodic, pivoting, ws, f);
  out.pivoted = f.pivoted ? 1 : 0;
  if (out.info) {
    pivot_fill_nan(s);
    return out;
  }
  for (std::int64_t r = 0; r < s.nrhs; ++r) {
    pivot_solve(f, ws, s.n, s.rhs(r), s.sol(r));
  }
  return out;
}

// ------------------------------------------------------------ refinement ---

// ||v||_inf of n values, infinite where one is NaN.
template <class V>
RECUR_HD double pivot_norm(V const& v, std::int64_t n) {
  double m = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    double const e = static_cast<double>(v[i]);
    if (e != e) return std::numeric_limits<double>::infinity();
    m = pivot_max(m, pivot_abs(e));
  }
  return m;
}

// The refinement's workspace of one system: the float factors (and the
// float solve's vector in plane 6), x and r in double, and the double
// factors of the fallback.
struct pivot_refine_planes {
  pivot_planes<float> lo;   // pivot_planes_needed + 1 planes
  pivot_planes<double> xr;  // 2 planes: x, r
  pivot_planes<double> hi;  // pivot_planes_needed planes
};

// One right-hand side refined (reference::detail::refine_rhs): the
// corrections taken, or -1 where it gives up. x and r in ws.xr.
RECUR_HD inline int pivot_refine_rhs(pivot_system<double> const& s, double norm_a,
                                     pivot_factors<float> const& f, int scale, pivot_refine_planes const& ws,
                                     std::int64_t rhs, int max_steps) {
  std::int64_t const n = s.n;
  pivot_vector<double const> const d = s.rhs(rhs);
  pivot_vector<double> const x{&ws.xr(0, 0), ws.xr.stride}, r{&ws.xr(1, 0), ws.xr.stride};
  pivot_vector<float> const c{&ws.lo(pivot_planes_needed, 0), ws.lo.stride};
  double const norm_d = pivot_norm(d, n);
  if (!(norm_d < std::numeric_limits<double>::infinity())) return -1;
  double const tol = pivot_refinement_tolerance * std::numeric_limits<double>::epsilon();
  for (std::int64_t i = 0; i < n; ++i) x[i] = 0, r[i] = d[i];
  for (int step = 0;; ++step) {
    double const rn = pivot_norm(r, n);
    if (rn == 0) return step;
    int const k = std::ilogb(rn);
    for (std::int64_t i = 0; i < n; ++i) c[i] = static_cast<float>(std::ldexp(r[i], -k));
    pivot_solve(f, ws.lo, n, c, c);
    for (std::int64_t i = 0; i < n; ++i) x[i] += std::ldexp(static_cast<double>(c[i]), scale + k);
    // r = d - A x, as reference::detail::residual forms it.
    for (std::int64_t i = 0; i < n; ++i) {
      pivot_row<double> const e = s.row(i);
      double acc = d[i] - e.b * x[i];
      if (i > 0 || s.periodic) acc -= e.a * x[i > 0 ? i - 1 : n - 1];
      if (i + 1 < n || s.periodic) acc -= e.c * x[i + 1 < n ? i + 1 : 0];
      r[i] = acc;
    }
    double const xn = pivot_norm(x, n), rn_new = pivot_norm(r, n);
    double const inf = std::numeric_limits<double>::infinity();
    if (!(xn < inf) || !(rn_new < inf)) return -1;
    if (rn_new <= tol * (norm_a * xn + norm_d)) return step;
    if (step >= max_steps) return -1;
  }
}

// A double system refined (reference::detail::solve_refined): x receives
// each right-hand side's refined solution, or the double solve's where the
// refinement gives up (steps -1 then).
RECUR_HD inline pivot_outcome pivot_refine_system(pivot_system<double> const& s, tridiag_pivoting pivoting,
                                                  int max_steps, pivot_refine_planes const& ws) {
  std::int64_t const n = s.n;
  pivot_outcome out;
  double norm_a = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    pivot_row<double> const e = s.row(i);
    double const sum = pivot_abs(e.a) + pivot_abs(e.b) + pivot_abs(e.c);
    norm_a = sum != sum ? norm_a : pivot_max(norm_a, sum);  // fmax drops a NaN
  }
  int const scale = norm_a > 0 && norm_a < std::numeric_limits<double>::infinity() ? -std::ilogb(norm_a) : 0;
  pivot_factors<float> f32;
  bool const factored = pivot_factor([&](std::int64_t i) { return s.row<float>(i, scale); }, n, s.periodic,
                                     pivoting, ws.lo, f32) == 0;
  out.pivoted = f32.pivoted ? 1 : 0;
  bool fell_back = false;
  pivot_factors<double> f64;
  for (std::int64_t r = 0; r < s.nrhs; ++r) {
    int const steps = factored ? pivot_refine_rhs(s, norm_a, f32, scale, ws, r, max_steps) : -1;
    if (steps >= 0) {
      out.steps = steps > out.steps ? steps : out.steps;
      pivot_vector<double> const x = s.sol(r);
      for (std::int64_t i = 0; i < n; ++i) x[i] = ws.xr(0, i);
      continue;
    }
    // The double solve takes over, factored at the first right-hand side
    // that needs it.
    if (!fell_back) {
      fell_back = true;
      out.info = pivot_factor([&](std::int64_t i) { return s.row(i); }, n, s.periodic, pivoting, ws.hi, f64);
      out.pivoted |= f64.pivoted ? 1 : 0;
    }
    if (out.info == 0) pivot_solve(f64, ws.hi, n, s.rhs(r), s.sol(r));
  }
  if (fell_back) out.steps = -1;
  if (out.info) pivot_fill_nan(s);
  return out;
}

}  // namespace recur::kernels
