#pragma once
// Batches wide enough to fill the chip: one block scans a whole sequence from
// its start to its end, tile after tile, carrying the state from one tile to
// the next in registers. No tile status, no look-back, no workspace: the
// state a tile needs is the block's own previous result.
//
// Persistent: block b takes sequences b, b + G, b + 2G, ... (G blocks). Its
// tiles form one stream, across sequence boundaries too, in which the copies
// of the next Stages - 1 tiles (staged_tile.cuh, cp.async) are in flight
// while the current tile is scanned.
//
// Sequences are contiguous in memory (element stride 1, or -1 for the host
// API's mirrored reverse view) at any batch stride. Tiles are aligned in
// memory: a sequence's first tile begins `lead` elements before its element
// 0 (at the 16-byte boundary below it; above it for stride -1), so all but a
// sequence's first and last 16-byte chunks move whole. s, t and w must be
// congruent modulo 16 bytes (as arrays from one allocator are).
//
// Per tile, in sequence order (for stride -1 thread x owns the memory run of
// owner Block-1-x, reversed): positions outside the sequence become the
// identity map and element 0 the constant map (0, s_0 init + t_0); a block
// scan of the owners' composed runs gives each thread its prefix and the
// tile's map; each thread determines its run from its prefix applied to the
// carried state, and the carried state becomes the tile's map applied to it.
// The order of every operation depends only on the shape: bitwise
// reproducible.
//
// The adjoint (linrec_adjoint_params) stages s, g and w: a thread's
// coefficients are s one element back and its w one element on, in scan
// order, the element beyond its run read from the neighbouring run's slots
// or, at the tile's edges, by thread 0 (s) and the last thread (w) from
// global memory. dt goes back through g's slots, ds through s's.

#include <cstdint>

#include "../block/block_scan.cuh"
#include "linrec_params.cuh"
#include "staged_tile.cuh"

namespace recur::kernels {

template <class T, int Block, int Items, int Stages, int MinBlocks, class Params = linrec_params<T>>
struct agent_linrec_rows {
  using params = Params;
  static constexpr int block_threads = Block;
  static constexpr int min_blocks = MinBlocks;
  using staged = staged_tile<T, Block, Items, Params::staged_arrays>;
  static constexpr int tile_items = staged::tile_items;
  static_assert(Stages >= 2, "at least two stages: one being worked on, one in flight");
  using V = compute_t<T>;  // T is stored (the copies), V computed in (linrec_params.cuh)
  using map = ops::affine<V>;
  using scan = block_scan<map, Block, ops::compose_resetting>;

  struct temp_storage {
    typename staged::storage st[Stages];
    typename scan::temp_storage scan;
  };

  // Whether the problem is one this agent serves: sequences contiguous in
  // memory, every array congruent modulo 16 bytes.
  static bool serves(Params const& prm) {
    auto const& p = prm.p;
    auto const phase = [](void const* q) { return reinterpret_cast<std::uintptr_t>(q) & 15; };
    if (!(p.lay.n > 0 && p.lay.count > 0 && (p.lay.element_stride == 1 || p.lay.element_stride == -1)))
      return false;
    for (void const* a : prm.arrays())
      if (a && phase(a) != phase(p.w)) return false;
    return true;
  }

  // A place in the block's stream of tiles.
  struct cursor {
    std::int64_t seq;    // >= count: past the block's last tile
    std::int64_t tile;   // within the sequence
    std::int64_t tiles;  // of the sequence
    int lead;            // positions before element 0 in the sequence's first tile
  };

  __device__ static cursor first(detail::linrec_problem<T> const& p, std::int64_t seq) {
    cursor k{seq, 0, 0, 0};
    if (seq < p.lay.count) {
      constexpr int per_chunk = staged::per_chunk;
      auto const address = reinterpret_cast<std::uintptr_t>(p.w + seq * p.lay.batch_stride);
      int const phase = static_cast<int>(address % 16 / sizeof(T));  // element 0's place in its chunk
      k.lead = p.lay.element_stride > 0 ? phase : per_chunk - 1 - phase;
      k.tiles = (k.lead + p.lay.n + tile_items - 1) / tile_items;
    }
    return k;
  }
  __device__ static void advance(detail::linrec_problem<T> const& p, cursor& k) {
    if (++k.tile == k.tiles) k = first(p, k.seq + gridDim.x);
  }

  // Where a tile lies: base, the offset of its lowest address; [lo, hi), the
  // tile positions inside the sequence; [mlo, mhi), the same in memory order.
  struct span {
    std::int64_t base;
    std::int64_t i0;  // element index of tile position 0 (negative in the lead)
    int lo, hi, mlo, mhi;
  };

  __device__ static span locate(detail::linrec_problem<T> const& p, cursor const& k) {
    span sp;
    sp.i0 = k.tile * tile_items - k.lead;
    std::int64_t const n = p.lay.n, row = k.seq * p.lay.batch_stride;
    sp.lo = sp.i0 < 0 ? static_cast<int>(-sp.i0) : 0;
    sp.hi = n - sp.i0 < tile_items ? static_cast<int>(n - sp.i0) : tile_items;
    if (p.lay.element_stride > 0) {
      sp.base = row + sp.i0;
      sp.mlo = sp.lo;
      sp.mhi = sp.hi;
    } else {  // position l at offset row - i0 - l
      sp.base = row - sp.i0 - (tile_items - 1);
      sp.mlo = tile_items - sp.hi;
      sp.mhi = tile_items - sp.lo;
    }
    return sp;
  }

  // Starts the copies of the tile at k (none past the stream's end) and
  // commits them: one group per call, so the group count stays uniform.
  __device__ static void copy(typename staged::storage& sg, Params const& prm, cursor const& k) {
    if (k.seq < prm.p.lay.count) {
      span const sp = locate(prm.p, k);
      T const* src[staged::arrays];
#pragma unroll
      for (int a = 0; a < staged::arrays; ++a) src[a] = prm.staged_input(a);
      staged::copy_in(sg, src, sp.base, sp.mlo, sp.mhi);
    }
    detail_async::cp_async_commit();
  }

  template <class A>
  __device__ static void reverse(A (&x)[Items]) {
#pragma unroll
    for (int j = 0; j < Items / 2; ++j) {
      A const v = x[j];
      x[j] = x[Items - 1 - j];
      x[Items - 1 - j] = v;
    }
  }

  __device__ static void run(temp_storage& ts, Params const& prm) {
    detail::linrec_problem<T> const& p = prm.p;
    bool const reversed = p.lay.element_stride < 0;
    int const tid = static_cast<int>(threadIdx.x);
    int const owner = reversed ? Block - 1 - tid : tid;

    cursor load = first(p, blockIdx.x);
    cursor cur = load;
#pragma unroll
    for (int k = 0; k < Stages - 1; ++k) {
      copy(ts.st[k], prm, load);
      advance(p, load);
    }

    V carry = V(0);  // the state after the previous tile of the sequence
    for (int it = 0; cur.seq < p.lay.count; ++it) {
      // This thread's copies of tile `it` have landed (later ones may still be
      // in flight); the barrier makes everyone's visible and ends every use
      // of the stage of tile it - 1, which the copies of tile
      // it + Stages - 1 then refill.
      detail_async::cp_async_wait<Stages - 2>();
      __syncthreads();
      copy(ts.st[(it + Stages - 1) % Stages], prm, load);
      advance(p, load);

      typename staged::storage& sg = ts.st[it % Stages];
      span const sp = locate(p, cur);
      V s[Items], t[Items];
      staged::read_run(sg, 0, owner, p.s != nullptr, p.s_value, s);
      staged::read_run(sg, 1, owner, p.t != nullptr, p.t_value, t);
      if (reversed) {
        reverse(s);
        reverse(t);
      }
      // The run's positions of the sequence's elements 0 and n - 1 (-1 if
      // not in it), and its window of positions inside the sequence.
      std::int64_t const n = p.lay.n;
      std::int64_t const i = sp.i0 + tid * Items;  // element index of the run's first position
      int const at_first = i <= 0 && -i < Items ? static_cast<int>(-i) : -1;
      int const at_end = i <= n - 1 && n - 1 - i < Items ? static_cast<int>(n - 1 - i) : -1;
      int const at_last = p.final_state ? at_end : -1;
      int const lo = sp.lo - tid * Items, hi = sp.hi - tid * Items;
      // Tile position q (scan order) in memory order.
      auto const mem = [&](int q) { return reversed ? tile_items - 1 - q : q; };
      // The adjoint's neighbours beyond the run in scan order: s before it
      // (the coefficient of its first element), w after it (for its last
      // ds, used after the scan; loaded now by the last thread, the one
      // that reads it from global memory).
      V x_after = V(0);
      if constexpr (Params::adjoint) {
        V s_before = to_compute(p.s_value);
        if (p.s) {
          if (tid > 0)
            s_before = staged::element(sg, 0, mem(tid * Items - 1));
          else if (i >= 1 && i <= n)
            s_before = prm.s_at(prm.offset(cur.seq, i - 1));
        }
        Params::shift_back(s, s_before);
        if (prm.ds && tid == Block - 1 && i + Items >= 0 && i + Items < n)
          x_after = to_compute(prm.w[prm.offset(cur.seq, i + Items)]);
      }
      map run = ops::affine_identity<V>();
#pragma unroll
      for (int j = 0; j < Items; ++j) {
        if (j < lo || j >= hi) {
          s[j] = V(1);
          t[j] = V(0);
        } else if (j == at_first) {
          if constexpr (Params::adjoint) s[j] = V(1);  // the adjoint's coefficient at element 0
          t[j] = fma(s[j], prm.init_of(cur.seq), t[j]);
          s[j] = V(0);
        }
        run = ops::compose_resetting{}(run, map{s[j], t[j]});
      }
      map tile_map;
      map const prefix =
          scan::exclusive(ts.scan, run, ops::affine_identity<V>(), ops::compose_resetting{}, tile_map);

      // Determination: w (dt) back to t's slots, the adjoint's ds to s's
      // (read above, and the final state's s from the owner's own slots
      // before they are written). w's slots stay as copied until the next
      // iteration's copies, so ds reads its run there now.
      V w = apply_resetting(prefix, carry);
#pragma unroll
      for (int j = 0; j < Items; ++j) {
        w = determine(s[j], t[j], w);
        t[j] = w;
        if (j == at_last) {
          V v = w;
          if constexpr (Params::adjoint)
            v *= p.s ? staged::element(sg, 0, mem(tid * Items + j)) : to_compute(p.s_value);
          p.final_state[cur.seq] = to_storage<T>(v);
        }
      }
      carry = apply_resetting(tile_map, carry);
      if constexpr (Params::adjoint) {
        if (prm.ds) {
          V x[Items];  // w one element on, in scan order
          staged::read_run(sg, 2, owner, true, T(0), x);
          if (reversed) reverse(x);
          if (tid < Block - 1) x_after = staged::element(sg, 2, mem(tid * Items + Items));
          Params::shift_on(x, x_after);
          V const x_end = at_end >= 0 ? prm.w_init_of(cur.seq) : V(0);  // x at element n - 1
#pragma unroll
          for (int j = 0; j < Items; ++j) x[j] = t[j] * (j == at_end ? x_end : x[j]);
          if (reversed) reverse(x);
          staged::write_run(sg, 0, owner, x);
        }
      }
      if (reversed) reverse(t);
      staged::write_run(sg, 1, owner, t);
      __syncthreads();
      staged::store(sg, 1, p.w, sp.base, sp.mlo, sp.mhi);
      if constexpr (Params::adjoint)
        if (prm.ds) staged::store(sg, 0, prm.ds, sp.base, sp.mlo, sp.mhi);
      advance(p, cur);
    }
    detail_async::cp_async_wait<0>();
  }
};

// Dynamic shared memory (the stages exceed the 48 KB static limit; the
// dispatch raises the kernel's limit with cudaFuncSetAttribute).
template <class Agent>
__global__ void __launch_bounds__(Agent::block_threads, Agent::min_blocks)
    linrec_rows_kernel(typename Agent::params prm) {
  extern __shared__ __align__(16) unsigned char linrec_rows_smem[];
  Agent::run(*reinterpret_cast<typename Agent::temp_storage*>(linrec_rows_smem), prm);
}

}  // namespace recur::kernels
