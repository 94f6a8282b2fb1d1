#pragma once
// Decoupled look-back between the tiles of a single-pass scan: the one
// protocol of linrec (agent_linrec_*.cuh), the LTI filters (agent_lti.cuh)
// and the generic scan (agent_scan.cuh).
//
// Determinism. Every tile m publishes its aggregate A_m, then its inclusive
// value I_m = A_m(E_m), where E_m is its incoming (exclusive) value. A tile k
// walks back to the newest predecessor j whose value ends the walk (I_j, or
// an aggregate that does not depend on what precedes it) and folds forward,
// left to right:
//   E_k = A_(k-1)( ... A_(j+2)(A_(j+1)(I_j)) ... ).
// Each intermediate is bitwise the I_m that tile m computes itself (the same
// operation on the same operands), so E_k does not depend on where the walk
// stopped, i.e. on timing: results are bitwise reproducible for any operator,
// floating-point or not. (A look-back that combines aggregates among
// themselves, as CUB's does, re-associates with the timing.)
//
// The fold is sequential, so its length matters: the walk waits only for the
// predecessors it needs (the ones up to the newest that ends it), and a fold
// may declare aggregates that end a walk by themselves (a constant map, a
// segment start, a tile whose map is zero in T; see `Fold::ends`).
//
// Records. A tile's status is a record of one or more status words of 8 or
// 16 bytes, written and read whole (relaxed 64- or 128-bit accesses at GPU
// scope): no flag beside the value, so neither fences nor a second dependent
// load on the walk's critical path. What a record holds is the Record's
// business (below: tagged_record, and linrec_record in linrec_params.cuh);
// how values combine is the Fold's.
//
// A Record provides
//   using value = ...;                  what a tile publishes
//   using word = status_word<B>;        B = 8 or 16
//   static constexpr int words;         status words per tile
//   static void encode(std::uint32_t state, value const&, word (&)[words]);
//   static std::uint32_t decode(word const (&)[words], value&);
// decode returns lookback_invalid while the record is not whole (nothing
// published yet, or caught half way through being overwritten) and leaves
// the value alone then.
//
// A Fold provides
//   using result = ...;                 a tile's incoming value
//   bool ends(value const&) const;      an aggregate independent of its past
//   template <class Stack>
//   result operator()(value const& base, Stack const& stack, int depth) const;
// the last folds base, the value that ended the walk, with the aggregates
// stack(depth - 1) (the oldest) .. stack(0) (the newest) in that order. It
// may also say `static constexpr bool shuffle_base = true` (see
// lookback_shuffles_base).

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "../thread/thread_ops.cuh"

namespace recur::kernels {

enum : std::uint32_t { lookback_aggregate = 1, lookback_inclusive = 2, lookback_invalid = 0xffffffffu };

template <int Bytes>
struct alignas(Bytes) status_word {
  static_assert(Bytes == 8 || Bytes == 16);
  unsigned long long w[Bytes / 8];
};

__device__ __forceinline__ void store_relaxed(status_word<8>* p, status_word<8> v) {
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v.w[0]) : "memory");
}
__device__ __forceinline__ status_word<8> load_relaxed(status_word<8> const* p) {
  status_word<8> v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v.w[0]) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void store_relaxed(status_word<16>* p, status_word<16> v) {
  asm volatile(
      "{\n\t.reg .b128 v;\n\tmov.b128 v, {%1, %2};\n\tst.relaxed.gpu.global.b128 [%0], v;\n\t}" ::"l"(p),
      "l"(v.w[0]), "l"(v.w[1])
      : "memory");
}
__device__ __forceinline__ status_word<16> load_relaxed(status_word<16> const* p) {
  status_word<16> v;
  asm volatile("{\n\t.reg .b128 v;\n\tld.relaxed.gpu.global.b128 v, [%2];\n\tmov.b128 {%0, %1}, v;\n\t}"
               : "=l"(v.w[0]), "=l"(v.w[1])
               : "l"(p)
               : "memory");
  return v;
}

// A value as words of WordBytes, each a tag (the state, in the first
// TagBytes) and WordBytes - TagBytes bytes of the value. A record is whole
// when all its words carry the same valid tag; a reader that catches a tile
// half way through overwriting its aggregate with its inclusive value sees
// mixed tags and looks again. TagBytes is the granule of the payload: 4
// splits values anywhere, 8 keeps doubles whole in one word.
template <class V, int WordBytes, int TagBytes>
struct tagged_record {
  static_assert(std::is_trivially_copyable_v<V> && sizeof(V) % 4 == 0);
  static_assert(TagBytes == 4 || TagBytes == 8);
  using value = V;
  using word = status_word<WordBytes>;
  static constexpr int payload = WordBytes - TagBytes;
  static constexpr int words = int((sizeof(V) + payload - 1) / payload);
  static constexpr int bytes_in(int c) {
    return int(sizeof(V)) - payload * c < payload ? int(sizeof(V)) - payload * c : payload;
  }

  __device__ __forceinline__ static void encode(std::uint32_t state, V const& v, word (&w)[words]) {
    auto const* const bytes = reinterpret_cast<unsigned char const*>(&v);
#pragma unroll
    for (int c = 0; c < words; ++c) {
      std::uint32_t q[WordBytes / 4] = {};
      q[0] = state;
      std::memcpy(reinterpret_cast<unsigned char*>(q) + TagBytes, bytes + payload * c,
                  std::size_t(bytes_in(c)));
      std::memcpy(&w[c], q, sizeof(q));
    }
  }
  __device__ __forceinline__ static std::uint32_t decode(word const (&w)[words], V& v) {
    std::uint32_t q[words][WordBytes / 4];
#pragma unroll
    for (int c = 0; c < words; ++c) std::memcpy(q[c], &w[c], sizeof(q[c]));
    std::uint32_t const tag = q[0][0];
    bool whole = tag != lookback_invalid;
#pragma unroll
    for (int c = 1; c < words; ++c) whole = whole && q[c][0] == tag;
    if (!whole) return lookback_invalid;
    auto* const bytes = reinterpret_cast<unsigned char*>(&v);
#pragma unroll
    for (int c = 0; c < words; ++c)
      std::memcpy(bytes + payload * c, reinterpret_cast<unsigned char const*>(q[c]) + TagBytes,
                  std::size_t(bytes_in(c)));
    return tag;
  }
};

// How the value that ends a walk reaches lane 0: by shuffles when the Fold
// says `static constexpr bool shuffle_base = true` (linrec and LTI: fewer
// registers than the shared-memory round trip), else through shared memory
// (values of any size).
template <class Fold>
constexpr bool lookback_shuffles_base() {
  if constexpr (requires { Fold::shuffle_base; })
    return Fold::shuffle_base;
  else
    return false;
}

// Status of `tiles` tiles in caller-provided device memory, all of it set to
// `fill` bytes before the launch (one memset of bytes(tiles)), which reads
// as lookback_invalid.
template <class Record>
struct tile_status {
  using record = Record;
  using value = typename Record::value;
  using word = typename Record::word;
  static constexpr int words = Record::words;
  static constexpr int fill = 0xff;

  unsigned long long* counter;  // dynamic tile index, starts at ~0: tiles run in the order they start
  word* status;                 // tile k's record at status[k * words]
  std::int64_t tiles;

  static constexpr std::size_t align(std::size_t x) { return (x + 255) / 256 * 256; }
  static std::size_t bytes(std::int64_t tiles) {
    return align(sizeof(unsigned long long)) + align(sizeof(word) * words * std::size_t(tiles));
  }
  static tile_status carve(void* temp, std::int64_t tiles) {
    auto* base = static_cast<char*>(temp);
    tile_status st{};
    st.counter = reinterpret_cast<unsigned long long*>(base);
    st.status = reinterpret_cast<word*>(base + align(sizeof(unsigned long long)));
    st.tiles = tiles;
    return st;
  }

  // The calling thread's tile (in the order tiles start running).
  __device__ __forceinline__ std::int64_t next_tile() const {
    return static_cast<std::int64_t>(atomicAdd(counter, 1ull) + 1ull);
  }

  __device__ __forceinline__ void publish(std::int64_t tile, std::uint32_t state, value const& v) const {
    word w[words];
    Record::encode(state, v, w);
#pragma unroll
    for (int c = 0; c < words; ++c) store_relaxed(status + tile * words + c, w[c]);
  }

  // One look at tile j: its state, and its value unless the state is
  // lookback_invalid.
  __device__ __forceinline__ std::uint32_t poll(std::int64_t j, value& v) const {
    word w[words];
#pragma unroll
    for (int c = 0; c < words; ++c) w[c] = load_relaxed(status + j * words + c);
    return Record::decode(w, v);
  }

  // Waits until tile j has published anything: it has then read all its
  // inputs (a sequence's initial state included).
  __device__ __forceinline__ void wait_published(std::int64_t j) const {
    value v;
    while (poll(j, v) == lookback_invalid) __nanosleep(64);
  }
  // Waits until tile j has published its inclusive value.
  __device__ __forceinline__ void wait_inclusive(std::int64_t j) const {
    value v;
    while (poll(j, v) != lookback_inclusive) __nanosleep(64);
  }
  // Waits until tile j publishes a value that ends a walk; returns it.
  template <class Fold>
  __device__ __forceinline__ value wait_end(std::int64_t j, Fold const& fold) const {
    value v;
    for (;;) {
      std::uint32_t const s = poll(j, v);
      if (s == lookback_inclusive || (s != lookback_invalid && fold.ends(v))) return v;
      __nanosleep(64);
    }
  }

  // Shared memory of a warp's walk: the aggregates between the tile and the
  // predecessor that ends the walk (newest first), and that predecessor's
  // value.
  template <int Depth>
  struct walk_storage {
    static_assert(Depth % 32 == 0 && Depth >= 32);
    value stack[Depth];
    value base;
  };

  // Warp-cooperative walk for tile k (all 32 lanes of one warp call it);
  // returns tile k's incoming value in lane 0 (other lanes: unspecified).
  // Tile `bound` < k publishes its inclusive value without walking (the
  // first tile of the scan, or of k's sequence), so every walk ends there at
  // the latest. Each round looks at 32 Words predecessors (lane l, word w:
  // tile k - 1 - 32 w - l), their loads in flight together, but waits only
  // for those it needs: the ones up to the newest that ends the walk. A walk
  // that fills the stack waits for the next predecessor to end it.
  template <int Depth, int Words, class Fold>
  __device__ typename Fold::result lookback(std::int64_t k, std::int64_t bound, walk_storage<Depth>& ws,
                                            unsigned lane, Fold const& fold) const {
    constexpr bool shuffle_base = lookback_shuffles_base<Fold>();
    constexpr int window = 32 * Words;
    static_assert(Depth % window == 0);
    std::int64_t next = k - 1;  // newest predecessor not yet read
    int depth = 0;
    value base{};
    for (;;) {
      value v[Words];
      bool valid[Words], stop[Words];
#pragma unroll
      for (int w = 0; w < Words; ++w) {
        v[w] = value{};
        valid[w] = next - (32 * w + int(lane)) < bound;  // older than the bound: never needed
        stop[w] = false;
      }
      int first;  // newest predecessor of the round that ends the walk, or window
      for (;;) {
#pragma unroll
        for (int w = 0; w < Words; ++w)
          if (!valid[w]) {
            std::uint32_t const s = poll(next - (32 * w + int(lane)), v[w]);
            if (s != lookback_invalid) {
              valid[w] = true;
              stop[w] = s == lookback_inclusive || fold.ends(v[w]);
            }
          }
        first = window;
        bool ready = true;
#pragma unroll
        for (int w = 0; w < Words; ++w) {
          unsigned const stops = __ballot_sync(full_mask, stop[w]);
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
        if (q < first) ws.stack[depth + q] = v[w];  // aggregates, newest first
        if constexpr (!shuffle_base)
          if (q == first) ws.base = v[w];
      }
      if (first < window) {
        if constexpr (shuffle_base) {
#pragma unroll
          for (int w = 0; w < Words; ++w) {
            value const x = shfl_idx(v[w], first % 32);
            if (w == first / 32) base = x;
          }
        }
        depth += first;
        break;
      }
      depth += window;
      next -= window;
      if (depth + window > Depth) {  // stack full
        if (lane == 0) (shuffle_base ? base : ws.base) = wait_end(next, fold);
        break;
      }
    }
    __syncwarp();
    typename Fold::result r{};
    if (lane == 0)
      r = fold(
          shuffle_base ? base : ws.base, [&](int i) -> value const& { return ws.stack[i]; }, depth);
    return r;
  }

  // One thread's walk over status slots j, j - stride, j - 2 stride, ... (the
  // interleaved layout: one sequence per thread, one slot per sequence and
  // chunk; the slots of the first chunk, below stride, end every walk). `stack` points at the
  // thread's first entry in shared memory, entries `stack_stride` apart;
  // Depth entries.
  template <int Depth, class Fold>
  __device__ typename Fold::result lookback_thread(std::int64_t j, std::int64_t stride, value* stack,
                                                   int stack_stride, Fold const& fold) const {
    int depth = 0;
    value base{};
    for (; j >= 0; j -= stride) {
      value v;
      std::uint32_t s;
      if (depth == Depth) {  // the stack is full: wait for slot j to end the walk
        for (;;) {
          while ((s = poll(j, v)) == lookback_invalid) __nanosleep(32);
          if (s == lookback_inclusive || fold.ends(v)) break;
          __nanosleep(64);
        }
        base = v;
        break;
      }
      while ((s = poll(j, v)) == lookback_invalid) __nanosleep(32);
      if (s == lookback_inclusive || fold.ends(v)) {
        base = v;
        break;
      }
      stack[depth * stack_stride] = v;
      ++depth;
    }
    return fold(
        base, [&](int i) -> value const& { return stack[i * stack_stride]; }, depth);
  }
};

// The common fold loop: acc <- step(acc, stack(m)) for m = depth - 1 down
// to 0, Batch shared-memory loads issued ahead of their dependent chain of
// steps. RollTail keeps the last depth % Batch steps a rolled loop.
template <int Batch, bool RollTail = false, class Acc, class Stack, class Step>
__device__ __forceinline__ Acc fold_stack(Acc acc, Stack const& stack, int depth, Step const& step) {
  int m = depth - 1;
  if constexpr (Batch > 1) {
    for (; m >= Batch - 1; m -= Batch) {
      std::remove_cvref_t<decltype(stack(0))> x[Batch];
#pragma unroll
      for (int u = 0; u < Batch; ++u) x[u] = stack(m - u);
#pragma unroll
      for (int u = 0; u < Batch; ++u) acc = step(acc, x[u]);
    }
  }
  if constexpr (RollTail) {
#pragma unroll 1
    for (; m >= 0; --m) acc = step(acc, stack(m));
  } else {
    for (; m >= 0; --m) acc = step(acc, stack(m));
  }
  return acc;
}

}  // namespace recur::kernels
