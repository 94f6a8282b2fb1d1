#pragma once
// Device-level IIR filtering with scipy.signal.lfilter's semantics, header-
// only, CUB's calling convention (null temp: size only):
//
//   recur::device::lfilter<float>(temp, bytes, b, a, x, y, lay, zi, zf, stream);
//
// b and a are host arrays (normalised by a[0] and zero-padded to the same
// length here); x and y follow `lay` (one sequence or a batch in any layout,
// y may equal x); zi and zf (device, may be null, may be equal) hold
// order = max(len(a), len(b)) - 1 values per sequence, sequence s at
// s * order. Orders 0 to 4 (more: cudaErrorNotSupported for now).
//
// How. The direct form II transposed filter of order K is an affine
// recurrence on its state z (K values), augmented with the output:
//   w_i = (z_i, y_i) = A w_(i-1) + B x_i,
//   z_i[j] = z_(i-1)[j+1] - a[j+1] z_(i-1)[0] + (b[j+1] - a[j+1] b[0]) x_i,
//   y_i    = z_(i-1)[0] + b[0] x_i,
// with A constant. So it is a scan (dispatch_scan.cuh's single-pass agent)
// over values (w, p): the state a stretch of p samples leaves from a zero
// start, composed as (w_l, p_l) then (w_r, p_r) = (A^p_r w_l + w_r, p_l + p_r).
// The powers A^(2^s) are computed once on the host in double precision and
// copied into the temporary storage (from pageable memory: the call cannot be
// captured in a CUDA graph); memory is read once and written once, and the
// result is bitwise reproducible run to run.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <cuda_runtime.h>

#include <recur/layout/layout.hpp>
#include "dispatch_scan.cuh"

namespace recur::kernels {

// Output and state of a stretch of samples from a zero state: w[0..K-1] the
// filter state z, w[K] the last output; p the stretch's length.
template <class T, int K>
struct iir_value {
  T w[K + 1];
  std::uint32_t p;
};

template <class T, int K>
struct iir_op {
  static constexpr int powers = 16;  // A^(2^s), s < 16: right operands are at most a tile (< 2^16 samples)
  using table = T[powers][K + 1][K + 1];
  table const* pow2;  // in device memory (the temporary storage), read through the read-only cache

  __device__ __forceinline__ void load_power(int s, T (&m)[K + 1][K + 1]) const {
#pragma unroll
    for (int i = 0; i <= K; ++i)
#pragma unroll
      for (int j = 0; j <= K; ++j) m[i][j] = __ldg(&(*pow2)[s][i][j]);
  }
  __device__ __forceinline__ static void multiply(T const (&m)[K + 1][K + 1], T (&v)[K + 1]) {
    T r[K + 1];
#pragma unroll
    for (int i = 0; i <= K; ++i) {
      T acc = T(0);
#pragma unroll
      for (int j = 0; j <= K; ++j) acc = fma(m[i][j], v[j], acc);
      r[i] = acc;
    }
#pragma unroll
    for (int i = 0; i <= K; ++i) v[i] = r[i];
  }
  // v <- A^p v, one product per set bit of p, lowest first.
  __device__ void advance(T (&v)[K + 1], std::uint32_t p) const {
    for (int s = 0; p != 0 && s < powers; ++s, p >>= 1) {
      if (!(p & 1u)) continue;
      T m[K + 1][K + 1];
      load_power(s, m);
      multiply(m, v);
    }
  }
  __device__ static std::uint32_t add_lengths(std::uint32_t a, std::uint32_t b) {
    std::uint32_t const p = a + b;
    return p < a ? 0xffffffffu : p;  // saturates: only right operands' lengths are used
  }
  __device__ iir_value<T, K> operator()(iir_value<T, K> const& l, iir_value<T, K> const& r) const {
    iir_value<T, K> out;
#pragma unroll
    for (int i = 0; i <= K; ++i) out.w[i] = l.w[i];
    advance(out.w, r.p);
#pragma unroll
    for (int i = 0; i <= K; ++i) out.w[i] += r.w[i];
    out.p = add_lengths(l.p, r.p);
    return out;
  }
  // The look-back's fold (scan_tile_status.cuh): every entry is a whole
  // tile, of one power-of-two length, so each step is one product by the
  // same matrix, loaded once: the same operations as operator(), bit for bit.
  template <class View>
  __device__ iir_value<T, K> fold(iir_value<T, K> acc, View const& stack, int count) const {
    if (count == 0) return acc;
    std::uint32_t const p = stack(0).p;
    if ((p & (p - 1)) != 0) {  // not a power of two: one call per entry
      for (int m = count - 1; m >= 0; --m) acc = (*this)(acc, stack(m));
      return acc;
    }
    T mat[K + 1][K + 1];
    load_power(__ffs(static_cast<int>(p)) - 1, mat);
    for (int m = count - 1; m >= 0; --m) {
      iir_value<T, K> const& x = stack(m);
      if (x.p != p) {
        acc = (*this)(acc, x);
        continue;
      }
      multiply(mat, acc.w);
#pragma unroll
      for (int i = 0; i <= K; ++i) acc.w[i] += x.w[i];
      acc.p = add_lengths(acc.p, p);
    }
    return acc;
  }
};

template <class T, int K, bool Segmented>
struct lfilter_access {
  using value = iir_value<T, K>;
  using value_type = std::conditional_t<Segmented, segmented<value>, value>;
  T const* x;
  T* y;
  layout lay;
  T const* zi;
  T* zf;
  T input[K + 1];      // B: w gains B x per sample
  T a1[K + 1][K + 1];  // A, for the initial state
  bool exclusive = false;

  __device__ __forceinline__ value_type load(std::int64_t seq, std::int64_t i) const {
    T const xi = x[lay.offset(i, seq)];
    value v;
#pragma unroll
    for (int j = 0; j <= K; ++j) v.w[j] = input[j] * xi;
    v.p = 1;
    if (i == 0 && zi) {  // w_0 = A (zi, 0) + B x_0
#pragma unroll
      for (int r = 0; r <= K; ++r) {
        T acc = v.w[r];
#pragma unroll
        for (int j = 0; j < K; ++j) acc = fma(a1[r][j], zi[seq * K + j], acc);
        v.w[r] = acc;
      }
    }
    if constexpr (Segmented)
      return {v, i == 0 ? 1u : 0u};
    else
      return v;
  }
  __device__ __forceinline__ value_type start_value(std::int64_t) const { return {}; }
  __device__ __forceinline__ void store(std::int64_t seq, std::int64_t i, value_type const& sv) const {
    value const* v;
    if constexpr (Segmented)
      v = &sv.value;
    else
      v = &sv;
    y[lay.offset(i, seq)] = v->w[K];
    if (zf && i == lay.n - 1)
#pragma unroll
      for (int j = 0; j < K; ++j) zf[seq * K + j] = v->w[j];
  }
};

// n == 0: zf = zi (or zeros).
template <class T>
__global__ void lfilter_empty_kernel(T const* zi, T* zf, std::int64_t values) {
  for (std::int64_t k = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < values;
       k += std::int64_t(gridDim.x) * blockDim.x)
    zf[k] = zi ? zi[k] : T(0);
}

// 512 threads, items per thread the largest power of two up to 8 that keeps
// the tile's values within 100 KB of shared memory (a power of two, so the
// look-back's fold is one product by A^tile per entry). H100, f32 order 1,
// 2^24 samples (2026-11-22): 512 x 4 0.613 ms, 512 x 8 0.346 ms, 512 x 16
// 0.268 ms but slower for orders 2-4 and over the shared-memory limit for
// batched order 4.
template <class V>
struct lfilter_policy {
  static constexpr int block = 512, lookback_depth = 256, lookback_words = 2;
  static constexpr int items = [] {
    int i = 8;
    while (i > 1 && std::size_t(block) * i * sizeof(V) * 33 / 32 > 100 * 1024) i /= 2;
    return i;
  }();
};

template <class T, int K, bool Segmented>
cudaError_t dispatch_lfilter(void* d_temp, std::size_t& temp_bytes, std::vector<double> const& b,
                             std::vector<double> const& a, T const* x, T* y, layout const& lay, T const* zi,
                             T* zf, cudaStream_t stream) {
  using access = lfilter_access<T, K, Segmented>;
  using op = iir_op<T, K>;
  using V = typename access::value_type;
  using vop = std::conditional_t<Segmented, segmented_op<op>, op>;
  using policy = lfilter_policy<V>;
  static_assert(policy::block * policy::items < (1 << op::powers));
  // A and B in double, then the powers A^(2^s) by squaring.
  double m[K + 1][K + 1] = {};
  for (int j = 0; j < K; ++j) {
    m[j][0] = -a[j + 1];
    if (j + 1 < K) m[j][j + 1] = 1;
  }
  if (K > 0) m[K][0] = 1;
  access acc{x, y, lay, zi, zf, {}, {}};
  for (int j = 0; j < K; ++j) acc.input[j] = T(b[j + 1] - a[j + 1] * b[0]);
  acc.input[K] = T(b[0]);
  for (int r = 0; r <= K; ++r)
    for (int c = 0; c <= K; ++c) acc.a1[r][c] = T(m[r][c]);
  // The powers live at the start of the temporary storage, the scan's
  // status after them.
  std::vector<T> host(static_cast<std::size_t>(op::powers) * (K + 1) * (K + 1));
  for (int s = 0; s < op::powers; ++s) {
    for (int r = 0; r <= K; ++r)
      for (int c = 0; c <= K; ++c) host[(s * (K + 1) + r) * (K + 1) + c] = T(m[r][c]);
    double sq[K + 1][K + 1] = {};
    for (int r = 0; r <= K; ++r)
      for (int c = 0; c <= K; ++c)
        for (int q = 0; q <= K; ++q) sq[r][c] += m[r][q] * m[q][c];
    for (int r = 0; r <= K; ++r)
      for (int c = 0; c <= K; ++c) m[r][c] = sq[r][c];
  }
  std::size_t const table_bytes = (sizeof(typename op::table) + 255) / 256 * 256;
  std::size_t scan_bytes = 0;
  op f{nullptr};
  vop vf = [&] {
    if constexpr (Segmented)
      return vop{f};
    else
      return f;
  }();
  if (d_temp == nullptr) {
    cudaError_t const e = launch_scan<V, vop, access, policy>(nullptr, scan_bytes, lay.n * lay.count, acc, vf, stream);
    temp_bytes = table_bytes + scan_bytes;
    return e;
  }
  if (temp_bytes < table_bytes) return cudaErrorInvalidValue;
  auto* table = static_cast<typename op::table*>(d_temp);
  // From pageable memory: the copy is staged before the call returns, so the
  // host buffer may go (this is also why a graph cannot capture the call).
  cudaError_t e = cudaMemcpyAsync(table, host.data(), sizeof(typename op::table), cudaMemcpyHostToDevice, stream);
  if (e != cudaSuccess) return e;
  if constexpr (Segmented)
    vf.op.pow2 = table;
  else
    vf.pow2 = table;
  scan_bytes = temp_bytes - table_bytes;
  return launch_scan<V, vop, access, policy>(static_cast<char*>(d_temp) + table_bytes, scan_bytes,
                                             lay.n * lay.count, acc, vf, stream);
}


}  // namespace recur::kernels

namespace recur::device {

// Errors: cudaErrorInvalidValue for empty b or a, a[0] zero or not finite,
// a negative size, or temporary storage smaller than asked for;
// cudaErrorNotSupported for orders above 4.
template <class T>
cudaError_t lfilter(void* d_temp, std::size_t& temp_bytes, std::span<T const> b, std::span<T const> a,
                    T const* x, T* y, layout const& lay, T const* zi = nullptr, T* zf = nullptr,
                    cudaStream_t stream = 0) {
  if (b.empty() || a.empty() || a[0] == T(0) || !std::isfinite(a[0])) return cudaErrorInvalidValue;
  if (lay.n < 0 || lay.count < 0) return cudaErrorInvalidValue;
  std::size_t const len = b.size() > a.size() ? b.size() : a.size();
  int const order = static_cast<int>(len) - 1;
  if (order > 4) return cudaErrorNotSupported;
  std::vector<double> bn(len, 0.0), an(len, 0.0);  // normalised by a[0], as scipy
  for (std::size_t j = 0; j < b.size(); ++j) bn[j] = double(b[j]) / double(a[0]);
  for (std::size_t j = 0; j < a.size(); ++j) an[j] = double(a[j]) / double(a[0]);
  if (lay.n == 0 || lay.count == 0) {
    if (d_temp == nullptr) {
      temp_bytes = 1;
      return cudaSuccess;
    }
    std::int64_t const values = lay.count * order;
    if (zf && values > 0) {
      kernels::lfilter_empty_kernel<T><<<static_cast<unsigned>((values + 255) / 256 < 1024 ? (values + 255) / 256 : 1024),
                                256, 0, stream>>>(zi, zf, values);
      return cudaGetLastError();
    }
    return cudaSuccess;
  }
  auto run = [&]<int K>() {
    if (lay.count > 1)
      return kernels::dispatch_lfilter<T, K, true>(d_temp, temp_bytes, bn, an, x, y, lay, zi, zf, stream);
    return kernels::dispatch_lfilter<T, K, false>(d_temp, temp_bytes, bn, an, x, y, lay, zi, zf, stream);
  };
  switch (order) {
    case 0:
      return run.template operator()<0>();
    case 1:
      return run.template operator()<1>();
    case 2:
      return run.template operator()<2>();
    case 3:
      return run.template operator()<3>();
    default:
      return run.template operator()<4>();
  }
}

}  // namespace recur::device
