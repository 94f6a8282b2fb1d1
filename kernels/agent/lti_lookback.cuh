#pragma once
// Single-pass carry propagation between tiles for linear time-invariant
// recurrences on a K-value state (s_i = A s_{i-1} + B x_i, A constant): IIR
// filters, second-order-section cascades, constant-coefficient k-th order
// recurrences, DPCM predictors.
//
// Every full tile of a sequence has the same map, s -> A^T s + v, so a tile's
// status needs only its K-vector v (the state the tile leaves from a zero
// start: its aggregate), and later its outgoing state (inclusive). A tile
// finds its incoming state by walking back over predecessors' aggregates to
// the newest inclusive one and folding them forward in value space,
//   s_in(k) = A^T ( ... A^T (s_out(j)) + v_(j+1) ... ) + v_(k-1),
// with the same operations a tile uses to publish its own s_out =
// A^T s_in + v, so s_in(k) is bitwise the same wherever the walk stopped (as
// in linrec_lookback.cuh, whose walk this one follows round for round: the
// record and the fold differ, the rounds and the waiting rule do not). When
// A^T is zero in T (a filter that forgets within a tile, any FIR stencil), a
// tile's map is constant and every walk stops at the first predecessor.
//
// A record is `chunks` 16-byte words, each a tag and up to 16 / sizeof(T) - 1
// values, read and written whole (single-copy atomic 128-bit, relaxed at GPU
// scope; no fences). The tag tells which version the word's values belong
// to: ~0 invalid (the 0xff memset before the launch), 1 aggregate,
// 2 inclusive. A record is read as valid only when all its words carry the
// same tag (a reader that catches a tile half way through overwriting its
// aggregate with its inclusive state waits a moment and reads again).

#include <cstdint>
#include <type_traits>

#include "../thread/thread_ops.cuh"

namespace recur::kernels {

template <class T, int K>
struct lti_vec {
  T v[K];
};

template <class T, int K>
struct lti_tile_status {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8);
  static_assert(K >= 1);
  using bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  static constexpr int per_word = 16 / sizeof(T) - 1;
  static constexpr int words = (K + per_word - 1) / per_word;
  static constexpr bits invalid = ~bits(0), aggregate = 1, inclusive = 2;
  struct alignas(16) word {
    bits tag;
    bits v[per_word];
  };
  using vec = lti_vec<T, K>;

  unsigned long long* counter;  // dynamic tile index, starts at ~0
  word* desc;                   // tile k's record at desc[k * words]
  std::int64_t tiles;

  static constexpr std::size_t align(std::size_t x) { return (x + 255) / 256 * 256; }
  static std::size_t bytes(std::int64_t tiles) {
    return align(sizeof(unsigned long long)) + align(sizeof(word) * words * tiles);
  }
  static lti_tile_status carve(void* temp, std::int64_t tiles) {
    auto* base = static_cast<char*>(temp);
    lti_tile_status st;
    st.counter = reinterpret_cast<unsigned long long*>(base);
    st.desc = reinterpret_cast<word*>(base + align(sizeof(unsigned long long)));
    st.tiles = tiles;
    return st;
  }

  __device__ __forceinline__ std::int64_t next_tile() const {
    return static_cast<std::int64_t>(atomicAdd(counter, 1ull) + 1ull);
  }

  // 128-bit relaxed accesses as two 64-bit halves.
  __device__ __forceinline__ static void store_word(word* p, word const& w) {
    unsigned long long h[2];
    static_assert(sizeof(word) == sizeof(h));
    __builtin_memcpy(h, &w, sizeof(h));
    asm volatile(
        "{\n\t.reg .b128 v;\n\tmov.b128 v, {%1, %2};\n\tst.relaxed.gpu.global.b128 [%0], v;\n\t}" ::"l"(p),
        "l"(h[0]), "l"(h[1])
        : "memory");
  }
  __device__ __forceinline__ static word load_word(word const* p) {
    unsigned long long h[2];
    asm volatile("{\n\t.reg .b128 v;\n\tld.relaxed.gpu.global.b128 v, [%2];\n\tmov.b128 {%0, %1}, v;\n\t}"
                 : "=l"(h[0]), "=l"(h[1])
                 : "l"(p)
                 : "memory");
    word w;
    __builtin_memcpy(&w, h, sizeof(h));
    return w;
  }

  __device__ __forceinline__ void publish(std::int64_t tile, bits tag, vec const& s) const {
#pragma unroll
    for (int c = 0; c < words; ++c) {
      word w{};
      w.tag = tag;
#pragma unroll
      for (int e = 0; e < per_word; ++e)
        if (c * per_word + e < K) w.v[e] = __builtin_bit_cast(bits, s.v[c * per_word + e]);
      store_word(desc + tile * words + c, w);
    }
  }

  // One look at tile j: false until its record is whole. Then `s` is its
  // vector and `stop` says whether the walk ends there (inclusive, or any
  // record when the tiles' map is constant).
  __device__ __forceinline__ bool poll(std::int64_t j, bool forget, vec& s, bool& stop) const {
    word w[words];
#pragma unroll
    for (int c = 0; c < words; ++c) w[c] = load_word(desc + j * words + c);
    bits const tag = w[0].tag;
    bool whole = tag != invalid;
#pragma unroll
    for (int c = 1; c < words; ++c) whole = whole && w[c].tag == tag;
    if (!whole) return false;
#pragma unroll
    for (int c = 0; c < words; ++c)
#pragma unroll
      for (int e = 0; e < per_word; ++e)
        if (c * per_word + e < K) s.v[c * per_word + e] = __builtin_bit_cast(T, w[c].v[e]);
    stop = forget || tag == inclusive;
    return true;
  }

  template <int Depth>
  struct walk_storage {
    static_assert(Depth % 32 == 0 && Depth >= 32);
    vec stack[Depth];
  };

  // Warp-cooperative walk for tile k, whose sequence's first tile is
  // `first` (< k; it publishes its inclusive state without walking, so every
  // walk ends there at the latest). Each round looks at 32 predecessors
  // (lane l: k - 1 - 32 r - l) and waits only for those up to the newest one
  // that ends the walk. Returns in lane 0 the base state and leaves the
  // aggregates to fold in ws.stack[0 .. depth) (newest first); the caller
  // folds them (lti_fold) so it can reuse its matrix registers.
  template <int Depth>
  __device__ int walk(std::int64_t k, std::int64_t first, bool forget, walk_storage<Depth>& ws, vec& base,
                      unsigned lane) const {
    std::int64_t next = k - 1;
    int depth = 0;
    for (;;) {
      std::int64_t const j = next - int(lane);
      vec s{};
      bool valid = j < first, stop = valid;  // older than the sequence: never needed
      int f;
      for (;;) {
        if (!valid) valid = poll(j, forget, s, stop);
        unsigned const stops = __ballot_sync(full_mask, valid && stop);
        unsigned const valids = __ballot_sync(full_mask, valid);
        bool ready;
        if (stops) {
          f = __ffs(stops) - 1;
          unsigned const needed = (2u << f) - 1u;
          ready = (valids & needed) == needed;
        } else {
          f = 32;
          ready = valids == full_mask;
        }
        if (ready) break;
        __nanosleep(32);
      }
      if (int(lane) < f) ws.stack[depth + lane] = s;
      depth += f;
      if (f < 32) {
#pragma unroll
        for (int e = 0; e < K; ++e) base.v[e] = shfl_idx(s.v[e], f);
        break;
      }
      next -= 32;
      if (depth + 32 > Depth) {  // stack full: wait for `next` to be inclusive
        vec x{};
        if (lane == 0) {
          bool st = false;
          while (!poll(next, forget, x, st) || !st) __nanosleep(64);
        }
#pragma unroll
        for (int e = 0; e < K; ++e) base.v[e] = shfl_idx(x.v[e], 0);
        break;
      }
    }
    __syncwarp();
    return depth;
  }
};

}  // namespace recur::kernels
