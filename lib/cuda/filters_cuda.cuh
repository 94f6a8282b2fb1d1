#pragma once
// sosfilt and the predictor recurrences (DPCM, linrec_order_k) on CUDA:
// stream-ordered temporary storage around the device-level calls
// (kernels/dispatch/dispatch_filters.cuh). Instantiated per type by
// filters_f32.cu and filters_f64.cu (small translation units).
#include <span>

#include <recur/kernels/dispatch/dispatch_filters.cuh>

#include "../filter_backends.hpp"
#include "cuda_check.hpp"

namespace recur::detail {

// query(bytes) sizes, run(temp, bytes) enqueues; temp lives on the stream.
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

template <class T>
void sosfilt_cuda(T const* sos, std::int64_t sections, T const* x, T* y, layout const& lay, T const* zi, T* zf,
                  CUstream_st* stream) {
  std::span<T const> const s(sos, static_cast<std::size_t>(6 * sections));
  with_temp(
      "recur::device::sosfilt", stream,
      [&](std::size_t& b) { return device::sosfilt<T>(nullptr, b, s, x, y, lay, zi, zf, stream); },
      [&](void* t, std::size_t b) { return device::sosfilt<T>(t, b, s, x, y, lay, zi, zf, stream); });
}

template <class T>
void predictor_cuda(bool encode, T const* c, std::int64_t k, T const* in, T* out, layout const& lay, T const* init,
                    T* final_state, CUstream_st* stream) {
  std::span<T const> const cs(c, static_cast<std::size_t>(k));
  auto call = [&](void* t, std::size_t& b) {
    return encode ? kernels::dispatch_predictor<T, true>(t, b, cs, in, out, lay, init, nullptr, stream)
                  : kernels::dispatch_predictor<T, false>(t, b, cs, in, out, lay, init, final_state, stream);
  };
  with_temp(
      "recur::device predictor recurrence", stream, [&](std::size_t& b) { return call(nullptr, b); },
      [&](void* t, std::size_t b) { return call(t, b); });
}

}  // namespace recur::detail
