#pragma once
// Device-level IIR filtering with scipy.signal.lfilter's semantics, header-
// only, CUB's calling convention (null temp: size only):
//
//   recur::device::lfilter<float>(temp, bytes, b, a, x, y, lay, zi, zf, stream);
//
// b and a are host arrays (normalised by a[0] in double, zero-padded to the
// same length, then rounded to T); x and y follow `lay` (one sequence or a
// batch in any layout, y may equal x); zi and zf (device, may be null, may be
// equal) hold order = max(len(a), len(b)) - 1 values per sequence, sequence
// s at s * order. Orders 0 to 8 (more: cudaErrorNotSupported).
//
// How: the direct form II transposed filter is a linear time-invariant
// recurrence on its state, run by dispatch_lti.cuh (tiles with a look-back
// over K-vectors, or one thread per sequence for many short or strided
// ones). Memory is read once and written once, nothing is copied from the
// host (the matrix powers travel in the kernel parameters), and the result
// is bitwise reproducible run to run.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include <cuda_runtime.h>

#include <recur/layout/layout.hpp>
#include "dispatch_lti.cuh"

namespace recur::kernels {

inline constexpr int lfilter_max_order = 8;

template <class T, int K>
cudaError_t dispatch_lfilter(void* d_temp, std::size_t& temp_bytes, std::vector<double> const& b,
                             std::vector<double> const& a, T const* x, T* y, layout const& lay, T const* zi,
                             T* zf, cudaStream_t stream) {
  if constexpr (K == 0) {
    gain_system<T> sys{T(b[0])};
    return dispatch_lti<T>(d_temp, temp_bytes, sys, x, y, lay, nullptr, nullptr, 1, stream);
  } else {
    lfilter_system<T, K> sys;
    for (int j = 0; j <= K; ++j) sys.b[j] = T(b[j]), sys.a[j] = T(a[j]);
    return dispatch_lti<T>(d_temp, temp_bytes, sys, x, y, lay, zi, zf, K, stream);
  }
}

}  // namespace recur::kernels

namespace recur::device {

// Errors: cudaErrorInvalidValue for empty b or a, a[0] zero or not finite,
// a negative size, or temporary storage smaller than asked for;
// cudaErrorNotSupported for orders above 8.
template <class T>
cudaError_t lfilter(void* d_temp, std::size_t& temp_bytes, std::span<T const> b, std::span<T const> a,
                    T const* x, T* y, layout const& lay, T const* zi = nullptr, T* zf = nullptr,
                    cudaStream_t stream = 0) {
  if (b.empty() || a.empty() || a[0] == T(0) || !std::isfinite(a[0])) return cudaErrorInvalidValue;
  if (lay.n < 0 || lay.count < 0) return cudaErrorInvalidValue;
  std::size_t const len = b.size() > a.size() ? b.size() : a.size();
  int const order = static_cast<int>(len) - 1;
  if (order > kernels::lfilter_max_order) return cudaErrorNotSupported;
  std::vector<double> bn(len, 0.0), an(len, 0.0);  // normalised by a[0], as scipy
  for (std::size_t j = 0; j < b.size(); ++j) bn[j] = double(b[j]) / double(a[0]);
  for (std::size_t j = 0; j < a.size(); ++j) an[j] = double(a[j]) / double(a[0]);
  return kernels::with_order<kernels::lfilter_max_order>(order, [&](auto k) {
    return kernels::dispatch_lfilter<T, decltype(k)::value>(d_temp, temp_bytes, bn, an, x, y, lay, zi, zf,
                                                            stream);
  });
}

}  // namespace recur::device
