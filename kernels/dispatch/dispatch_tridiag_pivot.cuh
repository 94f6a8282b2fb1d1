#pragma once
// The launches of the pivoted form of the batched tridiagonal solve
// (kernels/agent/agent_tridiag_pivot.cuh) and of pivoting = automatic's
// check beside the no-pivot forms; part of dispatch_tridiag.cuh, which
// declares them and includes this file.

#include <climits>
#include <cstdint>

#include <cuda_runtime.h>

#include "dispatch_tridiag.cuh"

namespace recur::device {

// The pivoted form, one thread per workspace slot (instances:
// lib/cuda/tridiag_pivot_*.cu).
template <class T>
cudaError_t tridiag_launch_pivot(tridiag_launch_plan const& pl, void* workspace, tridiag_args<T> const& s,
                                 cudaStream_t stream) {
  std::int64_t const slots = tridiag_pivot_slots<T>(s.lay, pl.pivot_refine, pl.pivot_bounded);
  kernels::tridiag_pivot_params<T> const p{s.a,
                                           s.b,
                                           s.c,
                                           s.d,
                                           s.x,
                                           s.info,
                                           s.pivoted,
                                           s.refinement_steps,
                                           s.only,
                                           workspace,
                                           slots,
                                           s.lay,
                                           s.nrhs,
                                           s.rhs_stride,
                                           s.pivoting,
                                           s.periodic,
                                           pl.pivot_refine,
                                           s.max_refinement_steps};
  std::int64_t const blocks = (slots + pl.threads - 1) / pl.threads;
  if (blocks > INT_MAX) return cudaErrorNotSupported;
  kernels::tridiag_pivot_kernel<T><<<unsigned(blocks), pl.threads, 0, stream>>>(p);
  return cudaGetLastError();
}

// pivoting = automatic around a no-pivot form, stream-ordered: the form
// solves every system (info into the workspace where the caller passes
// none), the check flags the systems that are not diagonally dominant, fail
// Thomas' growth test or broke down (into pivoted, or the workspace), and
// the bounded pivoted form solves the flagged ones again from d, which the
// caller keeps apart from x: Thomas where its growth test passes, partial
// pivoting where not (pivoted says which). The unflagged systems keep the
// form's bits.
// (Instances: lib/cuda/tridiag_pivot_*.cu.)
template <class T>
cudaError_t tridiag_launch_checked(tridiag_launch_plan const& pl, void* workspace, tridiag_args<T> const& s,
                                   cudaStream_t stream) {
  tridiag_checked_workspace<T> const ws(s.lay, pl);
  if (s.lay.count <= 0 || s.lay.n <= 0 || s.nrhs <= 0)
    return tridiag_launch<T>(ws.fast, workspace, s, stream);
  tridiag_ws_cursor cut(workspace);
  cut.take(ws.form);  // the fast form's, from the workspace's start
  auto* const info_piece = cut.take<std::int32_t>(ws.ints);
  auto* const flags_piece = cut.take<std::int32_t>(ws.ints);
  void* const fix_workspace = cut.take(ws.pivot);
  tridiag_args<T> fast = s;
  fast.info = s.info ? s.info : info_piece;
  fast.pivoted = nullptr;
  std::int32_t* const flags = s.pivoted ? s.pivoted : flags_piece;
  if (cudaError_t e = tridiag_launch<T>(ws.fast, workspace, fast, stream); e != cudaSuccess) return e;
  // The screen (a warp per system where rows are adjacent, else a thread),
  // then Thomas' test for the systems it leaves undecided.
  std::int64_t const screen_threads = s.lay.element_stride == 1 ? 32 * s.lay.count : s.lay.count;
  std::int64_t const screen_blocks = (screen_threads + 255) / 256, blocks = (s.lay.count + 255) / 256;
  if (screen_blocks > INT_MAX) return cudaErrorNotSupported;
  kernels::tridiag_pivot_screen_kernel<T>
      <<<unsigned(screen_blocks), 256, 0, stream>>>(s.a, s.b, s.c, s.lay, fast.info, flags);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  kernels::tridiag_pivot_check_kernel<T><<<unsigned(blocks), 256, 0, stream>>>(s.a, s.b, s.c, s.lay, flags);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  tridiag_args<T> fix = fast;
  fix.refinement_steps = nullptr;
  // The flagged systems by Thomas with its growth test, partial pivoting
  // where it fails; pivoted[k] (read as the flag first) says which.
  fix.pivoted = s.pivoted;
  fix.pivoting = tridiag_pivoting::automatic;
  fix.periodic = false;
  fix.refinement = tridiag_refinement::none;
  fix.only = flags;
  return tridiag_launch_pivot<T>(ws.fix, fix_workspace, fix, stream);
}

}  // namespace recur::device
