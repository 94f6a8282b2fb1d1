// Bondeli's algorithm with one block per thread (tridiag_split.hpp's
// frame): the steps and the block functions of the reference
// (include/recur/reference/tridiag_bondeli.hpp), so a split over P threads
// gives the bits of reference::bondeli with P blocks.
//   reduce: step 1 for the block, every right-hand side: y into x, w and v
//           (B^-1 e_1, B^-1 e_k) into scratch, the ends of all three kept;
//   join:   step 2, H alpha = beta for each right-hand side (H by partial
//           pivoting; under pivoting = automatic the blocks' Thomas growth
//           is tested first);
//   finish: step 3, x = y - alpha_(2b-1) w - alpha_(2b) v.
// Memory traffic per unknown and right-hand side: a, b, c, d read; y, w, v
// written, read and written again by the backward sweep, read by the
// correction; x written: 17 words.
#include <algorithm>
#include <cstdint>
#include <vector>

#include <recur/reference/tridiag_bondeli.hpp>
#include "tridiag_split.hpp"

namespace recur::detail {
namespace {

namespace ref = reference::detail;

template <class T>
struct bondeli_split {
  tridiag_problem<T> const& p;
  ref::bondeli_cut const& cut;
  std::int64_t blocks;
  T *w, *v;                             // n values each (split_scratch): the blocks' B^-1 e_1 and B^-1 e_k
  std::vector<ref::bondeli_ends<T>> y;  // block b, right-hand side r: b * nrhs + r
  std::vector<ref::bondeli_ends<T>> ew, ev;
  std::vector<std::int64_t> bad;  // block b's first unusable pivot (a row of the system), or -1
  std::vector<T> lo, hi;          // block b's alpha_(2b-1) and alpha_(2b), right-hand side r at b * nrhs + r
  bool check;                     // pivoting = automatic: the blocks' growth test
  std::vector<ref::growth_maxima<T>> gm;  // block b's growth maxima

  bondeli_split(tridiag_problem<T> const& q, ref::bondeli_cut const& c, bool chk)
      : p(q),
        cut(c),
        blocks(c.count),
        w(split_scratch<T>(2 * static_cast<std::size_t>(q.lay.n))),
        v(w + q.lay.n),
        y(static_cast<std::size_t>(c.count * q.nrhs)),
        ew(static_cast<std::size_t>(c.count)),
        ev(ew.size()),
        bad(ew.size()),
        lo(y.size()),
        hi(y.size()),
        check(chk),
        gm(ew.size()) {}

  std::int64_t at(std::int64_t i, std::int64_t k) const { return p.lay.offset(i, k); }

  void reduce(std::int64_t k, int b) {
    std::int64_t const f = cut.first(b), m = cut.size(b), o = at(f, k), s = p.lay.element_stride;
    std::int64_t const j = ref::bondeli_block(p.a + o, p.b + o, p.c + o, s, m, p.d + o, p.x + o, p.nrhs,
                                              p.rhs_stride, w + f, v + f, check ? &(gm[b] = {}) : nullptr);
    bad[b] = j < 0 ? -1 : f + j;
    if (j >= 0) return;
    for (std::int64_t r = 0; r < p.nrhs; ++r)
      y[b * p.nrhs + r] = {p.x[o + r * p.rhs_stride], p.x[o + (m - 1) * s + r * p.rhs_stride]};
    ew[b] = {w[f], w[f + m - 1]};
    ev[b] = {v[f], v[f + m - 1]};
  }

  std::int32_t join(std::int64_t k) {
    std::int64_t row = -1;
    for (std::int64_t b = 0; b < blocks; ++b)
      if (bad[b] >= 0 && (row < 0 || bad[b] < row)) row = bad[b];
    if (row >= 0) return ref::row_number(row);
    std::vector<T> a_first(static_cast<std::size_t>(blocks - 1)), c_last(a_first), alpha;
    for (std::int64_t j = 0; j + 1 < blocks; ++j) {
      a_first[j] = p.a[at(cut.first(j + 1), k)];
      c_last[j] = p.c[at(cut.first(j) + cut.size(j) - 1, k)];
    }
    if (check) {
      // The blocks' own eliminations, and at each block boundary the term
      // Thomas would meet there, a_first c_last / p_last (ev's last element
      // is 1 / p_last): a tiny last pivot makes a block nearly singular
      // without growth inside it.
      ref::growth_maxima<T> g;
      for (auto const& m : gm) g.merge(m);
      for (std::int64_t j = 0; j + 1 < blocks; ++j) g.row(a_first[j] * c_last[j] * ev[j].last, 0, 0, 0, 0);
      if (!ref::growth_acceptable(g.numerator, g.denominator)) return split_pivot_again;
    }
    std::vector<ref::bondeli_ends<T>> ey(static_cast<std::size_t>(blocks));
    for (std::int64_t r = 0; r < p.nrhs; ++r) {
      for (std::int64_t b = 0; b < blocks; ++b) ey[b] = y[b * p.nrhs + r];
      if (std::int64_t const col = ref::bondeli_reduced(ey, ew, ev, a_first, c_last, alpha); col >= 0)
        return ref::row_number(ref::bondeli_reduced_row(cut, col));
      for (std::int64_t b = 0; b < blocks; ++b) {
        lo[b * p.nrhs + r] = b > 0 ? alpha[2 * b - 1] : T(0);
        hi[b * p.nrhs + r] = b + 1 < blocks ? alpha[2 * b] : T(0);
      }
    }
    return 0;
  }

  void finish(std::int64_t k, int b) {
    std::int64_t const f = cut.first(b);
    ref::bondeli_correct(p.x + at(f, k), p.lay.element_stride, cut.size(b), p.nrhs, p.rhs_stride,
                         lo.data() + b * p.nrhs, hi.data() + b * p.nrhs, w + f, v + f);
  }
};

}  // namespace

template <class T>
void tridiag_bondeli_split(tridiag_problem<T> const& p, int threads) {
  run_split<bondeli_split>(p, threads);
}

template void tridiag_bondeli_split<float>(tridiag_problem<float> const&, int);
template void tridiag_bondeli_split<double>(tridiag_problem<double> const&, int);

}  // namespace recur::detail
