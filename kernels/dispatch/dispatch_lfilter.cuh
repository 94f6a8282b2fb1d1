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
//
// Forms, first that applies:
//   order 0             a gain (no state)
//   sections            orders 3 to 8 whose companion matrix's powers peak
//                       above lfilter_section_bound, on tiles: the same
//                       filter as a cascade of second-order sections
//                       (lfilter_sections.cuh: the scan over the companion
//                       matrix would amplify its rounding errors by that
//                       peak); zi and zf map to and from the sections'
//                       states by a small kernel each, through temporary
//                       storage (count * 2 * sections values)
//   companion           lfilter_system, the DF2T state as the user's
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <utility>
#include <vector>

#include <cuda_runtime.h>

#include <recur/layout/layout.hpp>
#include "dispatch_lti.cuh"
#include "lfilter_sections.cuh"

namespace recur::kernels {

inline constexpr int lfilter_max_order = 8;

// out[seq] = map in[seq] for each sequence (map.cols values in, map.rows out).
template <class T>
__global__ void lfilter_state_map_kernel(__grid_constant__ lfilter_state_map const map, T const* in, T* out,
                                         std::int64_t count) {
  for (std::int64_t q = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; q < count;
       q += std::int64_t(gridDim.x) * blockDim.x) {
    T v[8];
    for (int j = 0; j < map.cols; ++j) v[j] = in[q * map.cols + j];
    for (int r = 0; r < map.rows; ++r) out[q * map.rows + r] = lfilter_map_row(map, r, v);
  }
}

template <class T>
cudaError_t launch_lfilter_state_map(lfilter_state_map const& map, T const* in, T* out, std::int64_t count,
                                     cudaStream_t stream) {
  std::int64_t const blocks = (count + 127) / 128;
  lfilter_state_map_kernel<T>
      <<<static_cast<unsigned>(blocks < 4096 ? blocks : 4096), 128, 0, stream>>>(map, in, out, count);
  return cudaGetLastError();
}

// The plan for a companion system, remembered per host thread for the last
// system of each type (as its powers are): a filter applied block after
// block pays the factorisation once.
template <class T, int K>
lfilter_sections_plan<T, K> const& cached_sections_plan(lfilter_system<T, K> const& sys) {
  struct entry {
    lfilter_system<T, K> sys;
    bool valid = false;
    lfilter_sections_plan<T, K> plan;
  };
  thread_local entry last;
  if (!last.valid || std::memcmp(&last.sys, &sys, sizeof(sys)) != 0) {
    last.plan = lfilter_plan_sections<T, K>(sys, cached_power_chain<K>(sys, lti_power_top<T, K>()));
    last.sys = sys;
    last.valid = true;
  }
  return last.plan;
}

// The sections form: zi mapped into the sections' states (temporary
// storage after the scan's), the cascade run from them, its final states
// mapped to zf.
template <class T, int K>
cudaError_t dispatch_lfilter_sections(void* d_temp, std::size_t& temp_bytes,
                                      lfilter_sections_plan<T, K> const& plan, T const* x, T* y,
                                      layout const& lay, T const* zi, T* zf, cudaStream_t stream) {
  constexpr int KS = 2 * lfilter_sections_plan<T, K>::sections;
  constexpr std::size_t align = 256;
  std::size_t scan_bytes = 0;
  cudaError_t e = dispatch_lti<T>(nullptr, scan_bytes, plan.sys, x, y, lay, nullptr, nullptr, KS, stream);
  if (e != cudaSuccess) return e;
  std::size_t const scan_part = (scan_bytes + align - 1) / align * align;
  std::size_t const state_bytes = zi || zf ? static_cast<std::size_t>(lay.count) * KS * sizeof(T) : 0;
  if (d_temp == nullptr) {
    temp_bytes = scan_part + state_bytes;
    return cudaSuccess;
  }
  if (temp_bytes < scan_part + state_bytes) return cudaErrorInvalidValue;
  T* const w = state_bytes ? reinterpret_cast<T*>(static_cast<char*>(d_temp) + scan_part) : nullptr;
  if (zi && (e = launch_lfilter_state_map<T>(plan.to_sections, zi, w, lay.count, stream)) != cudaSuccess)
    return e;
  e = dispatch_lti<T>(d_temp, scan_bytes, plan.sys, x, y, lay, zi ? w : nullptr, zf ? w : nullptr, KS,
                      stream);
  if (e != cudaSuccess) return e;
  if (zf) return launch_lfilter_state_map<T>(plan.to_df2t, w, zf, lay.count, stream);
  return cudaSuccess;
}

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
    if constexpr (K >= 3) {
      // Empty batches and one thread per sequence run the companion form
      // (sequential there, as accurate as the references).
      if (lay.n > 0 && lay.count > 0 && !lti_runs_lanes<T, K>(lay)) {
        auto const& plan = cached_sections_plan<T, K>(sys);
        if (plan.use && (plan.maps || (!zi && !zf)))
          return dispatch_lfilter_sections<T, K>(d_temp, temp_bytes, plan, x, y, lay, zi, zf, stream);
      }
    }
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
