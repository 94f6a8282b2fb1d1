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

#include <recur/reference/tridiag_bondeli.hpp>
#include "../tridiag_backends.hpp"
#include "pscheme.hpp"

namespace recur::detail {

// The shortest system split over threads: from here the split's fixed costs
// (two parallel regions, the reduced system) are a few percent of a
// one-thread solve on idle cores (bench_tridiag_cpu; doc/tridiag.md, "One
// system on many CPU threads", says why not lower).
inline constexpr std::int64_t tridiag_split_min_n = std::int64_t{1} << 15;

// The threads one system of this batch is split over, or 0 when systems go
// to threads whole: more threads than systems, and systems of at least
// tridiag_split_min_n rows.
inline int tridiag_split_threads(layout const& lay, int threads) {
  int const t = available_threads(threads);
  return t >= 2 && lay.count < t && lay.n >= tridiag_split_min_n ? t : 0;
}

// The split methods' scratch (2 n values): a buffer of the calling thread,
// kept for its next split solve and grown when too small. Faulting in fresh
// pages on every solve costs about as much as the solve's own memory
// traffic (bench_tridiag_cpu).
template <class T>
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

// The three phases of MethodT<T> (constructed from p and the cut) over every
// system of p, one system after another, one block per thread. Each
// parallel region has its own work only: allocation (which may throw)
// happens in the method's constructor and in join, outside them.
template <template <class> class MethodT, class T>
void run_split(tridiag_problem<T> const& p, int threads) {
  reference::detail::bondeli_cut const cut(p.lay.n, threads);
  MethodT<T> method(p, cut);
  int const blocks = static_cast<int>(cut.count);
  layout const& lay = p.lay;
  for (std::int64_t k = 0; k < lay.count; ++k) {
#pragma omp parallel for schedule(static) num_threads(blocks)
    for (int b = 0; b < blocks; ++b) method.reduce(k, b);
    std::int32_t const status = method.join(k);
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
  }
}

}  // namespace recur::detail
