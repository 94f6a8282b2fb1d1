#pragma once
// Interleaved batches wide enough to fill the chip (sequences side by side,
// batch_stride 1): one block scans a stripe of Lanes adjacent sequences from
// their start to their end, chunk after chunk, carrying each lane's state
// from one chunk to the next in registers. No tile status, no look-back, no
// workspace (the interleaved counterpart of agent_linrec_rows).
//
// Persistent: block b takes stripes b, b + G, b + 2G, ... (G blocks).
// Thread x handles lane x % Lanes of the stripe and, in each chunk of
// Groups x Rows rows (Groups = Block / Lanes), the Rows consecutive rows of
// row group x / Lanes. A row of a stripe is Lanes adjacent elements, so a
// warp's loads of one row are Lanes x sizeof(T) contiguous bytes.
//
// Per chunk: the loads of the next chunk are issued into registers first
// (they are in flight while this chunk is worked on); each thread composes
// its Rows maps; the row groups' composed maps meet in shared memory (double
// buffered by chunk parity, so one barrier a chunk suffices); each thread
// folds the maps of the row groups above its own onto the carried state
// (its incoming state), determines its rows and stores them, and folds the
// rest to get the next chunk's carried state. Every operation's order
// depends only on the shape: bitwise reproducible.

#include <cstdint>

#include "linrec_params.cuh"

namespace recur::kernels {

// Params: linrec_params<T> or linrec_adjoint_params<T> (linrec_params.cuh).
template <class T, int Block, int Lanes, int Rows, int MinBlocks, class Params = linrec_params<T>>
struct agent_linrec_stripes {
  using params = Params;
  using aux = typename Params::aux;  // what the stores need besides the results
  static constexpr int block_threads = Block;
  static constexpr int min_blocks = MinBlocks;
  static constexpr int lanes = Lanes;
  static constexpr int groups = Block / Lanes;
  static constexpr int chunk_rows = groups * Rows;
  static_assert(Block % Lanes == 0 && Lanes <= 32 && 32 % Lanes == 0, "whole row groups per warp");
  using V = compute_t<T>;  // T is stored, V computed in (linrec_params.cuh)
  using map = ops::affine<V>;

  struct temp_storage {
    map agg[2][groups][Lanes];
  };

  __host__ __device__ static std::int64_t stripes(std::int64_t count) { return (count + Lanes - 1) / Lanes; }

  __device__ static void load(Params const& prm, std::int64_t lane, bool active, std::int64_t row0,
                              map (&m)[Rows], aux (&x)[Rows]) {
    std::int64_t const n = prm.p.lay.n;
#pragma unroll
    for (int r = 0; r < Rows; ++r) {
      std::int64_t const i = row0 + r;
      m[r] = ops::affine_identity<V>();
      x[r] = {};
      if (active && i < n) {
        std::int64_t const off = prm.offset(lane, i);
        m[r] = prm.step(lane, i, off);
        x[r] = prm.load_aux(lane, i, off);
      }
    }
  }

  __device__ static void run(temp_storage& ts, Params const& prm) {
    int const tid = static_cast<int>(threadIdx.x);
    int const x = tid % Lanes, g = tid / Lanes;
    std::int64_t const n = prm.p.lay.n, count = prm.p.lay.count;
    std::int64_t const n_chunks = (n + chunk_rows - 1) / chunk_rows;
    for (std::int64_t stripe = blockIdx.x; stripe < stripes(count); stripe += gridDim.x) {
      std::int64_t const lane = stripe * Lanes + x;
      bool const active = lane < count;
      V carry = V(0);  // row 0's map is constant (init folded in): any carry will do
      map cur[Rows];
      aux cur_x[Rows];
      load(prm, lane, active, static_cast<std::int64_t>(g) * Rows, cur, cur_x);
      for (std::int64_t c = 0; c < n_chunks; ++c) {
        std::int64_t const row0 = c * chunk_rows + static_cast<std::int64_t>(g) * Rows;
        map next[Rows];
        aux next_x[Rows];
        if (c + 1 < n_chunks) load(prm, lane, active, row0 + chunk_rows, next, next_x);

        map agg = ops::affine_identity<V>();
#pragma unroll
        for (int r = 0; r < Rows; ++r) agg = ops::compose_resetting{}(agg, cur[r]);
        auto& share = ts.agg[c & 1];
        share[g][x] = agg;
        __syncthreads();
        V w = carry;
        for (int k = 0; k < g; ++k) w = apply_resetting(share[k][x], w);
        V out = w;
        for (int k = g; k < groups; ++k) out = apply_resetting(share[k][x], out);
        carry = out;

        if (active) {
#pragma unroll
          for (int r = 0; r < Rows; ++r) {
            std::int64_t const i = row0 + r;
            if (i < n) {
              w = determine(cur[r].a, cur[r].b, w);
              prm.store(lane, i, prm.offset(lane, i), w, cur_x[r]);
            }
          }
        }
        if (c + 1 < n_chunks) {
#pragma unroll
          for (int r = 0; r < Rows; ++r) {
            cur[r] = next[r];
            cur_x[r] = next_x[r];
          }
        }
      }
      // The next stripe's first chunk writes share[0] again: every thread
      // must be done reading this stripe's last chunk.
      __syncthreads();
    }
  }
};

template <class Agent>
__global__ void __launch_bounds__(Agent::block_threads, Agent::min_blocks)
    linrec_stripes_kernel(typename Agent::params prm) {
  __shared__ typename Agent::temp_storage ts;
  Agent::run(ts, prm);
}

}  // namespace recur::kernels
