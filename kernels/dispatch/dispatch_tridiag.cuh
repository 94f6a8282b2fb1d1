#pragma once
// Device-level batched tridiagonal solve, header-only, CUB's calling
// convention:
//
//   std::size_t bytes = 0;
//   recur::device::tridiag_solve(nullptr, bytes, a, b, c, d, x, lay, nrhs, rhs_stride, info, alg, stream);
//   cudaMallocAsync(&temp, bytes, stream);
//   recur::device::tridiag_solve(temp, bytes, a, b, c, d, x, lay, nrhs, rhs_stride, info, alg, stream);
//
// Conventions of include/recur/tridiag.hpp (layout, right-hand sides, a[0]
// and c[n-1] unread, x may be d, info, NaN on breakdown), with pivoting =
// none: the algorithm's own elimination, unscreened (the host API's
// default, automatic, screens every system and solves those that need it
// again with partial pivoting). Arguments are not checked here beyond what
// the launch needs (the host API checks them); an algorithm that cannot
// run the shape returns cudaErrorNotSupported before anything is enqueued.
//
// What runs for a shape is decided in tridiag_resolve.cuh; this file visits
// the plan's form and the wrappers around it (dispatch_tridiag_*.cuh launch
// each). Blocks are persistent (as many as are resident at once) wherever a
// form walks work items. Nothing is allocated or synchronised; every launch
// is graph-capturable.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <variant>

#include <cuda_runtime.h>

#include "dispatch_tridiag_bondeli.cuh"
#include "dispatch_tridiag_columns.cuh"
#include "dispatch_tridiag_common.cuh"
#include "dispatch_tridiag_direct.cuh"
#include "dispatch_tridiag_partition.cuh"
#include "dispatch_tridiag_periodic.cuh"
#include "dispatch_tridiag_pivot.cuh"
#include "dispatch_tridiag_tile.cuh"

namespace recur::detail {

// The current device's limits (tridiag_device).
inline cudaError_t tridiag_current_device(tridiag_device& dev) {
  int id = 0, v = 0;
  if (cudaError_t e = cudaGetDevice(&id); e != cudaSuccess) return e;
  if (cudaError_t e = cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, id);
      e != cudaSuccess)
    return e;
  dev.max_smem = std::size_t(v);
  return cudaDeviceGetAttribute(&dev.cc_major, cudaDevAttrComputeCapabilityMajor, id);
}

// The screen, then the periodic split, then the form: each wrapper runs
// the plan without itself inside. The outputs no kernel writes are zeroed
// here: all of them for an empty problem, pivoted and refinement_steps
// where a no-pivot form solves alone.
template <class T>
cudaError_t tridiag_launch(tridiag_solve_plan const& pl, void* workspace, tridiag_args<T> const& s,
                           cudaStream_t stream) {
  if (pl.screen != tridiag_screen::none) return tridiag_launch_screened<T>(pl, workspace, s, stream);
  if (s.lay.count <= 0) return cudaSuccess;
  bool const empty = s.lay.n <= 0 || s.nrhs <= 0;
  bool const pivot = std::holds_alternative<tridiag_pivot_plan>(pl.form);
  if (empty)
    if (cudaError_t e = tridiag_zero(s.info, s.lay.count, stream); e != cudaSuccess) return e;
  if (empty || !pivot) {
    if (cudaError_t e = tridiag_zero(s.pivoted, s.lay.count, stream); e != cudaSuccess) return e;
    if (cudaError_t e = tridiag_zero(s.refinement_steps, s.lay.count, stream); e != cudaSuccess) return e;
  }
  if (empty) return cudaSuccess;
  if (pl.periodic) {
    tridiag_args<T> inner = s;
    inner.pivoted = inner.refinement_steps = nullptr;  // zeroed above
    return tridiag_launch_periodic<T>(pl, workspace, inner, stream);
  }
  return std::visit(
      [&](auto const& f) -> cudaError_t {
        using F = std::decay_t<decltype(f)>;
        if constexpr (std::is_same_v<F, tridiag_tile_plan>)
          return tridiag_launch_tile<T>(f, workspace, s, stream);
        else if constexpr (std::is_same_v<F, tridiag_global_thomas_plan>)
          return tridiag_launch_global_thomas<T>(f, workspace, s, stream);
        else if constexpr (std::is_same_v<F, tridiag_partition_plan>)
          return tridiag_launch_partition<T>(f, pl.dev, workspace, s, stream);
        else if constexpr (std::is_same_v<F, tridiag_direct_plan>)
          return tridiag_launch_direct<T>(f, s, stream);
        else if constexpr (std::is_same_v<F, tridiag_direct_columns_plan>)
          return tridiag_launch_direct_columns<T>(f, s, stream);
        else if constexpr (std::is_same_v<F, tridiag_columns_plan>)
          return tridiag_launch_columns<T>(f, s, stream);
        else if constexpr (std::is_same_v<F, tridiag_segments_plan>)
          return tridiag_launch_segments<T>(f, pl.dev, workspace, s, stream);
        else if constexpr (std::is_same_v<F, tridiag_pivot_plan>)
          return tridiag_launch_pivot<T>(f, workspace, s, stream);
        else
          return tridiag_launch_bondeli<T>(f, workspace, s, stream);
      },
      pl.form);
}

}  // namespace recur::detail

namespace recur::device {

// CUB-style entry: null temp reports temp_bytes (at least 1) and enqueues
// nothing. rhs_stride 0: the layout's span. Pivoting none (above).
template <class T>
cudaError_t tridiag_solve(void* temp, std::size_t& temp_bytes, T const* a, T const* b, T const* c, T const* d,
                          T* x, layout const& lay, std::int64_t nrhs, std::int64_t rhs_stride,
                          std::int32_t* info, tridiag_algorithm alg, cudaStream_t stream) {
  detail::tridiag_device dev;
  if (cudaError_t e = detail::tridiag_current_device(dev); e != cudaSuccess) return e;
  detail::tridiag_request rq;
  rq.lay = lay;
  rq.nrhs = nrhs;
  rq.algorithm = alg;
  rq.pivoting = tridiag_pivoting::none;
  auto const choice = detail::plan_tridiag<T>(rq, dev);
  if (!choice.plan) return cudaErrorNotSupported;
  std::size_t const need = detail::tridiag_workspace_bytes<T>(lay, *choice.plan);
  if (!temp) {
    temp_bytes = std::max<std::size_t>(need, 1);
    return cudaSuccess;
  }
  if (temp_bytes < need) return cudaErrorInvalidValue;
  if (rhs_stride == 0) rhs_stride = lay.n * lay.count;
  return detail::tridiag_launch<T>(
      *choice.plan, temp, detail::tridiag_args<T>{a, b, c, d, x, lay, nrhs, rhs_stride, info}, stream);
}

}  // namespace recur::device
