#pragma once
// The tiles of correlate_lags (include/recur/filter.hpp): the lagged
// correlations c[j * lags + k] = sum u[i] v_j[i - k] over a batch of
// sequences, each tile's share summed on chip and written as one partial sum
// per output (kernels/dispatch/dispatch_correlate.cuh adds the partials in
// a fixed order).
//
// A tile is Seqs sequences by `span` elements (Seqs = 1: one long stretch of
// one sequence; Seqs = 32: many short or interleaved sequences). Per tile:
//   load:    u and each v_j into shared memory, each sequence's stretch
//            preceded by the MaxLags - 1 elements before it (v's halo),
//            elements outside the batch as zeros, so that a product with
//            one is zero (i - k < 0, i >= n, sequences past count); the
//            loads run along memory: consecutive threads take consecutive
//            elements, or consecutive sequences when those lie closer;
//   sum:     each thread owns a run of Items elements of one sequence,
//            keeps the run and the halo before it in registers and adds
//            its products for every lag (a fixed order of fmas);
//   reduce:  a shuffle tree per warp, then the warps' sums in warp order.
// Memory is read once (the halos again, from cache); the result is a
// function of the tile shape and the data alone (bitwise reproducible).

#include <cstdint>

#include <recur/layout/layout.hpp>
#include "../thread/thread_ops.cuh"

namespace recur::kernels {

template <class T, int MaxArrays>
struct correlate_params {
  T const* u;
  T const* v[MaxArrays];  // the first nv used
  int nv;
  int lags;
  layout lay;                // element stride may be negative (a reverse view)
  bool sequences_adjacent;   // |batch_stride| < |element_stride|: load sequence-fastest
  std::int64_t tiles_along;  // tiles along the elements of a group of Seqs sequences
  std::int64_t tiles;        // all the tiles
  T* partial;                // output o's partial of tile t at partial[o * tiles + t], o = j * lags + k
};

template <class T, int Block, int Items, int Seqs, int MaxLags, int MaxArrays>
struct agent_correlate {
  static_assert(Block % 32 == 0 && Block % Seqs == 0 && MaxLags >= 1);
  static constexpr int block_threads = Block, warps = Block / 32;
  static constexpr int halo = MaxLags - 1;
  static constexpr int runs = Block / Seqs;  // runs per sequence
  static constexpr int span = runs * Items;  // elements per sequence and tile
  static constexpr int row = halo + span;    // stored per sequence: the halo, then the span
  // Element q of a stored row at padded(q): a run's items then fall into
  // distinct banks across a warp (agent_lti.cuh's padding).
  __host__ __device__ static constexpr int padded(int q) { return q + q / 32; }
  static constexpr int row_stride = padded(row);
  static constexpr int loads = (Seqs * row + Block - 1) / Block;  // per thread and array

  using params = correlate_params<T, MaxArrays>;

  struct temp_storage {
    T u[Seqs * row_stride];
    T v[MaxArrays][Seqs * row_stride];
    T warp_sum[warps][MaxArrays * MaxLags];
  };

  __device__ static void run(temp_storage& ts, params const& p) {
    int const tid = int(threadIdx.x), lane = tid % 32, warp = tid / 32;
    std::int64_t const tile = blockIdx.x;
    std::int64_t const s0 = tile / p.tiles_along * Seqs, i0 = tile % p.tiles_along * span - halo;
    std::int64_t const n = p.lay.n, count = p.lay.count;

    // Load: stored element q of sequence s is the batch's element i0 + q of
    // sequence s0 + s.
#pragma unroll
    for (int m = 0; m < loads; ++m) {
      int const q = m * Block + tid;
      if (q < Seqs * row) {
        int const s = p.sequences_adjacent ? q % Seqs : q / row,
                  e = p.sequences_adjacent ? q / Seqs : q % row;
        std::int64_t const i = i0 + e, k = s0 + s;
        bool const in = i >= 0 && i < n && k < count;
        std::int64_t const off = in ? p.lay.offset(i, k) : 0;
        int const at = s * row_stride + padded(e);
        ts.u[at] = in && e >= halo ? p.u[off] : T(0);
#pragma unroll
        for (int j = 0; j < MaxArrays; ++j)
          if (j < p.nv) ts.v[j][at] = in ? p.v[j][off] : T(0);
      }
    }
    __syncthreads();

    // Sum: the run of Items elements that starts at stored element halo + first.
    int const base = tid / runs * row_stride, first = tid % runs * Items;
    T uu[Items];
#pragma unroll
    for (int e = 0; e < Items; ++e) uu[e] = ts.u[base + padded(halo + first + e)];
    T acc[MaxArrays][MaxLags];
#pragma unroll
    for (int j = 0; j < MaxArrays; ++j) {
#pragma unroll
      for (int k = 0; k < MaxLags; ++k) acc[j][k] = T(0);
      if (j < p.nv) {
        T w[halo + Items];  // w[halo + e - k] is v_j's element e - k of the run
#pragma unroll
        for (int m = 0; m < halo + Items; ++m) w[m] = ts.v[j][base + padded(first + m)];
#pragma unroll
        for (int e = 0; e < Items; ++e)
#pragma unroll
          for (int k = 0; k < MaxLags; ++k)
            if (k < p.lags) acc[j][k] = fma(uu[e], w[halo + e - k], acc[j][k]);
      }
    }

    // Reduce: each warp's sums by a shuffle tree, then the warps' in order.
#pragma unroll
    for (int j = 0; j < MaxArrays; ++j)
#pragma unroll
      for (int k = 0; k < MaxLags; ++k)
        if (j < p.nv && k < p.lags) {
          T v = acc[j][k];
#pragma unroll
          for (int d = 16; d > 0; d /= 2) v += shfl_down(v, d);
          if (lane == 0) ts.warp_sum[warp][j * MaxLags + k] = v;
        }
    __syncthreads();
    if (tid < p.nv * p.lags) {
      int const j = tid / p.lags, k = tid % p.lags;
      T sum = ts.warp_sum[0][j * MaxLags + k];
#pragma unroll
      for (int w = 1; w < warps; ++w) sum += ts.warp_sum[w][j * MaxLags + k];
      p.partial[tid * p.tiles + tile] = sum;
    }
  }
};

template <class Agent, class Params>
__global__ void __launch_bounds__(Agent::block_threads)
    correlate_tiles_kernel(__grid_constant__ Params const p) {
  __shared__ typename Agent::temp_storage ts;
  Agent::run(ts, p);
}

}  // namespace recur::kernels
