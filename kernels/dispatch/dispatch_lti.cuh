#pragma once
// Device-level linear time-invariant recurrences on a K-value state, and the
// systems built on them (header-only, CUB's calling convention: a null temp
// asks for the size):
//
//   recur::kernels::dispatch_lti<T>(temp, bytes, system, x, y, lay, zi, zf, state_stride, stream);
//
// Systems (each a per-sample step, linear in the state and the sample; the
// state is the user's, in the user's order):
//   lfilter_system<T, K>   direct form II transposed, order K (scipy's zi)
//   sos_system<T, S>       a cascade of S second-order DF2T sections, K = 2S
//   order_k_system<T, K>   y_i = a_1 y_(i-1) + ... + a_K y_(i-K) + x_i, the
//                          state (y_(i-1), ..., y_(i-K)), newest first
//   predictor_system<T, K> DPCM encoding, e_i = x_i - sum c_j x_(i-j), the
//                          state (x_(i-1), ..., x_(i-K)) (an FIR stencil:
//                          its A is nilpotent, so tiles never walk back)
//
// The state matrix A of a system comes from running its step in long double from
// each unit state with a zero sample (the coefficients rounded to T first, so
// A is that of the arithmetic the GPU does); the powers A^(Items 2^s) are
// squared in long double and passed in the kernel parameters (constant bank), so
// the call copies nothing from the host and can be captured in a graph.
//
// Which kernel: agent_lti.cuh's tiles (tiles within a sequence, a decoupled
// look-back over K-vectors) unless there are many sequences that are short
// or not unit-stride, where one thread per sequence runs them sequentially
// (lti_lanes_kernel). Temporary storage: the tiles' status (none for lanes).

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include <cuda_runtime.h>

#include <recur/config.hpp>
#include <recur/layout/layout.hpp>
#include "../agent/agent_lti.cuh"
#include "../thread/lti_systems.cuh"
#include "../tuning/tuning_lti.cuh"
#include "launch_persistent.cuh"

namespace recur::kernels {

// f(std::integral_constant<int, K>) for the K in [0, Max] equal to k.
template <int Max, class F>
cudaError_t with_order(int k, F&& f) {
  cudaError_t e = cudaErrorNotSupported;
  [&]<int... K>(std::integer_sequence<int, K...>) {
    ((k == K ? (e = f(std::integral_constant<int, K>{}), 0) : 0), ...);
  }
  (std::make_integer_sequence<int, Max + 1>{});
  return e;
}

template <class T>
inline bool all_finite(std::span<T const> c) {
  for (T v : c)
    if (!std::isfinite(v)) return false;
  return true;
}

// --- dispatch ---------------------------------------------------------------

// zf = zi (or zeros) for empty sequences.
template <class T>
__global__ void lti_state_copy_kernel(T const* zi, T* zf, std::int64_t count, int k, std::int64_t stride) {
  for (std::int64_t q = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; q < count * k;
       q += std::int64_t(gridDim.x) * blockDim.x) {
    std::int64_t const seq = q / k, e = q - seq * k;
    zf[seq * stride + e] = zi ? zi[seq * stride + e] : T(0);
  }
}

// The chain for `sys`, remembered per host thread for the last system of
// each type: a filter applied block after block (streaming) pays the
// squarings once.
template <int K, class System>
lti_power_chain<K> const& cached_power_chain(System const& sys, int top) {
  static_assert(std::is_trivially_copyable_v<System>);
  struct entry {
    System sys;
    int top = -1;
    std::optional<lti_power_chain<K>> chain;
  };
  thread_local entry last;
  if (!last.chain || last.top < top || std::memcmp(&last.sys, &sys, sizeof(System)) != 0) {
    last.chain.emplace(sys, top);
    last.sys = sys;
    last.top = top;
  }
  return *last.chain;
}

// Whether the elements of each sequence are adjacent in memory, forwards or
// backwards (a reverse view, whose element stride is -1), or single.
constexpr bool lti_unit_stride(layout const& lay) {
  return lay.element_stride == 1 || lay.element_stride == -1 || lay.n <= 1;
}

// The agent of a tile shape for the element stride Step: 1, -1 (a reverse
// view), or 0 (any). Their parameters and status are the same types.
template <class T, class Policy, class System, int Step>
using lti_agent_for = agent_lti<T, System, Policy::block, Policy::items, Policy::depth, Policy::min_blocks,
                                Step, Policy::correct>;

// One tile shape: sizes (null temp) or launches.
// `chain` (may be null: the cached one) holds at least log2(Items) + levels
// powers.
template <class T, class Policy, class System>
cudaError_t launch_lti(void* d_temp, std::size_t& temp_bytes, System const& sys, T const* x, T* y,
                       layout const& lay, T const* zi, T* zf, std::int64_t state_stride, cudaStream_t stream,
                       lti_power_chain<System::K> const* chain = nullptr) {
  constexpr int K = System::K;
  using agent = lti_agent_for<T, Policy, System, 1>;
  using status = typename agent::status;
  std::int64_t const tps = agent::tiles_per_seq(lay.n);
  std::int64_t const tiles = tps * lay.count;
  if (tiles > 0x7fffffff) return cudaErrorInvalidValue;
  std::size_t const bytes = status::bytes(tiles);
  if (d_temp == nullptr) {
    temp_bytes = bytes;
    return cudaSuccess;
  }
  if (temp_bytes < bytes) return cudaErrorInvalidValue;
  typename agent::params p{};
  p.sys = sys;
  p.x = x;
  p.y = y;
  p.lay = lay;
  p.zi = zi;
  p.zf = zf;
  p.state_stride = state_stride;
  p.tiles_per_seq = tps;
  if constexpr (Policy::correct) {  // resp[j][c]: output j of a zero-sample run from unit state c
    auto const hs = sys.template cast<long double>();
    for (int c = 0; c < K; ++c) {
      long double s[K] = {};
      s[c] = 1;
      for (int j = 0; j < Policy::items; ++j) p.resp[j][c] = lti_narrow<T>(hs.step(s, 0.0L));
    }
  }
  // A^Items and its squares, rounded to T at the end.
  constexpr int log_items = lti_log2(Policy::items);
  if (!chain || chain->p.size() < std::size_t(log_items + agent::levels))
    chain = &cached_power_chain<K>(sys, log_items + agent::levels - 1);
  for (int s = 0; s < agent::levels; ++s)
    for (int r = 0; r < K; ++r)
      for (int c = 0; c < K; ++c) p.pow[s][r][c] = lti_narrow<T>(chain->p[log_items + s].m[r][c]);
  p.forget = chain->p[log_items + agent::levels - 1].template zero_in<T>();
  if (lti_unit_stride(lay) && lay.count >= lti_rows_min_waves * Policy::min_blocks) {
    // Whole sequences per block where the batch fills the device
    // lti_rows_min_waves times over: no look-back, no status.
    int sms = 0;
    if (cudaError_t const e = current_sm_count(sms); e != cudaSuccess) return e;
    if (lay.count >= std::int64_t(lti_rows_min_waves) * Policy::min_blocks * sms) {
      auto const kernel = lay.element_stride == -1 && lay.n > 1
                              ? lti_rows_kernel<lti_agent_for<T, Policy, System, -1>>
                              : lti_rows_kernel<agent>;
      return launch_persistent(kernel, p, lay.count, agent::block_threads, 0, stream);
    }
  }
  status const st = status::carve(d_temp, tiles);
  cudaError_t const e = cudaMemsetAsync(d_temp, 0xff, bytes, stream);
  if (e != cudaSuccess) return e;
  // One sample has no stride; -1 is a reverse view's (the host API mirrors reverse calls).
  if (lay.element_stride == 1 || lay.n <= 1)
    lti_tiles_kernel<agent><<<static_cast<unsigned>(tiles), agent::block_threads, 0, stream>>>(p, st);
  else if (lay.element_stride == -1)
    lti_tiles_kernel<lti_agent_for<T, Policy, System, -1>>
        <<<static_cast<unsigned>(tiles), agent::block_threads, 0, stream>>>(p, st);
  else
    lti_tiles_kernel<lti_agent_for<T, Policy, System, 0>>
        <<<static_cast<unsigned>(tiles), agent::block_threads, 0, stream>>>(p, st);
  return cudaGetLastError();
}

// Whether dispatch_lti runs a batch of this layout one thread per sequence
// (sequentially, as the references do).
template <class T, int K>
constexpr bool lti_runs_lanes(layout const& lay) {
  return lay.count >= lti_lanes_min_count && (!lti_unit_stride(lay) || lay.n <= 2 * lti_lanes_tile<T, K>);
}

// x and y follow `lay` (y may equal x; the element stride may be negative:
// a reverse view); zi and zf (device, may be null, may be equal) hold each
// sequence's K state values at seq * state_stride.
// Policy: a tile shape (lti_shape) for every tiled call, or void for
// lti_policy's. Errors: cudaErrorInvalidValue for a negative size or too
// little temporary storage.
//
// Forms, first that applies:
//   nothing to do     empty: zf = zi for empty sequences
//   lti_lanes_kernel  many sequences (lti_lanes_min_count), strided or short
//                     (at most two lti_lanes_tile): one thread each
//   rows              unit stride, lti_rows_min_waves x the shape's blocks
//                     per SM x SMs sequences or more: whole sequences per
//                     block, tile after tile, no look-back
//   tiles, forgetting the forgetting shape's tile power is zero in T
//   tiles, long       otherwise (either shape for rows, by the same test)
template <class T, class Policy = void, class System>
cudaError_t dispatch_lti(void* d_temp, std::size_t& temp_bytes, System const& sys, T const* x, T* y,
                         layout const& lay, T const* zi, T* zf, std::int64_t state_stride,
                         cudaStream_t stream) {
  constexpr int K = System::K;
  if (lay.n < 0 || lay.count < 0) return cudaErrorInvalidValue;
  bool const lanes = lti_runs_lanes<T, K>(lay);
  if (lay.n == 0 || lay.count == 0 || lanes) {
    if (d_temp == nullptr) {
      temp_bytes = 1;
      return cudaSuccess;
    }
    if (lay.count == 0) return cudaSuccess;
    if (lay.n == 0) {
      if (!zf) return cudaSuccess;
      std::int64_t const blocks = (lay.count * K + 255) / 256;
      lti_state_copy_kernel<T><<<static_cast<unsigned>(blocks < 1024 ? blocks : 1024), 256, 0, stream>>>(
          zi, zf, lay.count, K, state_stride);
      return cudaGetLastError();
    }
    lti_lanes_params<T, System> p{sys, x, y, lay, zi, zf, state_stride};
    lti_lanes_kernel<T, System><<<static_cast<unsigned>((lay.count + 127) / 128), 128, 0, stream>>>(p);
    return cudaGetLastError();
  }
  if constexpr (!std::is_void_v<Policy>) {
    return launch_lti<T, Policy>(d_temp, temp_bytes, sys, x, y, lay, zi, zf, state_stride, stream);
  } else {
    using forgetting = typename lti_policy<T, K>::forgetting;
    using long_memory = typename lti_policy<T, K>::long_memory;
    if (d_temp == nullptr) {  // enough for either shape (the choice needs the powers)
      std::size_t a = 0, b = 0;
      cudaError_t e = launch_lti<T, forgetting>(nullptr, a, sys, x, y, lay, zi, zf, state_stride, stream);
      if (e == cudaSuccess)
        e = launch_lti<T, long_memory>(nullptr, b, sys, x, y, lay, zi, zf, state_stride, stream);
      temp_bytes = a > b ? a : b;
      return e;
    }
    constexpr int log_forgetting = lti_log2(forgetting::block * forgetting::items);
    lti_power_chain<K> const& chain = cached_power_chain<K>(sys, lti_power_top<T, K>());
    if (chain.p[log_forgetting].template zero_in<T>())
      return launch_lti<T, forgetting>(d_temp, temp_bytes, sys, x, y, lay, zi, zf, state_stride, stream,
                                       &chain);
    return launch_lti<T, long_memory>(d_temp, temp_bytes, sys, x, y, lay, zi, zf, state_stride, stream,
                                      &chain);
  }
}

}  // namespace recur::kernels
