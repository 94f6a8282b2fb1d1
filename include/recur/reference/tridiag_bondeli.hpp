#pragma once
// Bondeli's divide-and-conquer solver (Bondeli 1991; the steps as the
// comparison of cyclic reduction and Bondeli's algorithm on OpenMP and CUDA
// states them, sec. 2.2), the sequential reference of
// tridiag_algorithm::bondeli: the oracle of its parallel forms, and the CPU
// backend's solver of one system on one thread. Conventions (layout, right-
// hand sides, x == d, info, NaN on breakdown, no reads of a[0] and c[n-1]):
// those of reference/tridiag.hpp.
//
// The n rows are cut into p blocks of consecutive rows, block i holding rows
// f_i .. l_i (n / p rows, the first n % p blocks one more), with
// p = min(blocks, n / 2) so that every block has at least 2 rows. With B_i
// the tridiagonal matrix of block i's own rows, the system reads
//   B_i x_i + a_(f_i) x_(l_(i-1)) e_1 + c_(l_i) x_(f_(i+1)) e_k = d_i:
// blocks touch their neighbours only through the corner entries a_(f_i) and
// c_(l_i). Bondeli's three steps (blocks counted from 0 here, from 1 in the
// paper):
// 1. The 3p - 2 systems of the blocks' matrices: B_i y_i = d_i for every
//    block, B_i w_i = e_1 for every block but the first (the paper's
//    z_(2i-2)), B_i v_i = e_k for every block but the last (z_(2i-1)). B_i is
//    factored once (pivots p_j = b_j - a_j c'_(j-1), c'_j = c_j / p_j) and its
//    factors serve all three (here w and v are formed for every block; the
//    first block's w and the last block's v are not used).
// 2. The solution is x_i = y_i - alpha_(2i-1) w_i - alpha_(2i) v_i with the
//    2p - 2 coupling values of the interfaces j = 0 .. p-2 (between blocks j
//    and j + 1)
//      alpha_(2j) = c_(l_j) x_(f_(j+1)),   alpha_(2j+1) = a_(f_(j+1)) x_(l_j)
//    (alpha_(-1) = alpha_(2p-2) = 0). Writing block j's last unknown and
//    block j + 1's first with that formula gives the tridiagonal system
//    H alpha = beta of size 2p - 2:
//      row 2j:     a_(f_(j+1)) (w_j)_last  alpha_(2j-1) + a_(f_(j+1)) (v_j)_last alpha_(2j)
//                  + alpha_(2j+1) = a_(f_(j+1)) (y_j)_last
//      row 2j + 1: alpha_(2j) + c_(l_j) (w_(j+1))_0 alpha_(2j+1)
//                  + c_(l_j) (v_(j+1))_0 alpha_(2j+2) = c_(l_j) (y_(j+1))_0.
//    H's diagonal holds a (v_j)_last and c (w_(j+1))_0, entries of B^-1
//    times a coupling coefficient, and beside them stand the 1s: for a
//    diagonally dominant matrix the diagonal is the small entry. Elimination
//    without interchanges would divide by it (and break down outright where a
//    coupling coefficient is 0), so H is solved by Gaussian elimination with
//    partial pivoting (LAPACK's ?gtsv), which then eliminates by the 1s.
// 3. x_i = y_i - alpha_(2i-1) w_i - alpha_(2i) v_i, from the stored y, w and
//    v: H's equations hold the very values the correction uses, so the rows
//    at the interfaces are satisfied to H's backward error.
//
// Breakdown (info, 1-based): the smallest row, over all blocks, whose block
// pivot p_j is unusable (each block stops at its first; b at a block's first
// row is that block's first pivot, so b_0 = 0 gives info = 1); otherwise,
// when a pivot of H (after the interchange) is unusable, the row of the
// unknown of that column, f_(j+1) for column 2j and l_j for column 2j + 1.
// The block functions below are shared with the CPU backend's form that runs
// the blocks on threads (lib/cpu/tridiag_bondeli.cpp), so that it gives
// these bits for the same block count.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <recur/config.hpp>
#include <recur/layout/layout.hpp>
#include <recur/reference/arguments.hpp>
#include <recur/reference/tridiag_batch.hpp>

namespace recur::reference {

namespace detail {

// The block count of bondeli_one's default: four blocks, so that first,
// middle and last blocks (all of the paper's equations (6a) to (6e)) take
// part in every system of at least 8 rows.
inline constexpr std::int64_t bondeli_default_blocks = 4;

// The cut of n rows into min(blocks, n / 2) blocks (at least one); n >= 1.
// Host and device (the GPU form, kernels/agent/agent_tridiag_bondeli.cuh,
// cuts as the reference does).
struct bondeli_cut {
  std::int64_t count, base, extra;
  RECUR_HD bondeli_cut(std::int64_t n, std::int64_t blocks)
      : count(blocks < n / 2 ? (blocks > 1 ? blocks : 1) : (n / 2 > 1 ? n / 2 : 1)),
        base(n / count),
        extra(n % count) {}
  RECUR_HD std::int64_t first(std::int64_t i) const { return i * base + (i < extra ? i : extra); }
  RECUR_HD std::int64_t size(std::int64_t i) const { return base + (i < extra ? 1 : 0); }
  // The block holding row r (0 <= r < n).
  RECUR_HD std::int64_t block_of(std::int64_t r) const {
    std::int64_t const big = extra * (base + 1);  // rows of the first `extra` blocks
    return r < big ? r / (base + 1) : extra + (r - big) / base;
  }
};

// The first and last components of a block's y (one right-hand side), w and v.
template <class T>
struct bondeli_ends {
  T first = 0, last = 0;
};

// Step 1 for one block of k >= 2 rows: row j's coefficients at a[j s],
// b[j s], c[j s] (a[0] and c[(k-1) s] are not read), right-hand side r's
// element j at d[j s + r rhs_stride], y written at y[j s + r rhs_stride] (y
// may be d: d_j is read before y_j is written), w and v (k values each, unit
// stride) receive B^-1 e_1 and B^-1 e_k. The forward sweep stores c'_j in v
// and the eliminated e_1 in w; the backward sweep turns them into v and w
// (v_j = -c'_j v_(j+1) needs c'_j only at row j). Returns the 0-based row
// of the first unusable pivot, or -1. With `growth`, the block's rows are
// added to the growth test's maxima (pivoting = automatic; the coupling
// entries a[0] and c[(k-1) s] are left out, as they are not read).
template <class T>
std::int64_t bondeli_block(T const* a, T const* b, T const* c, std::int64_t s, std::int64_t k, T const* d,
                           T* y, std::int64_t nrhs, std::int64_t rhs_stride, T* w, T* v,
                           growth_maxima<T>* growth = nullptr) {
  T cp = 0, pivot = 1;
  for (std::int64_t j = 0; j < k; ++j) {
    T const aj = j > 0 ? a[j * s] : T(0);
    pivot = b[j * s] - aj * cp;
    if (growth) growth->row(aj * cp, pivot, aj, b[j * s], j + 1 < k ? c[j * s] : T(0));
    if (!usable_pivot(pivot)) return j;
    w[j] = j == 0 ? T(1) / pivot : -aj * w[j - 1] / pivot;
    for (std::int64_t r = 0; r < nrhs; ++r) {
      std::int64_t const o = j * s + r * rhs_stride;
      y[o] = j == 0 ? d[o] / pivot : (d[o] - aj * y[o - s]) / pivot;
    }
    if (j + 1 < k) v[j] = cp = c[j * s] / pivot;
  }
  v[k - 1] = T(1) / pivot;
  for (std::int64_t j = k - 2; j >= 0; --j) {
    T const cj = v[j];
    w[j] -= cj * w[j + 1];
    for (std::int64_t r = 0; r < nrhs; ++r) {
      std::int64_t const o = j * s + r * rhs_stride;
      y[o] -= cj * y[o + s];
    }
    v[j] = -cj * v[j + 1];
  }
  return -1;
}

// Gaussian elimination with partial pivoting on the tridiagonal system of m
// rows (dl[i]: row i + 1's entry left of the diagonal, du[i]: row i's right
// of it), LAPACK's ?gtsv: at column i the row (of i and i + 1) with the larger
// entry there is the pivot row; an interchange fills du2[i], row i's entry
// two right of the diagonal. The solution overwrites rhs. Returns the
// column whose pivot is unusable, or -1. dl, dg and du are overwritten.
template <class T>
std::int64_t solve_pivoted(std::vector<T>& dl, std::vector<T>& dg, std::vector<T>& du, std::vector<T>& rhs) {
  std::int64_t const m = static_cast<std::int64_t>(dg.size());
  if (m == 0) return -1;
  std::vector<T> du2(static_cast<std::size_t>(m), T(0));
  for (std::int64_t i = 0; i + 1 < m; ++i) {
    bool const interchange = std::fabs(dg[i]) < std::fabs(dl[i]);
    if (!usable_pivot(interchange ? dl[i] : dg[i])) return i;
    if (!interchange) {
      T const f = dl[i] / dg[i];
      dg[i + 1] -= f * du[i];
      rhs[i + 1] -= f * rhs[i];
    } else {  // rows i and i + 1 change places
      T const f = dg[i] / dl[i];
      dg[i] = dl[i];
      T const t = dg[i + 1];
      dg[i + 1] = du[i] - f * t;
      if (i + 2 < m) {
        du2[i] = du[i + 1];
        du[i + 1] = -f * du2[i];
      }
      du[i] = t;
      std::swap(rhs[i], rhs[i + 1]);
      rhs[i + 1] -= f * rhs[i];
    }
  }
  if (!usable_pivot(dg[m - 1])) return m - 1;
  rhs[m - 1] /= dg[m - 1];
  if (m > 1) rhs[m - 2] = (rhs[m - 2] - du[m - 2] * rhs[m - 1]) / dg[m - 2];
  for (std::int64_t i = m - 3; i >= 0; --i)
    rhs[i] = (rhs[i] - du[i] * rhs[i + 1] - du2[i] * rhs[i + 2]) / dg[i];
  return -1;
}

// Step 2: builds H alpha = beta from the blocks' ends (y, w, v of block i at
// index i) and the coupling coefficients (a_(f_(j+1)) and c_(l_j) of
// interface j at index j), and solves it into alpha (2p - 2 values). Returns
// the column of an unusable pivot, or -1.
template <class T>
std::int64_t bondeli_reduced(std::vector<bondeli_ends<T>> const& y, std::vector<bondeli_ends<T>> const& w,
                             std::vector<bondeli_ends<T>> const& v, std::vector<T> const& a_first,
                             std::vector<T> const& c_last, std::vector<T>& alpha) {
  std::int64_t const m = 2 * (static_cast<std::int64_t>(y.size()) - 1);
  std::vector<T> dl(static_cast<std::size_t>(m), T(0)), dg(dl), du(dl);
  alpha.assign(static_cast<std::size_t>(m), T(0));
  for (std::int64_t j = 0; 2 * j < m; ++j) {
    T const aj = a_first[j], cj = c_last[j];
    // Row 2j: block j's last unknown, times a_(f_(j+1)).
    if (j > 0) dl[2 * j - 1] = aj * w[j].last;
    dg[2 * j] = aj * v[j].last;
    du[2 * j] = T(1);
    alpha[2 * j] = aj * y[j].last;
    // Row 2j + 1: block j + 1's first unknown, times c_(l_j).
    dl[2 * j] = T(1);
    dg[2 * j + 1] = cj * w[j + 1].first;
    if (2 * j + 2 < m) du[2 * j + 1] = cj * v[j + 1].first;
    alpha[2 * j + 1] = cj * y[j + 1].first;
  }
  return solve_pivoted(dl, dg, du, alpha);
}

// The row (0-based) that an unusable pivot of H's column `col` reports.
RECUR_HD inline std::int64_t bondeli_reduced_row(bondeli_cut const& cut, std::int64_t col) {
  std::int64_t const j = col / 2;
  return col % 2 == 0 ? cut.first(j + 1) : cut.first(j) + cut.size(j) - 1;
}

// Step 3 for one block: x_j = y_j - lo w_j - hi v_j (lo = alpha_(2i-1),
// hi = alpha_(2i), 0 where absent), y at x (x's strides as bondeli_block's y).
template <class T>
void bondeli_correct(T* x, std::int64_t s, std::int64_t k, std::int64_t nrhs, std::int64_t rhs_stride,
                     T const* lo, T const* hi, T const* w, T const* v) {
  for (std::int64_t r = 0; r < nrhs; ++r)
    for (std::int64_t j = 0; j < k; ++j) {
      T& xj = x[j * s + r * rhs_stride];
      xj = xj - lo[r] * w[j] - hi[r] * v[j];
    }
}

// One system, one right-hand side, `blocks` blocks (at most n / 2 are used).
template <class T>
std::int32_t bondeli_one(equations<T> const& e, std::vector<T> const& d, std::vector<T>& x,
                         std::int64_t blocks = bondeli_default_blocks) {
  std::int64_t const n = static_cast<std::int64_t>(d.size());
  x = d;
  if (n == 1) {
    if (!usable_pivot(e.b[0])) return row_number(0);
    x[0] = d[0] / e.b[0];
    return 0;
  }
  bondeli_cut const cut(n, blocks);
  std::int64_t const p = cut.count;
  std::vector<T> w(static_cast<std::size_t>(n)), v(w);
  std::vector<bondeli_ends<T>> ey(p), ew(p), ev(p);
  std::int64_t bad = n;
  for (std::int64_t i = 0; i < p; ++i) {  // step 1, block by block
    std::int64_t const f = cut.first(i), k = cut.size(i);
    std::int64_t const j = bondeli_block(e.a.data() + f, e.b.data() + f, e.c.data() + f, 1, k, x.data() + f,
                                         x.data() + f, 1, 0, w.data() + f, v.data() + f);
    if (j >= 0) bad = std::min(bad, f + j);
    ey[i] = {x[f], x[f + k - 1]};
    ew[i] = {w[f], w[f + k - 1]};
    ev[i] = {v[f], v[f + k - 1]};
  }
  if (bad < n) return row_number(bad);
  std::vector<T> a_first(p > 1 ? p - 1 : 0), c_last(a_first), alpha;
  for (std::int64_t j = 0; j + 1 < p; ++j) {
    a_first[j] = e.a[cut.first(j + 1)];
    c_last[j] = e.c[cut.first(j) + cut.size(j) - 1];
  }
  if (std::int64_t const col = bondeli_reduced(ey, ew, ev, a_first, c_last, alpha); col >= 0)
    return row_number(bondeli_reduced_row(cut, col));
  T const none = 0;
  for (std::int64_t i = 0; i < p; ++i) {  // step 3
    std::int64_t const f = cut.first(i);
    bondeli_correct(x.data() + f, 1, cut.size(i), 1, 0, i > 0 ? &alpha[2 * i - 1] : &none,
                    i + 1 < p ? &alpha[2 * i] : &none, w.data() + f, v.data() + f);
  }
  return 0;
}

}  // namespace detail

// Bondeli's algorithm with `blocks` (>= 1) blocks per system (see the top).
template <class T>
void bondeli(T const* a, T const* b, T const* c, T const* d, T* x, layout const& lay, std::int64_t nrhs = 1,
             std::int64_t rhs_stride = 0, std::int32_t* info = nullptr,
             std::int64_t blocks = detail::bondeli_default_blocks) {
  detail::require_tridiag("bondeli", a, b, c, d, x, lay, nrhs, rhs_stride);
  if (blocks < 1) detail::fail("bondeli", "blocks = " + std::to_string(blocks) + " is not positive");
  detail::for_each_system(
      a, b, c, d, x, lay, nrhs, rhs_stride, info,
      [blocks](auto const& e, auto rhs, auto& xs) { return detail::bondeli_one(e, rhs, xs, blocks); });
}

}  // namespace recur::reference
