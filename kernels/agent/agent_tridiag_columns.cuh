#pragma once
// Thomas-PCR on systems that lie side by side in memory (the interleaved
// layout: row i of system k at i * element_stride + k), with every row of
// the copy a full 128-byte line.
//
// A block takes S adjacent systems (S = 32 in f32, 16 in f64: 128 bytes of
// each row) and cuts each into C chunks (C <= 32, at most R rows each);
// thread (s, q) owns chunk q of system s. Threads of a warp are S systems
// side by side (and 32 / S chunks), so each of their loads is one line. A
// thread eliminates its chunk as the rows arrive (block_tridiag.cuh's
// chunk_sweeps, loads four rows ahead), keeping the normalised rows in
// shared memory (3 words per row: this is the on-chip state a one-pass
// solve cannot avoid, 384 n bytes per block); the 2 C boundary equations of
// each system are solved by PCR in a segment of a warp (warp_boundary_pcr,
// one system per segment of bit_ceil(C) lanes), and every thread
// substitutes its chunk and stores x, again a line per warp and row.
//
// Why: a shared-memory tile holds whole systems, so for n in the hundreds
// its rows are only 8-32 bytes of an interleaved batch wide, and the copy
// alone cannot reach the bandwidth. Here a block's state is the 3 words per
// row a one-pass solve must keep (192 KB at n = 512 in f32: one block an
// SM).
//
// The arithmetic is the tile's Thomas-PCR (chunk_sweeps, warp_boundary_pcr,
// chunk_substitute's expressions), so with the tile's chunks (C =
// min(32, n / 2), chunk_split) x and info are bitwise the tile's. Any
// layout is solved correctly; only adjacent systems (batch_stride 1) make
// full lines. x may alias d: a thread reads its chunk's d before writing
// x, and no other thread reads them.

#include <climits>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <recur/layout/layout.hpp>
#include "../block/block_tridiag_thomas_pcr.cuh"

namespace recur::kernels {

template <class T>
struct tridiag_columns_params {
  T const* a;
  T const* b;
  T const* c;
  T const* d;
  T* x;
  std::int32_t* info;
  layout lay;
  std::int64_t nrhs;
  std::int64_t rhs_stride;
  int systems;   // S, per block
  int chunks;    // C, per system (<= 32, every chunk >= 2 rows unless n = 1)
  int width;     // lanes per system in the boundary solve: bit_ceil(C)
  int pitch;     // shared-memory elements per chunk and array (tridiag_columns_pitch)
  int segments;  // tridiag_segments_kernel only: segments per system (chunk_split of n), the cluster's size
  int segment_rows;  // and (n + pad_rows) / segments (the kernel's one runtime division, done on the host)
  int pad_rows;      // tridiag_segments_kernel's Pad instance: identity rows past n
  // pivoting = automatic's screen (block_tridiag.cuh's row_dominant): null,
  // or a flag per system, 1 for a system left unwritten for the pivoted form
  std::int32_t* flags = nullptr;
};

// Shared memory holds each thread's chunk as consecutive rows (so the
// sweeps' unrolled row indices are constant offsets, not registers), the
// chunks `pitch` = rows_max | 1 elements apart: an odd distance puts the
// 32 lanes of a warp on distinct banks (4-byte words; and for 8-byte ones,
// each half warp).
constexpr int tridiag_columns_pitch(int rows) { return rows | 1; }

// Chunk q's rows start at q * (S * pitch + skew): with S * pitch a multiple
// of 32 words (S = 32, or 16 in f64), the boundary solve's lanes (one
// system, consecutive chunks) would all fall on one bank, 16-way replays.
// One word more per chunk spreads them over the banks. Only where a warp's
// (f64: a half warp's) sweep access covers one chunk: with S = 16 in f32 a
// warp spans two chunks, which the skew would put on common banks.
template <class T>
constexpr int tridiag_columns_skew(int systems) {
  return systems * int(sizeof(T)) >= 128 ? 1 : 0;
}

template <class T>
constexpr std::size_t tridiag_columns_smem(int systems, int chunks, int rows) {
  return 3 * std::size_t(chunks) *
             (std::size_t(systems) * std::size_t(tridiag_columns_pitch(rows)) +
              std::size_t(tridiag_columns_skew<T>(systems))) *
             sizeof(T) +
         std::size_t(systems) * sizeof(int);
}

// The segmented kernel's: the same, then per system its segment's link
// equations (6 words), x_L and x_R, 2 words per segment for the block
// Thomas, and its first bad row.
template <class T>
constexpr std::size_t tridiag_segments_smem(int systems, int chunks, int rows, int segments) {
  return tridiag_columns_smem<T>(systems, chunks, rows) +
         std::size_t(systems) * ((8 + 2 * std::size_t(segments)) * sizeof(T) + sizeof(int));
}

// DRegs (tridiag_segments_kernel): d's rows in registers, only the chunks'
// two end rows' d in shared memory.
template <class T>
constexpr std::size_t tridiag_segments_smem_dregs(int systems, int chunks, int rows, int segments) {
  return tridiag_segments_smem<T>(systems, chunks, rows, segments) -
         std::size_t(chunks) *
             (std::size_t(systems) * std::size_t(tridiag_columns_pitch(rows)) +
              std::size_t(tridiag_columns_skew<T>(systems)) - 2 * std::size_t(systems)) *
             sizeof(T);
}

// Threads per block at most: f32 needs 1024 (32 systems x 32 chunks at
// n = 512) and then has 64 registers; f64's 16 systems need 512 (at 64
// registers f64 spills).
template <class T>
inline constexpr int tridiag_columns_max_threads = sizeof(T) == 4 ? 1024 : 512;

// Rows fetched ahead of the row being eliminated (beyond chunk_sweeps' one;
// in f32 more spill at 64 registers).
template <class T>
inline constexpr int tridiag_columns_ahead = sizeof(T) == 4 ? 2 : 3;

// The segmented kernel's: f64 fetches 4 rows ahead, not 3. Its blocks are
// held to 4 per SM by shared memory (128-row segments of 16 systems:
// 52 KB), so 128 registers a thread cost no blocks; f32 has none to spare
// (64 at 256 threads, 4 blocks). tridiag_auto_f64_interleaved/n:1024.
template <class T>
inline constexpr int tridiag_segments_ahead = sizeof(T) == 4 ? tridiag_columns_ahead<T> : 4;

// Lone: a block that has its SM to itself (its shared memory is more than
// half the SM's) and at most 512 threads, so each thread may take 128
// registers: f32 then fetches 4 rows ahead instead of 2 (and does not
// spill). Chosen by the dispatch (tridiag_columns_lone).
template <class T, bool Lone>
inline constexpr int tridiag_columns_threads = Lone ? 512 : tridiag_columns_max_threads<T>;
template <class T, bool Lone>
inline constexpr int tridiag_columns_lookahead = Lone && sizeof(T) == 4 ? 4 : tridiag_columns_ahead<T>;

// Thread (s, q)'s chunk, rows [first, first + len) of its system (the
// caller's offset o at row first; d of the right-hand side at pd): fetched
// L rows ahead and eliminated into k (chunk_sweeps). Row 0's slot then
// takes the first boundary equation; the last row's slot already holds the
// second (the forward sweep's last row). Neither slot's old value is needed
// by the substitution.
// Chain: chunk_sweeps without its backward sweep (the rows left for
// columns_store's Chain form).
// Near: a chunk of R - 1 rows also runs with its length a constant (the
// chunks of a segment whose rows are not a multiple of the chunks: lengths
// R and R - 1).
// Pinned: the loads and the stores of a and c volatile, so that ptxas keeps
// them in program order (the fetch of row i + L ahead of row i's stores).
// Pad: rows from n on are identity rows (b = 1, the rest 0), not read.
template <class T, int R, bool Lone, int L = tridiag_columns_lookahead<T, Lone>, bool Chain = false,
          bool Near = false, bool Pinned = false, bool Pad = false>
__device__ __forceinline__ void columns_sweep(tridiag_columns_params<T> const& p, T const* pd, std::int64_t o,
                                              int first, int len, chunk_span<T> k, int* info) {
  int const n = int(p.lay.n);
  std::int64_t const es = p.lay.element_stride;
  // Every chunk has a row. Saying so (a return no caller takes) lets ptxas
  // schedule the f32 sweeps of the plain instances in fewer instructions a
  // row than without it (their SASS); the Near and Pinned ones do better
  // without.
  if constexpr (sizeof(T) == 4 && !Near && !Pinned)
    if (len <= 0) return;
  // Four pointers walk the rows (one 64-bit add each per row, not a scaled
  // offset per load); every row's a and c are loaded (a[0] and c[n - 1]
  // exist, though the caller need not set them) and the two the solve must
  // ignore are zeroed after the load, so no load is predicated.
  using TL = std::conditional_t<Pinned, T const volatile, T const>;
  TL* pa = p.a + o;
  TL* pb = p.b + o;
  TL* pc = p.c + o;
  TL* pdd = pd + o;
  // A chunk of exactly R rows (every chunk when C R = n) runs with its
  // length a constant: the row guards fold away (with a runtime length each
  // row is a branch).
  auto sweep = [&](auto len_c) {
    int const ln = len_c;
    constexpr bool full = !std::is_same_v<decltype(len_c), int>;
    constexpr int LN = [](auto v) {  // the constant length (R, or R - 1), 0 for a runtime one
      if constexpr (std::is_same_v<decltype(v), int>)
        return 0;
      else
        return decltype(v)::value;
    }(decltype(len_c){});
    bool const top = first == 0, bottom = first + ln == n;
    // The screen (flags: pivoting = automatic) on each row as it is fetched
    // in f32 and as the sweep takes it in f64: the placement that keeps each
    // type's load schedule (H100 tridiag_nopivot_*_interleaved).
    constexpr bool screen_at_fetch = sizeof(T) == 4;
    // Row j of the chunk (j counts up from 0 across the calls).
    auto fetch = [&](int j) {
      tridiag_equation<T> q{T(0), T(1), T(0), T(0)};
      if (!Pad || first + j < n) q = {*pa, *pb, *pc, *pdd};
      pa += es, pb += es, pc += es, pdd += es;
      if (j == 0 && top) q.a = T(0);
      if (Pad ? first + j == n - 1 : full ? (j == LN - 1 && bottom) : (bottom && j == ln - 1)) q.c = T(0);
      if constexpr (screen_at_fetch)
        if (p.flags) screen_row(q);
      return q;
    };
    tridiag_equation<T> ring[L];
#pragma unroll
    for (int j = 0; j < L; ++j)
      if (j < ln) ring[j] = fetch(j);
    auto load = [&](int i) {  // called for i = 0, 1, ... in order (chunk_sweeps)
      tridiag_equation<T> v = ring[i % L];
      if (i + L < ln) ring[i % L] = fetch(i + L);
      if constexpr (!screen_at_fetch)
        if (p.flags) screen_row(v);
      return v;
    };
    using TS = std::conditional_t<Pinned, T volatile, T>;
    struct {
      TS* a;
      TS* c;
      T* d;
    } kk{k.a, k.c, k.d};
    chunk_ends<T> const e =
        chunk_sweeps<T, R, true, Chain>(first, ln, kk, load, [&](int rw) { record_breakdown(info, rw); });
    k.a[0] = e.first.a;
    k.c[0] = e.first.c;
    k.d[0] = e.first.d;
  };
  if (len == R)
    sweep(std::integral_constant<int, R>{});
  else if (Near && len == R - 1)
    sweep(std::integral_constant<int, R - 1>{});
  else
    sweep(len);
}

// The substitution and the store of a chunk: x_first, x_last in the end
// slots of d, the interior rows by chunk_substitute's expressions; NaN for
// a system that broke down (ok false).
// Chain (the rows of chunk_sweeps' Chain form): from the last row up, each
// x_i from x_(i+1). Pad: only the first `valid` rows are stored.
template <class T, int R, bool Chain = false, bool Near = false, bool Pad = false>
__device__ __forceinline__ void columns_store(T const* ka, T const* kc, T const* kd, int len, T* px,
                                              std::int64_t es, bool ok, int valid = 0) {
  T const xf = kd[0], xl = kd[len - 1], nan = std::numeric_limits<T>::quiet_NaN();
  if constexpr (Chain) {
    T xs = xl;
    px += std::int64_t(len - 1) * es;
    auto up = [&](int i, int ln) {  // i = ln - 1, ..., 0: px walks the rows up
      T const xi = i == ln - 1 ? xl : i == 0 ? xf : kd[i] - ka[i] * xf - kc[i] * xs;
      xs = xi;
      if (!Pad || i < valid) *px = ok ? xi : nan;
      px -= es;
    };
    if (len == R) {
#pragma unroll
      for (int i = R - 1; i >= 0; --i) up(i, R);
    } else if (Near && len == R - 1) {
#pragma unroll
      for (int i = R - 2; i >= 0; --i) up(i, R - 1);
    } else {
#pragma unroll 2
      for (int i = len - 1; i >= 0; --i) up(i, len);
    }
    return;
  }
  auto store = [&](int i, int ln) {  // in order of i: px walks the rows
    T const xi = i == 0 ? xf : i == ln - 1 ? xl : kd[i] - ka[i] * xf - kc[i] * xl;
    if (!Pad || i < valid) *px = ok ? xi : nan;
    px += es;
  };
  if (len == R) {
#pragma unroll
    for (int i = 0; i < R; ++i) store(i, R);
  } else if (Near && len == R - 1) {
#pragma unroll
    for (int i = 0; i < R - 1; ++i) store(i, R - 1);
  } else {
#pragma unroll 2
    for (int i = 0; i < len; ++i) store(i, len);
  }
}

// Burst: every row of a chunk fetched at once (L = R), at most 256 threads
// a block, for small batches, where the solve is one block's latency and
// rows fetched a few at a time would be that many trips to memory
// (tridiag_plan_columns_burst).
template <class T, int R, bool Lone = false, bool Burst = false>
__global__ void __launch_bounds__(Burst ? 256 : tridiag_columns_threads<T, Lone>)
    tridiag_columns_kernel(__grid_constant__ tridiag_columns_params<T> const p) {
  constexpr int L = Burst ? R : tridiag_columns_lookahead<T, Lone>;
  extern __shared__ __align__(16) unsigned char columns_smem[];
  int const S = p.systems, C = p.chunks, P = p.pitch;
  int const CS = S * P + tridiag_columns_skew<T>(S);  // one chunk's rows, all S systems
  T* const sa = reinterpret_cast<T*>(columns_smem);
  T* const sc = sa + C * CS;
  T* const sd = sc + C * CS;
  int* const sinfo = reinterpret_cast<int*>(sd + C * CS);
  int const n = int(p.lay.n);
  chunk_split const split{n / C, n % C};
  int const t = int(threadIdx.x), s = t % S, q = t / S;
  bool const owner = q < C;
  int const first = owner ? split.first(q) : 0, len = owner ? split.len(q) : 0;
  int const wd = p.width, per_warp = 32 / wd, warps = int(blockDim.x) / 32;
  int const w = t / 32, lane = t % 32, seg_lane = lane % wd;
  std::int64_t const es = p.lay.element_stride, groups = (p.lay.count + S - 1) / S;
  auto idx = [=](int chunk, int row, int sys) { return chunk * CS + sys * P + row; };
  for (std::int64_t item = blockIdx.x; item < groups * p.nrhs; item += gridDim.x) {
    std::int64_t const g = p.nrhs == 1 ? item : item / p.nrhs,
                       r = item - g * p.nrhs;  // (no 64-bit division for one)
    std::int64_t const sys = g * S + s;
    bool const mine = owner && sys < p.lay.count;
    if (t < S) sinfo[t] = INT_MAX;
    __syncthreads();
    std::int64_t const o = sys * p.lay.batch_stride + std::int64_t(first) * es;
    chunk_span<T> const k{sa + idx(q, 0, s), sc + idx(q, 0, s), sd + idx(q, 0, s)};
    if (mine) columns_sweep<T, R, Lone, L>(p, p.d + r * p.rhs_stride, o, first, len, k, sinfo + s);
    __syncthreads();
    // The boundary systems: segment j of warp w takes system w * per_warp + j,
    // then every warps * per_warp-th after it.
    for (int base = w * per_warp; base < S; base += warps * per_warp) {
      int const sl = base + lane / wd;
      bool const ok = sl < S && seg_lane < C && g * S + sl < p.lay.count;
      tridiag_eq3<T> f0{T(0), T(0), T(0)}, f1{T(0), T(0), T(0)};
      int i0 = 0, i1 = 0;
      if (ok) {
        i0 = idx(seg_lane, 0, sl);
        i1 = idx(seg_lane, split.len(seg_lane) - 1, sl);
        f0 = {sa[i0], sc[i0], sd[i0]};
        f1 = {sa[i1], sc[i1], sd[i1]};
      }
      warp_boundary_pcr(
          f0, f1, C, seg_lane, ok, sinfo + (ok ? sl : 0),
          [split](int j) {
            int const c = j / 2;
            return (j & 1) ? split.first(c) + split.len(c) - 1 : split.first(c);
          },
          wd);
      if (ok) {
        sd[i0] = f0.d;
        sd[i1] = f1.d;
      }
    }
    __syncthreads();
    if (mine) {
      int const broke = sinfo[s];
      if (!p.flags || broke == INT_MAX)
        columns_store<T, R>(k.a, k.c, k.d, len, p.x + o + r * p.rhs_stride, es, broke == INT_MAX);
      if (q == 0 && r == p.nrhs - 1) report_system(p.info, p.flags, sys, broke);
    }
    __syncthreads();  // shared memory and sinfo are reused by the next item
  }
}

}  // namespace recur::kernels
