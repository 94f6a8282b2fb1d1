#pragma once
// The pivoted form of the batched tridiagonal solve: one thread per system,
// straight from global memory, with every tridiag_options field (pivoting,
// periodic systems, mixed refinement, the per-system outputs). The
// arithmetic is kernels/thread/thread_tridiag_pivot.cuh's, which the CPU
// tests run against LAPACK; this file only maps threads to systems and the
// workspace to planes.
//
// Workspace: per row of `slots` systems the factorisation's words
// (tridiag_pivot_row_bytes), plane by plane. Thread t (< slots) solves
// systems t, t + slots, ... in word t of each plane row, so adjacent
// threads touch adjacent words; slots is the batch's count, or fewer where
// the workspace is bounded (pivoting = automatic, which pivots few
// systems). The arrays a, b, c, d and x are read along the layout:
// coalesced where adjacent systems are adjacent in memory (interleaved),
// one sector per thread and row otherwise.
//
// pivoting = automatic beside the fast forms (dispatch_tridiag.cuh's
// tridiag_launch_checked): the fast no-pivot form solves every system, the
// check kernel flags the systems that are not diagonally dominant, whose
// Thomas fails the growth test (pivot_thomas_fails) or whose fast solve broke
// down, and this form, given the flags (`only`), solves those again from d
// (Thomas where its growth test passes, partial pivoting where not).

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
  std::int32_t const* only;        // null: every system; else the systems k with only[k] != 0
  void* workspace;                 // lay.n * slots * tridiag_pivot_row_bytes<T>(refine) bytes
  std::int64_t slots;              // systems factored at once (1 <= slots <= lay.count)
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
  std::int64_t const n = p.lay.n, count = p.lay.count, slots = p.slots;
  std::int64_t const t = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (t >= slots) return;
  for (std::int64_t k = t; k < count; k += slots) {
    if (p.only && p.only[k] == 0) continue;
    pivot_system<T> const s{
        p.a,    p.b,          p.c,       p.d, p.x, n, p.lay.offset(0, k), p.lay.element_stride,
        p.nrhs, p.rhs_stride, p.periodic};
    pivot_outcome o;
    bool solved = false;
    if constexpr (std::is_same_v<T, double>) {
      if (p.refine) {
        // Planes: the double factors, x and r, then the float ones.
        auto* const hi = static_cast<double*>(p.workspace);
        auto* const xr = hi + pivot_planes_needed * n * slots;
        auto* const lo = reinterpret_cast<float*>(xr + 2 * n * slots);
        pivot_refine_planes const ws{{lo + t, n, slots}, {xr + t, n, slots}, {hi + t, n, slots}};
        o = pivot_refine_system(s, p.pivoting, p.max_refinement_steps, ws);
        solved = true;
      }
    }
    if (!solved)
      o = pivot_solve_system(s, p.pivoting, pivot_planes<T>{static_cast<T*>(p.workspace) + t, n, slots});
    if (p.info) p.info[k] = o.info;
    if (p.pivoted) p.pivoted[k] = o.pivoted;
    if (p.refinement_steps) p.refinement_steps[k] = o.steps;
  }
}

template <class T>
__global__ void tridiag_pivot_kernel(__grid_constant__ tridiag_pivot_params<T> const p) {
  tridiag_pivot_systems(p);
}

// automatic's check of plain systems, one thread per system: flags[k] = 1
// where system k is not diagonally dominant by rows, fails Thomas' growth
// test, or its fast solve broke down (info[k] > 0), else 0; the flagged
// systems are solved again by this form under automatic (Thomas where its
// growth test passes, partial pivoting where not). Reads a, b, c and info.
template <class T>
__global__ void tridiag_pivot_check_kernel(T const* a, T const* b, T const* c, layout lay,
                                           std::int32_t const* info, std::int32_t* flags) {
  std::int64_t const k = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (k >= lay.count) return;
  pivot_system<T> const s{a, b, c,    nullptr, nullptr, lay.n, lay.offset(0, k), lay.element_stride,
                          1, 0, false};
  // One pass over the rows: the elimination reads each row once, and its
  // dominance is noted on the way.
  bool dominant = true;
  auto const rows = [&](std::int64_t i) {
    pivot_row<T> const e = s.row(i);
    dominant = dominant && pivot_row_dominant(e);
    return e;
  };
  bool const fails = pivot_thomas_fails<T>(rows, lay.n) || !dominant;
  flags[k] = fails || info[k] > 0 ? 1 : 0;
}

}  // namespace recur::kernels
