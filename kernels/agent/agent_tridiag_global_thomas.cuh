#pragma once
// Thomas through global memory: one thread per system, any n, the fallback
// of algorithm thomas for systems too long for a shared-memory tile. c' and
// d' go to the workspace (system k's row i at i count + k, so adjacent
// threads touch adjacent words); the back substitution then writes x.
// Coalesced where the layout interleaves the systems; not a fast path
// otherwise.
//
// Under pivoting = automatic's screen (flags), a system with a row that is
// not diagonally dominant (block_tridiag.cuh's row_dominant) or an unusable
// pivot is flagged and its x left unwritten, for the pivoted form to solve
// it again from d (in place too: x is written only after the forward sweep
// has read all of d). Both are properties of the matrix, found in the first
// right-hand side's sweep before anything is written.

#include <cstdint>
#include <limits>

#include <cuda_runtime.h>

#include <recur/layout/layout.hpp>
#include "../block/block_tridiag.cuh"

namespace recur::kernels {

template <class T>
struct tridiag_global_thomas_params {
  T const* a;
  T const* b;
  T const* c;
  T const* d;
  T* x;
  T* cprime;  // n * count values (workspace)
  T* dprime;  // n * count values (workspace)
  std::int32_t* info;
  std::int32_t* flags;  // the screen: null, or a flag per system, 1 for a system left unwritten
  layout lay;
  std::int64_t nrhs;
  std::int64_t rhs_stride;
};

template <class T>
__device__ void tridiag_global_thomas(tridiag_global_thomas_params<T> const& p) {
  std::int64_t const n = p.lay.n, count = p.lay.count;
  for (std::int64_t k = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; k < count;
       k += std::int64_t(gridDim.x) * blockDim.x) {
    std::int32_t status = 0;  // the first bad row, 1-based
    for (std::int64_t r = 0; r < p.nrhs; ++r) {
      std::int64_t const rhs = r * p.rhs_stride;
      T c_prev = 0, d_prev = 0;
      std::int64_t i = 0;
      for (; i < n; ++i) {
        std::int64_t const o = p.lay.offset(i, k);
        T const ai = i > 0 ? p.a[o] : T(0);
        T const bi = p.b[o];
        T const ci = i + 1 < n ? p.c[o] : T(0);
        if (p.flags && !row_dominant(ai, bi, ci)) break;
        T const pv = bi - ai * c_prev;
        if (!usable_pivot(pv)) break;
        T const q = T(1) / pv;
        c_prev = ci * q;
        d_prev = (p.d[o + rhs] - ai * d_prev) * q;
        p.cprime[i * count + k] = c_prev;
        p.dprime[i * count + k] = d_prev;
      }
      if (i < n) {
        status = static_cast<std::int32_t>(i + 1);
        break;
      }
      T xv = d_prev;
      p.x[p.lay.offset(n - 1, k) + rhs] = xv;
      for (i = n - 2; i >= 0; --i) {
        xv = p.dprime[i * count + k] - p.cprime[i * count + k] * xv;
        p.x[p.lay.offset(i, k) + rhs] = xv;
      }
    }
    bool const kept = status == 0;
    if (!kept && !p.flags)  // the pivots are the matrix's: every right-hand side broke down
      for (std::int64_t r = 0; r < p.nrhs; ++r)
        for (std::int64_t i = 0; i < n; ++i)
          p.x[p.lay.offset(i, k) + r * p.rhs_stride] = std::numeric_limits<T>::quiet_NaN();
    if (p.flags) p.flags[k] = kept ? 0 : 1;
    if (p.info && (kept || !p.flags)) p.info[k] = status;
  }
}

template <class T>
__global__ void tridiag_global_thomas_kernel(__grid_constant__ tridiag_global_thomas_params<T> const p) {
  tridiag_global_thomas(p);
}

}  // namespace recur::kernels
