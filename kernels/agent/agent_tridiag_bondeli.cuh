#pragma once
// Bondeli's divide and conquer (tridiag_algorithm::bondeli) on the GPU: the
// steps that include/recur/reference/tridiag_bondeli.hpp states (and cuts
// the same way), in two kernels around the reduced solve.
//
//   1. blocks   one thread per block of rows of a system: the block's Thomas
//               factorisation (no pivoting) solves B y = d, B w = e_1 and
//               B v = e_k into the workspace, and the thread
//               writes its rows of the reduced system H (2p - 2 rows a
//               system, contiguous) from the ends of y, w and v;
//   2. (dispatch) H by the pivoted form with partial pivoting (H's
//               diagonal holds the small entries; its 1s are the pivots);
//   3. correct  one thread per element: x = y - alpha_(2i-1) w - alpha_(2i) v,
//               NaN and info for the systems that broke down.
// Memory traffic: step 1 reads a, b, c, d and writes y, w, v; step 3 reads
// y, w, v and writes x: 11 words a row against a copy's 5. x is written in
// step 3 alone, so in place d is intact until then.
//
// Under pivoting = automatic's screen (flags), step 1 also tests its rows
// for diagonal dominance (block_tridiag.cuh's row_dominant); step 3 leaves
// x and info of a system that fails it or broke down unwritten and flags
// it, for the pivoted form to solve it again from d. Step 1's thread
// walks its block row by row, so adjacent threads touch adjacent words only
// where adjacent systems are adjacent (interleaved); contiguous systems cost
// a sector per thread and row. The algorithm is here for its divide and
// conquer on one thread per block, not for speed (doc/tridiag-internals.md
// compares it with CR).

#include <cstdint>
#include <limits>

#include <cuda_runtime.h>

#include <recur/layout/layout.hpp>
#include <recur/reference/tridiag_bondeli.hpp>
#include "../block/block_tridiag.cuh"

namespace recur::kernels {

using reference::detail::bondeli_cut;

template <class T>
struct tridiag_bondeli_params {
  T const* a;
  T const* b;
  T const* c;
  T const* d;  // one right-hand side
  T* x;        // written by step 3; may be d
  layout lay;
  bondeli_cut cut;  // the blocks of every system
  // Workspace: y, w and v, n values a system (system k's at k n); H's
  // diagonals and right-hand side, m = 2 (p - 1) rows a system (k's at
  // k m), which the reduced solve overwrites with alpha.
  T* y;
  T* w;
  T* v;
  T* ha;
  T* hb;
  T* hc;
  T* hd;
  // per system: the smallest 0-based row of an unusable block pivot,
  // bondeli_not_dominant where the screen failed and no pivot did, or ~0
  unsigned long long* bad;
  std::int32_t const* hinfo;  // step 3: the reduced solve's info per system
  std::int32_t* info;         // step 3: the caller's (may be null)
  std::int32_t* flags;        // the screen: null, or a flag per system, 1 for a system left unwritten
};

// bad's mark of a system whose rows failed the screen: past any row.
inline constexpr unsigned long long bondeli_not_dominant = ~0ull - 1;

// The work item t of step 1: (system, block), adjacent systems first where
// the layout interleaves them, adjacent blocks of one system otherwise.
template <class T>
__device__ __forceinline__ void bondeli_item(tridiag_bondeli_params<T> const& p, std::int64_t t,
                                             std::int64_t& k, std::int64_t& i) {
  if (p.lay.element_stride != 1) {
    k = t % p.lay.count;
    i = t / p.lay.count;
  } else {
    k = t / p.cut.count;
    i = t % p.cut.count;
  }
}

// Step 1 (reference::detail::bondeli_block's arithmetic on one block, and
// the block's rows of H as reference::detail::bondeli_reduced builds them).
template <class T>
__global__ void tridiag_bondeli_blocks_kernel(tridiag_bondeli_params<T> p) {
  std::int64_t const n = p.lay.n, per = p.cut.count, m = 2 * (per - 1);
  std::int64_t const items = per * p.lay.count;
  for (std::int64_t t = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < items;
       t += std::int64_t(gridDim.x) * blockDim.x) {
    std::int64_t k, i;
    bondeli_item(p, t, k, i);
    std::int64_t const f = p.cut.first(i), rows = p.cut.size(i);
    T* const y = p.y + k * n + f;
    T* const w = p.w + k * n + f;
    T* const v = p.v + k * n + f;
    auto at = [&](std::int64_t j) { return p.lay.offset(f + j, k); };
    T cp = 0, pivot = 1;
    std::int64_t bad = -1;
    bool dominant = true;
    bool const screen = p.flags != nullptr;  // reads a row's couplings across the block's ends too
    for (std::int64_t j = 0; j < rows; ++j) {
      // Each coefficient is loaded once: the stores to y, w and v below may
      // alias a, b, c and d as far as the compiler knows, so a second read
      // of the same word would be a second load.
      std::int64_t const o = at(j);
      T const ra = j > 0 || (screen && f > 0) ? p.a[o] : T(0), rb = p.b[o], rd = p.d[o];
      T const rc = j + 1 < rows || (screen && f + j + 1 < n) ? p.c[o] : T(0);
      T const aj = j > 0 ? ra : T(0);
      if (screen) dominant = dominant && row_dominant(ra, rb, rc);
      pivot = rb - aj * cp;
      if (!usable_pivot(pivot)) {
        bad = j;
        break;
      }
      w[j] = j == 0 ? T(1) / pivot : -aj * w[j - 1] / pivot;
      y[j] = j == 0 ? rd / pivot : (rd - aj * y[j - 1]) / pivot;
      if (j + 1 < rows) v[j] = cp = rc / pivot;
    }
    if (!dominant && bad < 0) atomicMin(p.bad + k, bondeli_not_dominant);
    std::int64_t const h = k * m;  // system k's first row of H
    if (bad >= 0) {
      atomicMin(p.bad + k, static_cast<unsigned long long>(f + bad));
      // Identity rows keep H's solve finite; the system reports breakdown.
      for (std::int64_t row : {2 * i - 1, 2 * i}) {
        if (row < 0 || row >= m) continue;
        p.ha[h + row] = p.hc[h + row] = p.hd[h + row] = 0;
        p.hb[h + row] = 1;
      }
      continue;
    }
    v[rows - 1] = T(1) / pivot;
    for (std::int64_t j = rows - 2; j >= 0; --j) {
      T const cj = v[j];
      w[j] -= cj * w[j + 1];
      y[j] -= cj * y[j + 1];
      v[j] = -cj * v[j + 1];
    }
    if (i + 1 < per) {  // row 2i: interface i, this block's last unknown times a_(f_(i+1))
      T const af = p.a[p.lay.offset(f + rows, k)];
      p.ha[h + 2 * i] = i > 0 ? af * w[rows - 1] : T(0);
      p.hb[h + 2 * i] = af * v[rows - 1];
      p.hc[h + 2 * i] = 1;
      p.hd[h + 2 * i] = af * y[rows - 1];
    }
    if (i > 0) {  // row 2i - 1: interface i - 1, this block's first unknown times c_(l_(i-1))
      T const cl = p.c[p.lay.offset(f - 1, k)];
      p.ha[h + 2 * i - 1] = 1;
      p.hb[h + 2 * i - 1] = cl * w[0];
      p.hc[h + 2 * i - 1] = i + 1 < per ? cl * v[0] : T(0);
      p.hd[h + 2 * i - 1] = cl * y[0];
    }
  }
}

// Step 3, one thread per element in memory order (coalesced in both
// layouts): the correction, and for row 0 of each system its info (and
// flag).
template <class T>
__global__ void tridiag_bondeli_correct_kernel(tridiag_bondeli_params<T> p) {
  std::int64_t const n = p.lay.n, count = p.lay.count, per = p.cut.count, m = 2 * (per - 1);
  std::int64_t const items = n * count;
  bool const inter = p.lay.element_stride != 1;
  for (std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < items;
       e += std::int64_t(gridDim.x) * blockDim.x) {
    std::int64_t const k = inter ? e % count : e / n, row = inter ? e / count : e % n;
    unsigned long long const bad = p.bad[k];
    std::int32_t const hinfo = m > 0 ? p.hinfo[k] : 0;
    bool const kept = bad == ~0ull && hinfo == 0;
    if (row == 0) {
      if (p.flags) p.flags[k] = kept ? 0 : 1;
      if (p.info && (kept || !p.flags))
        p.info[k] = kept ? 0
                    : bad != ~0ull
                        ? std::int32_t(bad + 1)
                        : std::int32_t(reference::detail::bondeli_reduced_row(p.cut, hinfo - 1) + 1);
    }
    T& x = p.x[p.lay.offset(row, k)];
    if (!kept) {
      if (!p.flags) x = std::numeric_limits<T>::quiet_NaN();
      continue;
    }
    std::int64_t const i = p.cut.block_of(row);
    T const lo = i > 0 ? p.hd[k * m + 2 * i - 1] : T(0);
    T const hi = i + 1 < per ? p.hd[k * m + 2 * i] : T(0);
    x = p.y[k * n + row] - lo * p.w[k * n + row] - hi * p.v[k * n + row];
  }
}

}  // namespace recur::kernels
