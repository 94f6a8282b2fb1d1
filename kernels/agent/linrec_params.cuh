#pragma once
// Kernel-side view of a linrec problem: element access through the layout,
// with sequence starts folded into the data. Element 0 of sequence k becomes
// the constant map (0, s_0 init_k + t_0), so a batch of sequences is one scan
// of maps whose boundaries need no flags (see ops::compose_resetting).

#include <cstdint>

#include <recur/detail/linrec_problem.hpp>
#include <recur/ops/affine.hpp>
#include "../thread/thread_ops.cuh"

namespace recur::kernels {

template <class T>
struct linrec_params {
  detail::linrec_problem<T> p;

  __device__ __forceinline__ std::int64_t offset(std::int64_t seq, std::int64_t i) const {
    return i * p.lay.element_stride + seq * p.lay.batch_stride;
  }
  // Step i of sequence seq as a map, the sequence start folded in.
  __device__ __forceinline__ ops::affine<T> step(std::int64_t seq, std::int64_t i, std::int64_t off) const {
    T s = p.s ? p.s[off] : p.s_value;
    T t = p.t ? p.t[off] : p.t_value;
    if (i == 0) {
      t = fma(s, p.init_of(seq), t);
      s = T(0);
    }
    return {s, t};
  }
  __device__ __forceinline__ void store(std::int64_t seq, std::int64_t i, std::int64_t off, T w) const {
    p.w[off] = w;
    if (p.final_state && i == p.lay.n - 1) p.final_state[seq] = w;
  }
};

// final_state may be init (the same array). The tile that writes sequence
// q's final state must then not do so before the tile holding q's element 0
// has read init[q]. A look-back reads the predecessor tile's status, so only
// a sequence spanning three tiles or more is at risk: its walk may stop at an
// intermediate tile whose map is constant (a zero s, or a power that
// underflows) without waiting for the first. Only the sequence a tile starts
// in can be that one. Returns the tile to wait for (its first status word,
// published after its loads), or -1.
template <class T>
__device__ __forceinline__ std::int64_t init_tile_to_await(detail::linrec_problem<T> const& p, std::int64_t tile,
                                                         std::int64_t tile_items) {
  if (!p.final_state || p.final_state != p.init) return -1;
  std::int64_t const n = p.lay.n, f0 = tile * tile_items;
  std::int64_t const start = f0 / n * n;  // element 0 of the tile's first sequence
  if (start + n > f0 + tile_items) return -1;  // that sequence does not end in this tile
  std::int64_t const first = start / tile_items;
  return first < tile - 1 ? first : -1;
}

// One determination step: w_i = s_i w_{i-1} + t_i, a constant map ignoring
// w_{i-1} (see apply_resetting).
template <class T>
__device__ __forceinline__ T determine(T s, T t, T w) {
  return s == T(0) ? t : fma(s, w, t);
}

}  // namespace recur::kernels
