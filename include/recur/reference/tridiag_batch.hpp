#pragma once
// The batch around the tridiagonal references of reference/tridiag.hpp: the
// pivot rule, one system's equations copied out of a layout, the argument
// checks, and the loop that solves every right-hand side of every system and
// stores x by the conventions stated there (x may alias d; a broken-down
// system's x is NaN).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <recur/layout/layout.hpp>
#include <recur/reference/arguments.hpp>

namespace recur::reference::detail {

// A pivot the algorithm can divide by: non-zero and finite.
// float: 2^-126 <= |p| < 2^126, a normal number whose reciprocal is normal
// too (a subnormal pivot, or one of 2^126 or more, is a breakdown; the GPU
// kernels' rule, kernels/thread/thread_tridiag.cuh's usable_pivot).
template <class T>
bool usable_pivot(T p) {
  if constexpr (sizeof(T) == 4) {
    T const m = std::fabs(p);
    return m >= T(0x1p-126) && m < T(0x1p126);
  } else {
    return p != T(0) && std::isfinite(p);
  }
}

// Running maxima of the growth test of pivoting = automatic
// (reference/tridiag_pivot.hpp states it and its bound): over the rows of an
// LU without pivoting, numerator max |l_i u1_(i-1)| + |u_i| (for Thomas
// |a_i c'_(i-1)| + |p_i|), denominator max |a_i| + |b_i| + |c_i|. std::max
// drops a NaN term; a NaN pivot fails usable_pivot instead.
template <class T>
struct growth_maxima {
  T numerator = 0, denominator = 0;
  void row(T lower_times_upper, T pivot, T a, T b, T c) {
    numerator = std::max(numerator, std::fabs(lower_times_upper) + std::fabs(pivot));
    denominator = std::max(denominator, std::fabs(a) + std::fabs(b) + std::fabs(c));
  }
  void merge(growth_maxima const& o) {
    numerator = std::max(numerator, o.numerator);
    denominator = std::max(denominator, o.denominator);
  }
};

// One system's equations, copied out of the batch so that x may alias d and
// the unused ends (a[0], c[n-1]) are zeros, never read from memory; with
// `corners` (periodic systems, reference/tridiag_periodic.hpp) they are read
// and hold the coefficients of x[n-1] in row 0 and of x[0] in row n-1.
template <class T>
struct equations {
  std::vector<T> a, b, c, d;
};

template <class T>
equations<T> load_system(T const* a, T const* b, T const* c, layout const& lay, std::int64_t k,
                         bool corners = false) {
  std::int64_t const n = lay.n;
  equations<T> e{std::vector<T>(n), std::vector<T>(n), std::vector<T>(n), {}};
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t const o = lay.offset(i, k);
    e.a[i] = i > 0 || corners ? a[o] : T(0);
    e.b[i] = b[o];
    e.c[i] = i + 1 < n || corners ? c[o] : T(0);
  }
  return e;
}

template <class T>
std::vector<T> load_rhs(T const* d, layout const& lay, std::int64_t k, std::int64_t rhs_offset) {
  std::vector<T> v(lay.n);
  for (std::int64_t i = 0; i < lay.n; ++i) v[i] = d[lay.offset(i, k) + rhs_offset];
  return v;
}

// Lowest and one-past-highest offsets touched by nrhs right-hand sides of a
// layout (strides may be negative).
struct extent {
  std::int64_t lo = 0, hi = 0;
};
inline extent extent_of(layout const& lay, std::int64_t nrhs, std::int64_t rhs_stride) {
  extent e;
  auto add = [&](std::int64_t span) { (span < 0 ? e.lo : e.hi) += span; };
  add((lay.n - 1) * lay.element_stride);
  add((lay.count - 1) * lay.batch_stride);
  add((nrhs - 1) * rhs_stride);
  e.hi += 1;
  return e;
}

template <class T>
bool overlap(T const* p, extent ep, T const* q, extent eq) {
  std::less<T const*> lt;
  return lt(p + ep.lo, q + eq.hi) && lt(q + eq.lo, p + ep.hi);
}

template <class T>
void require_tridiag(char const* fn, T const* a, T const* b, T const* c, T const* d, T const* x,
                     layout const& lay, std::int64_t nrhs, std::int64_t rhs_stride) {
  require_layout(fn, lay);
  if (nrhs < 0) fail(fn, "nrhs = " + std::to_string(nrhs) + " is negative");
  if (lay.n == 0 || lay.count == 0 || nrhs == 0) return;
  require_pointer(fn, "a", a, lay);
  require_pointer(fn, "b", b, lay);
  require_pointer(fn, "c", c, lay);
  require_pointer(fn, "d", d, lay);
  require_pointer(fn, "x", x, lay);
  extent const one = extent_of(lay, 1, 0);
  if (nrhs > 1 && std::abs(rhs_stride) < one.hi - one.lo)
    fail(fn, "rhs_stride = " + std::to_string(rhs_stride) + " is smaller than the layout's span " +
                 std::to_string(one.hi - one.lo) + " (right-hand sides would overlap)");
  extent const many = extent_of(lay, nrhs, rhs_stride);
  for (auto [p, name] : {std::pair{a, "a"}, std::pair{b, "b"}, std::pair{c, "c"}})
    if (overlap(x, many, p, one)) fail(fn, std::string("x overlaps the diagonal ") + name);
  if (x != d && overlap(x, many, d, many)) fail(fn, "x overlaps d without being equal to it");
}

// Runs solve(equations, rhs, solution) -> info for every right-hand side of
// system k and stores x by the conventions of reference/tridiag.hpp; returns
// the system's info (the smallest non-zero one over its right-hand sides). xs
// is scratch (nrhs vectors), reused across calls. Independent systems may run concurrently,
// each with its own xs.
template <class T, class SolveT>
std::int32_t solve_system(T const* a, T const* b, T const* c, T const* d, T* x, layout const& lay,
                          std::int64_t nrhs, std::int64_t rhs_stride, std::int64_t k,
                          std::vector<std::vector<T>>& xs, SolveT&& solve) {
  std::int32_t status = 0;
  if (lay.n == 0 || nrhs == 0) return status;
  xs.resize(static_cast<std::size_t>(nrhs));
  equations<T> const eq = load_system(a, b, c, lay, k);
  for (std::int64_t r = 0; r < nrhs; ++r) {
    std::int32_t const s = solve(eq, load_rhs(d, lay, k, r * rhs_stride), xs[r]);
    if (s != 0 && (status == 0 || s < status)) status = s;
  }
  // Written only after every right-hand side was read: x may alias d.
  for (std::int64_t r = 0; r < nrhs; ++r)
    for (std::int64_t i = 0; i < lay.n; ++i)
      x[lay.offset(i, k) + r * rhs_stride] = status ? std::numeric_limits<T>::quiet_NaN() : xs[r][i];
  return status;
}

template <class T, class SolveT>
void for_each_system(T const* a, T const* b, T const* c, T const* d, T* x, layout const& lay,
                     std::int64_t nrhs, std::int64_t rhs_stride, std::int32_t* info, SolveT solve) {
  std::vector<std::vector<T>> xs(nrhs);
  for (std::int64_t k = 0; k < lay.count; ++k) {
    std::int32_t const status = solve_system(a, b, c, d, x, lay, nrhs, rhs_stride, k, xs, solve);
    if (info) info[k] = status;
  }
}

inline std::int32_t row_number(std::int64_t i) { return static_cast<std::int32_t>(i + 1); }

}  // namespace recur::reference::detail
