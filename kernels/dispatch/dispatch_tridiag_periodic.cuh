#pragma once
// The launch of periodic systems through a no-pivot form, by the
// Sherman-Morrison split of kernels/agent/agent_tridiag_periodic.cuh, or in
// one pass where the form is the direct one's single segment of lanes at an
// exact shape (its Periodic instance).

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "../agent/agent_tridiag_periodic.cuh"
#include "dispatch_tridiag_common.cuh"
#include "dispatch_tridiag_direct.cuh"

namespace recur::detail {

// Stream-ordered: b' and u; A' z = u and A' y = d by the form (x = y, info
// of A', pivoted and refinement_steps zeroed by the second; under the
// screen both flag the systems whose A' fails it); the divisors; the
// correction of the inner rows, then of the end rows (of the systems not
// flagged).
template <class T>
cudaError_t tridiag_launch_periodic(tridiag_solve_plan const& pl, void* workspace, tridiag_args<T> const& s,
                                    cudaStream_t stream) {
  if (s.lay.count <= 0 || s.lay.n <= 0 || s.nrhs <= 0)
    return tridiag_launch_form<T>(pl.form, pl.dev, workspace, s, stream);
  if (tridiag_direct_periodic(pl.form, s)) {  // in one pass (direct_periodic_join)
    if (cudaError_t e = tridiag_zero(s.pivoted, s.lay.count, stream); e != cudaSuccess) return e;
    if (cudaError_t e = tridiag_zero(s.refinement_steps, s.lay.count, stream); e != cudaSuccess) return e;
    return tridiag_launch_direct<T>(std::get<tridiag_direct_plan>(pl.form), s, stream, true);
  }
  tridiag_periodic_workspace<T> const ws(s.lay, pl);
  kernels::workspace_cursor cut(workspace);
  void* const form_workspace = cut.take(ws.form);
  T* const bs = cut.take<T>(ws.array);
  T* const z = cut.take<T>(ws.array);
  T* const w = cut.take<T>(ws.per_system);
  T* const divisor = cut.take<T>(ws.per_system);
  kernels::tridiag_periodic_params<T> const p{s.a,     s.b,    s.c,     s.x,   bs,     z,           w,
                                              divisor, s.info, s.flags, s.lay, s.nrhs, s.rhs_stride};
  // Grids of at most a few waves of 256-thread blocks (the kernels walk the
  // rest), right-hand sides along y.
  constexpr int threads = 256;
  unsigned const sets = unsigned(std::min<std::int64_t>(s.nrhs, 65535));
  std::int64_t const systems_blocks = (s.lay.count + threads - 1) / threads;
  if (systems_blocks > INT_MAX) return cudaErrorNotSupported;
  unsigned const per_system = unsigned(systems_blocks);
  kernels::tridiag_periodic_split_kernel<T>
      <<<tridiag_grid(s.lay.size(), threads, 8192), threads, 0, stream>>>(p);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  tridiag_args<T> solve = s;
  solve.b = bs;
  solve.d = z;
  solve.x = z;
  solve.nrhs = 1;
  solve.pivoted = nullptr;
  solve.refinement_steps = nullptr;
  if (cudaError_t e = tridiag_launch_form<T>(pl.form, pl.dev, form_workspace, solve, stream);
      e != cudaSuccess)
    return e;
  solve = s;
  solve.b = bs;
  if (cudaError_t e = tridiag_launch_form<T>(pl.form, pl.dev, form_workspace, solve, stream);
      e != cudaSuccess)
    return e;
  kernels::tridiag_periodic_divisor_kernel<T><<<per_system, threads, 0, stream>>>(p);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  kernels::tridiag_periodic_correct_kernel<T>
      <<<dim3(tridiag_grid((s.lay.n - 2) * s.lay.count, threads, 8192), sets), threads, 0, stream>>>(p);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  kernels::tridiag_periodic_ends_kernel<T><<<dim3(per_system, sets), threads, 0, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace recur::detail
