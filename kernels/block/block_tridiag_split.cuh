#pragma once
// Cyclic reduction with Goeddeke and Strzodka's split storage (2011, sec.
// 4.2): every reduced system is written to its own region of shared memory
// with its even-numbered equations in one half and its odd-numbered ones in
// the other, so that a level's reads (equation j = 2h + 1 with its
// neighbours 2h and 2h + 2) and the back substitution's are unit-stride in
// the thread index h: no bank conflicts, at the price of a second copy of
// the system (the reduced levels add up to fewer than n equations). The
// in-place form (group_cr_pcr with switch 2, block_tridiag.cuh: the
// algorithm `cr`) reads and writes at strides 2^L instead; this is the
// algorithm `cr_split` (doc/tridiag-internals.md compares the two).
//
// Level 0 is the system as loaded (rows at tridiag_pos); level L >= 1, of
// m_L = m_(L-1) / 2 equations (the odd ones of level L - 1, updated), lives
// in `work`: equation h at even[h / 2] or odd[h / 2] by its parity. At two
// equations (or one) Cramer's rule solves the top level, as in
// reference::detail::cyclic_reduction_one; the back substitution writes x
// into d, level by level, x of level L's odd equations copied down from
// level L + 1, so that every level's x sits with its equations. Breakdown
// rows: the original row of every divisor found unusable (atomicMin).
//
// Every thread of the block calls (barriers), with the same n.

#include "block_tridiag.cuh"

namespace recur::kernels {

// Where level L's equations live: level 0 is the loaded system (rows at
// tridiag_pos); level L >= 1 has m = n >> L equations, its evens from
// `even` and its odds from `odd` in the work arrays, each level taking
// m + 2 values (one padding word between the halves and after the level:
// threads h and h + 1 write even[k] and odd[k] at once, in different banks).
struct split_level {
  int m, even, odd;
  bool loaded;  // level 0

  __device__ __host__ static split_level of(int n, int L) {
    if (L == 0) return {n, 0, 0, true};
    int off = 0;
    for (int l = 1; l < L; ++l) off += (n >> l) + 2;
    int const m = n >> L;
    return {m, off, off + (m + 1) / 2 + 1, false};
  }
  // Levels stored past the loaded one: reduce while more than 2 equations.
  __device__ __host__ static int count(int n) {
    int c = 0;
    for (int m = n; m > 2; m /= 2) ++c;
    return c;
  }
  // Work values per array for a system of n equations.
  __device__ __host__ static int work_size(int n) {
    int const c = count(n);
    return c == 0 ? 0 : of(n, c).odd + (n >> c) / 2 + 1;
  }
  __device__ int at(int j) const { return loaded ? tridiag_pos(j) : ((j & 1) ? odd : even) + j / 2; }
};

template <class T>
__device__ __forceinline__ tridiag_equation<T> split_load(tridiag_rows<T> const& w, int at) {
  return {w.a[at], w.b[at], w.c[at], w.d[at]};
}
template <class T>
__device__ __forceinline__ void split_store(tridiag_rows<T> const& w, int at, tridiag_equation<T> const& e) {
  w.a[at] = e.a;
  w.b[at] = e.b;
  w.c[at] = e.c;
  w.d[at] = e.d;
}

template <class T>
__device__ void group_cr_split(tridiag_rows<T> const& sys, tridiag_rows<T> const& work, int n, int rank,
                               int group_threads, bool active, int* info) {
  int const levels = split_level::count(n);
  auto rows_of = [&](split_level const& l) { return l.loaded ? sys : work; };
  auto original_row = [](int L, int j) { return (j + 1) * (1 << L) - 1; };
  tridiag_equation<T> const identity{T(0), T(1), T(0), T(0)};
  // Forward: level L + 1's equation h is level L's 2h + 1 absorbing 2h and
  // 2h + 2 (when present).
  for (int L = 0; L < levels; ++L) {
    split_level const cur = split_level::of(n, L), next = split_level::of(n, L + 1);
    tridiag_rows<T> const src = rows_of(cur);
    if (active)
      for (int h = rank; h < next.m; h += group_threads) {
        tridiag_equation<T> const e = split_load(src, cur.at(2 * h + 1)), lo = split_load(src, cur.at(2 * h));
        bool const has_hi = 2 * h + 2 < cur.m;
        tridiag_equation<T> const hi = has_hi ? split_load(src, cur.at(2 * h + 2)) : identity;
        if (!usable_pivot(lo.b)) record_breakdown(info, original_row(L, 2 * h));
        if (has_hi && !usable_pivot(hi.b)) record_breakdown(info, original_row(L, 2 * h + 2));
        T const k1 = e.a / lo.b;
        tridiag_equation<T> r{-lo.a * k1, e.b - lo.c * k1, T(0), e.d - lo.d * k1};
        if (has_hi) {
          T const k2 = e.c / hi.b;
          r.c = -hi.c * k2;
          r.b -= hi.a * k2;
          r.d -= hi.d * k2;
        }
        split_store(work, next.at(h), r);
      }
    __syncthreads();
  }
  // The top level: one or two equations, by Cramer's rule for two.
  split_level const top = split_level::of(n, levels);
  if (active && rank == 0) {
    tridiag_rows<T> const tr = rows_of(top);
    int const p0 = top.at(0);
    if (top.m == 1) {
      T const b = tr.b[p0];
      if (!usable_pivot(b)) record_breakdown(info, original_row(levels, 0));
      tr.d[p0] = tr.d[p0] / b;
    } else {
      int const p1 = top.at(1);
      T const det = tr.b[p0] * tr.b[p1] - tr.c[p0] * tr.a[p1];
      if (!usable_pivot(det)) record_breakdown(info, original_row(levels, 1));
      T const x0 = (tr.d[p0] * tr.b[p1] - tr.c[p0] * tr.d[p1]) / det;
      T const x1 = (tr.b[p0] * tr.d[p1] - tr.d[p0] * tr.a[p1]) / det;
      tr.d[p0] = x0;
      tr.d[p1] = x1;
    }
  }
  __syncthreads();
  // Back substitution: level L's even equation 2h takes x of its odd
  // neighbours 2h - 1 and 2h + 1 (level L + 1's h - 1 and h); its odd
  // equations copy their x down from level L + 1.
  for (int L = levels - 1; L >= 0; --L) {
    split_level const cur = split_level::of(n, L), up = split_level::of(n, L + 1);
    tridiag_rows<T> const rows = rows_of(cur);
    if (active)
      for (int h = rank; 2 * h < cur.m; h += group_threads) {
        int const j = 2 * h, p = cur.at(j);
        T v = rows.d[p];
        if (j > 0) v -= rows.a[p] * work.d[up.at(h - 1)];
        if (j + 1 < cur.m) {
          T const xo = work.d[up.at(h)];
          v -= rows.c[p] * xo;
          rows.d[cur.at(j + 1)] = xo;
        }
        T const b = rows.b[p];
        if (!usable_pivot(b)) record_breakdown(info, original_row(L, j));
        rows.d[p] = v / b;
      }
    __syncthreads();
  }
}

}  // namespace recur::kernels
