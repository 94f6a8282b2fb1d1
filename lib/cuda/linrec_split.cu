// recur::linrec_summary on the GPU (a and b stored in T on the device), and
// the CUDA halves of a linrec split across processes (lib/dist/): the
// summary of each sequence brought to the host, and the recurrence run from
// initial states the host holds. Every value type in one unit: all are
// small next to linrec's agents.
#include <recur/kernels/dispatch/dispatch_linrec_summary.cuh>

#include "../linrec_backends.hpp"
#include "cuda_check.hpp"

namespace recur::detail {

// The summary's maps into stream-ordered temporary storage, then `then(d)`
// enqueues what reads them (d: count maps in compute_t<T>) before the
// storage is freed.
template <class T, class Then>
void with_summary_maps(linrec_problem<T> const& p, CUstream_st* stream, Then then) {
  using map = ops::affine<compute_t<T>>;
  std::size_t const maps_bytes = kernels::workspace_piece(sizeof(map) * std::size_t(p.lay.count));
  with_temp(
      "recur::device::linrec_summary", stream,
      [&](std::size_t& bytes) {
        cudaError_t const e = device::linrec_summary<T>(nullptr, bytes, p, nullptr, stream);
        bytes += maps_bytes;
        return e;
      },
      [&](void* temp, std::size_t bytes) {
        kernels::workspace_cursor ws(temp);
        map* const d = ws.take<map>(maps_bytes);
        std::size_t rest = bytes - maps_bytes;
        if (cudaError_t e = device::linrec_summary<T>(ws.take(0), rest, p, d, stream); e != cudaSuccess)
          return e;
        return then(static_cast<map const*>(d));
      });
}

template <class T>
void linrec_summary_cuda(linrec_problem<T> const& p, CUstream_st* stream, ops::affine<compute_t<T>>* out,
                         T* init) {
  with_summary_maps(p, stream, [&](ops::affine<compute_t<T>> const* d) {
    return cudaMemcpyAsync(out, d, sizeof(*d) * std::size_t(p.lay.count), cudaMemcpyDeviceToHost, stream);
  });
  if (init && p.init)
    cuda_check(
        cudaMemcpyAsync(init, p.init, sizeof(T) * std::size_t(p.lay.count), cudaMemcpyDeviceToHost, stream),
        "cudaMemcpyAsync");
  else if (init)
    for (std::int64_t k = 0; k < p.lay.count; ++k) init[k] = p.init_value;
  cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

template <class T>
__global__ void linrec_summary_store_kernel(ops::affine<compute_t<T>> const* maps, std::int64_t count, T* a,
                                            T* b) {
  std::int64_t const k = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < count) {
    a[k] = to_storage<T>(maps[k].a);
    b[k] = to_storage<T>(maps[k].b);
  }
}

template <class T>
void linrec_summary_cuda_store(linrec_problem<T> const& p, CUstream_st* stream, T* a, T* b) {
  with_summary_maps(p, stream, [&](ops::affine<compute_t<T>> const* d) {
    linrec_summary_store_kernel<T>
        <<<unsigned((p.lay.count + 255) / 256), 256, 0, stream>>>(d, p.lay.count, a, b);
    return cudaGetLastError();
  });
}

template <class T>
void linrec_cuda_from_host(linrec_problem<T> p, CUstream_st* stream, linrec_variant variant, T const* in,
                           T const* final) {
  std::size_t const bytes = sizeof(T) * std::size_t(p.lay.count);
  T* const final_state = p.final_state;
  p.final_state = nullptr;
  void* d = nullptr;
  cuda_check(temp_malloc_async(&d, bytes, stream), "cudaMallocFromPoolAsync");
  // From pageable memory the copy returns once `in` is staged.
  cudaError_t e = cudaMemcpyAsync(d, in, bytes, cudaMemcpyHostToDevice, stream);
  if (e == cudaSuccess) {
    p.init = static_cast<T const*>(d);
    try {
      linrec_cuda(p, stream, variant);
    } catch (...) {
      cudaFreeAsync(d, stream);
      throw;
    }
  }
  if (e == cudaSuccess && final && final_state)
    e = cudaMemcpyAsync(final_state, final, bytes, cudaMemcpyHostToDevice, stream);
  cudaError_t const f = cudaFreeAsync(d, stream);
  cuda_check(e, "cudaMemcpyAsync");
  cuda_check(f, "cudaFreeAsync");
}

#define RECUR_LINREC_SPLIT(T)                                                                              \
  template void linrec_summary_cuda<T>(linrec_problem<T> const&, CUstream_st*, ops::affine<compute_t<T>>*, \
                                       T*);                                                                \
  template void linrec_cuda_from_host<T>(linrec_problem<T>, CUstream_st*, linrec_variant, T const*,        \
                                         T const*);                                                        \
  template void linrec_summary_cuda_store<T>(linrec_problem<T> const&, CUstream_st*, T*, T*);
RECUR_LINREC_SPLIT(float)
RECUR_LINREC_SPLIT(double)
RECUR_LINREC_SPLIT(bfloat16)
RECUR_LINREC_SPLIT(float16)
#undef RECUR_LINREC_SPLIT

}  // namespace recur::detail
