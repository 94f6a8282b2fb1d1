#pragma once
// The single-pass P-scheme over tiles of a dense batch (sequences end to end
// in one flat array, unit stride), persistent and software-pipelined: each
// block keeps the loads of its next Stages - 1 tiles in flight while it
// scans, looks back and stores the current one.
//
// Why: in agent_linrec_tiles a block issues its loads, then waits for them,
// scans, and waits for its predecessor's state; while it waits nothing of
// its own is in flight. Here the copies are asynchronous (cp.async, sm_80
// and later): global memory goes to shared memory without passing through
// registers, and the waits of one tile overlap the loads of the next.
//
// Per tile (Block threads x Items elements; thread x owns the contiguous run
// x*Items .. x*Items+Items-1, the paper's rearrangement):
//   copy:            staged_tile.cuh: 16-byte chunks, striped over the
//                    threads (coalesced), each at a swizzled slot, so that
//                    the owner later reads its run with 16-byte loads and no
//                    bank conflicts;
//   pre-computation: the owner composes its run; a block scan gives prefixes
//                    and the tile's map;
//   propagation:     decoupled look-back (lookback.cuh, value space:
//                    bitwise reproducible);
//   determination:   in registers, results back to the same slots, then
//                    stored striped and coalesced.
// Tiles are taken in order from a global counter (a block takes a tile when it
// starts its copy), so the smallest unfinished tile is always being worked
// on: no deadlock, whatever number of blocks is resident.

#include <cstdint>

#include "../block/block_scan.cuh"
#include "linrec_params.cuh"
#include "staged_tile.cuh"

namespace recur::kernels {

template <class T, int Block, int Items, int Stages, int LookbackDepth, int MinBlocks = 1,
          int LookbackWords = 1>
struct agent_linrec_pipe {
  static constexpr int block_threads = Block;
  static constexpr int min_blocks = MinBlocks;
  static constexpr int tile_items = Block * Items;
  using staged = staged_tile<T, Block, Items>;
  static_assert(Stages >= 2, "at least two stages: one being worked on, one in flight");
  using V = compute_t<T>;  // T is stored (the copies), V computed in (linrec_params.cuh)
  using map = ops::affine<V>;
  using scan = block_scan<map, Block, ops::compose_resetting>;
  using status = linrec_tile_status<V>;
  using fold = linrec_fold<V, 8>;

  struct temp_storage {
    typename staged::storage st[Stages];
    typename scan::temp_storage scan;
    typename status::template walk_storage<LookbackDepth> walk;
    std::int64_t tile[Stages];
    V w_in;
  };

  static std::int64_t tiles(std::int64_t total) { return (total + tile_items - 1) / tile_items; }

  // Whether the problem is one this agent serves: a dense contiguous batch
  // whose arrays are 16-byte aligned.
  static bool serves(detail::linrec_problem<T> const& p) {
    auto aligned = [](void const* q) { return (reinterpret_cast<std::uintptr_t>(q) & 15) == 0; };
    return p.lay.is_dense_contiguous() && p.lay.n > 0 && p.lay.count > 0 && (p.s || p.t) &&
           (!p.s || aligned(p.s)) && (!p.t || aligned(p.t)) && aligned(p.w);
  }

  // Start the copies of `tile` into stage `k` (every thread; a tile past the
  // end copies nothing). One commit group per call, empty or not, so the
  // group count stays uniform.
  __device__ static void copy_in(temp_storage& ts, int k, std::int64_t tile,
                                 detail::linrec_problem<T> const& p, std::int64_t total,
                                 std::int64_t n_tiles) {
    if (tile < n_tiles) {
      std::int64_t const f0 = tile * tile_items;
      int const valid = static_cast<int>(total - f0 < tile_items ? total - f0 : tile_items);
      staged::copy_in(ts.st[k], p.s, p.t, f0, 0, valid);
    }
    detail_async::cp_async_commit();
  }

  __device__ static void run(temp_storage& ts, linrec_params<T> const& prm, status const& st) {
    detail::linrec_problem<T> const& p = prm.p;
    unsigned const tid = threadIdx.x;
    std::int64_t const n = p.lay.n;
    std::int64_t const total = n * p.lay.count;
    std::int64_t const n_tiles = st.tiles;

    // Prologue: take the first Stages - 1 tiles and start their copies.
    if (tid == 0) {
#pragma unroll
      for (int k = 0; k < Stages - 1; ++k) ts.tile[k] = st.next_tile();
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < Stages - 1; ++k) copy_in(ts, k, ts.tile[k], p, total, n_tiles);

    for (int it = 0;; ++it) {
      int const k = it % Stages;
      int const k_next =
          (it + Stages - 1) % Stages;  // the stage of tile it + Stages - 1 (freed by tile it - 1)
      // This thread's copies of tile `it` have landed (later tiles may still
      // be in flight); the barrier makes everyone's visible, and ends every
      // read of stage k_next by tile it - 1.
      detail_async::cp_async_wait<Stages - 2>();
      __syncthreads();
      std::int64_t const tile = ts.tile[k];
      if (tile >= n_tiles) break;  // uniform: read after the barrier
      // The tile whose copy starts now is taken now, not earlier: tiles are
      // then taken in about the order they will be worked on, so a tile's
      // predecessors are mostly done by the time it looks back (taken a
      // whole iteration earlier, rounds of tiles would look back at once).
      if (tid == 0) ts.tile[k_next] = st.next_tile();

      std::int64_t const f0 = tile * tile_items;
      typename staged::storage& sg = ts.st[k];

      // The owner's run, into registers, converted to V.
      V s[Items], t[Items];
      staged::read_run(sg, static_cast<int>(tid), p.s != nullptr, p.s_value, p.t != nullptr, p.t_value, s, t);

      // Sequence starts inside the run: element 0 of a sequence becomes the
      // constant map (0, s_0 init + t_0).
      std::int64_t const f = f0 + static_cast<std::int64_t>(tid) * Items;
      std::int64_t seq, r;  // sequence and index of the run's first element
      if (p.lay.count == 1) {
        seq = 0;
        r = f;
      } else {
        seq = f / n;
        r = f - seq * n;
      }
      bool last[Items];  // element ends its sequence (its w is the final state)
      {
        std::int64_t rr = r, sq = seq;
#pragma unroll
        for (int j = 0; j < Items; ++j) {
          if (rr == 0 && f + j < total) {
            t[j] = fma(s[j], prm.init_of(sq), t[j]);
            s[j] = V(0);
          }
          last[j] = rr == n - 1;
          if (++rr == n) {
            rr = 0;
            ++sq;
          }
        }
      }

      // Pre-computation.
      map run = ops::affine_identity<V>();
#pragma unroll
      for (int j = 0; j < Items; ++j) run = ops::compose_resetting{}(run, map{s[j], t[j]});
      __syncthreads();  // ts.tile[k_next] is visible
      copy_in(ts, k_next, ts.tile[k_next], p, total, n_tiles);
      map tile_map;
      map const prefix =
          scan::exclusive(ts.scan, run, ops::affine_identity<V>(), ops::compose_resetting{}, tile_map);

      // Propagation (warp 0), while the next tile's copies are in flight.
      if (tid < 32) {
        if (tile > 0 && tid == 0) st.publish(tile, lookback_aggregate, tile_map);
        V const w_in = tile > 0
                           ? st.template lookback<LookbackDepth, LookbackWords>(tile, 0, ts.walk, tid, fold{})
                           : V(0);
        if (tid == 0) {
          st.publish(tile, lookback_inclusive, {V(0), apply_resetting(tile_map, w_in)});
          if (std::int64_t const q = init_tile_to_await(p, tile, tile_items); q >= 0) st.wait_published(q);
          ts.w_in = w_in;
        }
      }
      __syncthreads();

      // Determination, in registers, back to the owner's slots (rounded to T).
      V w = apply_resetting(prefix, ts.w_in);
#pragma unroll
      for (int j = 0; j < Items; ++j) {
        w = determine(s[j], t[j], w);
        t[j] = w;
        if (last[j] && p.final_state && f + j < total) p.final_state[(f + j) / n] = to_storage<T>(w);
      }
      staged::write_run(sg, static_cast<int>(tid), t);
      __syncthreads();

      // Stores, striped and coalesced.
      staged::store(sg, p.w, f0, 0, static_cast<int>(total - f0 < tile_items ? total - f0 : tile_items));
    }
    detail_async::cp_async_wait<0>();
  }
};

template <class Agent, class T>
__global__ void __launch_bounds__(Agent::block_threads, Agent::min_blocks)
    linrec_pipe_kernel(linrec_params<T> prm, linrec_tile_status<compute_t<T>> st) {
  extern __shared__ __align__(16) unsigned char linrec_pipe_smem[];
  Agent::run(*reinterpret_cast<typename Agent::temp_storage*>(linrec_pipe_smem), prm, st);
}

}  // namespace recur::kernels
