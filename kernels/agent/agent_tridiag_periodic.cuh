#pragma once
// Periodic systems through the fast no-pivot forms, by Sherman-Morrison
// (dispatch_tridiag_periodic.cuh runs the steps): with gamma the pivoted
// form's (pivot_periodic_gamma) and w = a_0 / gamma, the matrix A' is A
// without its corners, b'_0 = b_0 - gamma and b'_(n-1) = b_(n-1) - c_(n-1) w,
// so that A = A' + u v^T with u = (gamma, 0, ..., 0, c_(n-1)) and
// v = (1, 0, ..., 0, w). The fast forms solve A' y = d and A' z = u; then
// x = y - s z with s = (y_0 + w y_(n-1)) / (1 + z_0 + w z_(n-1)).
//
// The kernels here are the steps around the two solves, each a pass over
// the layout in memory order (periodic_cursor):
// - split: b' and u into the workspace (a copy of b, two entries changed);
// - divisor: per system, w and the divisor 1 + v^T z, NaN where the divisor
//   is not usable (info n where it was 0), so that the correction gives NaN;
// - correct: x_i = y_i - s z_i for the inner rows 1 .. n-2 of every
//   right-hand side, each element forming s from y_0 and y_(n-1);
// - ends: rows 0 and n-1 after that, since the inner rows read them first.
// Under pivoting = automatic's screen the fast forms flag the systems whose
// A' fails it and leave them unwritten (flags); divisor, correct and ends
// skip those, for the pivoted form to solve them again from d.

#include <cstdint>
#include <limits>

#include <cuda_runtime.h>

#include <recur/layout/layout.hpp>
#include "../thread/thread_tridiag_pivot.cuh"

namespace recur::kernels {

// A grid-stride walk over rows first .. first + rows - 1 of every system of
// lay in memory order: along the rows where element_stride <= batch_stride
// (contiguous), along the systems otherwise (interleaved). One division per
// thread; each step adds the grid's stride as (systems, rows).
struct periodic_cursor {
  std::int64_t i = 0, k = 0;  // row and system
  std::int64_t first_row = 0, rows = 0, count = 0, di = 0, dk = 0;
  bool along_rows = true, live = false;

  __device__ periodic_cursor(layout const& lay, std::int64_t first, std::int64_t rows_)
      : first_row(first), rows(rows_), count(lay.count), along_rows(lay.element_stride <= lay.batch_stride) {
    std::int64_t const t = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
    std::int64_t const g = std::int64_t(gridDim.x) * blockDim.x;
    std::int64_t const fast = along_rows ? rows : count;
    std::int64_t const f = t % fast, s = t / fast;
    std::int64_t const gf = g % fast, gs = g / fast;
    if (along_rows)
      i = f, k = s, di = gf, dk = gs;
    else
      i = s, k = f, di = gs, dk = gf;
    i += first;
    live = i - first < rows && k < count;
  }
  __device__ void next() {
    i += di, k += dk;
    if (along_rows && i - first_row >= rows) i -= rows, ++k;
    if (!along_rows && k >= count) k -= count, ++i;
    live = i - first_row < rows && k < count;
  }
};

template <class T>
struct tridiag_periodic_params {
  T const* a;
  T const* b;
  T const* c;
  T* x;                       // y on entry to correct and ends, x on exit
  T* bs;                      // b' (workspace, the layout's extent)
  T* z;                       // u, then z in place (workspace, the layout's extent)
  T* w;                       // a_0 / gamma per system (workspace)
  T* divisor;                 // 1 + v^T z per system, NaN where unusable (workspace)
  std::int32_t* info;         // may be null
  std::int32_t const* flags;  // the screen: null, or 1 for a system left to the pivoted form
  layout lay;
  std::int64_t nrhs, rhs_stride;
};

template <class T>
__device__ bool periodic_skipped(tridiag_periodic_params<T> const& p, std::int64_t k) {
  return p.flags && p.flags[k] != 0;
}

// Row 0's coefficients of system k.
template <class T>
__device__ pivot_row<T> periodic_row0(tridiag_periodic_params<T> const& p, std::int64_t k) {
  std::int64_t const o = p.lay.offset(0, k);
  return {p.a[o], p.b[o], p.c[o]};
}

// b' and u: row 0 b_0 - gamma (NaN where gamma is not usable: row 0 is zero,
// and the fast solve breaks down at it) and gamma; row n-1 b_(n-1) -
// c_(n-1) w and c_(n-1); the other rows b and 0.
template <class T>
__global__ void tridiag_periodic_split_kernel(__grid_constant__ tridiag_periodic_params<T> const p) {
  std::int64_t const n = p.lay.n;
  for (periodic_cursor q(p.lay, 0, n); q.live; q.next()) {
    std::int64_t const o = p.lay.offset(q.i, q.k);
    T bv = p.b[o], uv = T(0);
    if (q.i == 0 || q.i == n - 1) {
      pivot_row<T> const r0 = periodic_row0(p, q.k);
      T const gamma = pivot_periodic_gamma(r0);
      if (q.i == 0) {
        bv = usable_pivot(gamma) ? bv - gamma : std::numeric_limits<T>::quiet_NaN();
        uv = gamma;
      } else {
        T const cv = p.c[o];
        bv = bv - cv * (r0.a / gamma);
        uv = cv;
      }
    }
    p.bs[o] = bv;
    p.z[o] = uv;
  }
}

// Per system: w and the divisor 1 + z_0 + w z_(n-1) (the pivoted form's
// expression); where it is not usable, NaN, and info n where the solves
// did not break down.
template <class T>
__global__ void tridiag_periodic_divisor_kernel(__grid_constant__ tridiag_periodic_params<T> const p) {
  std::int64_t const k = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (k >= p.lay.count || periodic_skipped(p, k)) return;
  std::int64_t const n = p.lay.n;
  pivot_row<T> const r0 = periodic_row0(p, k);
  T const w = r0.a / pivot_periodic_gamma(r0);
  T const den = T(1) + p.z[p.lay.offset(0, k)] + w * p.z[p.lay.offset(n - 1, k)];
  bool const usable = usable_pivot(den);
  if (!usable && p.info && p.info[k] == 0) p.info[k] = static_cast<std::int32_t>(n);
  p.w[k] = w;
  p.divisor[k] = usable ? den : std::numeric_limits<T>::quiet_NaN();
}

// s of system k for the right-hand side at x + shift.
template <class T>
__device__ T periodic_scale(tridiag_periodic_params<T> const& p, std::int64_t k, std::int64_t shift) {
  T const y0 = p.x[shift + p.lay.offset(0, k)], yn = p.x[shift + p.lay.offset(p.lay.n - 1, k)];
  return (y0 + p.w[k] * yn) / p.divisor[k];
}

// x_i = y_i - s z_i for rows 1 .. n-2; right-hand sides along y.
template <class T>
__global__ void tridiag_periodic_correct_kernel(__grid_constant__ tridiag_periodic_params<T> const p) {
  for (std::int64_t r = blockIdx.y; r < p.nrhs; r += gridDim.y) {
    std::int64_t const shift = r * p.rhs_stride;
    for (periodic_cursor q(p.lay, 1, p.lay.n - 2); q.live; q.next()) {
      if (periodic_skipped(p, q.k)) continue;
      std::int64_t const o = p.lay.offset(q.i, q.k);
      p.x[shift + o] = p.x[shift + o] - periodic_scale(p, q.k, shift) * p.z[o];
    }
  }
}

// Rows 0 and n-1, one thread per system and right-hand side.
template <class T>
__global__ void tridiag_periodic_ends_kernel(__grid_constant__ tridiag_periodic_params<T> const p) {
  std::int64_t const k = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (k >= p.lay.count || periodic_skipped(p, k)) return;
  for (std::int64_t r = blockIdx.y; r < p.nrhs; r += gridDim.y) {
    std::int64_t const shift = r * p.rhs_stride;
    T const s = periodic_scale(p, k, shift);
    for (std::int64_t const i : {std::int64_t(0), p.lay.n - 1}) {
      std::int64_t const o = p.lay.offset(i, k);
      p.x[shift + o] = p.x[shift + o] - s * p.z[o];
    }
  }
}

}  // namespace recur::kernels
