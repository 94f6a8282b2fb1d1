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
// dependent: launched as a dependent grid of the kernel before it on the
// stream (sm_90's programmatic dependent launch; the kernel waits for it).
template <class T>
cudaError_t tridiag_launch_pivot(tridiag_launch_plan const& pl, void* workspace, tridiag_args<T> const& s,
                                 cudaStream_t stream, bool dependent) {
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
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(unsigned(blocks));
  cfg.blockDim = dim3(unsigned(pl.threads));
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = dependent ? 1 : 0;
  return cudaLaunchKernelEx(&cfg, kernels::tridiag_pivot_kernel<T>, p);
}

// pivoting = automatic around a no-pivot form, stream-ordered: the form
// solves every system and the systems that are not diagonally dominant by
// rows or broke down are flagged (into pivoted, or the workspace); the
// bounded pivoted form solves the flagged ones again from d: Thomas where
// its growth test passes, partial pivoting where not (pivoted says which).
// The unflagged systems keep the form's bits. A form that screens
// (tridiag_form_screens) flags the systems as it solves them and leaves the
// flagged ones unwritten, so d is intact for them in place too; beside the
// others the screen kernel reads a, b and c again after the solve (the
// plan runs those in place as the bounded pivoted form alone).
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
  fast.pivoted = nullptr;
  std::int32_t* const flags = s.pivoted ? s.pivoted : flags_piece;
  if (tridiag_form_screens<T>(s.lay, ws.fast)) {
    fast.flags = flags;
    if (cudaError_t e = tridiag_launch<T>(ws.fast, workspace, fast, stream); e != cudaSuccess) return e;
  } else {
    fast.info = s.info ? s.info : info_piece;
    if (cudaError_t e = tridiag_launch<T>(ws.fast, workspace, fast, stream); e != cudaSuccess) return e;
    // A warp per system where rows are adjacent, else a thread.
    std::int64_t const threads = s.lay.element_stride == 1 ? 32 * s.lay.count : s.lay.count;
    std::int64_t const blocks = (threads + 255) / 256;
    if (blocks > INT_MAX) return cudaErrorNotSupported;
    kernels::tridiag_pivot_screen_kernel<T>
        <<<unsigned(blocks), 256, 0, stream>>>(s.a, s.b, s.c, s.lay, fast.info, flags);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  }
  tridiag_args<T> fix = s;
  fix.refinement_steps = nullptr;
  // pivoted[k] (read as the flag first) says which.
  fix.pivoting = tridiag_pivoting::automatic;
  fix.periodic = false;
  fix.refinement = tridiag_refinement::none;
  fix.only = flags;
  return tridiag_launch_pivot<T>(ws.fix, fix_workspace, fix, stream, pl.cc_major >= 9);
}

}  // namespace recur::device
