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
// or exclusive, with an optional initial value, one for all sequences or one
// per sequence (required for exclusive scans). One pass over memory; results are bitwise reproducible
// run to run for any operator, floating-point sums included (the look-back
// folds in value space, lookback.cuh). Nothing is synchronised or
// allocated here; every launch is graph-capturable.
//
// recur::device::reduce(temp, bytes, in, totals, lay, op, stream) gives each
// sequence's x_0 op x_1 op ... op x_(n-1) under the same operators (it need
// not commute either): the scan agent with nothing written but the totals,
// so one read of the data.

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <cuda_runtime.h>

#include <recur/layout/layout.hpp>
#include <recur/scan.hpp>
#include "../agent/agent_scan.cuh"
#include "../tuning/tuning_scan.cuh"

namespace recur::device {

// The options of recur::scan (include/recur/scan.hpp); inits, where given,
// is device memory.
template <class T>
using scan_options = recur::scan_options<T>;

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
  T const* inits;  // per sequence, in place of init where given

  __device__ __forceinline__ T init_of(std::int64_t seq) const { return inits ? inits[seq] : init; }
  __device__ __forceinline__ value_type load(std::int64_t seq, std::int64_t i) const {
    T x = in[lay.offset(i, seq)];
    if (i == 0 && has_init) x = op(init_of(seq), x);
    if constexpr (Segmented)
      return {x, i == 0 ? 1u : 0u};
    else
      return x;
  }
  __device__ __forceinline__ value_type start_value(std::int64_t seq) const {
    if constexpr (Segmented)
      return {init_of(seq), 1u};
    else
      return init_of(seq);
  }
  __device__ __forceinline__ void store(std::int64_t seq, std::int64_t i, value_type const& v) const {
    if constexpr (Segmented)
      out[lay.offset(i, seq)] = v.value;
    else
      out[lay.offset(i, seq)] = v;
  }
};

// Sizes the temporary storage (d_temp null) or launches the scan agent over
// `total` elements described by `acc` (an Access of agent_scan.cuh).
template <class V, class VOp, class Access, class Policy>
cudaError_t launch_scan(void* d_temp, std::size_t& temp_bytes, std::int64_t total, Access const& acc,
                        VOp const& op, cudaStream_t stream) {
  using agent = agent_scan<V, VOp, Access, Policy::block, Policy::items, Policy::lookback_depth,
                           Policy::lookback_words, Policy::min_blocks>;
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
                                  policy::lookback_words, policy::min_blocks>;
    auto const aligned = [](void const* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
    if constexpr (flat_agent::vector_path) {
      if (lay.count == 1 && (opt.inits == nullptr || !opt.has_init) &&
          (lay.element_stride == 1 || lay.n <= 1) && aligned(in) && aligned(out))
        return launch_scan<V, vop, flat_access, policy>(
            d_temp, temp_bytes, lay.n,
            flat_access{in, out, lay, op, opt.exclusive, opt.has_init, opt.init, nullptr}, op_v, stream);
    }
  }
  access const acc{
      in, out, lay, op, opt.exclusive, opt.has_init, opt.init, opt.has_init ? opt.inits : nullptr};
  return launch_scan<V, vop, access, policy>(d_temp, temp_bytes, lay.n * lay.count, acc, op_v, stream);
}

// A reduction: the inclusive scan's access with every output dropped but
// each sequence's last, stored to totals[seq].
template <class T, class Op, bool Segmented>
struct reduce_access : scan_access<T, Op, Segmented> {
  using base = scan_access<T, Op, Segmented>;
  T* totals;
  __device__ __forceinline__ void store(std::int64_t seq, std::int64_t i,
                                        typename base::value_type const& v) const {
    if (i != this->lay.n - 1) return;
    if constexpr (Segmented)
      totals[seq] = v.value;
    else
      totals[seq] = v;
  }
};

template <class T, class Op, bool Segmented>
cudaError_t dispatch_reduce(void* d_temp, std::size_t& temp_bytes, T const* in, T* totals, layout const& lay,
                            Op op, cudaStream_t stream) {
  using access = reduce_access<T, Op, Segmented>;
  using V = typename access::value_type;
  using vop = std::conditional_t<Segmented, segmented_op<Op>, Op>;
  vop const op_v = [&] {
    if constexpr (Segmented)
      return vop{op};
    else
      return op;
  }();
  access const acc{{in, nullptr, lay, op, false, false, T{}, nullptr}, totals};
  return launch_scan<V, vop, access, scan_policy<V>>(d_temp, temp_bytes, lay.n * lay.count, acc, op_v,
                                                     stream);
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

// totals: device memory of lay.count values; a sequence of n == 0 leaves
// its total unwritten. Errors as scan's.
template <class T, class Op>
cudaError_t reduce(void* d_temp, std::size_t& temp_bytes, T const* in, T* totals, layout const& lay, Op op,
                   cudaStream_t stream = 0) {
  if (lay.n < 0 || lay.count < 0) return cudaErrorInvalidValue;
  if (lay.count > 1)
    return kernels::dispatch_reduce<T, Op, true>(d_temp, temp_bytes, in, totals, lay, op, stream);
  return kernels::dispatch_reduce<T, Op, false>(d_temp, temp_bytes, in, totals, lay, op, stream);
}

}  // namespace recur::device
