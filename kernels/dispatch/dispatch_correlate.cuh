#pragma once
// Device-level lagged correlations (correlate_lags, include/recur/filter.hpp),
// header-only, CUB's calling convention (null temp: size only):
//
//   recur::device::correlate_lags<float>(temp, bytes, u, v, nv, c, lags, lay, stream);
//
// c[j * lags + k] = sum over the sequences and elements i of u[i] v[j][i - k]
// (elements i - k < 0 count as zero), j < nv <= 2, k < lags <= 9: the
// coefficient gradients of lfilter of orders 0-8. u, v[j] (device) follow
// `lay`, whose element stride may be negative (a reverse view); v is a host
// array of nv pointers; c (device) receives nv * lags values.
//
// Two kernels: agent_correlate.cuh's tiles, each writing its partial sums
// to temporary storage (tiles * nv * lags values), then one block per
// output adding the tiles' partials in a fixed order (a strided sum per
// thread, a shuffle tree, the warps in order). Nothing depends on timing,
// so the result is bitwise reproducible run to run.
//
// Tile shapes, first that applies:
//   long     elements adjacent in memory (element stride 1 or -1) and
//            sequences of at least half a long tile: one sequence per tile
//   rows     otherwise: 32 sequences per tile, loaded along whichever of
//            elements and sequences lies closer in memory

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include <recur/layout/layout.hpp>
#include "../agent/agent_correlate.cuh"
#include "../thread/thread_ops.cuh"

namespace recur::kernels {

inline constexpr int correlate_max_lags = 9, correlate_max_arrays = 2;

// Untuned: 256 threads, runs of 32 bytes per thread (a long tile of 8 KB per
// array, as agent_lti's f32 tiles hold).
template <class T, int Seqs>
using correlate_agent =
    agent_correlate<T, 256, 32 / sizeof(T), Seqs, correlate_max_lags, correlate_max_arrays>;

// c[o] = the sum of partial[o * tiles + t] over t, in a fixed order; one
// block per output.
template <class T, int Block>
__global__ void __launch_bounds__(Block) correlate_reduce_kernel(T const* partial, std::int64_t tiles, T* c) {
  __shared__ T warp_sum[Block / 32];
  int const tid = int(threadIdx.x), lane = tid % 32, warp = tid / 32;
  T const* row = partial + std::int64_t(blockIdx.x) * tiles;
  T v = T(0);
  for (std::int64_t t = tid; t < tiles; t += Block) v += row[t];
#pragma unroll
  for (int d = 16; d > 0; d /= 2) v += shfl_down(v, d);
  if (lane == 0) warp_sum[warp] = v;
  __syncthreads();
  if (tid == 0) {
    T sum = warp_sum[0];
#pragma unroll
    for (int w = 1; w < Block / 32; ++w) sum += warp_sum[w];
    c[blockIdx.x] = sum;
  }
}

template <class T, int Seqs>
cudaError_t launch_correlate(void* d_temp, std::size_t& temp_bytes, T const* u, T const* const* v, int nv,
                             T* c, int lags, layout const& lay, cudaStream_t stream) {
  using agent = correlate_agent<T, Seqs>;
  std::int64_t const along = (lay.n + agent::span - 1) / agent::span;
  std::int64_t const tiles = (lay.count + Seqs - 1) / Seqs * along;
  if (tiles > 0x7fffffff) return cudaErrorInvalidValue;
  std::size_t const bytes = static_cast<std::size_t>(tiles * nv * lags) * sizeof(T);
  if (d_temp == nullptr) {
    temp_bytes = bytes;
    return cudaSuccess;
  }
  if (temp_bytes < bytes) return cudaErrorInvalidValue;
  typename agent::params p{};
  p.u = u;
  for (int j = 0; j < nv; ++j) p.v[j] = v[j];
  p.nv = nv;
  p.lags = lags;
  p.lay = lay;
  std::int64_t const es = lay.element_stride < 0 ? -lay.element_stride : lay.element_stride;
  p.sequences_adjacent = lay.count > 1 && lay.batch_stride < es;
  p.tiles_along = along;
  p.tiles = tiles;
  p.partial = static_cast<T*>(d_temp);
  correlate_tiles_kernel<agent, typename agent::params>
      <<<static_cast<unsigned>(tiles), agent::block_threads, 0, stream>>>(p);
  if (cudaError_t const e = cudaGetLastError(); e != cudaSuccess) return e;
  correlate_reduce_kernel<T, 256><<<static_cast<unsigned>(nv * lags), 256, 0, stream>>>(p.partial, tiles, c);
  return cudaGetLastError();
}

}  // namespace recur::kernels

namespace recur::device {

// Errors: cudaErrorInvalidValue for nv outside [0, 2], lags outside [0, 9],
// a negative size, too many tiles for one grid, or temporary storage
// smaller than asked for. An empty batch sets c to zeros; nv or lags 0
// writes nothing.
template <class T>
cudaError_t correlate_lags(void* d_temp, std::size_t& temp_bytes, T const* u, T const* const* v, int nv, T* c,
                           int lags, layout const& lay, cudaStream_t stream = 0) {
  using namespace recur::kernels;
  if (nv < 0 || nv > correlate_max_arrays || lags < 0 || lags > correlate_max_lags)
    return cudaErrorInvalidValue;
  if (lay.n < 0 || lay.count < 0) return cudaErrorInvalidValue;
  if (nv == 0 || lags == 0 || lay.n == 0 || lay.count == 0) {
    if (d_temp == nullptr) {
      temp_bytes = 1;
      return cudaSuccess;
    }
    if (nv == 0 || lags == 0) return cudaSuccess;
    return cudaMemsetAsync(c, 0, static_cast<std::size_t>(nv * lags) * sizeof(T), stream);
  }
  bool const unit = lay.element_stride == 1 || lay.element_stride == -1;
  if (unit && 2 * lay.n >= correlate_agent<T, 1>::span)
    return launch_correlate<T, 1>(d_temp, temp_bytes, u, v, nv, c, lags, lay, stream);
  return launch_correlate<T, 32>(d_temp, temp_bytes, u, v, nv, c, lags, lay, stream);
}

}  // namespace recur::device
