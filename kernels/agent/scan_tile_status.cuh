#pragma once
// Tile status and look-back for the device-wide scan over any associative
// operator (the generic counterpart of linrec_lookback.cuh).
//
// Determinism. Every tile m publishes its aggregate A_m, then its inclusive
// prefix I_m = op(E_m, A_m), where E_m is its exclusive prefix. A tile k
// walks back to the newest predecessor j with a published I_j and folds
// forward, left to right:
//   E_k = op(...op(op(I_j, A_{j+1}), A_{j+2})..., A_{k-1}).
// Each intermediate is bitwise the I_m that tile m computes itself (the same
// operation on the same operands), so E_k does not depend on where the walk
// stopped, i.e. on timing: results are bitwise reproducible for any operator,
// floating-point or not. (A look-back that combines aggregates among
// themselves, as CUB's does, re-associates with the timing.)
//
// The fold is sequential, so its length matters: the walk waits only for the
// predecessors it needs (the ones up to the newest that ends it), and an
// operator may declare values that end a walk by themselves (a segment start
// for segmented scans; see `scan_resets`).
//
// Status words. When the value and a 32-bit state fit in 16 bytes, a tile's
// status is one word written and read whole (relaxed 64- or 128-bit accesses,
// no fence). Larger values (3x3 matrices, affine<double>) are records of
// 16-byte words, each with the state as a tag (below): no fences either.

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "../thread/thread_ops.cuh"

namespace recur::kernels {

// Operators may say that a value makes everything before it irrelevant.
template <class Op, class V>
__device__ __forceinline__ bool scan_resets(Op const& op, V const& v) {
  if constexpr (requires { op.resets(v); })
    return op.resets(v);
  else
    return false;
}

// The look-back's stack as an operator's fold sees it: entry i is the
// aggregate of tile k - 1 - i (newest first). An operator may define
//   V fold(V acc, View const& stack, int count) const
// that returns op(...op(op(acc, stack(count-1)), stack(count-2))..., stack(0))
// bit for bit (the determinism argument needs the very same operations), when
// it can do so faster than one call per entry (hoisting loads of constants).
template <class V>
struct scan_stack_view {
  V const* entries;
  __device__ __forceinline__ V const& operator()(int i) const { return entries[i]; }
};

enum : std::uint32_t { scan_aggregate = 1, scan_inclusive = 2, scan_invalid = 0xffffffffu };

namespace detail_scan {

template <class V>
struct packed {
  std::uint32_t state;
  V value;
};
template <class V>
inline constexpr bool packable = sizeof(packed<V>) <= 16 && alignof(V) <= 8;
template <class V>
inline constexpr int word_bytes = sizeof(packed<V>) <= 8 ? 8 : 16;

template <int Bytes>
struct alignas(Bytes) raw_word {
  unsigned long long w[Bytes / 8];
};

__device__ __forceinline__ void store_word(raw_word<8>* p, raw_word<8> v) {
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v.w[0]) : "memory");
}
__device__ __forceinline__ raw_word<8> load_word(raw_word<8> const* p) {
  raw_word<8> v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v.w[0]) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void store_word(raw_word<16>* p, raw_word<16> v) {
  asm volatile("{\n\t.reg .b128 v;\n\tmov.b128 v, {%1, %2};\n\tst.relaxed.gpu.global.b128 [%0], v;\n\t}" ::"l"(p),
               "l"(v.w[0]), "l"(v.w[1])
               : "memory");
}
__device__ __forceinline__ raw_word<16> load_word(raw_word<16> const* p) {
  raw_word<16> v;
  asm volatile("{\n\t.reg .b128 v;\n\tld.relaxed.gpu.global.b128 v, [%2];\n\tmov.b128 {%0, %1}, v;\n\t}"
               : "=l"(v.w[0]), "=l"(v.w[1])
               : "l"(p)
               : "memory");
  return v;
}
}  // namespace detail_scan

// Status of `tiles` tiles in caller-provided device memory, all of it set to
// 0xff bytes before the launch (one memset of bytes(tiles)).
//
// Values too large to share a 16-byte word with their state (3x3 matrices,
// affine<double>) are records of 16-byte words, each a 4-byte tag (the
// state) and 12 bytes of the value, written and read whole (relaxed 128-bit
// accesses, no fences), as in lti_lookback.cuh. A record is valid when all
// its words carry the same tag: a reader that catches a tile half way
// through overwriting its aggregate with its inclusive prefix sees mixed
// tags and looks again. (Before: a state word published with release and
// read with acquire, the value in an array of its own: two fences per tile
// on the look-back's critical path.)
template <class V>
struct scan_tile_status {
  static_assert(std::is_trivially_copyable_v<V> && sizeof(V) % 4 == 0);
  static constexpr bool packed = detail_scan::packable<V>;
  static constexpr int record_words = packed ? 1 : int((sizeof(V) + 11) / 12);
  using word = detail_scan::raw_word<packed ? detail_scan::word_bytes<V> : 16>;
  static constexpr int fill = 0xff;

  unsigned long long* counter;  // dynamic tile index, starts at ~0
  word* words;                  // tile k's record at words[k * record_words]

  static constexpr std::size_t align(std::size_t x) { return (x + 255) / 256 * 256; }
  static std::size_t bytes(std::int64_t tiles) {
    return align(sizeof(unsigned long long)) + align(sizeof(word) * record_words * std::size_t(tiles));
  }
  static scan_tile_status carve(void* temp, std::int64_t /*tiles*/) {
    auto* base = static_cast<char*>(temp);
    scan_tile_status st{};
    st.counter = reinterpret_cast<unsigned long long*>(base);
    st.words = reinterpret_cast<word*>(base + align(sizeof(unsigned long long)));
    return st;
  }

  __device__ __forceinline__ std::int64_t next_tile() const {
    return static_cast<std::int64_t>(atomicAdd(counter, 1ull) + 1ull);
  }

  __device__ __forceinline__ void publish(std::int64_t tile, std::uint32_t state, V const& v) const {
    if constexpr (packed) {
      detail_scan::packed<V> p{state, v};
      word w{};
      std::memcpy(&w, &p, sizeof(p));
      detail_scan::store_word(words + tile, w);
    } else {
      auto const* const bytes = reinterpret_cast<unsigned char const*>(&v);
#pragma unroll
      for (int c = 0; c < record_words; ++c) {
        std::uint32_t q[4] = {state, 0u, 0u, 0u};
        constexpr int full = int(sizeof(V));
        int const n = full - 12 * c < 12 ? full - 12 * c : 12;
        std::memcpy(q + 1, bytes + 12 * c, std::size_t(n));
        word w;
        std::memcpy(&w, q, sizeof(w));
        detail_scan::store_word(words + tile * record_words + c, w);
      }
    }
  }

  // One look at tile j: its state (scan_invalid while it has published
  // nothing, or while its record is being overwritten) and, otherwise, its
  // value.
  __device__ __forceinline__ std::uint32_t poll(std::int64_t j, V& v) const {
    if constexpr (packed) {
      word const w = detail_scan::load_word(words + j);
      detail_scan::packed<V> p;
      std::memcpy(&p, &w, sizeof(p));
      if (p.state != scan_invalid) v = p.value;
      return p.state;
    } else {
      std::uint32_t q[record_words][4];
#pragma unroll
      for (int c = 0; c < record_words; ++c) {
        word const w = detail_scan::load_word(words + j * record_words + c);
        std::memcpy(q[c], &w, sizeof(w));
      }
      std::uint32_t const tag = q[0][0];
      bool whole = tag != scan_invalid;
#pragma unroll
      for (int c = 1; c < record_words; ++c) whole = whole && q[c][0] == tag;
      if (!whole) return scan_invalid;
      auto* const bytes = reinterpret_cast<unsigned char*>(&v);
#pragma unroll
      for (int c = 0; c < record_words; ++c) {
        constexpr int full = int(sizeof(V));
        int const n = full - 12 * c < 12 ? full - 12 * c : 12;
        std::memcpy(bytes + 12 * c, q[c] + 1, std::size_t(n));
      }
      return tag;
    }
  }

  // Shared memory of a warp's walk.
  template <int Depth>
  struct walk_storage {
    static_assert(Depth % 32 == 0 && Depth >= 32);
    V stack[Depth];
    V base;
  };

  // Warp-cooperative walk for tile k > 0 (all 32 lanes call it): returns
  // tile k's exclusive prefix in every lane. (An initial value is folded
  // into the first element by the caller, so nothing precedes tile 0.) Each
  // round looks at 32 Words predecessors (lane l, word v: tile
  // k - 1 - 32 v - l), their loads in flight together.
  template <int Depth, int Words, class Op>
  __device__ V exclusive_prefix(std::int64_t k, walk_storage<Depth>& ws, unsigned lane, Op const& op) const {
    constexpr int window = 32 * Words;
    static_assert(Depth % window == 0);
    std::int64_t next = k - 1;  // newest predecessor not yet read
    int depth = 0;
    bool have_base = true;  // false: the walk ran past tile 0; the fold starts at its aggregate
    for (;;) {
      V value[Words];
      bool valid[Words], stop[Words];
#pragma unroll
      for (int w = 0; w < Words; ++w) {
        value[w] = V{};
        valid[w] = stop[w] = next - (32 * w + int(lane)) < 0;  // before tile 0 ends the walk
      }
      int first;  // newest predecessor of the round that ends the walk, or window
      for (;;) {
        std::uint32_t state[Words];
#pragma unroll
        for (int w = 0; w < Words; ++w)
          state[w] = valid[w] ? scan_inclusive : poll(next - (32 * w + int(lane)), value[w]);
#pragma unroll
        for (int w = 0; w < Words; ++w)
          if (!valid[w] && state[w] != scan_invalid) {
            valid[w] = true;
            stop[w] = state[w] == scan_inclusive || scan_resets(op, value[w]);
          }
        first = window;
        bool ready = true;
#pragma unroll
        for (int w = 0; w < Words; ++w) {
          unsigned const stops = __ballot_sync(full_mask, valid[w] && stop[w]);
          unsigned const valids = __ballot_sync(full_mask, valid[w]);
          if (first == window) {
            if (stops) {
              int const f = __ffs(stops) - 1;
              unsigned const needed = (2u << f) - 1u;
              ready = ready && (valids & needed) == needed;
              first = 32 * w + f;
            } else {
              ready = ready && valids == full_mask;
            }
          }
        }
        if (ready) break;
        __nanosleep(32);
      }
#pragma unroll
      for (int w = 0; w < Words; ++w) {
        int const q = 32 * w + int(lane);
        if (q < first) ws.stack[depth + q] = value[w];  // aggregates, newest first
        if (q == first) ws.base = value[w];
      }
      if (first < window) {
        // Ends at a tile (its inclusive prefix or a resetting aggregate), or
        // before tile 0.
        have_base = next - first >= 0;
        depth += first;
        break;
      }
      depth += window;
      next -= window;
      if (depth + window > Depth) {  // stack full: wait for `next` to publish its inclusive prefix
        if (lane == 0) {
          for (;;) {
            V v;
            std::uint32_t const st = poll(next, v);
            if (st == scan_inclusive || (st == scan_aggregate && scan_resets(op, v))) {
              ws.base = v;
              break;
            }
            __nanosleep(64);
          }
        }
        break;
      }
    }
    __syncwarp();
    // The fold, oldest first, in lane 0: shared-memory loads run ahead of the
    // dependent chain of operations.
    if (lane == 0) {
      int m = depth - 1;
      V acc;
      if (have_base) {
        acc = ws.base;
      } else {  // the fold starts at tile 0's aggregate
        acc = ws.stack[m];
        --m;
      }
      scan_stack_view<V> const view{ws.stack};
      if constexpr (requires { op.fold(acc, view, m + 1); }) {
        acc = op.fold(acc, view, m + 1);  // the operator's own loop (same operations, hoisted loads)
      } else {
        for (; m >= 7; m -= 8) {
          V x[8];
#pragma unroll
          for (int u = 0; u < 8; ++u) x[u] = ws.stack[m - u];
#pragma unroll
          for (int u = 0; u < 8; ++u) acc = op(acc, x[u]);
        }
        // Not unrolled: nvcc 13.0 (sm_90, -O2) miscompiles
        // this loop when it unrolls it for some value types (segmented
        // values of 16, 20 and 28 bytes: the fold of 4 or more entries came
        // out wrong, deterministically; test_device_scan's
        // segmented_padded_values). It is at most 7 operations.
#pragma unroll 1
        for (; m >= 0; --m) acc = op(acc, ws.stack[m]);
      }
      ws.base = acc;
    }
    __syncwarp();
    return ws.base;
  }
};

}  // namespace recur::kernels
