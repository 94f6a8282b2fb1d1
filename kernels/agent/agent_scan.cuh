#pragma once
// Single-pass device-wide scan over any associative operator: tiles of the
// flattened batch, staged through shared memory so that each thread owns a
// contiguous run, a block scan of the runs, the value-space look-back of
// lookback.cuh between tiles, and the results stored from shared memory,
// coalesced. Memory is read once and written once; results are bitwise
// reproducible run to run for any operator.
//
// Batches (layout.count > 1) are one flat scan of segmented values (see
// dispatch_scan.cuh): a segment start resets the scan, and the look-back
// stops at a tile whose aggregate contains one.

#include <cstdint>
#include <cstring>

#include "lookback.cuh"

namespace recur::kernels {

// Operators may say that a value makes everything before it irrelevant.
template <class Op, class V>
__device__ __forceinline__ bool scan_resets(Op const& op, V const& v) {
  if constexpr (requires { op.resets(v); })
    return op.resets(v);
  else
    return false;
}

// A tile's status for a value V: when V and a 32-bit state fit in 16 bytes,
// one word of 8 or 16 bytes (the state in the first 4 bytes, or 8 when V
// holds doubles); larger values are records of 16-byte words of a 4-byte tag
// and 12 bytes of the value each.
template <class V>
inline constexpr int scan_tag_bytes = alignof(V) > 4 ? 8 : 4;
template <class V>
inline constexpr bool scan_packed = scan_tag_bytes<V> + sizeof(V) <= 16 && alignof(V) <= 8;
template <class V>
using scan_record =
    std::conditional_t<scan_packed<V>,
                       tagged_record<V, scan_tag_bytes<V> + sizeof(V) <= 8 ? 8 : 16, scan_tag_bytes<V>>,
                       tagged_record<V, 16, 4>>;
template <class V>
using scan_tile_status = tile_status<scan_record<V>>;

// The look-back's fold: op(...op(op(base, A_(j+1)), A_(j+2))..., A_(k-1)),
// eight shared-memory loads ahead of the chain of operations. The remainder
// loop stays rolled: nvcc 13.0 (sm_90, -O2) miscompiles it when it unrolls
// it for some value types (segmented values of 16, 20 and 28 bytes: folds of
// 4 or more entries came out wrong; test_device_scan's
// segmented_padded_values). It is at most 7 operations.
template <class V, class Op>
struct scan_fold {
  using result = V;
  Op const& op;
  __device__ __forceinline__ bool ends(V const& v) const { return scan_resets(op, v); }
  template <class Stack>
  __device__ __forceinline__ V operator()(V const& base, Stack const& stack, int depth) const {
    return fold_stack<8, true>(base, stack, depth, [&](V const& acc, V const& x) { return op(acc, x); });
  }
};

// Where the data is and what to write: `Access` provides
//   V load(seq, i) const         element i of sequence seq as a scan value
//                                (the initial value folded into i == 0)
//   V start_value(seq) const     the exclusive output at a sequence start
//   void store(seq, i, V) const  write an output
//   bool exclusive
//   layout lay
template <class V, class Op, class Access, int Block, int Items, int LookbackDepth, int LookbackWords = 1,
          int MinBlocks = 1>
struct agent_scan {
  static constexpr int block_threads = Block;
  static constexpr int min_blocks = MinBlocks;  // per SM, for __launch_bounds__
  static constexpr int tile_items = Block * Items;
  static constexpr int warps = Block / 32;
  static_assert(Block % 32 == 0 && Block <= 1024);
  using status = scan_tile_status<V>;

  // One pad element every 32 so a thread's contiguous run is read without
  // bank conflicts (for 4-byte values; wider values conflict less anyway).
  static constexpr int padded(int k) { return k + k / 32; }

  // The vector path: a flat access (one sequence, unit stride, 16-byte
  // aligned data; Access::flat) and a whole tile moved in 16-byte chunks,
  // whenever a thread's run is a whole number C of chunks (C = 4 for runs of
  // 64 bytes: 16 f32, 8 affine f32; C = 18 for 8 3x3 f32 matrices). Global
  // chunk g of the tile belongs to thread o = g / C (its chunk c = g % C)
  // and lives in shared-memory slot C o + (c + o / R) mod C, R = 8 /
  // gcd(C, 8): the owners' 16-byte reads of one chunk c (8 lanes per
  // shared-memory wavefront) then fall in 8 different bank groups, and the
  // striped 16-byte stores stay in order within each run (for C = 4 this is
  // the layout of agent_linrec_pipe.cuh). Values may straddle chunks: runs
  // are copied as bytes into and out of registers.
  static constexpr int run_chunks =
      (Items * sizeof(V)) % 16 == 0 && alignof(V) <= 16 ? int(Items * sizeof(V) / 16) : 0;
  static constexpr bool vector_path = [] {
    if constexpr (requires { Access::flat; })
      return Access::flat && run_chunks > 0;
    else
      return false;
  }();
  // A run of large values is read, combined and written in parts of at most
  // 144 bytes (whole chunks, whole values), so that fewer of its values are
  // live in registers at once: 8 3x3 f32 matrices (288 bytes) in two parts
  // of 4. The loads of a tile are issued in as many parts.
  static constexpr int run_parts = [] {
    if (run_chunks == 0) return 1;
    int p = 1;
    while (Items % (2 * p) == 0 && run_chunks % (2 * p) == 0 && run_chunks / p > 9 &&
           (Items / (2 * p)) * sizeof(V) % 16 == 0)
      p *= 2;
    return p;
  }();
  static constexpr int part_items = Items / run_parts,
                       part_chunks = run_chunks > 0 ? run_chunks / run_parts : 0;
  static constexpr int gcd8(int c) { return c % 8 == 0 ? 8 : c % 4 == 0 ? 4 : c % 2 == 0 ? 2 : 1; }
  static constexpr int rotate_every = 8 / gcd8(run_chunks > 0 ? run_chunks : 1);
  __device__ static constexpr int chunk_slot(int g) {
    int const o = g / run_chunks, c = g % run_chunks;
    return run_chunks * o + (c + o / rotate_every) % run_chunks;
  }

  struct temp_storage {
    alignas(16) V items[padded(tile_items)];
    V warp_total[warps];
    typename status::template walk_storage<LookbackDepth> walk;
    V exclusive;  // the tile's exclusive prefix
    std::int64_t tile;
  };

  static std::int64_t tiles(std::int64_t total) { return (total + tile_items - 1) / tile_items; }

  __device__ static void run(temp_storage& ts, Access const& acc, Op const& op, status const& st) {
    if (threadIdx.x == 0) ts.tile = st.next_tile();
    __syncthreads();
    std::int64_t const tile = ts.tile;
    std::int64_t const total = acc.lay.n * acc.lay.count;
    if constexpr (vector_path) {
      if (total - tile * tile_items >= tile_items) return body<true>(ts, acc, op, st, tile);
    }
    body<false>(ts, acc, op, st, tile);
  }

  // The vector path: part `part` of a thread's run (items r0 + part_items
  // part ..) into registers from its swizzled chunks, and back.
  __device__ static void read_part(temp_storage const& ts, int r0, int part, V (&x)[part_items]) {
    int const o = r0 / Items;
    auto* const bytes = reinterpret_cast<unsigned char*>(x);
#pragma unroll
    for (int c = 0; c < part_chunks; ++c) {
      uint4 const w =
          reinterpret_cast<uint4 const*>(ts.items)[chunk_slot(run_chunks * o + part_chunks * part + c)];
      std::memcpy(bytes + 16 * c, &w, 16);
    }
  }
  __device__ static void write_part(temp_storage& ts, int r0, int part, V const (&x)[part_items]) {
    int const o = r0 / Items;
    auto const* const bytes = reinterpret_cast<unsigned char const*>(x);
#pragma unroll
    for (int c = 0; c < part_chunks; ++c) {
      uint4 w;
      std::memcpy(&w, bytes + 16 * c, 16);
      reinterpret_cast<uint4*>(ts.items)[chunk_slot(run_chunks * o + part_chunks * part + c)] = w;
    }
  }

  template <bool Vec>
  __device__ static void body(temp_storage& ts, Access const& acc, Op const& op, status const& st,
                              std::int64_t const tile) {
    unsigned const tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    std::int64_t const n = acc.lay.n;
    std::int64_t const total = n * acc.lay.count;
    std::int64_t const f0 = tile * tile_items;
    int const valid = static_cast<int>(total - f0 < tile_items ? total - f0 : tile_items);
    std::int64_t const seq0 = f0 / n, off0 = f0 - seq0 * n;
    auto locate = [&](int k, std::int64_t& seq, std::int64_t& i) {
      std::int64_t const r = off0 + k;
      if (n >= tile_items) {
        bool const wrap = r >= n;
        seq = seq0 + wrap;
        i = wrap ? r - n : r;
      } else {
        std::int64_t const q = r / n;
        seq = seq0 + q;
        i = r - q * n;
      }
    };

    // Load striped (coalesced for unit element stride), all loads in flight
    // before the first shared-memory store.
    if constexpr (Vec) {
      auto const* src = reinterpret_cast<uint4 const*>(acc.in + f0);
#pragma unroll
      for (int part = 0; part < run_parts; ++part) {
        uint4 w[part_chunks];
#pragma unroll
        for (int j = 0; j < part_chunks; ++j)
          w[j] = src[(part * part_chunks + j) * Block + static_cast<int>(tid)];
#pragma unroll
        for (int j = 0; j < part_chunks; ++j)
          reinterpret_cast<uint4*>(ts.items)[chunk_slot((part * part_chunks + j) * Block + int(tid))] = w[j];
      }
    } else {
      V x[Items];
#pragma unroll
      for (int j = 0; j < Items; ++j) {
        int const k = j * Block + static_cast<int>(tid);
        if (k < valid) {
          std::int64_t seq, i;
          locate(k, seq, i);
          x[j] = acc.load(seq, i);
        }
      }
#pragma unroll
      for (int j = 0; j < Items; ++j) {
        int const k = j * Block + static_cast<int>(tid);
        if (k < valid) ts.items[padded(k)] = x[j];
      }
    }
    __syncthreads();

    // The thread's run: items tid*Items .. (only the valid ones). The vector
    // path reads raw values: the initial value is folded into element 0 here
    // (by its owner, thread 0 of tile 0), as Access::load does otherwise.
    int const r0 = static_cast<int>(tid) * Items;
    int const rn = valid - r0 < Items ? (valid - r0 > 0 ? valid - r0 : 0) : Items;
    bool init_here = false;
    if constexpr (Vec) init_here = tile == 0 && tid == 0 && acc.has_init;
    V run{};
    if constexpr (Vec) {
#pragma unroll
      for (int part = 0; part < run_parts; ++part) {
        V x[part_items];
        read_part(ts, r0, part, x);
        if (part == 0 && init_here) x[0] = op(acc.init, x[0]);
#pragma unroll
        for (int j = 0; j < part_items; ++j) run = part == 0 && j == 0 ? x[0] : op(run, x[j]);
      }
    } else if (rn > 0) {
      // (one value at a time: values may be large, 3x3 matrices and more)
      run = ts.items[padded(r0)];
      for (int j = 1; j < rn; ++j) run = op(run, ts.items[padded(r0 + j)]);
    }

    // Block scan of the runs (threads without items hold nothing and must not
    // take part in the combination: runs are a prefix of the threads, so the
    // inclusive scan up to the last thread with items is exact).
    int const active = (valid + Items - 1) / Items;  // threads with items
    V inc = run;
#pragma unroll
    for (unsigned d = 1; d < 32; d *= 2) {
      V const u = shfl_up(inc, d);
      if (lane >= d && int(tid) < active) inc = op(u, inc);
    }
    int const last_in_warp =
        active - 1 - static_cast<int>(warp) * 32;  // lane of the warp's last active thread
    if (last_in_warp >= 0 && int(lane) == (last_in_warp < 31 ? last_in_warp : 31)) ts.warp_total[warp] = inc;
    __syncthreads();
    int const active_warps = (active + 31) / 32;
    if (warp == 0) {
      V w = ts.warp_total[int(lane) < active_warps ? lane : 0];
#pragma unroll
      for (unsigned d = 1; d < 32; d *= 2) {
        V const u = shfl_up(w, d);
        if (lane >= d && int(lane) < active_warps) w = op(u, w);
      }
      __syncwarp();  // every lane has read before any writes
      if (int(lane) < active_warps) ts.warp_total[lane] = w;
    }
    __syncthreads();
    V const aggregate = ts.warp_total[active_warps - 1];
    // The thread's exclusive prefix within the tile.
    V const up = shfl_up(inc, 1);
    bool const has_prefix = tid > 0;
    V prefix = up;
    if (warp > 0) prefix = lane == 0 ? ts.warp_total[warp - 1] : op(ts.warp_total[warp - 1], up);

    // The tile's exclusive prefix.
    if (warp == 0) {
      if (tile == 0) {
        if (lane == 0) st.publish(0, lookback_inclusive, aggregate);
      } else {
        if (lane == 0) st.publish(tile, lookback_aggregate, aggregate);
        V const e =
            st.template lookback<LookbackDepth, LookbackWords>(tile, 0, ts.walk, lane, scan_fold<V, Op>{op});
        if (lane == 0) {
          st.publish(tile, lookback_inclusive, op(e, aggregate));
          ts.exclusive = e;
        }
      }
    }
    __syncthreads();

    // Determination: re-run the thread's items from its incoming value.
    if (rn > 0) {
      bool has = tile > 0 || has_prefix;
      V a{};
      if (tile > 0)
        a = has_prefix ? op(ts.exclusive, prefix) : ts.exclusive;
      else if (has_prefix)
        a = prefix;
      if constexpr (Vec) {
#pragma unroll
        for (int part = 0; part < run_parts; ++part) {
          V x[part_items];
          read_part(ts, r0, part, x);
          if (part == 0 && init_here) x[0] = op(acc.init, x[0]);
#pragma unroll
          for (int j = 0; j < part_items; ++j) {
            V const before = a;
            a = has ? op(a, x[j]) : x[j];
            // Exclusive: the initial value at element 0, elsewhere the
            // inclusive prefix of the element before.
            if (acc.exclusive)
              x[j] = f0 + r0 + part * part_items + j == 0 ? acc.start_value(0) : before;
            else
              x[j] = a;
            has = true;
          }
          write_part(ts, r0, part, x);
        }
      } else {
        for (int j = 0; j < rn; ++j) {
          int const k = padded(r0 + j);
          V const xj = ts.items[k];
          V const before = a;
          a = has ? op(a, xj) : xj;
          if (acc.exclusive) {
            // An exclusive output at a sequence start is the initial value;
            // elsewhere the inclusive prefix of the element before.
            std::int64_t seq, i;
            locate(r0 + j, seq, i);
            ts.items[k] = i == 0 ? acc.start_value(seq) : before;
          } else {
            ts.items[k] = a;
          }
          has = true;
        }
      }
    }
    __syncthreads();
    if constexpr (Vec) {
      auto* dst = reinterpret_cast<uint4*>(acc.out + f0);
#pragma unroll
      for (int j = 0; j < run_chunks; ++j)
        dst[j * Block + static_cast<int>(tid)] =
            reinterpret_cast<uint4 const*>(ts.items)[chunk_slot(j * Block + int(tid))];
    } else {
#pragma unroll
      for (int j = 0; j < Items; ++j) {
        int const k = j * Block + static_cast<int>(tid);
        if (k < valid) {
          std::int64_t seq, i;
          locate(k, seq, i);
          acc.store(seq, i, ts.items[padded(k)]);
        }
      }
    }
  }
};

// The access and the operator stay in parameter space (__grid_constant__):
// an operator may carry tables (a filter's matrix powers) that must not be
// copied per thread.
template <class Agent, class V, class Op, class Access>
__global__ void __launch_bounds__(Agent::block_threads, Agent::min_blocks)
    scan_kernel(__grid_constant__ Access const acc, __grid_constant__ Op const op, scan_tile_status<V> st) {
  extern __shared__ __align__(16) unsigned char scan_smem[];
  Agent::run(*reinterpret_cast<typename Agent::temp_storage*>(scan_smem), acc, op, st);
}

}  // namespace recur::kernels
