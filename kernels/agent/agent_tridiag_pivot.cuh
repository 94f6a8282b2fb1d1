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

// automatic's check of plain systems: flags[k] = 1 where system k is not
// diagonally dominant by rows, fails Thomas' growth test, or its fast solve
// broke down (info[k] > 0), else 0; the flagged systems are solved again by
// this form under automatic (Thomas where its growth test passes, partial
// pivoting where not). Reads a, b, c and info. Two kernels:
//
// - tridiag_pivot_screen_kernel, in parallel over rows: 1 for a broken-down
//   system or one with a row that is not dominant, 0 where every row is
//   dominant by a margin (pivot_row_safe), which decides Thomas' test
//   without running it, 2 for the rest. A warp per system where rows are
//   adjacent in memory (coalesced), else a thread per system (adjacent
//   systems adjacent: interleaved).
// - tridiag_pivot_check_kernel, a thread per system: Thomas' test, one
//   sequential pass, for the systems flagged 2 only.
//
// The flags are those of running Thomas' test on every system; a batch of
// dominant systems costs a read of a, b and c in parallel instead of a
// sequential pass per system (512 rows: 512 dependent steps a thread).
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
  bool dominant = true, safe = true;
  for (std::int64_t i = lane; i < lay.n; i += step) {
    pivot_row<T> const e = s.row(i);
    dominant = dominant && pivot_row_dominant(e);
    safe = safe && pivot_row_safe(e);
  }
  if (warp_rows) {
    dominant = __all_sync(all, dominant);
    safe = __all_sync(all, safe);
    if (lane != 0) return;
  }
  flags[k] = info[k] > 0 || !dominant ? 1 : safe ? 0 : 2;
}

template <class T>
__global__ void tridiag_pivot_check_kernel(T const* a, T const* b, T const* c, layout lay,
                                           std::int32_t* flags) {
  std::int64_t const k = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (k >= lay.count || flags[k] != 2) return;
  pivot_system<T> const s = pivot_plain_system(a, b, c, lay, k);
  flags[k] = pivot_thomas_fails<T>([&](std::int64_t i) { return s.row(i); }, lay.n) ? 1 : 0;
}

}  // namespace recur::kernels
