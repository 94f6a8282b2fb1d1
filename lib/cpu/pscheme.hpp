#pragma once
// How the CPU backend spreads a batch over OpenMP threads: whole sequences
// per thread (thread_count), or, when there are fewer sequences than threads,
// each long sequence cut into chunks by the P-scheme (Wakatani 2012, section
// II; doc/pscheme.md), written once here for every recurrence (linrec's
// affine maps, matrix chains, order-k and Moebius recurrences).
//
// A recurrence is described by a policy:
//   state                     the value carried from step to step
//   map                       a composed chunk of steps
//   init(k)                   sequence k's initial state
//   reduce(k, b, e)           pre-computation: steps [b, e) composed into a map
//   apply(map, state)         propagation: a chunk's outgoing state
//   run(k, b, e, state)       determination: steps [b, e) from state, outputs
//                             written, the last state returned
//   finish(k, state)          the final state written (if wanted)
// Its element loader and writer are the policy's own. run is the reference's
// arithmetic operation for operation, so a sequence that runs sequentially
// gives the reference's bits.
//
// Results do not depend on scheduling: a sequence is either run whole by one
// thread or cut into chunks that depend only on n and the thread budget.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace recur::detail {

// The thread budget: host.threads when positive, else OpenMP's maximum.
inline int available_threads(int requested) {
#ifdef _OPENMP
  int const hw = omp_get_max_threads();
#else
  int const hw = 1;
#endif
  return requested > 0 ? requested : hw;
}

// Threads for `tasks` independent tasks of `work` scalar steps in all: at
// most max_threads, at most one per task, and at least 2^14 steps per thread
// (below that, starting threads costs more than it saves).
inline int thread_count(int max_threads, std::int64_t tasks, std::int64_t work) {
  return static_cast<int>(
      std::max<std::int64_t>(1, std::min<std::int64_t>({max_threads, tasks, work >> 14})));
}

// The P-scheme's chunk count for one sequence of n steps. Cost model: T(P) =
// c_elem * N / P + c_sync * P, so the best P is sqrt(c_elem * N / c_sync).
// The pre-computation and determination together cost c_elem ~ 2 ns per
// element (two passes, memory bound); a parallel region with its barrier
// costs c_sync ~ 10 us per thread taking part (fork/join and barrier of an
// OpenMP region, doc/pscheme.md). Hence P = sqrt(N / 5000), clamped to the
// threads available.
inline int pscheme_chunks(std::int64_t n, int max_threads) {
  double const p = std::sqrt(static_cast<double>(n) / 5000.0);
  return static_cast<int>(std::clamp<double>(std::floor(p), 1.0, std::max(1, max_threads)));
}

// How a policy's costs compare: `weight`, the work of one step of run()
// relative to a scalar affine step (sizes the sequential path's thread
// budget); `reduce_ratio`, the work of one step of reduce() relative to one
// of run(). Chunking costs (1 + reduce_ratio) / P per step against 1
// sequentially, so it pays only for P > 1 + reduce_ratio.
struct pscheme_costs {
  std::int64_t weight;
  int reduce_ratio;
};

// The chunks pscheme() cuts each sequence into: P > 1, or 1 where the
// sequences run whole (as many sequences as threads, or too short to pay).
inline int pscheme_chunk_count(std::int64_t n, std::int64_t count, int requested_threads, pscheme_costs c) {
  int const max_threads = available_threads(requested_threads);
  int const chunks = pscheme_chunks(n, max_threads);
  return count >= max_threads || chunks <= 1 + c.reduce_ratio ? 1 : chunks;
}

// Sequences k = 0 .. count-1 of n steps each, by `pol`. Where `given` is
// not null and the sequences are chunked, it holds the pre-computation's
// maps (chunk b of sequence k at k P + b, P = pscheme_chunk_count), made
// earlier over the same steps (a split call's summary): only the
// propagation and the determination run.
template <class Policy>
void pscheme(Policy const& pol, std::int64_t n, std::int64_t count, int requested_threads, pscheme_costs c,
             typename Policy::map const* given = nullptr) {
  using state = typename Policy::state;
  using map = typename Policy::map;
  int const max_threads = available_threads(requested_threads);
  int const P = pscheme_chunk_count(n, count, requested_threads, c);

  if (P == 1) {
    int const nt = thread_count(max_threads, count, n * count * c.weight);
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (std::int64_t k = 0; k < count; ++k) pol.finish(k, pol.run(k, 0, n, pol.init(k)));
    return;
  }

  // Allocated here, not inside the parallel region: nothing may throw there.
  std::vector<map> chunk(static_cast<std::size_t>(P));
  std::vector<state> incoming(static_cast<std::size_t>(P));
  auto const bounds = [&](int q) { return n * q / P; };  // chunk q is [bounds(q), bounds(q+1))
  for (std::int64_t k = 0; k < count; ++k) {
#pragma omp parallel num_threads(P)
    {
#ifdef _OPENMP
      int const q = omp_get_thread_num();
      int const nq = omp_get_num_threads();
#else
      int const q = 0;
      int const nq = 1;
#endif
      // Pre-computation. The chunks are fixed by P; if the runtime grants
      // fewer threads than asked, each thread takes several.
      for (int b = q; b < P; b += nq)
        chunk[b] = given ? given[k * P + b] : pol.reduce(k, bounds(b), bounds(b + 1));
#pragma omp barrier
#pragma omp single
      {  // Propagation: sequential over the chunk maps, in value space.
        state x = pol.init(k);
        for (int b = 0; b < P; ++b) {
          incoming[b] = x;
          x = pol.apply(chunk[b], x);
        }
      }  // implicit barrier: every read of the pre-computation is done before any write
      for (int b = q; b < P; b += nq) {  // Determination.
        state const last = pol.run(k, bounds(b), bounds(b + 1), incoming[b]);
        if (b == P - 1) pol.finish(k, last);
      }
    }
  }
}

}  // namespace recur::detail
