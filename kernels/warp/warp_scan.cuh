#pragma once
// Warp-wide scans over any associative operator and any trivially copyable
// value whose size is a multiple of 4 bytes. Both keep the order of the
// operands (op(l, r): l's elements come first), so non-commutative operators
// (map composition, matrix products) are fine, and both combine in an order
// fixed by the algorithm alone, so results are bitwise reproducible.
//
//   warp_scan_hillis_steele: step-efficient, log2(32) shuffle steps, no
//                            shared memory.
//   warp_scan_blelloch:      work-efficient up-sweep/down-sweep tree over the
//                            warp's 32 values in shared memory (57
//                            combinations for an exclusive scan against
//                            Hillis-Steele's 129, but twice the levels).
//
// Every lane of the warp must call (full mask), lane being threadIdx.x % 32.

#include <cstring>
#include <type_traits>

#include "../thread/thread_ops.cuh"

namespace recur::kernels {

namespace detail_collective {

// The Blelloch tree (Blelloch 1990; GPU Gems 3 ch. 39, Harris, Sengupta,
// Owens) over N values in shared memory, scanned by the N threads 0 .. N-1
// (index i), N a power of two, at least 32.
//
// Storage: word k of value i lives at w[k][padded(i)], one plane of 32-bit
// words per word of T. The bank of an access then depends on the index alone,
// as for a scan of ints, whatever the size of T, and the conflict-free offset
// (one pad word every 32) spreads every level's strided accesses over distinct
// banks (unpadded, the middle levels of a 1024-entry tree conflict 32-way).
// For the 32 entries of a warp the offset is zero: at most 16 pairs, strided
// across 32 consecutive words, never share a bank.
//
// The down-sweep needs no identity: the leftmost subtree of every level has
// no prefix, so its right child just takes the left child's sum. Entry 0's
// exclusive prefix is left undefined; callers supply their identity there or
// need none (inclusive scans). The root never goes back into the tree: it is
// the total, written to its own slot.
template <class T, int N>
struct blelloch_tree {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) % 4 == 0,
                "scanned values must be trivially copyable, a multiple of 4 bytes");
  static_assert(N >= 32 && N <= 1024 && (N & (N - 1)) == 0, "the tree spans a power of two from 32 to 1024");
  static constexpr int words = sizeof(T) / 4;
  static constexpr int log_banks = 5;
  static constexpr int padded(int i) { return i + (i >> log_banks); }

  struct storage {
    unsigned w[words][padded(N - 1) + 1];
    unsigned total[words];
  };

  __device__ __forceinline__ static T load(storage const& s, int i) {
    unsigned w[words];
#pragma unroll
    for (int k = 0; k < words; ++k) w[k] = s.w[k][padded(i)];
    T v;
    std::memcpy(&v, w, sizeof(T));
    return v;
  }

  __device__ __forceinline__ static void store(storage& s, int i, T const& v) {
    unsigned w[words];
    std::memcpy(w, &v, sizeof(T));
#pragma unroll
    for (int k = 0; k < words; ++k) s.w[k][padded(i)] = w[k];
  }

  __device__ __forceinline__ static T load_total(storage const& s) {
    T v;
    std::memcpy(&v, s.total, sizeof(T));
    return v;
  }

  // Pair t of the level whose two nodes lie `offset` apart: the left node
  // covers the `offset` entries before the right one's.
  __device__ __forceinline__ static int left_node(int offset, int t) { return offset * (2 * t + 1) - 1; }

  // Up-sweep: the right node gets the sum of both subtrees, left first. The
  // root level (one pair) writes the total slot instead.
  template <class Op>
  __device__ __forceinline__ static void up_pair(storage& s, int offset, int t, Op op) {
    int const l = left_node(offset, t), r = l + offset;
    T const sum = op(load(s, l), load(s, r));
    if (offset == N / 2) {
      std::memcpy(s.total, &sum, sizeof(T));
    } else {
      store(s, r, sum);
    }
  }

  // Down-sweep: the right node holds the prefix of the pair's range; the left
  // child inherits it, the right child gets it followed by the left sum.
  template <class Op>
  __device__ __forceinline__ static void down_pair(storage& s, int offset, int t, Op op) {
    int const l = left_node(offset, t), r = l + offset;
    T const left_sum = load(s, l);
    if (t == 0) {  // no prefix: the range starts at entry 0
      store(s, r, left_sum);
      return;
    }
    T const prefix = load(s, r);
    store(s, l, prefix);
    store(s, r, op(prefix, left_sum));
  }

  // The levels of at most 32 pairs, by the warp of threads 0 .. 31 alone:
  // up to the root, then down again.
  template <class Op>
  __device__ __forceinline__ static void warp_levels(storage& s, unsigned i, Op op) {
    constexpr int first = N > 64 ? N / 64 : 1;  // offset of the widest such level
#pragma unroll
    for (int offset = first; offset < N; offset *= 2) {
      if (i < unsigned(N / (2 * offset))) up_pair(s, offset, int(i), op);
      __syncwarp();
    }
#pragma unroll
    for (int offset = N / 2; offset >= first; offset /= 2) {
      if (i < unsigned(N / (2 * offset))) down_pair(s, offset, int(i), op);
      if (offset > first) __syncwarp();
    }
  }

  // Scans the N stored entries in place: afterwards entry i holds the
  // combination of entries 0 .. i-1 (entry 0: undefined) and the total slot
  // that of all N. The caller makes the stores visible before (a barrier over
  // the N threads) and synchronizes again before reading. Levels of more than
  // 32 pairs (N > 64) use block barriers, so then every thread of the block
  // must call; otherwise only threads 0 .. 31 take part and the barriers are
  // the warp's.
  template <class Op>
  __device__ __forceinline__ static void scan(storage& s, unsigned i, Op op) {
#pragma unroll
    for (int offset = 1; N / (2 * offset) > 32; offset *= 2) {
      if (i < unsigned(N / (2 * offset))) up_pair(s, offset, int(i), op);
      __syncthreads();
    }
    if (i < 32) warp_levels(s, i, op);
#pragma unroll
    for (int offset = N / 128; offset >= 1; offset /= 2) {
      __syncthreads();
      if (i < unsigned(N / (2 * offset))) down_pair(s, offset, int(i), op);
    }
  }
};

}  // namespace detail_collective

template <class T, class Op>
struct warp_scan_hillis_steele {
  struct temp_storage {};  // shuffles only

  // Inclusive scan across the 32 lanes: lane l gets v_0 op ... op v_l.
  __device__ __forceinline__ static T inclusive(T v, Op op, unsigned lane) {
#pragma unroll
    for (unsigned d = 1; d < 32; d *= 2) {
      T const u = shfl_up(v, d);
      if (lane >= d) v = op(u, v);
    }
    return v;
  }

  // The same; aggregate receives the warp total.
  __device__ __forceinline__ static T inclusive(T v, Op op, unsigned lane, T& aggregate) {
    T const inc = inclusive(v, op, lane);
    aggregate = shfl_idx(inc, 31);
    return inc;
  }

  // Exclusive scan: lane 0 gets identity. aggregate receives the warp total.
  __device__ __forceinline__ static T exclusive(T v, T identity, Op op, unsigned lane, T& aggregate) {
    T const inc = inclusive(v, op, lane);
    aggregate = shfl_idx(inc, 31);
    T const up = shfl_up(inc, 1);
    return lane == 0 ? identity : up;
  }
};

// The work-efficient scan: the warp's values go through the shared-memory
// tree of detail_collective::blelloch_tree. Each warp that scans needs its own
// temp_storage; it may be reused after a __syncwarp().
template <class T, class Op>
struct warp_scan_blelloch {
  using tree = detail_collective::blelloch_tree<T, 32>;
  using temp_storage = typename tree::storage;

  // Inclusive scan across the 32 lanes: lane l gets v_0 op ... op v_l;
  // aggregate receives the warp total.
  __device__ __forceinline__ static T inclusive(temp_storage& ts, T v, Op op, unsigned lane, T& aggregate) {
    T const before = prefix(ts, v, op, lane, aggregate);
    return lane == 0 ? v : op(before, v);
  }

  __device__ __forceinline__ static T inclusive(temp_storage& ts, T v, Op op, unsigned lane) {
    T aggregate;
    return inclusive(ts, v, op, lane, aggregate);
  }

  // Exclusive scan: lane 0 gets identity. aggregate receives the warp total.
  __device__ __forceinline__ static T exclusive(temp_storage& ts, T v, T identity, Op op, unsigned lane,
                                                T& aggregate) {
    T const before = prefix(ts, v, op, lane, aggregate);
    return lane == 0 ? identity : before;
  }

 private:
  // Lane l's exclusive prefix v_0 op ... op v_{l-1} (lane 0: undefined).
  __device__ __forceinline__ static T prefix(temp_storage& ts, T v, Op op, unsigned lane, T& aggregate) {
    tree::store(ts, int(lane), v);
    __syncwarp();
    tree::scan(ts, lane, op);
    __syncwarp();
    aggregate = tree::load_total(ts);
    return tree::load(ts, int(lane));
  }
};

}  // namespace recur::kernels
