// recur::cuda's side of a solve split across processes (lib/split_memory.hpp):
// stream-ordered device memory from recur's pool, columns moved through one
// staging buffer each way, and split_combine as one grid-stride kernel.
#include <algorithm>
#include <cstdint>
#include <mutex>
#include <vector>

#include "../split_memory.hpp"
#include "cuda_check.hpp"

namespace recur::detail {
namespace {

constexpr unsigned block = 256;

unsigned grid_for(std::int64_t n) {
  std::int64_t const g = (n + block - 1) / block;
  return unsigned(g < 65535 ? (g > 0 ? g : 1) : 65535);
}

// out[k] = at[k * stride] (gather) or at[k * stride] = in[k] (scatter).
template <class T>
__global__ void gather_column(T* out, T const* at, std::int64_t stride, std::int64_t count) {
  for (std::int64_t k = std::int64_t(blockIdx.x) * block + threadIdx.x; k < count;
       k += std::int64_t(gridDim.x) * block)
    out[k] = at[k * stride];
}
template <class T>
__global__ void scatter_column(T* at, T const* in, std::int64_t stride, std::int64_t count) {
  for (std::int64_t k = std::int64_t(blockIdx.x) * block + threadIdx.x; k < count;
       k += std::int64_t(gridDim.x) * block)
    at[k * stride] = in[k];
}

template <class T>
__global__ void unit_columns(T* z, layout lay, std::int64_t set_stride) {
  std::int64_t const total = lay.n * lay.count;
  for (std::int64_t e = std::int64_t(blockIdx.x) * block + threadIdx.x; e < total;
       e += std::int64_t(gridDim.x) * block) {
    std::int64_t const k = e / lay.n, i = e - k * lay.n;
    z[lay.offset(i, k)] = T(i == 0);
    z[set_stride + lay.offset(i, k)] = T(i == lay.n - 1);
  }
}

// alpha and beta on the device: count * nrhs values each.
template <class T>
__global__ void combine(split_combine_args<T> g) {
  layout const lay = g.lay;
  std::int64_t const total = lay.n * lay.count * g.nrhs;
  for (std::int64_t e = std::int64_t(blockIdx.x) * block + threadIdx.x; e < total;
       e += std::int64_t(gridDim.x) * block) {
    std::int64_t const kr = e / lay.n, i = e - kr * lay.n, k = kr / g.nrhs, r = kr - k * g.nrhs;
    std::int64_t const o = lay.offset(i, k);
    g.x[o + r * g.rhs_stride] =
        split_correct(g.y[o + r * g.rhs_stride], g.z[o], g.z[g.set_stride + o], g.alpha[kr], g.beta[kr]);
  }
}

// Stream-ordered device storage for `bytes`, freed by the handle.
std::shared_ptr<void> device_storage(cudaStream_t stream, std::size_t bytes) {
  void* p = nullptr;
  cuda_check(temp_malloc_async(&p, bytes, stream), "cudaMallocFromPoolAsync");
  return std::shared_ptr<void>(p, [stream](void* q) {
    if (q) cudaFreeAsync(q, stream);
  });
}

// Scratch kept between calls: a split solve's scratch (about 3 values an
// unknown) is far above the temporary pool's keep, so the pool would give
// it back to the driver at every synchronisation and map it again at the
// next call (bench_dist: several ms for 2^26 unknowns). Buffers are kept
// per device, grown, never shrunk, and reused in stream order: a handle's
// release records an event on its stream, and the next user waits for it
// on its own stream before touching the memory.
struct kept_buffer {
  int device = 0;
  void* p = nullptr;
  std::size_t bytes = 0;
  cudaEvent_t released = nullptr;
};

std::mutex kept_mutex;
std::vector<kept_buffer*>& kept_free() {
  static std::vector<kept_buffer*> free;  // never destroyed: the driver frees at exit
  return free;
}

std::shared_ptr<void> kept_storage(cudaStream_t stream, std::size_t bytes) {
  int dev = 0;
  cuda_check(cudaGetDevice(&dev), "cudaGetDevice");
  kept_buffer* b = nullptr;
  {
    std::lock_guard<std::mutex> lock(kept_mutex);
    auto& free = kept_free();
    // The smallest free buffer of this device that fits, else the largest
    // (grown below): small requests do not take the large buffers.
    for (kept_buffer* k : free) {
      if (k->device != dev) continue;
      bool const fits = k->bytes >= bytes, best_fits = b && b->bytes >= bytes;
      if (!b || (fits && (!best_fits || k->bytes < b->bytes)) || (!fits && !best_fits && k->bytes > b->bytes))
        b = k;
    }
    if (b) free.erase(std::find(free.begin(), free.end(), b));
  }
  if (!b) {
    b = new kept_buffer;
    b->device = dev;
    if (cudaError_t e = cudaEventCreateWithFlags(&b->released, cudaEventDisableTiming); e != cudaSuccess) {
      delete b;
      cuda_check(e, "cudaEventCreateWithFlags");
    }
  }
  auto give_back = [](kept_buffer* k) {
    std::lock_guard<std::mutex> lock(kept_mutex);
    kept_free().push_back(k);
  };
  cudaError_t e = cudaStreamWaitEvent(stream, b->released, 0);  // the last user's work is done
  if (e == cudaSuccess && b->bytes < bytes) {
    if (b->p) e = cudaFreeAsync(b->p, stream);
    b->p = nullptr;
    b->bytes = 0;
    if (e == cudaSuccess) e = cudaMallocAsync(&b->p, bytes, stream);
    if (e == cudaSuccess) b->bytes = bytes;
  }
  if (e != cudaSuccess) {
    give_back(b);
    cuda_check(e, "scratch allocation");
  }
  return std::shared_ptr<void>(b->p, [b, stream, give_back](void*) {
    cudaEventRecord(b->released, stream);
    give_back(b);
  });
}

}  // namespace

std::shared_ptr<void> split_alloc(cuda const& ex, std::size_t bytes) {
  return kept_storage(ex.stream, bytes);
}

template <class T>
void split_gather(cuda const& ex, split_column<T> const* columns, std::size_t n, std::int64_t stride,
                  std::int64_t count) {
  if (n == 0 || count <= 0) return;
  std::size_t const all = n * std::size_t(count);
  auto const staging = device_storage(ex.stream, sizeof(T) * all);
  T* const d = static_cast<T*>(staging.get());
  for (std::size_t j = 0; j < n; ++j)
    gather_column<T><<<grid_for(count), block, 0, ex.stream>>>(d + j * count, columns[j].at, stride, count);
  cuda_check(cudaGetLastError(), "gather kernel");
  std::vector<T> h(all);
  cuda_check(cudaMemcpyAsync(h.data(), d, sizeof(T) * all, cudaMemcpyDeviceToHost, ex.stream),
             "cudaMemcpyAsync");
  cuda_check(cudaStreamSynchronize(ex.stream), "cudaStreamSynchronize");
  for (std::size_t j = 0; j < n; ++j)
    std::copy(h.begin() + std::ptrdiff_t(j * count), h.begin() + std::ptrdiff_t((j + 1) * count),
              columns[j].host);
}

template <class T>
void split_scatter(cuda const& ex, split_column<T> const* columns, std::size_t n, std::int64_t stride,
                   std::int64_t count) {
  if (n == 0 || count <= 0) return;
  std::size_t const all = n * std::size_t(count);
  std::vector<T> h(all);
  for (std::size_t j = 0; j < n; ++j)
    std::copy(columns[j].host, columns[j].host + count, h.begin() + std::ptrdiff_t(j * count));
  auto const staging = device_storage(ex.stream, sizeof(T) * all);
  T* const d = static_cast<T*>(staging.get());
  // From pageable memory the copy returns once h is staged.
  cuda_check(cudaMemcpyAsync(d, h.data(), sizeof(T) * all, cudaMemcpyHostToDevice, ex.stream),
             "cudaMemcpyAsync");
  for (std::size_t j = 0; j < n; ++j)
    scatter_column<T><<<grid_for(count), block, 0, ex.stream>>>(columns[j].at, d + j * count, stride, count);
  cuda_check(cudaGetLastError(), "scatter kernel");
}

template <class T>
void split_unit_columns(cuda const& ex, T* z, layout const& lay, std::int64_t set_stride) {
  if (lay.n * lay.count == 0) return;
  unit_columns<T><<<grid_for(lay.n * lay.count), block, 0, ex.stream>>>(z, lay, set_stride);
  cuda_check(cudaGetLastError(), "unit-column kernel");
}

template <class T>
void split_combine(cuda const& ex, split_combine_args<T> const& args) {
  std::int64_t const total = args.lay.n * args.lay.count * args.nrhs;
  if (total == 0) return;
  std::size_t const m = std::size_t(args.lay.count * args.nrhs);
  std::vector<T> h(args.alpha, args.alpha + m);
  h.insert(h.end(), args.beta, args.beta + m);
  auto const staging = device_storage(ex.stream, sizeof(T) * 2 * m);
  T* const d = static_cast<T*>(staging.get());
  cuda_check(cudaMemcpyAsync(d, h.data(), sizeof(T) * 2 * m, cudaMemcpyHostToDevice, ex.stream),
             "cudaMemcpyAsync");
  split_combine_args<T> g = args;
  g.alpha = d;
  g.beta = d + m;
  combine<T><<<grid_for(total), block, 0, ex.stream>>>(g);
  cuda_check(cudaGetLastError(), "combine kernel");
}

#define RECUR_SPLIT_MOVES(T)                                                                     \
  template void split_gather<T>(cuda const&, split_column<T> const*, std::size_t, std::int64_t,  \
                                std::int64_t);                                                   \
  template void split_scatter<T>(cuda const&, split_column<T> const*, std::size_t, std::int64_t, \
                                 std::int64_t);
RECUR_SPLIT_MOVES(float)
RECUR_SPLIT_MOVES(double)
RECUR_SPLIT_MOVES(std::int32_t)
RECUR_SPLIT_MOVES(std::int16_t)
RECUR_SPLIT_MOVES(std::uint8_t)
#undef RECUR_SPLIT_MOVES
template void split_unit_columns<float>(cuda const&, float*, layout const&, std::int64_t);
template void split_unit_columns<double>(cuda const&, double*, layout const&, std::int64_t);
template void split_combine<float>(cuda const&, split_combine_args<float> const&);
template void split_combine<double>(cuda const&, split_combine_args<double> const&);

}  // namespace recur::detail
