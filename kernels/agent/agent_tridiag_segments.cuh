#pragma once
// Thomas-PCR on interleaved systems cut into segments, a thread-block
// cluster per group of systems (sm_90): the columns kernel's sweeps and
// boundary solve on each segment, the segments joined through distributed
// shared memory. tridiag_segments_kernel (at the end) says how.

#include <climits>
#include <cstdint>
#include <limits>
#include <type_traits>

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include "agent_tridiag_columns.cuh"

namespace recur::kernels {

// The segmented kernels' per-system state beside the rows (shared memory,
// tridiag_segments_smem's tail): the segment's link equations, x_L and x_R,
// the block Thomas's eliminations, the breakdowns and the segment's first
// bad rows (for the peers).
template <class T>
struct segment_state {
  T* link;     // 6 x S: l0, r0, d0, l1, r1, d1 of each system
  T* xlr;      // 2 x S: x_L, x_R
  T* elim;     // 2 x G x S: c0, d0 of each segment's spike_elim (block Thomas join)
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
  int s0;             // the segment's first row
  chunk_split split;  // its chunks
};

// The segment's boundary equations solved by PCR with the spikes of x_L
// (the previous segment's last unknown) and x_R (the next one's first)
// carried as two columns; the end rows' slots keep them for the
// substitution (which reads neither end row's a or c), and the segment's
// two end equations in x_L, x_R go to st.link. idx(chunk, row, system):
// the element of sa / sc / sd.
template <class T, class Idx, class IdxD>
__device__ __forceinline__ void segment_boundary(T* sa, T* sc, T* sd, Idx idx, IdxD idxd,
                                                 segment_lane const& L, int C, int S,
                                                 segment_state<T> const& st) {
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
    if (L.seg_lane == C - 1)
      st.link[3 * S + sl] = g1.v[0], st.link[4 * S + sl] = g1.v[1], st.link[5 * S + sl] = f1.d;
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

// The same boundary equations by two threads per system, eliminating
// from both ends at once (a twisted factorisation): thread t < S takes
// system t's equations 0 .. C - 1 downward (Thomas with the x_L and x_R
// columns carried), thread S + t its equations 2 C - 1 .. C upward, each
// normalised equation
// left as y_j = d'_j - l'_j x_L - a'_j y_(j-1) (the x_R column r'_j in sc);
// the two meet at equations C - 1 and C (a 2 x 2 solve each side does
// itself), then each substitutes back towards its end: half the chain of a
// one-thread Thomas. Every thread of the block calls it (two
// __syncthreads, not named barriers for the 2 S threads: those race with
// the kernel's later __syncthreads), in a block of at least
// tridiag_boundary_twisted_threads(S).
__host__ __device__ constexpr int tridiag_boundary_twisted_threads(int systems) {
  return 2 * systems < 32 ? 32 : (2 * systems + 31) / 32 * 32;
}
template <class T, class Idx, class IdxD>
__device__ __forceinline__ void segment_boundary_twisted(T* sa, T* sc, T* sd, Idx idx, IdxD idxd, int S,
                                                         int C, bool ok, int t, int s0, chunk_split split,
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
enum segment_join_kind : int {
  segment_join_by_thomas = 0,
  segment_join_by_pcr = 1,
  segment_join_by_scatter = 2
};

// System sy's reduced system over the G segments by PCR, a lane per
// segment (lane gl of the warp's gw = bit_ceil(G) lanes for this system;
// act: the lane holds a segment of a system that exists; called by whole
// warps): the segment's link read from block gl's shared memory, then
// log2(gw) steps of spike_pcr_combine. Leaves lk with the segment's x_first
// (d0) and x_last (d1); returns the system's first bad row, the same in
// each of its lanes.
template <class T, class Cluster>
__device__ __forceinline__ int segment_pcr(Cluster const& cluster, segment_state<T> const& st, int S, int G,
                                           int sy, int gl, int gw, bool act, chunk_split segs,
                                           spike_link<T>& lk) {
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
    return spike_link<T>{T(0),
                         T(0),
                         T(0),
                         __shfl_sync(0xffffffffu, v.l1, src, gw),
                         __shfl_sync(0xffffffffu, v.r1, src, gw),
                         __shfl_sync(0xffffffffu, v.d1, src, gw)};
  };
  auto shfl_first = [gw](spike_link<T> const& v, int src) {
    return spike_link<T>{__shfl_sync(0xffffffffu, v.l0, src, gw),
                         __shfl_sync(0xffffffffu, v.r0, src, gw),
                         __shfl_sync(0xffffffffu, v.d0, src, gw),
                         T(0),
                         T(0),
                         T(0)};
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
__device__ __forceinline__ void segment_join(Cluster const& cluster, segment_state<T> const& st, int S, int G,
                                             int j, std::int64_t g, std::int64_t count, chunk_split segs) {
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
__device__ __forceinline__ void segment_join_scatter(Cluster const& cluster, segment_state<T> const& st,
                                                     int S, int G, int j, std::int64_t g, std::int64_t count,
                                                     chunk_split segs) {
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
      cluster.map_shared_rank(st.xlr, min(gl + 1, G - 1))[gl + 1 < G ? sy : S + sy] =
          gl + 1 < G ? lk.d1 : T(0);
      cluster.map_shared_rank(st.xlr, max(gl - 1, 0))[gl > 0 ? S + sy : sy] = gl > 0 ? lk.d0 : T(0);
      cluster.map_shared_rank(st.sinfo, gl)[sy] = bad;
    }
  }
}

// x_L and x_R substituted into the segment's end rows (whose slots hold
// their spikes since segment_boundary).
template <class T, class Idx, class IdxD>
__device__ __forceinline__ void segment_ends(T const* sa, T const* sc, T* sd, Idx idx, IdxD idxd,
                                             segment_lane const& L, int S, segment_state<T> const& st) {
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
// (3 words per row), or long enough that a whole-system block would have
// its SM to itself and never overlap its phases with another block's loads.
// A segment's chunks are swept and its boundary equations solved as in the
// columns kernel, but with the segment's first equation's coupling to the
// previous segment (x_L) and its last one's to the next (x_R) carried as
// two spike columns (segment_boundary). The segment's two end equations in
// x_L, x_R (spike_link) stay in its shared memory; after a cluster barrier
// every block reads its peers' (distributed shared memory), solves the
// reduced system over the G segments for the x_L, x_R it needs
// (segment_join), and substitutes; or (Join segment_join_by_scatter) each
// block solves the reduced system of G-th of the group's systems and writes
// every block's x_L, x_R into its shared memory, and a second cluster
// barrier precedes the substitution. The data makes one trip through DRAM
// (5 words per row; the partitioned form reads a, b, c, d twice). A
// cluster's blocks are scheduled together, so no block waits for a peer
// that has not started (a join through global memory would).
//
// Boundary: the twisted Thomas (segment_boundary_twisted) in f32, whose
// segments issue about twice the instructions per byte that f64's do; PCR
// (segment_boundary) in f64, where a serial chain of divisions costs more.
// MaxThreads, MinBlocks: the launch bounds (MinBlocks 0 leaves it out).
// Near: chunks of R - 1 rows with a constant length too (columns_sweep), an
// instance of its own for the plans whose chunks are R and R - 1 rows.
// f32's wide instance (R = 32) is 256 threads at 2 blocks per SM, so 128
// registers a thread and 6 rows fetched ahead.
// DRegs: every chunk exactly R rows, and each thread's d of its interior
// rows kept in registers (T[R], constant indices) instead of shared memory,
// only the chunks' two end rows' d there (the boundary solve's, C x S x 2
// words): a third less shared memory a block (tridiag_segments_smem_dregs),
// so that 3 blocks fit an SM instead of 2 and a cluster of 16 packs the GPU
// better, for R registers more a thread. Its sweep is Pinned
// (columns_sweep): otherwise ptxas sinks the loads towards their use once
// the chunk's d holds registers, and the loads arrive in bursts with the
// eliminations between them idle. The plan's instances: f32 R = 64
// (4 chunks, 128 threads), f64 R = 32 (8 chunks), both 3 blocks per SM.
// Pad (DRegs only): p.pad_rows (less than a chunk) identity rows past n,
// so that n + pad_rows splits into whole chunks (4095 rows as 4096); they
// are solved with the system but neither read nor written.
enum segment_boundary_kind : int { segment_boundary_by_pcr = 0, segment_boundary_by_twisted = 2 };
template <class T>
inline constexpr int tridiag_segments_boundary = sizeof(T) == 4 ? segment_boundary_by_twisted
                                                                : segment_boundary_by_pcr;

template <class T, int R, int Join, int Ahead = tridiag_segments_ahead<T>,
          int Boundary = tridiag_segments_boundary<T>, int MaxThreads = tridiag_columns_max_threads<T>,
          int MinBlocks = 0, bool Near = false, bool DRegs = false, bool Pad = false>
__global__ void __launch_bounds__(MaxThreads, MinBlocks)
    tridiag_segments_kernel(__grid_constant__ tridiag_columns_params<T> const p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  static_assert(!(DRegs && Near), "DRegs: every chunk R rows");
  static_assert(!Pad || DRegs, "Pad: the DRegs instance's identity rows past n");
  namespace cg = cooperative_groups;
  cg::cluster_group const cluster = cg::this_cluster();
  extern __shared__ __align__(16) unsigned char columns_smem[];
  int const S = p.systems, C = p.chunks, P = p.pitch, G = p.segments;
  int const CS = S * P + tridiag_columns_skew<T>(S);
  T* const sa = reinterpret_cast<T*>(columns_smem);
  T* const sc = sa + C * CS;
  T* const sd = sc + C * CS;
  segment_state<T> const st = segment_state<T>::carve(sd + (DRegs ? 2 * C * S : C * CS), S, G);
  int const n = int(p.lay.n) + (Pad ? p.pad_rows : 0);  // the rows split into segments
  chunk_split const segs{p.segment_rows, n - p.segment_rows * G};
  // S, C and the boundary lanes are powers of two (the plan makes them
  // so): shifts instead of runtime divisions of some 20 instructions each.
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
      columns_sweep<T, R, false, Ahead, true, false, true, Pad>(p, p.d + r * p.rhs_stride, o, first, R,
                                                                chunk_span<T>{k.a, k.c, dreg}, st.sinfo + s);
      sd[idxd(q, 0, s)] = dreg[0];
      sd[idxd(q, R - 1, s)] = dreg[R - 1];
    }
  } else if (mine)
    columns_sweep<T, R, false, Ahead, true, Near>(p, p.d + r * p.rhs_stride, o, first, len, k, st.sinfo + s);
  __syncthreads();
  if constexpr (Boundary == segment_boundary_by_twisted) {
    // The plan launches this with >= 2 S threads only: a branch to another
    // boundary solve for smaller blocks changes how ptxas schedules the
    // sweep's loads, and costs the large shapes.
    segment_boundary_twisted<T>(sa, sc, sd, idx, idxd, S, C, t < 2 * S && g * S + rem(t, S) < p.lay.count, t,
                                s0, split, st);
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
    // has been used by then), where the release form would put a GPU-scope
    // memory barrier in front of it.
    asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
    __syncthreads();  // xlr and sinfo set
  }
  segment_ends<T>(sa, sc, sd, idx, idxd, L, S, st);
  __syncthreads();
  if (mine) {
    int const broke = st.sinfo[s];
    if (!p.flags || broke == INT_MAX) {
      if constexpr (DRegs) {
        dreg[0] = sd[idxd(q, 0, s)];
        dreg[R - 1] = sd[idxd(q, R - 1, s)];
        columns_store<T, R, true, false, Pad>(k.a, k.c, dreg, R, p.x + o + r * p.rhs_stride, es,
                                              broke == INT_MAX, int(p.lay.n) - first);
      } else
        columns_store<T, R, true, Near>(k.a, k.c, k.d, len, p.x + o + r * p.rhs_stride, es, broke == INT_MAX);
    }
    if (j == 0 && q == 0 && r == p.nrhs - 1) report_system(p.info, p.flags, sys, broke);
  }
  if constexpr (Join != segment_join_by_scatter) asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
#endif
}

}  // namespace recur::kernels
