#pragma once
// Per-thread helpers shared by the collectives and agents: shuffles of any
// trivially copyable type, the resetting application of an affine map.

#include <cstring>
#include <type_traits>

#include <cuda_runtime.h>

#include <recur/ops/affine.hpp>

namespace recur::kernels {

inline constexpr unsigned full_mask = 0xffffffffu;

template <class T>
__device__ __forceinline__ T shfl_up(T v, unsigned delta) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) % 4 == 0);
  int w[sizeof(T) / 4];
  std::memcpy(w, &v, sizeof(T));
#pragma unroll
  for (int i = 0; i < int(sizeof(T) / 4); ++i) w[i] = __shfl_up_sync(full_mask, w[i], delta);
  std::memcpy(&v, w, sizeof(T));
  return v;
}

template <class T>
__device__ __forceinline__ T shfl_down(T v, unsigned delta) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) % 4 == 0);
  int w[sizeof(T) / 4];
  std::memcpy(w, &v, sizeof(T));
#pragma unroll
  for (int i = 0; i < int(sizeof(T) / 4); ++i) w[i] = __shfl_down_sync(full_mask, w[i], delta);
  std::memcpy(&v, w, sizeof(T));
  return v;
}

template <class T>
__device__ __forceinline__ T shfl_idx(T v, int src) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) % 4 == 0);
  int w[sizeof(T) / 4];
  std::memcpy(w, &v, sizeof(T));
#pragma unroll
  for (int i = 0; i < int(sizeof(T) / 4); ++i) w[i] = __shfl_sync(full_mask, w[i], src);
  std::memcpy(&v, w, sizeof(T));
  return v;
}

// x -> m(x) with a constant map (a == 0) ignoring x, so that a non-finite x
// before a sequence boundary is not carried across it. One fused
// multiply-add, written out so every evaluation rounds identically (the
// look-back relies on that for bitwise reproducibility).
template <class T>
__device__ __forceinline__ T apply_resetting(ops::affine<T> const& m, T x) {
  return m.a == T(0) ? m.b : fma(m.a, x, m.b);
}

}  // namespace recur::kernels
