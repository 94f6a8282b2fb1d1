#pragma once
// Device-level scan over any associative operator, header-only, CUB's calling
// convention:
//
//   std::size_t bytes = 0;
//   recur::device::scan(nullptr, bytes, in, out, lay, op, opts, stream);  // size only
//   cudaMallocAsync(&temp, bytes, stream);
//   recur::device::scan(temp, bytes, in, out, lay, op, opts, stream);     // enqueue
//
// in and out follow `lay` (recur::layout: one sequence, or a batch of
// sequences each scanned on its own, contiguous, interleaved or strided);
// out may equal in. The operator must be associative; it need not commute
// (op(l, r) means "l first, then r", the convention of recur::ops). Inclusive
// or exclusive, with an optional initial value per sequence (required for
// exclusive scans). One pass over memory; results are bitwise reproducible
// run to run for any operator, floating-point sums included (the look-back
// folds in value space, scan_tile_status.cuh). Nothing is synchronised or
// allocated here; every launch is graph-capturable.

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <cuda_runtime.h>

#include <recur/layout/layout.hpp>
#include "../agent/agent_scan.cuh"

namespace recur::device {

template <class T>
struct scan_options {
  bool exclusive = false;  // out_i = init op x_0 op ... op x_(i-1); out_0 = init
  bool has_init = false;   // an initial value; required when exclusive
  T init{};
};

}  // namespace recur::device

namespace recur::kernels {

// A value of a batched scan: the scan resets at a segment start.
template <class T>
struct segmented {
  T value;
  std::uint32_t start;  // 1 at the first element of a sequence
};

template <class Op>
struct segmented_op {
  Op op;
  template <class T>
  __device__ __forceinline__ segmented<T> operator()(segmented<T> const& l, segmented<T> const& r) const {
    return r.start ? r : segmented<T>{op(l.value, r.value), l.start};
  }
  template <class T>
  __device__ __forceinline__ bool resets(segmented<T> const& v) const {
    return v.start != 0;
  }
  // A walk's stack holds no segment start (one would have ended the walk),
  // so folding it is the inner operator's fold.
  template <class T, class View>
  __device__ __forceinline__ segmented<T> fold(segmented<T> const& acc, View const& stack, int count) const
    requires requires(T const* p) { op.fold(acc.value, scan_stack_view<T>{p}, count); }
  {
    struct inner_view {
      View const& outer;
      __device__ __forceinline__ T const& operator()(int i) const { return outer(i).value; }
    };
    return {op.fold(acc.value, inner_view{stack}, count), acc.start};
  }
};

template <class T, class Op, bool Segmented>
struct scan_access {
  using value_type = std::conditional_t<Segmented, segmented<T>, T>;
  T const* in;
  T* out;
  layout lay;
  Op op;
  bool exclusive;
  bool has_init;
  T init;

  __device__ __forceinline__ value_type load(std::int64_t seq, std::int64_t i) const {
    T x = in[lay.offset(i, seq)];
    if (i == 0 && has_init) x = op(init, x);
    if constexpr (Segmented)
      return {x, i == 0 ? 1u : 0u};
    else
      return x;
  }
  __device__ __forceinline__ value_type start_value(std::int64_t) const {
    if constexpr (Segmented)
      return {init, 1u};
    else
      return init;
  }
  __device__ __forceinline__ void store(std::int64_t seq, std::int64_t i, value_type const& v) const {
    if constexpr (Segmented)
      out[lay.offset(i, seq)] = v.value;
    else
      out[lay.offset(i, seq)] = v;
  }
};

// Tile shape by value size: 512 threads, 16 KB (4-byte values) to 36 KB
// (3x3 f32 matrices) per tile, look-back rounds of 64 predecessors. Chosen on
// the H100 with bench/tune_scan (2026-11-22): f32 sum 512x16 41% of copy
// (256x16: 37%, 256x32: 24%, 128x32: 27%; windows of 32/64/128 within 2
// points); affine f32 512x8 61% (256x8: 55%, 256x16: 50%). The walk's tile
// rate, not the block's work, bounds it; doc/performance.md.
template <class V>
struct scan_policy {
  static constexpr int block = 512;
  static constexpr int items = sizeof(V) <= 4 ? 16 : sizeof(V) <= 8 ? 8 : sizeof(V) <= 16 ? 4 : 2;
  static constexpr int lookback_depth = 256, lookback_words = 2;
};

// Sizes the temporary storage (d_temp null) or launches the scan agent over
// `total` elements described by `acc` (an Access of agent_scan.cuh).
template <class V, class VOp, class Access, class Policy>
cudaError_t launch_scan(void* d_temp, std::size_t& temp_bytes, std::int64_t total, Access const& acc,
                        VOp const& op, cudaStream_t stream) {
  using agent = agent_scan<V, VOp, Access, Policy::block, Policy::items, Policy::lookback_depth,
                           Policy::lookback_words>;
  using status = scan_tile_status<V>;
  std::int64_t const tiles = agent::tiles(total);
  if (tiles > 0x7fffffffLL) return cudaErrorInvalidValue;
  std::size_t const need = status::bytes(tiles);
  if (d_temp == nullptr) {
    temp_bytes = need;
    return cudaSuccess;
  }
  if (temp_bytes < need) return cudaErrorInvalidValue;
  if (total == 0) return cudaSuccess;
  cudaError_t e = cudaMemsetAsync(d_temp, status::fill, need, stream);
  if (e != cudaSuccess) return e;
  constexpr int smem = sizeof(typename agent::temp_storage);
  auto const kernel = scan_kernel<agent, V, VOp, Access>;
  if constexpr (smem > 48 * 1024) {
    e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (e != cudaSuccess) return e;
  }
  kernel<<<static_cast<unsigned>(tiles), Policy::block, smem, stream>>>(acc, op, status::carve(d_temp, tiles));
  return cudaGetLastError();
}

template <class T, class Op, bool Segmented, class Policy = void>
cudaError_t dispatch_scan(void* d_temp, std::size_t& temp_bytes, T const* in, T* out, layout const& lay, Op op,
                          device::scan_options<T> const& opt, cudaStream_t stream) {
  using access = scan_access<T, Op, Segmented>;
  using V = typename access::value_type;
  using vop = std::conditional_t<Segmented, segmented_op<Op>, Op>;
  using policy = std::conditional_t<std::is_void_v<Policy>, scan_policy<V>, Policy>;
  vop const op_v = [&] {
    if constexpr (Segmented)
      return vop{op};
    else
      return op;
  }();
  return launch_scan<V, vop, access, policy>(d_temp, temp_bytes, lay.n * lay.count,
                                             access{in, out, lay, op, opt.exclusive, opt.has_init, opt.init},
                                             op_v, stream);
}

}  // namespace recur::kernels

namespace recur::device {

// Errors: cudaErrorInvalidValue for an exclusive scan without an initial
// value, a negative size, or temporary storage smaller than asked for.
template <class T, class Op>
cudaError_t scan(void* d_temp, std::size_t& temp_bytes, T const* in, T* out, layout const& lay, Op op,
                 scan_options<T> const& opt = {}, cudaStream_t stream = 0) {
  if (opt.exclusive && !opt.has_init) return cudaErrorInvalidValue;
  if (lay.n < 0 || lay.count < 0) return cudaErrorInvalidValue;
  if (lay.count > 1)
    return kernels::dispatch_scan<T, Op, true>(d_temp, temp_bytes, in, out, lay, op, opt, stream);
  return kernels::dispatch_scan<T, Op, false>(d_temp, temp_bytes, in, out, lay, op, opt, stream);
}

}  // namespace recur::device
