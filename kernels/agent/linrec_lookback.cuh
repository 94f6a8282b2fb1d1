#pragma once
// Single-pass carry propagation between tiles for affine recurrences (the
// P-scheme's propagation phase, done as a decoupled look-back).
//
// Each tile publishes its composed map (aggregate) as soon as it has it, and
// later its outgoing state w_out (inclusive). A tile finds its incoming state
// by walking back over predecessors' aggregates until it reaches one with an
// inclusive state (or a constant map, a == 0, which needs no history), then
// applies the aggregates forward one by one *in value space*:
//   w_in(k) = A_{k-1}( ... A_{j+1}(w_out(j)) ... ).
// Each application is the same fused multiply-add a tile would do publishing
// its own w_out = A_k(w_in(k)), so w_in(k) is bitwise the same whichever j the
// walk stopped at: the result does not depend on timing, unlike a look-back
// that composes maps (the association would change from run to run).

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "../thread/thread_ops.cuh"

namespace recur::kernels {

// A tile's status is one word of 2 sizeof(T) bytes, read and written whole
// (single-copy atomic 64-bit, or 128-bit for double, relaxed at GPU scope):
// no flag beside the value, so neither fences nor a second dependent load
// (a release/acquire flag pair cost 4.8 us per tile under full memory load
// on the H100; doc/performance.md). The word's first half tells the state:
//   all ones          invalid (the 0xff memset before the launch)
//   all ones - 1      inclusive: the second half is the tile's outgoing state
//   anything else     aggregate: the tile's composed map (a, b); a NaN a is
//                     stored canonical, so it never collides with the two
//                     patterns above (both NaNs).
template <class T>
struct linrec_tile_word {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8);
  using bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  static constexpr bits invalid = ~bits(0), inclusive = ~bits(0) - 1;
  alignas(2 * sizeof(T)) bits a;
  bits b;
};

__device__ __forceinline__ void store_relaxed(linrec_tile_word<float>* p, linrec_tile_word<float> w) {
  unsigned long long const v = w.a | (static_cast<unsigned long long>(w.b) << 32);
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ linrec_tile_word<float> load_relaxed(linrec_tile_word<float> const* p) {
  unsigned long long v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return {static_cast<std::uint32_t>(v), static_cast<std::uint32_t>(v >> 32)};
}
__device__ __forceinline__ void store_relaxed(linrec_tile_word<double>* p, linrec_tile_word<double> w) {
  asm volatile(
      "{\n\t.reg .b128 v;\n\tmov.b128 v, {%1, %2};\n\tst.relaxed.gpu.global.b128 [%0], v;\n\t}" ::"l"(p),
      "l"(w.a), "l"(w.b)
      : "memory");
}
__device__ __forceinline__ linrec_tile_word<double> load_relaxed(linrec_tile_word<double> const* p) {
  linrec_tile_word<double> w;
  asm volatile("{\n\t.reg .b128 v;\n\tld.relaxed.gpu.global.b128 v, [%2];\n\tmov.b128 {%0, %1}, v;\n\t}"
               : "=l"(w.a), "=l"(w.b)
               : "l"(p)
               : "memory");
  return w;
}

// Status of `tiles` tiles in caller-provided device memory, all of it set to
// 0xff bytes before the launch (one memset of bytes(tiles)).
template <class T>
struct linrec_tile_status {
  using word = linrec_tile_word<T>;
  using bits = typename word::bits;
  unsigned long long* counter;  // dynamic tile index, starts at ~0: tiles run in launch order
  word* desc;
  std::int64_t tiles;
#ifdef RECUR_LINREC_TRACE
  // Experiment builds only (bench/tune_linrec_tiles): per tile, timestamps
  // of the phases and the walk depth, 8 words per tile.
  unsigned long long* trace = nullptr;
#endif

  static constexpr std::size_t align(std::size_t x) { return (x + 255) / 256 * 256; }
  // Bytes of temporary storage for `tiles` tiles; all of them are set to 0xff.
  static std::size_t bytes(std::int64_t tiles) { return align(sizeof(unsigned long long)) + align(sizeof(word) * tiles); }
  static constexpr int fill = 0xff;
  static linrec_tile_status carve(void* temp, std::int64_t tiles) {
    auto* base = static_cast<char*>(temp);
    linrec_tile_status st;
    st.counter = reinterpret_cast<unsigned long long*>(base);
    st.desc = reinterpret_cast<word*>(base + align(sizeof(unsigned long long)));
    st.tiles = tiles;
    return st;
  }

  // The calling thread's tile (in the order tiles start running).
  __device__ __forceinline__ std::int64_t next_tile() const {
    return static_cast<std::int64_t>(atomicAdd(counter, 1ull) + 1ull);
  }

  __device__ __forceinline__ void publish_aggregate(std::int64_t tile, ops::affine<T> const& m) const {
    bits a = __builtin_bit_cast(bits, m.a);
    if (m.a != m.a) a = __builtin_bit_cast(bits, T(NAN));
    store_relaxed(desc + tile, word{a, __builtin_bit_cast(bits, m.b)});
  }
  __device__ __forceinline__ void publish_inclusive(std::int64_t tile, T w_out) const {
    store_relaxed(desc + tile, word{word::inclusive, __builtin_bit_cast(bits, w_out)});
  }

  // One look at predecessor j: false while it has published nothing.
  // Otherwise `stop` says whether it ends a walk (inclusive state, or a
  // constant map, which needs no history), `value` is then its outgoing
  // state, and `agg` its map when it is not inclusive.
  __device__ __forceinline__ static bool decode(word const& w, ops::affine<T>& agg, T& value, bool& stop) {
    if (w.a == word::invalid) return false;
    value = __builtin_bit_cast(T, w.b);
    if (w.a == word::inclusive) {
      stop = true;
    } else {
      agg = {__builtin_bit_cast(T, w.a), value};
      stop = agg.a == T(0);
    }
    return true;
  }
  __device__ __forceinline__ bool poll(std::int64_t j, ops::affine<T>& agg, T& value, bool& stop) const {
    return decode(load_relaxed(desc + j), agg, value, stop);
  }
  // Waits until tile j has published anything: it has then read all its
  // inputs, a sequence's init included.
  __device__ __forceinline__ void wait_published(std::int64_t j) const {
    while (load_relaxed(desc + j).a == word::invalid) __nanosleep(64);
  }
  // Waits for predecessor j to publish; returns `stop` as poll does.
  __device__ __forceinline__ bool wait(std::int64_t j, ops::affine<T>& agg, T& value) const {
    bool stop = false;
    while (!poll(j, agg, value, stop)) __nanosleep(32);
    return stop;
  }

  // Shared memory of a warp's walk: the stack of aggregates between tile k
  // and the predecessor that ends the walk.
  template <int Depth>
  struct walk_storage {
    static_assert(Depth % 32 == 0 && Depth >= 32);
    ops::affine<T> stack[Depth];
    int depth;  // aggregates applied (for tracing)
  };

  // Warp-cooperative walk for tile k (all 32 lanes of one warp call it).
  // Each round looks at 32 Words predecessors at once (newest first: lane l,
  // word v holds k - 1 - 32 v - l; the loads of a round are all in flight
  // together), but waits only for those it needs: the ones up to the newest
  // that ends the walk. (Waiting for the whole window, as CUB's look-back
  // does, made every tile wait for the slowest of its predecessors' loads;
  // doc/performance.md.) Returns w_in(k) in every lane; tile 0 gets 0 (its
  // first element is a sequence start, a constant map, so the value is never
  // used).
  template <int Depth, int Words = 1>
  __device__ T incoming_warp(std::int64_t k, walk_storage<Depth>& ws, unsigned lane) const {
    constexpr int window = 32 * Words;
    static_assert(Depth % window == 0);
    std::int64_t next = k - 1;  // newest predecessor not yet read
    int depth = 0;
    T base = T(0);
    for (;;) {
      ops::affine<T> agg[Words];
      T value[Words];
      bool valid[Words], stop[Words];
#pragma unroll
      for (int v = 0; v < Words; ++v) {
        agg[v] = {T(1), T(0)};
        value[v] = T(0);
        valid[v] = stop[v] = next - (32 * v + int(lane)) < 0;  // before tile 0: state 0, ends the walk
      }
      int first;  // newest predecessor of the round that ends the walk, or window
      for (;;) {
        word w[Words];
#pragma unroll
        for (int v = 0; v < Words; ++v)
          if (!valid[v]) w[v] = load_relaxed(desc + (next - (32 * v + int(lane))));
#pragma unroll
        for (int v = 0; v < Words; ++v)
          if (!valid[v]) valid[v] = decode(w[v], agg[v], value[v], stop[v]);
        first = window;
        bool ready = true;
#pragma unroll
        for (int v = 0; v < Words; ++v) {
          unsigned const stops = __ballot_sync(full_mask, valid[v] && stop[v]);
          unsigned const valids = __ballot_sync(full_mask, valid[v]);
          if (first == window) {
            if (stops) {
              int const f = __ffs(stops) - 1;
              unsigned const needed = (2u << f) - 1u;
              ready = ready && (valids & needed) == needed;
              first = 32 * v + f;
            } else {
              ready = ready && valids == full_mask;
            }
          }
        }
        if (ready) break;
        __nanosleep(32);
      }
#pragma unroll
      for (int v = 0; v < Words; ++v)
        if (32 * v + int(lane) < first) ws.stack[depth + 32 * v + lane] = agg[v];
      depth += first;
      if (first < window) {
#pragma unroll
        for (int v = 0; v < Words; ++v) {
          T const x = shfl_idx(value[v], first % 32);
          if (v == first / 32) base = x;
        }
        break;
      }
      next -= window;
      if (depth + window > Depth) {  // stack full: wait for `next` to finish
        ops::affine<T> a;
        T x = T(0);
        if (lane == 0)
          while (!wait(next, a, x)) __nanosleep(64);
        base = shfl_idx(x, 0);
        break;
      }
    }
    __syncwarp();
    // Apply the stack forward (oldest first) in lane 0, the shared-memory
    // loads ahead of the dependent chain of fused multiply-adds.
    T v = base;
    if (lane == 0) {
      int m = depth - 1;
      for (; m >= 7; m -= 8) {
        ops::affine<T> s[8];
#pragma unroll
        for (int u = 0; u < 8; ++u) s[u] = ws.stack[m - u];
#pragma unroll
        for (int u = 0; u < 8; ++u) v = apply_resetting(s[u], v);
      }
      for (; m >= 0; --m) v = apply_resetting(ws.stack[m], v);
      ws.depth = depth;
    }
    return shfl_idx(v, 0);
  }

  // Per-thread walk over status slots j, j - stride, j - 2 stride, ... (the
  // interleaved layout: one lane per thread, one slot per lane and chunk).
  // `stack` points at this thread's first slot in shared memory, entries
  // `stack_stride` apart; Depth entries.
  template <int Depth>
  __device__ T incoming_thread(std::int64_t j, std::int64_t stride, ops::affine<T>* stack,
                               int stack_stride) const {
    int depth = 0;
    T v = T(0);
    for (; j >= 0; j -= stride) {
      ops::affine<T> agg;
      if (depth == Depth) {  // stack full: wait for j to finish
        while (!wait(j, agg, v)) __nanosleep(64);
        break;
      }
      if (wait(j, agg, v)) break;
      stack[depth * stack_stride] = agg;
      ++depth;
    }
    if (j < 0) v = T(0);
    for (int m = depth - 1; m >= 0; --m) v = apply_resetting(stack[m * stack_stride], v);
    return v;
  }
};

}  // namespace recur::kernels
