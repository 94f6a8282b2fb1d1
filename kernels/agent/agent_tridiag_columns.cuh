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
#include <utility>

#include <cooperative_groups.h>
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
  int segments;  // tridiag_segments_kernel only: segments per system (chunk_split of n), the cluster's size
  int segment_rows;  // and n / segments (the kernel's one runtime division, done on the host)
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
// n = 512) and then has 64 registers; f64's 16 systems need 512, and at 64
// registers it spilled ~500 bytes.
template <class T>
inline constexpr int tridiag_columns_max_threads = sizeof(T) == 4 ? 1024 : 512;

// Rows fetched ahead of the row being eliminated (beyond chunk_sweeps' one;
// in f32 more spilled at 64 registers).
template <class T>
inline constexpr int tridiag_columns_ahead = sizeof(T) == 4 ? 2 : 3;

// The segmented kernel's (below): f64 fetches 4 rows ahead, not 3. Its
// blocks are held to 4 per SM by shared memory (128-row segments of 16
// systems: 52 KB), so 128 registers a thread cost no blocks; f32 has none
// to spare (64 at 256 threads, 4 blocks). tune_tridiag (H100, 2026-11-24),
// interleaved f64, % of copy, 3 -> 4 rows ahead, two runs: n = 256 86.9 ->
// 87.9, 512 82.3 -> 83.1, 1024 78.5 -> 79.3, 4096 58.0 -> 62.9 / 62.5;
// 5 rows ahead lost 1.5-2 points, 6 lost 4-8 (bench/results/h100-tune-tridiag-ahead.log).
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
template <class T, int R, bool Lone, int L = tridiag_columns_lookahead<T, Lone>, bool Chain = false,
          bool Near = false, bool Pinned = false>
__device__ __forceinline__ void columns_sweep(tridiag_columns_params<T> const& p, T const* pd, std::int64_t o,
                                              int first, int len, chunk_span<T> k, int* info) {
  int const n = int(p.lay.n);
  std::int64_t const es = p.lay.element_stride;
  // Four pointers walk the rows (one 64-bit add each per row); every row's
  // a and c are loaded (a[0] and c[n - 1] exist, though the caller need not
  // set them) and the two the solve must ignore are zeroed after the load.
  // Before, one 64-bit offset was scaled and added to each array's base for
  // every load, and both end rows were tested at every row (predicated
  // loads): about 16 integer instructions of a sweep row's ~52 in the f32
  // segmented kernel's SASS. tune_tridiag (H100, 2026-11-24), interleaved,
  // % of copy, before -> after: f32 n = 256 78.4 -> 80.8, 512 73.8 -> 76.5,
  // 1024 68.6 -> 71.3; f64 n = 64 89.6 -> 88.4, 128 88.3 -> 86.6, 4096
  // 60.0 -> 58.7 (bench/results/h100-tune-tridiag-walk.log). f64 with the
  // old form kept did worse still at n = 512 and 1024 (80.5 and 76.2
  // against the walk's 82.4 and 78.8; h100-tune-tridiag-f64-form.log): its
  // f64 kernels had compiled differently from before this change anyway
  // (registers 114 -> 108, 116 -> 119; from the block_tridiag.cuh edits).
  using TL = std::conditional_t<Pinned, T const volatile, T const>;
  TL* pa = p.a + o;
  TL* pb = p.b + o;
  TL* pc = p.c + o;
  TL* pdd = pd + o;
  // A chunk of exactly R rows (every chunk when C R = n) runs with its
  // length a constant: the row guards fold away (with a runtime length each
  // row was a branch, and every join register moves: 480 IMAD.MOV in the
  // f32 kernel's SASS).
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
    // Row j of the chunk (j counts up from 0 across the calls).
    auto fetch = [&](int j) {
      tridiag_equation<T> q{*pa, *pb, *pc, *pdd};
      pa += es, pb += es, pc += es, pdd += es;
      if (j == 0 && top) q.a = T(0);
      if (full ? (j == LN - 1 && bottom) : (bottom && j == ln - 1)) q.c = T(0);
      return q;
    };
    tridiag_equation<T> ring[L];
#pragma unroll
    for (int j = 0; j < L; ++j)
      if (j < ln) ring[j] = fetch(j);
    auto load = [&](int i) {  // called for i = 0, 1, ... in order (chunk_sweeps)
      tridiag_equation<T> const v = ring[i % L];
      if (i + L < ln) ring[i % L] = fetch(i + L);
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
// x_i from x_(i+1).
template <class T, int R, bool Chain = false, bool Near = false>
__device__ __forceinline__ void columns_store(T const* ka, T const* kc, T const* kd, int len, T* px,
                                              std::int64_t es, bool ok) {
  T const xf = kd[0], xl = kd[len - 1], nan = std::numeric_limits<T>::quiet_NaN();
  if constexpr (Chain) {
    T xs = xl;
    px += std::int64_t(len - 1) * es;
    auto up = [&](int i, int ln) {  // i = ln - 1, ..., 0: px walks the rows up
      T const xi = i == ln - 1 ? xl : i == 0 ? xf : kd[i] - ka[i] * xf - kc[i] * xs;
      xs = xi;
      *px = ok ? xi : nan;
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
    *px = ok ? xi : nan;
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
// a block -- for small batches, where the solve is one block's latency and
// the rows fetched a few at a time were that many trips to memory
// (tridiag_launch_plan::columns_burst).
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
    std::int64_t const g = p.nrhs == 1 ? item : item / p.nrhs, r = item - g * p.nrhs;  // (no 64-bit division for one)
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
      columns_store<T, R>(k.a, k.c, k.d, len, p.x + o + r * p.rhs_stride, es, broke == INT_MAX);
      if (p.info && q == 0 && r == p.nrhs - 1) p.info[sys] = broke == INT_MAX ? 0 : broke;
    }
    __syncthreads();  // shared memory and sinfo are reused by the next item
  }
}

// The segmented kernels' per-system state beside the rows (shared memory,
// tridiag_segments_smem's tail): the segment's link equations, x_L and x_R,
// the block Thomas's eliminations, the breakdowns and the segment's first
// bad rows (for the peers).
template <class T>
struct segment_state {
  T* link;    // 6 x S: l0, r0, d0, l1, r1, d1 of each system
  T* xlr;     // 2 x S: x_L, x_R
  T* elim;    // 2 x G x S: c0, d0 of each segment's spike_elim (block Thomas join)
  int* sinfo;  // S
  int* sbad;   // S
  __device__ static segment_state carve(T* base, int S, int G) {
    segment_state st;
    st.link = base;
    st.xlr = base + 6 * S;
    st.elim = st.xlr + 2 * S;
    st.sinfo = reinterpret_cast<int*>(st.elim + 2 * G * S);
    st.sbad = st.sinfo + S;
    return st;
  }
};

// Where a segmented block's boundary solve stands: system sl of the block
// (lane seg_lane of its bit_ceil(C) lanes), whether that lane holds a
// chunk of a system that exists, and the segment's rows.
struct segment_lane {
  int sl, seg_lane, width;
  bool ok;
  int s0;              // the segment's first row
  chunk_split split;   // its chunks
};

// The segment's boundary equations solved by PCR with the spikes of x_L
// (the previous segment's last unknown) and x_R (the next one's first)
// carried as two columns; the end rows' slots keep them for the
// substitution (which reads neither end row's a or c), and the segment's
// two end equations in x_L, x_R go to st.link. idx(chunk, row, system):
// the element of sa / sc / sd.
template <class T, class Idx, class IdxD>
__device__ __forceinline__ void segment_boundary(T* sa, T* sc, T* sd, Idx idx, IdxD idxd, segment_lane const& L, int C,
                                                 int S, segment_state<T> const& st) {
  tridiag_eq3<T> f0{T(0), T(0), T(0)}, f1{T(0), T(0), T(0)};
  boundary_cols<T, 2> g0{{T(0), T(0)}}, g1{{T(0), T(0)}};
  int i0 = 0, i1 = 0, e0 = 0, e1 = 0;
  if (L.ok) {
    i0 = idx(L.seg_lane, 0, L.sl);
    i1 = idx(L.seg_lane, L.split.len(L.seg_lane) - 1, L.sl);
    e0 = idxd(L.seg_lane, 0, L.sl);
    e1 = idxd(L.seg_lane, L.split.len(L.seg_lane) - 1, L.sl);
    f0 = {sa[i0], sc[i0], sd[e0]};
    f1 = {sa[i1], sc[i1], sd[e1]};
    if (L.seg_lane == 0) g0.v[0] = f0.a, f0.a = T(0);
    if (L.seg_lane == C - 1) g1.v[1] = f1.c, f1.c = T(0);
  }
  int const s0 = L.s0;
  chunk_split const split = L.split;
  warp_boundary_pcr<T, 2>(
      f0, f1, C, L.seg_lane, L.ok, st.sinfo + (L.ok ? L.sl : 0),
      [s0, split](int jj) {
        int const c = jj / 2;
        return s0 + ((jj & 1) ? split.first(c) + split.len(c) - 1 : split.first(c));
      },
      L.width, &g0, &g1);
  if (L.ok) {
    int const sl = L.sl;
    sa[i0] = g0.v[0], sc[i0] = g0.v[1], sd[e0] = f0.d;
    sa[i1] = g1.v[0], sc[i1] = g1.v[1], sd[e1] = f1.d;
    if (L.seg_lane == 0) st.link[sl] = g0.v[0], st.link[S + sl] = g0.v[1], st.link[2 * S + sl] = f0.d;
    if (L.seg_lane == C - 1) st.link[3 * S + sl] = g1.v[0], st.link[4 * S + sl] = g1.v[1], st.link[5 * S + sl] = f1.d;
  }
}

// The 2 C boundary equations of system sl of a segment (first row s0), in
// order: chunk q's first row (equation 2 q), then its last (2 q + 1);
// slot(j): equation j's element of sa / sc / sd, row(j): its row of the
// system.
template <class Idx, class IdxD>
struct boundary_eqs {
  Idx idx;
  IdxD idxd;  // the same for d's element
  chunk_split split;
  int sl, s0;
  __device__ int slot(int j) const {
    int const q = j / 2;
    return idx(q, (j & 1) ? split.len(q) - 1 : 0, sl);
  }
  __device__ int dslot(int j) const {
    int const q = j / 2;
    return idxd(q, (j & 1) ? split.len(q) - 1 : 0, sl);
  }
  __device__ int row(int j) const {
    int const q = j / 2;
    return s0 + ((j & 1) ? split.first(q) + split.len(q) - 1 : split.first(q));
  }
};

// The same boundary equations solved by one thread per system (Thomas with
// the x_L and x_R columns carried): the 2 C equations of system sl, in
// order (chunk q's first row, then its last), normalised (b = 1), from the
// end rows' slots. Forward: each equation loses its coupling to the one
// before, its slots keeping (c', x_L column, d'), the x_R column being 0
// until the last equation; backward from the last: every equation's slots
// end as x = d - sa x_L - sc x_R, as segment_boundary leaves them. The
// block's other threads wait at the barrier after it: against PCR's 2 C
// lanes per system for log2(2 C) steps, each equation is combined once.
template <class T, class Idx, class IdxD>
__device__ __forceinline__ void segment_boundary_thomas(T* sa, T* sc, T* sd, Idx idx, IdxD idxd, int S, int C, bool ok,
                                                        int sl, int s0, chunk_split split,
                                                        segment_state<T> const& st) {
  if (!ok) return;
  int const m = 2 * C;
  boundary_eqs<Idx, IdxD> const eq{idx, idxd, split, sl, s0};
  auto slot = [&](int j) { return eq.slot(j); };
  auto dslot = [&](int j) { return eq.dslot(j); };
  auto row_of = [&](int j) { return eq.row(j); };
  T cp = T(0), dp = T(0), lp = T(0), rl = T(0);
  int bad = -1;
  for (int j = 0; j < m; ++j) {
    int const i = slot(j), e = dslot(j);
    T a = sa[i], c = sc[i];
    T const d = sd[e];
    T gl = T(0), gr = T(0);
    if (j == 0) gl = a, a = T(0);
    if (j == m - 1) gr = c, c = T(0);
    T const den = T(1) - a * cp;
    if (bad < 0 && !usable_pivot(den)) bad = row_of(j);
    T const r = pivot_rcp(den);
    cp = c * r;
    dp = (d - a * dp) * r;
    lp = (gl - a * lp) * r;
    rl = gr * r;  // the x_R column: 0 before the last equation
    sc[i] = cp, sa[i] = lp, sd[e] = dp;
  }
  if (bad >= 0) record_breakdown(st.sinfo + sl, bad);
  // Backward: (d, l, r) of equation j = (d', l', r') - c' (d, l, r) of j + 1.
  T xd = dp, xl = lp, xr = rl;
  {
    int const i = slot(m - 1);
    sa[i] = xl, sc[i] = xr, sd[dslot(m - 1)] = xd;
    st.link[3 * S + sl] = xl, st.link[4 * S + sl] = xr, st.link[5 * S + sl] = xd;
  }
  for (int j = m - 2; j >= 0; --j) {
    int const i = slot(j), e = dslot(j);
    T const c = sc[i];
    xd = sd[e] - c * xd;
    xl = sa[i] - c * xl;
    xr = -c * xr;
    sa[i] = xl, sc[i] = xr, sd[e] = xd;
  }
  st.link[sl] = xl, st.link[S + sl] = xr, st.link[2 * S + sl] = xd;
}

// The same boundary equations by two threads per system, eliminating
// from both ends at once (a twisted factorisation): thread t < S takes
// system t's equations 0 .. C - 1 downward (as segment_boundary_thomas),
// thread S + t its equations 2 C - 1 .. C upward, each normalised equation
// left as y_j = d'_j - l'_j x_L - a'_j y_(j-1) (the x_R column r'_j in sc);
// the two meet at equations C - 1 and C (a 2 x 2 solve each side does
// itself), then each substitutes back towards its end. Half the chain of
// segment_boundary_thomas for twice its threads. Every thread of the
// block calls it (two __syncthreads), in a block of at least
// tridiag_boundary_twisted_threads(S). (With named barriers for the 2 S
// threads alone instead, compute-sanitizer's racecheck reported hazards
// across the kernel's later __syncthreads, block Thomas join only; the
// speed was the same: bench/results/h100-tune-tridiag-twisted.log.)
__host__ __device__ constexpr int tridiag_boundary_twisted_threads(int systems) {
  return 2 * systems < 32 ? 32 : (2 * systems + 31) / 32 * 32;
}
template <class T, class Idx, class IdxD>
__device__ __forceinline__ void segment_boundary_twisted(T* sa, T* sc, T* sd, Idx idx, IdxD idxd, int S, int C, bool ok,
                                                         int t, int s0, chunk_split split,
                                                         segment_state<T> const& st) {
  int const m = 2 * C, h = C, sl = t < S ? t : t - S;
  bool const up = t >= S;
  boundary_eqs<Idx, IdxD> const eq{idx, idxd, split, sl, s0};
  auto slot = [&](int j) { return eq.slot(j); };
  auto dslot = [&](int j) { return eq.dslot(j); };
  auto row_of = [&](int j) { return eq.row(j); };
  // Down: (cp, dp, lp) of y_j + cp y_(j+1) = dp - lp x_L. Up: (ap, dp, rp)
  // of y_j + ap y_(j-1) = dp - rp x_R; ep is cp or ap, the coupling carried.
  T ep = T(0), dp = T(0), gp = T(0);
  int bad = -1;
  if (ok) {
    for (int k = 0; k < h; ++k) {
      int const j = up ? m - 1 - k : k;
      int const i = slot(j), e = dslot(j);
      T a = sa[i], c = sc[i];
      T const d = sd[e];
      T g = T(0);  // the x_L (down) or x_R (up) column
      if (!up && j == 0) g = a, a = T(0);
      if (up && j == m - 1) g = c, c = T(0);
      T const far = up ? a : c, near = up ? c : a;  // coupling ahead, coupling eliminated
      T const den = T(1) - near * ep;
      if (bad < 0 && !usable_pivot(den)) bad = row_of(j);
      T const r = pivot_rcp(den);
      ep = far * r;
      dp = (d - near * dp) * r;
      gp = (g - near * gp) * r;
      if (up)
        sa[i] = ep, sc[i] = gp, sd[e] = dp;
      else
        sc[i] = ep, sa[i] = gp, sd[e] = dp;
    }
  }
  __syncthreads();
  // The other end's last equation: (e, d, g) of j = C (read by down) or
  // C - 1 (by up); then the middle unknown of this end as (D, L, R).
  T xd = T(0), xl = T(0), xr = T(0);
  if (ok) {
    int const i = slot(up ? h - 1 : h);
    T const eo = up ? sc[i] : sa[i], d_o = sd[dslot(up ? h - 1 : h)], go = up ? sa[i] : sc[i];
    T const den = T(1) - ep * eo;
    if (bad < 0 && !usable_pivot(den)) bad = row_of(h);
    T const r = pivot_rcp(den);
    // y = (mine - e (other)) / den: mine = (dp, gp as L or R), other = (d_o, go as R or L).
    xd = (dp - ep * d_o) * r;
    T const gm = gp * r, go2 = -ep * go * r;
    xl = up ? go2 : gm;
    xr = up ? gm : go2;
  }
  __syncthreads();
  if (!ok) return;
  if (bad >= 0) record_breakdown(st.sinfo + sl, bad);
  // Back from the middle to this end: y_j = (d'_j, l'_j or r'_j) - e'_j y_(j -+ 1).
  {
    int const i = slot(up ? h : h - 1);
    sa[i] = xl, sc[i] = xr, sd[dslot(up ? h : h - 1)] = xd;
  }
  for (int k = h - 2; k >= 0; --k) {
    int const i = slot(up ? m - 1 - k : k), di = dslot(up ? m - 1 - k : k);
    T const e = up ? sa[i] : sc[i], g = up ? sc[i] : sa[i];
    xd = sd[di] - e * xd;
    if (up)
      xl = -e * xl, xr = g - e * xr;
    else
      xl = g - e * xl, xr = -e * xr;
    sa[i] = xl, sc[i] = xr, sd[di] = xd;
  }
  if (up)
    st.link[3 * S + sl] = xl, st.link[4 * S + sl] = xr, st.link[5 * S + sl] = xd;
  else
    st.link[sl] = xl, st.link[S + sl] = xr, st.link[2 * S + sl] = xd;
}

// How a cluster's blocks join their segments (tridiag_segments_kernel's
// Join): segment_join's block Thomas or PCR in every block, or
// segment_join_scatter's PCR once per system with the results written to
// the blocks that need them.
enum segment_join_kind : int { segment_join_by_thomas = 0, segment_join_by_pcr = 1, segment_join_by_scatter = 2 };

// System sy's reduced system over the G segments by PCR, a lane per
// segment (lane gl of the warp's gw = bit_ceil(G) lanes for this system;
// act: the lane holds a segment of a system that exists; called by whole
// warps): the segment's link read from block gl's shared memory, then
// log2(gw) steps of spike_pcr_combine. Leaves lk with the segment's x_first
// (d0) and x_last (d1); returns the system's first bad row, the same in
// each of its lanes.
template <class T, class Cluster>
__device__ __forceinline__ int segment_pcr(Cluster const& cluster, segment_state<T> const& st, int S, int G, int sy,
                                           int gl, int gw, bool act, chunk_split segs, spike_link<T>& lk) {
  lk = {T(0), T(0), T(0), T(0), T(0), T(0)};
  int bad = INT_MAX;
  if (act) {
    T const* const pl = cluster.map_shared_rank(st.link, gl);
    lk = {pl[sy], pl[S + sy], pl[2 * S + sy], pl[3 * S + sy], pl[4 * S + sy], pl[5 * S + sy]};
    bad = cluster.map_shared_rank(st.sbad, gl)[sy];
  }
  // A step reads only the lower neighbour's second equation and the upper
  // one's first (spike_pcr_combine): 6 shuffles, not 12 (nvcc kept the 6
  // unused ones).
  auto shfl_last = [gw](spike_link<T> const& v, int src) {
    return spike_link<T>{T(0), T(0), T(0), __shfl_sync(0xffffffffu, v.l1, src, gw),
                         __shfl_sync(0xffffffffu, v.r1, src, gw), __shfl_sync(0xffffffffu, v.d1, src, gw)};
  };
  auto shfl_first = [gw](spike_link<T> const& v, int src) {
    return spike_link<T>{__shfl_sync(0xffffffffu, v.l0, src, gw), __shfl_sync(0xffffffffu, v.r0, src, gw),
                         __shfl_sync(0xffffffffu, v.d0, src, gw), T(0), T(0), T(0)};
  };
  for (int h = 1; h < gw; h *= 2) {
    spike_link<T> const lo = shfl_last(lk, max(gl - h, 0)), hi = shfl_first(lk, min(gl + h, gw - 1));
    if (act) {
      bool good = true;
      lk = spike_pcr_combine(lk, gl - h >= 0, lo, gl + h < G, hi, good);
      if (!good) bad = min(bad, segs.first(gl) + 1);
    }
  }
  for (int h = gw / 2; h > 0; h /= 2) bad = min(bad, __shfl_xor_sync(0xffffffffu, bad, h, gw));
  return bad;
}

// After a cluster barrier (every segment's links published): the reduced
// system over the G segments, solved for the x_L and x_R that block j
// needs, into st.xlr, and the system's first bad row into st.sinfo.
// Pcr false: the block Thomas, a thread per system, forward to the end,
// then back down to j - 1; the loads of B segments issued together (each a
// round trip to a peer's shared memory). Pcr true: PCR on the segments'
// links (spike_pcr_combine), a segment of gw = bit_ceil(G) lanes per
// system, lane v holding segment v's link (read from block v's shared
// memory: one round trip for all, but a warp's load touches gw peers, a
// few bytes each).
template <class T, bool Pcr, class Cluster>
__device__ __forceinline__ void segment_join(Cluster const& cluster, segment_state<T> const& st, int S, int G, int j,
                                             std::int64_t g, std::int64_t count, chunk_split segs) {
  int const t = int(threadIdx.x), w = t / 32, lane = t % 32;
  if (!Pcr && t < S && g * S + t < count) {
    constexpr int B = 4;
    spike_carry<T> kc;
    int broke = INT_MAX;
    T cl = T(0), dl = T(0);  // (c1, d1) of segment j - 1
    for (int v0 = 0; v0 < G; v0 += B) {
      spike_link<T> lk[B];
      int bd[B];
#pragma unroll
      for (int u = 0; u < B; ++u)
        if (v0 + u < G) {
          T const* const pl = cluster.map_shared_rank(st.link, v0 + u);
          lk[u] = {pl[t], pl[S + t], pl[2 * S + t], pl[3 * S + t], pl[4 * S + t], pl[5 * S + t]};
          bd[u] = cluster.map_shared_rank(st.sbad, v0 + u)[t];
        }
#pragma unroll
      for (int u = 0; u < B; ++u)
        if (v0 + u < G) {
          int const v = v0 + u;
          bool good = true;
          spike_elim<T> const e = spike_forward(lk[u], kc, good);
          broke = min(broke, good ? bd[u] : min(bd[u], segs.first(v) + 1));
          if (v == j - 1) cl = e.c1, dl = e.d1;
          st.elim[2 * v * S + t] = e.c0;
          st.elim[(2 * v + 1) * S + t] = e.d0;
        }
    }
    T xr = T(0), xR = T(0), xL = T(0);  // x_first of segment v + 1
    for (int v = G - 1; v >= max(j - 1, 0); --v) {
      T const x0 = st.elim[(2 * v + 1) * S + t] - st.elim[2 * v * S + t] * xr;
      if (v == j + 1) xR = x0;
      if (v == j - 1) xL = dl - cl * xr;  // x_last
      xr = x0;
    }
    st.xlr[t] = xL;
    st.xlr[S + t] = xR;
    st.sinfo[t] = broke;
  }
  if (Pcr) {
    int const lg = G <= 1 ? 0 : 32 - __clz(G - 1), gw = 1 << lg, per = 32 >> lg, gl = lane & (gw - 1);
    int const warps = int(blockDim.x) / 32;
    for (int b0 = w * per; b0 < S; b0 += warps * per) {
      int const sy = b0 + (lane >> lg);
      bool const act = sy < S && gl < G && g * S + sy < count;
      spike_link<T> lk;
      int const bad = segment_pcr<T>(cluster, st, S, G, sy, gl, gw, act, segs, lk);
      // x_L = the previous segment's x_last, x_R = the next one's x_first.
      T const xL = __shfl_sync(0xffffffffu, lk.d1, max(j - 1, 0), gw);
      T const xR = __shfl_sync(0xffffffffu, lk.d0, min(j + 1, gw - 1), gw);
      if (act && gl == 0) {
        st.xlr[sy] = j > 0 ? xL : T(0);
        st.xlr[S + sy] = j + 1 < G ? xR : T(0);
        st.sinfo[sy] = bad;
      }
    }
  }
}

// The reduced system solved once per system instead of in every block:
// block j takes systems j, j + G, ... of the group; for each, a lane per
// segment reads that segment's link from its block (all G loads at once),
// PCR over the lanes (spike_pcr_combine) leaves lane v with segment v's
// x_first and x_last, and lane v writes them where its neighbours need them
// (block v + 1's x_L, block v - 1's x_R) with the system's first bad row
// into every block's sinfo. A cluster barrier must follow before any block
// reads its xlr or sinfo. Against segment_join, each block reads G links
// per system once for the group instead of every block reading them all
// (a cluster's remote reads G times fewer), and no block reads a peer's
// shared memory after that barrier.
template <class T, class Cluster>
__device__ __forceinline__ void segment_join_scatter(Cluster const& cluster, segment_state<T> const& st, int S, int G,
                                                     int j, std::int64_t g, std::int64_t count, chunk_split segs) {
  int const t = int(threadIdx.x), w = t / 32, lane = t % 32;
  int const lg = G <= 1 ? 0 : 32 - __clz(G - 1), gw = 1 << lg, per = 32 >> lg, gl = lane & (gw - 1);
  int const warps = int(blockDim.x) / 32;
  int const mine = j < S ? (S - j + G - 1) / G : 0;  // systems j, j + G, ... below S
  for (int b0 = w * per; b0 < mine; b0 += warps * per) {
    int const k = b0 + (lane >> lg), sy = j + k * G;
    bool const act = k < mine && gl < G && g * S + sy < count;
    spike_link<T> lk;
    int const bad = segment_pcr<T>(cluster, st, S, G, sy, gl, gw, act, segs, lk);
    if (act) {
      // Lane gl: block gl + 1's x_L is this segment's x_last, block gl - 1's
      // x_R its x_first; the first block's x_L and the last one's x_R are 0.
      cluster.map_shared_rank(st.xlr, min(gl + 1, G - 1))[gl + 1 < G ? sy : S + sy] = gl + 1 < G ? lk.d1 : T(0);
      cluster.map_shared_rank(st.xlr, max(gl - 1, 0))[gl > 0 ? S + sy : sy] = gl > 0 ? lk.d0 : T(0);
      cluster.map_shared_rank(st.sinfo, gl)[sy] = bad;
    }
  }
}

// x_L and x_R substituted into the segment's end rows (whose slots hold
// their spikes since segment_boundary).
template <class T, class Idx, class IdxD>
__device__ __forceinline__ void segment_ends(T const* sa, T const* sc, T* sd, Idx idx, IdxD idxd, segment_lane const& L,
                                             int S, segment_state<T> const& st) {
  if (L.ok) {
    T const xL = st.xlr[L.sl], xR = st.xlr[S + L.sl];
    int const last = L.split.len(L.seg_lane) - 1;
    int const i0 = idx(L.seg_lane, 0, L.sl), i1 = idx(L.seg_lane, last, L.sl);
    int const e0 = idxd(L.seg_lane, 0, L.sl), e1 = idxd(L.seg_lane, last, L.sl);
    sd[e0] = sd[e0] - sa[i0] * xL - sc[i0] * xR;
    sd[e1] = sd[e1] - sa[i1] * xL - sc[i1] * xR;
  }
}

// Systems cut into G segments of consecutive rows, a block per (group of S
// systems, segment), the G blocks of a group one thread-block cluster
// (sm_90): for interleaved systems too long for one block's shared memory
// (3 words per row), or long enough that a whole-system block has its SM
// to itself and never overlaps its phases with another block's loads (ncu,
// f32 n = 512: issue 35% busy, DRAM 54%). A segment's chunks are swept and
// its boundary equations solved as in the columns kernel, but with the
// segment's first equation's coupling to the previous segment (x_L) and its
// last one's to the next (x_R) carried as two spike columns
// (segment_boundary). The segment's two end equations in x_L, x_R
// (spike_link) stay in its shared memory; after a cluster barrier every
// block reads its peers' (distributed shared memory), solves the reduced
// system over the G segments for the x_L, x_R it needs (segment_join), and
// substitutes; or (Join segment_join_by_scatter) each block solves the
// reduced system of G-th of the group's systems and writes every block's
// x_L, x_R into its shared memory, and a second cluster barrier precedes
// the substitution. The data makes one trip through DRAM (5 words per row; the
// partitioned form reads a, b, c, d twice).
//
// (A first form joined the segments through global memory, blocks taking
// work items in order from an atomic counter and waiting for their group:
// H100, f32 n = 4096 interleaved 39% of copy, n = 512 51% against 71% for
// whole systems. In steady state a group's segments went to blocks that
// had started at different times, and the first waited for the last. A
// cluster's blocks are scheduled together.)
// Boundary (segment_boundary_kind): how a block solves its segment's
// boundary equations. segment_boundary_thomas instead of segment_boundary's
// PCR paid in f32, whose segments issue about twice the instructions per
// byte that f64's do (ncu, H100, interleaved n = 1024: 133 a row and system
// in both, 4 bytes a word against 8; the boundary PCR 28% of them).
// tune_tridiag (H100, 2026-11-24), interleaved, % of copy, PCR -> Thomas:
// f32 n = 256 85.6 -> 87.0, 512 81.4 -> 83.4, 1024 74.9 -> 76.4, 4096 56.7
// -> 58.6; f64 88.9 -> 87.5, 84.8 -> 82.1, 80.7 -> 77.2, 63.9 -> 55.7 (its
// serial chain of f64 divisions, half a warp per block;
// bench/results/h100-tune-tridiag-bthomas.log). The chain halved by
// segment_boundary_twisted (two threads per system) is f32's default:
// tune_tridiag (H100, 2026-11-25, two runs), interleaved, % of copy, Thomas
// -> twisted: f32 n = 256 88.6 -> 88.9 / 89.0, 512 87.7 -> 88.1 / 88.2, 1024
// 84.5 -> 85.0 / 84.8, 4096 68.8 -> 70.4 / 70.8; in f64 twisted was 1.7-5.8
// points below PCR (bench/results/h100-tune-tridiag-twisted.log).
// MaxThreads, MinBlocks: the launch bounds (MinBlocks 0 leaves it out).
// Near: chunks of R - 1 rows with a constant length too (columns_sweep), an
// instance of its own for the plans whose chunks are R and R - 1 rows.
// f32's wide form (the dispatch's instance with R = 32) is 256 threads at
// 2 blocks per SM, so 128 registers a thread and 6 rows fetched ahead.
// DRegs: every chunk exactly R rows (the dispatch's plan makes them so), and
// each thread's d of its interior rows kept in registers (T[R], constant
// indices) instead of shared memory, only the chunks' two end rows' d there
// (the boundary solve's, C x S x 2 words): a third less shared memory a
// block (tridiag_segments_smem_dregs), so that 3 blocks fit an SM instead
// of 2, for R registers more a thread. bench/probe_groups (H100, f32, no
// solve, 16 segments of 256 rows, 2 us of work in place of the solve):
// clusters of 16 blocks at 2 per SM, 15 resident, 71.6% of copy; at 3 per
// SM (a word of the 3 in registers), 22 resident, 81.9%
// (bench/results/h100-probe-groups.log, run 4). Its sweep is Pinned
// (columns_sweep): without, ptxas sank the loads towards their use once
// the chunk's d held registers (loads in bursts, then 8 rows eliminated
// with none in flight; ncu: long-scoreboard stalls per issued instruction
// 4.1 -> 7.8 at the same occupancy), and the instance ran 10-20 points
// below the one it replaces (bench/results/h100-tune-tridiag-dregs.log
// runs 1-3). The dispatch's instances: f32 R = 64 (4 chunks, 128 threads,
// 168 registers), f64 R = 32 (8 chunks), both 128 threads at 3 per SM.
enum segment_boundary_kind : int {
  segment_boundary_by_pcr = 0,
  segment_boundary_by_thomas = 1,
  segment_boundary_by_twisted = 2
};
template <class T>
inline constexpr int tridiag_segments_boundary =
    sizeof(T) == 4 ? segment_boundary_by_twisted : segment_boundary_by_pcr;

template <class T, int R, int Join, int Ahead = tridiag_segments_ahead<T>,
          int Boundary = tridiag_segments_boundary<T>, int MaxThreads = tridiag_columns_max_threads<T>,
          int MinBlocks = 0, bool Near = false, bool DRegs = false>
__global__ void __launch_bounds__(MaxThreads, MinBlocks)
    tridiag_segments_kernel(__grid_constant__ tridiag_columns_params<T> const p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  static_assert(!(DRegs && Near), "DRegs: every chunk R rows");
  namespace cg = cooperative_groups;
  cg::cluster_group const cluster = cg::this_cluster();
  extern __shared__ __align__(16) unsigned char columns_smem[];
  int const S = p.systems, C = p.chunks, P = p.pitch, G = p.segments;
  int const CS = S * P + tridiag_columns_skew<T>(S);
  T* const sa = reinterpret_cast<T*>(columns_smem);
  T* const sc = sa + C * CS;
  T* const sd = sc + C * CS;
  segment_state<T> const st = segment_state<T>::carve(sd + (DRegs ? 2 * C * S : C * CS), S, G);
  int const n = int(p.lay.n);
  chunk_split const segs{p.segment_rows, n - p.segment_rows * G};
  // S, C and the boundary lanes are powers of two (the dispatch's plan for
  // this kernel makes them so): shifts, where each runtime division was
  // some 20 instructions, and the setup before the first barrier 9.5% of the
  // f32 kernel's (ncu, n = 1024: 202 a warp).
  auto quot = [](int x, int d) { return x >> (__ffs(d) - 1); };
  auto rem = [](int x, int d) { return x & (d - 1); };
  int const t = int(threadIdx.x), s = rem(t, S), q = quot(t, S);
  bool const owner = q < C;
  int const wd = p.width, per_warp = quot(32, wd);
  int const w = t / 32, lane = t % 32;
  std::int64_t const es = p.lay.element_stride;
  int const j = int(cluster.block_rank());
  unsigned cid;  // the cluster's index: blockIdx.x / G
  asm("mov.u32 %0, %%clusterid.x;" : "=r"(cid));
  std::int64_t const g = cid;
  auto idx = [=](int chunk, int row, int sys) { return chunk * CS + sys * P + row; };
  // d's element: as a and c's, or (DRegs) of the chunk's first or last row only.
  auto const idxd = [=] {
    if constexpr (DRegs)
      return [=](int chunk, int row, int sys) { return (chunk * S + sys) * 2 + (row != 0); };
    else
      return idx;
  }();
  int const s0 = segs.first(j), sl = segs.len(j);
  chunk_split const split{quot(sl, C), rem(sl, C)};
  std::int64_t const sys = g * S + s;
  bool const mine = owner && sys < p.lay.count;
  int const first = owner ? s0 + split.first(q) : 0, len = DRegs ? R : owner ? split.len(q) : 0;
  std::int64_t const o = sys * p.lay.batch_stride + std::int64_t(first) * es;
  chunk_span<T> const k{sa + idx(q, 0, s), sc + idx(q, 0, s), sd + idx(q, 0, s)};
  segment_lane L;
  L.sl = w * per_warp + quot(lane, wd);
  L.seg_lane = rem(lane, wd);
  L.width = wd;
  L.ok = L.sl < S && L.seg_lane < C && g * S + L.sl < p.lay.count;
  L.s0 = s0;
  L.split = split;
  std::int64_t const r = blockIdx.y;  // the right-hand side (the dispatch offsets d and x past 65535)
  if (t < S) st.sinfo[t] = INT_MAX;
  __syncthreads();
  T dreg[DRegs ? R : 1];  // DRegs: the chunk's d
  if constexpr (DRegs) {
    if (mine) {
      columns_sweep<T, R, false, Ahead, true, false, true>(p, p.d + r * p.rhs_stride, o, first, R,
                                                           chunk_span<T>{k.a, k.c, dreg}, st.sinfo + s);
      sd[idxd(q, 0, s)] = dreg[0];
      sd[idxd(q, R - 1, s)] = dreg[R - 1];
    }
  } else if (mine)
    columns_sweep<T, R, false, Ahead, true, Near>(p, p.d + r * p.rhs_stride, o, first, len, k, st.sinfo + s);
  __syncthreads();
  if constexpr (Boundary == segment_boundary_by_thomas)
    segment_boundary_thomas<T>(sa, sc, sd, idx, idxd, S, C, t < S && g * S + t < p.lay.count, t, s0, split, st);
  else if constexpr (Boundary == segment_boundary_by_twisted) {
    // (The dispatch launches this with >= 2 S threads only. With a branch
    // to segment_boundary_thomas for smaller blocks here, ptxas scheduled
    // the sweep's loads differently and f32 n = 4096 interleaved fell from
    // 70.7% of copy to 58.4%: bench/results/h100-tune-tridiag-twisted.log.)
    segment_boundary_twisted<T>(sa, sc, sd, idx, idxd, S, C, t < 2 * S && g * S + rem(t, S) < p.lay.count, t, s0, split,
                                st);
  } else
    segment_boundary<T>(sa, sc, sd, idx, idxd, L, C, S, st);
  __syncthreads();  // sinfo holds the segment's breakdowns
  if (t < S) st.sbad[t] = st.sinfo[t];
  cluster.sync();  // every segment's links published
  if constexpr (Join == segment_join_by_scatter) {
    segment_join_scatter<T>(cluster, st, S, G, j, g, p.lay.count, segs);
    // Every block's x_L, x_R and breakdown written; no block reads or
    // writes a peer's shared memory after this, so none waits at its exit.
    cluster.sync();
  } else {
    segment_join<T, Join == segment_join_by_pcr>(cluster, st, S, G, j, g, p.lay.count, segs);
    // Done reading the peers' links: arrive now, wait only before exiting
    // (a block's shared memory must outlive its peers' reads), so the
    // substitution and the stores overlap the slowest peer's join. The
    // arrive is relaxed: it publishes nothing (every value read from a peer
    // has been used by then), and the release form put a GPU-scope memory
    // barrier in front of it (ncu, H100, interleaved n = 4096: about 3% of
    // the stall samples, f32 and f64). tune_tridiag (H100, 2026-11-25, two
    // processes, interleaved, % of copy, release -> relaxed): f32 n = 256
    // 87.3 -> 88.6, 512 86.2 -> 87.8, 1024 82.2 -> 84.6, 4096 65.1 -> 66.4;
    // f64 90.0 -> 90.8, 87.8 -> 89.3, 83.4 -> 84.2, 70.6 -> 72.1
    // (bench/results/h100-tune-tridiag-arrive.log).
    asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
    __syncthreads();  // xlr and sinfo set
  }
  segment_ends<T>(sa, sc, sd, idx, idxd, L, S, st);
  __syncthreads();
  if (mine) {
    int const broke = st.sinfo[s];
    if constexpr (DRegs) {
      dreg[0] = sd[idxd(q, 0, s)];
      dreg[R - 1] = sd[idxd(q, R - 1, s)];
      columns_store<T, R, true>(k.a, k.c, dreg, R, p.x + o + r * p.rhs_stride, es, broke == INT_MAX);
    } else
      columns_store<T, R, true, Near>(k.a, k.c, k.d, len, p.x + o + r * p.rhs_stride, es, broke == INT_MAX);
    if (p.info && j == 0 && q == 0 && r == p.nrhs - 1) p.info[sys] = broke == INT_MAX ? 0 : broke;
  }
  if constexpr (Join != segment_join_by_scatter) asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
#endif
}

}  // namespace recur::kernels
