// The CPU backend of recur::solve_batched: systems spread over OpenMP threads,
// each system solved by one thread, so the result does not depend on the
// thread count.
//
// - thomas: a direct batched Thomas. The matrix of a system is factored once
//   (pivots p_i and c'_i = c_i / p_i in per-thread scratch) and the factors
//   serve every right-hand side; d' is stored straight into x and the back
//   substitution runs in x, so x may be d itself. Layouts whose systems sit
//   side by side (batch_stride < element_stride, e.g. interleaved) are
//   solved in blocks of adjacent systems advanced row by row, so every row
//   is read along memory. The arithmetic, breakdown rows and NaN fill are
//   those of reference::detail::thomas_one.
//   With pivoting = automatic the growth of each system's LU is measured as
//   it is factored (reference::detail::factor_thomas's test), and the
//   systems that fail the test or break down are solved again by the
//   pivoted Thomas, one by one, before any of their x is written.
// - cr, cr_packed (the same arithmetic on the CPU), pcr, rd, cr_pcr, cr_rd,
//   thomas_pcr, pscheme, bondeli: the sequential references' per-system
//   solvers (include/recur/reference/tridiag.hpp, tridiag_bondeli.hpp), one
//   system per task, with pivoting = automatic as
//   reference::detail::solve_named_system does it.
// - pivoting = partial, periodic systems and refinement = mixed (algorithm
//   thomas): reference::detail::solve_thomas_system, one system per task:
//   each system copied out, factored once for all its right-hand sides (and
//   for the periodic split's second solve), and stored back.
// - Fewer systems than threads, and long ones (tridiag_split.hpp): bondeli
//   and thomas_pcr (what automatic runs there) split each system over the
//   threads, so the result depends on the thread count.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <mutex>
#include <vector>

#include <omp.h>

#include <recur/reference/tridiag.hpp>
#include <recur/reference/tridiag_bondeli.hpp>
#include <recur/reference/tridiag_solve.hpp>
#include "../tridiag_backends.hpp"
#include "tridiag_split.hpp"

namespace recur::detail {
namespace {

// The reference's rule (float: 2^-126 <= |p| < 2^126).
template <class T>
bool usable_pivot(T p) {
  return reference::detail::usable_pivot(p);
}

// Collects the first exception thrown on any thread of a parallel region
// (an exception must not leave an OpenMP region), to rethrow after it.
struct first_exception {
  std::exception_ptr e;
  std::mutex m;
  template <class F>
  void run(F&& f) noexcept {
    try {
      f();
    } catch (...) {
      std::lock_guard<std::mutex> lock(m);
      if (!e) e = std::current_exception();
    }
  }
  void rethrow() {
    if (e) std::rethrow_exception(e);
  }
};

int thread_budget(int threads, std::int64_t tasks) {
  std::int64_t const want = threads > 0 ? threads : omp_get_max_threads();
  return static_cast<int>(std::clamp<std::int64_t>(std::min(want, tasks), 1, 1 << 16));
}

// Systems per Thomas block. Adjacent systems of a row share cache lines when
// batch_stride < element_stride: two lines' worth of values then. Otherwise
// one system at a time: contiguous systems advanced together would sit a
// system's length apart, and for power-of-two lengths fall into the same L1
// sets.
template <class T>
std::int64_t thomas_width(layout const& lay) {
  if (lay.count > 1 && lay.batch_stride < lay.element_stride)
    return std::min<std::int64_t>(lay.count, static_cast<std::int64_t>(128 / sizeof(T)));
  return 1;
}

// Writes system k's per-system outputs.
template <class T>
void write_outcome(tridiag_problem<T> const& p, std::int64_t k, reference::detail::system_outcome const& o) {
  if (p.info) p.info[k] = o.info;
  if (p.pivoted) p.pivoted[k] = o.pivoted;
  if (p.refinement_steps) p.refinement_steps[k] = o.steps;
}

// System k by solve_thomas_system with `opt` (its x not yet written).
template <class T>
void thomas_system(tridiag_problem<T> const& p, std::int64_t k, tridiag_options const& opt) {
  namespace rd = reference::detail;
  write_outcome(
      p, k,
      rd::solve_batch_system(p.a, p.b, p.c, p.d, p.x, p.lay, p.nrhs, p.rhs_stride, k, p.periodic,
                             [&](auto const& e, auto& v) { return rd::solve_thomas_system(e, v, opt); }));
}

// Status of a system that the growth test sends to the pivoted Thomas.
constexpr std::int32_t pivot_again = -1;

// Thomas on systems k0 .. k0 + w - 1. piv and cp: n * w scratch values each,
// status: w values, growth: 2 w values (Check: pivoting = automatic).
template <bool Check, class T>
void thomas_block(tridiag_problem<T> const& p, std::int64_t k0, std::int64_t w, T* piv, T* cp,
                  std::int32_t* status, T* growth) {
  layout const& lay = p.lay;
  std::int64_t const n = lay.n;
  std::fill(status, status + w, 0);
  // growth[j], growth[w + j]: the numerator and denominator of system j's
  // gamma, as factor_thomas forms them.
  if constexpr (Check) std::fill(growth, growth + 2 * w, T(0));
  // Factor: p_i = b_i - a_i c'_{i-1} (p_0 = b_0, a_0 not read), c'_i = c_i / p_i
  // (c_{n-1} not read).
  for (std::int64_t i = 0; i < n; ++i) {
    T* const pr = piv + i * w;
    T* const cr = cp + i * w;
    T const* const cprev = cp + (i - 1) * w;
    for (std::int64_t j = 0; j < w; ++j) {
      if (status[j]) continue;
      std::int64_t const o = lay.offset(i, k0 + j);
      T const pv = i == 0 ? p.b[o] : p.b[o] - p.a[o] * cprev[j];
      if constexpr (Check) {
        T const lc = i == 0 ? T(0) : std::fabs(p.a[o] * cprev[j]);
        T const row =
            (i == 0 ? T(0) : std::fabs(p.a[o])) + std::fabs(p.b[o]) + (i + 1 < n ? std::fabs(p.c[o]) : T(0));
        growth[j] = std::max(growth[j], lc + std::fabs(pv));
        growth[w + j] = std::max(growth[w + j], row);
      }
      if (!usable_pivot(pv)) {
        status[j] = static_cast<std::int32_t>(i + 1);
        continue;
      }
      pr[j] = pv;
      cr[j] = i + 1 < n ? p.c[o] / pv : T(0);
    }
  }
  if constexpr (Check)
    for (std::int64_t j = 0; j < w; ++j)
      if (status[j] != 0 || !reference::detail::growth_acceptable(growth[j], growth[w + j]))
        status[j] = pivot_again;
  bool any_ok = false;
  for (std::int64_t j = 0; j < w; ++j) any_ok |= status[j] == 0;
  if (any_ok) {
    for (std::int64_t r = 0; r < p.nrhs; ++r) {
      std::int64_t const ro = r * p.rhs_stride;
      // d'_i = (d_i - a_i d'_{i-1}) / p_i, into x (d_i is read before x_i is
      // written, so x may be d).
      for (std::int64_t i = 0; i < n; ++i) {
        T const* const pr = piv + i * w;
        for (std::int64_t j = 0; j < w; ++j) {
          if (status[j]) continue;
          std::int64_t const o = lay.offset(i, k0 + j) + ro;
          if (i == 0) {
            p.x[o] = p.d[o] / pr[j];
          } else {
            std::int64_t const op = o - lay.element_stride;
            p.x[o] = (p.d[o] - p.a[o - ro] * p.x[op]) / pr[j];
          }
        }
      }
      // x_i = d'_i - c'_i x_{i+1}.
      for (std::int64_t i = n - 2; i >= 0; --i) {
        T const* const cr = cp + i * w;
        for (std::int64_t j = 0; j < w; ++j) {
          if (status[j]) continue;
          std::int64_t const o = lay.offset(i, k0 + j) + ro;
          p.x[o] = p.x[o] - cr[j] * p.x[o + lay.element_stride];
        }
      }
    }
  }
  // A system that broke down gets NaN in every right-hand side.
  T const nan = std::numeric_limits<T>::quiet_NaN();
  for (std::int64_t j = 0; j < w; ++j) {
    if (status[j] <= 0) continue;
    for (std::int64_t r = 0; r < p.nrhs; ++r)
      for (std::int64_t i = 0; i < n; ++i) p.x[lay.offset(i, k0 + j) + r * p.rhs_stride] = nan;
  }
  tridiag_options partial;
  partial.pivoting = tridiag_pivoting::partial;
  for (std::int64_t j = 0; j < w; ++j) {
    if (status[j] == pivot_again)
      thomas_system(p, k0 + j, partial);
    else
      write_outcome(p, k0 + j, {status[j], 0, 0});
  }
}

template <bool Check, class T>
void thomas_blocks(tridiag_problem<T> const& p, int threads) {
  layout const& lay = p.lay;
  std::int64_t const w = thomas_width<T>(lay);
  std::int64_t const blocks = (lay.count + w - 1) / w;
  int const nt = thread_budget(threads, blocks);
  // Per thread: piv and cp (n w values each), then growth (2 w).
  std::size_t const per_thread = static_cast<std::size_t>((2 * lay.n + 2) * w);
  // Allocated before the parallel region: a failure throws here, not inside.
  std::vector<T> scratch(per_thread * static_cast<std::size_t>(nt));
  std::vector<std::int32_t> status(static_cast<std::size_t>(w * nt));
  first_exception fe;
#pragma omp parallel num_threads(nt)
  {
    int const t = omp_get_thread_num();
    T* const piv = scratch.data() + per_thread * static_cast<std::size_t>(t);
    T* const cp = piv + lay.n * w;
    T* const growth = cp + lay.n * w;
    std::int32_t* const st = status.data() + w * t;
#pragma omp for schedule(static)
    for (std::int64_t blk = 0; blk < blocks; ++blk) {
      std::int64_t const k0 = blk * w;
      fe.run([&] { thomas_block<Check>(p, k0, std::min(w, lay.count - k0), piv, cp, st, growth); });
    }
  }
  fe.rethrow();
}

// Algorithm thomas: the batched Thomas for plain systems (pivoting none or
// automatic), solve_thomas_system per system for the other options.
template <class T>
void thomas(tridiag_problem<T> const& p, int threads) {
  if (p.pivoting == tridiag_pivoting::none && !p.periodic && p.refinement == tridiag_refinement::none)
    return thomas_blocks<false>(p, threads);
  if (p.pivoting == tridiag_pivoting::automatic && !p.periodic && p.refinement == tridiag_refinement::none)
    return thomas_blocks<true>(p, threads);
  tridiag_options opt;
  opt.pivoting = p.pivoting;
  opt.periodic = p.periodic;
  opt.refinement = p.refinement;
  opt.max_refinement_steps = p.max_refinement_steps;
  int const nt = thread_budget(threads, p.lay.count);
  first_exception fe;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
  for (std::int64_t k = 0; k < p.lay.count; ++k) fe.run([&] { thomas_system(p, k, opt); });
  fe.rethrow();
}

// One reference solver per system (with pivoting = automatic's screen and
// Thomas's re-solve: solve_named_system).
template <class T, class SolveT>
void per_system(tridiag_problem<T> const& p, int threads, SolveT solve) {
  namespace rd = reference::detail;
  int const nt = thread_budget(threads, p.lay.count);
  first_exception fe;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
  for (std::int64_t k = 0; k < p.lay.count; ++k)
    fe.run([&] {
      write_outcome(p, k,
                    rd::solve_batch_system(p.a, p.b, p.c, p.d, p.x, p.lay, p.nrhs, p.rhs_stride, k, false,
                                           [&](auto const& e, auto& v) {
                                             return rd::solve_named_system(e, v, p.pivoting, solve);
                                           }));
    });
  fe.rethrow();
}

}  // namespace

template <class T>
void tridiag_cpu(tridiag_problem<T> const& p, int threads) {
  namespace rd = reference::detail;
  switch (p.algorithm) {
    case tridiag_algorithm::automatic:  // resolved before the backend; kept for safety
    case tridiag_algorithm::thomas:
      return thomas(p, threads);
    case tridiag_algorithm::cr:
    case tridiag_algorithm::cr_split:  // split storage is a GPU memory layout: the same arithmetic as cr
    case tridiag_algorithm::cr_packed:
      return per_system(p, threads,
                        [](auto const& e, auto rhs, auto& x) { return rd::cyclic_reduction_one(e, rhs, x); });
    case tridiag_algorithm::pcr:
      return per_system(p, threads, [](auto const& e, auto rhs, auto& x) {
        return rd::parallel_cyclic_reduction_one(e, rhs, x);
      });
    case tridiag_algorithm::rd:
      return per_system(
          p, threads, [](auto const& e, auto rhs, auto& x) { return rd::recursive_doubling_one(e, rhs, x); });
    case tridiag_algorithm::cr_pcr:
      return per_system(p, threads,
                        [](auto const& e, auto rhs, auto& x) { return rd::cr_pcr_one(e, rhs, x); });
    case tridiag_algorithm::cr_rd:
      return per_system(p, threads,
                        [](auto const& e, auto rhs, auto& x) { return rd::cr_rd_one(e, rhs, x); });
    case tridiag_algorithm::pscheme:
      return per_system(p, threads,
                        [](auto const& e, auto rhs, auto& x) { return rd::pscheme_one(e, rhs, x); });
    case tridiag_algorithm::thomas_pcr:
      if (int const split = tridiag_split_threads(p.lay, threads)) return tridiag_partition_split(p, split);
      return per_system(p, threads,
                        [](auto const& e, auto rhs, auto& x) { return rd::thomas_pcr_one(e, rhs, x); });
    case tridiag_algorithm::bondeli:
      if (int const split = tridiag_split_threads(p.lay, threads)) return tridiag_bondeli_split(p, split);
      return per_system(p, threads,
                        [](auto const& e, auto rhs, auto& x) { return rd::bondeli_one(e, rhs, x); });
  }
  throw invalid_argument(
      "recur::solve_batched: internal error: unknown tridiag_algorithm in the CPU backend");
}

template void tridiag_cpu<float>(tridiag_problem<float> const&, int);
template void tridiag_cpu<double>(tridiag_problem<double> const&, int);

// Every algorithm runs on the CPU. automatic is the batched Thomas, the
// least work and the best memory access wherever every thread gets whole
// systems; where systems are split over the threads, thomas_pcr (the
// partition method: the fastest split, doc/tridiag-internals.md). The split serves
// plain systems, without pivoting or with automatic's test: periodic
// systems, partial pivoting and refinement stay with Thomas, one system per
// thread.
tridiag_algorithm tridiag_cpu_resolve(layout const& lay, std::size_t, tridiag_options const& opt,
                                      int threads) {
  if (opt.algorithm != tridiag_algorithm::automatic) return opt.algorithm;
  bool const plain = !opt.periodic && opt.refinement == tridiag_refinement::none &&
                     opt.pivoting != tridiag_pivoting::partial;
  return plain && tridiag_split_threads(lay, threads) ? tridiag_algorithm::thomas_pcr
                                                      : tridiag_algorithm::thomas;
}

}  // namespace recur::detail
