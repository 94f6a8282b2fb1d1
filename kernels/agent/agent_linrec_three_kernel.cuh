#pragma once
// The P-scheme as Wakatani (2012) wrote it for the GPU: P = T x G threads,
// thread p owns chunk p (M consecutive elements of the flattened batch), the
// arrays rearranged in global memory ("configuration 2": element j of chunk p
// at j*P + p) so that the threads' accesses coalesce, and three kernels:
// pre-computation, propagation (one thread, sequential over the P chunks),
// determination. The rearrangement into and out of the transposed arrays are
// two more kernels (tiled transposes through shared memory). It is
// linrec_variant::three_kernel; it moves about 3.7 times the bytes of the
// single pass (s, t and w each cross memory several times).

#include <cstdint>

#include "linrec_params.cuh"

namespace recur::kernels {

template <class T>
struct linrec_three_kernel_plan {
  std::int64_t total;   // n * count
  std::int64_t chunks;  // P
  std::int64_t length;  // M = ceil(total / P)
  T* s;                 // [M][P] rearranged maps (a; b later overwritten by w)
  T* t;
  ops::affine<T>* chunk_map;  // [P]
  T* chunk_in;                // [P]

  __host__ __device__ std::int64_t flat(std::int64_t p, std::int64_t j) const { return p * length + j; }
};

// Rearranges the flattened batch into [M][P] (in) or back (out), 32 x 32
// tiles through shared memory so both sides coalesce. The plan's arrays hold
// the compute type: T is converted on the way in and rounded on the way out.
// Params: linrec_params<T> or linrec_adjoint_params<T> (linrec_params.cuh).
template <class Params, bool In>
__global__ void __launch_bounds__(256)
    linrec_rearrange_kernel(Params prm, linrec_three_kernel_plan<typename Params::value> plan) {
  using V = typename Params::value;
  __shared__ V tile_a[32][33];
  __shared__ V tile_b[32][33];
  std::int64_t const n = prm.p.lay.n;
  std::int64_t const j0 = static_cast<std::int64_t>(blockIdx.x) * 32;  // chunk offset
  std::int64_t const p0 = static_cast<std::int64_t>(blockIdx.y) * 32;  // chunk
  unsigned const tx = threadIdx.x, ty = threadIdx.y;                   // 32 x 8
  if (In) {
    for (unsigned r = ty; r < 32; r += 8) {  // read along the flat order
      std::int64_t const p = p0 + r, j = j0 + tx, f = plan.flat(p, j);
      ops::affine<V> m = ops::affine_identity<V>();
      if (p < plan.chunks && j < plan.length && f < plan.total) {
        std::int64_t const seq = f / n, i = f - seq * n;
        m = prm.step(seq, i, prm.offset(seq, i));
      }
      tile_a[r][tx] = m.a;
      tile_b[r][tx] = m.b;
    }
    __syncthreads();
    for (unsigned r = ty; r < 32; r += 8) {  // write along the chunk index
      std::int64_t const j = j0 + r, p = p0 + tx;
      if (p < plan.chunks && j < plan.length) {
        plan.s[j * plan.chunks + p] = tile_a[tx][r];
        plan.t[j * plan.chunks + p] = tile_b[tx][r];
      }
    }
  } else {
    for (unsigned r = ty; r < 32; r += 8) {
      std::int64_t const j = j0 + r, p = p0 + tx;
      if (p < plan.chunks && j < plan.length) tile_a[tx][r] = plan.t[j * plan.chunks + p];
    }
    __syncthreads();
    for (unsigned r = ty; r < 32; r += 8) {
      std::int64_t const p = p0 + r, j = j0 + tx, f = plan.flat(p, j);
      if (p < plan.chunks && j < plan.length && f < plan.total) {
        std::int64_t const seq = f / n, i = f - seq * n, off = prm.offset(seq, i);
        prm.store(seq, i, off, tile_a[r][tx], prm.load_aux(seq, i, off));
      }
    }
  }
}

// Pre-computation: chunk p's composed map.
template <class T>
__global__ void linrec_precompute_kernel(linrec_three_kernel_plan<T> plan) {
  std::int64_t const p = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (p >= plan.chunks) return;
  ops::affine<T> m = ops::affine_identity<T>();
  for (std::int64_t j = 0; j < plan.length; ++j)
    m = ops::compose_resetting{}(m, {plan.s[j * plan.chunks + p], plan.t[j * plan.chunks + p]});
  plan.chunk_map[p] = m;
}

// Propagation: one thread walks the chunks in order (the paper's O(P) phase).
template <class T>
__global__ void linrec_propagate_kernel(linrec_three_kernel_plan<T> plan) {
  T w = T(0);
  for (std::int64_t p = 0; p < plan.chunks; ++p) {
    plan.chunk_in[p] = w;
    w = apply_resetting(plan.chunk_map[p], w);
  }
}

// Determination: chunk p from its incoming state; w overwrites t in place.
template <class T>
__global__ void linrec_determine_kernel(linrec_three_kernel_plan<T> plan) {
  std::int64_t const p = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (p >= plan.chunks) return;
  T w = plan.chunk_in[p];
  for (std::int64_t j = 0; j < plan.length; ++j) {
    std::int64_t const o = j * plan.chunks + p;
    w = determine(plan.s[o], plan.t[o], w);
    plan.t[o] = w;
  }
}

}  // namespace recur::kernels
