#pragma once
// Thomas through global memory: one thread per system, any n, the fallback
// of algorithm thomas for systems too long for a shared-memory tile: the
// one-thread elimination of kernels/thread/thread_tridiag.cuh
// (thomas_factor, thomas_back) with c' and d' in the workspace (system k's
// row i at i count + k, so adjacent threads touch adjacent words); the back
// substitution then writes x.
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

// Rows of system k with right-hand side rhs, read through the layout (the
// places are the row indices), screened where the params ask.
template <class T>
struct global_thomas_rows : index_places {
  tridiag_global_thomas_params<T> const& p;
  std::int64_t k, rhs;
  __device__ tridiag_equation<T> read(std::int64_t i) const {
    std::int64_t const o = p.lay.offset(i, k);
    tridiag_equation<T> e{i > 0 ? p.a[o] : T(0), p.b[o], i + 1 < p.lay.n ? p.c[o] : T(0), p.d[o + rhs]};
    if (p.flags) screen_row(e);  // a row that is not dominant: b NaN, a breakdown
    return e;
  }
};

// y_i read from the workspace, x_i written to x: the place thomas_back
// reads y_i from and writes x_i to.
template <class T>
struct global_thomas_slot {
  T const& y;
  T& x;
  __device__ operator T() const { return y; }
  __device__ global_thomas_slot& operator=(T v) {
    x = v;
    return *this;
  }
};

template <class T>
__device__ void tridiag_global_thomas(tridiag_global_thomas_params<T> const& p) {
  std::int64_t const n = p.lay.n, count = p.lay.count;
  for (std::int64_t k = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; k < count;
       k += std::int64_t(gridDim.x) * blockDim.x) {
    auto word = [&](std::int64_t i) -> std::int64_t { return i * count + k; };
    int status = 0;  // the first bad row, 1-based
    for (std::int64_t r = 0; r < p.nrhs; ++r) {
      std::int64_t const rhs = r * p.rhs_stride;
      T y_last = 0;
      status = thomas_factor<true, 1>(global_thomas_rows<T>{{}, p, k, rhs}, n,
                                      [&](std::int64_t i, T, T, T, T, T, T cp, T y) {
                                        p.cprime[word(i)] = cp;
                                        p.dprime[word(i)] = y;
                                        y_last = y;
                                      });
      if (status) break;  // the matrix's: every right-hand side would break down
      p.x[p.lay.offset(n - 1, k) + rhs] = y_last;
      thomas_back(
          index_places{}, n, y_last,
          [&](std::int64_t i) {
            return global_thomas_slot<T>{p.dprime[word(i)], p.x[p.lay.offset(i, k) + rhs]};
          },
          [&](std::int64_t i) { return p.cprime[word(i)]; });
    }
    bool const kept = status == 0;
    if (!kept && !p.flags)
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
