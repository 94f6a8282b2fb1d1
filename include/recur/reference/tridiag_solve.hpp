#pragma once
// The reference of recur::solve_batched with every tridiag_options field
// (include/recur/tridiag.hpp states the contract): the no-pivot solvers of
// reference/tridiag.hpp, the pivoted Thomas and the growth test of
// tridiag_pivot.hpp, periodic systems (tridiag_periodic.hpp) and
// mixed-precision refinement (tridiag_refine.hpp), system by system. The
// CPU backend (lib/cpu/tridiag_cpu.cpp) runs these per-system functions
// itself; the GPU tests compare with reference::solve_batched.
//
// Per system, by the options:
// - algorithm thomas (or automatic): solve_thomas_system. The system (its
//   periodic split's T when periodic) is factored once by `pivoting`
//   (automatic: Thomas, or the pivoted Thomas where its growth test fails),
//   and the factors solve every right-hand side; refinement = mixed factors
//   in float instead and refines in double.
// - a named algorithm (cr, pcr, ...; plain systems, pivoting none or
//   automatic): solve_named_system. none runs the algorithm; automatic runs
//   it where the system's rows are diagonally dominant (rows_dominant: every
//   named algorithm is stable there, while Thomas's growth test bounds only
//   Thomas's error), and Thomas with automatic's growth test (the pivoted
//   Thomas where it fails) where they are not or the algorithm reports
//   breakdown (RD's self check, a zero divisor): the decision the GPU's
//   screen makes.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <recur/layout/layout.hpp>
#include <recur/reference/arguments.hpp>
#include <recur/reference/tridiag_batch.hpp>
#include <recur/reference/tridiag_periodic.hpp>
#include <recur/reference/tridiag_pivot.hpp>
#include <recur/reference/tridiag_refine.hpp>
#include <recur/types.hpp>

namespace recur::reference {
namespace detail {

// Algorithm thomas: every option. v holds the right-hand sides and receives
// the solutions (NaN, all of them, where the system broke down).
template <class T>
system_outcome solve_thomas_system(equations<T> const& e, std::vector<std::vector<T>>& v,
                                   tridiag_options const& opt) {
  if constexpr (std::is_same_v<T, double>)
    if (opt.refinement == tridiag_refinement::mixed)
      return solve_refined(e, v, opt.periodic, opt.pivoting, opt.max_refinement_steps);
  factored_system<T> f;
  system_outcome out;
  out.info = factor_system(e, opt.periodic, opt.pivoting, f);
  out.pivoted = f.lu.pivoted;
  for (auto& s : v) {
    if (out.info)
      std::fill(s.begin(), s.end(), std::numeric_limits<T>::quiet_NaN());
    else
      solve_factored(f, s);
  }
  return out;
}

// Every row diagonally dominant, |b_i| >= |a_i| + |c_i| (a_0 and c_(n-1)
// zero; false for NaN): automatic's screen of the named algorithms, the
// GPU's row_dominant (kernels/block/block_tridiag.cuh) in the same
// arithmetic.
template <class T>
bool rows_dominant(equations<T> const& e) {
  for (std::size_t i = 0; i < e.b.size(); ++i)
    if (!(std::fabs(e.b[i]) >= std::fabs(e.a[i]) + std::fabs(e.c[i]))) return false;
  return true;
}

// A named algorithm's per-system solver solve(e, d, x) -> info (the *_one
// functions of reference/tridiag.hpp) on a plain system, pivoting none or
// automatic.
template <class T, class SolveT>
system_outcome solve_named_system(equations<T> const& e, std::vector<std::vector<T>>& v,
                                  tridiag_pivoting pivoting, SolveT&& solve) {
  bool const named = pivoting == tridiag_pivoting::none || rows_dominant(e);
  if (named) {
    std::vector<std::vector<T>> xs(v.size());
    std::int32_t status = 0;
    for (std::size_t r = 0; r < v.size(); ++r) {
      std::int32_t const s = solve(e, v[r], xs[r]);
      if (s != 0 && (status == 0 || s < status)) status = s;
    }
    if (status == 0 || pivoting == tridiag_pivoting::none) {
      for (std::size_t r = 0; r < v.size(); ++r) {
        if (status)
          std::fill(v[r].begin(), v[r].end(), std::numeric_limits<T>::quiet_NaN());
        else
          v[r] = std::move(xs[r]);
      }
      return {status, 0, 0};
    }
  }
  tridiag_options again;
  again.pivoting = tridiag_pivoting::automatic;
  return solve_thomas_system(e, v, again);
}

// System k of a batch: its equations (the corners too when periodic) and
// right-hand sides copied out, solve(e, v) -> system_outcome, x stored after
// every right-hand side was read (x may be d).
template <class T, class SolveT>
system_outcome solve_batch_system(T const* a, T const* b, T const* c, T const* d, T* x, layout const& lay,
                                  std::int64_t nrhs, std::int64_t rhs_stride, std::int64_t k, bool periodic,
                                  SolveT&& solve) {
  equations<T> const e = load_system(a, b, c, lay, k, periodic);
  std::vector<std::vector<T>> v(static_cast<std::size_t>(nrhs));
  for (std::int64_t r = 0; r < nrhs; ++r) v[r] = load_rhs(d, lay, k, r * rhs_stride);
  system_outcome const out = solve(e, v);
  for (std::int64_t r = 0; r < nrhs; ++r)
    for (std::int64_t i = 0; i < lay.n; ++i) x[lay.offset(i, k) + r * rhs_stride] = v[r][i];
  return out;
}

inline void require_options(char const* fn, layout const& lay, tridiag_options const& opt, bool is_double) {
  if (opt.algorithm != tridiag_algorithm::automatic && opt.algorithm != tridiag_algorithm::thomas)
    fail(fn, "algorithm = " + std::to_string(static_cast<int>(opt.algorithm)) +
                 ": this reference solves by Thomas (automatic or thomas); the named algorithms' references "
                 "are in reference/tridiag.hpp");
  if (opt.pivoting != tridiag_pivoting::automatic && opt.pivoting != tridiag_pivoting::none &&
      opt.pivoting != tridiag_pivoting::partial)
    fail(fn, "pivoting = " + std::to_string(static_cast<int>(opt.pivoting)) + " is not a tridiag_pivoting");
  if (opt.refinement != tridiag_refinement::none && opt.refinement != tridiag_refinement::mixed)
    fail(fn,
         "refinement = " + std::to_string(static_cast<int>(opt.refinement)) + " is not a tridiag_refinement");
  if (opt.refinement == tridiag_refinement::mixed && !is_double)
    fail(fn, "refinement = mixed needs double-precision systems");
  if (opt.max_refinement_steps < 0)
    fail(fn, "max_refinement_steps = " + std::to_string(opt.max_refinement_steps) + " is negative");
  if (opt.periodic && (lay.n == 1 || lay.n == 2))
    fail(fn, "periodic = true needs n >= 3 (n = " + std::to_string(lay.n) + ")");
}

}  // namespace detail

// recur::solve_batched for algorithm automatic or thomas, every option:
// pivoting, periodic, refinement, and the per-system outputs info, pivoted
// and refinement_steps (each may be null). rhs_stride 0 means the layout's
// span, as in the library. Argument errors throw recur::invalid_argument
// before anything is written; overlapping outputs are not checked here.
template <class T>
void solve_batched(T const* a, T const* b, T const* c, T const* d, T* x, layout const& lay,
                   tridiag_options const& opt) {
  constexpr char const* fn = "solve_batched";
  detail::require_layout(fn, lay);
  detail::extent const one = detail::extent_of(lay, 1, 0);
  std::int64_t const rhs_stride = opt.rhs_stride == 0 ? one.hi - one.lo : opt.rhs_stride;
  detail::require_tridiag(fn, a, b, c, d, x, lay, opt.nrhs, rhs_stride);
  detail::require_options(fn, lay, opt, std::is_same_v<T, double>);
  for (std::int64_t k = 0; k < lay.count; ++k) {
    detail::system_outcome out;
    if (lay.n > 0 && opt.nrhs > 0)
      out = detail::solve_batch_system(
          a, b, c, d, x, lay, opt.nrhs, rhs_stride, k, opt.periodic,
          [&](auto const& e, auto& v) { return detail::solve_thomas_system(e, v, opt); });
    if (opt.info) opt.info[k] = out.info;
    if (opt.pivoted) opt.pivoted[k] = out.pivoted;
    if (opt.refinement_steps) opt.refinement_steps[k] = out.steps;
  }
}

}  // namespace recur::reference
