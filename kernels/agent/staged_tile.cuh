#pragma once
// A tile of Arrays input arrays (linrec's s and t; the adjoint's s, g and
// w) staged in shared memory by asynchronous copies (cp.async, sm_80 and
// later), for the agents that keep the loads of their next tiles in flight
// while they work on the current one (agent_linrec_pipe, agent_linrec_rows).
// Global memory goes to shared memory without passing through registers.
// Results go back to an array's slots and are stored from there.
//
// A tile is Block threads x Items elements of one contiguous run of memory
// whose first element is 16-byte aligned. Owner o holds the elements
// o*Items .. o*Items+Items-1 (the paper's rearrangement). The tile moves in
// 16-byte chunks, striped over the threads (coalesced); each chunk sits at a
// swizzled slot, so that the owner reads its run with 16-byte loads and no
// bank conflicts. Only a window [lo, hi) of the tile's elements is read from
// or written to global memory; elements outside it hold whatever the slot
// held (zeros after a partial copy), and the caller ignores them. T is the
// storage type: the slots hold T, an owner's run comes out and goes back in
// the compute type compute_t<T> (include/recur/storage.hpp).

#include <cstdint>

#include <recur/storage.hpp>

namespace recur::kernels {

namespace detail_async {

__device__ __forceinline__ unsigned smem_addr(void const* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
// 16 bytes global -> shared, asynchronous; bytes past `src_bytes` (0..16)
// are zero-filled and not read.
__device__ __forceinline__ void cp_async16(void* dst, void const* src, unsigned src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src),
               "r"(src_bytes)
               : "memory");
}
// One 4- or 8-byte element global -> shared, asynchronous.
template <int Bytes>
__device__ __forceinline__ void cp_async_element(void* dst, void const* src) {
  static_assert(Bytes == 4 || Bytes == 8);
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(smem_addr(dst)), "l"(src), "n"(Bytes)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Waits until at most `Pending` of this thread's commit groups are in flight.
template <int Pending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
}

// 16 bytes of T.
template <class T>
struct alignas(16) chunk {
  static constexpr int n = 16 / sizeof(T);
  T v[n];
};

}  // namespace detail_async

template <class T, int Block, int Items, int Arrays = 2>
struct staged_tile {
  using V = compute_t<T>;
  using chunk = detail_async::chunk<T>;
  static constexpr int arrays = Arrays;
  static constexpr int per_chunk = chunk::n;
  static constexpr int chunks = Items / per_chunk;  // per owner
  static constexpr int tile_items = Block * Items;
  static constexpr int tile_chunks = Block * chunks;
  static_assert(Items % per_chunk == 0, "an owner's run is whole 16-byte chunks");
  static_assert(chunks == 1 || chunks == 2 || chunks == 4 || chunks == 8, "chunks per owner: 1, 2, 4 or 8");

  // Slot of chunk c of owner o. Rotating each owner's chunks by o/2 puts the
  // 8 chunks that a quarter warp reads at once (owners 8q .. 8q+7, same c) in
  // 8 different 16-byte bank groups; the striped copies and stores touch 8
  // consecutive chunks of two owners, also 8 different groups.
  __device__ static constexpr int slot(int o, int c) {
    if constexpr (chunks == 1) {
      return o;
    } else {
      constexpr int rot_div = chunks >= 8 ? 1 : 8 / chunks;  // owners per quarter warp sharing a rotation
      return o * chunks + ((c + o / rot_div) & (chunks - 1));
    }
  }

  struct storage {
    chunk a[Arrays][tile_chunks];
  };

  // Starts the copies of the window [lo, hi) of the tile whose element 0 is
  // src[k][base], for each array k (a null one is not copied). A chunk
  // inside the window goes whole, one that the window ends in from its start
  // with the rest zero-filled, one that the window starts in element by
  // element; no element outside the window is read (2-byte elements of a
  // chunk the window starts in are copied by plain loads: cp.async moves 4
  // bytes at the least). Does not commit.
  __device__ static void copy_in(storage& sg, T const* const (&src)[Arrays], std::int64_t base, int lo,
                                 int hi) {
#pragma unroll
    for (int j = 0; j < chunks; ++j) {
      int const g = j * Block + static_cast<int>(threadIdx.x);
      int const e = g * per_chunk;
      if (e + per_chunk <= lo || e >= hi) continue;
      int const d = slot(g / chunks, g % chunks);
      if (e >= lo) {
        unsigned const bytes = static_cast<unsigned>(((hi - e < per_chunk ? hi - e : per_chunk)) * sizeof(T));
#pragma unroll
        for (int k = 0; k < Arrays; ++k)
          if (src[k]) detail_async::cp_async16(&sg.a[k][d], src[k] + base + e, bytes);
      } else {
#pragma unroll
        for (int u = 0; u < per_chunk; ++u) {
          if (e + u < lo || e + u >= hi) continue;
#pragma unroll
          for (int k = 0; k < Arrays; ++k) {
            if (!src[k]) continue;
            if constexpr (sizeof(T) >= 4)
              detail_async::cp_async_element<sizeof(T)>(&sg.a[k][d].v[u], src[k] + base + e + u);
            else
              sg.a[k][d].v[u] = src[k][base + e + u];
          }
        }
      }
    }
  }

  // Owner o's run of array k, into registers in V; an array that was not
  // copied (`staged` false) reads as `value`.
  __device__ static void read_run(storage const& sg, int k, int o, bool staged, T value, V (&x)[Items]) {
#pragma unroll
    for (int c = 0; c < chunks; ++c) {
      chunk const ch = staged ? sg.a[k][slot(o, c)] : chunk{};
#pragma unroll
      for (int u = 0; u < per_chunk; ++u) x[c * per_chunk + u] = to_compute(staged ? ch.v[u] : value);
    }
  }

  // Element m (0 .. tile_items - 1, memory order) of array k's tile, in V.
  __device__ static V element(storage const& sg, int k, int m) {
    int const o = m / Items, r = m % Items;
    return to_compute(sg.a[k][slot(o, r / per_chunk)].v[r % per_chunk]);
  }

  // Owner o's results into its run's slots of array k, rounded to T.
  __device__ static void write_run(storage& sg, int k, int o, V const (&w)[Items]) {
#pragma unroll
    for (int c = 0; c < chunks; ++c) {
      chunk out;
#pragma unroll
      for (int u = 0; u < per_chunk; ++u) out.v[u] = to_storage<T>(w[c * per_chunk + u]);
      sg.a[k][slot(o, c)] = out;
    }
  }

  // Stores the window [lo, hi) of array k's slots to dst[base ..], striped
  // and coalesced: whole chunks as 16-byte stores, partial ones element by
  // element. After a barrier that follows every owner's write_run.
  __device__ static void store(storage const& sg, int k, T* dst, std::int64_t base, int lo, int hi) {
#pragma unroll
    for (int j = 0; j < chunks; ++j) {
      int const g = j * Block + static_cast<int>(threadIdx.x);
      int const e = g * per_chunk;
      if (e + per_chunk <= lo || e >= hi) continue;
      chunk const out = sg.a[k][slot(g / chunks, g % chunks)];
      if (e >= lo && e + per_chunk <= hi) {
        *reinterpret_cast<chunk*>(dst + base + e) = out;
      } else {
#pragma unroll
        for (int u = 0; u < per_chunk; ++u)
          if (e + u >= lo && e + u < hi) dst[base + e + u] = out.v[u];
      }
    }
  }
};

}  // namespace recur::kernels
