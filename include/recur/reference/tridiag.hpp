#pragma once
// Sequential references for batched tridiagonal systems
//   a_i x_{i-1} + b_i x_i + c_i x_{i+1} = d_i,   i = 0 .. n-1,
// the oracles of the GPU solvers. Each algorithm is written as plain
// sequential code that performs the parallel algorithm's arithmetic (the same
// eliminations, in the same combination, level by level), so a GPU kernel can
// be compared with it step by step, not only at the end. The solvers:
// thomas, cyclic_reduction, parallel_cyclic_reduction, recursive_doubling,
// the hybrids cr_pcr and cr_rd (Zhang et al. sec. 3), thomas_pcr (Laszlo et
// al. 2016) and pscheme (Wakatani 2012).
//
// Conventions shared by every solver here:
// - a, b, c and d all use the layout `lay`: element i of system k is at
//   offset lay.offset(i, k). x uses the same layout.
// - Several right-hand sides: right-hand side r (0 <= r < nrhs) of system k
//   has element i at d[lay.offset(i, k) + r * rhs_stride], and likewise for x.
//   So rhs_stride is the distance, in elements, between one right-hand side
//   set and the next; for dense batches it is the span of the layout
//   (n * count), and it must be at least that span when nrhs > 1, so that the
//   sets do not overlap. All right-hand sides of a system share its matrix.
// - a[0] and c[n-1] of every system are never read (they may hold NaN).
//   The diagonals are never written. x may alias d exactly (x == d, in place);
//   any other overlap of x with a, b, c or d is an argument error.
// - info (count int32 values, may be null): 0 when system k was solved,
//   j > 0 when it broke down at row j (1-based, LAPACK style): a zero or
//   non-finite pivot, as defined per algorithm below; for RD (and CR+RD)
//   also the row where its accuracy check failed: recursive doubling is
//   unstable for that system (recursive_doubling_one). Breakdown is not an
//   exception; x of a broken-down system is filled with NaN (all its
//   right-hand sides), so it cannot be mistaken for a solution.
// - No pivoting anywhere: these are stable for diagonally dominant (and
//   symmetric positive definite) matrices, like the GPU solvers they check.
//   Pivoting, periodic systems and mixed-precision refinement
//   (tridiag_options) have their references in tridiag_solve.hpp.
//
// - info rows: each solver defines which divisor it reports (see each);
//   most report the first unusable divisor in the order they divide.
//
// References: Zhang, Cohen, Owens 2010 (CR and PCR, sec. 2.1 and 2.2, the
// update a'_i = -a_{i-1} k1, b'_i = b_i - c_{i-1} k1 - a_{i+1} k2,
// c'_i = -c_{i+1} k2, d'_i = d_i - d_{i-1} k1 - d_{i+1} k2 with
// k1 = a_i / b_{i-1}, k2 = c_i / b_{i+1}; RD, sec. 2.3, the matrices B_i and
// x_1 = -c13 / c11); Goeddeke, Strzodka 2011 and Davidson, Owens 2011 (the
// same CR on GPUs; Goeddeke's sizes are 2^k + 1, which is why CR here takes
// any n).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <recur/layout/layout.hpp>
#include <recur/ops/affine.hpp>
#include <recur/ops/mobius.hpp>
#include <recur/reference/arguments.hpp>
#include <recur/reference/tridiag_batch.hpp>

namespace recur::reference {

namespace detail {

// ----------------------------------------------------------------- Thomas ---

// Gaussian elimination without pivoting: pivots p_i = b_i - a_i c'_{i-1},
// c'_i = c_i / p_i, d'_i = (d_i - a_i d'_{i-1}) / p_i, then
// x_i = d'_i - c'_i x_{i+1}. Breaks down at row i + 1 when p_i is zero or not
// finite (so b_0 = 0 gives info = 1, LAPACK's ?gtsv pivots past it).
template <class T>
std::int32_t thomas_one(equations<T> const& e, std::vector<T> d, std::vector<T>& x) {
  std::int64_t const n = static_cast<std::int64_t>(d.size());
  std::vector<T> cp(n);
  T c_prev = 0, d_prev = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    T const p = e.b[i] - e.a[i] * c_prev;
    if (!usable_pivot(p)) return row_number(i);
    c_prev = cp[i] = e.c[i] / p;
    d_prev = d[i] = (d[i] - e.a[i] * d_prev) / p;
  }
  x.assign(n, T(0));
  x[n - 1] = d[n - 1];
  for (std::int64_t i = n - 2; i >= 0; --i) x[i] = d[i] - cp[i] * x[i + 1];
  return 0;
}

// -------------------------------------------------------- cyclic reduction ---

// One CR/PCR elimination (Zhang et al. sec. 2.1): equation i absorbs its
// neighbours lo and hi (either may be absent), which removes x_lo and x_hi
// from it. Returns the 0-based row of the neighbour whose pivot is unusable,
// or -1.
template <class T>
struct equation {
  T a, b, c, d;
};
template <class T>
equation<T> eliminate(equation<T> const& e, equation<T> const* lo, equation<T> const* hi) {
  T const k1 = lo ? e.a / lo->b : T(0);
  T const k2 = hi ? e.c / hi->b : T(0);
  equation<T> r;
  r.a = lo ? -lo->a * k1 : T(0);
  r.c = hi ? -hi->c * k2 : T(0);
  r.b = e.b - (lo ? lo->c * k1 : T(0)) - (hi ? hi->a * k2 : T(0));
  r.d = e.d - (lo ? lo->d * k1 : T(0)) - (hi ? hi->d * k2 : T(0));
  return r;
}

// CR's forward reduction, a solver for the reduced system, CR's back
// substitution: the frame of CR and of the hybrids CR+PCR and CR+RD (Zhang et
// al. sec. 3). Any n. Level L holds the equations of rows (j + 1) 2^L - 1;
// each forward step keeps the odd positions j = 1, 3, ... of the current
// system (Zhang's "even-indexed", 1-based), each eliminated with positions
// j - 1 and j + 1 (absent past the end, as for odd sizes), while the current
// system has more than `reduced` equations (reduced >= 1). solve_reduced(
// equations, d, x) -> info solves the remaining system (its a[0] and
// c[m-1] are zeros), info in its own rows, which map back to original rows.
// Back substitution then recovers the dropped positions level by level,
// x_j = (d'_j - a'_j x_{j-1} - c'_j x_{j+1}) / b'_j. Breakdown: the first
// unusable divisor in the order the forward levels divide (row of the
// divided-by equation, 1-based), then the reduced solver's.
template <class T, class SolveReducedT>
std::int32_t cr_frame_one(equations<T> const& e, std::vector<T> const& d, std::vector<T>& x,
                          std::int64_t reduced, SolveReducedT&& solve_reduced) {
  std::int64_t const n = static_cast<std::int64_t>(d.size());
  if (reduced < 1) reduced = 1;
  std::vector<std::vector<equation<T>>> levels(1);
  levels[0].resize(n);
  for (std::int64_t i = 0; i < n; ++i) levels[0][i] = {e.a[i], e.b[i], e.c[i], d[i]};
  std::int64_t stride = 1;  // rows between consecutive equations of the current level
  auto row_of = [&](std::int64_t j, std::int64_t s) { return (j + 1) * s - 1; };
  while (static_cast<std::int64_t>(levels.back().size()) > reduced) {
    auto const& cur = levels.back();
    std::int64_t const m = static_cast<std::int64_t>(cur.size());
    std::vector<equation<T>> next(m / 2);
    for (std::int64_t j = 1; j < m; j += 2) {
      if (!usable_pivot(cur[j - 1].b)) return row_number(row_of(j - 1, stride));
      if (j + 1 < m && !usable_pivot(cur[j + 1].b)) return row_number(row_of(j + 1, stride));
      next[j / 2] = eliminate(cur[j], &cur[j - 1], j + 1 < m ? &cur[j + 1] : nullptr);
    }
    levels.push_back(std::move(next));
    stride *= 2;
  }
  // The reduced system.
  auto const& top = levels.back();
  std::int64_t const mt = static_cast<std::int64_t>(top.size());
  equations<T> te{std::vector<T>(mt), std::vector<T>(mt), std::vector<T>(mt), {}};
  std::vector<T> td(mt), xt;
  for (std::int64_t j = 0; j < mt; ++j) {
    te.a[j] = j > 0 ? top[j].a : T(0);
    te.b[j] = top[j].b;
    te.c[j] = j + 1 < mt ? top[j].c : T(0);
    td[j] = top[j].d;
  }
  if (std::int32_t const s = solve_reduced(te, td, xt)) return row_number(row_of(s - 1, stride));
  // Back substitution, level by level: positions 2j + 1 are known from above.
  for (std::int64_t l = static_cast<std::int64_t>(levels.size()) - 2; l >= 0; --l) {
    auto const& cur = levels[l];
    std::int64_t const m = static_cast<std::int64_t>(cur.size());
    std::vector<T> xl(m);
    for (std::int64_t j = 1; j < m; j += 2) xl[j] = xt[j / 2];
    for (std::int64_t j = 0; j < m; j += 2) {
      T r = cur[j].d;
      if (j > 0) r -= cur[j].a * xl[j - 1];
      if (j + 1 < m) r -= cur[j].c * xl[j + 1];
      xl[j] = r / cur[j].b;  // checked as a pivot in the forward step
    }
    xt = std::move(xl);
  }
  x = std::move(xt);
  return 0;
}

// CR: reduce until one or two equations remain, solve those directly (two by
// Cramer's rule, b0 b1 - c0 a1 being the pivot, reported at the second row),
// back substitute. b_0 = 0 gives info = 1 (row 1 divides by it).
template <class T>
std::int32_t cyclic_reduction_one(equations<T> const& e, std::vector<T> const& d, std::vector<T>& x) {
  return cr_frame_one(e, d, x, 2, [](equations<T> const& top, std::vector<T> const& td, std::vector<T>& xt) {
    xt.resize(td.size());
    if (td.size() == 1) {
      if (!usable_pivot(top.b[0])) return row_number(0);
      xt[0] = td[0] / top.b[0];
    } else {
      T const det = top.b[0] * top.b[1] - top.c[0] * top.a[1];
      if (!usable_pivot(det)) return row_number(1);
      xt[0] = (td[0] * top.b[1] - top.c[0] * td[1]) / det;
      xt[1] = (top.b[0] * td[1] - td[0] * top.a[1]) / det;
    }
    return std::int32_t{0};
  });
}

// ----------------------------------------------- parallel cyclic reduction ---

// Any n (Hockney's PCR, Zhang et al. sec. 2.2): at stride s = 1, 2, 4, ...
// every equation i is eliminated with i - s and i + s (absent outside
// 0 .. n-1), all from the previous step's values (double buffered, as the
// parallel step reads before it writes). After the step with s >= n / 2 every
// equation is decoupled, b'_i x_i = d'_i. (Zhang stops at 2x2 systems; one
// more step decouples them and needs no special case for any n.) Breakdown:
// at each step, before any elimination, the first row whose b' is unusable
// (every b' is a divisor for n >= 2); b_0 = 0 gives info = 1.
template <class T>
std::int32_t parallel_cyclic_reduction_one(equations<T> const& e, std::vector<T> const& d,
                                           std::vector<T>& x) {
  std::int64_t const n = static_cast<std::int64_t>(d.size());
  std::vector<equation<T>> cur(n), next(n);
  for (std::int64_t i = 0; i < n; ++i) cur[i] = {e.a[i], e.b[i], e.c[i], d[i]};
  for (std::int64_t s = 1; s < n; s *= 2) {
    for (std::int64_t i = 0; i < n; ++i)
      if (!usable_pivot(cur[i].b)) return row_number(i);
    for (std::int64_t i = 0; i < n; ++i)
      next[i] = eliminate(cur[i], i - s >= 0 ? &cur[i - s] : nullptr, i + s < n ? &cur[i + s] : nullptr);
    std::swap(cur, next);
  }
  x.resize(n);
  for (std::int64_t i = 0; i < n; ++i) {
    if (!usable_pivot(cur[i].b)) return row_number(i);
    x[i] = cur[i].d / cur[i].b;
  }
  return 0;
}

// ------------------------------------------------------- recursive doubling ---

// RD's self check: the componentwise backward error it accepts, as a power of
// two times eps (2^6 eps in float, 2^13 eps in double); see recursive_doubling.
template <class T>
constexpr int rd_backward_error_exponent = std::numeric_limits<T>::digits / 4;

// Stone's RD in Egecioglu's scan form (Zhang et al. sec. 2.3), 0-based: with
// X_i = (x_i, x_{i-1}, 1)^T, row i gives X_{i+1} = B_i X_i,
//   B_i = ( -b_i/c_i  -a_i/c_i  d_i/c_i )
//         (  1         0         0      )
//         (  0         0         1      ),
// taking a_0 = 0 (x_{-1} = 0, so a[0] is not read) and c_{n-1} = 1 with the
// phantom x_n = 0 (c[n-1] is not read). The prefix products
// P_i = B_i ... B_0 are the scan; P_{n-1} X_0 = (0, x_{n-1}, 1) gives
// x_0 = -p13 / p11 (Zhang's x_1 = -c13 / c11), and then every
// x_i = p11^(i-1) x_0 + p13^(i-1) from the stored prefixes (Zhang's
// X_1 C_i). Only the two top rows are stored; the third is (0 0 1).
//
// Rescaling: the products grow like the dominant solution of the three-term
// recurrence (about prod |b_i / c_i| for diagonally dominant rows), which
// overflows float past a few dozen rows. Each partial product is kept as
// 2^e_i S_i with the largest entry of S_i's two rows in [1, 2); the third row
// of S_i is then (0 0 2^-e_i), so multiplying by B_i adds d_i/c_i 2^-e_i
// (exact power-of-two scaling, underflowing only where that term is
// negligible). x_0 = -s13 / s11 is scale free and x_i = 2^e (s11 x_0 + s13)
// is finite wherever the solution is.
//
// Breakdown, 1-based: row i + 1 when c_i (i < n-1) is zero or a B_i entry is
// not finite; row n when s11 of the full product is zero or not finite (the
// matrix is singular: p11 = +-det(A) / prod c_i).
//
// RD is not stable on its own: x_i comes from cancelling terms of size
// 2^e (|s11 x_0| + |s13|), which grow like the dominant solution (at least
// 2x per row for |b| >= |a| + |c| + 1, |c| <= 1), and an error in x_0 excites
// that growing mode. Rather than return a silently wrong solution, RD checks
// its result the way a parallel solver can, one independent pass over the
// rows: row i + 1 breaks down when
//   |d_i - a_i x_{i-1} - b_i x_i - c_i x_{i+1}|
//     > 2^rd_backward_error_exponent eps (|a_i x_{i-1}| + |b_i x_i| + |c_i x_{i+1}| + |d_i|),
// i.e. x is accepted only as the exact solution of a componentwise
// perturbation of A and d of that size. (A bound on the cancellation growth
// would not do: the wrongly excited mode inflates max |x| too, so a float
// solution whose x_0 is already wrong would pass.) RD's domain, where it
// must succeed, is in doc/tridiag.md.
template <class T>
std::int32_t recursive_doubling_one(equations<T> const& e, std::vector<T> const& d, std::vector<T>& x) {
  std::int64_t const n = static_cast<std::int64_t>(d.size());
  struct prefix {
    T r1[3], r2[3];
    int e;
  };
  std::vector<prefix> p(n);
  prefix acc{{1, 0, 0}, {0, 1, 0}, 0};  // the identity, 2^0
  for (std::int64_t i = 0; i < n; ++i) {
    T const c = i + 1 < n ? e.c[i] : T(1);
    if (!usable_pivot(c)) return row_number(i);
    T const m11 = -e.b[i] / c, m12 = -e.a[i] / c, m13 = d[i] / c;
    if (!std::isfinite(m11) || !std::isfinite(m12) || !std::isfinite(m13)) return row_number(i);
    prefix nx;
    for (int j = 0; j < 3; ++j) nx.r1[j] = m11 * acc.r1[j] + m12 * acc.r2[j];
    nx.r1[2] += m13 * std::ldexp(T(1), -acc.e);  // B's third column times S's third row
    for (int j = 0; j < 3; ++j) nx.r2[j] = acc.r1[j];
    nx.e = acc.e;
    T big = 0;
    for (int j = 0; j < 3; ++j) big = std::fmax(big, std::fmax(std::fabs(nx.r1[j]), std::fabs(nx.r2[j])));
    if (!std::isfinite(big)) return row_number(i);
    if (big > T(0)) {
      int const shift = std::ilogb(big);
      for (int j = 0; j < 3; ++j) {
        nx.r1[j] = std::ldexp(nx.r1[j], -shift);
        nx.r2[j] = std::ldexp(nx.r2[j], -shift);
      }
      nx.e += shift;
    }
    p[i] = acc = nx;
  }
  T const s11 = acc.r1[0], s13 = acc.r1[2];
  if (!usable_pivot(s11)) return row_number(n - 1);
  T const x0 = -s13 / s11;
  if (!std::isfinite(x0)) return row_number(n - 1);
  x.resize(n);
  x[0] = x0;
  for (std::int64_t i = 1; i < n; ++i) {
    prefix const& q = p[i - 1];
    x[i] = std::ldexp(q.r1[0] * x0 + q.r1[2], q.e);
    if (!std::isfinite(x[i])) return row_number(i);
  }
  T const tol = std::ldexp(std::numeric_limits<T>::epsilon(), rd_backward_error_exponent<T>);
  for (std::int64_t i = 0; i < n; ++i) {
    T const lo = i > 0 ? e.a[i] * x[i - 1] : T(0), hi = i + 1 < n ? e.c[i] * x[i + 1] : T(0);
    T const mid = e.b[i] * x[i];
    T const r = d[i] - lo - mid - hi;
    if (!(std::fabs(r) <= tol * (std::fabs(lo) + std::fabs(mid) + std::fabs(hi) + std::fabs(d[i]))))
      return row_number(i);
  }
  return 0;
}

// ------------------------------------------------------------- hybrids ---

// Zhang et al. sec. 3 and 5.3.4-5: CR's forward reduction down to an
// intermediate system, PCR (resp. RD) on it, CR's back substitution. Their
// best intermediate sizes on their GPU (512-equation systems) were 256 for
// CR+PCR and 128 for CR+RD (the latter limited by shared memory). The
// defaults here are 128 for both: CR+RD's as Zhang's, CR+PCR's the switch
// of recur's GPU kernel (kernels/tuning/tuning_tridiag.cuh,
// tridiag_policy_sm90<T>::cr_pcr_switch), so that the default reference performs
// its arithmetic. The reduction runs while the current system has more than
// `intermediate` equations, so n <= intermediate is plain PCR (RD).
inline constexpr std::int64_t cr_pcr_default_intermediate = 128;
inline constexpr std::int64_t cr_rd_default_intermediate = 128;

// Breakdown: CR's forward levels (as cyclic_reduction_one), then PCR's on the
// intermediate system, its rows mapped back to the original ones.
template <class T>
std::int32_t cr_pcr_one(equations<T> const& e, std::vector<T> const& d, std::vector<T>& x,
                        std::int64_t intermediate = cr_pcr_default_intermediate) {
  return cr_frame_one(e, d, x, intermediate, [](auto const& te, auto const& td, auto& xt) {
    return parallel_cyclic_reduction_one(te, td, xt);
  });
}

// Breakdown: CR's forward levels, then RD's (including its self check, on the
// intermediate system). CR makes a diagonally dominant system more strongly
// dominant, which is what RD's products cannot bear (see
// recursive_doubling_one): on such systems CR+RD reports breakdown unless the
// intermediate system is a few equations; it is for Zhang's matrices with
// close values in rows.
template <class T>
std::int32_t cr_rd_one(equations<T> const& e, std::vector<T> const& d, std::vector<T>& x,
                       std::int64_t intermediate = cr_rd_default_intermediate) {
  return cr_frame_one(e, d, x, intermediate, [](auto const& te, auto const& td, auto& xt) {
    return recursive_doubling_one(te, td, xt);
  });
}

// ----------------------------------------------------------- Thomas-PCR ---

// Laszlo, Giles and Appleyard 2016 (the PCR-Thomas hybrid Davidson and Owens
// compare with), as recur's GPU kernel runs it with one warp per system
// (kernels/block/block_tridiag_thomas_pcr.cuh, warp_thomas_pcr), `chunks` =
// 32 lanes: P = min(chunks, n / 2) chunks of consecutive rows (n / P rows,
// the first n % P chunks one more). Each chunk is eliminated by a modified
// Thomas sweep so that every row reads
//     a'_i x_first + x_i + c'_i x_last = d'_i          (interior rows)
// and its first and last rows couple only to the neighbouring chunks:
//     a'_0 x_(first-1) + x_first + c'_0 x_last = d'_0
//     a'_L x_first + x_last + c'_L x_(last+1) = d'_L.
// Forward: rows 0 and 1 of a chunk are divided by b (through its
// reciprocal), rows i >= 2 by p_i = b_i - a_i c'_(i-1), with
// a'_i = -a_i a'_(i-1) / p_i; backward, rows L-2 .. 1 trade x_(i+1) for
// x_last; row 0 then trades x_1 for x_last (divisor 1 - c'_0 a'_1). The 2P
// first and last equations form a tridiagonal system, solved as the warp's
// warp_boundary_pcr does by default (CrFirst): one step of cyclic reduction
// leaves the P last-row equations coupled to each other only, PCR solves
// them (as parallel_cyclic_reduction_one's steps, double buffered), and each
// x_first comes from its own equation; x_first and x_last are substituted
// into the interior rows. (The GPU's several-warp groups, group_thomas_pcr,
// solve their 2P boundary equations by Thomas-PCR again in one warp, joined
// by plain PCR without the first cyclic reduction step; the partitioned
// form's reduced systems join by Thomas across the warp,
// warp_boundary_thomas: the same solution up to rounding.) n = 1: x = d / b.
//
// Breakdown, unlike the other references here: the smallest row whose
// divisor was unusable with every division performed, which is what the
// warp reports (it records rows with atomicMin and does not stop). So a
// singular system reports some row at or before the first unusable pivot's
// reach (a NaN spreads through the PCR steps), not necessarily that pivot's
// row; b_0 = 0 gives info = 1.
template <class T>
std::int32_t thomas_pcr_one(equations<T> const& e, std::vector<T> const& d, std::vector<T>& x,
                            std::int64_t chunks = 32) {
  std::int64_t const n = static_cast<std::int64_t>(d.size());
  std::int64_t bad = n;  // the smallest unusable row so far (n: none)
  auto record = [&](std::int64_t row) { bad = std::min(bad, row); };
  x.resize(n);
  if (n == 1) {
    if (!usable_pivot(e.b[0])) record(0);
    x[0] = d[0] / e.b[0];
    return bad < n ? row_number(bad) : 0;
  }
  std::int64_t const P = std::min<std::int64_t>(std::max<std::int64_t>(chunks, 1), n / 2);
  std::int64_t const base = n / P, extra = n % P;
  auto first_of = [&](std::int64_t p) { return p * base + std::min(p, extra); };
  auto len_of = [&](std::int64_t p) { return base + (p < extra ? 1 : 0); };
  std::vector<T> A(n), C(n), D(n);      // a', c', d' (then x) of every row
  std::vector<equation<T>> red(2 * P);  // equation 2p: chunk p's first row, 2p + 1: its last
  for (std::int64_t p = 0; p < P; ++p) {
    std::int64_t const first = first_of(p), len = len_of(p);
    T a_prev = 0, c_prev = 0, d_prev = 0;
    for (std::int64_t i = 0; i < len; ++i) {
      std::int64_t const q = first + i;
      T const ai = e.a[q], bi = e.b[q], ci = e.c[q], di = d[q];
      T an, cn, dn;
      if (i < 2) {
        if (!usable_pivot(bi)) record(q);
        T const r = T(1) / bi;
        an = ai * r;
        cn = ci * r;
        dn = di * r;
      } else {
        T const pv = bi - ai * c_prev;
        if (!usable_pivot(pv)) record(q);
        T const r = T(1) / pv;
        dn = r * (di - ai * d_prev);
        an = -r * ai * a_prev;
        cn = r * ci;
      }
      A[q] = a_prev = an;
      C[q] = c_prev = cn;
      D[q] = d_prev = dn;
    }
    red[2 * p + 1] = {a_prev, T(1), c_prev, d_prev};
    T an1 = A[first + len - 2], cn1 = C[first + len - 2], dn1 = D[first + len - 2];
    for (std::int64_t i = len - 3; i >= 1; --i) {
      std::int64_t const q = first + i;
      T const ci = C[q];
      dn1 = D[q] - ci * dn1;
      an1 = A[q] - ci * an1;
      cn1 = -ci * cn1;
      A[q] = an1;
      C[q] = cn1;
      D[q] = dn1;
    }
    equation<T> e0{A[first], T(1), C[first], D[first]};
    if (len >= 3) {
      T const pv = T(1) - e0.c * an1;
      if (!usable_pivot(pv)) record(first);
      T const r = T(1) / pv;
      e0 = {r * e0.a, T(1), -r * e0.c * cn1, r * (e0.d - e0.c * dn1)};
    }
    red[2 * p] = e0;
  }
  // The reduced system: one step of cyclic reduction (each chunk's last
  // equation, 2p + 1, eliminated with 2p and 2p + 2, whose b is 1), PCR on
  // those P equations (their equation q is matrix row row_of(2q + 1)), then
  // the chunks' first unknowns from their own equations.
  std::int64_t const m = 2 * P;
  auto row_of = [&](std::int64_t j) {
    return (j & 1) ? first_of(j / 2) + len_of(j / 2) - 1 : first_of(j / 2);
  };
  std::vector<equation<T>> odd(P), next(P);
  for (std::int64_t q = 0; q < P; ++q)
    odd[q] = eliminate(red[2 * q + 1], &red[2 * q], 2 * q + 2 < m ? &red[2 * q + 2] : nullptr);
  for (std::int64_t t = 1; t < P; t *= 2) {
    for (std::int64_t q = 0; q < P; ++q) {
      equation<T> const* lo = q - t >= 0 ? &odd[q - t] : nullptr;
      equation<T> const* hi = q + t < P ? &odd[q + t] : nullptr;
      if (lo && !usable_pivot(lo->b)) record(row_of(2 * (q - t) + 1));
      if (hi && !usable_pivot(hi->b)) record(row_of(2 * (q + t) + 1));
      next[q] = eliminate(odd[q], lo, hi);
    }
    std::swap(odd, next);
  }
  std::vector<T> xlast(P);
  for (std::int64_t q = 0; q < P; ++q) {
    if (!usable_pivot(odd[q].b)) record(row_of(2 * q + 1));
    xlast[q] = odd[q].d / odd[q].b;
  }
  for (std::int64_t p = 0; p < P; ++p) {
    std::int64_t const first = first_of(p), len = len_of(p), last = first + len - 1;
    equation<T> const& e0 = red[2 * p];
    T const xl = xlast[p], xf = e0.d - (p > 0 ? e0.a * xlast[p - 1] : T(0)) - e0.c * xl;
    x[first] = xf;
    x[last] = xl;
    for (std::int64_t i = 1; i + 1 < len; ++i)
      x[first + i] = D[first + i] - A[first + i] * xf - C[first + i] * xl;
  }
  return bad < n ? row_number(bad) : 0;
}

// ------------------------------------------------------------- P-scheme ---

// Thomas' algorithm as the three recurrences the P-scheme solver (Wakatani
// 2012, eq. 4-6) evaluates in parallel, here evaluated sequentially with the
// operators the parallel form scans over:
// 1. the pivots, a Moebius recurrence (ops::mobius, include/recur/ops/mobius.hpp):
//      p_0 = b_0, p_i = b_i - a_i c_{i-1} / p_{i-1} = (b_i p_{i-1} - a_i c_{i-1}) / p_{i-1},
//    step i the map (b_i, -a_i c_{i-1}; 1, 0) applied to p_{i-1}, step 0 the
//    constant map (0, b_0; 0, 1);
// 2. forward elimination of the right-hand side, an affine recurrence
//    (ops::affine): d'_i = (d_i - a_i d'_{i-1}) / p_i, the map
//    (-a_i / p_i, d_i / p_i) applied to d'_{i-1}, d'_{-1} = 0;
// 3. back substitution, a reverse affine recurrence:
//    x_i = d'_i - (c_i / p_i) x_{i+1}, the map (-c_i / p_i, d'_i) applied to
//    x_{i+1}, x_n = 0.
// (Wakatani's p is Thomas' c'_i = c_i / p_i up to sign, the map
// (0, c_i; -a_i, b_i); the pivot form keeps the divisor itself, which is
// what breakdown is defined on.) The arithmetic differs from thomas_one by
// rounding only. Breakdown as Thomas: row i + 1 when p_i is zero or not
// finite, p_0 = b_0 included.
template <class T>
std::int32_t pscheme_one(equations<T> const& e, std::vector<T> const& d, std::vector<T>& x) {
  std::int64_t const n = static_cast<std::int64_t>(d.size());
  std::vector<T> p(n);
  T q = T(1);  // p_{-1}: any finite value, step 0 is a constant map
  for (std::int64_t i = 0; i < n; ++i) {
    ops::mobius<T> const step = i == 0 ? ops::mobius<T>{T(0), e.b[0], T(0), T(1)}
                                       : ops::mobius<T>{e.b[i], -e.a[i] * e.c[i - 1], T(1), T(0)};
    q = step.apply(q);
    if (!usable_pivot(q)) return row_number(i);
    p[i] = q;
  }
  std::vector<T> dp(n);
  T w = T(0);  // d'_{-1}
  for (std::int64_t i = 0; i < n; ++i) dp[i] = w = ops::affine<T>{-e.a[i] / p[i], d[i] / p[i]}(w);
  x.resize(n);
  w = T(0);  // x_n
  for (std::int64_t i = n - 1; i >= 0; --i) x[i] = w = ops::affine<T>{-e.c[i] / p[i], dp[i]}(w);
  return 0;
}

}  // namespace detail

// The solvers. Layout, nrhs/rhs_stride, aliasing and info conventions: see
// the top of this file. Argument errors (negative sizes, null pointers,
// overlapping x) throw recur::invalid_argument before anything is written.

template <class T>
void thomas(T const* a, T const* b, T const* c, T const* d, T* x, layout const& lay, std::int64_t nrhs = 1,
            std::int64_t rhs_stride = 0, std::int32_t* info = nullptr) {
  detail::require_tridiag("thomas", a, b, c, d, x, lay, nrhs, rhs_stride);
  detail::for_each_system(a, b, c, d, x, lay, nrhs, rhs_stride, info,
                          [](auto const& e, auto rhs, auto& xs) { return detail::thomas_one(e, rhs, xs); });
}

template <class T>
void cyclic_reduction(T const* a, T const* b, T const* c, T const* d, T* x, layout const& lay,
                      std::int64_t nrhs = 1, std::int64_t rhs_stride = 0, std::int32_t* info = nullptr) {
  detail::require_tridiag("cyclic_reduction", a, b, c, d, x, lay, nrhs, rhs_stride);
  detail::for_each_system(a, b, c, d, x, lay, nrhs, rhs_stride, info, [](auto const& e, auto rhs, auto& xs) {
    return detail::cyclic_reduction_one(e, rhs, xs);
  });
}

template <class T>
void parallel_cyclic_reduction(T const* a, T const* b, T const* c, T const* d, T* x, layout const& lay,
                               std::int64_t nrhs = 1, std::int64_t rhs_stride = 0,
                               std::int32_t* info = nullptr) {
  detail::require_tridiag("parallel_cyclic_reduction", a, b, c, d, x, lay, nrhs, rhs_stride);
  detail::for_each_system(a, b, c, d, x, lay, nrhs, rhs_stride, info, [](auto const& e, auto rhs, auto& xs) {
    return detail::parallel_cyclic_reduction_one(e, rhs, xs);
  });
}

template <class T>
void recursive_doubling(T const* a, T const* b, T const* c, T const* d, T* x, layout const& lay,
                        std::int64_t nrhs = 1, std::int64_t rhs_stride = 0, std::int32_t* info = nullptr) {
  detail::require_tridiag("recursive_doubling", a, b, c, d, x, lay, nrhs, rhs_stride);
  detail::for_each_system(a, b, c, d, x, lay, nrhs, rhs_stride, info, [](auto const& e, auto rhs, auto& xs) {
    return detail::recursive_doubling_one(e, rhs, xs);
  });
}

// CR+PCR and CR+RD (see cr_pcr_one, cr_rd_one): `intermediate` (>= 1) is the
// size of the system handed to PCR (RD).
template <class T>
void cr_pcr(T const* a, T const* b, T const* c, T const* d, T* x, layout const& lay, std::int64_t nrhs = 1,
            std::int64_t rhs_stride = 0, std::int32_t* info = nullptr,
            std::int64_t intermediate = detail::cr_pcr_default_intermediate) {
  detail::require_tridiag("cr_pcr", a, b, c, d, x, lay, nrhs, rhs_stride);
  if (intermediate < 1)
    detail::fail("cr_pcr", "intermediate = " + std::to_string(intermediate) + " is not positive");
  detail::for_each_system(a, b, c, d, x, lay, nrhs, rhs_stride, info,
                          [intermediate](auto const& e, auto rhs, auto& xs) {
                            return detail::cr_pcr_one(e, rhs, xs, intermediate);
                          });
}

template <class T>
void cr_rd(T const* a, T const* b, T const* c, T const* d, T* x, layout const& lay, std::int64_t nrhs = 1,
           std::int64_t rhs_stride = 0, std::int32_t* info = nullptr,
           std::int64_t intermediate = detail::cr_rd_default_intermediate) {
  detail::require_tridiag("cr_rd", a, b, c, d, x, lay, nrhs, rhs_stride);
  if (intermediate < 1)
    detail::fail("cr_rd", "intermediate = " + std::to_string(intermediate) + " is not positive");
  detail::for_each_system(a, b, c, d, x, lay, nrhs, rhs_stride, info,
                          [intermediate](auto const& e, auto rhs, auto& xs) {
                            return detail::cr_rd_one(e, rhs, xs, intermediate);
                          });
}

// The Thomas-PCR hybrid (see thomas_pcr_one); `chunks` (>= 1) is the number
// of row chunks (the GPU's lanes per system).
template <class T>
void thomas_pcr(T const* a, T const* b, T const* c, T const* d, T* x, layout const& lay,
                std::int64_t nrhs = 1, std::int64_t rhs_stride = 0, std::int32_t* info = nullptr,
                std::int64_t chunks = 32) {
  detail::require_tridiag("thomas_pcr", a, b, c, d, x, lay, nrhs, rhs_stride);
  if (chunks < 1) detail::fail("thomas_pcr", "chunks = " + std::to_string(chunks) + " is not positive");
  detail::for_each_system(
      a, b, c, d, x, lay, nrhs, rhs_stride, info,
      [chunks](auto const& e, auto rhs, auto& xs) { return detail::thomas_pcr_one(e, rhs, xs, chunks); });
}

// The P-scheme solver's three recurrences (see pscheme_one).
template <class T>
void pscheme(T const* a, T const* b, T const* c, T const* d, T* x, layout const& lay, std::int64_t nrhs = 1,
             std::int64_t rhs_stride = 0, std::int32_t* info = nullptr) {
  detail::require_tridiag("pscheme", a, b, c, d, x, lay, nrhs, rhs_stride);
  detail::for_each_system(a, b, c, d, x, lay, nrhs, rhs_stride, info,
                          [](auto const& e, auto rhs, auto& xs) { return detail::pscheme_one(e, rhs, xs); });
}

}  // namespace recur::reference
