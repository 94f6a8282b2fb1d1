#pragma once
// Device-level integer DPCM codecs (header-only, CUB's calling convention: a
// null temp asks for the size), the semantics of include/recur/reference/
// dpcm.hpp bit for bit:
//
//   recur::device::dpcm_encode<std::int16_t>(temp, bytes, c, shift, x, e, lay, init, stream);
//   recur::device::dpcm_decode<std::int16_t>(temp, bytes, c, shift, e, x, lay, init, stream);
//
// Samples S: int16_t, int32_t or uint8_t; c the predictor's coefficients
// c_1 .. c_k (host array, k <= 8, sum |c_j| <= 2^31), p_i = (sum_j c_j
// x_(i-j)) >> shift exact in int64, e_i = wrap(x_i - p_i), x_i = wrap(e_i +
// p_i), wrap the reduction modulo 2^bits into S; init: k samples per sequence,
// newest first (x_(-1) at init[s k]), or null (zeros). x, e and init are
// device memory; the output may be the input (in place).
//
// How:
// - encode (any shift): a stencil, one thread per sample. In place, the input
//   is first copied to the temporary storage (a sample's residual must not
//   overwrite a later sample's history).
// - decode with shift 0: x_i = e_i + sum_j c_j x_(i-j) is linear over the
//   integers, and reducing modulo 2^32 commutes with every step, so it runs
//   as the segmented single-pass scan of the affine steps x -> C x + (e_i, 0,
//   ...) on the k-vector state in uint32_t arithmetic (wrap-around), C the
//   companion matrix of c mod 2^32; a sequence's init is folded into its first
//   step (a constant map). Since 2^bits divides 2^32, the stored x_i =
//   wrap(state_0) equals the reference exactly.
// - decode with a shift: the floor of the shifted prediction is not linear,
//   so each sequence runs sequentially on one thread (fast for many
//   sequences, e.g. image rows; a few long ones run at a thread's pace).
// Errors: cudaErrorInvalidValue for negative sizes, shift outside [0, 62],
// too little temporary storage; cudaErrorNotSupported for k > 8.

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include <cuda_runtime.h>

#include <recur/layout/layout.hpp>
#include <recur/ops/matrix.hpp>

#include "dispatch_chain.cuh"
#include "dispatch_lti.cuh"  // with_order

namespace recur::kernels {

inline constexpr int dpcm_int_max_order = 8;

// The sample type, erased so that one kernel serves every S.
enum class dpcm_sample_kind : int { i16, i32, u8 };

template <class S>
constexpr dpcm_sample_kind dpcm_kind_of() {
  if constexpr (std::is_same_v<S, std::int16_t>)
    return dpcm_sample_kind::i16;
  else if constexpr (std::is_same_v<S, std::int32_t>)
    return dpcm_sample_kind::i32;
  else
    return dpcm_sample_kind::u8;
}

struct dpcm_int_params {
  void const* in;
  void* out;
  layout lay;
  void const* init;  // k samples per sequence, newest first, or null
  dpcm_sample_kind kind;
  int k;
  int shift;
  std::int64_t c[dpcm_int_max_order];

  __host__ __device__ std::int64_t load(void const* p, std::int64_t o) const {
    switch (kind) {
      case dpcm_sample_kind::i16:
        return static_cast<std::int16_t const*>(p)[o];
      case dpcm_sample_kind::i32:
        return static_cast<std::int32_t const*>(p)[o];
      default:
        return static_cast<std::uint8_t const*>(p)[o];
    }
  }
  // v reduced modulo 2^bits into the sample type (modular conversion).
  __device__ void store(std::int64_t o, std::int64_t v) const {
    switch (kind) {
      case dpcm_sample_kind::i16:
        static_cast<std::int16_t*>(out)[o] = static_cast<std::int16_t>(v);
        break;
      case dpcm_sample_kind::i32:
        static_cast<std::int32_t*>(out)[o] = static_cast<std::int32_t>(v);
        break;
      default:
        static_cast<std::uint8_t*>(out)[o] = static_cast<std::uint8_t>(v);
    }
  }
  // x_(i - j) of sequence seq for i - j < 0: from init, newest first.
  __device__ std::int64_t before(std::int64_t seq, std::int64_t m) const {  // m = j - i - 1 >= 0
    return init ? load(init, seq * k + m) : 0;
  }
};

// Encode (any shift), or a decode of order 0 (x = e): one thread per sample.
template <int K>
__global__ void dpcm_int_stencil_kernel(dpcm_int_params p, bool encode) {
  std::int64_t const n = p.lay.n, total = n * p.lay.count;
  for (std::int64_t f = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; f < total;
       f += std::int64_t(gridDim.x) * blockDim.x) {
    std::int64_t const seq = f / n, i = f - seq * n;
    std::int64_t acc = 0;
#pragma unroll
    for (int j = 1; j <= K; ++j) {
      std::int64_t const h = i - j >= 0 ? p.load(p.in, p.lay.offset(i - j, seq)) : p.before(seq, j - i - 1);
      acc += p.c[j - 1] * h;
    }
    std::int64_t const xi = p.load(p.in, p.lay.offset(i, seq));
    std::int64_t const pred = acc >> p.shift;
    p.store(p.lay.offset(i, seq), encode ? xi - pred : xi + pred);
  }
}

// Decode with a shift: one thread per sequence, the reference's loop.
template <int K>
__global__ void dpcm_int_sequential_kernel(dpcm_int_params p) {
  std::int64_t const seq = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (seq >= p.lay.count) return;
  std::int64_t h[K];  // x_(i-1) .. x_(i-K), as the sample type's values
#pragma unroll
  for (int j = 0; j < K; ++j) h[j] = p.before(seq, j);
  for (std::int64_t i = 0; i < p.lay.n; ++i) {
    std::int64_t acc = 0;
#pragma unroll
    for (int j = 0; j < K; ++j) acc += p.c[j] * h[j];
    std::int64_t const o = p.lay.offset(i, seq);
    p.store(o, p.load(p.in, o) + (acc >> p.shift));
    std::int64_t const xi = p.load(p.out, o);  // wrapped, as the reference's history holds it
#pragma unroll
    for (int j = K - 1; j > 0; --j) h[j] = h[j - 1];
    h[0] = xi;
  }
}

// Decode with shift 0: the scan's access (see the top).
template <int K>
struct dpcm_int_scan_access {
  using step = ops::affine_matrix<std::uint32_t, K>;
  using value_type = segmented<step>;
  dpcm_int_params p;
  layout lay;
  bool exclusive = false;

  __device__ __forceinline__ value_type load(std::int64_t seq, std::int64_t i) const {
    step s;
#pragma unroll
    for (int r = 0; r < K; ++r) {
#pragma unroll
      for (int c = 0; c < K; ++c)
        s.M.m[r][c] = r == 0 ? static_cast<std::uint32_t>(p.c[c]) : std::uint32_t(c == r - 1 ? 1 : 0);
      s.u[r] = 0;
    }
    s.u[0] = static_cast<std::uint32_t>(p.load(p.in, lay.offset(i, seq)));
    if (i != 0) return {s, 0u};
    // The sequence start: the constant map to M h + u, h the initial history
    // (K may exceed the order p.k: the extra coefficients and history are 0).
    std::uint32_t h[K];
#pragma unroll
    for (int j = 0; j < K; ++j) h[j] = j < p.k ? static_cast<std::uint32_t>(p.before(seq, j)) : 0u;
#pragma unroll
    for (int r = 0; r < K; ++r) {
      std::uint32_t acc = s.u[r];
#pragma unroll
      for (int c = 0; c < K; ++c) acc += s.M.m[r][c] * h[c];
      s.u[r] = acc;
    }
#pragma unroll
    for (int r = 0; r < K; ++r)
#pragma unroll
      for (int c = 0; c < K; ++c) s.M.m[r][c] = 0;
    return {s, 1u};
  }
  __device__ __forceinline__ value_type start_value(std::int64_t) const {
    return {ops::affine_matrix_identity<std::uint32_t, K>(), 1u};
  }
  __device__ __forceinline__ void store(std::int64_t seq, std::int64_t i, value_type const& v) const {
    p.store(lay.offset(i, seq), static_cast<std::int64_t>(v.value.u[0]));
  }
};

// Elements a layout spans, gaps included (positive strides).
inline std::int64_t dpcm_extent(layout const& lay) {
  return (lay.n - 1) * lay.element_stride + (lay.count - 1) * lay.batch_stride + 1;
}

inline cudaError_t dpcm_int(bool encode, void* d_temp, std::size_t& temp_bytes, dpcm_int_params p,
                            std::size_t sample_bytes, cudaStream_t stream) {
  layout const& lay = p.lay;
  if (lay.n < 0 || lay.count < 0 || p.shift < 0 || p.shift > 62 || p.k < 0) return cudaErrorInvalidValue;
  if (p.k > dpcm_int_max_order) return cudaErrorNotSupported;
  bool const empty = lay.n == 0 || lay.count == 0;
  std::int64_t const total = lay.n * lay.count;
  unsigned const grid = static_cast<unsigned>(total / 256 + 1 < 8192 ? total / 256 + 1 : 8192);
  auto with_k = [&](auto&& f) { return with_order<dpcm_int_max_order>(p.k, f); };

  if (encode || p.k == 0) {  // the stencil; in place through a copy of the input
    bool const copy = p.in == p.out && p.k > 0 && !empty;
    std::size_t const need = copy ? static_cast<std::size_t>(dpcm_extent(lay)) * sample_bytes : 1;
    if (d_temp == nullptr) {
      temp_bytes = need;
      return cudaSuccess;
    }
    if (temp_bytes < need) return cudaErrorInvalidValue;
    if (empty) return cudaSuccess;
    if (copy) {
      cudaError_t const e = cudaMemcpyAsync(d_temp, p.in, need, cudaMemcpyDeviceToDevice, stream);
      if (e != cudaSuccess) return e;
      p.in = d_temp;
    }
    return with_k([&](auto kk) {
      dpcm_int_stencil_kernel<decltype(kk)::value><<<grid, 256, 0, stream>>>(p, encode);
      return cudaGetLastError();
    });
  }
  if (p.shift > 0) {  // sequential per sequence
    if (d_temp == nullptr) {
      temp_bytes = 1;
      return cudaSuccess;
    }
    if (empty) return cudaSuccess;
    return with_k([&](auto kk) {
      if constexpr (decltype(kk)::value == 0) {
        return cudaErrorInvalidValue;  // k == 0 took the stencil above
      } else {
        dpcm_int_sequential_kernel<decltype(kk)::value>
            <<<static_cast<unsigned>((lay.count + 127) / 128), 128, 0, stream>>>(p);
        return cudaGetLastError();
      }
    });
  }
  // Shift 0: the scan.
  return with_k([&](auto kk) -> cudaError_t {
    constexpr int K = decltype(kk)::value;
    if constexpr (K == 0) {
      return cudaErrorInvalidValue;  // the stencil, above
    } else {
      if (empty) {
        if (d_temp == nullptr) temp_bytes = 1;
        return cudaSuccess;
      }
      return dispatch_chain_scan(d_temp, temp_bytes, dpcm_int_scan_access<K>{p, lay},
                                 ops::affine_matrix_compose{}, stream);
    }
  });
}

template <class S>
dpcm_int_params make_dpcm_int_params(std::span<std::int64_t const> c, int shift, S const* in, S* out,
                                     layout const& lay, S const* init) {
  dpcm_int_params p{};
  p.in = in;
  p.out = out;
  p.lay = lay;
  p.init = c.empty() ? nullptr : init;
  p.kind = dpcm_kind_of<S>();
  p.k =
      static_cast<int>(c.size() < 1000 ? c.size() : 1000);  // > 8 is refused; the value only needs to say so
  p.shift = shift;
  for (std::size_t j = 0; j < c.size() && j < dpcm_int_max_order; ++j) p.c[j] = c[j];
  return p;
}

template <class S>
concept dpcm_int_sample =
    std::is_same_v<S, std::int16_t> || std::is_same_v<S, std::int32_t> || std::is_same_v<S, std::uint8_t>;

}  // namespace recur::kernels

namespace recur::device {

template <class S>
requires kernels::dpcm_int_sample<S> cudaError_t dpcm_encode(void* d_temp, std::size_t& temp_bytes,
                                                             std::span<std::int64_t const> c, int shift,
                                                             S const* x, S* e, layout const& lay,
                                                             S const* init = nullptr,
                                                             cudaStream_t stream = 0) {
  return kernels::dpcm_int(true, d_temp, temp_bytes,
                           kernels::make_dpcm_int_params<S>(c, shift, x, e, lay, init), sizeof(S), stream);
}

template <class S>
requires kernels::dpcm_int_sample<S> cudaError_t dpcm_decode(void* d_temp, std::size_t& temp_bytes,
                                                             std::span<std::int64_t const> c, int shift,
                                                             S const* e, S* x, layout const& lay,
                                                             S const* init = nullptr,
                                                             cudaStream_t stream = 0) {
  return kernels::dpcm_int(false, d_temp, temp_bytes,
                           kernels::make_dpcm_int_params<S>(c, shift, e, x, lay, init), sizeof(S), stream);
}

}  // namespace recur::device
