#pragma once
// Device-level second-order-section cascades, floating-point DPCM codecs and
// constant-coefficient k-th order recurrences: clients of dispatch_lti.cuh
// (header-only, CUB's calling convention: a null temp asks for the size).
//
//   recur::device::sosfilt<float>(temp, bytes, sos, x, y, lay, zi, zf, stream);
//   recur::device::dpcm_encode<float>(temp, bytes, c, x, e, lay, init, stream);
//   recur::device::dpcm_decode<float>(temp, bytes, c, e, x, lay, init, stream);
//   recur::device::linrec_order_k<float>(temp, bytes, a, x, y, lay, init, final_state, stream);
//
// Coefficients are host arrays (checked, normalised in double, rounded to T);
// data and state are device memory following `lay` (outputs may equal the
// inputs: in place). Semantics are those of include/recur/filter.hpp and
// chain.hpp (state conventions included), computed as a scan: the results
// agree with the sequential references to rounding, not bit for bit, and are
// bitwise reproducible run to run.
//
// - sosfilt: S sections (sos: 6 S values, rows b0 b1 b2 a0 a1 a2). Up to 4
//   sections run fused in one pass over memory (a state of 8 values); longer
//   cascades run in passes of 4 sections, the later ones in place on y.
//   State: 2 values per section per sequence, sequence k's section j at
//   (k S + j) 2.
// - dpcm_encode / dpcm_decode, order k = c.size() up to 8: e_i = x_i - p_i and
//   x_i = p_i + e_i with p_i = sum_j c_j x_(i-j); init: k values per sequence,
//   newest first (x_(-1) at init[s k]), or null (zeros).
// - linrec_order_k, order k = a.size() up to 8: y_i = sum_j a_j y_(i-j) + x_i,
//   init and final_state k values per sequence, newest first.
// Errors: cudaErrorInvalidValue for a malformed sos (empty, not a multiple of
// 6, a0 zero, a coefficient not finite), non-finite coefficients, negative
// sizes or too little temporary storage; cudaErrorNotSupported for an order
// above 8.

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

inline constexpr int lti_max_order = 8;

// A predictor-based recurrence of order k: Encode runs predictor_system,
// decode order_k_system (both with the k coefficients c); k == 0 copies.
template <class T, bool Encode>
cudaError_t dispatch_predictor(void* d_temp, std::size_t& temp_bytes, std::span<T const> c, T const* in,
                               T* out, layout const& lay, T const* init, T* final_state,
                               cudaStream_t stream) {
  if (!all_finite(c)) return cudaErrorInvalidValue;
  return with_order<lti_max_order>(static_cast<int>(c.size()), [&](auto k) -> cudaError_t {
    constexpr int K = decltype(k)::value;
    if constexpr (K == 0) {
      gain_system<T> sys{T(1)};
      return dispatch_lti<T>(d_temp, temp_bytes, sys, in, out, lay, nullptr, nullptr, 1, stream);
    } else {
      std::conditional_t<Encode, predictor_system<T, K>, order_k_system<T, K>> sys;
      for (int j = 0; j < K; ++j) {
        if constexpr (Encode)
          sys.c[j] = c[j];
        else
          sys.a[j] = c[j];
      }
      return dispatch_lti<T>(d_temp, temp_bytes, sys, in, out, lay, init, final_state, K, stream);
    }
  });
}

}  // namespace recur::kernels

namespace recur::device {

template <class T>
cudaError_t sosfilt(void* d_temp, std::size_t& temp_bytes, std::span<T const> sos, T const* x, T* y,
                    layout const& lay, T const* zi = nullptr, T* zf = nullptr, cudaStream_t stream = 0) {
  if (sos.empty() || sos.size() % 6 != 0 || !kernels::all_finite(sos)) return cudaErrorInvalidValue;
  if (lay.n < 0 || lay.count < 0) return cudaErrorInvalidValue;
  int const sections = static_cast<int>(sos.size() / 6);
  std::vector<T> b(3 * sections), a(3 * sections);
  for (int j = 0; j < sections; ++j) {
    double const a0 = double(sos[6 * j + 3]);
    if (a0 == 0) return cudaErrorInvalidValue;
    for (int c = 0; c < 3; ++c) {
      double const bn = double(sos[6 * j + c]) / a0, an = double(sos[6 * j + 3 + c]) / a0;
      if (!std::isfinite(T(bn)) || !std::isfinite(T(an))) return cudaErrorInvalidValue;
      b[3 * j + c] = T(bn);
      a[3 * j + c] = T(an);
    }
  }
  std::size_t need = 0;
  bool const query = d_temp == nullptr;
  for (int j0 = 0; j0 < sections; j0 += 4) {
    int const count = sections - j0 < 4 ? sections - j0 : 4;
    std::size_t bytes = temp_bytes;
    cudaError_t const e = kernels::with_order<4>(count, [&](auto s) -> cudaError_t {
      constexpr int S = decltype(s)::value;
      if constexpr (S == 0) {
        return cudaErrorInvalidValue;
      } else {
        kernels::sos_system<T, S> sys;
        for (int j = 0; j < S; ++j)
          for (int c = 0; c < 3; ++c) sys.b[j][c] = b[3 * (j0 + j) + c], sys.a[j][c] = a[3 * (j0 + j) + c];
        return kernels::dispatch_lti<T>(d_temp, bytes, sys, j0 == 0 ? x : y, y, lay,
                                        zi ? zi + 2 * j0 : nullptr, zf ? zf + 2 * j0 : nullptr,
                                        2 * std::int64_t(sections), stream);
      }
    });
    if (e != cudaSuccess) return e;
    if (query && bytes > need) need = bytes;
  }
  if (query) temp_bytes = need;
  return cudaSuccess;
}

template <class T>
cudaError_t dpcm_encode(void* d_temp, std::size_t& temp_bytes, std::span<T const> c, T const* x, T* e,
                        layout const& lay, T const* init = nullptr, cudaStream_t stream = 0) {
  return kernels::dispatch_predictor<T, true>(d_temp, temp_bytes, c, x, e, lay, init, nullptr, stream);
}

template <class T>
cudaError_t dpcm_decode(void* d_temp, std::size_t& temp_bytes, std::span<T const> c, T const* e, T* x,
                        layout const& lay, T const* init = nullptr, cudaStream_t stream = 0) {
  return kernels::dispatch_predictor<T, false>(d_temp, temp_bytes, c, e, x, lay, init, nullptr, stream);
}

template <class T>
cudaError_t linrec_order_k(void* d_temp, std::size_t& temp_bytes, std::span<T const> a, T const* x, T* y,
                           layout const& lay, T const* init = nullptr, T* final_state = nullptr,
                           cudaStream_t stream = 0) {
  return kernels::dispatch_predictor<T, false>(d_temp, temp_bytes, a, x, y, lay, init, final_state, stream);
}

}  // namespace recur::device
