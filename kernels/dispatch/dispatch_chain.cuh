#pragma once
// Device-level matrix-chain and Moebius recurrences: clients of the generic
// single-pass scan (agent_scan.cuh), header-only, CUB's calling convention (a
// null temp asks for the size).
//
//   recur::device::matrix_chain<3, float>(temp, bytes, M, u, x, lay, init, final_state, stream);
//   recur::device::mobius_recurrence<float>(temp, bytes, alpha, beta, gamma, delta, p, lay,
//                                           init, init_value, final_state, stream);
//
// Semantics and storage are those of include/recur/chain.hpp:
// - matrix_chain<K>: x_i = M_i x_(i-1) + u_i, K = 2..8; M_i row-major at
//   M + lay.offset(i, k) K^2, u_i and x_i at u/x + lay.offset(i, k) K (u
//   may be null: zero); init and final_state K values per sequence (null:
//   zero / not written).
// - mobius_recurrence: p_i = (alpha_i p_(i-1) + beta_i) / (gamma_i p_(i-1) +
//   delta_i), p_(-1) = init[k] or init_value; steps composed as 2x2 products
//   rescaled by powers of two (ops::mobius_compose), so long products neither
//   overflow nor underflow.
// Every array is device memory; an output may be an input exactly (x == u,
// p == a coefficient array), final_state may be init.
//
// How. Element 0 of a sequence becomes the constant map of its result
// (x_0 = M_0 init + u_0, the zero matrix; p_0 as a map {0, p_0, 0, 1}), so a
// sequence's inclusive scan of steps under composition holds x_i in its
// offset part (p_i = b / d), and a batch is one segmented scan of the flat
// order (a segment start ends a look-back). Results agree with the
// sequential references to rounding (a reassociated product) and are bitwise
// reproducible run to run (the scan's value-space look-back).
// Errors: cudaErrorInvalidValue for negative sizes, null arrays for a
// non-empty batch, or too little temporary storage.

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include <recur/layout/layout.hpp>
#include <recur/ops/matrix.hpp>
#include <recur/ops/mobius.hpp>

#include "dispatch_scan.cuh"

namespace recur::kernels {

// x_i = M_i x_(i-1) + u_i as a segmented scan of affine steps.
template <class T, int K>
struct chain_access {
  using step = ops::affine_matrix<T, K>;
  using value_type = segmented<step>;
  T const* M;
  T const* u;  // null: zero
  T* x;
  layout lay;
  T const* init;  // null: zero
  T* final_state;
  bool exclusive = false;

  __device__ __forceinline__ value_type load(std::int64_t seq, std::int64_t i) const {
    std::int64_t const o = lay.offset(i, seq);
    step s;
#pragma unroll
    for (int r = 0; r < K; ++r) {
#pragma unroll
      for (int c = 0; c < K; ++c) s.M.m[r][c] = M[o * K * K + r * K + c];
      s.u[r] = u ? u[o * K + r] : T(0);
    }
    if (i != 0) return {s, 0u};
    // The sequence start: the constant map x -> M_0 init + u_0.
    if (init) {
#pragma unroll
      for (int r = 0; r < K; ++r) {
        T acc = s.u[r];
#pragma unroll
        for (int c = 0; c < K; ++c) acc = fma(s.M.m[r][c], init[seq * K + c], acc);
        s.u[r] = acc;
      }
    }
#pragma unroll
    for (int r = 0; r < K; ++r)
#pragma unroll
      for (int c = 0; c < K; ++c) s.M.m[r][c] = T(0);
    return {s, 1u};
  }
  __device__ __forceinline__ value_type start_value(std::int64_t) const {
    return {ops::affine_matrix_identity<T, K>(), 1u};
  }
  // A value composed from its sequence's start: x_i is its offset part.
  __device__ __forceinline__ void store(std::int64_t seq, std::int64_t i, value_type const& v) const {
    std::int64_t const o = lay.offset(i, seq);
#pragma unroll
    for (int r = 0; r < K; ++r) x[o * K + r] = v.value.u[r];
    if (final_state && i == lay.n - 1)
#pragma unroll
      for (int r = 0; r < K; ++r) final_state[seq * K + r] = v.value.u[r];
  }
};

// p_i = (alpha_i p_(i-1) + beta_i) / (gamma_i p_(i-1) + delta_i) as a
// segmented scan of 2x2 maps.
template <class T>
struct mobius_access {
  using value_type = segmented<ops::mobius<T>>;
  T const *alpha, *beta, *gamma, *delta;
  T* p;
  layout lay;
  T const* init;  // null: init_value
  T init_value;
  T* final_state;
  bool exclusive = false;

  __device__ __forceinline__ value_type load(std::int64_t seq, std::int64_t i) const {
    std::int64_t const o = lay.offset(i, seq);
    ops::mobius<T> const m{alpha[o], beta[o], gamma[o], delta[o]};
    if (i != 0) return {m, 0u};
    T const q = init ? init[seq] : init_value;
    return {{T(0), m.apply(q), T(0), T(1)}, 1u};  // the constant map p -> p_0
  }
  __device__ __forceinline__ value_type start_value(std::int64_t) const {
    return {ops::mobius_identity<T>(), 1u};
  }
  __device__ __forceinline__ void store(std::int64_t seq, std::int64_t i, value_type const& v) const {
    T const r = v.value.b / v.value.d;  // a constant map {0, b, 0, d}: p_i = b / d
    p[lay.offset(i, seq)] = r;
    if (final_state && i == lay.n - 1) final_state[seq] = r;
  }
};

// n == 0: the final state is the initial state (`values` per sequence).
template <class T>
__global__ void chain_copy_state_kernel(T const* init, T init_value, T* final_state, std::int64_t total) {
  std::int64_t const k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < total) final_state[k] = init ? init[k] : init_value;
}

template <class T>
cudaError_t chain_copy_state(T const* init, T init_value, T* final_state, std::int64_t total,
                             cudaStream_t stream) {
  if (!final_state || total == 0 || final_state == init) return cudaSuccess;
  chain_copy_state_kernel<T>
      <<<static_cast<unsigned>((total + 255) / 256), 256, 0, stream>>>(init, init_value, final_state, total);
  return cudaGetLastError();
}

template <class Access>
cudaError_t dispatch_chain_scan(void* d_temp, std::size_t& temp_bytes, Access const& acc, auto const& op,
                                cudaStream_t stream) {
  using V = typename Access::value_type;
  using vop = segmented_op<std::remove_cvref_t<decltype(op)>>;
  return launch_scan<V, vop, Access, chain_policy<V>>(d_temp, temp_bytes, acc.lay.n * acc.lay.count, acc,
                                                      vop{op}, stream);
}

}  // namespace recur::kernels

namespace recur::device {

template <int K, class T>
cudaError_t matrix_chain(void* d_temp, std::size_t& temp_bytes, T const* M, T const* u, T* x,
                         layout const& lay, T const* init = nullptr, T* final_state = nullptr,
                         cudaStream_t stream = 0) {
  static_assert(K >= 2 && K <= 8, "recur::device::matrix_chain supports K = 2..8");
  if (lay.n < 0 || lay.count < 0) return cudaErrorInvalidValue;
  if (lay.n > 0 && lay.count > 0 && (!M || !x)) return cudaErrorInvalidValue;
  if (lay.n == 0) {
    if (d_temp == nullptr) {
      temp_bytes = 1;  // nothing needed; a non-zero size keeps callers' allocations simple
      return cudaSuccess;
    }
    return kernels::chain_copy_state<T>(init, T(0), final_state, lay.count * K, stream);
  }
  return kernels::dispatch_chain_scan(d_temp, temp_bytes,
                                      kernels::chain_access<T, K>{M, u, x, lay, init, final_state},
                                      ops::affine_matrix_compose{}, stream);
}

template <class T>
cudaError_t mobius_recurrence(void* d_temp, std::size_t& temp_bytes, T const* alpha, T const* beta,
                              T const* gamma, T const* delta, T* p, layout const& lay,
                              T const* init = nullptr, T init_value = T(0), T* final_state = nullptr,
                              cudaStream_t stream = 0) {
  if (lay.n < 0 || lay.count < 0) return cudaErrorInvalidValue;
  if (lay.n > 0 && lay.count > 0 && (!alpha || !beta || !gamma || !delta || !p)) return cudaErrorInvalidValue;
  if (lay.n == 0) {
    if (d_temp == nullptr) {
      temp_bytes = 1;
      return cudaSuccess;
    }
    return kernels::chain_copy_state<T>(init, init_value, final_state, lay.count, stream);
  }
  return kernels::dispatch_chain_scan(
      d_temp, temp_bytes,
      kernels::mobius_access<T>{alpha, beta, gamma, delta, p, lay, init, init_value, final_state},
      ops::mobius_compose{}, stream);
}

}  // namespace recur::device
