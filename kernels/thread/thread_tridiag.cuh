#pragma once
// One tridiagonal system, one thread: the pivot rule and the two
// eliminations of the one-thread forms, each written once over accessors so
// that the shared-memory tile (kernels/block/block_tridiag.cuh's
// thread_thomas and thread_gtsv), the global-memory pivoted form
// (thread_tridiag_pivot.cuh, run by kernels/agent/agent_tridiag_pivot.cuh)
// and the CPU tests (test/test_tridiag_pivot_thread.cpp) compile the same
// expressions, and so give the same bits. Plain C++ (host and device), no
// CUDA header.
//
//   usable_pivot    the rule every solver applies to a divisor
//   pivot_rcp       1 / p, bitwise the quotient for a usable pivot
//   thomas_factor   Gaussian elimination without pivoting (the arithmetic
//                   of reference::thomas, with reciprocals); thomas_rhs and
//                   thomas_back its substitutions
//   gtsv_factor     with partial pivoting (LAPACK's ?gttrf: rows i and
//                   i + 1 change places where |u_i| < |a_(i+1)|); gtsv_rhs
//                   and gtsv_back its substitutions (?gtts2)
//
// Accessors. `rows` gives row i's place, rows.at(i) (its index, or its word
// in shared memory; a static function of i), and reads the row there,
// rows.read(at): a value with members a, b and c (a_0 = c_(n-1) = 0), and d
// where the right-hand side is eliminated in the same pass (the tile). Each
// of the n >= 1 rows is read once, in order. A sink receives each row's
// factors with the row's place and keeps them where the caller does: in
// place in the tile, in workspace planes in the pivoted form, which
// substitutes later, once per right-hand side. The substitutions take the
// places alone (`places.at`) and accessors of the values there.
//
// Breakdown: the factors return the 1-based row of the first unusable pivot
// (0 when none). With Stop they return there; without, they sweep on
// through inf/NaN, whose results the caller discards: with no branch out of
// the loop, the unrolled Thomas sweep issues row i + 1's loads before row
// i's arithmetic, so their latency stays off the chain of reciprocals.
//
// Bits: nvcc contracts a multiply feeding an add into one fused
// multiply-add, so every caller compiles an expression the same way only
// where it has the same shape; each is written once here.

#include <cmath>
#include <cstdint>
#include <limits>

#include <recur/config.hpp>

namespace recur::kernels {

// A divisor the solvers accept (the reference's rule,
// reference::detail::usable_pivot), tested without a branch (the sweeps test
// every row's). double: nonzero and finite (0 < |p| < inf, false for NaN).
// float: 2^-126 <= |p| < 2^126, a normal number whose reciprocal is normal
// too: the range where pivot_rcp's three instructions give 1 / p exactly as
// the division does. A subnormal pivot, or one of 2^126 or more, is a
// breakdown.
template <class T>
RECUR_HD inline bool usable_pivot(T p) {
  if constexpr (sizeof(T) == 4) {
    // Biased exponent e in [1, 252]: (e + 3) mod 256 >= 4.
    return ((__builtin_bit_cast(std::uint32_t, p) + 0x01800000u) & 0x7f800000u) > 0x01ffffffu;
  } else {
    T const m = std::fabs(p);
    return (m > T(0)) & (m < std::numeric_limits<T>::infinity());
  }
}

// 1 / p for a usable pivot (bitwise the correctly rounded quotient). float
// on the device: the approximate reciprocal and one Newton step, the fast
// path of nvcc's own division without its range test and the branch to its
// slow path (which covers only the pivots usable_pivot rejects;
// test_block_tridiag's pivot_rcp_exact checks every float); in the float
// sweeps that test and branch would be a seventh of a row's instructions.
// Elsewhere the division.
template <class T>
RECUR_HD inline T pivot_rcp(T p) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(T) == 4) {
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(p));
    return fmaf(r, fmaf(-p, r, 1.0f), r);
  } else {
    return T(1) / p;
  }
#else
  return T(1) / p;
#endif
}

// Places by index: row i's factors and x_i are at i.
struct index_places {
  template <class Index>
  RECUR_HD static Index at(Index i) {
    return i;
  }
};

// Rows read by index: row(i) returns row i, at place i.
template <class RowT>
struct indexed_rows : index_places {
  RowT const& row;
  template <class Index>
  RECUR_HD auto read(Index i) const {
    return row(i);
  }
};

// -------------------------------------------------------------- Thomas ---

// The forward substitution's step: y_i = (d_i - a_i y_(i-1)) r_i.
template <class T>
RECUR_HD inline T thomas_rhs(T d, T a, T y_prev, T r) {
  return (d - a * y_prev) * r;
}

// p_i = b_i - a_i c'_(i-1), r_i = 1 / p_i, c'_i = c_i r_i for i < n; with
// d in the rows also y_i = (d_i - a_i y_(i-1)) r_i (else y_i = 0). Calls
// sink(at_i, a_i, b_i, c_i, p_i, r_i, c'_i, y_i) for each row whose pivot is
// usable and, without Stop, for every row after the first unusable one too.
// Unroll: rows per unrolled step of the device loop (the tile's sweep 4;
// the pivoted form's loop, which leaves at a breakdown, 1). Returns the
// first unusable pivot's row (1-based), 0 when none.
template <bool Stop, int Unroll, class Index, class RowsT, class SinkT>
RECUR_HD inline int thomas_factor(RowsT const& rows, Index n, SinkT&& sink) {
  auto const first = rows.read(rows.at(Index(0)));
  using T = decltype(first.b);
  constexpr bool rhs = requires { first.d; };
  int bad = 0;
  T c_prev = 0, d_prev = 0;
  // Row i + 1 as read, declared d first: the declarations' order is the
  // order of the loop's registers in the PTX, and this one gives the tile's
  // unrolled sweep its allocation without extra moves.
  T dn = T(0), cn = first.c, bn = first.b, an = first.a;
  if constexpr (rhs) dn = first.d;
  auto q = rows.at(Index(0));
#if defined(__CUDA_ARCH__)
#pragma unroll(Unroll)
#endif
  for (Index i = 0; i < n; ++i) {
    T const ai = an, bi = bn, ci = cn, di = dn;
    auto const qn = rows.at(i + 1);
    if (i + 1 < n) {
      auto const e = rows.read(qn);
      an = e.a, bn = e.b, cn = e.c;
      if constexpr (rhs) dn = e.d;
    }
    T const p = bi - ai * c_prev;
    if (bad == 0 && !usable_pivot(p)) {
      bad = static_cast<int>(i + 1);
      if constexpr (Stop) break;
    }
    T const r = pivot_rcp(p);
    c_prev = ci * r;
    if constexpr (rhs) d_prev = thomas_rhs(di, ai, d_prev, r);
    sink(q, ai, bi, ci, p, r, c_prev, d_prev);
    q = qn;
  }
  return bad;
}

// The back substitution: x_(n-1) = y_(n-1) is given; x_i = y_i - c'_i
// x_(i+1) for i = n-2 down to 0, where y(at_i) is the place that holds y_i
// and receives x_i, and cp(at_i) returns c'_i.
template <class PlacesT, class Index, class T, class YT, class CT>
RECUR_HD inline void thomas_back(PlacesT const& places, Index n, T x, YT&& y, CT&& cp) {
#if defined(__CUDA_ARCH__)
#pragma unroll 4
#endif
  for (Index i = n - 2; i >= 0; --i) {
    auto const q = places.at(i);
    x = y(q) - cp(q) * x;
    y(q) = x;
  }
}

// ------------------------------------------------- partial pivoting ---

// Row i of U: u_i on the diagonal and its two superdiagonals.
template <class T>
struct gtsv_u_row {
  T u, u1, u2;
};

// ?gttrf streamed: column i's pivot is the larger of |u_i| and |a_(i+1)|
// (ties keep the rows). For i < n - 1, sink(at_i, row_(i+1), U_i, l_i,
// swapped): row i + 1 as read, row i of U, the multiplier and whether rows
// i and i + 1 changed places; then last(at_(n-1), u_(n-1)) (row n-1 of U is
// u_(n-1), 0, 0). Returns the first unusable pivot's row (1-based), 0 when
// none; without Stop every row reaches the sinks.
template <bool Stop, class Index, class RowsT, class SinkT, class LastT>
RECUR_HD inline int gtsv_factor(RowsT const& rows, Index n, SinkT&& sink, LastT&& last) {
  auto at = rows.at(Index(0));
  auto const first = rows.read(at);
  using T = decltype(first.b);
  int bad = 0;
  T u = first.b, u1 = first.c;  // row i of U as eliminated so far
  for (Index i = 0; i + 1 < n; ++i) {
    auto const at_next = rows.at(i + 1);
    auto const e = rows.read(at_next);
    if (std::fabs(u) >= std::fabs(e.a)) {  // no interchange
      if (bad == 0 && !usable_pivot(u)) {
        bad = static_cast<int>(i + 1);
        if constexpr (Stop) return bad;
      }
      T const fact = e.a / u;
      sink(at, e, gtsv_u_row<T>{u, u1, T(0)}, fact, false);
      u = e.b - fact * u1;
      u1 = e.c;
    } else {  // rows i and i + 1 change places
      T const fact = u / e.a;
      sink(at, e, gtsv_u_row<T>{e.a, e.b, e.c}, fact, true);
      u = u1 - fact * e.b;
      u1 = -fact * e.c;
      if (bad == 0 && !usable_pivot(e.a)) {
        bad = static_cast<int>(i + 1);
        if constexpr (Stop) return bad;
      }
    }
    at = at_next;
  }
  if (bad == 0 && !usable_pivot(u)) bad = static_cast<int>(n);
  last(at, u);
  return bad;
}

// L's substitution with the interchanges, one step: carry holds row i's
// right-hand side as eliminated so far and `next` row i + 1's; returns y_i
// and leaves row i + 1's in carry. One expression for both cases (its
// operands chosen by `swapped`), so that a runtime flag costs selects, not
// a second fused multiply-add.
template <class T>
RECUR_HD inline T gtsv_rhs(bool swapped, T l, T& carry, T next) {
  T const y = swapped ? next : carry;  // y_i: the right-hand side of the row that stays row i
  carry = (swapped ? carry : next) - l * y;
  return y;
}

// U's substitution, divided as LAPACK divides: x_i = (y_i - u1_i x_(i+1) -
// u2_i x_(i+2)) / u_i for i = n-1 down to 0, where y(at_i) is the place that
// holds y_i and receives x_i, and u(at_i) returns row i of U.
template <class PlacesT, class Index, class YT, class UT>
RECUR_HD inline void gtsv_back(PlacesT const& places, Index n, YT&& y, UT&& u) {
  using T = decltype(u(places.at(n - 1)).u);
  T x1 = 0, x2 = 0;  // x_(i+1), x_(i+2)
  for (Index i = n - 1; i >= 0; --i) {
    auto const q = places.at(i);
    gtsv_u_row<T> const r = u(q);
    T const x = (y(q) - r.u1 * x1 - r.u2 * x2) / r.u;
    y(q) = x;
    x2 = x1;
    x1 = x;
  }
}

}  // namespace recur::kernels
