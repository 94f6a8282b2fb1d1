#pragma once
// The pivoted form of the batched tridiagonal solve: one thread per system,
// straight from global memory, with every tridiag_options field (pivoting,
// periodic systems, mixed refinement, the per-system outputs). The
// arithmetic is kernels/thread/thread_tridiag_pivot.cuh's, which the CPU
// tests run against LAPACK; this file only maps threads to systems and the
// workspace to planes.
//
// Workspace: per row of every system the factorisation's words
// (tridiag_pivot_row_bytes), plane by plane, system k at word k of each
// plane row, so adjacent threads touch adjacent words. The arrays a, b, c,
// d and x are read along the layout: coalesced where adjacent systems are
// adjacent in memory (interleaved), one sector per thread and row otherwise.

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <cuda_runtime.h>

#include <recur/layout/layout.hpp>
#include <recur/types.hpp>
#include "../thread/thread_tridiag_pivot.cuh"

namespace recur::kernels {

template <class T>
struct tridiag_pivot_params {
  T const* a;
  T const* b;
  T const* c;
  T const* d;
  T* x;
  std::int32_t* info;              // may be null
  std::int32_t* pivoted;           // may be null
  std::int32_t* refinement_steps;  // may be null
  void* workspace;                 // lay.n * lay.count * tridiag_pivot_row_bytes<T>(refine) bytes
  layout lay;
  std::int64_t nrhs;
  std::int64_t rhs_stride;
  tridiag_pivoting pivoting;
  bool periodic;
  bool refine;  // refinement = mixed (T = double)
  int max_refinement_steps;
};

// Workspace bytes per row and system: the factorisation's planes in T; with
// refinement the double factors of the fallback, x and r in double, and
// the float factors with the float solve's vector.
template <class T>
constexpr std::size_t tridiag_pivot_row_bytes(bool refine) {
  if (refine) return (pivot_planes_needed + 2) * sizeof(double) + (pivot_planes_needed + 1) * sizeof(float);
  return pivot_planes_needed * sizeof(T);
}

template <class T>
__device__ void tridiag_pivot_systems(tridiag_pivot_params<T> const& p) {
  std::int64_t const n = p.lay.n, count = p.lay.count;
  for (std::int64_t k = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; k < count;
       k += std::int64_t(gridDim.x) * blockDim.x) {
    pivot_system<T> const s{
        p.a,    p.b,          p.c,       p.d, p.x, n, p.lay.offset(0, k), p.lay.element_stride,
        p.nrhs, p.rhs_stride, p.periodic};
    pivot_outcome o;
    bool solved = false;
    if constexpr (std::is_same_v<T, double>) {
      if (p.refine) {
        // Planes: the double factors, x and r, then the float ones.
        auto* const hi = static_cast<double*>(p.workspace);
        auto* const xr = hi + pivot_planes_needed * n * count;
        auto* const lo = reinterpret_cast<float*>(xr + 2 * n * count);
        pivot_refine_planes const ws{{lo + k, n, count}, {xr + k, n, count}, {hi + k, n, count}};
        o = pivot_refine_system(s, p.pivoting, p.max_refinement_steps, ws);
        solved = true;
      }
    }
    if (!solved)
      o = pivot_solve_system(s, p.pivoting, pivot_planes<T>{static_cast<T*>(p.workspace) + k, n, count});
    if (p.info) p.info[k] = o.info;
    if (p.pivoted) p.pivoted[k] = o.pivoted;
    if (p.refinement_steps) p.refinement_steps[k] = o.steps;
  }
}

template <class T>
__global__ void tridiag_pivot_kernel(__grid_constant__ tridiag_pivot_params<T> const p) {
  tridiag_pivot_systems(p);
}

}  // namespace recur::kernels
