#pragma once
// Host-level CUDA backend of the batched tridiagonal solvers: the plan for
// the shape, stream-ordered workspace when the caller gives none, then the
// device-level launch (kernels/dispatch/dispatch_tridiag.cuh). Included by
// one translation unit per value type.

#include <recur/kernels/dispatch/dispatch_tridiag.cuh>

#include "../tridiag_backends.hpp"
#include "cuda_check.hpp"

namespace recur::detail {

inline std::size_t tridiag_device_max_smem() {
  std::size_t bytes = 0;
  cuda_check(device::tridiag_max_smem(bytes), "cudaDeviceGetAttribute (shared memory per block)");
  return bytes;
}

template <class T>
std::size_t tridiag_cuda_workspace(layout const& lay, std::int64_t, tridiag_algorithm algorithm) {
  return device::tridiag_workspace_bytes<T>(
      lay, device::plan_tridiag<T>(lay, algorithm, tridiag_device_max_smem()));
}

template <class T>
void tridiag_cuda(tridiag_problem<T> const& p, CUstream_st* stream, void* workspace) {
  device::tridiag_launch_plan const pl =
      device::plan_tridiag<T>(p.lay, p.algorithm, tridiag_device_max_smem());
  std::size_t const need = device::tridiag_workspace_bytes<T>(p.lay, pl);
  bool const own = need > 0 && workspace == nullptr;
  if (own) cuda_check(cudaMallocAsync(&workspace, need, stream), "cudaMallocAsync");
  cudaError_t const e = device::tridiag_launch<T>(pl, workspace, p.a, p.b, p.c, p.d, p.x, p.lay, p.nrhs,
                                                  p.rhs_stride, p.info, stream);
  cudaError_t const f = own ? cudaFreeAsync(workspace, stream) : cudaSuccess;
  cuda_check(e, "recur::device::tridiag_launch");
  cuda_check(f, "cudaFreeAsync");
}

}  // namespace recur::detail
