#pragma once
// The summary of a linrec problem: each sequence's steps composed into one
// affine map (A, B), so that its last state is A init + B. It is the
// reduction half of reduce-then-scan, which a recurrence split across
// devices or processes needs (lib/dist/: every rank reduces its slice, the
// maps are gathered and folded into each rank's incoming state, and each
// rank then runs its slice from that state). Nothing is written but the
// maps; s and t are read once.
//
// Two kernels, each composing runs of consecutive elements of one sequence
// in order (compose_resetting: a step with s == 0 forgets what came before,
// as the recurrence does), so the result depends only on the sizes:
//   tiles    a block per tile of Block x Items elements of one sequence,
//            loaded striped (coalesced where the elements are adjacent in
//            memory), composed by each thread over Items elements from
//            shared memory, then across the block's threads in order;
//   columns  a thread per run of `length` elements of one sequence,
//            adjacent threads on adjacent sequences (coalesced where the
//            sequences are interleaved);
// each writing one map per (sequence, run) to out[k * runs + r]. The
// dispatch (dispatch_linrec_summary.cuh) folds those rows of maps with the
// tiles kernel until one map per sequence is left.

#include <cstdint>

#include <recur/detail/linrec_problem.hpp>
#include <recur/ops/affine.hpp>
#include <recur/storage.hpp>

namespace recur::kernels {

// Element i of sequence k of a linrec problem as the map (s_i, t_i).
template <class T>
struct summary_problem_source {
  using value = compute_t<T>;
  detail::linrec_problem<T> p;

  __device__ __forceinline__ ops::affine<value> operator()(std::int64_t k, std::int64_t i) const {
    std::int64_t const off = i * p.lay.element_stride + k * p.lay.batch_stride;
    return {to_compute(p.s ? p.s[off] : p.s_value), to_compute(p.t ? p.t[off] : p.t_value)};
  }
};

// Element i of row k of a row-major array of maps, `length` a row.
template <class V>
struct summary_map_source {
  using value = V;
  ops::affine<V> const* maps;
  std::int64_t length;

  __device__ __forceinline__ ops::affine<V> operator()(std::int64_t k, std::int64_t i) const {
    return maps[k * length + i];
  }
};

// tiles: sequences of n elements (count of them) by `src`, in tiles of
// Block x Items; out[k * tiles + j] is tile j of sequence k composed.
template <int Block, int Items, class Source>
__global__ void __launch_bounds__(Block)
    linrec_summary_tiles_kernel(Source src, std::int64_t n, std::int64_t count,
                                ops::affine<typename Source::value>* out) {
  using V = typename Source::value;
  using map = ops::affine<V>;
  constexpr int tile = Block * Items;
  constexpr int warps = Block / 32;
  static_assert(Block % 32 == 0);
  // One pad slot after every Items maps: a thread's run of Items maps then
  // starts on a different bank from its neighbour's.
  __shared__ map stage[tile + tile / Items];
  __shared__ map warp_total[warps];
  std::int64_t const tiles = (n + tile - 1) / tile, items = tiles * count;
  ops::compose_resetting const op;
  unsigned const x = threadIdx.x, lane = x % 32, warp = x / 32;
  for (std::int64_t u = blockIdx.x; u < items; u += gridDim.x) {
    std::int64_t const k = u / tiles, first = (u % tiles) * tile;
    int const len = static_cast<int>(n - first < tile ? n - first : tile);
#pragma unroll
    for (int j = 0; j < Items; ++j) {
      int const e = j * Block + static_cast<int>(x);
      stage[e + e / Items] = e < len ? src(k, first + e) : ops::affine_identity<V>();
    }
    __syncthreads();
    map m = stage[x * (Items + 1)];
#pragma unroll
    for (int j = 1; j < Items; ++j) {
      m = op(m, stage[x * (Items + 1) + j]);
    }
    // Across the warp in lane order: after the step of width w, lane l
    // holds lanes l .. l + 2w - 1 composed (lanes that run past 31 hold
    // partial results nobody reads).
#pragma unroll
    for (int w = 1; w < 32; w *= 2) {
      map const r{__shfl_down_sync(~0u, m.a, w), __shfl_down_sync(~0u, m.b, w)};
      if (lane + w < 32) m = op(m, r);
    }
    if (lane == 0) warp_total[warp] = m;
    __syncthreads();
    if (x == 0) {
      map t = warp_total[0];
      for (int w = 1; w < warps; ++w) t = op(t, warp_total[w]);
      out[u] = t;  // u = k * tiles + tile index
    }
    __syncthreads();  // stage and warp_total are reused by the next tile
  }
}

// columns: a thread per (sequence k, run r) of `length` elements, k
// fastest; out[k * runs + r].
template <class Source>
__global__ void linrec_summary_columns_kernel(Source src, std::int64_t n, std::int64_t count,
                                              std::int64_t length, ops::affine<typename Source::value>* out) {
  using V = typename Source::value;
  std::int64_t const runs = (n + length - 1) / length, items = runs * count;
  ops::compose_resetting const op;
  for (std::int64_t u = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; u < items;
       u += std::int64_t(gridDim.x) * blockDim.x) {
    std::int64_t const k = u % count, r = u / count, first = r * length;
    std::int64_t const last = first + length < n ? first + length : n;
    ops::affine<V> m = ops::affine_identity<V>();
    for (std::int64_t i = first; i < last; ++i) m = op(m, src(k, i));
    out[k * runs + r] = m;
  }
}

}  // namespace recur::kernels
