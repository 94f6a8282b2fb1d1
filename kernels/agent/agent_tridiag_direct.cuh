#pragma once
// Thomas-PCR straight from global memory into registers (no tile): one warp
// per system of n <= 32 R rows (or a segment of Lanes lanes per system of
// n <= Lanes R rows), R rows per lane, for contiguous batches. Each lane
// reads its chunk of a, b, c and d with 16-byte loads (from the chunk's
// first 16-byte boundary on; the few elements outside one by one),
// eliminates it in registers (block_tridiag.cuh's chunk_sweeps: the
// arithmetic of the tile's Thomas-PCR, operation for operation), the warp
// solves the 64 boundary equations by PCR (warp_boundary_pcr), and each
// lane writes its x likewise. Rows past n are identity rows (b = 1, the
// rest 0): they keep the system's rows apart from them, are solved with
// it, and are neither read nor written.
//
// Why: in the tile form the copy into shared memory (four 4-byte cp.async
// per element, with its index arithmetic) and the store are about a quarter
// of Thomas-PCR's instructions, and the sweeps read and write shared memory
// for every row, so that kernel is issue-bound. Here a system costs 4 R / V
// loads and R / V stores per lane (V values per 16 bytes) and no shared
// memory.
//
// x may alias d: a warp reads all of its system's d before writing x, and
// no other warp touches them. Several right-hand sides: one work item per
// (system, right-hand side), the matrix read again for each.

#include <climits>
#include <cstddef>
#include <cstdint>
#include <limits>

#include <cuda_runtime.h>

#include <recur/layout/layout.hpp>
#include "../block/block_tridiag_thomas_pcr.cuh"
#include "../thread/thread_tridiag_pivot.cuh"

namespace recur::kernels {

template <class T>
struct tridiag_direct_params {
  T const* a;
  T const* b;
  T const* c;
  T const* d;
  T* x;
  std::int32_t* info;
  layout lay;  // element_stride 1 (the direct kernels)
  std::int64_t nrhs;
  std::int64_t rhs_stride;
  // pivoting = automatic's screen (block_tridiag.cuh's row_dominant): null,
  // or a flag per system, 1 for a system left unwritten for the pivoted form
  std::int32_t* flags = nullptr;
};

// Rows per lane the one-warp kernel is built for (n = 32 R). f64 stops at
// 8: at 16 rows (148 registers) the tile is faster.
template <class T>
constexpr bool tridiag_direct_rows(std::int64_t r) {
  return r == 4 || r == 8 || (sizeof(T) == 4 && r == 16) || (sizeof(T) == 8 && r == 2);
}
// Warps per system of the several-warp kernel: 2, 4, 8; and 16 in f64
// (512 threads of 8 rows; f32 has 16 rows per lane, and 110 registers for
// 1024 threads do not fit an SM).
template <class T>
constexpr bool tridiag_direct_warps(std::int64_t w) {
  return w == 2 || w == 4 || w == 8 || (sizeof(T) == 8 && w == 16);
}
// Rows per lane of the several-warp kernel (n = 32 W R, W as above), and
// of the several-systems-per-warp one (n = Lanes R, Lanes = 2 .. 16).
template <class T>
inline constexpr int tridiag_direct_group_rows = sizeof(T) == 4 ? 16 : 8;

template <class T>
struct alignas(16) tridiag_vec16 {
  T v[16 / sizeof(T)];
};

// f.template operator()<M>() for the M == m, 0 <= M < V.
template <int V, int M = 0, class F>
__device__ __forceinline__ void tridiag_with_shift(int m, F&& f) {
  if constexpr (M + 1 < V) {
    if (m != M) return tridiag_with_shift<V, M + 1>(m, f);
  }
  f.template operator()<M>();
}

// The pieces of a whole chunk of R rows M elements past a 16-byte
// boundary: one(i) for the elements before the first boundary, vec(i) for
// the 16-byte vector at element i, one(i) for the M elements after the last
// boundary.
template <class T, int R, int M, class One, class Vec>
__device__ __forceinline__ void tridiag_shifted_pieces(One one, Vec vec) {
  constexpr int V = 16 / sizeof(T), L = (V - M) % V, NV = (R - L) / V;
#pragma unroll
  for (int i = 0; i < L; ++i) one(i);
#pragma unroll
  for (int j = 0; j < NV; ++j) vec(L + j * V);
#pragma unroll
  for (int i = L + NV * V; i < R; ++i) one(i);
}

// A whole chunk of R rows at p, p M elements past a 16-byte boundary, with
// 16-byte loads wherever the boundaries allow (tridiag_shifted_pieces).
template <class T, int R, int M>
__device__ __forceinline__ void tridiag_load_shifted(T const* p, T (&r)[R]) {
  tridiag_shifted_pieces<T, R, M>([&](int i) { r[i] = p[i]; },
                                  [&](int i) {
                                    auto const w = *reinterpret_cast<tridiag_vec16<T> const*>(p + i);
#pragma unroll
                                    for (int e = 0; e < int(16 / sizeof(T)); ++e) r[i + e] = w.v[e];
                                  });
}

// Its stores: the same pieces, written out (through tridiag_shifted_pieces
// the exact f32 8-warp kernel spills under its 80-register bound).
template <class T, int R, int M>
__device__ __forceinline__ void tridiag_store_shifted(T* p, T const (&r)[R]) {
  constexpr int V = 16 / sizeof(T), L = (V - M) % V, NV = (R - L) / V;
#pragma unroll
  for (int i = 0; i < L; ++i) p[i] = r[i];
  auto* q = reinterpret_cast<tridiag_vec16<T>*>(p + L);
#pragma unroll
  for (int j = 0; j < NV; ++j) {
    tridiag_vec16<T> w;
#pragma unroll
    for (int e = 0; e < V; ++e) w.v[e] = r[L + j * V + e];
    q[j] = w;
  }
#pragma unroll
  for (int i = L + NV * V; i < R; ++i) p[i] = r[i];
}

// A chunk of R rows at p lies tridiag_shift elements past a 16-byte
// boundary; the lanes of a system share it (R rows are a multiple of 16
// bytes), so a warp of one system takes one branch on it.
template <class T>
__device__ __forceinline__ int tridiag_shift(T const* p) {
  return int(reinterpret_cast<std::uintptr_t>(p) / sizeof(T) % (16 / sizeof(T)));
}

// A chunk of one array: the first `valid` rows from p (16-byte loads
// where the chunk is whole), the rest `fill`.
template <class T, int R>
__device__ __forceinline__ void tridiag_load_rows(T const* p, T (&r)[R], int valid, T fill) {
  if (valid >= R) {
    tridiag_with_shift<int(16 / sizeof(T))>(tridiag_shift<T>(p),
                                            [&]<int M>() { tridiag_load_shifted<T, R, M>(p, r); });
  } else {
#pragma unroll
    for (int i = 0; i < R; ++i) r[i] = i < valid ? p[i] : fill;
  }
}

// The stores of the same chunk: only its first `valid` rows are written.
template <class T, int R, bool Any>
__device__ __forceinline__ void tridiag_store_rows(T* p, T const (&r)[R], int valid) {
  if constexpr (!Any) {
    tridiag_store_shifted<T, R, 0>(p, r);
  } else if (valid >= R) {
    tridiag_with_shift<int(16 / sizeof(T))>(tridiag_shift<T>(p),
                                            [&]<int M>() { tridiag_store_shifted<T, R, M>(p, r); });
  } else {
#pragma unroll
    for (int i = 0; i < R; ++i)
      if (i < valid) p[i] = r[i];
  }
}

// a[0] and c[n - 1], the caller's coefficients outside the matrix, set to
// 0 in a chunk of rows first .. first + R - 1 of a system of n rows.
template <class T, int R>
__device__ __forceinline__ void chunk_clear_ends(chunk_regs<T, R>& m, int first, int n) {
  if (first == 0) m.a[0] = T(0);
#pragma unroll
  for (int i = 0; i < R; ++i)
    if (first + i == n - 1) m.c[i] = T(0);
}

// A lane's chunk of a, b, c and d (rows first .. first + R - 1 of a system
// of n rows; the pointers at row first), with identity rows past row n - 1
// and the ends cleared (chunk_clear_ends; Corners: kept, the periodic
// systems' a[0] and c[n - 1]).
template <class T, int R, bool Any, bool Corners = false>
__device__ __forceinline__ void tridiag_load_chunk(T const* a, T const* b, T const* c, T const* d, int first,
                                                   int n, chunk_regs<T, R>& m, T (&bv)[R]) {
  int const valid = n - first;  // !Any: R, or <= 0 for a segment past the batch
  constexpr int V = 16 / sizeof(T);
  static_assert(R % V == 0);
  int const sh = tridiag_shift<T>(a);
  if (!Any ? valid > 0
           : valid >= R && tridiag_shift<T>(b) == sh && tridiag_shift<T>(c) == sh &&
                 tridiag_shift<T>(d) == sh) {
    // A whole chunk of four arrays at one offset (!Any: on 16-byte
    // boundaries): one branch, so that the loads of all four issue together.
    tridiag_with_shift<Any ? V : 1>(sh, [&]<int M>() {
      tridiag_load_shifted<T, R, M>(a, m.a);
      tridiag_load_shifted<T, R, M>(b, bv);
      tridiag_load_shifted<T, R, M>(c, m.c);
      tridiag_load_shifted<T, R, M>(d, m.d);
    });
  } else if (Any) {  // a partial chunk, or arrays at different offsets
    tridiag_load_rows<T, R>(a, m.a, valid, T(0));
    tridiag_load_rows<T, R>(b, bv, valid, T(1));
    tridiag_load_rows<T, R>(c, m.c, valid, T(0));
    tridiag_load_rows<T, R>(d, m.d, valid, T(0));
  } else {
#pragma unroll
    for (int i = 0; i < R; ++i) m.a[i] = T(0), bv[i] = T(1), m.c[i] = T(0), m.d[i] = T(0);
  }
  if constexpr (!Corners) chunk_clear_ends(m, first, n);
}

// The screen of a lane's chunk (rows loaded, ends cleared): screen_row's
// NaN for b of a row that is not diagonally dominant. A periodic system's
// lanes screen the split's matrix A' (direct_periodic_fold's rows): its
// first lane without the first row's a (xi's coefficient), its last lane
// without the last row's c.
template <class T, int R>
__device__ __forceinline__ void chunk_screen(chunk_regs<T, R> const& m, T (&bv)[R], bool first_lane = false,
                                             bool last_lane = false) {
#pragma unroll
  for (int i = 0; i < R; ++i) {
    T const a = i == 0 && first_lane ? T(0) : m.a[i], c = i == R - 1 && last_lane ? T(0) : m.c[i];
    tridiag_equation<T> q{a, bv[i], c, T(0)};
    screen_row(q);
    bv[i] = q.b;
  }
}

// A warp's boundary equations solved by PCR with the two spike columns of
// x_L (the previous warp's last unknown) and x_R (the next warp's first);
// lane 0 and lane 31 publish the warp's two end equations in x_L, x_R
// (spike_link) at lk. chunk0: the warp's first chunk in the system (the
// rows it reports are chunk0 R + ...).
template <class T, int R>
__device__ __forceinline__ void direct_warp_spikes(tridiag_eq3<T>& f0, tridiag_eq3<T>& f1,
                                                   boundary_cols<T, 2>& g0, boundary_cols<T, 2>& g1, int lane,
                                                   int chunk0, int* info, T* lk) {
  g0 = {{T(0), T(0)}}, g1 = {{T(0), T(0)}};
  if (lane == 0) g0.v[0] = f0.a, f0.a = T(0);   // the coefficient of x_L
  if (lane == 31) g1.v[1] = f1.c, f1.c = T(0);  // and of x_R
  warp_boundary_pcr<T, 2>(
      f0, f1, 32, lane, true, info, [chunk0](int j) { return (chunk0 + j / 2) * R + ((j & 1) ? R - 1 : 0); },
      32, &g0, &g1);
  if (lane == 0) lk[0] = g0.v[0], lk[1] = g0.v[1], lk[2] = f0.d;
  if (lane == 31) lk[3] = g1.v[0], lk[4] = g1.v[1], lk[5] = f1.d;
}

// A periodic system on a segment of Lanes lanes (n = Lanes R rows, the
// corners kept at the load): the split of agent_tridiag_periodic.cuh folded
// into the rows. With gamma the split's (pivot_periodic_gamma of row 0) and
// w = a_0 / gamma, row 0 becomes gamma xi + (b_0 - gamma) x_0 + c_0 x_1 =
// d_0 and row n-1 a x_(n-2) + (b_(n-1) - c_(n-1) w) x_(n-1) + c_(n-1) xi =
// d_(n-1), xi = x_0 + w x_(n-1): A's rows exactly, T (the split's matrix)
// on the left of xi's column u = (gamma, 0, ..., 0, c_(n-1)). Lane 0's a[0]
// holds gamma and the last lane's c[R - 1] keeps c_(n-1), so the sweeps
// carry xi's coefficients as they carry a neighbour chunk's. Returns w.
template <class T, int R, int Lanes>
__device__ __forceinline__ T direct_periodic_fold(chunk_regs<T, R>& m, T (&bv)[R], int sl) {
  auto from0 = [](T v) { return __shfl_sync(0xffffffffu, v, 0, Lanes); };
  pivot_row<T> const r0{from0(m.a[0]), from0(bv[0]), from0(m.c[0])};
  T const gamma = pivot_periodic_gamma(r0), w = r0.a / gamma;
  if (sl == 0) {
    bv[0] = usable_pivot(gamma) ? r0.b - gamma : std::numeric_limits<T>::quiet_NaN();
    m.a[0] = gamma;
  }
  if (sl == Lanes - 1) bv[R - 1] = bv[R - 1] - m.c[R - 1] * w;
  return w;
}

// Its boundary equations: xi's coefficients (lane 0's first equation, the
// last lane's last one) go into one more right-hand column of the boundary
// PCR (as direct_warp_spikes moves its neighbours' couplings), so every
// boundary unknown comes out as x_j = y_j - z_j xi with T y = d, T z = u.
// Then xi = (y_0 + w y_(n-1)) / (1 + z_0 + w z_(n-1)), the split's divisor
// (not usable: a breakdown at row n, as the split reports it), and f0.d and
// f1.d hold the chunk's end unknowns: Sherman-Morrison in one pass.
template <class T, int R, int Lanes>
__device__ __forceinline__ void direct_periodic_join(tridiag_eq3<T>& f0, tridiag_eq3<T>& f1, int sl, int n,
                                                     T w, int* info) {
  boundary_cols<T, 1> g0{{T(0)}}, g1{{T(0)}};
  if (sl == 0) g0.v[0] = f0.a, f0.a = T(0);          // gamma's column
  if (sl == Lanes - 1) g1.v[0] = f1.c, f1.c = T(0);  // c_(n-1)'s
  warp_boundary_pcr<T, 1>(
      f0, f1, Lanes, sl, true, info, [](int j) { return (j / 2) * R + ((j & 1) ? R - 1 : 0); }, Lanes, &g0,
      &g1);
  auto from = [](T v, int lane) { return __shfl_sync(0xffffffffu, v, lane, Lanes); };
  T const y0 = from(f0.d, 0), z0 = from(g0.v[0], 0);
  T const yn = from(f1.d, Lanes - 1), zn = from(g1.v[0], Lanes - 1);
  T const den = T(1) + z0 + w * zn;
  bool const usable = usable_pivot(den);
  if (sl == 0 && !usable) record_breakdown(info, n - 1);
  T const xi = usable ? (y0 + w * yn) / den : std::numeric_limits<T>::quiet_NaN();
  f0.d = f0.d - g0.v[0] * xi;
  f1.d = f1.d - g1.v[0] * xi;
}

// The substitution and the stores of a lane's R rows, of which the first
// `valid` are the system's (NaN where the system broke down).
template <class T, int R, bool Any>
__device__ __forceinline__ void direct_store(chunk_regs<T, R> const& m, T xf, T xl, int broke, T* x,
                                             int valid) {
  T const nan = std::numeric_limits<T>::quiet_NaN();
  T v[R];
#pragma unroll
  for (int i = 0; i < R; ++i) {  // the same expressions as chunk_substitute
    T const xi = i == 0 ? xf : i == R - 1 ? xl : m.d[i] - m.a[i] * xf - m.c[i] * xl;
    v[i] = broke == INT_MAX ? xi : nan;
  }
  tridiag_store_rows<T, R, Any>(x, v, valid);
}

// Lanes lanes per system (a power of two, n <= Lanes R): 32 / Lanes systems
// side by side in a warp, each segment of Lanes lanes solving its own (the
// boundary PCR over segments of the warp: warp_boundary_pcr's width), so
// short systems (n = 64: 4 lanes of 16 rows in f32) keep every lane's
// chunk and 16-byte loads. Lanes = 32 is one warp per system.
// The exact instances (!Any) are bound to 5 blocks of 128 threads an SM
// (at most 102 registers), which they fit without spills; unbound, ptxas
// gives them some 120 registers once the screen is compiled in, and 4 blocks.
template <bool Any>
inline constexpr int tridiag_direct_min_blocks = Any ? 4 : 5;

// Periodic (exact instances: n = Lanes R): periodic systems, the corners
// through direct_periodic_join.
template <class T, int R, int Lanes, int Block, bool Any, bool Periodic = false>
__global__ void __launch_bounds__(Block, tridiag_direct_min_blocks<Any>)
    tridiag_direct_kernel(__grid_constant__ tridiag_direct_params<T> const p) {
  static_assert(!(Periodic && Any));
  static_assert(Lanes >= 1 && Lanes <= 32 && (Lanes & (Lanes - 1)) == 0);
  constexpr int warps = Block / 32, per_warp = 32 / Lanes;
  __shared__ int warp_info[warps * per_warp];
  int const lane = int(threadIdx.x & 31), w = int(threadIdx.x >> 5), seg = lane / Lanes, sl = lane % Lanes;
  int* const info = warp_info + w * per_warp + seg;
  std::int64_t const items = p.lay.count * p.nrhs;
  int const n = int(p.lay.n);
  for (std::int64_t base = (std::int64_t(blockIdx.x) * warps + w) * per_warp; base < items;
       base += std::int64_t(gridDim.x) * warps * per_warp) {
    std::int64_t const item = base + seg;
    bool const live = item < items;  // a warp's last segments may have no system
    std::int64_t const k = p.nrhs == 1 ? item : item / p.nrhs, r = item - k * p.nrhs;
    std::int64_t const o = k * p.lay.batch_stride + std::int64_t(sl) * R, orhs = o + r * p.rhs_stride;
    chunk_regs<T, R> m;  // a, c, d in, then the normalised rows
    T bv[R];
    int const first = sl * R;
    // A segment past the batch's end: identity rows, so that its shuffles stay defined.
    tridiag_load_chunk<T, R, Any, Periodic>(p.a + o, p.b + o, p.c + o, p.d + orhs, first, live ? n : 0, m,
                                            bv);
    if (sl == 0) *info = INT_MAX;
    __syncwarp();
    T w = T(0);  // Periodic: direct_periodic_fold's
    if constexpr (Periodic) w = direct_periodic_fold<T, R, Lanes>(m, bv, sl);
    bool const screen = p.flags != nullptr;
    if (screen) {
      if constexpr (Periodic)
        chunk_screen(m, bv, sl == 0, sl == Lanes - 1);
      else
        chunk_screen(m, bv);
    }
    chunk_ends<T> const e = chunk_sweeps<T, R>(
        first, R, m,
        [&](int i) {
          return tridiag_equation<T>{m.a[i], bv[i], m.c[i], m.d[i]};
        },
        [&](int row) { record_breakdown(info, row); });
    tridiag_eq3<T> f0 = e.first, f1 = e.last;
    if constexpr (Periodic)
      direct_periodic_join<T, R, Lanes>(f0, f1, sl, n, w, info);
    else
      warp_boundary_pcr(
          f0, f1, Lanes, sl, true, info, [](int j) { return (j / 2) * R + ((j & 1) ? R - 1 : 0); }, Lanes);
    __syncwarp();
    int const broke = *info;
    if (live) {
      if (!screen || broke == INT_MAX) direct_store<T, R, Any>(m, f0.d, f1.d, broke, p.x + orhs, n - first);
      if (sl == 0 && r == p.nrhs - 1) report_system(p.info, p.flags, k, broke);
    }
    __syncwarp();  // info is read before the next item resets it
  }
}

// Longer systems, n <= 32 W R: W warps per system (one system per block),
// each lane a chunk of R rows in registers as above; then the 64 W boundary
// equations, in one of two ways:
//
// - Spike = false: they go to shared memory and warp 0 solves them with
//   warp_thomas_pcr, as the tile's group_thomas_pcr does (the same
//   arithmetic: x bitwise the tile's in f64; in f32 within 1-2 ulp since
//   pivot_rcp, block_tridiag.cuh says more).
// - Spike = true: every warp solves its own 64 by PCR in registers
//   (warp_boundary_pcr), carrying two more columns: the coefficients of
//   x_L, the previous warp's last boundary unknown, and x_R, the next
//   warp's first, which couple the warp to its neighbours. Each boundary
//   unknown is then x_j = d_j - l_j x_L - r_j x_R. The warps' first and last
//   equations form a block tridiagonal system in U_w = (first_w, last_w),
//   U_w + [0 l0; 0 l1] U_(w-1) + [r0 0; r1 0] U_(w+1) = (d0, d1), whose
//   block Thomas needs one reciprocal per warp (the elimination matrix is
//   lower triangular: with c = the carried C'_(w-1)[1], p = 1 - l0 c);
//   thread 0 runs it over the W warps. Why: with warp 0 alone solving the
//   boundary equations of 16 warps (f64 n = 4096), the other warps wait at
//   the barrier for most of their cycles.
//
// Then every lane substitutes and stores.
// Blocks per SM the several-warp kernel is compiled for: 3 for f32 with 8
// warps and warp 0 alone (80 registers, no spills; at the default bound it
// takes 110 and 2 blocks fit an SM): tridiag_auto_f32_contiguous/n:4096.
// The Any instance (any n and alignment) needs more registers: 2 blocks.
template <class T, int W, bool Spike, bool Any>
inline constexpr int tridiag_direct_group_min_blocks = W == 8 && sizeof(T) == 4 && !Spike ? (Any ? 2 : 3) : 1;

template <class T, int R, int W, bool Spike, bool Any>
__global__ void __launch_bounds__(32 * W, (tridiag_direct_group_min_blocks<T, W, Spike, Any>))
    tridiag_direct_group_kernel(__grid_constant__ tridiag_direct_params<T> const p) {
  constexpr int G = 32 * W, M = 2 * G, ld = Spike ? 1 : tridiag_pos(M) | 1;
  __shared__ T red_a[ld], red_b[ld], red_c[ld], red_d[ld];
  // Spike: per warp, its first boundary equation (l, r, d) and its last,
  // then the block Thomas's coefficients and the two unknowns.
  __shared__ T link[Spike ? 6 * W : 1];
  __shared__ int info;
  tridiag_rows<T> const red{red_a, red_b, red_c, red_d};
  int const t = int(threadIdx.x), lane = t & 31, w = t >> 5;
  std::int64_t const items = p.lay.count * p.nrhs;
  int const n = int(p.lay.n);
  for (std::int64_t item = blockIdx.x; item < items; item += gridDim.x) {
    std::int64_t const k = p.nrhs == 1 ? item : item / p.nrhs, r = item - k * p.nrhs;
    std::int64_t const o = k * p.lay.batch_stride + std::int64_t(t) * R, orhs = o + r * p.rhs_stride;
    chunk_regs<T, R> m;
    T bv[R];
    tridiag_load_chunk<T, R, Any>(p.a + o, p.b + o, p.c + o, p.d + orhs, t * R, n, m, bv);
    if (t == 0) info = INT_MAX;
    __syncthreads();
    if (p.flags) chunk_screen(m, bv);
    chunk_ends<T> const e = chunk_sweeps<T, R>(
        t * R, R, m,
        [&](int i) {
          return tridiag_equation<T>{m.a[i], bv[i], m.c[i], m.d[i]};
        },
        [&](int row) { record_breakdown(&info, row); });
    T xf, xl;
    if constexpr (Spike) {
      tridiag_eq3<T> f0 = e.first, f1 = e.last;
      boundary_cols<T, 2> g0, g1;
      direct_warp_spikes<T, R>(f0, f1, g0, g1, lane, w * 32, &info, link + 6 * w);
      __syncthreads();
      if (t == 0) {  // block Thomas over the warps (spike_forward, spike_backward)
        spike_carry<T> kc;
        for (int v = 0; v < W; ++v) {
          T* const q = link + 6 * v;
          bool ok = true;
          spike_elim<T> const el = spike_forward(spike_link<T>{q[0], q[1], q[2], q[3], q[4], q[5]}, kc, ok);
          if (!ok) record_breakdown(&info, v * 32 * R);
          q[0] = el.c0, q[1] = el.d0, q[2] = el.c1, q[3] = el.d1;
        }
        T xr = T(0);  // the next warp's first unknown
        for (int v = W - 1; v >= 0; --v) {
          T* const q = link + 6 * v;
          spike_backward(spike_elim<T>{q[0], q[1], q[2], q[3]}, xr, q[4], q[5]);
          xr = q[4];
        }
      }
      __syncthreads();
      T const xL = w > 0 ? link[6 * (w - 1) + 5] : T(0), xR = w + 1 < W ? link[6 * (w + 1) + 4] : T(0);
      xf = f0.d - g0.v[0] * xL - g0.v[1] * xR;
      xl = f1.d - g1.v[0] * xL - g1.v[1] * xR;
    } else {
      int const q0 = tridiag_pos(2 * t), q1 = tridiag_pos(2 * t + 1);
      red.a[q0] = e.first.a, red.b[q0] = T(1), red.c[q0] = e.first.c, red.d[q0] = e.first.d;
      red.a[q1] = e.last.a, red.b[q1] = T(1), red.c[q1] = e.last.c, red.d[q1] = e.last.d;
      __syncthreads();
      if (t < 32)
        warp_thomas_pcr<T, false, false>(red, M, lane, true, &info,
                                         [](int j) { return (j / 2) * R + ((j & 1) ? R - 1 : 0); });
      __syncthreads();
      xf = red.d[q0], xl = red.d[q1];
    }
    if (!p.flags || info == INT_MAX) direct_store<T, R, Any>(m, xf, xl, info, p.x + orhs, n - t * R);
    if (t == 0 && r == p.nrhs - 1) report_system(p.info, p.flags, k, info);
    __syncthreads();  // red, link and info are reused by the next item
  }
}

// Systems side by side (the interleaved layout, batch_stride 1): the direct
// form fed through shared memory. A block takes S adjacent systems (a
// 32-byte sector of every row: 8 in f32, 4 in f64; more where Lanes S < 32
// threads would be less than a warp) of n <= Lanes R rows (identity rows
// past n, as in the direct form). Its threads copy
// the S x n tile of a, b, c, d into shared memory (thread t: system t % S,
// rows t / S + j Lanes, so a warp reads whole sectors and every thread's R
// loads per array are issued at once), then each segment of Lanes lanes
// takes one system, reads its chunks into registers and solves it as
// tridiag_direct_kernel does (chunk_sweeps, warp_boundary_pcr: the same
// arithmetic, so x and info are bitwise the direct form's); x goes back
// through d's slots in shared memory to the copy's threads, which store it
// a sector per row again.
//
// Why: for a small interleaved batch (512 x 512) the solve is about one
// block's latency, and in the columns kernel its sweep, the shared-memory
// boundary solve and the store each take about as long as the loads. The
// direct form keeps the whole solve in registers and shuffles.
// x may alias d: a block reads all of its systems' d before any x is
// written, and no other block reads them.
template <class T>
constexpr int tridiag_direct_columns_systems(int lanes) {
  return int(32 / sizeof(T)) > 32 / lanes ? int(32 / sizeof(T)) : 32 / lanes;
}

// Elements per system and array in shared memory: each chunk's R rows and
// one spare (so the solve's lanes, chunk l at l (R + 1), fall on distinct
// banks), rounded up to 32 / S more than a multiple of a 128-byte
// wavefront's elements (so the copy's rows of the S systems, at s P + row,
// do too).
template <class T>
constexpr int tridiag_direct_columns_pitch(int rows, int lanes, int systems) {
  int const words = 128 / int(sizeof(T)), rw = words / systems > 0 ? words / systems : 1;
  int const need = lanes * (rows + 1);
  return (need - rw + words - 1) / words * words + rw;
}

// (Lanes > 32: Lanes / 32 warps a system, each warp's two end equations in
// x_L, x_R, 6 words, beside the rows: direct_warp_spikes.)
template <class T>
constexpr std::size_t tridiag_direct_columns_smem(int rows, int lanes, int S) {
  return 4 * std::size_t(S) * std::size_t(tridiag_direct_columns_pitch<T>(rows, lanes, S)) * sizeof(T) +
         (lanes > 32 ? 6 * std::size_t(S) * std::size_t(lanes / 32) * sizeof(T) : 0) +
         std::size_t(S) * sizeof(int);
}

template <class T, int R, int Lanes>
__global__ void __launch_bounds__(tridiag_direct_columns_systems<T>(Lanes) * Lanes)
    tridiag_direct_columns_kernel(__grid_constant__ tridiag_direct_params<T> const p) {
  constexpr int S = tridiag_direct_columns_systems<T>(Lanes);
  static_assert(S * Lanes % 32 == 0 && (Lanes <= 32 || Lanes % 32 == 0));
  constexpr int W = Lanes > 32 ? Lanes / 32 : 1;  // warps a system
  constexpr int P = tridiag_direct_columns_pitch<T>(R, Lanes, S), SP = S * P;
  constexpr int per_warp = Lanes > 32 ? 1 : 32 / Lanes;
  extern __shared__ __align__(16) unsigned char direct_columns_smem[];
  T* const sm = reinterpret_cast<T*>(direct_columns_smem);  // a, b, c, d (then x): S systems of P each
  T* const link = sm + 4 * SP;                              // W > 1: each warp's end equations, 6 words
  int* const sinfo = reinterpret_cast<int*>(link + (W > 1 ? 6 * S * W : 0));
  int const t = int(threadIdx.x), lane = t & 31, w = t >> 5;
  int const cs = t % S, cr = t / S;  // the copy's system and first row
  // The solve's system and chunk (W > 1: warp w % W of system w / W).
  int const ss = W > 1 ? w / W : w * per_warp + lane / Lanes, sl = W > 1 ? (w % W) * 32 + lane : lane % Lanes;
  int const sbase = ss * P + sl * (R + 1);  // chunk sl's rows: pos(row) = row + row / R
  std::int64_t const es = p.lay.element_stride, count = p.lay.count, groups = (count + S - 1) / S;
  std::int64_t const step = std::int64_t(Lanes) * es;
  int const n = int(p.lay.n);
  auto cpos = [&](int j) {
    int const row = cr + j * Lanes;
    return cs * P + row + row / R;
  };
  for (std::int64_t item = blockIdx.x; item < groups * p.nrhs; item += gridDim.x) {
    std::int64_t const g = p.nrhs == 1 ? item : item / p.nrhs, r = item - g * p.nrhs;
    std::int64_t const sys = g * S + cs;
    bool const live = sys < count;
    std::int64_t const o = sys * p.lay.batch_stride + std::int64_t(cr) * es, orhs = o + r * p.rhs_stride;
    // Rows past n and systems past the batch: identity rows, so that the
    // solve's shuffles stay defined.
    T va[R], vb[R], vc[R], vd[R];
    {
      T const *pa = p.a + o, *pb = p.b + o, *pc = p.c + o, *pd = p.d + orhs;
#pragma unroll
      for (int j = 0; j < R; ++j) {
        bool const in = live && cr + j * Lanes < n;
        va[j] = in ? *pa : T(0), vb[j] = in ? *pb : T(1), vc[j] = in ? *pc : T(0), vd[j] = in ? *pd : T(0);
        pa += step, pb += step, pc += step, pd += step;
      }
    }
    if (t < S) sinfo[t] = INT_MAX;
#pragma unroll
    for (int j = 0; j < R; ++j) {
      int const q = cpos(j);
      sm[q] = va[j], sm[SP + q] = vb[j], sm[2 * SP + q] = vc[j], sm[3 * SP + q] = vd[j];
    }
    __syncthreads();
    chunk_regs<T, R> m;
    T bv[R];
#pragma unroll
    for (int i = 0; i < R; ++i) {
      m.a[i] = sm[sbase + i], bv[i] = sm[SP + sbase + i], m.c[i] = sm[2 * SP + sbase + i];
      m.d[i] = sm[3 * SP + sbase + i];
    }
    chunk_clear_ends(m, sl * R, n);
    int* const info = sinfo + ss;
    if (p.flags) chunk_screen(m, bv);
    chunk_ends<T> const e = chunk_sweeps<T, R>(
        sl * R, R, m,
        [&](int i) {
          return tridiag_equation<T>{m.a[i], bv[i], m.c[i], m.d[i]};
        },
        [&](int row) { record_breakdown(info, row); });
    tridiag_eq3<T> f0 = e.first, f1 = e.last;
    T xf, xl;
    if constexpr (W == 1) {
      warp_boundary_pcr(
          f0, f1, Lanes, sl, true, info, [](int j) { return (j / 2) * R + ((j & 1) ? R - 1 : 0); }, Lanes);
      __syncwarp();
      xf = f0.d, xl = f1.d;
    } else {  // tridiag_direct_group_kernel's spikes: each warp its 64, then the block Thomas over the W
              // warps
      int const wh = w % W;
      boundary_cols<T, 2> g0, g1;
      direct_warp_spikes<T, R>(f0, f1, g0, g1, lane, wh * 32, info, link + 6 * (ss * W + wh));
      __syncthreads();
      if (t < S) {  // system t (spike_forward, spike_backward)
        spike_carry<T> kc;
        for (int v = 0; v < W; ++v) {
          T* const q = link + 6 * (t * W + v);
          bool ok = true;
          spike_elim<T> const el = spike_forward(spike_link<T>{q[0], q[1], q[2], q[3], q[4], q[5]}, kc, ok);
          if (!ok) record_breakdown(sinfo + t, v * 32 * R);
          q[0] = el.c0, q[1] = el.d0, q[2] = el.c1, q[3] = el.d1;
        }
        T xr = T(0);  // the next warp's first unknown
        for (int v = W - 1; v >= 0; --v) {
          T* const q = link + 6 * (t * W + v);
          spike_backward(spike_elim<T>{q[0], q[1], q[2], q[3]}, xr, q[4], q[5]);
          xr = q[4];
        }
      }
      __syncthreads();
      T const xL = wh > 0 ? link[6 * (ss * W + wh - 1) + 5] : T(0);
      T const xR = wh + 1 < W ? link[6 * (ss * W + wh + 1) + 4] : T(0);
      xf = f0.d - g0.v[0] * xL - g0.v[1] * xR;
      xl = f1.d - g1.v[0] * xL - g1.v[1] * xR;
    }
    int const broke = *info;
    T const nan = std::numeric_limits<T>::quiet_NaN();
#pragma unroll
    for (int i = 0; i < R; ++i) {  // direct_store's expressions
      T const xi = i == 0 ? xf : i == R - 1 ? xl : m.d[i] - m.a[i] * xf - m.c[i] * xl;
      sm[3 * SP + sbase + i] = broke == INT_MAX ? xi : nan;
    }
    __syncthreads();
    if (live) {
      int const kept = sinfo[cs];
      T* px = p.x + orhs;
      if (!p.flags || kept == INT_MAX)
#pragma unroll
        for (int j = 0; j < R; ++j, px += step)
          if (cr + j * Lanes < n) *px = sm[3 * SP + cpos(j)];
      if (cr == 0 && r == p.nrhs - 1) report_system(p.info, p.flags, sys, kept);
    }
    __syncthreads();  // shared memory and sinfo are reused by the next item
  }
}

}  // namespace recur::kernels
