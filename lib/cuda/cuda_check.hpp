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

// Stream-ordered temporary storage (freed with cudaFreeAsync) from recur's
// own memory pool on the current device, which keeps up to
// temp_pool_keep_bytes between calls: the default pool returns its memory
// to the driver at every synchronisation, and a cudaMallocAsync after one
// costs about 47 us on an H100 against 4 us from a pool that keeps it (a
// call that follows a synchronisation, as a Python caller's often does,
// paid that every time). bytes == 0 gives a null pointer.
inline constexpr std::size_t temp_pool_keep_bytes = std::size_t(256) << 20;
cudaError_t temp_malloc_async(void** p, std::size_t bytes, cudaStream_t stream);

// A device-level call in CUB's two-phase style: query(bytes) sizes the
// temporary storage, run(temp, bytes) enqueues the work. The storage is
// allocated and freed on the stream (temp_malloc_async / cudaFreeAsync), so
// nothing synchronises; errors name `what`.
template <class Query, class Run>
void with_temp(char const* what, CUstream_st* stream, Query query, Run run) {
  std::size_t bytes = 0;
  cuda_check(query(bytes), what);
  void* temp = nullptr;
  cuda_check(temp_malloc_async(&temp, bytes, stream), "cudaMallocFromPoolAsync");
  cudaError_t const e = run(temp, bytes);
  cudaError_t const f = temp ? cudaFreeAsync(temp, stream) : cudaSuccess;
  cuda_check(e, what);
  cuda_check(f, "cudaFreeAsync");
}

}  // namespace recur::detail
