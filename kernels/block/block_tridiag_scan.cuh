#pragma once
// Tridiagonal solves of systems in shared memory by scans (the conventions
// of block_tridiag.cuh: rows at tridiag_pos, a[0] = c[n-1] = 0 on chip,
// x overwrites d, breakdown rows recorded by atomicMin), one system per
// group of G threads (G a multiple of 32), every group of the block calling
// together:
//
//   group_rd       recursive doubling (Zhang et al. 2010 sec. 2.3): the
//                  prefix products of the 3x3 matrices B_i, kept rescaled
//                  (rd_prefix), by a Hillis-Steele scan over the group
//                  (group_scan.cuh) with several rows per thread in
//                  registers; with the self check of reference/tridiag.hpp.
//                  Works on the rows (j + 1) s - 1 of a system, so CR+RD
//                  runs it on CR's intermediate system.
//   group_pscheme  the P-scheme solver (Wakatani 2012): Thomas' forward
//                  elimination and back substitution as three recurrences,
//                  the pivots (Moebius, ops::mobius), the right-hand side
//                  (affine, forward) and x (affine, reverse), each in the
//                  P-scheme's three phases: every thread composes its run of
//                  rows (pre-computation), the group scans the run maps
//                  (propagation), every thread applies its carry and walks
//                  its run (determination).

#include <cmath>
#include <limits>

#include <recur/ops/affine.hpp>
#include <recur/ops/mobius.hpp>
#include "block_tridiag.cuh"
#include "group_scan.cuh"

namespace recur::kernels {

// ------------------------------------------------------------------- RD ---

// A prefix product P = B_j ... B_0 as 2^e S: S's two stored rows r1, r2
// (largest entry in [1, 2) after rescaling) and its implied third row
// (0 0 2^-e), the representation of reference::detail::recursive_doubling_one.
template <class T>
struct rd_prefix {
  T r1[3], r2[3];
  int e;
  int pad_ = 0;  // a multiple of 4 bytes and of alignof(T) for the shuffles
};

template <class T>
__device__ __forceinline__ rd_prefix<T> rd_identity() {
  return {{T(1), T(0), T(0)}, {T(0), T(1), T(0)}, 0};
}

// Brings the largest entry of the two rows to [1, 2) by a power of two
// (exact); all-zero or non-finite products are left as they are.
template <class T>
__device__ __forceinline__ void rd_rescale(rd_prefix<T>& p) {
  T big = T(0);
#pragma unroll
  for (int j = 0; j < 3; ++j) big = fmax(big, fmax(fabs(p.r1[j]), fabs(p.r2[j])));
  if (!(big > T(0)) || !isfinite(big)) return;
  int const shift = ilogb(big);
#pragma unroll
  for (int j = 0; j < 3; ++j) {
    p.r1[j] = scalbn(p.r1[j], -shift);
    p.r2[j] = scalbn(p.r2[j], -shift);
  }
  p.e += shift;
}

// Composition in scan order: l first, then r, i.e. the product r * l,
// rescaled. Row k of S_r S_l is r_k1 l.r1 + r_k2 l.r2 + r_k3 (0 0 2^-l.e);
// the exponents add.
struct rd_compose {
  template <class T>
  __device__ __forceinline__ rd_prefix<T> operator()(rd_prefix<T> const& l, rd_prefix<T> const& r) const {
    rd_prefix<T> o;
    T const w = scalbn(T(1), -l.e);
#pragma unroll
    for (int j = 0; j < 3; ++j) {
      o.r1[j] = r.r1[0] * l.r1[j] + r.r1[1] * l.r2[j];
      o.r2[j] = r.r2[0] * l.r1[j] + r.r2[1] * l.r2[j];
    }
    o.r1[2] += r.r1[2] * w;
    o.r2[2] += r.r2[2] * w;
    o.e = l.e + r.e;
    rd_rescale(o);
    return o;
  }
};

// Rows of RD held by one thread in registers: a group of G threads solves
// systems of up to G * rd_items_per_thread equations.
inline constexpr int rd_items_per_thread = 4;

// RD on the m equations at rows (j + 1) s - 1 of sys, j < m (s = 1: the
// whole system), m <= group_threads * rd_items_per_thread; x_j goes to d at
// its row. Thread `rank` takes equations rank * items + q. scratch: the
// group's group_threads / 32 prefixes. row_map turns a row of sys into the
// row reported in info. Breakdown (recorded, never a stop): c_j (j < m-1)
// unusable or B_j not finite; the full product's s11 unusable (row m-1); x
// not finite; the self check (reference::detail::recursive_doubling_one)
// failing at a row.
template <class T, class RowMap = identity_rows>
__device__ void group_rd(tridiag_rows<T> const& sys, int m, int s, int rank, int group_threads, bool active,
                         int* info, rd_prefix<T>* scratch, RowMap row_map = {}) {
  constexpr int items = rd_items_per_thread;
  auto row = [s](int j) { return (j + 1) * s - 1; };
  auto breakdown = [&](int j) { record_breakdown(info, row_map(row(j))); };
  rd_prefix<T> pre[items];  // inclusive prefixes of the thread's own rows
  T dv[items];              // d, kept for the self check
  int const j0 = rank * items;
#pragma unroll
  for (int q = 0; q < items; ++q) {
    int const j = j0 + q;
    rd_prefix<T> b = rd_identity<T>();
    dv[q] = T(0);
    if (active && j < m) {
      int const p = tridiag_pos(row(j));
      T const c = j + 1 < m ? sys.c[p] : T(1);  // the phantom x_m = 0
      T const a = j > 0 ? sys.a[p] : T(0);
      dv[q] = sys.d[p];
      if (!usable_pivot(c)) breakdown(j);
      b = {{-sys.b[p] / c, -a / c, dv[q] / c}, {T(1), T(0), T(0)}, 0};
      if (!isfinite(b.r1[0]) || !isfinite(b.r1[1]) || !isfinite(b.r1[2])) breakdown(j);
    }
    pre[q] = q == 0 ? b : rd_compose{}(pre[q - 1], b);
  }
  rd_prefix<T> total;
  rd_prefix<T> const carry = group_exclusive_scan<false>(pre[items - 1], rd_identity<T>(), rd_compose{}, rank,
                                                         group_threads, scratch, total);
  // x_0 = -s13 / s11 of the full product; x_j = 2^e (s11 x_0 + s13) of P_(j-1).
  T const x0 = -total.r1[2] / total.r1[0];
  if (active && rank == 0 && (!usable_pivot(total.r1[0]) || !isfinite(x0))) breakdown(m - 1);
  T xv[items];
#pragma unroll
  for (int q = 0; q < items; ++q) {
    int const j = j0 + q;
    if (j == 0) {
      xv[q] = x0;
    } else {
      rd_prefix<T> const p = q == 0 ? carry : rank == 0 ? pre[q - 1] : rd_compose{}(carry, pre[q - 1]);
      xv[q] = scalbn(p.r1[0] * x0 + p.r1[2], p.e);
    }
    if (active && j < m) {
      if (!isfinite(xv[q])) breakdown(j);
      sys.d[tridiag_pos(row(j))] = xv[q];
    }
  }
  __syncthreads();
  // The self check: row j is accepted when its residual is within
  // 2^(digits/4) eps of the magnitudes of its terms.
  T const tol = scalbn(std::numeric_limits<T>::epsilon(), std::numeric_limits<T>::digits / 4);
  if (active)
#pragma unroll
    for (int q = 0; q < items; ++q) {
      int const j = j0 + q;
      if (j >= m) continue;
      int const p = tridiag_pos(row(j));
      T const lo = j > 0 ? sys.a[p] * sys.d[tridiag_pos(row(j - 1))] : T(0);
      T const hi = j + 1 < m ? sys.c[p] * sys.d[tridiag_pos(row(j + 1))] : T(0);
      T const mid = sys.b[p] * xv[q];
      T const r = dv[q] - lo - mid - hi;
      if (!(fabs(r) <= tol * (fabs(lo) + fabs(mid) + fabs(hi) + fabs(dv[q])))) breakdown(j);
    }
  __syncthreads();
}

// ------------------------------------------------------------ P-scheme ---

// Thomas as the reference's pscheme_one: p_i by the Moebius steps
// (0, b_0; 0, 1), (b_i, -a_i c_(i-1); 1, 0); d'_i = (-a_i / p_i) d'_(i-1) +
// d_i / p_i; x_i = (-c_i / p_i) x_(i+1) + d'_i. p overwrites b, d' and then
// x overwrite d. Thread `rank` owns the run of rows chunk_split{n / G,
// n % G} gives it (possibly empty). scratch: G / 32 values of the largest
// of ops::mobius<T> and ops::affine<T>, per group. Breakdown: the first
// unusable pivot of the thread's run (row i + 1); later pivots of a broken
// run are NaN.
template <class T>
__device__ void group_pscheme(tridiag_rows<T> const& sys, int n, int rank, int group_threads, bool active,
                              int* info, void* scratch) {
  chunk_split const split{n / group_threads, n % group_threads};
  int const first = active ? split.first(rank) : 0, len = active ? split.len(rank) : 0;
  auto step_p = [&](int i) {
    int const q = tridiag_pos(i);
    return i == 0 ? ops::mobius<T>{T(0), sys.b[q], T(0), T(1)}
                  : ops::mobius<T>{sys.b[q], -sys.a[q] * sys.c[tridiag_pos(i - 1)], T(1), T(0)};
  };
  // 1. Pivots. Every step reads c of the row before, never written. The
  // scanned maps are shifted by one row: a thread composes the rows
  // [first - 1, first + len - 1), so its carry ends at row first - 2 and
  // p_(first-1) comes from one sequential step, as in Thomas. (A pivot that
  // Thomas finds exactly zero, such as b_i = a_i c_(i-1) / p_(i-1) with
  // p_(i-1) = b_(i-1), is then exactly zero here too, and reported.)
  {
    ops::mobius<T> fold = ops::mobius_identity<T>();
    for (int i = max(first - 1, 0); i < first + len - 1; ++i) fold = ops::mobius_compose{}(fold, step_p(i));
    // Row first - 1 is the previous thread's: its b becomes a pivot below.
    bool const lead = first >= 1 && len > 0;
    ops::mobius<T> const lead_step = lead ? step_p(first - 1) : ops::mobius_identity<T>();
    ops::mobius<T> total;
    ops::mobius<T> const carry =
        group_exclusive_scan<false>(fold, ops::mobius_identity<T>(), ops::mobius_compose{}, rank,
                                    group_threads, static_cast<ops::mobius<T>*>(scratch), total);
    T p = carry.apply(T(1));  // p_(first-2); p_(-1) = 1 (step 0 ignores it)
    if (lead) p = lead_step.apply(p);
    bool broke = false;
    for (int i = first; i < first + len; ++i) {
      p = step_p(i).apply(p);
      if (!broke && !usable_pivot(p)) {
        record_breakdown(info, i);
        broke = true;
      }
      sys.b[tridiag_pos(i)] = p;  // only this thread reads it from now on
    }
  }
  // 2. Forward elimination of the right-hand side.
  {
    auto step = [&](int i) {
      int const q = tridiag_pos(i);
      T const r = T(1) / sys.b[q];
      return ops::affine<T>{-sys.a[q] * r, sys.d[q] * r};
    };
    ops::affine<T> fold = ops::affine_identity<T>();
    for (int i = first; i < first + len; ++i) fold = ops::compose{}(fold, step(i));
    ops::affine<T> total;
    ops::affine<T> const carry =
        group_exclusive_scan<false>(fold, ops::affine_identity<T>(), ops::compose{}, rank, group_threads,
                                    static_cast<ops::affine<T>*>(scratch), total);
    T w = carry(T(0));  // d'_(first-1); d'_(-1) = 0
    for (int i = first; i < first + len; ++i) {
      w = step(i)(w);
      sys.d[tridiag_pos(i)] = w;
    }
  }
  // 3. Back substitution, rows in decreasing order.
  {
    auto step = [&](int i) {
      int const q = tridiag_pos(i);
      return ops::affine<T>{-sys.c[q] / sys.b[q], sys.d[q]};
    };
    ops::affine<T> fold = ops::affine_identity<T>();
    for (int i = first + len - 1; i >= first; --i) fold = ops::compose{}(fold, step(i));
    ops::affine<T> total;
    ops::affine<T> const carry =
        group_exclusive_scan<true>(fold, ops::affine_identity<T>(), ops::compose{}, rank, group_threads,
                                   static_cast<ops::affine<T>*>(scratch), total);
    T w = carry(T(0));  // x_(first+len); x_n = 0
    for (int i = first + len - 1; i >= first; --i) {
      w = step(i)(w);
      sys.d[tridiag_pos(i)] = w;
    }
  }
  __syncthreads();
}

// Bytes of group scratch the scan solvers need per system of G threads.
template <class T>
constexpr std::size_t tridiag_scan_scratch_bytes(int group_threads) {
  std::size_t const v =
      sizeof(rd_prefix<T>) > sizeof(ops::mobius<T>) ? sizeof(rd_prefix<T>) : sizeof(ops::mobius<T>);
  return std::size_t(group_threads / 32) * v;
}

}  // namespace recur::kernels
