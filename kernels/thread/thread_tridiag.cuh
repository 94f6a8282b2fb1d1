#pragma once
// One tridiagonal system, one thread: the pivot rule and the elimination
// of the one-thread forms, each written once over accessors so that the
// shared-memory tile (kernels/block/block_tridiag.cuh's thread_thomas), the
// global-memory pivoted form (thread_tridiag_pivot.cuh, run by
// kernels/agent/agent_tridiag_pivot.cuh) and the CPU tests
// (test/test_tridiag_pivot_thread.cpp) compile the same expressions, and so
// give the same bits. Plain C++ (host and device), no CUDA header.
//
//   usable_pivot    the rule every solver applies to a divisor
//   pivot_rcp       1 / p, bitwise the quotient for a usable pivot
//   thomas_factor   Gaussian elimination without pivoting (the arithmetic
//                   of reference::thomas, with reciprocals); thomas_rhs and
//                   thomas_back its substitutions
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
// Breakdown: the factor returns the 1-based row of the first unusable pivot
// (0 when none). With Stop it returns there; without, it sweeps on
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

}  // namespace recur::kernels
