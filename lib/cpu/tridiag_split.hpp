#pragma once
// One long system over several CPU threads: the CPU backend's path for
// batches of fewer systems than threads (lib/cpu/tridiag_cpu.cpp otherwise
// gives each thread whole systems). The system's rows are cut into one
// block per thread (reference::detail::bondeli_cut: n / P rows, the first
// n % P blocks one more), and a method runs in three phases:
//   reduce(k, b)  block b of system k, on its thread: the block's local solve
//                 and its contribution to a reduced system;
//   join(k)       one thread: the reduced system, whose size is about twice
//                 the block count; returns system k's info (0 or a 1-based row);
//   finish(k, b)  block b on its thread: its rows of x (called only when join
//                 returned 0; otherwise the system's x is NaN).
// Two methods: Bondeli's algorithm (tridiag_bondeli.cpp, tridiag_algorithm::
// bondeli) and the partition method (tridiag_partition.cpp, what automatic
// and thomas_pcr run here). The blocks depend only on n and the thread
// count, and each phase's arithmetic only on its block, so the result is
// bitwise the same from run to run for a given thread count (not across
// thread counts).
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include <recur/reference/tridiag_bondeli.hpp>
#include <recur/reference/tridiag_solve.hpp>
#include "../tridiag_backends.hpp"
#include "pscheme.hpp"

namespace recur::detail {

// The shortest system split over threads: from here the split's fixed costs
// (two parallel regions, the reduced system) are a few percent of a
// one-thread solve on idle cores (bench_tridiag_cpu; doc/tridiag-internals.md, "One
// system on many CPU threads", says why not lower).
inline constexpr std::int64_t tridiag_split_min_n = std::int64_t{1} << 15;

// The threads one system of this batch is split over, or 0 when systems go
// to threads whole: more threads than systems, and systems of at least
// tridiag_split_min_n rows.
inline int tridiag_split_threads(layout const& lay, int threads) {
  int const t = available_threads(threads);
  return t >= 2 && lay.count < t && lay.n >= tridiag_split_min_n ? t : 0;
}

// The split's scratch: a buffer of the calling thread, kept for its next
// split solve and grown when too small; Slot 0 the methods' (2 n values),
// Slot 1 the copy of d that an in-place solve under pivoting = automatic
// keeps. Faulting in fresh pages on every solve costs about as much as the
// solve's own memory traffic (bench_tridiag_cpu).
template <class T, int Slot = 0>
T* split_scratch(std::size_t count) {
  thread_local std::unique_ptr<T[]> buffer;
  thread_local std::size_t size = 0;
  if (size < count) {
    buffer.reset();
    size = 0;
    buffer.reset(new T[count]);
    size = count;
  }
  return buffer.get();
}

// Bondeli's algorithm and the partition method, every system of p split
// over `threads` (>= 2) threads.
template <class T>
void tridiag_bondeli_split(tridiag_problem<T> const& p, int threads);
template <class T>
void tridiag_partition_split(tridiag_problem<T> const& p, int threads);

// pivoting = automatic (`check`): a method measures the growth of its
// elimination without pivoting as it runs (the test and bound of
// reference/tridiag_pivot.hpp, over the rows its blocks and its reduced
// system eliminate), and join returns split_pivot_again, before any x is
// final, when the test fails.
inline constexpr std::int32_t split_pivot_again = -1;

// System k of p solved again by the pivoted Thomas on the calling thread
// (pivoting = automatic's fallback), from d, or from `saved` when not null
// (system k's right-hand sides, n values each, when x is d and the split has
// written over them).
template <class T>
void split_solve_pivoted(tridiag_problem<T> const& p, std::int64_t k, T const* saved) {
  namespace rd = reference::detail;
  layout const& lay = p.lay;
  rd::equations<T> const e = rd::load_system(p.a, p.b, p.c, lay, k);
  std::vector<std::vector<T>> v(static_cast<std::size_t>(p.nrhs));
  for (std::int64_t r = 0; r < p.nrhs; ++r)
    v[r] = saved ? std::vector<T>(saved + r * lay.n, saved + (r + 1) * lay.n)
                 : rd::load_rhs(p.d, lay, k, r * p.rhs_stride);
  tridiag_options partial;
  partial.pivoting = tridiag_pivoting::partial;
  rd::system_outcome const out = rd::solve_thomas_system(e, v, partial);
  for (std::int64_t r = 0; r < p.nrhs; ++r)
    for (std::int64_t i = 0; i < lay.n; ++i) p.x[lay.offset(i, k) + r * p.rhs_stride] = v[r][i];
  if (p.info) p.info[k] = out.info;
  if (p.pivoted) p.pivoted[k] = 1;
}

// The three phases of MethodT<T> (constructed from p, the cut and whether
// pivoting = automatic's test runs) over every system of p, one system
// after another, one block per thread. Each parallel region has its own
// work only: allocation (which may throw) happens in the method's
// constructor and in join, outside them. Under pivoting = automatic a
// system that breaks down or fails the growth test is solved again by
// split_solve_pivoted, and pivoted[k] says so.
template <template <class> class MethodT, class T>
void run_split(tridiag_problem<T> const& p, int threads) {
  reference::detail::bondeli_cut const cut(p.lay.n, threads);
  bool const check = p.pivoting == tridiag_pivoting::automatic;
  MethodT<T> method(p, cut, check);
  int const blocks = static_cast<int>(cut.count);
  layout const& lay = p.lay;
  // The front admits x equal to d or apart from it; when equal, the reduce
  // phase writes over d, which a re-solve needs.
  T* const saved =
      check && p.x == p.d ? split_scratch<T, 1>(static_cast<std::size_t>(lay.n * p.nrhs)) : nullptr;
  for (std::int64_t k = 0; k < lay.count; ++k) {
    if (saved) {
#pragma omp parallel for schedule(static) num_threads(blocks)
      for (int b = 0; b < blocks; ++b) {
        std::int64_t const f = cut.first(b), e = f + cut.size(b);
        for (std::int64_t r = 0; r < p.nrhs; ++r)
          for (std::int64_t i = f; i < e; ++i)
            saved[r * lay.n + i] = p.d[lay.offset(i, k) + r * p.rhs_stride];
      }
    }
#pragma omp parallel for schedule(static) num_threads(blocks)
    for (int b = 0; b < blocks; ++b) method.reduce(k, b);
    std::int32_t const status = method.join(k);
    if (check && status != 0) {
      split_solve_pivoted(p, k, saved);
      if (p.refinement_steps) p.refinement_steps[k] = 0;
      continue;
    }
#pragma omp parallel for schedule(static) num_threads(blocks)
    for (int b = 0; b < blocks; ++b) {
      if (status == 0) {
        method.finish(k, b);
        continue;
      }
      T const nan = std::numeric_limits<T>::quiet_NaN();
      std::int64_t const f = cut.first(b), e = f + cut.size(b);
      for (std::int64_t r = 0; r < p.nrhs; ++r)
        for (std::int64_t i = f; i < e; ++i) p.x[lay.offset(i, k) + r * p.rhs_stride] = nan;
    }
    if (p.info) p.info[k] = status;
    if (p.pivoted) p.pivoted[k] = 0;
    if (p.refinement_steps) p.refinement_steps[k] = 0;
  }
}

}  // namespace recur::detail
