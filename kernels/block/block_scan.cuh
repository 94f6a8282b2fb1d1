#pragma once
// Block-wide scans over any associative operator and any trivially copyable
// value whose size is a multiple of 4 bytes. Order is preserved, so the
// operator need not commute; the combination order depends only on the
// algorithm, the block size and the items per thread, so results are bitwise
// reproducible.
//
// Items per thread (register packing): thread x holds items x*Items ..
// x*Items+Items-1 (blocked arrangement). It folds them sequentially, the block
// scans the thread totals, and each thread re-scans its items in registers
// from its prefix.
//
// Every thread of the block must call, with threadIdx.y == threadIdx.z == 0
// (a one-dimensional block of Block threads). temp_storage may be reused after
// a __syncthreads().

#include "../warp/warp_scan.cuh"

namespace recur::kernels {

enum class block_scan_algorithm {
  // Hillis-Steele in each warp (shuffles), the warp totals scanned by warp 0:
  // two block barriers, Block / 32 values of shared memory.
  hillis_steele,
  // Blelloch's work-efficient up-sweep/down-sweep tree over the Block values
  // in shared memory, padded against bank conflicts
  // (detail_collective::blelloch_tree); the levels of at most 32 pairs run in
  // warp 0 alone: 2 log2(Block / 64) + 2 block barriers for Block > 64, else
  // two. Block a power of two.
  blelloch,
};

namespace detail_collective {

template <class T, int Block, block_scan_algorithm Alg>
struct block_scan_storage;

template <class T, int Block>
struct block_scan_storage<T, Block, block_scan_algorithm::hillis_steele> {
  T warp_total[Block / 32];
};

template <class T, int Block>
struct block_scan_storage<T, Block, block_scan_algorithm::blelloch> {
  typename blelloch_tree<T, Block>::storage tree;
};

}  // namespace detail_collective

template <class T, int Block, class Op, block_scan_algorithm Alg = block_scan_algorithm::hillis_steele,
          int Items = 1>
struct block_scan {
  static_assert(Block % 32 == 0 && Block <= 1024, "block size must be a multiple of 32, at most 1024");
  static_assert(Alg != block_scan_algorithm::blelloch || (Block & (Block - 1)) == 0,
                "the Blelloch block scan needs a power-of-two block size");
  static_assert(Items >= 1, "at least one item per thread");
  static constexpr int warps = Block / 32;
  static constexpr int items = Items;
  using warp_scan = warp_scan_hillis_steele<T, Op>;
  using temp_storage = detail_collective::block_scan_storage<T, Block, Alg>;

  // One value per thread. Returns the thread's exclusive prefix (identity
  // for thread 0); aggregate gets the block total.
  __device__ __forceinline__ static T exclusive(temp_storage& ts, T v, T identity, Op op, T& aggregate) {
    T const before = prefix(ts, v, op, aggregate);
    return threadIdx.x == 0 ? identity : before;
  }

  // One value per thread. Returns the thread's inclusive prefix; aggregate
  // gets the block total.
  __device__ __forceinline__ static T inclusive(temp_storage& ts, T v, Op op, T& aggregate) {
    if constexpr (Alg == block_scan_algorithm::hillis_steele) {
      T before;
      T const inc = hs_warp_inclusive(ts, v, op, before, aggregate);
      return threadIdx.x < 32 ? inc : op(before, inc);
    } else {
      T const before = prefix(ts, v, op, aggregate);
      return threadIdx.x == 0 ? v : op(before, v);
    }
  }

  // Items per thread, scanned in place: items[j] becomes the combination of
  // all block items before it (identity for the block's first item);
  // aggregate gets the block total.
  __device__ __forceinline__ static void exclusive(temp_storage& ts, T (&items)[Items], T identity, Op op,
                                                   T& aggregate) {
    T const before = prefix(ts, fold(items, op), op, aggregate);
    T x = threadIdx.x == 0 ? identity : before;
#pragma unroll
    for (int j = 0; j < Items; ++j) {
      T const v = items[j];
      items[j] = x;
      x = op(x, v);
    }
  }

  // Items per thread, scanned in place: items[j] becomes the combination of
  // all block items up to and including it; aggregate gets the block total.
  __device__ __forceinline__ static void inclusive(temp_storage& ts, T (&items)[Items], Op op, T& aggregate) {
    T const before = prefix(ts, fold(items, op), op, aggregate);
    if (threadIdx.x == 0) {  // nothing before: the thread's own scan
#pragma unroll
      for (int j = 1; j < Items; ++j) items[j] = op(items[j - 1], items[j]);
    } else {
      T x = before;
#pragma unroll
      for (int j = 0; j < Items; ++j) items[j] = x = op(x, items[j]);
    }
  }

 private:
  __device__ __forceinline__ static T fold(T const (&items)[Items], Op op) {
    T total = items[0];
#pragma unroll
    for (int j = 1; j < Items; ++j) total = op(total, items[j]);
    return total;
  }

  // Hillis-Steele: returns v's inclusive scan within its warp; `before` gets
  // the combination of all earlier warps (undefined in warp 0), aggregate the
  // block total.
  __device__ __forceinline__ static T hs_warp_inclusive(temp_storage& ts, T v, Op op, T& before,
                                                        T& aggregate) {
    unsigned const lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    T const inc = warp_scan::inclusive(v, op, lane);
    if (lane == 31) ts.warp_total[warp] = inc;
    __syncthreads();
    if (warp == 0) {
      // Lanes past the last warp repeat its total: an inclusive scan never
      // carries them into the lanes that are kept.
      T x = ts.warp_total[lane < warps ? lane : warps - 1];
      x = warp_scan::inclusive(x, op, lane);
      __syncwarp();  // every lane has read before any writes
      if (lane < warps) ts.warp_total[lane] = x;  // now inclusive prefix over warps
    }
    __syncthreads();
    aggregate = ts.warp_total[warps - 1];
    if (warp > 0) before = ts.warp_total[warp - 1];
    return inc;
  }

  // The thread's exclusive prefix: the combination of the values of all
  // earlier threads (undefined in thread 0); aggregate gets the block total.
  __device__ __forceinline__ static T prefix(temp_storage& ts, T v, Op op, T& aggregate) {
    if constexpr (Alg == block_scan_algorithm::hillis_steele) {
      T before;
      T const inc = hs_warp_inclusive(ts, v, op, before, aggregate);
      T const up = shfl_up(inc, 1);
      if (threadIdx.x < 32) return up;
      return threadIdx.x % 32 == 0 ? before : op(before, up);
    } else {
      using tree = detail_collective::blelloch_tree<T, Block>;
      tree::store(ts.tree, int(threadIdx.x), v);
      __syncthreads();
      tree::scan(ts.tree, threadIdx.x, op);
      __syncthreads();
      aggregate = tree::load_total(ts.tree);
      return tree::load(ts.tree, int(threadIdx.x));
    }
  }
};

}  // namespace recur::kernels
