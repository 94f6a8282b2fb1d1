#pragma once
// The launches of the pivoted form (agent_tridiag_pivot.cuh) and of
// pivoting = automatic's screen around a no-pivot solve.

#include <climits>
#include <cstdint>

#include <cuda_runtime.h>

#include "../agent/agent_tridiag_pivot.cuh"
#include "dispatch_tridiag_common.cuh"

namespace recur::detail {

// One thread per workspace slot (instances: lib/cuda/tridiag_pivot_*.cu).
// dependent: launched as a dependent grid of the kernel before it on the
// stream (sm_90's programmatic dependent launch; the kernel waits for it).
template <class T>
cudaError_t tridiag_launch_pivot(tridiag_pivot_plan const& pl, void* workspace, tridiag_args<T> const& s,
                                 cudaStream_t stream, bool dependent = false) {
  std::int64_t const slots = tridiag_pivot_slots<T>(s.lay, pl);
  kernels::tridiag_pivot_params<T> const p{s.a,        s.b,
                                           s.c,        s.d,
                                           s.x,        s.info,
                                           s.pivoted,  s.refinement_steps,
                                           s.only,     workspace,
                                           slots,      s.lay,
                                           s.nrhs,     s.rhs_stride,
                                           s.pivoting, s.periodic,
                                           pl.refine,  s.max_refinement_steps};
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

// The screen, stream-ordered: the no-pivot solve (the plan without its
// screen: the form, or the periodic split around it) solves every system,
// and the systems that are not diagonally dominant by rows or broke down
// are flagged (into pivoted, or the workspace); the bounded pivoted form
// solves the flagged ones again from d: Thomas where its growth test
// passes, partial pivoting where not (pivoted says which). The unflagged
// systems keep the no-pivot solve's bits. Inside (the form screens as it
// solves), the flagged systems are left unwritten, so d is intact for them
// in place too; after, the screen kernel reads a, b and c again once the
// solve is done (the plan runs only out of place so).
template <class T>
cudaError_t tridiag_launch_screened(tridiag_solve_plan const& pl, void* workspace, tridiag_args<T> const& s,
                                    cudaStream_t stream) {
  tridiag_solve_plan unscreened = pl;
  unscreened.screen = tridiag_screen::none;
  if (s.lay.count <= 0 || s.lay.n <= 0 || s.nrhs <= 0)
    return tridiag_launch<T>(unscreened, workspace, s, stream);
  tridiag_screened_workspace<T> const ws(s.lay, pl);
  kernels::workspace_cursor cut(workspace);
  void* const solve_workspace = cut.take(ws.solve);
  auto* const info_piece = cut.take<std::int32_t>(ws.ints);
  auto* const flags_piece = cut.take<std::int32_t>(ws.ints);
  void* const fix_workspace = cut.take(ws.pivot);
  tridiag_args<T> fast = s;
  fast.pivoted = nullptr;
  std::int32_t* const flags = s.pivoted ? s.pivoted : flags_piece;
  if (pl.screen == tridiag_screen::inside) {
    fast.flags = flags;
    if (cudaError_t e = tridiag_launch<T>(unscreened, solve_workspace, fast, stream); e != cudaSuccess)
      return e;
  } else {
    fast.info = s.info ? s.info : info_piece;
    if (cudaError_t e = tridiag_launch<T>(unscreened, solve_workspace, fast, stream); e != cudaSuccess)
      return e;
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
  fix.periodic = pl.periodic;
  fix.refinement = tridiag_refinement::none;
  fix.only = flags;
  fix.flags = nullptr;
  return tridiag_launch_pivot<T>(ws.fix, fix_workspace, fix, stream, pl.dev.cc_major >= 9);
}

}  // namespace recur::detail
