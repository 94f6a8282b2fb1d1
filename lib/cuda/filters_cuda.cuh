#pragma once
// sosfilt and the predictor recurrences (floating-point DPCM, linrec_order_k)
// on CUDA: stream-ordered temporary storage around the device-level calls
// (kernels/dispatch/dispatch_filters.cuh). Instantiated per type by
// filters_f32.cu and filters_f64.cu; the kernels they launch come from the
// dispatch_lti instances in units of their own (lib/CMakeLists.txt).
#include <span>

#include <recur/kernels/dispatch/dispatch_filters.cuh>
#include <recur/kernels/dispatch/lti_instances.cuh>

#include "../chain_backends.hpp"
#include "../filter_backends.hpp"
#include "cuda_check.hpp"

RECUR_LTI_ALL_INSTANCES(extern, float)
RECUR_LTI_ALL_INSTANCES(extern, double)

namespace recur::detail {

template <class T>
void sosfilt_cuda(T const* sos, std::int64_t sections, T const* x, T* y, layout const& lay, T const* init,
                  T* final_state, CUstream_st* stream) {
  std::span<T const> const s(sos, static_cast<std::size_t>(6 * sections));
  auto call = [&](void* t, std::size_t& b) {
    return device::sosfilt<T>(t, b, s, x, y, lay, init, final_state, stream);
  };
  with_temp(
      "recur::device::sosfilt", stream, [&](std::size_t& b) { return call(nullptr, b); },
      [&](void* t, std::size_t b) { return call(t, b); });
}

// The predictor recurrence of order k: encode e_i = x_i - sum c_j x_(i-j),
// otherwise y_i = sum c_j y_(i-j) + x_i; final_state only when decoding.
template <bool Encode, class T>
void predictor_cuda(T const* c, std::int64_t k, T const* in, T* out, layout const& lay, T const* init,
                    T* final_state, CUstream_st* stream) {
  std::span<T const> const cs(c, static_cast<std::size_t>(k));
  auto call = [&](void* t, std::size_t& b) {
    return kernels::dispatch_predictor<T, Encode>(t, b, cs, in, out, lay, init, final_state, stream);
  };
  with_temp(
      "recur::device predictor recurrence", stream, [&](std::size_t& b) { return call(nullptr, b); },
      [&](void* t, std::size_t b) { return call(t, b); });
}

template <class T>
void dpcm_float_cuda(bool encode, T const* c, std::int64_t k, T const* in, T* out, layout const& lay,
                     T const* init, CUstream_st* stream) {
  if (encode)
    predictor_cuda<true>(c, k, in, out, lay, init, static_cast<T*>(nullptr), stream);
  else
    predictor_cuda<false>(c, k, in, out, lay, init, static_cast<T*>(nullptr), stream);
}

template <class T>
void linrec_order_k_cuda(T const* a, std::int64_t k, T const* x, T* y, layout const& lay, T const* init,
                         T* final_state, CUstream_st* stream) {
  predictor_cuda<false>(a, k, x, y, lay, init, final_state, stream);
}

}  // namespace recur::detail
