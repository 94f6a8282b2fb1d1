#pragma once
// Register-packed cyclic reduction (Davidson and Owens 2011, sec. 4 and
// fig. 4), one system per group of G threads in shared memory (the
// conventions of block_tridiag.cuh). Thread t holds the K consecutive
// equations t K .. t K + K - 1 in registers (rows past n are identities,
// which couple to nothing: c_(n-1) = 0). The first log2 K levels of CR then
// run in registers: at level s (h = 2^(s-1)) register idx = m 2h - 1 absorbs
// idx - h and idx + h, all in the thread except the top one's upper
// neighbour, register h - 1 of thread t + 1, the one value each thread
// publishes per level ("r_save"; it is not updated at that level, so one
// barrier orders it). After those levels each thread holds one equation,
// row t K + K - 1; the P = ceil(n / K) of them form a tridiagonal system,
// solved in shared memory by group_cr_pcr (CR, with PCR below its switch
// size). Back substitution runs in registers again, each thread needing x of
// its own last row and of its left neighbour's.
//
// Every thread of the block calls (barriers), with the same n.

#include <bit>

#include "block_tridiag.cuh"

namespace recur::kernels {

template <class T, int K>
__device__ void group_cr_packed(tridiag_rows<T> const& sys, int n, int switch_size, int rank,
                                int group_threads, bool active, int* info) {
  static_assert(K >= 2 && (K & (K - 1)) == 0, "rows per thread: a power of two");
  constexpr int levels = std::countr_zero(unsigned(K));
  constexpr tridiag_equation<T> identity{T(0), T(1), T(0), T(0)};
  int const P = (n + K - 1) / K;
  bool const mine = active && rank < P;
  int const base = rank * K;
  auto record = [&](int row) {
    if (row < n) record_breakdown(info, row);
  };
  tridiag_equation<T> r[K];
#pragma unroll
  for (int q = 0; q < K; ++q) r[q] = mine && base + q < n ? load_equation(sys, base + q) : identity;
    // Levels in registers.
#pragma unroll
  for (int level = 0; level < levels; ++level) {
    int const h = 1 << level;
    if (h > 1) {  // publish register h - 1, updated at the level before
      if (mine && base + h - 1 < n) store_equation(sys, base + h - 1, r[h - 1]);
      __syncthreads();
    }
    int const nb_row = base + K + h - 1;
    tridiag_equation<T> const nb = mine && nb_row < n ? load_equation(sys, nb_row) : identity;
#pragma unroll
    for (int idx = 2 * h - 1; idx < K; idx += 2 * h) {
      tridiag_equation<T> const& lo = r[idx - h];
      tridiag_equation<T> const& hi = idx + h < K ? r[idx + h] : nb;
      if (mine) {
        if (!usable_pivot(lo.b)) record(base + idx - h);
        if (!usable_pivot(hi.b)) record(base + idx + h);
      }
      T const k1 = r[idx].a / lo.b, k2 = r[idx].c / hi.b;
      r[idx] = {-lo.a * k1, r[idx].b - lo.c * k1 - hi.a * k2, -hi.c * k2, r[idx].d - lo.d * k1 - hi.d * k2};
    }
  }
  __syncthreads();  // every neighbour read done: the rows may be overwritten
  // The reduced system: thread t's last equation at position t.
  if (mine) store_equation(sys, rank, r[K - 1]);
  __syncthreads();
  group_cr_pcr(sys, P, switch_size, rank, group_threads, active, info,
               [n](int t) { return min(t * K + K - 1, n - 1); });
  T x[K];
  T const x_prev = mine && rank > 0 ? sys.d[tridiag_pos(rank - 1)] : T(0);
  x[K - 1] = mine ? sys.d[tridiag_pos(rank)] : T(0);
  __syncthreads();  // the reduced solution is read before the rows are written
  // Back substitution in registers, level by level down.
#pragma unroll
  for (int level = levels - 1; level >= 0; --level) {
    int const h = 1 << level;
#pragma unroll
    for (int idx = h - 1; idx < K - 1; idx += 2 * h) {
      T const xl = idx >= h ? x[idx - h] : x_prev;
      T const xh = x[idx + h];
      if (mine && !usable_pivot(r[idx].b)) record(base + idx);
      x[idx] = (r[idx].d - r[idx].a * xl - r[idx].c * xh) / r[idx].b;
    }
  }
  if (mine)
#pragma unroll
    for (int q = 0; q < K; ++q)
      if (base + q < n) sys.d[tridiag_pos(base + q)] = x[q];
  __syncthreads();
}

}  // namespace recur::kernels
