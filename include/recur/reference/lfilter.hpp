#pragma once
// Sequential references for IIR filtering with scipy.signal's semantics:
// lfilter (direct form II transposed), lfilter_zi (steady-state initial
// conditions) and sosfilt (cascaded second-order sections). In parallel an
// order-m filter is a matrix-chain recurrence over its (m x m) state; these
// are the oracles.
//
// The arithmetic follows scipy's C loop for lfilter: b and a are divided by
// a[0], both are padded with zeros to n = max(len(a), len(b)), and per sample
//   y    = b[0] x + z[0]
//   z[j] = z[j+1] + x b[j+1] - y a[j+1]   (j < n-2)
//   z[n-2] =        x b[n-1] - y a[n-1]
// in that order of operations, as scipy's C loop (_lfilter.c.in) does, so the
// results should agree with scipy's bit for bit where neither compiler
// contracts to fma (not checked against scipy itself: it is not a test
// dependency).
//
// Storage. x and y are sequences of one layout (y may alias x). The filter
// state has n - 1 values per sequence, contiguous: sequence s's zi or zf at
// s * (n - 1). zi null means zero initial state (scipy's default); zf null
// means not wanted; zi may equal zf.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <recur/layout/layout.hpp>
#include <recur/reference/arguments.hpp>
#include <recur/types.hpp>

namespace recur::reference {

namespace detail {

// b and a normalised by a[0] and padded to the same length.
template <class T>
struct normalised_filter {
  std::vector<T> b, a;
  std::int64_t order() const { return static_cast<std::int64_t>(b.size()) - 1; }
};

template <class T>
normalised_filter<T> normalise(char const* fn, std::span<T const> b, std::span<T const> a) {
  if (b.empty()) fail(fn, "b is empty");
  if (a.empty()) fail(fn, "a is empty");
  if (a[0] == T(0)) fail(fn, "a[0] = 0: the filter cannot be normalised");
  if (!std::isfinite(a[0])) fail(fn, "a[0] = " + std::to_string(a[0]) + " is not finite");
  std::size_t const n = std::max(a.size(), b.size());
  normalised_filter<T> f{std::vector<T>(n, T(0)), std::vector<T>(n, T(0))};
  // As scipy: divide even when a[0] == 1 (exact then), a[0] itself becomes 1.
  for (std::size_t j = 0; j < b.size(); ++j) f.b[j] = b[j] / a[0];
  for (std::size_t j = 0; j < a.size(); ++j) f.a[j] = a[j] / a[0];
  return f;
}

// One sample through the DF2T structure; z has n - 1 entries.
template <class T>
T df2t_step(T const* b, T const* a, std::int64_t order, T* z, T x) {
  if (order == 0) return x * b[0];
  T const y = z[0] + b[0] * x;
  for (std::int64_t j = 0; j + 1 < order; ++j) z[j] = z[j + 1] + x * b[j + 1] - y * a[j + 1];
  z[order - 1] = x * b[order] - y * a[order];
  return y;
}

// Sample j, -edge <= j < n + edge, of filtfilt's extension of the n
// samples xs[0], xs[es], ... (scipy's odd_ext, even_ext, const_ext): the
// samples mirrored about the first (j < 0) or the last (j >= n).
template <class T>
T filtfilt_extended(filtfilt_pad pad, T const* xs, std::int64_t n, std::int64_t es, std::int64_t j) {
  bool const left = j < 0;
  std::int64_t const m = left ? -j : 2 * (n - 1) - j;  // the mirrored index
  T const end = left ? xs[0] : xs[(n - 1) * es];
  switch (pad) {
    case filtfilt_pad::odd:
      return T(2) * end - xs[m * es];
    case filtfilt_pad::even:
      return xs[m * es];
    default:
      return end;
  }
}

}  // namespace detail

// The order of the filter (b, a): max(len(a), len(b)) - 1, the number of
// state values per sequence.
inline std::int64_t lfilter_order(std::size_t b_size, std::size_t a_size) {
  return static_cast<std::int64_t>(std::max(b_size, a_size)) - 1;
}

// y = lfilter(b, a, x, zi) for every sequence of the layout.
template <class T>
void lfilter(std::span<std::type_identity_t<T> const> b, std::span<std::type_identity_t<T> const> a,
             T const* x, T* y, layout const& lay, T const* zi, T* zf) {
  constexpr char const* fn = "lfilter";
  auto const f = detail::normalise<T>(fn, b, a);
  detail::require_layout(fn, lay);
  detail::require_pointer(fn, "x", x, lay);
  detail::require_pointer(fn, "y", y, lay);
  std::int64_t const m = f.order();
  std::vector<T> z(static_cast<std::size_t>(m));
  for (std::int64_t s = 0; s < lay.count; ++s) {
    for (std::int64_t j = 0; j < m; ++j) z[j] = zi ? zi[s * m + j] : T(0);
    for (std::int64_t i = 0; i < lay.n; ++i) {
      std::int64_t const o = lay.offset(i, s);
      y[o] = detail::df2t_step(f.b.data(), f.a.data(), m, z.data(), x[o]);
    }
    if (zf)
      for (std::int64_t j = 0; j < m; ++j) zf[s * m + j] = z[j];
  }
}

// scipy.signal.lfilter_zi: the state zi of the steady state for a unit step,
// so that lfilter(b, a, c * ones, zi = c * lfilter_zi(b, a)) is constant from
// the first sample (the DC gain times c). It solves (I - A^T) zi = B with A
// the companion matrix of the normalised a (first row -a[1:]) and B = b[1:] -
// a[1:] b[0], by Gaussian elimination with partial pivoting. A singular system
// (a pole at z = 1, sum(a) == 0: no steady state) throws invalid_argument.
// Unlike scipy, leading zeros of a are an error here, as in lfilter.
template <class T>
std::vector<T> lfilter_zi(std::span<std::type_identity_t<T> const> b,
                          std::span<std::type_identity_t<T> const> a) {
  constexpr char const* fn = "lfilter_zi";
  auto const f = detail::normalise<T>(fn, b, a);
  std::int64_t const m = f.order();
  if (m == 0) return {};
  // Row r of I - A^T: A^T's row r is A's column r: A[0][r] = -a[r+1] and
  // A[r+1][r] = 1, so row r is e_r + a[r+1] e_0 - e_{r+1}.
  std::vector<std::vector<T>> s(static_cast<std::size_t>(m), std::vector<T>(static_cast<std::size_t>(m + 1)));
  for (std::int64_t r = 0; r < m; ++r) {
    auto& row = s[r];
    row[0] += f.a[r + 1];
    row[r] += T(1);
    if (r + 1 < m) row[r + 1] -= T(1);
    row[m] = f.b[r + 1] - f.a[r + 1] * f.b[0];
  }
  for (std::int64_t c = 0; c < m; ++c) {
    std::int64_t piv = c;
    for (std::int64_t r = c + 1; r < m; ++r)
      if (std::fabs(s[r][c]) > std::fabs(s[piv][c])) piv = r;
    if (s[piv][c] == T(0))
      detail::fail(fn, "I - A^T is singular: the filter has a pole at z = 1 (sum(a) == 0)");
    std::swap(s[c], s[piv]);
    for (std::int64_t r = c + 1; r < m; ++r) {
      T const l = s[r][c] / s[c][c];
      for (std::int64_t j = c; j <= m; ++j) s[r][j] -= l * s[c][j];
    }
  }
  std::vector<T> zi(static_cast<std::size_t>(m));
  for (std::int64_t r = m - 1; r >= 0; --r) {
    T v = s[r][m];
    for (std::int64_t j = r + 1; j < m; ++j) v -= s[r][j] * zi[j];
    zi[r] = v / s[r][r];
  }
  return zi;
}

// sosfilt: a cascade of second-order sections, sos holding n_sections rows
// of six values [b0 b1 b2 a0 a1 a2] (row-major, sos.size() == 6 n_sections).
// Each section is normalised by its a0 (scipy requires a0 == 1; any nonzero
// a0 is accepted here). The state is 2 values per section, per sequence:
// sequence s, section j at zi + (s * n_sections + j) * 2 (scipy's zi of shape
// (n_sections, ..., 2) with the lane moved first). Each section runs lfilter's
// DF2T step, so the result equals lfilter applied section after section,
// bit for bit (scipy's sosfilt orders the additions differently).
template <class T>
void sosfilt(std::span<std::type_identity_t<T> const> sos, T const* x, T* y, layout const& lay, T const* zi,
             T* zf) {
  constexpr char const* fn = "sosfilt";
  if (sos.empty() || sos.size() % 6 != 0)
    detail::fail(fn, "sos has " + std::to_string(sos.size()) + " values, not a positive multiple of 6");
  std::int64_t const ns = static_cast<std::int64_t>(sos.size() / 6);
  std::vector<T> b(static_cast<std::size_t>(3 * ns)), a(static_cast<std::size_t>(3 * ns));
  for (std::int64_t j = 0; j < ns; ++j) {
    auto const f = detail::normalise<T>(fn, sos.subspan(6 * j, 3), sos.subspan(6 * j + 3, 3));
    for (int c = 0; c < 3; ++c) {
      b[3 * j + c] = f.b[c];
      a[3 * j + c] = f.a[c];
    }
  }
  detail::require_layout(fn, lay);
  detail::require_pointer(fn, "x", x, lay);
  detail::require_pointer(fn, "y", y, lay);
  std::vector<T> z(static_cast<std::size_t>(2 * ns));
  for (std::int64_t s = 0; s < lay.count; ++s) {
    for (std::int64_t j = 0; j < 2 * ns; ++j) z[j] = zi ? zi[s * 2 * ns + j] : T(0);
    for (std::int64_t i = 0; i < lay.n; ++i) {
      std::int64_t const o = lay.offset(i, s);
      T v = x[o];
      for (std::int64_t j = 0; j < ns; ++j) v = detail::df2t_step(&b[3 * j], &a[3 * j], 2, &z[2 * j], v);
      y[o] = v;
    }
    if (zf)
      for (std::int64_t j = 0; j < 2 * ns; ++j) zf[s * 2 * ns + j] = z[j];
  }
}

}  // namespace recur::reference
