#pragma once
// Thomas-PCR on systems in shared memory or registers: the chunk sweeps,
// the boundary systems' PCR (with spike columns for segments coupled to
// their neighbours) and the group and warp solvers built from them. Laszlo,
// Giles and Appleyard 2016; the block-level pieces of agent_tridiag_tile,
// _direct, _columns, _segments and _partition.

#include <cuda_runtime.h>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>
#include "block_tridiag.cuh"

namespace recur::kernels {

// ------------------------------------------------------------ Thomas-PCR ---

// Laszlo, Giles and Appleyard 2016 (the PCR-Thomas hybrid Davidson and Owens
// compare with): each thread takes a run of consecutive rows (a chunk, at
// least 2 rows) and eliminates it with a modified Thomas sweep, forward then
// backward, so that every row of the chunk reads
//     a'_i x_first + x_i + c'_i x_last = d'_i          (interior rows)
// and its first and last rows couple only to the neighbouring chunks' last
// and first rows:
//     a'_0 x_(first-1) + x_first + c'_0 x_last = d'_0
//     a'_L x_first + x_last + c'_L x_(last+1) = d'_L.
// Those 2 equations per chunk form a tridiagonal system of 2P unknowns
// (first_0, last_0, first_1, ...), all normalised (b = 1); once it is solved
// each thread substitutes x_first and x_last into its interior rows. Work is
// O(n) like Thomas; the sequential chain is one chunk long.
// In the arrays a' replaces a, c' replaces c, d' and then x replace d.

// A normalised equation (b = 1).
template <class T>
struct tridiag_eq3 {
  T a, c, d;
};

template <class T>
struct chunk_ends {
  tridiag_eq3<T> first, last;
};

// The chunk [first, first + len) of sys, len >= 2: forward and backward
// sweeps; returns its two boundary equations.
template <class T, class Sink>
__device__ chunk_ends<T> chunk_reduce(tridiag_rows<T> const& sys, int first, int len, Sink breakdown) {
  auto at = [first](int i) { return tridiag_pos(first + i); };
  // Forward: rows 0 and 1 normalised; rows i >= 2 lose x_(i-1), keep x_first.
  T a_prev = 0, c_prev = 0, d_prev = 0;
  for (int i = 0; i < len; ++i) {
    int const q = at(i);
    T const ai = sys.a[q], bi = sys.b[q], ci = sys.c[q], di = sys.d[q];
    T p = bi, num_d = di, num_a = ai;
    if (i >= 2) {
      p = bi - ai * c_prev;
      num_d = di - ai * d_prev;
      num_a = -ai * a_prev;
    }
    if (!usable_pivot(p)) breakdown(first + i);
    T const r = pivot_rcp(p);
    a_prev = num_a * r;
    c_prev = ci * r;
    d_prev = num_d * r;
    sys.a[q] = a_prev;
    sys.c[q] = c_prev;
    sys.d[q] = d_prev;
  }
  chunk_ends<T> e;
  e.last = {a_prev, c_prev, d_prev};
  // Backward: rows len-3 .. 1 lose x_(i+1), gain x_last.
  int const q2 = at(len - 2);
  T an1 = sys.a[q2], cn1 = sys.c[q2], dn1 = sys.d[q2];
  for (int i = len - 3; i >= 1; --i) {
    int const q = at(i);
    T const ci = sys.c[q];
    dn1 = sys.d[q] - ci * dn1;
    an1 = sys.a[q] - ci * an1;
    cn1 = -ci * cn1;
    sys.a[q] = an1;
    sys.c[q] = cn1;
    sys.d[q] = dn1;
  }
  // Row 0 loses x_1 (when row 1 is interior) in favour of x_last.
  int const q0 = at(0);
  e.first = {sys.a[q0], sys.c[q0], sys.d[q0]};
  if (len >= 3) {
    T const p = T(1) - e.first.c * an1;
    if (!usable_pivot(p)) breakdown(first);
    T const r = pivot_rcp(p);
    e.first = {r * e.first.a, -r * e.first.c * cn1, r * (e.first.d - e.first.c * dn1)};
  }
  return e;
}

template <class T>
__device__ void chunk_substitute(tridiag_rows<T> const& sys, int first, int len, T xf, T xl) {
  sys.d[tridiag_pos(first)] = xf;
  sys.d[tridiag_pos(first + len - 1)] = xl;
  for (int i = 1; i + 1 < len; ++i) {
    int const q = tridiag_pos(first + i);
    sys.d[q] = sys.d[q] - sys.a[q] * xf - sys.c[q] * xl;
  }
}

// The same two sweeps with the chunk in registers (len <= R): each row is
// read from shared memory once, all of them up front (the loops are
// unrolled over R, rows past len predicated off), and nothing is written
// back until chunk_substitute_regs stores x. The arithmetic is chunk_reduce's,
// operation for operation, so the results are bitwise the same; a breakdown
// is remembered and reported once, after the sweeps (no branch in the
// loops; the sink must keep the smallest row, as record_breakdown does).
template <class T, int R>
struct chunk_regs {
  T a[R], c[R], d[R];
};

// A chunk's normalised rows in memory instead (shared memory, row i at
// a[i]): chunk_sweeps over either storage.
template <class T>
struct chunk_span {
  T* a;
  T* c;
  T* d;
};

// The sweeps on a chunk whose rows come from load(i) (a tridiag_equation;
// called in order, for row i + 1 before row i's arithmetic, never past
// len), the normalised rows left in k (chunk_regs<T, R>, or chunk_span with
// len <= R). load may read k itself (rows not yet reached): row i is
// written only after row i + 1 was loaded.
// SelectBad: the first bad row kept with a select instead of a branch: the
// columns kernels' choice; the direct kernels keep the branch, whose
// registers they cannot spare.
// Chain: no backward sweep. Row 1's equation in x_first and x_last (what
// the backward sweep's last step gives) is composed during the forward
// sweep instead, from the rows as they are normalised (x_1 = D - A x_first
// - C x_(i+1), row i substituted for x_i: 3 multiply-adds a row in
// registers, against the backward sweep's 3 reads, 3 multiply-adds and 3
// writes of k a row). The interior rows are left as the forward sweep made
// them, x_i = d_i - a_i x_first - c_i x_(i+1), so the substitution runs from
// the last row up (columns_store's Chain form), not row by row independently;
// the sums are the same but added in another order, so x differs from the
// two-sweep form's in its last bits.
template <class T, int R, bool SelectBad = false, bool Chain = false, class K, class Load, class Sink>
__device__ __forceinline__ chunk_ends<T> chunk_sweeps(int first, int len, K& k, Load load, Sink breakdown) {
  T a_prev = 0, c_prev = 0, d_prev = 0;
  T an1 = 0, cn1 = 0, dn1 = 0;  // Chain: row 1 in x_first and x_(i+1) so far
  int bad = -1;
  tridiag_equation<T> next = load(0);
#pragma unroll
  for (int i = 0; i < R; ++i) {
    if (i < len) {
      // The empty asm keeps the compiler from hoisting every row's loads to
      // the top (4 R live values and addresses: spills).
      tridiag_equation<T> const row = next;
      if (i + 1 < R && i + 1 < len) next = load(i + 1);
      asm volatile("" ::: "memory");
      T p = row.b, num_d = row.d, num_a = row.a;
      if (i >= 2) {
        p = row.b - row.a * c_prev;
        num_d = row.d - row.a * d_prev;
        num_a = -row.a * a_prev;
      }
      if constexpr (SelectBad)
        bad = (bad < 0) & !usable_pivot(p) ? first + i : bad;
      else if (bad < 0 && !usable_pivot(p))
        bad = first + i;
      T const r = pivot_rcp(p);
      a_prev = num_a * r;
      c_prev = row.c * r;
      d_prev = num_d * r;
      k.a[i] = a_prev;
      k.c[i] = c_prev;
      k.d[i] = d_prev;
      if constexpr (Chain) {
        if (i == 1) {
          an1 = a_prev, cn1 = c_prev, dn1 = d_prev;
        } else if (i >= 2 && i <= len - 2) {
          dn1 = dn1 - cn1 * d_prev;
          an1 = an1 - cn1 * a_prev;
          cn1 = -cn1 * c_prev;
        }
      }
    }
  }
  chunk_ends<T> e;
  e.last = {a_prev, c_prev, d_prev};
  if constexpr (!Chain) {
#pragma unroll
    for (int i = 0; i < R; ++i)
      if (i == len - 2) an1 = k.a[i], cn1 = k.c[i], dn1 = k.d[i];
#pragma unroll
    for (int i = R - 3; i >= 1; --i) {
      if (i <= len - 3) {
        T const ci = k.c[i];
        dn1 = k.d[i] - ci * dn1;
        an1 = k.a[i] - ci * an1;
        cn1 = -ci * cn1;
        k.a[i] = an1;
        k.c[i] = cn1;
        k.d[i] = dn1;
      }
    }
  }
  e.first = {k.a[0], k.c[0], k.d[0]};
  if (len >= 3) {
    T const p = T(1) - e.first.c * an1;
    if (!usable_pivot(p)) bad = first;  // the chunk's first row: smaller than any above
    T const r = pivot_rcp(p);
    e.first = {r * e.first.a, -r * e.first.c * cn1, r * (e.first.d - e.first.c * dn1)};
  }
  if (bad >= 0) breakdown(bad);
  return e;
}

template <class T, int R, class Sink>
__device__ __forceinline__ chunk_ends<T> chunk_reduce_regs(tridiag_rows<T> const& sys, int first, int len,
                                                           chunk_regs<T, R>& k, Sink breakdown) {
  return chunk_sweeps<T, R>(
      first, len, k,
      [&](int i) {
        int const q = tridiag_pos(first + i);
        return tridiag_equation<T>{sys.a[q], sys.b[q], sys.c[q], sys.d[q]};
      },
      breakdown);
}

template <class T, int R>
__device__ __forceinline__ void chunk_substitute_regs(tridiag_rows<T> const& sys, int first, int len,
                                                      chunk_regs<T, R> const& k, T xf, T xl) {
#pragma unroll
  for (int i = 0; i < R; ++i)
    if (i < len)
      sys.d[tridiag_pos(first + i)] = i == 0 ? xf : i == len - 1 ? xl : k.d[i] - k.a[i] * xf - k.c[i] * xl;
}

// Rows per chunk that warp_thomas_pcr keeps in registers (longer chunks run
// from shared memory; 0: never). f32 only: 16 rows take 48 registers (118
// in all for the Thomas-PCR tile kernel, against 60 from shared memory);
// f64's 96 would spill under the kernel's 512-thread bound. Only the
// tile solver thomas_pcr_regs (one warp per system) uses it: group_thomas_pcr
// keeps its chunks in shared memory (with a chunk in registers across the
// boundary system's solve, which holds one of its own, it spilled), and the
// other shapes keep the occupancy of 60 registers.
template <class T>
inline constexpr int chunk_reg_rows = sizeof(T) == 4 ? 16 : 0;

// The pivots of the spikes' solves (warp_boundary_pcr with spike columns,
// spike_forward, spike_pcr_combine): chains of a few steps that the
// block's other warps wait for, so the reciprocal's latency is the
// chain's. f32: usable_pivot and pivot_rcp (bitwise 1 / p). f64: the
// approximate reciprocal and two Newton steps (within an ulp of 1 / p, no
// branch to the division's slow path), for 2^-1022 <= |p| < 2^1022 (an
// exponent test on the high word); a pivot outside that is a breakdown.
// The division's range test and call would be most of such a step. The
// sweeps keep the division in f64, where the inline form costs registers
// the sweeps need.
template <class T>
__device__ __forceinline__ bool join_usable(T p) {
  if constexpr (sizeof(T) == 4) {
    return usable_pivot(p);
  } else {
    // Biased exponent e in [1, 2044]: (e + 3) mod 2048 >= 4.
    unsigned const hi = unsigned(__double2hiint(p));
    return ((hi + 0x00300000u) & 0x7ff00000u) > 0x003fffffu;
  }
}
template <class T>
__device__ __forceinline__ T join_rcp(T p) {
  if constexpr (sizeof(T) == 4) {
    return pivot_rcp(p);
  } else {
    double r;
    asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(r) : "d"(p));
    r = fma(r, fma(-p, r, 1.0), r);
    return fma(r, fma(-p, r, 1.0), r);
  }
}

// Extra right-hand columns that warp_boundary_pcr carries through its
// steps (the spikes of a warp's system coupled to its neighbours').
template <class T, int S>
struct boundary_cols {
  T v[S > 0 ? S : 1];
};

// PCR on the 2 * chunks boundary equations of a warp (chunks <= width):
// lane p < chunks holds equations 2p (f0) and 2p + 1 (f1), normalised
// (b = 1), and ends with x of both in their d. Every equation is kept
// normalised, so a step needs one reciprocal per equation and b never
// travels. row_of(j) is the row that info reports for equation j. All 32
// lanes call it; with width < 32 (a power of two) each segment of `width`
// lanes solves its own system, lane being the lane within the segment.
// With S > 0, g0 and g1 hold S more right-hand columns of f0 and f1, which
// every step combines as it combines d.
//
// CrFirst: one step of cyclic reduction first, then PCR on half the
// equations. PCR's first step leaves the odd equations (the chunks' last
// unknowns) coupled only to each other; they alone go on through the
// remaining steps (2 equations shuffled per step instead of 4), and the even
// unknowns come back from their own equations at the end,
// x_2p = d_2p - a_2p x_(2p-1) - c_2p x_(2p+1) (one shuffle, no division).
// The odd equations' arithmetic is PCR's, operation for operation; the even
// ones' pivots are never formed, so a breakdown is reported only through
// the odd equations (and the sweeps). It is the default: fewer
// instructions, one more dependent step (the substitution). Where one warp
// solves while the rest of its block waits (group_thomas_pcr's several
// warps, the direct group kernel without spikes) that step is on the
// critical path and plain PCR is used.
template <class T, int S = 0, bool CrFirst = true, class RowOf>
__device__ __forceinline__ void warp_boundary_pcr(tridiag_eq3<T>& f0, tridiag_eq3<T>& f1, int chunks,
                                                  int lane, bool mine, int* info, RowOf row_of,
                                                  int width = 32, boundary_cols<T, S>* g0 = nullptr,
                                                  boundary_cols<T, S>* g1 = nullptr) {
  auto shfl = [width](tridiag_eq3<T> const& q, int src) {
    return tridiag_eq3<T>{__shfl_sync(0xffffffffu, q.a, src, width),
                          __shfl_sync(0xffffffffu, q.c, src, width),
                          __shfl_sync(0xffffffffu, q.d, src, width)};
  };
  auto shfl_cols = [width](boundary_cols<T, S> const& q, int src) {
    boundary_cols<T, S> o;
#pragma unroll
    for (int k = 0; k < S; ++k) o.v[k] = __shfl_sync(0xffffffffu, q.v[k], src, width);
    return o;
  };
  // q - k1 lo - k2 hi, normalised; the same factors on the columns.
  auto combine = [&](tridiag_eq3<T> const& q, int j, bool has_lo, tridiag_eq3<T> const& lo, bool has_hi,
                     tridiag_eq3<T> const& hi, boundary_cols<T, S>* g, boundary_cols<T, S> const& glo,
                     boundary_cols<T, S> const& ghi) {
    T const k1 = has_lo ? q.a : T(0), k2 = has_hi ? q.c : T(0);
    T const b = T(1) - (has_lo ? lo.c * k1 : T(0)) - (has_hi ? hi.a * k2 : T(0));
    if (!(S > 0 ? join_usable(b) : usable_pivot(b))) record_breakdown(info, row_of(j));
    T const r = S > 0 ? join_rcp(b) : pivot_rcp(b);
    if constexpr (S > 0) {
#pragma unroll
      for (int k = 0; k < S; ++k)
        g->v[k] = (g->v[k] - (has_lo ? glo.v[k] * k1 : T(0)) - (has_hi ? ghi.v[k] * k2 : T(0))) * r;
    }
    return tridiag_eq3<T>{has_lo ? -lo.a * k1 * r : T(0), has_hi ? -hi.c * k2 * r : T(0),
                          (q.d - (has_lo ? lo.d * k1 : T(0)) - (has_hi ? hi.d * k2 : T(0))) * r};
  };
  if constexpr (CrFirst) {
    int const j1 = 2 * lane + 1;
    {  // f1 loses x_first (its own f0) and x_(last+1) (the next lane's f0)
      tridiag_eq3<T> const hi1 = shfl(f0, min(lane + 1, width - 1));
      boundary_cols<T, S> glo1{}, ghi1{};
      if constexpr (S > 0) glo1 = *g0, ghi1 = shfl_cols(*g0, min(lane + 1, width - 1));
      if (mine) f1 = combine(f1, j1, true, f0, lane + 1 < chunks, hi1, g1, glo1, ghi1);
    }
    for (int h = 1; h < chunks; h *= 2) {  // PCR on the chunks' last unknowns
      tridiag_eq3<T> const lo1 = shfl(f1, max(lane - h, 0)), hi1 = shfl(f1, min(lane + h, width - 1));
      boundary_cols<T, S> glo1{}, ghi1{};
      if constexpr (S > 0) {
        glo1 = shfl_cols(*g1, max(lane - h, 0));
        ghi1 = shfl_cols(*g1, min(lane + h, width - 1));
      }
      if (mine) f1 = combine(f1, j1, lane >= h, lo1, lane + h < chunks, hi1, g1, glo1, ghi1);
    }
    // x_first = d - a x_(previous last) - c x_last
    T const xp = __shfl_sync(0xffffffffu, f1.d, max(lane - 1, 0), width);
    boundary_cols<T, S> gp{};
    if constexpr (S > 0) gp = shfl_cols(*g1, max(lane - 1, 0));
    if (mine) {
      T const ka = lane > 0 ? f0.a : T(0);
      f0.d = f0.d - ka * xp - f0.c * f1.d;
      if constexpr (S > 0) {
#pragma unroll
        for (int k = 0; k < S; ++k) g0->v[k] = g0->v[k] - ka * gp.v[k] - f0.c * g1->v[k];
      }
      f0.a = T(0), f0.c = T(0);
    }
  } else {
    int const m = 2 * chunks;
    for (int t = 1; t < m; t *= 2) {
      tridiag_eq3<T> lo0, hi0, lo1, hi1;
      boundary_cols<T, S> glo0, ghi0, glo1, ghi1;
      if (t == 1) {
        lo0 = shfl(f1, max(lane - 1, 0));          // 2p - 1: the previous lane's second
        hi0 = f1;                                  // 2p + 1: own second
        lo1 = f0;                                  // 2p: own first
        hi1 = shfl(f0, min(lane + 1, width - 1));  // 2p + 2: the next lane's first
        if constexpr (S > 0) {
          glo0 = shfl_cols(*g1, max(lane - 1, 0));
          ghi0 = *g1;
          glo1 = *g0;
          ghi1 = shfl_cols(*g0, min(lane + 1, width - 1));
        }
      } else {
        int const h = t / 2;
        lo0 = shfl(f0, max(lane - h, 0));
        hi0 = shfl(f0, min(lane + h, width - 1));
        lo1 = shfl(f1, max(lane - h, 0));
        hi1 = shfl(f1, min(lane + h, width - 1));
        if constexpr (S > 0) {
          glo0 = shfl_cols(*g0, max(lane - h, 0));
          ghi0 = shfl_cols(*g0, min(lane + h, width - 1));
          glo1 = shfl_cols(*g1, max(lane - h, 0));
          ghi1 = shfl_cols(*g1, min(lane + h, width - 1));
        }
      }
      int const j0 = 2 * lane, j1 = 2 * lane + 1;
      if (mine) {
        tridiag_eq3<T> const n0 = combine(f0, j0, j0 - t >= 0, lo0, j0 + t < m, hi0, g0, glo0, ghi0);
        f1 = combine(f1, j1, j1 - t >= 0, lo1, j1 + t < m, hi1, g1, glo1, ghi1);
        f0 = n0;
      }
    }
  }
}

// Segments of one system joined through spikes: after its own boundary
// solve (warp_boundary_pcr with two extra columns), segment w's first and
// last unknowns read
//     x_first + l0 x_L + r0 x_R = d0,   x_last + l1 x_L + r1 x_R = d1,
// with x_L the previous segment's last unknown and x_R the next one's
// first. In U_w = (x_first, x_last) that is a block tridiagonal system,
// U_w + [0 l0; 0 l1] U_(w-1) + [r0 0; r1 0] U_(w+1) = (d0, d1), whose block
// Thomas needs one reciprocal per segment: the elimination matrix is lower
// triangular (with c = the carried C'_(w-1)[1], p = 1 - l0 c). spike_forward
// eliminates segment w given the carry of w - 1 and returns what
// spike_backward needs; spike_backward gives U_w from x_R.
template <class T>
struct spike_link {
  T l0, r0, d0, l1, r1, d1;
};
template <class T>
struct spike_elim {
  T c0, d0, c1, d1;  // x_first = d0 - c0 x_R, x_last = d1 - c1 x_R
};
template <class T>
struct spike_carry {
  T c = T(0), d = T(0);  // C'_(w-1)[1], D'_(w-1)[1]
};

// ok is cleared when the segment's pivot is unusable.
template <class T>
__device__ __forceinline__ spike_elim<T> spike_forward(spike_link<T> const& q, spike_carry<T>& k, bool& ok) {
  T const piv = T(1) - q.l0 * k.c;
  ok = join_usable(piv);
  T const ip = join_rcp(piv), e1 = q.l1 * k.c;
  T const c0 = q.r0 * ip, dd0 = (q.d0 - q.l0 * k.d) * ip;
  T const c1 = q.r1 + e1 * c0, dd1 = (q.d1 - q.l1 * k.d) + e1 * dd0;
  k = {c1, dd1};
  return {c0, dd0, c1, dd1};
}

// U_w = (x_first, x_last) from the next segment's x_first (0 past the last).
template <class T>
__device__ __forceinline__ void spike_backward(spike_elim<T> const& e, T xr, T& x_first, T& x_last) {
  x_first = e.d0 - e.c0 * xr;
  x_last = e.d1 - e.c1 * xr;
}

// The same block tridiagonal system by PCR (one step of stride h): row w,
// normalised (U_w's own block is I) and held as its spike_link, combined
// with rows w - h (lo, when has_lo) and w + h (hi, when has_hi):
//     (I - A_w C_lo - C_w A_hi) U_w - A_w A_lo U_(w-2h) - C_w C_hi U_(w+2h)
//         = D_w - A_w D_lo - C_w D_hi,
// with A = [0 l0; 0 l1] and C = [r0 0; r1 0]. Products of such matrices
// keep their zero column, and so does the product with the inverse of the
// new 2 x 2 diagonal block, so the row stays a spike_link (its l now
// couples to U_(w-2h)'s x_last, its r to U_(w+2h)'s x_first). Once h has
// passed the last row, U_w = (d0, d1). ok is cleared when the diagonal
// block is singular or not finite.
template <class T>
__device__ __forceinline__ spike_link<T> spike_pcr_combine(spike_link<T> const& q, bool has_lo,
                                                           spike_link<T> const& lo, bool has_hi,
                                                           spike_link<T> const& hi, bool& ok) {
  T const lr1 = has_lo ? lo.r1 : T(0), ll1 = has_lo ? lo.l1 : T(0), ld1 = has_lo ? lo.d1 : T(0);
  T const hl0 = has_hi ? hi.l0 : T(0), hr0 = has_hi ? hi.r0 : T(0), hd0 = has_hi ? hi.d0 : T(0);
  T const m00 = T(1) - q.l0 * lr1, m01 = -q.r0 * hl0;
  T const m10 = -q.l1 * lr1, m11 = T(1) - q.r1 * hl0;
  T const det = m00 * m11 - m01 * m10;
  ok = join_usable(det);
  T const id = join_rcp(det);
  // (v0, v1) -> M^-1 (v0, v1)
  auto solve = [&](T v0, T v1, T& o0, T& o1) {
    o0 = (m11 * v0 - m01 * v1) * id;
    o1 = (m00 * v1 - m10 * v0) * id;
  };
  spike_link<T> o;
  solve(-q.l0 * ll1, -q.l1 * ll1, o.l0, o.l1);
  solve(-q.r0 * hr0, -q.r1 * hr0, o.r0, o.r1);
  solve(q.d0 - q.l0 * ld1 - q.r0 * hd0, q.d1 - q.l1 * ld1 - q.r1 * hd0, o.d0, o.d1);
  return o;
}

// The same 2 * chunks boundary equations (lane p < chunks holding 2p in
// f0 and 2p + 1 in f1, normalised) solved in order by Thomas: every lane
// runs the same chain, equation j fetched from lane j / 2, and lane j / 2
// keeps its eliminated equations for the backward sweep; x ends in the
// lanes' d. 2 * chunks dependent steps instead of PCR's log2, but backward
// stable: PCR computes each unknown by its own elimination, so its residual
// grows with the boundary system's condition number (thousands of eps on
// the coarse Poisson system that a large weakly dominant system reduces
// to), while Thomas's stays a few eps. Only lane 0 reports a breakdown.
template <class T, class RowOf>
__device__ __forceinline__ void warp_boundary_thomas(tridiag_eq3<T>& f0, tridiag_eq3<T>& f1, int chunks,
                                                     int lane, int* info, RowOf row_of) {
  int const m = 2 * chunks;
  T cp = T(0), dp = T(0);                        // the previous equation's c' and d'
  T c0 = T(0), d0 = T(0), c1 = T(0), d1 = T(0);  // this lane's eliminated equations
#pragma unroll 4
  for (int j = 0; j < m; ++j) {
    int const src = j >> 1;
    bool const odd = j & 1;
    T const a = __shfl_sync(0xffffffffu, odd ? f1.a : f0.a, src);
    T const c = __shfl_sync(0xffffffffu, odd ? f1.c : f0.c, src);
    T const d = __shfl_sync(0xffffffffu, odd ? f1.d : f0.d, src);
    T const ka = j > 0 ? a : T(0), kc = j + 1 < m ? c : T(0);
    T const p = T(1) - ka * cp;
    if (lane == 0 && !usable_pivot(p)) record_breakdown(info, row_of(j));
    T const r = pivot_rcp(p);
    cp = kc * r;
    dp = (d - ka * dp) * r;
    if (lane == src) (odd ? c1 : c0) = cp, (odd ? d1 : d0) = dp;
  }
  T x = T(0);
#pragma unroll 4
  for (int j = m - 1; j >= 0; --j) {
    int const src = j >> 1;
    bool const odd = j & 1;
    T const c = __shfl_sync(0xffffffffu, odd ? c1 : c0, src);
    T const d = __shfl_sync(0xffffffffu, odd ? d1 : d0, src);
    x = d - c * x;
    if (lane == src) (odd ? f1.d : f0.d) = x;
  }
}

// One warp, one system. row_map turns a row of this system into the row
// reported in info (the identity, or the original row when the system is a
// reduced one). serial_join: the boundary system by warp_boundary_thomas
// instead of PCR (the partitioned form's reduced systems, which must stay
// backward stable however weakly dominant they are).
template <class T, bool Regs = true, bool CrFirst = true, class RowMap = identity_rows>
__device__ void warp_thomas_pcr(tridiag_rows<T> const& sys, int n, int lane, bool active, int* info,
                                RowMap row_map = {}, bool serial_join = false) {
  if (!active) return;
  if (n == 1) {
    if (lane == 0) {
      T const b = sys.b[0];
      if (!usable_pivot(b)) record_breakdown(info, row_map(0));
      sys.d[0] = sys.d[0] / b;
    }
    __syncwarp();
    return;
  }
  int const chunks = min(32, n / 2);
  chunk_split const split{n / chunks, n % chunks};
  bool const mine = lane < chunks;
  int const first = mine ? split.first(lane) : 0, len = mine ? split.len(lane) : 0;
  chunk_ends<T> e{{T(0), T(0), T(0)}, {T(0), T(0), T(0)}};
  constexpr int R = chunk_reg_rows<T>;
  bool const regs = Regs && R > 0 && split.base + (split.extra ? 1 : 0) <= R;  // the same in every lane
  chunk_regs<T, (R > 0 ? R : 1)> k;                                            // unused when R is 0
  auto const sink = [&](int r) { record_breakdown(info, row_map(r)); };
  if (mine) e = regs ? chunk_reduce_regs(sys, first, len, k, sink) : chunk_reduce(sys, first, len, sink);
  auto const row_of = [&](int j) {  // the row of reduced equation j
    int const p = j / 2;
    return row_map((j & 1) ? split.first(p) + split.len(p) - 1 : split.first(p));
  };
  tridiag_eq3<T> f0 = e.first, f1 = e.last;
  if (serial_join)
    warp_boundary_thomas(f0, f1, chunks, lane, info, row_of);
  else
    warp_boundary_pcr<T, 0, CrFirst>(f0, f1, chunks, lane, mine, info, row_of);
  if (mine) {
    if (regs)
      chunk_substitute_regs(sys, first, len, k, f0.d, f1.d);
    else
      chunk_substitute(sys, first, len, f0.d, f1.d);
  }
  __syncwarp();
}

// A group of 32 W threads (W warps), one system: every thread reduces a
// chunk, the 2 boundary equations per chunk go to `red` (a system of
// 64 W rows in shared memory, at tridiag_pos), warp 0 of the group solves it
// with warp_thomas_pcr, then every thread substitutes. All groups of the
// block run this together (it has __syncthreads); inactive groups pass the
// barriers. serial_join: warp_thomas_pcr's.
template <class T>
__device__ void group_thomas_pcr(tridiag_rows<T> const& sys, tridiag_rows<T> const& red, int n, int rank,
                                 int group_threads, bool active, int* info, bool serial_join = false) {
  if (group_threads == 32) {
    warp_thomas_pcr<T, false>(sys, n, rank, active, info, identity_rows{}, serial_join);
    return;
  }
  int const chunks = n >= 2 ? min(group_threads, n / 2) : 1;
  chunk_split const split{n / chunks, n % chunks};
  bool const mine = active && rank < chunks && n >= 2;
  int const first = mine ? split.first(rank) : 0, len = mine ? split.len(rank) : 0;
  if (mine) {
    chunk_ends<T> const e = chunk_reduce(sys, first, len, [&](int r) { record_breakdown(info, r); });
    int const q0 = tridiag_pos(2 * rank), q1 = tridiag_pos(2 * rank + 1);
    red.a[q0] = e.first.a, red.b[q0] = T(1), red.c[q0] = e.first.c, red.d[q0] = e.first.d;
    red.a[q1] = e.last.a, red.b[q1] = T(1), red.c[q1] = e.last.c, red.d[q1] = e.last.d;
  }
  __syncthreads();
  if (active && rank < 32) {
    if (n >= 2)
      warp_thomas_pcr<T, false, false>(
          red, 2 * chunks, rank, true, info,
          [split](int j) {
            int const p = j / 2;
            return (j & 1) ? split.first(p) + split.len(p) - 1 : split.first(p);
          },
          serial_join);
    else
      warp_thomas_pcr(sys, 1, rank, true, info);
  }
  __syncthreads();
  if (mine) chunk_substitute(sys, first, len, red.d[tridiag_pos(2 * rank)], red.d[tridiag_pos(2 * rank + 1)]);
}

}  // namespace recur::kernels
