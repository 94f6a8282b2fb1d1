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
// pivoting = automatic around the no-pivot forms (dispatch_tridiag_pivot.cuh's
// tridiag_launch_screened): the no-pivot form solves every system, the
// systems that are not diagonally dominant by rows or whose no-pivot solve
// broke down are flagged, and this form, given the flags (`only`), solves
// those again from d (Thomas where its growth test passes, partial pivoting
// where not).

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <cuda_runtime.h>

#include <recur/layout/layout.hpp>
#include <recur/types.hpp>
#include "../block/block_tridiag.cuh"
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
__device__ void tridiag_pivot_system(tridiag_pivot_params<T> const& p, std::int64_t t, std::int64_t k) {
  std::int64_t const n = p.lay.n, slots = p.slots;
  pivot_system<T> const s{
      p.a, p.b, p.c, p.d, p.x, n, p.lay.offset(0, k), p.lay.element_stride, p.nrhs, p.rhs_stride, p.periodic};
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

// Thread t solves systems t, t + slots, ...; given `only`, those flagged,
// whose flags it reads `ahead` at a time (one trip to memory for them:
// on a batch with nothing flagged that is all this kernel does).
template <class T>
__device__ void tridiag_pivot_systems(tridiag_pivot_params<T> const& p) {
  std::int64_t const count = p.lay.count, slots = p.slots;
  std::int64_t const t = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (t >= slots) return;
  if (!p.only) {
    for (std::int64_t k = t; k < count; k += slots) tridiag_pivot_system(p, t, k);
    return;
  }
  constexpr int ahead = 8;
  for (std::int64_t k0 = t; k0 < count; k0 += ahead * slots) {
    std::int32_t flag[ahead];
#pragma unroll
    for (int j = 0; j < ahead; ++j) flag[j] = k0 + j * slots < count ? p.only[k0 + j * slots] : 0;
#pragma unroll 1
    for (int j = 0; j < ahead; ++j)
      if (flag[j]) tridiag_pivot_system(p, t, k0 + j * slots);
  }
}

// Launched as a dependent grid (programmatic dependent launch, sm_90)
// where it follows the no-pivot form under pivoting = automatic: queued
// while the form runs, it waits here for that grid's results, which hides
// its launch latency. (A no-op in any other launch.)
template <class T>
__global__ void tridiag_pivot_kernel(__grid_constant__ tridiag_pivot_params<T> const p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cudaGridDependencySynchronize();
#endif
  tridiag_pivot_systems(p);
}

// automatic's screen after a no-pivot form that does not screen as it
// solves (tridiag_resolve.cuh's tridiag_form_screens: rd and cr_rd with
// several right-hand sides): flags[k] = 1 where
// system k is not diagonally dominant by rows or its fast solve broke down
// (info[k] > 0), else 0; the flagged systems are solved again by this form
// (Thomas where its growth test passes, partial pivoting where not). A
// warp per system where rows are adjacent in memory (coalesced), else a
// thread per system (adjacent systems adjacent: interleaved). The forms
// that screen decide alike (block_tridiag.cuh's row_dominant).
template <class T>
RECUR_HD pivot_system<T> pivot_plain_system(T const* a, T const* b, T const* c, layout const& lay,
                                            std::int64_t k) {
  return {a, b, c, nullptr, nullptr, lay.n, lay.offset(0, k), lay.element_stride, 1, 0, false};
}

template <class T>
__global__ void tridiag_pivot_screen_kernel(T const* a, T const* b, T const* c, layout lay,
                                            std::int32_t const* info, std::int32_t* flags) {
  constexpr unsigned all = 0xffffffffu;
  bool const warp_rows = lay.element_stride == 1;
  std::int64_t const thread = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  std::int64_t const k = warp_rows ? thread / 32 : thread;
  if (k >= lay.count) return;  // whole warps where warp_rows (blockDim a multiple of 32)
  int const lane = warp_rows ? int(threadIdx.x % 32) : 0;
  int const step = warp_rows ? 32 : 1;
  pivot_system<T> const s = pivot_plain_system(a, b, c, lay, k);
  bool dominant = true;
  for (std::int64_t i = lane; i < lay.n; i += step) {
    pivot_row<T> const e = s.row(i);
    dominant = dominant && row_dominant(e.a, e.b, e.c);
  }
  if (warp_rows) {
    dominant = __all_sync(all, dominant);
    if (lane != 0) return;
  }
  flags[k] = info[k] > 0 || !dominant ? 1 : 0;
}

}  // namespace recur::kernels
