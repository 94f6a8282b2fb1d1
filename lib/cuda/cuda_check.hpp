#pragma once
// What every host-level CUDA backend in lib/cuda/ shares: turning a CUDA
// error into recur::cuda_error, and stream-ordered temporary storage around a
// device-level call.
#include <cstddef>

#include <cuda_runtime_api.h>

#include <recur/error.hpp>

namespace recur::detail {

// Throws cuda_error naming `what` when e is not cudaSuccess.
void cuda_check(cudaError_t e, char const* what);

// A device-level call in CUB's two-phase style: query(bytes) sizes the
// temporary storage, run(temp, bytes) enqueues the work. The storage is
// allocated and freed on the stream (cudaMallocAsync / cudaFreeAsync), so
// nothing synchronises; errors name `what`.
template <class Query, class Run>
void with_temp(char const* what, CUstream_st* stream, Query query, Run run) {
  std::size_t bytes = 0;
  cuda_check(query(bytes), what);
  void* temp = nullptr;
  cuda_check(cudaMallocAsync(&temp, bytes, stream), "cudaMallocAsync");
  cudaError_t const e = run(temp, bytes);
  cudaError_t const f = cudaFreeAsync(temp, stream);
  cuda_check(e, what);
  cuda_check(f, "cudaFreeAsync");
}

}  // namespace recur::detail
