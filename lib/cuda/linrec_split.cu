// recur::linrec_summary on the GPU (a and b stored in T on the device), and
// the CUDA halves of a linrec split across processes (lib/dist/): the
// summary of each sequence brought to the host, and the recurrence run from
// initial states the host holds. Every value type in one unit: all are
// small next to linrec's agents.
#include <recur/kernels/dispatch/dispatch_linrec_summary.cuh>

#include "../linrec_backends.hpp"
#include "cuda_check.hpp"

namespace recur::detail {

// The summary's maps into stream-ordered temporary storage, then `then(d)`
// enqueues what reads them (d: count maps in compute_t<T>) before the
// storage is freed.
template <class T, class Then>
void with_summary_maps(linrec_problem<T> const& p, CUstream_st* stream, Then then) {
  using map = ops::affine<compute_t<T>>;
  std::size_t const maps_bytes = kernels::workspace_piece(sizeof(map) * std::size_t(p.lay.count));
  with_temp(
      "recur::device::linrec_summary", stream,
      [&](std::size_t& bytes) {
        cudaError_t const e = device::linrec_summary<T>(nullptr, bytes, p, nullptr, stream);
        bytes += maps_bytes;
        return e;
      },
      [&](void* temp, std::size_t bytes) {
        kernels::workspace_cursor ws(temp);
        map* const d = ws.take<map>(maps_bytes);
        std::size_t rest = bytes - maps_bytes;
        if (cudaError_t e = device::linrec_summary<T>(ws.take(0), rest, p, d, stream); e != cudaSuccess)
          return e;
        return then(static_cast<map const*>(d));
      });
}

template <class T>
void linrec_summary_cuda(linrec_problem<T> const& p, CUstream_st* stream, ops::affine<compute_t<T>>* out,
                         T* init) {
  with_summary_maps(p, stream, [&](ops::affine<compute_t<T>> const* d) {
    return cudaMemcpyAsync(out, d, sizeof(*d) * std::size_t(p.lay.count), cudaMemcpyDeviceToHost, stream);
  });
  if (init && p.init)
    cuda_check(
        cudaMemcpyAsync(init, p.init, sizeof(T) * std::size_t(p.lay.count), cudaMemcpyDeviceToHost, stream),
        "cudaMemcpyAsync");
  else if (init)
    for (std::int64_t k = 0; k < p.lay.count; ++k) init[k] = p.init_value;
  cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

template <class T>
__global__ void linrec_summary_store_kernel(ops::affine<compute_t<T>> const* maps, std::int64_t count, T* a,
                                            T* b) {
  std::int64_t const k = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < count) {
    a[k] = to_storage<T>(maps[k].a);
    b[k] = to_storage<T>(maps[k].b);
  }
}

template <class T>
void linrec_summary_cuda_store(linrec_problem<T> const& p, CUstream_st* stream, T* a, T* b) {
  with_summary_maps(p, stream, [&](ops::affine<compute_t<T>> const* d) {
    linrec_summary_store_kernel<T>
        <<<unsigned((p.lay.count + 255) / 256), 256, 0, stream>>>(d, p.lay.count, a, b);
    return cudaGetLastError();
  });
}

template <class T>
void linrec_cuda_from_host(linrec_problem<T> p, CUstream_st* stream, linrec_variant variant, T const* in,
                           T const* final) {
  std::size_t const bytes = sizeof(T) * std::size_t(p.lay.count);
  T* const final_state = p.final_state;
  p.final_state = nullptr;
  void* d = nullptr;
  cuda_check(temp_malloc_async(&d, bytes, stream), "cudaMallocFromPoolAsync");
  // From pageable memory the copy returns once `in` is staged.
  cudaError_t e = cudaMemcpyAsync(d, in, bytes, cudaMemcpyHostToDevice, stream);
  if (e == cudaSuccess) {
    p.init = static_cast<T const*>(d);
    try {
      linrec_cuda(p, stream, variant);
    } catch (...) {
      cudaFreeAsync(d, stream);
      throw;
    }
  }
  if (e == cudaSuccess && final && final_state)
    e = cudaMemcpyAsync(final_state, final, bytes, cudaMemcpyHostToDevice, stream);
  cudaError_t const f = cudaFreeAsync(d, stream);
  cuda_check(e, "cudaMemcpyAsync");
  cuda_check(f, "cudaFreeAsync");
}

// The NCCL path (linrec_cuda_exchanged, linrec_backends.hpp).
//
// The state after map m from x (ops::compose_resetting's offset with the
// constant map x), its product and sum rounded apart, never contracted to
// an FMA: the host fold of the MPI path (lib/dist/linrec_dist.cpp) rounds
// so, and both paths give the same bits.
__device__ inline float apply_rn(ops::affine<float> const& m, float x) {
  return m.a == 0.0f ? m.b : __fadd_rn(__fmul_rn(m.a, x), m.b);
}
__device__ inline double apply_rn(ops::affine<double> const& m, double x) {
  return m.a == 0.0 ? m.b : __dadd_rn(__dmul_rn(m.a, x), m.b);
}

template <class V>
__global__ void linrec_identity_kernel(ops::affine<V>* maps, std::int64_t count) {
  std::int64_t const k = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < count) maps[k] = ops::affine_identity<V>();
}

// The entering rank's maps become the constant maps (0, state after its
// slice from its initial state), so that the initial state need not travel.
template <class T>
__global__ void linrec_fold_init_kernel(ops::affine<compute_t<T>>* maps, std::int64_t count, T const* init,
                                        T init_value) {
  std::int64_t const k = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= count) return;
  using V = compute_t<T>;
  V const x = to_compute(init ? init[k] : init_value);
  maps[k] = {V(0), apply_rn(maps[k], x)};
}

// Each sequence's incoming state on this rank, from the maps of the ranks
// before it in the call's order (`order`: the ranks from the entering one),
// and the final state after all of them, as the host fold of
// lib/dist/linrec_dist.cpp does it.
template <class T>
__global__ void linrec_fold_ranks_kernel(ops::affine<compute_t<T>> const* all, std::int64_t count, int size,
                                         int rank, bool reverse, T const* init, T init_value, T* in,
                                         T* final) {
  std::int64_t const k = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= count) return;
  using V = compute_t<T>;
  int const entry = reverse ? size - 1 : 0;
  V x = V(0);  // replaced by the entering rank's constant map
  for (int step = 0; step < size; ++step) {
    int const r = reverse ? size - 1 - step : step;
    if (r == rank) in[k] = rank == entry ? (init ? init[k] : init_value) : to_storage<T>(x);
    x = apply_rn(all[std::int64_t(r) * count + k], x);
  }
  if (final) final[k] = to_storage<T>(x);
}

template <class T>
void linrec_cuda_exchanged(linrec_problem<T> p, CUstream_st* stream, linrec_variant variant,
                           split_ranks const& ranks, linrec_exchange const& exchange) {
  using map = ops::affine<compute_t<T>>;
  std::int64_t const count = p.lay.count;
  unsigned const grid = unsigned((count + 255) / 256);
  std::size_t const one = kernels::workspace_piece(sizeof(map) * std::size_t(count));
  std::size_t const all_bytes = kernels::workspace_piece(sizeof(map) * std::size_t(count) * ranks.size);
  std::size_t const states = kernels::workspace_piece(sizeof(T) * std::size_t(count));
  void* temp = nullptr;
  cuda_check(temp_malloc_async(&temp, one + all_bytes + states, stream), "cudaMallocFromPoolAsync");
  kernels::workspace_cursor ws(temp);
  map* const mine = ws.take<map>(one);
  map* const all = ws.take<map>(all_bytes);
  T* const in = ws.take<T>(states);
  T* const final_state = p.final_state;
  bool const entering = ranks.rank == (ranks.reverse ? ranks.size - 1 : 0);
  try {
    if (p.lay.n > 0) {
      with_summary_maps(p, stream, [&](map const* d) {
        return cudaMemcpyAsync(mine, d, sizeof(map) * std::size_t(count), cudaMemcpyDeviceToDevice, stream);
      });
    } else {
      linrec_identity_kernel<compute_t<T>><<<grid, 256, 0, stream>>>(mine, count);
      cuda_check(cudaGetLastError(), "linrec_identity_kernel");
    }
    if (entering) {
      linrec_fold_init_kernel<T><<<grid, 256, 0, stream>>>(mine, count, p.init, p.init_value);
      cuda_check(cudaGetLastError(), "linrec_fold_init_kernel");
    }
    exchange.run(exchange.ctx, mine, all, sizeof(map) * std::size_t(count), stream);
    linrec_fold_ranks_kernel<T><<<grid, 256, 0, stream>>>(all, count, ranks.size, ranks.rank, ranks.reverse,
                                                          p.init, p.init_value, in, final_state);
    cuda_check(cudaGetLastError(), "linrec_fold_ranks_kernel");
    p.init = in;
    p.final_state = nullptr;
    if (p.lay.n > 0) linrec_cuda(p, stream, variant);
  } catch (...) {
    cudaFreeAsync(temp, stream);
    throw;
  }
  cuda_check(cudaFreeAsync(temp, stream), "cudaFreeAsync");
}

#define RECUR_LINREC_SPLIT(T)                                                                              \
  template void linrec_summary_cuda<T>(linrec_problem<T> const&, CUstream_st*, ops::affine<compute_t<T>>*, \
                                       T*);                                                                \
  template void linrec_cuda_from_host<T>(linrec_problem<T>, CUstream_st*, linrec_variant, T const*,        \
                                         T const*);                                                        \
  template void linrec_summary_cuda_store<T>(linrec_problem<T> const&, CUstream_st*, T*, T*);              \
  template void linrec_cuda_exchanged<T>(linrec_problem<T>, CUstream_st*, linrec_variant,                  \
                                         split_ranks const&, linrec_exchange const&);
RECUR_LINREC_SPLIT(float)
RECUR_LINREC_SPLIT(double)
RECUR_LINREC_SPLIT(bfloat16)
RECUR_LINREC_SPLIT(float16)
#undef RECUR_LINREC_SPLIT

}  // namespace recur::detail
