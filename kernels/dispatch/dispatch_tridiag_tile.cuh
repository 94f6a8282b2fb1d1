#pragma once
// The launches of the shared-memory tiles (agent_tridiag_tile.cuh) and the
// global-memory Thomas (agent_tridiag_global_thomas.cuh).

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "../agent/agent_tridiag_global_thomas.cuh"
#include "../agent/agent_tridiag_tile.cuh"
#include "dispatch_tridiag_common.cuh"

namespace recur::detail {

// The kernel that finishes a solve whose breakdown depends on the
// right-hand side (status: each system's smallest breakdown row over its
// right-hand sides) into info and NaN x.
template <class T>
cudaError_t tridiag_launch_rhs_status(std::int32_t const* status, tridiag_args<T> const& s,
                                      cudaStream_t stream) {
  kernels::tridiag_rhs_status_kernel<T>
      <<<tridiag_grid(s.lay.count, 256), 256, 0, stream>>>(status, s.info, s.x, s.lay, s.nrhs, s.rhs_stride);
  return cudaGetLastError();
}

// Tiles. Several right-hand sides whose breakdown may differ (rd, cr_rd)
// fold it into a status per system (the workspace), which a second kernel
// turns into info and NaN; those take no screen (tridiag_form_screens).
template <class T>
cudaError_t tridiag_launch_tile(tridiag_tile_plan const& pl, void* workspace, tridiag_args<T> const& s,
                                cudaStream_t stream) {
  std::int32_t* const status =
      tridiag_rhs_breakdown(pl.solver) && s.nrhs > 1 ? static_cast<std::int32_t*>(workspace) : nullptr;
  if (status)
    if (cudaError_t e =
            cudaMemsetAsync(status, 0x7f, std::size_t(s.lay.count) * sizeof(std::int32_t), stream);
        e != cudaSuccess)
      return e;
  kernels::tridiag_tile_params<T> const p{
      s.a,
      s.b,
      s.c,
      s.d,
      s.x,
      s.info,
      status,
      s.lay,
      s.nrhs,
      s.rhs_stride,
      (s.lay.count + pl.systems - 1) / pl.systems,
      pl.systems,
      pl.group_threads,
      pl.ld,
      pl.red_ld,
      pl.switch_size,
      s.lay.element_stride == 1 || s.lay.n == 1,
      pl.serial_join,
      status ? nullptr : s.flags,
      pl.solver == kernels::tile_solver::thomas_pivot ? s.pivoted : nullptr};
  if (cudaError_t e = kernels::launch_persistent(kernels::tridiag_tile_kernel<T>(pl.solver), p,
                                                 p.tiles * s.nrhs, pl.threads, pl.smem, stream);
      e != cudaSuccess || !status)
    return e;
  return tridiag_launch_rhs_status<T>(status, s, stream);
}

// One thread per system through global memory, c' and d' in the workspace.
template <class T>
cudaError_t tridiag_launch_global_thomas(tridiag_global_thomas_plan const& pl, void* workspace,
                                         tridiag_args<T> const& s, cudaStream_t stream) {
  kernels::workspace_cursor cut(workspace);
  std::size_t const values = std::size_t(s.lay.n) * std::size_t(s.lay.count) * sizeof(T);
  T* const cprime = cut.take<T>(kernels::workspace_piece(values));
  T* const dprime = cut.take<T>(values);
  kernels::tridiag_global_thomas_params<T> const p{s.a,    s.b,    s.c,     s.d,   s.x,    cprime,
                                                   dprime, s.info, s.flags, s.lay, s.nrhs, s.rhs_stride};
  kernels::tridiag_global_thomas_kernel<T>
      <<<tridiag_grid(s.lay.count, pl.threads), pl.threads, 0, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace recur::detail
