#pragma once
// matrix_chain and mobius_recurrence on CUDA: stream-ordered temporary
// storage around the device-level calls (kernels/dispatch/dispatch_chain.cuh).
// Instantiated per type by chain_f32.cu and chain_f64.cu, but K = 7 and 8,
// the slowest to compile: chain_k7_8_f32.cu and chain_k7_8_f64.cu.
#include <recur/kernels/dispatch/dispatch_chain.cuh>

#include "../chain_backends.hpp"
#include "cuda_check.hpp"

namespace recur::detail {

template <int K, class T>
void matrix_chain_cuda(T const* M, T const* u, T* x, layout const& lay, T const* init, T* final_state,
                       CUstream_st* stream) {
  with_temp(
      "recur::device::matrix_chain", stream,
      [&](std::size_t& b) {
        return device::matrix_chain<K, T>(nullptr, b, M, u, x, lay, init, final_state, stream);
      },
      [&](void* t, std::size_t b) {
        return device::matrix_chain<K, T>(t, b, M, u, x, lay, init, final_state, stream);
      });
}

template <class T>
void mobius_cuda(T const* alpha, T const* beta, T const* gamma, T const* delta, T* p, layout const& lay,
                 T const* init, T init_value, T* final_state, CUstream_st* stream) {
  auto call = [&](void* t, std::size_t& b) {
    return device::mobius_recurrence<T>(t, b, alpha, beta, gamma, delta, p, lay, init, init_value,
                                        final_state, stream);
  };
  with_temp(
      "recur::device::mobius_recurrence", stream, [&](std::size_t& b) { return call(nullptr, b); },
      [&](void* t, std::size_t b) { return call(t, b); });
}

}  // namespace recur::detail

// The explicit instantiation of matrix_chain_cuda<K, T>, in namespace recur::detail.
#define RECUR_MATRIX_CHAIN_CUDA(K, T) \
  template void matrix_chain_cuda<K, T>(T const*, T const*, T*, layout const&, T const*, T*, CUstream_st*);
