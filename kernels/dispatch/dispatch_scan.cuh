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
  __device__ __forceinline__ segmented<T> fold(segmented<T> const& acc, View const& stack,
                                               int count) const requires requires(T const* p) {
    op.fold(acc.value, scan_stack_view<T>{p}, count);
  }
  {
    struct inner_view {
      View const& outer;
      __device__ __forceinline__ T const& operator()(int i) const { return outer(i).value; }
    };
    return {op.fold(acc.value, inner_view{stack}, count), acc.start};
  }
};

// Flat: one sequence of unit stride, in and out 16-byte aligned (the agent's
// vector path moves whole tiles in 16-byte chunks through `in` and `out`).
template <class T, class Op, bool Segmented, bool Flat = false>
struct scan_access {
  using value_type = std::conditional_t<Segmented, segmented<T>, T>;
  static constexpr bool flat = Flat && !Segmented;
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

// Tile shape by value size: 512 threads (256 for 25 to 36 bytes), 16 KB
// (4-byte values) to 72 KB (3x3 f32 matrices) per tile, look-back rounds of 32 (4-byte values) or 64
// predecessors, and a floor on blocks per SM (a register cap). From
// bench/tune_scan on the H100 (bench/results/h100-tune-scan.log; f32 N =
// 2^28, affine 2^27, after the 16-byte vector path of 2026-11-23):
// - f32 sum: 512 x 16 at 4 blocks per SM, 1 status word per lane: 75.1% of
//   copy, 0.92x CUB InclusiveSum (2 words: 73.2%; 3 blocks: 70.8%; no floor:
//   62-63%; 256 x 16 at 8: 71.3%; 256 x 32: 72.1%);
// - affine f32 (8 bytes): 512 x 8 at 3 blocks per SM: 78.0% (no floor or 2:
//   69%; 256 x 8 at 6: 76.7%);
// - values of 9 to 24 bytes: 512 x 4 (16 bytes) or 512 x 2 at 2 blocks per
//   SM (64 registers); larger ones uncapped (a segmented 3x3 product spilled
//   668 bytes under the 64-register cap);
// - values of 25 to 36 bytes (3x3 f32 matrices): 256 x 8 at 2 blocks per SM
//   (128 registers: the vector path reads a run in parts of 4 matrices),
//   one look-back word: 81.4% of copy, 5.25x CUB InclusiveScan, with the
//   fence-free status records (bench/results/h100-tune-scan-tags.log;
//   uncapped, 198 registers and 1 block per SM: 65.1%; 128 x 16 at 2: 79.5%;
//   192 x 8 at 3: 75.2%). Before the records (h100-tune-scan-parts.log):
//   69.4% at 2 blocks per SM, 59.5% at 1, where ncu had the other warps
//   waiting at the barrier for warp 0's look-back 40% of their cycles. More
//   items per thread amortise the block scan's shuffles and products of
//   9-word values.
template <class V>
struct scan_policy {
  static constexpr bool wide = sizeof(V) > 24 && sizeof(V) <= 36;
  static constexpr int block = wide ? 256 : 512;
  static constexpr int items = sizeof(V) <= 4 ? 16 : sizeof(V) <= 8 ? 8 : sizeof(V) <= 16 ? 4 : wide ? 8 : 2;
  static constexpr int lookback_depth = 256, lookback_words = sizeof(V) <= 4 || wide ? 1 : 2;
  static constexpr int min_blocks = sizeof(V) <= 4 ? 4 : sizeof(V) <= 8 ? 3 : sizeof(V) <= 36 ? 2 : 1;
};
template <class Policy>
constexpr int scan_min_blocks() {
  if constexpr (requires { Policy::min_blocks; })
    return Policy::min_blocks;
  else
    return 1;
}

// Sizes the temporary storage (d_temp null) or launches the scan agent over
// `total` elements described by `acc` (an Access of agent_scan.cuh).
template <class V, class VOp, class Access, class Policy>
cudaError_t launch_scan(void* d_temp, std::size_t& temp_bytes, std::int64_t total, Access const& acc,
                        VOp const& op, cudaStream_t stream) {
  using agent = agent_scan<V, VOp, Access, Policy::block, Policy::items, Policy::lookback_depth,
                           Policy::lookback_words, scan_min_blocks<Policy>()>;
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
  kernel<<<static_cast<unsigned>(tiles), Policy::block, smem, stream>>>(acc, op,
                                                                        status::carve(d_temp, tiles));
  return cudaGetLastError();
}

template <class T, class Op, bool Segmented, class Policy = void>
cudaError_t dispatch_scan(void* d_temp, std::size_t& temp_bytes, T const* in, T* out, layout const& lay,
                          Op op, device::scan_options<T> const& opt, cudaStream_t stream) {
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
  if constexpr (!Segmented) {
    // One sequence of unit stride, 16-byte aligned: the agent's vector path
    // (where the tile shape allows it; the temporary storage is the same).
    using flat_access = scan_access<T, Op, false, true>;
    using flat_agent = agent_scan<V, vop, flat_access, policy::block, policy::items, policy::lookback_depth,
                                  policy::lookback_words, scan_min_blocks<policy>()>;
    auto const aligned = [](void const* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
    if constexpr (flat_agent::vector_path) {
      if (lay.count == 1 && (lay.element_stride == 1 || lay.n <= 1) && aligned(in) && aligned(out))
        return launch_scan<V, vop, flat_access, policy>(
            d_temp, temp_bytes, lay.n, flat_access{in, out, lay, op, opt.exclusive, opt.has_init, opt.init},
            op_v, stream);
    }
  }
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
