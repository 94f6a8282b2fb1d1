// The partition method with one block of rows per thread (tridiag_split.hpp's
// frame): what `automatic` and `thomas_pcr` run for one long system on
// several CPU threads. It is Gaussian elimination without pivoting on the
// system with the blocks' last rows l_0 .. l_(P-2) ordered last, so it is
// stable wherever Thomas is (diagonally dominant and symmetric positive
// definite matrices: a symmetric permutation keeps both properties).
//
// Block b's rows other than l_b (the last block: all its rows) are its
// interior. They are eliminated as Thomas does, downward from the block's
// first row, carrying the column of the previous block's last unknown
// x_L = x_(l_(b-1)):
//   x_j + c'_j x_(j+1) + s_j x_L = d'_j,  p_j = b_j - a_j c'_(j-1) (b_j at the first row),
//   c'_j = c_j / p_j, s_j = -a_j s_(j-1) / p_j (a_f / p_f at the first row f),
//   d'_j = (d_j - a_j d'_(j-1)) / p_j
// (each row multiplies by one reciprocal of p_j).
// The last interior row's x_(j+1) is x_(l_b). Eliminating these rows from
// the two interface rows they touch leaves a tridiagonal system in the P - 1
// interface unknowns (the Schur complement):
// - row l_b, through its own block's last interior row e:
//     -a_l s_e x_L + (b_l - a_l c'_e) x_l + c_l x_(f_(b+1)) = d_l - a_l d'_e;
// - row l_(b-1), whose x_(f_b) term (coefficient g = c of that row) is
//   eliminated through block b's interior rows in order: at row j it loses
//   g s_j from its diagonal and g d'_j from its right-hand side, and its
//   coefficient moves on to x_(j+1) as g <- -g c'_j, ending on x_(l_b).
// reduce: block b's interior elimination (c'_j and s_j into scratch, d'_j
//         into x), its own interface row's left part, and the sums it takes
//         from the previous interface row;
// join:   the interface system, by Thomas, into x at the rows l_b;
// finish: back substitution, x_j = d'_j - c'_j x_(j+1) - s_j x_L.
// The sums over a block run the length of the block, and where its
// multipliers decay slowly (g falls like 1/j on the 1-D Poisson matrix) plain
// summation would leave an error growing with the block's length in the
// interface rows' residual. They are compensated (Knuth's two-sum, the
// rounding error of every addition carried in a second accumulator), which
// keeps the residual at Thomas's few eps; the products g s_j and g d'_j need
// no such care, as the interface equation telescopes their rounding errors.
// Memory traffic per unknown: a, b, c, d read; c', s and d' written, then
// read; x written: 11 words, against Thomas's 9.
//
// Breakdown: the smallest row, over the blocks, whose pivot p_j is unusable
// (each block stops at its first), else the interface row l_b whose pivot in
// the interface system is.
// Growth (pivoting = automatic): Thomas's test over the interior rows'
// pivots, the interface rows' pivots after their own block (|a_l c'_e| their
// lower term) and in the interface system (|sub c'| + |sum g s_j|), against
// the largest row of A.
#include <algorithm>
#include <cstdint>
#include <vector>

#include <recur/reference/tridiag_batch.hpp>
#include "tridiag_split.hpp"

namespace recur::detail {
namespace {

namespace ref = reference::detail;

// hi + lo accumulates a sum: hi the rounded sum, lo the rounding errors.
template <class T>
struct compensated_sum {
  T hi = 0, lo = 0;
  void add(T t) {
    T const s = hi + t, z = s - hi;
    lo += (hi - (s - z)) + (t - z);
    hi = s;
  }
  T value() const { return hi + lo; }
};

template <class T>
struct partition_split {
  tridiag_problem<T> const& p;
  ref::bondeli_cut const& cut;
  std::int64_t blocks, nrhs;
  // The running values of a block's right-hand sides are locals for up to
  // 4 of them; beyond, in take_rhs and dprev, `pitch` apart, 64 bytes more
  // than they take, so that the threads writing them on every row write no
  // shared cache line (adjacent, they made nrhs = 2 four times slower than
  // nrhs = 1 on two threads, bench_dist --facility tridiag --executor host).
  std::int64_t pitch;
  T *cp, *sp;  // n values each (split_scratch): c'_j and s_j of every interior row
  // Per block b (right-hand side r at b * nrhs + r; take_rhs and dprev at b * pitch + r):
  std::vector<T> own_sub, own_diag, own_rhs;  // interface row l_b after its own block
  std::vector<T> take_diag, take_sup;  // what block b takes from row l_(b-1): sum g s_j, and g at its end
  std::vector<compensated_sum<T>> take_rhs;  // sum g d'_j
  std::vector<T> dprev;                      // d'_(j-1) during the sweep
  std::vector<std::int64_t> bad;             // block b's first unusable pivot, or -1
  std::vector<T> red_c, red_d;               // the interface system's c' and d' (then x)
  bool check;                                // pivoting = automatic: the growth test
  std::vector<ref::growth_maxima<T>> gm;     // block b's interior rows and its interface row

  partition_split(tridiag_problem<T> const& q, ref::bondeli_cut const& c, bool chk)
      : p(q),
        cut(c),
        blocks(c.count),
        nrhs(q.nrhs),
        pitch(q.nrhs + 64 / static_cast<std::int64_t>(sizeof(T))),
        cp(split_scratch<T>(2 * static_cast<std::size_t>(q.lay.n))),
        sp(cp + q.lay.n),
        own_sub(static_cast<std::size_t>(c.count)),
        own_diag(own_sub.size()),
        own_rhs(static_cast<std::size_t>(c.count * q.nrhs)),
        take_diag(own_sub.size()),
        take_sup(own_sub.size()),
        take_rhs(static_cast<std::size_t>(c.count * pitch)),
        dprev(take_rhs.size()),
        bad(own_sub.size()),
        red_c(own_sub.size()),
        red_d(own_rhs.size()),
        check(chk),
        gm(own_sub.size()) {}

  std::int64_t at(std::int64_t i, std::int64_t k) const { return p.lay.offset(i, k); }
  // Block b's last interior row.
  std::int64_t interior_end(std::int64_t b) const {
    return cut.first(b) + cut.size(b) - (b + 1 < blocks ? 2 : 1);
  }

  void reduce(std::int64_t k, int b) {
    switch (nrhs) {
      case 1:
        return reduce_rows<1>(k, b);
      case 2:
        return reduce_rows<2>(k, b);
      case 3:
        return reduce_rows<3>(k, b);
      case 4:
        return reduce_rows<4>(k, b);
      default:
        return reduce_rows<0>(k, b);
    }
  }

  // R > 0: R right-hand sides, their running values in locals; R = 0: any
  // number, in dprev and take_rhs.
  template <int R>
  void reduce_rows(std::int64_t k, int b) {
    std::int64_t const n = p.lay.n, f = cut.first(b), m = interior_end(b) - f + 1;
    std::int64_t const s = p.lay.element_stride, rs = p.rhs_stride, o = at(f, k);
    T const *const a = p.a + o, *const diag = p.b + o, *const c = p.c + o, *const d = p.d + o;
    T* const x = p.x + o;
    T* const cpb = cp + f;
    T* const spb = sp + f;
    std::int64_t const nr = R > 0 ? R : nrhs;
    T dp_local[R > 0 ? R : 1] = {};
    compensated_sum<T> acc_local[R > 0 ? R : 1] = {};
    T* const dp = R > 0 ? dp_local : dprev.data() + b * pitch;
    compensated_sum<T>* const acc = R > 0 ? acc_local : take_rhs.data() + b * pitch;
    std::fill(dp, dp + nr, T(0));
    std::fill(acc, acc + nr, compensated_sum<T>{});
    compensated_sum<T> take;
    T cprev = 0, sprev = 0, g = b > 0 ? p.c[at(f - 1, k)] : T(0);
    bad[b] = -1;
    ref::growth_maxima<T> growth;
    for (std::int64_t j = 0; j < m; ++j) {
      T const aj = j > 0 ? a[j * s] : T(0);
      T const piv = diag[j * s] - aj * cprev;
      if (check) growth.row(aj * cprev, piv, aj, diag[j * s], f + j + 1 < n ? c[j * s] : T(0));
      if (!ref::usable_pivot(piv)) {
        bad[b] = f + j;
        return;
      }
      T const inv = T(1) / piv;
      T const sj = j > 0 ? -aj * sprev * inv : b > 0 ? a[0] * inv : T(0);
      for (std::int64_t r = 0; r < nr; ++r) {
        T const dj = (d[j * s + r * rs] - aj * dp[r]) * inv;
        x[j * s + r * rs] = dp[r] = dj;
        acc[r].add(g * dj);
      }
      take.add(g * sj);
      spb[j] = sprev = sj;
      // c of the system's last row is not read; its c' is 0 for finish.
      cpb[j] = cprev = f + j + 1 < n ? c[j * s] * inv : T(0);
      g = -g * cprev;
    }
    gm[b] = growth;
    take_diag[b] = take.value();
    take_sup[b] = b + 1 < blocks ? g : T(0);
    if (R > 0) std::copy(acc_local, acc_local + R, take_rhs.data() + b * pitch);
    if (b + 1 < blocks) {
      std::int64_t const l = m * s;  // the interface row, after the interior
      T const al = a[l];
      own_sub[b] = -al * sprev;
      own_diag[b] = diag[l] - al * cprev;
      if (check) growth.row(al * cprev, own_diag[b], al, diag[l], c[l]);
      for (std::int64_t r = 0; r < nr; ++r) own_rhs[b * nrhs + r] = d[l + r * rs] - al * dp[r];
    }
  }

  std::int32_t join(std::int64_t k) {
    std::int64_t row = -1;
    for (std::int64_t b = 0; b < blocks; ++b)
      if (bad[b] >= 0 && (row < 0 || bad[b] < row)) row = bad[b];
    if (row >= 0) return ref::row_number(row);
    std::int64_t const m = blocks - 1;  // interface unknowns x_(l_0) .. x_(l_(m-1))
    for (std::int64_t i = 0; i < m; ++i) {
      T const sub = i > 0 ? own_sub[i] : T(0);
      T const piv = own_diag[i] - take_diag[i + 1] - (i > 0 ? sub * red_c[i - 1] : T(0));
      if (!ref::usable_pivot(piv)) return ref::row_number(interior_end(i) + 1);
      red_c[i] = take_sup[i + 1] / piv;
      for (std::int64_t r = 0; r < nrhs; ++r) {
        T const rhs = own_rhs[i * nrhs + r] - take_rhs[(i + 1) * pitch + r].value();
        red_d[i * nrhs + r] = (rhs - (i > 0 ? sub * red_d[(i - 1) * nrhs + r] : T(0))) / piv;
      }
      if (check)
        gm[0].row(std::fabs(i > 0 ? sub * red_c[i - 1] : T(0)) + std::fabs(take_diag[i + 1]), piv, 0, 0, 0);
    }
    if (check) {
      for (std::int64_t b = 1; b < blocks; ++b) gm[0].merge(gm[b]);
      if (!ref::growth_acceptable(gm[0].numerator, gm[0].denominator)) return split_pivot_again;
    }
    for (std::int64_t i = m - 1; i >= 0; --i)
      for (std::int64_t r = 0; r < nrhs; ++r) {
        T& xi = red_d[i * nrhs + r];
        if (i + 1 < m) xi -= red_c[i] * red_d[(i + 1) * nrhs + r];
        p.x[at(interior_end(i) + 1, k) + r * p.rhs_stride] = xi;
      }
    return 0;
  }

  void finish(std::int64_t k, int b) {
    std::int64_t const f = cut.first(b), m = interior_end(b) - f + 1;
    std::int64_t const s = p.lay.element_stride, rs = p.rhs_stride;
    T* const x = p.x + at(f, k);
    T const *const cpb = cp + f, *const spb = sp + f;
    for (std::int64_t r = 0; r < nrhs; ++r) {
      T const xl = b > 0 ? p.x[at(f - 1, k) + r * rs] : T(0);
      T xn = b + 1 < blocks ? x[m * s + r * rs] : T(0);
      for (std::int64_t j = m - 1; j >= 0; --j) {
        T& xj = x[j * s + r * rs];
        xj = xj - cpb[j] * xn - spb[j] * xl;
        xn = xj;
      }
    }
  }
};

}  // namespace

template <class T>
void tridiag_partition_split(tridiag_problem<T> const& p, int threads) {
  run_split<partition_split>(p, threads);
}

template void tridiag_partition_split<float>(tridiag_problem<float> const&, int);
template void tridiag_partition_split<double>(tridiag_problem<double> const&, int);

}  // namespace recur::detail
