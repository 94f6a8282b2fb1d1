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
//
// The adjoint (linrec_adjoint_params) stages s, g and w; an owner's
// coefficient run is s one element back and its w run one element on, the
// element beyond the run read from the neighbouring owner's slots or, at the
// tile's edges, by thread 0 (s) and the last thread (w) from global memory.
// dt goes back through g's slots, ds through s's.

#include <cstdint>

#include "../block/block_scan.cuh"
#include "linrec_params.cuh"
#include "staged_tile.cuh"

namespace recur::kernels {

template <class T, int Block, int Items, int Stages, int LookbackDepth, int MinBlocks = 1,
          int LookbackWords = 1, class Params = linrec_params<T>>
struct agent_linrec_pipe {
  using params = Params;
  static constexpr int block_threads = Block;
  static constexpr int min_blocks = MinBlocks;
  static constexpr int tile_items = Block * Items;
  using staged = staged_tile<T, Block, Items, Params::staged_arrays>;
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
  static bool serves(Params const& prm) {
    auto const& p = prm.p;
    if (!(p.lay.is_dense_contiguous() && p.lay.n > 0 && p.lay.count > 0 && (p.s || p.t))) return false;
    for (void const* a : prm.arrays())
      if (a && (reinterpret_cast<std::uintptr_t>(a) & 15) != 0) return false;
    return true;
  }

  // Start the copies of `tile` into stage `k` (every thread; a tile past the
  // end copies nothing). One commit group per call, empty or not, so the
  // group count stays uniform.
  __device__ static void copy_in(temp_storage& ts, int k, std::int64_t tile, Params const& prm,
                                 std::int64_t total, std::int64_t n_tiles) {
    if (tile < n_tiles) {
      std::int64_t const f0 = tile * tile_items;
      int const valid = static_cast<int>(total - f0 < tile_items ? total - f0 : tile_items);
      T const* src[staged::arrays];
#pragma unroll
      for (int a = 0; a < staged::arrays; ++a) src[a] = prm.staged_input(a);
      staged::copy_in(ts.st[k], src, f0, 0, valid);
    }
    detail_async::cp_async_commit();
  }

  __device__ static void run(temp_storage& ts, Params const& prm, status const& st) {
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
    for (int k = 0; k < Stages - 1; ++k) copy_in(ts, k, ts.tile[k], prm, total, n_tiles);

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
      int const own = static_cast<int>(tid) * Items;  // the run's first tile position
      V s[Items], t[Items];
      staged::read_run(sg, 0, static_cast<int>(tid), p.s != nullptr, p.s_value, s);
      staged::read_run(sg, 1, static_cast<int>(tid), p.t != nullptr, p.t_value, t);

      std::int64_t const f = f0 + own;
      std::int64_t seq, r;  // sequence and index of the run's first element
      if (p.lay.count == 1) {
        seq = 0;
        r = f;
      } else {
        seq = f / n;
        r = f - seq * n;
      }
      // The adjoint's neighbours beyond the run: s before it (the
      // coefficient of its first element), w after it (for its last ds,
      // used after the scan; loaded now by the last thread, the one that
      // reads it from global memory).
      V x_after = V(0);
      if constexpr (Params::adjoint) {
        V s_before = to_compute(p.s_value);
        if (p.s) {
          if (tid > 0)
            s_before = staged::element(sg, 0, own - 1);
          else if (r != 0)
            s_before = prm.s_at(f - 1);
        }
        Params::shift_back(s, s_before);
        if (prm.ds && tid == Block - 1 && f + Items < total && (f + Items) % n != 0)
          x_after = to_compute(prm.w[f + Items]);
      }

      // Sequence starts inside the run: element 0 of a sequence becomes the
      // constant map (0, s_0 init + t_0) (the adjoint's coefficient there
      // is 1).
      bool last[Items];  // element ends its sequence (its w is the final state)
      {
        std::int64_t rr = r, sq = seq;
#pragma unroll
        for (int j = 0; j < Items; ++j) {
          if (rr == 0 && f + j < total) {
            if constexpr (Params::adjoint) s[j] = V(1);
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
      copy_in(ts, k_next, ts.tile[k_next], prm, total, n_tiles);
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

      // Determination, in registers, back to the owner's slots (rounded to
      // T): w (dt) to t's, the adjoint's ds to s's (read above, and its
      // final state's s from the owner's own slots before they are written).
      // w's slots stay as copied until the next iteration's copies, so ds
      // reads its run there now.
      V w = apply_resetting(prefix, ts.w_in);
#pragma unroll
      for (int j = 0; j < Items; ++j) {
        w = determine(s[j], t[j], w);
        t[j] = w;
        if (last[j] && p.final_state && f + j < total) {
          V v = w;
          if constexpr (Params::adjoint) v *= p.s ? staged::element(sg, 0, own + j) : to_compute(p.s_value);
          p.final_state[(f + j) / n] = to_storage<T>(v);
        }
      }
      if constexpr (Params::adjoint) {
        if (prm.ds) {
          V x[Items];  // w one element on
          staged::read_run(sg, 2, static_cast<int>(tid), true, T(0), x);
          if (tid < Block - 1) x_after = staged::element(sg, 2, own + Items);
          Params::shift_on(x, x_after);
          std::int64_t rr = r, sq = seq;
#pragma unroll
          for (int j = 0; j < Items; ++j) {
            x[j] = t[j] * (last[j] && f + j < total ? prm.w_init_of(sq) : x[j]);
            if (++rr == n) {
              rr = 0;
              ++sq;
            }
          }
          staged::write_run(sg, 0, static_cast<int>(tid), x);
        }
      }
      staged::write_run(sg, 1, static_cast<int>(tid), t);
      __syncthreads();

      // Stores, striped and coalesced.
      int const valid = static_cast<int>(total - f0 < tile_items ? total - f0 : tile_items);
      staged::store(sg, 1, p.w, f0, 0, valid);
      if constexpr (Params::adjoint)
        if (prm.ds) staged::store(sg, 0, prm.ds, f0, 0, valid);
    }
    detail_async::cp_async_wait<0>();
  }
};

template <class Agent>
__global__ void __launch_bounds__(Agent::block_threads, Agent::min_blocks)
    linrec_pipe_kernel(typename Agent::params prm, typename Agent::status st) {
  extern __shared__ __align__(16) unsigned char linrec_pipe_smem[];
  Agent::run(*reinterpret_cast<typename Agent::temp_storage*>(linrec_pipe_smem), prm, st);
}

}  // namespace recur::kernels
