// filtfilt and sosfiltfilt on CUDA, float and double: the forward-backward
// pass of lib/cpu/filter_cpu.cpp's filtfilt_cpu composed from the GPU
// lfilter or sosfilt backend on the caller's stream. Two batch-sized buffers
// of the extended length N = n + 2 edge in stream-ordered temporary storage:
//
//   ext = extend(x)                    (scipy's padding, one gather kernel)
//   ext = filter(ext, zi * ext[0])     (in place)
//   rev = reverse(ext)                 (the gather kernel, mirrored source)
//   rev = filter(rev, zi * rev[0])     (in place)
//   y   = reverse(rev)[edge, edge + n)
//
// The steady state zi is passed to the state kernel by value, in chunks, so
// nothing is copied from host memory and the sequence is graph-capturable.
// No fmt here: it does not compile under nvcc (doc/design.md).
#include <algorithm>
#include <cstdint>

#include "../filter_backends.hpp"
#include "cuda_check.hpp"

namespace recur::detail {
namespace {

// A batch read through signed strides: element i of sequence k at
// p[i * es + k * bs] (es < 0 reads a sequence backwards from p).
template <class T>
struct strided_source {
  T const* p;
  std::int64_t n, es, bs;
};

// dst element (i, k), i < dst.n, is the source's element i - edge, or,
// outside [0, src.n), scipy's extension of the source (odd, even, constant).
template <class T>
__global__ void extend_kernel(strided_source<T> src, T* dst, layout dl, std::int64_t edge, filtfilt_pad pad) {
  std::int64_t const total = dl.n * dl.count;
  for (std::int64_t g = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; g < total;
       g += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    std::int64_t const k = g / dl.n, i = g % dl.n, j = i - edge;
    T const* s = src.p + k * src.bs;
    T v;
    if (j >= 0 && j < src.n) {
      v = s[j * src.es];
    } else {
      bool const left = j < 0;
      std::int64_t const m = left ? -j : 2 * (src.n - 1) - j;
      T const end = s[(left ? 0 : src.n - 1) * src.es];
      v = pad == filtfilt_pad::odd    ? T(2) * end - s[m * src.es]
          : pad == filtfilt_pad::even ? s[m * src.es]
                                      : end;
    }
    dst[dl.offset(i, k)] = v;
  }
}

// A slice of zi passed by value: zi[first, first + size).
template <class T>
struct state_chunk {
  static constexpr int capacity = 32;
  T v[capacity];
  std::int64_t first;
  int size;
};

// init[k * per + first + j] = zi[first + j] * (element 0 of sequence k of src).
template <class T>
__global__ void scale_state_kernel(state_chunk<T> zi, std::int64_t per, T const* src, std::int64_t bs,
                                   std::int64_t count, T* init) {
  std::int64_t const total = count * zi.size;
  for (std::int64_t g = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; g < total;
       g += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    std::int64_t const k = g / zi.size;
    int const j = static_cast<int>(g % zi.size);
    init[k * per + zi.first + j] = zi.v[j] * src[k * bs];
  }
}

constexpr int block_threads = 256;

unsigned grid_for(std::int64_t total) {
  return static_cast<unsigned>(
      std::clamp<std::int64_t>((total + block_threads - 1) / block_threads, 1, 65535));
}

template <class T>
void extend(strided_source<T> const& src, T* dst, layout const& dl, std::int64_t edge, filtfilt_pad pad,
            CUstream_st* stream) {
  extend_kernel<T><<<grid_for(dl.n * dl.count), block_threads, 0, stream>>>(src, dst, dl, edge, pad);
  cuda_check(cudaGetLastError(), "recur::filtfilt extension kernel");
}

// init = zi * (element 0 of every sequence of buf, laid out as bl).
template <class T>
void scale_state(T const* zi, std::int64_t per, T const* buf, layout const& bl, T* init,
                 CUstream_st* stream) {
  for (std::int64_t first = 0; first < per; first += state_chunk<T>::capacity) {
    state_chunk<T> c{};
    c.first = first;
    c.size = static_cast<int>(std::min<std::int64_t>(state_chunk<T>::capacity, per - first));
    for (int j = 0; j < c.size; ++j) c.v[j] = zi[first + j];
    scale_state_kernel<T><<<grid_for(bl.count * c.size), block_threads, 0, stream>>>(
        c, per, buf, bl.batch_stride, bl.count, init);
    cuda_check(cudaGetLastError(), "recur::filtfilt state kernel");
  }
}

template <class T>
void filter_in_place(iir_coefficients<T> const& f, T* buf, layout const& bl, T const* init,
                     CUstream_st* stream) {
  if (f.sos)
    sosfilt_cuda<T>(f.sos, f.sections, buf, buf, bl, init, nullptr, stream);
  else
    lfilter_cuda<T>(f.b, f.nb, f.a, f.na, buf, buf, bl, init, nullptr, stream);
}

}  // namespace

template <class T>
void filtfilt_cuda(iir_coefficients<T> const& f, T const* zi, std::int64_t per, T const* x, T* y,
                   layout const& lay, std::int64_t edge, filtfilt_pad pad, CUstream_st* stream) {
  std::int64_t const n = lay.n, big = n + 2 * edge, count = lay.count;
  // The buffers' layout follows the caller's: interleaved when sequences lie
  // closer together than elements (many short sequences), else contiguous.
  layout const bl = lay.batch_stride < lay.element_stride && count > 1 ? layout::interleaved(big, count)
                                                                       : layout::contiguous(big, count);
  std::size_t const values = static_cast<std::size_t>(2 * big * count + per * count);
  T* temp = nullptr;
  cuda_check(temp_malloc_async(reinterpret_cast<void**>(&temp), values * sizeof(T), stream),
             "cudaMallocFromPoolAsync");
  T* const ext = temp;
  T* const rev = temp + big * count;
  T* const init = rev + big * count;
  try {
    extend<T>({x, n, lay.element_stride, lay.batch_stride}, ext, bl, edge, pad, stream);
    if (per > 0) scale_state<T>(zi, per, ext, bl, init, stream);
    filter_in_place<T>(f, ext, bl, per > 0 ? init : nullptr, stream);
    // rev's element i is ext's element big - 1 - i.
    extend<T>({ext + bl.offset(big - 1, 0), big, -bl.element_stride, bl.batch_stride}, rev, bl, 0, pad,
              stream);
    if (per > 0) scale_state<T>(zi, per, rev, bl, init, stream);
    filter_in_place<T>(f, rev, bl, per > 0 ? init : nullptr, stream);
    // y's element i is the result's element i + edge, rev's big - 1 - edge - i.
    extend<T>({rev + bl.offset(big - 1 - edge, 0), n, -bl.element_stride, bl.batch_stride}, y, lay, 0, pad,
              stream);
  } catch (...) {
    cudaFreeAsync(temp, stream);
    throw;
  }
  cuda_check(cudaFreeAsync(temp, stream), "cudaFreeAsync");
}

template void filtfilt_cuda<float>(iir_coefficients<float> const&, float const*, std::int64_t, float const*,
                                   float*, layout const&, std::int64_t, filtfilt_pad, CUstream_st*);
template void filtfilt_cuda<double>(iir_coefficients<double> const&, double const*, std::int64_t,
                                    double const*, double*, layout const&, std::int64_t, filtfilt_pad,
                                    CUstream_st*);

}  // namespace recur::detail
