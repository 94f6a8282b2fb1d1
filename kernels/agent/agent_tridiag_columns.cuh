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
// Why: the tile form must hold whole systems in a 48 KB tile, so at
// n = 512 its rows were 8-32 bytes wide and its copy alone reached 49-71%
// of the copy ceiling. Here the state of a block is 192 KB at n = 512
// (one block per SM), 96 KB at n = 256.
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

#include <cuda_runtime.h>

#include <recur/layout/layout.hpp>
#include "../block/block_tridiag.cuh"

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
  int systems;  // S, per block
  int chunks;   // C, per system (<= 32, every chunk >= 2 rows unless n = 1)
  int width;    // lanes per system in the boundary solve: bit_ceil(C)
  int pitch;    // shared-memory elements per chunk and array (tridiag_columns_pitch)
  int phases;   // 1: read a, b, c, d and write x only (no solve: the copy's share of the time)
};

// Shared memory holds each thread's chunk as consecutive rows (so the
// sweeps' unrolled row indices are constant offsets, not registers), the
// chunks `pitch` = rows_max | 1 elements apart: an odd distance puts the
// 32 lanes of a warp on distinct banks (4-byte words; and for 8-byte ones,
// each half warp).
constexpr int tridiag_columns_pitch(int rows) { return rows | 1; }

// Chunk q's rows start at q * (S * pitch + skew): with S * pitch a multiple
// of 32 words (S = 32, or 16 in f64), the boundary solve's lanes (one
// system, consecutive chunks) would all fall on one bank, 16-way replays
// in the phase where a block issues no loads (ncu, f32 n = 512 and 256
// interleaved: 24% and 39% of the shared-memory wavefronts). One word more
// per chunk spreads them over the banks. Only where a warp's (f64: a half
// warp's) sweep access covers one chunk: with S = 16 in f32 a warp spans
// two chunks, which the skew would put on common banks.
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

// Threads per block at most: f32 needs 1024 (32 systems x 32 chunks at
// n = 512) and then has 64 registers; f64's 16 systems need 512, and at 64
// registers it spilled ~500 bytes.
template <class T>
inline constexpr int tridiag_columns_max_threads = sizeof(T) == 4 ? 1024 : 512;

// Rows fetched ahead of the row being eliminated (beyond chunk_sweeps' one;
// in f32 more spilled at 64 registers).
template <class T>
inline constexpr int tridiag_columns_ahead = sizeof(T) == 4 ? 2 : 3;

// Lone: a block that has its SM to itself (its shared memory is more than
// half the SM's) and at most 512 threads, so each thread may take 128
// registers: f32 then fetches 4 rows ahead instead of 2 (and does not
// spill). Chosen by the dispatch (tridiag_columns_lone).
template <class T, bool Lone>
inline constexpr int tridiag_columns_threads = Lone ? 512 : tridiag_columns_max_threads<T>;
template <class T, bool Lone>
inline constexpr int tridiag_columns_lookahead = Lone && sizeof(T) == 4 ? 4 : tridiag_columns_ahead<T>;

template <class T, int R, bool Lone = false>
__global__ void __launch_bounds__(tridiag_columns_threads<T, Lone>)
    tridiag_columns_kernel(__grid_constant__ tridiag_columns_params<T> const p) {
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
    std::int64_t const g = p.nrhs == 1 ? item : item / p.nrhs, r = item - g * p.nrhs;  // (no 64-bit division for one)
    std::int64_t const sys = g * S + s;
    bool const mine = owner && sys < p.lay.count;
    if (t < S) sinfo[t] = INT_MAX;
    __syncthreads();
    std::int64_t const o = sys * p.lay.batch_stride + std::int64_t(first) * es;
    if (mine) {
      // One offset walks the rows in order (offsets kept per row cost a
      // 64-bit register pair each and spilled).
      T const* const pd = p.d + r * p.rhs_stride;
      std::int64_t at = o;
      int row = first;
      auto fetch = [&] {
        tridiag_equation<T> const q{row == 0 ? T(0) : p.a[at], p.b[at], row == n - 1 ? T(0) : p.c[at], pd[at]};
        at += es;
        ++row;
        return q;
      };
      chunk_span<T> k{sa + idx(q, 0, s), sc + idx(q, 0, s), sd + idx(q, 0, s)};
      if (p.phases == 1) {  // the same loads and stores, no arithmetic but a sum
        for (int i = 0; i < len; ++i) {
          tridiag_equation<T> const v = fetch();
          k.d[i] = v.a + v.b + v.c + v.d;
        }
      } else {
        // A chunk of exactly R rows (every chunk when C R = n) runs with its
        // length a constant: the row guards fold away (with a runtime length
        // each row was a branch, and every join register moves: 480
        // IMAD.MOV in the f32 kernel's SASS).
        auto sweep = [&](auto len_c) {
          int const ln = len_c;
          constexpr int L = tridiag_columns_lookahead<T, Lone>;
          tridiag_equation<T> ring[L];
#pragma unroll
          for (int j = 0; j < L; ++j)
            if (j < ln) ring[j] = fetch();
          auto load = [&](int i) {  // called for i = 0, 1, ... in order (chunk_sweeps)
            tridiag_equation<T> const v = ring[i % L];
            if (i + L < ln) ring[i % L] = fetch();
            return v;
          };
          chunk_ends<T> const e =
              chunk_sweeps<T, R, true>(first, ln, k, load, [&](int rw) { record_breakdown(sinfo + s, rw); });
          // Row 0's slot takes the first boundary equation; the last row's
          // slot already holds the second (the forward sweep's last row).
          // Neither slot's old value is needed by the substitution.
          k.a[0] = e.first.a;
          k.c[0] = e.first.c;
          k.d[0] = e.first.d;
        };
        if (len == R)
          sweep(std::integral_constant<int, R>{});
        else
          sweep(len);
      }
    }
    __syncthreads();
    // The boundary systems: segment j of warp w takes system w * per_warp + j,
    // then every warps * per_warp-th after it.
    for (int base = w * per_warp; p.phases > 1 && base < S; base += warps * per_warp) {
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
      T const xf = sd[idx(q, 0, s)], xl = sd[idx(q, len - 1, s)], nan = std::numeric_limits<T>::quiet_NaN();
      T* const px = p.x + o + r * p.rhs_stride;
      int const j0 = idx(q, 0, s);
      bool const ph1 = p.phases == 1, ok = broke == INT_MAX;
      auto store = [&](int i, int ln) {  // the expressions of chunk_substitute
        int const j = j0 + i;
        T const xi = ph1 ? sd[j] : i == 0 ? xf : i == ln - 1 ? xl : sd[j] - sa[j] * xf - sc[j] * xl;
        px[std::int64_t(i) * es] = ok ? xi : nan;
      };
      if (len == R) {
#pragma unroll
        for (int i = 0; i < R; ++i) store(i, R);
      } else {
#pragma unroll 2
        for (int i = 0; i < len; ++i) store(i, len);
      }
      if (p.info && q == 0 && r == p.nrhs - 1) p.info[sys] = broke == INT_MAX ? 0 : broke;
    }
    __syncthreads();  // shared memory and sinfo are reused by the next item
  }
}

}  // namespace recur::kernels
