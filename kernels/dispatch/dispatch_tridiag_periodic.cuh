#pragma once
// Periodic systems through a fast no-pivot form (tridiag_launch_plan's
// periodic_split), by the Sherman-Morrison split of
// kernels/agent/agent_tridiag_periodic.cuh; part of dispatch_tridiag.cuh,
// which declares the launch and includes this file.

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "../agent/agent_tridiag_periodic.cuh"
#include "dispatch_tridiag.cuh"

namespace recur::device {

// The split's workspace: the fast form's, then b' and u (later z), each the
// layout's extent, then w and the divisor (count values each).
template <class T>
struct tridiag_periodic_workspace {
  tridiag_launch_plan fast;
  std::size_t form = 0, array = 0, per_system = 0;
  tridiag_periodic_workspace(layout const& lay, tridiag_launch_plan const& pl) : fast(pl) {
    fast.periodic_split = false;
    form = tridiag_ws_piece(tridiag_workspace_bytes<T>(lay, fast));
    std::int64_t const extent = lay.n <= 0 || lay.count <= 0 ? 0
                                                             : (lay.n - 1) * lay.element_stride +
                                                                   (lay.count - 1) * lay.batch_stride + 1;
    array = tridiag_ws_piece(std::size_t(extent) * sizeof(T));
    per_system = tridiag_ws_piece(std::size_t(std::max<std::int64_t>(0, lay.count)) * sizeof(T));
  }
  std::size_t total() const { return form + 2 * array + 2 * per_system; }
};

// Stream-ordered: b' and u; A' z = u and A' y = d by the fast form (x = y,
// info of A', pivoted and refinement_steps zeroed by the second); the
// divisors; the correction of the inner rows, then of the end rows. Where
// the form is the direct one's single segment of lanes at an exact shape,
// its Periodic instance solves the systems in one pass instead
// (tridiag_direct_periodic).
template <class T>
cudaError_t tridiag_launch_periodic(tridiag_launch_plan const& pl, void* workspace, tridiag_args<T> const& s,
                                    cudaStream_t stream) {
  tridiag_periodic_workspace<T> const ws(s.lay, pl);
  if (s.lay.count <= 0 || s.lay.n <= 0 || s.nrhs <= 0)
    return tridiag_launch<T>(ws.fast, workspace, s, stream);
  if (tridiag_direct_periodic(ws.fast, s)) {  // in one pass (direct_periodic_join)
    std::size_t const flags = std::size_t(s.lay.count) * sizeof(std::int32_t);
    if (s.pivoted)
      if (cudaError_t e = cudaMemsetAsync(s.pivoted, 0, flags, stream); e != cudaSuccess) return e;
    if (s.refinement_steps)
      if (cudaError_t e = cudaMemsetAsync(s.refinement_steps, 0, flags, stream); e != cudaSuccess) return e;
    return tridiag_launch_direct<T>(ws.fast, s, stream, true);
  }
  tridiag_ws_cursor cut(workspace);
  cut.take(ws.form);  // the fast form's, from the workspace's start
  T* const bs = cut.take<T>(ws.array);
  T* const z = cut.take<T>(ws.array);
  T* const w = cut.take<T>(ws.per_system);
  T* const divisor = cut.take<T>(ws.per_system);
  kernels::tridiag_periodic_params<T> const p{s.a, s.b,     s.c,    s.x,   bs,     z,
                                              w,   divisor, s.info, s.lay, s.nrhs, s.rhs_stride};
  // Grids of at most a few waves of 256-thread blocks (the kernels walk the
  // rest), right-hand sides along y.
  constexpr int threads = 256;
  auto const blocks_for = [](std::int64_t items) {
    return unsigned(std::clamp<std::int64_t>((items + threads - 1) / threads, 1, 8192));
  };
  unsigned const sets = unsigned(std::min<std::int64_t>(s.nrhs, 65535));
  std::int64_t const systems_blocks = (s.lay.count + threads - 1) / threads;
  if (systems_blocks > INT_MAX) return cudaErrorNotSupported;
  unsigned const per_system = unsigned(systems_blocks);
  kernels::tridiag_periodic_split_kernel<T><<<blocks_for(s.lay.size()), threads, 0, stream>>>(p);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  tridiag_args<T> solve = s;
  solve.b = bs;
  solve.d = z;
  solve.x = z;
  solve.nrhs = 1;
  solve.pivoted = nullptr;
  solve.refinement_steps = nullptr;
  if (cudaError_t e = tridiag_launch<T>(ws.fast, workspace, solve, stream); e != cudaSuccess) return e;
  solve = s;
  solve.b = bs;
  if (cudaError_t e = tridiag_launch<T>(ws.fast, workspace, solve, stream); e != cudaSuccess) return e;
  kernels::tridiag_periodic_divisor_kernel<T><<<per_system, threads, 0, stream>>>(p);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  kernels::tridiag_periodic_correct_kernel<T>
      <<<dim3(blocks_for((s.lay.n - 2) * s.lay.count), sets), threads, 0, stream>>>(p);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  kernels::tridiag_periodic_ends_kernel<T><<<dim3(per_system, sets), threads, 0, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace recur::device
