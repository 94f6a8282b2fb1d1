#pragma once
// The single-pass P-scheme over tiles of the flattened batch (sequences
// laid end to end, element i of sequence k at flat index k n + i).
//
// Per tile, on chip: load coalesced (striped: item j of thread x is element
// j*Block + x) into shared memory, so that each thread then owns a contiguous
// run of Items elements (the paper's rearrangement, done in shared memory);
//   pre-computation: each thread composes its run into one map; a block scan
//                    gives every thread its prefix map and the tile's map;
//   propagation:     decoupled look-back for the tile's incoming state;
//   determination:   each thread re-runs its run from its incoming state,
//                    results go back through shared memory, stored striped.
// Memory is read once and written once. One tile per block, as many blocks
// as tiles; other blocks on the SM hide a block's look-back.

#include <cstdint>

#include "../block/block_scan.cuh"
#include "linrec_params.cuh"

namespace recur::kernels {

// Phases run: `all` in the library. bench/tune_linrec_tiles times the
// others (stop after a phase, difference the times: the paper's method);
// they give wrong results.
enum class linrec_phases { load_store, precompute, propagate, all };

// Params: linrec_params<T> or linrec_adjoint_params<T> (linrec_params.cuh).
template <class T, int Block, int Items, int LookbackDepth, int MinBlocks = 1, int LookbackWords = 1,
          linrec_phases Phases = linrec_phases::all, class Params = linrec_params<T>>
struct agent_linrec_tiles {
  using params = Params;
  static constexpr int block_threads = Block;
  static constexpr int min_blocks = MinBlocks;
  static constexpr int tile_items = Block * Items;
  using V = compute_t<T>;  // T is stored, V computed in (linrec_params.cuh)
  using map = ops::affine<V>;
  using scan = block_scan<map, Block, ops::compose_resetting>;
  using status = linrec_tile_status<V>;
  using fold = linrec_fold<V, 8>;

  // One pad word every 32 so a thread's contiguous run is read without bank
  // conflicts.
  static constexpr int padded(int k) { return k + k / 32; }

  struct temp_storage {
    V s[padded(tile_items)];
    V t[padded(tile_items)];  // holds w after determination
    typename scan::temp_storage scan;
    typename status::template walk_storage<LookbackDepth> walk;
    std::int64_t tile;
    V w_in;
  };

  static std::int64_t tiles(std::int64_t total) { return (total + tile_items - 1) / tile_items; }

  __device__ static void run(temp_storage& ts, Params const& prm, status const& st) {
    unsigned const tid = threadIdx.x;
    if (tid == 0) ts.tile = st.next_tile();
    __syncthreads();
    std::int64_t const tile = ts.tile;
    std::int64_t const n = prm.p.lay.n;
    std::int64_t const total = n * prm.p.lay.count;
    std::int64_t const f0 = tile * tile_items;
    int const valid = static_cast<int>((total - f0 < tile_items ? total - f0 : tile_items));
    std::int64_t const seq0 = f0 / n, off0 = f0 - seq0 * n;

    // Where item k of the tile lives: sequence and index.
    auto locate = [&](int k, std::int64_t& seq, std::int64_t& i) {
      std::int64_t const r = off0 + k;  // < n + tile_items
      if (n >= tile_items) {
        bool const wrap = r >= n;
        seq = seq0 + wrap;
        i = wrap ? r - n : r;
      } else {  // n < tile_items: r fits in 32 bits
        unsigned const q = static_cast<unsigned>(r) / static_cast<unsigned>(n);
        seq = seq0 + q;
        i = r - static_cast<std::int64_t>(q) * n;
      }
    };

    // Load, striped and coalesced; all loads in flight before the first use.
    map m[Items];
#pragma unroll
    for (int j = 0; j < Items; ++j) {
      int const k = j * Block + tid;
      m[j] = ops::affine_identity<V>();
      if (k < valid) {
        std::int64_t seq, i;
        locate(k, seq, i);
        m[j] = prm.step(seq, i, prm.offset(seq, i));
      }
    }
#pragma unroll
    for (int j = 0; j < Items; ++j) {
      int const k = j * Block + tid;
      ts.s[padded(k)] = m[j].a;
      ts.t[padded(k)] = m[j].b;
    }
    __syncthreads();

    // Pre-computation over the thread's contiguous run (m[] is reused; the
    // determination reads the run again from shared memory, which keeps the
    // registers, and so the occupancy, down).
    map run = ops::affine_identity<V>();
    if constexpr (Phases != linrec_phases::load_store) {
#pragma unroll
      for (int j = 0; j < Items; ++j) {
        int const k = padded(static_cast<int>(tid) * Items + j);
        run = ops::compose_resetting{}(run, map{ts.s[k], ts.t[k]});
      }
    }
    map tile_map = run;
    map prefix = run;
    if constexpr (Phases != linrec_phases::load_store)
      prefix = scan::exclusive(ts.scan, run, ops::affine_identity<V>(), ops::compose_resetting{}, tile_map);

    // Propagation: the tile's incoming state.
    if constexpr (Phases == linrec_phases::all || Phases == linrec_phases::propagate) {
      if (tid < 32) {
        if (tile > 0 && tid == 0) st.publish(tile, lookback_aggregate, tile_map);
        V const w_in = tile > 0
                           ? st.template lookback<LookbackDepth, LookbackWords>(tile, 0, ts.walk, tid, fold{})
                           : V(0);
        if (tid == 0) {
          st.publish(tile, lookback_inclusive, {V(0), apply_resetting(tile_map, w_in)});
          if (std::int64_t const q = init_tile_to_await(prm.p, tile, tile_items); q >= 0)
            st.wait_published(q);
          ts.w_in = w_in;
        }
      }
    } else if (tid == 0) {
      ts.w_in = V(0);
    }
    __syncthreads();

    // Determination from the thread's incoming state.
    if constexpr (Phases == linrec_phases::all) {
      V w = apply_resetting(prefix, ts.w_in);
#pragma unroll
      for (int j = 0; j < Items; ++j) {
        int const k = padded(static_cast<int>(tid) * Items + j);
        w = determine(ts.s[k], ts.t[k], w);
        ts.t[k] = w;
      }
    } else if (tid == 0) {
      ts.t[0] += prefix.b + ts.w_in;  // keep the phases' results live
    }
    __syncthreads();
    // What the stores need besides the results (the adjoint's w one element
    // on), loaded here, all at once, rather than held in registers through
    // the scan and the look-back.
    typename Params::aux aux[Items];
#pragma unroll
    for (int j = 0; j < Items; ++j) {
      int const k = j * Block + tid;
      aux[j] = {};
      if (k < valid) {
        std::int64_t seq, i;
        locate(k, seq, i);
        aux[j] = prm.load_aux(seq, i, prm.offset(seq, i));
      }
    }
#pragma unroll
    for (int j = 0; j < Items; ++j) {
      int const k = j * Block + tid;
      if (k < valid) {
        std::int64_t seq, i;
        locate(k, seq, i);
        prm.store(seq, i, prm.offset(seq, i), ts.t[padded(k)], aux[j]);
      }
    }
  }
};

// Dynamic shared memory (a tile may exceed the 48 KB static limit; the
// dispatch raises the kernel's limit with cudaFuncSetAttribute).
template <class Agent>
__global__ void __launch_bounds__(Agent::block_threads, Agent::min_blocks)
    linrec_tiles_kernel(typename Agent::params prm, typename Agent::status st) {
  extern __shared__ __align__(16) unsigned char linrec_tiles_smem[];
  Agent::run(*reinterpret_cast<typename Agent::temp_storage*>(linrec_tiles_smem), prm, st);
}

}  // namespace recur::kernels
