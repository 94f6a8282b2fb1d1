#pragma once
// Tridiagonal solves of systems held in shared memory: the block-level
// collectives of the batched solvers (kernels/agent/agent_tridiag_tile.cuh
// loads the systems, these solve them, the agent stores x).
//
// A system lives in four arrays a, b, c, d of n values each (row i at
// index i), with a[0] = c[n-1] = 0 (the loader writes those zeros; the
// caller's a[0] and c[n-1] are never read). The solution overwrites d.
// Breakdown (a zero or non-finite divisor) is recorded as the smallest
// 1-based row whose divisor was unusable, by atomicMin on an int in shared
// memory that starts at INT_MAX.
//
//   thread_thomas   one thread, one system: Gaussian elimination without
//                   pivoting (the arithmetic of reference::thomas).
//   thread_gtsv     one thread, one system: with partial pivoting (LAPACK's
//                   ?gttrf and ?gtts2).
//                   Both run kernels/thread/thread_tridiag.cuh's
//                   eliminations, which the pivoted form shares.
//   group_cr_pcr    a group of threads, one system: cyclic reduction
//                   (in place, Zhang et al. 2010 sec. 2.1) while the reduced
//                   system has more than `switch_size` equations, then PCR
//                   (sec. 2.2) on it, then CR's back substitution. switch 2
//                   is plain CR, switch >= n plain PCR.
//
// Every group of a block must run group_cr_pcr with the same n and switch
// size: the levels are separated by __syncthreads(). Thomas-PCR (one warp
// or several a system) is in block_tridiag_thomas_pcr.cuh.

#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>

#include <cuda_runtime.h>

#include "../thread/thread_tridiag.cuh"

namespace recur::kernels {

// Row i of a system sits at tridiag_pos(i) of its arrays: one padding word
// after every 32 rows, so threads that each walk their own run of rows
// (thread_thomas_pcr's chunks of 8, 16 or 32 rows) hit distinct banks.
__device__ __host__ constexpr int tridiag_pos(int i) { return i + (i >> 5); }

template <class T>
struct tridiag_rows {
  T* a;
  T* b;
  T* c;
  T* d;
};

__device__ __forceinline__ void record_breakdown(int* info, std::int64_t row) {
  atomicMin(info, static_cast<int>(row + 1));
}

// pivoting = automatic's screen inside a no-pivot form (the forms whose
// params carry `flags`): a system with a row that is not diagonally
// dominant, |b| < |a| + |c| (or NaN), is marked in its breakdown slot (the
// one record_breakdown keeps the first bad row in; INT_MAX: neither), so
// that after the solve the slot says whether the system keeps the form's
// answer (INT_MAX) or is left unwritten for the pivoted form to solve again
// (anything else). The register forms mark it through the sweep
// (screen_row); the tile records 0 in the slot (record_not_dominant).
template <class T>
__device__ __forceinline__ bool row_dominant(T a, T b, T c) {
  return fabs(b) >= fabs(a) + fabs(c);
}
__device__ __forceinline__ void record_not_dominant(int* info) { atomicMin(info, 0); }

// The outputs of a system whose slot holds `broke` after its solve: info
// (where asked), and under the screen (flags not null) the flag, 1 where
// the system is left to the pivoted form (whose info then counts).
__device__ __forceinline__ void report_system(std::int32_t* info, std::int32_t* flags, std::int64_t k,
                                              int broke) {
  bool const kept = broke == INT_MAX;
  if (flags) flags[k] = kept ? 0 : 1;
  if (info && (kept || !flags)) info[k] = kept ? 0 : broke;
}

// Maps a row of the system being solved to the row reported in info: the
// identity, or the original row when the system is a reduced one.
struct identity_rows {
  __device__ int operator()(int r) const { return r; }
};

// How n rows split into `chunks` chunks: the first n % chunks get one more.
struct chunk_split {
  int base, extra;
  __device__ int first(int p) const { return p * base + min(p, extra); }
  __device__ int len(int p) const { return base + (p < extra ? 1 : 0); }
};

// ---------------------------------------------- one thread, one system ---

// Row i of a system as the one-thread solvers read it, right-hand side
// included (thread_tridiag.cuh's factors eliminate d in the same pass).
template <class T>
struct tile_row {
  T a, b, c, d;
};

// The rows of a system in shared memory for thread_tridiag.cuh's factors
// and substitutions: row i's place is its word tridiag_pos(i), where its
// factors and x_i go (a function of i alone, so static). a_0 and c_(n-1)
// are read as the loader's zeros.
template <class T>
struct tile_rows {
  tridiag_rows<T> s;
  static __device__ int at(int i) { return tridiag_pos(i); }
  __device__ tile_row<T> read(int q) const { return {s.a[q], s.b[q], s.c[q], s.d[q]}; }
};

// thomas_factor and its substitutions (kernels/thread/thread_tridiag.cuh)
// in place: c'_i overwrites c_i, d'_i and then x_i overwrite d_i, d
// eliminated in the factor's pass, which has no early exit
// (thread_tridiag.cuh says why). Returns the 1-based row of the first
// unusable pivot (0 when solved); on breakdown d is left partly eliminated
// (the agent fills x with NaN).
template <class T>
__device__ __forceinline__ int thread_thomas(tridiag_rows<T> s, int n) {
  T x = 0;  // y_(n-1) = x_(n-1) after the factor's pass
  int const bad = thomas_factor<false, 4>(tile_rows<T>{s}, n, [&](int q, T, T, T, T, T, T cp, T dp) {
    s.c[q] = cp;
    s.d[q] = dp;
    x = dp;
  });
  if (bad) return bad;
  thomas_back(
      tile_rows<T>{s}, n, x, [&](int q) -> T& { return s.d[q]; }, [&](int q) { return s.c[q]; });
  return 0;
}

// gtsv_factor and its substitutions (the pivoted form's
// pivot_factor_partial and pivot_substitute run the same) in place, the
// right-hand side eliminated in the factor's pass: row i of U overwrites the
// consumed row i, u_i in b, its two superdiagonals in c and a, y_i and then
// x_i in d. Returns the 1-based row of the first unusable pivot (0 when
// solved), as thread_thomas.
template <class T>
__device__ __forceinline__ int thread_gtsv(tridiag_rows<T> s, int n) {
  T carry = s.d[0];  // row i's right-hand side as eliminated so far
  auto const put = [&](int q, gtsv_u_row<T> const& u, T y) {
    s.b[q] = u.u, s.c[q] = u.u1, s.a[q] = u.u2, s.d[q] = y;
  };
  int const bad = gtsv_factor<false>(
      tile_rows<T>{s}, n,
      [&](int q, tile_row<T> const& next, gtsv_u_row<T> const& u, T l, bool swapped) {
        put(q, u, gtsv_rhs(swapped, l, carry, next.d));
      },
      [&](int q, T u) {
        put(q, {u, T(0), T(0)}, carry);
      });
  if (bad) return bad;
  gtsv_back(
      tile_rows<T>{s}, n, [&](int q) -> T& { return s.d[q]; },
      [&](int q) {
        return gtsv_u_row<T>{s.b[q], s.c[q], s.a[q]};
      });
  return 0;
}

// ------------------------------------------------------ CR, PCR, hybrid ---

template <class T>
struct tridiag_equation {
  T a, b, c, d;
};

// The screen of a row on its way into a sweep (chunk_sweeps): a row that is
// not dominant gets b = NaN, so that its pivot is unusable and the sweep
// records a breakdown; no register is held across the sweep for it.
template <class T>
__device__ __forceinline__ void screen_row(tridiag_equation<T>& q) {
  if (!row_dominant(q.a, q.b, q.c)) q.b = std::numeric_limits<T>::quiet_NaN();
}

template <class T>
__device__ __forceinline__ tridiag_equation<T> load_equation(tridiag_rows<T> const& s, int r) {
  int const q = tridiag_pos(r);
  return {s.a[q], s.b[q], s.c[q], s.d[q]};
}
template <class T>
__device__ __forceinline__ void store_equation(tridiag_rows<T> const& s, int r,
                                               tridiag_equation<T> const& e) {
  int const q = tridiag_pos(r);
  s.a[q] = e.a;
  s.b[q] = e.b;
  s.c[q] = e.c;
  s.d[q] = e.d;
}

// Equation e absorbs its neighbours lo (row rl) and hi (row rh); either may
// be absent (has_lo / has_hi false): the update of Zhang et al. sec. 2.1.
template <class T, class RowMap = identity_rows>
__device__ __forceinline__ tridiag_equation<T> eliminate(tridiag_equation<T> const& e,
                                                         tridiag_rows<T> const& s, bool has_lo, int rl,
                                                         bool has_hi, int rh, int* info,
                                                         RowMap row_map = {}) {
  tridiag_equation<T> r{T(0), e.b, T(0), e.d};
  if (has_lo) {
    tridiag_equation<T> const lo = load_equation(s, rl);
    if (!usable_pivot(lo.b)) record_breakdown(info, row_map(rl));
    T const k1 = e.a / lo.b;
    r.a = -lo.a * k1;
    r.b -= lo.c * k1;
    r.d -= lo.d * k1;
  }
  if (has_hi) {
    tridiag_equation<T> const hi = load_equation(s, rh);
    if (!usable_pivot(hi.b)) record_breakdown(info, row_map(rh));
    T const k2 = e.c / hi.b;
    r.c = -hi.c * k2;
    r.b -= hi.a * k2;
    r.d -= hi.d * k2;
  }
  return r;
}

// The largest reduced system group_cr_pcr solves by PCR, per thread of the
// group: each thread keeps this many new equations in registers between the
// read and the write of a PCR step.
inline constexpr int pcr_items_per_thread = 4;

// Solves the system of m equations at rows (j + 1) * s - 1, j = 0 .. m-1, by
// PCR; m <= group_threads * pcr_items_per_thread. x_j goes to d at its row.
// Threads with active == false do no work but pass the same barriers.
template <class T, class RowMap = identity_rows>
__device__ void group_pcr(tridiag_rows<T> const& sys, int m, int s, int rank, int group_threads, bool active,
                          int* info, RowMap row_map = {}) {
  constexpr int items = pcr_items_per_thread;
  auto row = [s](int j) { return (j + 1) * s - 1; };
  if (!active) rank = m;  // no j below m
  for (int t = 1; t < m; t *= 2) {
    tridiag_equation<T> nx[items];
#pragma unroll
    for (int q = 0; q < items; ++q) {
      int const j = rank + q * group_threads;
      if (j < m)
        nx[q] = eliminate(load_equation(sys, row(j)), sys, j - t >= 0, row(j - t), j + t < m, row(j + t),
                          info, row_map);
    }
    __syncthreads();
#pragma unroll
    for (int q = 0; q < items; ++q) {
      int const j = rank + q * group_threads;
      if (j < m) store_equation(sys, row(j), nx[q]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int q = 0; q < items; ++q) {
    int const j = rank + q * group_threads;
    if (j < m) {
      int const r = row(j), q = tridiag_pos(r);
      T const b = sys.b[q];
      if (!usable_pivot(b)) record_breakdown(info, row_map(r));
      sys.d[q] = sys.d[q] / b;
    }
  }
  __syncthreads();
}

// The CR frame of the hybrids. rank in [0, group_threads) names this thread
// within the system's group; every thread of the block calls it (with
// active = false for threads whose group has no system) so the barriers
// match. mid(m, s) solves the intermediate system of m equations at rows
// (j + 1) s - 1 (every thread calls it; it ends with a barrier).
template <class T, class Mid, class RowMap = identity_rows>
__device__ void group_cr_frame(tridiag_rows<T> const& sys, int n, int switch_size, int rank,
                               int group_threads, bool active, int* info, Mid&& mid, RowMap row_map = {}) {
  // Forward reduction. Level L holds the equations at rows (j + 1) 2^L - 1,
  // j < m_L, m_{L+1} = m_L / 2: the odd positions j absorb j - 1 and j + 1.
  // Only odd positions are written, only even ones read, so one barrier per
  // level suffices.
  int m = n, s = 1;
  while (m > switch_size && m > 2) {
    int const half = m / 2;
    if (active)
      for (int h = rank; h < half; h += group_threads) {
        int const j = 2 * h + 1;
        int const r = (j + 1) * s - 1;
        store_equation(sys, r,
                       eliminate(load_equation(sys, r), sys, true, r - s, j + 1 < m, r + s, info, row_map));
      }
    __syncthreads();
    m = half;
    s *= 2;
  }
  mid(m, s);
  // Back substitution, level by level down: at level L the even positions
  // take x of their odd neighbours (already in d) from the level above.
  while (s > 1) {
    s /= 2;
    // The level's size: rows (j + 1) 2^L - 1 <= n - 1, so m_L = n / 2^L.
    int const ml = n / s;
    if (active)
      for (int h = rank; 2 * h < ml; h += group_threads) {
        int const j = 2 * h;
        int const r = (j + 1) * s - 1;
        int const q = tridiag_pos(r);
        T v = sys.d[q];
        if (j > 0) v -= sys.a[q] * sys.d[tridiag_pos(r - s)];
        if (j + 1 < ml) v -= sys.c[q] * sys.d[tridiag_pos(r + s)];
        T const b = sys.b[q];
        if (!usable_pivot(b)) record_breakdown(info, row_map(r));
        sys.d[q] = v / b;
      }
    __syncthreads();
  }
}

// CR while the reduced system has more than `switch_size` equations, then
// PCR on it, then CR's back substitution; switch 2 is plain CR, switch >= n
// plain PCR. Every group of a block must run it with the same n and switch
// size: the levels are separated by __syncthreads().
template <class T, class RowMap = identity_rows>
__device__ void group_cr_pcr(tridiag_rows<T> const& sys, int n, int switch_size, int rank, int group_threads,
                             bool active, int* info, RowMap row_map = {}) {
  group_cr_frame(
      sys, n, switch_size, rank, group_threads, active, info,
      [&](int m, int s) { group_pcr(sys, m, s, rank, group_threads, active, info, row_map); }, row_map);
}

}  // namespace recur::kernels
