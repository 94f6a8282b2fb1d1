#pragma once
// The launch of Bondeli's algorithm (agent_tridiag_bondeli.cuh): the
// blocks, the reduced system H by the pivoted form, the correction.

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "../agent/agent_tridiag_bondeli.cuh"
#include "dispatch_tridiag_common.cuh"
#include "dispatch_tridiag_pivot.cuh"

namespace recur::detail {

// One right-hand side at a time (each pass factors the blocks again; the
// breakdown and the screen, properties of the matrix, come out the same in
// every pass). Instances: lib/cuda/tridiag_bondeli.cu.
template <class T>
cudaError_t tridiag_launch_bondeli(tridiag_bondeli_plan const& pl, void* workspace, tridiag_args<T> const& s,
                                   cudaStream_t stream) {
  tridiag_bondeli_workspace<T> const ws(s.lay, pl);
  kernels::workspace_cursor cut(workspace);
  T* const y = cut.take<T>(ws.vectors);
  T* const w = cut.take<T>(ws.vectors);
  T* const v = cut.take<T>(ws.vectors);
  T* const ha = cut.take<T>(ws.diagonals);
  T* const hb = cut.take<T>(ws.diagonals);
  T* const hc = cut.take<T>(ws.diagonals);
  T* const hd = cut.take<T>(ws.diagonals);
  auto* const bad = cut.take<unsigned long long>(ws.bad);
  auto* const hinfo = cut.take<std::int32_t>(ws.hinfo);
  void* const pivot = cut.take(ws.pivot);
  kernels::tridiag_bondeli_params<T> p{s.a, s.b, s.c, s.d, s.x, s.lay, ws.cut, y,      w,
                                       v,   ha,  hb,  hc,  hd,  bad,   hinfo,  s.info, s.flags};
  unsigned const blocks_grid = tridiag_grid(ws.cut.count * s.lay.count, pl.threads, std::int64_t(1) << 20);
  unsigned const rows_grid = tridiag_grid(s.lay.n * s.lay.count, pl.threads, std::int64_t(1) << 20);
  for (std::int64_t r = 0; r < s.nrhs; ++r) {
    p.d = s.d + r * s.rhs_stride;
    p.x = s.x + r * s.rhs_stride;
    p.info = r == 0 ? s.info : nullptr;
    if (cudaError_t e =
            cudaMemsetAsync(bad, 0xff, std::size_t(s.lay.count) * sizeof(unsigned long long), stream);
        e != cudaSuccess)
      return e;
    kernels::tridiag_bondeli_blocks_kernel<T><<<blocks_grid, pl.threads, 0, stream>>>(p);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
    if (ws.reduced.n > 0) {
      tridiag_args<T> h{ha, hb, hc, hd, hd, ws.reduced, 1, 0, hinfo};
      h.pivoting = tridiag_pivoting::partial;
      if (cudaError_t e = tridiag_launch_pivot<T>(ws.reduced_plan, pivot, h, stream); e != cudaSuccess)
        return e;
    }
    kernels::tridiag_bondeli_correct_kernel<T><<<rows_grid, pl.threads, 0, stream>>>(p);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

}  // namespace recur::detail
