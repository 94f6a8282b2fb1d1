// CPU backend of linrec: the P-scheme on threads (lib/cpu/pscheme.hpp) over
// affine maps, and interleaved batches by blocks of adjacent sequences.
// Values stored as T are computed in compute_t<T> (float for the 16-bit
// storage types): converted when loaded, rounded to T when stored.
//
// An interleaved batch advances blocks of adjacent sequences row by row. A
// batch with at least as many sequences as threads runs one sequence per
// thread, sequentially. Otherwise each sequence is cut into P chunks:
//   pre-computation: each thread composes its chunk's maps (s_i, t_i) into one
//                    affine map (A_p, B_p);
//   propagation:     one thread walks the P chunk maps in order, giving each
//                    chunk's incoming state, w_in(p+1) = A_p w_in(p) + B_p;
//   determination:   each thread re-runs its chunk from w_in(p).
#include <algorithm>
#include <cstdint>

#include <recur/ops/affine.hpp>
#include "../linrec_backends.hpp"
#include "pscheme.hpp"

namespace recur::detail {
namespace {

// w_i = s_i w_{i-1} + t_i, where s_i == 0 gives t_i whatever w_{i-1} is
// (as the GPU backend does: a non-finite state does not cross such a step).
template <class T>
T step(T s, T t, T x) {
  return s == T(0) ? t : s * x + t;
}

// The P-scheme policy of a linrec problem: the state is w, a chunk's map the
// composition of its affine steps.
template <class T>
struct linrec_policy {
  using V = compute_t<T>;
  using state = V;
  using map = ops::affine<V>;
  linrec_problem<T> const& p;

  V s(std::int64_t i, std::int64_t k) const { return to_compute(p.s ? p.s[p.lay.offset(i, k)] : p.s_value); }
  V t(std::int64_t i, std::int64_t k) const { return to_compute(p.t ? p.t[p.lay.offset(i, k)] : p.t_value); }
  state init(std::int64_t k) const { return to_compute(p.init_of(k)); }
  map reduce(std::int64_t k, std::int64_t b, std::int64_t e) const {
    auto m = ops::affine_identity<V>();
    for (std::int64_t i = b; i < e; ++i) m = ops::compose_resetting{}(m, map{s(i, k), t(i, k)});
    return m;
  }
  state apply(map const& m, state x) const { return step(m.a, m.b, x); }
  state run(std::int64_t k, std::int64_t b, std::int64_t e, state x) const {
    for (std::int64_t i = b; i < e; ++i) {
      x = step(s(i, k), t(i, k), x);
      p.w[p.lay.offset(i, k)] = to_storage<T>(x);
    }
    return x;
  }
  void finish(std::int64_t k, state x) const {
    if (p.final_state) p.final_state[k] = to_storage<T>(x);
  }
};

// Interleaved batches (batch_stride 1): a block of adjacent sequences is
// advanced one row at a time, so every access runs along memory. One
// sequence per thread would stride through memory `count` elements apart.
template <class T>
void linrec_lane_blocks(linrec_problem<T> const& p, int threads) {
  constexpr std::int64_t lanes = 256;
  std::int64_t const n = p.lay.n, count = p.lay.count, es = p.lay.element_stride;
  std::int64_t const blocks = (count + lanes - 1) / lanes;
  int const nt = static_cast<int>(std::min<std::int64_t>(threads, blocks));
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
  for (std::int64_t b = 0; b < blocks; ++b) {
    std::int64_t const k0 = b * lanes, m = std::min(lanes, count - k0);
    compute_t<T> x[lanes];
    for (std::int64_t j = 0; j < m; ++j) x[j] = to_compute(p.init_of(k0 + j));
    for (std::int64_t i = 0; i < n; ++i) {
      std::int64_t const row = i * es + k0;
      for (std::int64_t j = 0; j < m; ++j) {
        x[j] = step(to_compute(p.s ? p.s[row + j] : p.s_value), to_compute(p.t ? p.t[row + j] : p.t_value),
                    x[j]);
        p.w[row + j] = to_storage<T>(x[j]);
      }
    }
    if (p.final_state)
      for (std::int64_t j = 0; j < m; ++j) p.final_state[k0 + j] = to_storage<T>(x[j]);
  }
}

}  // namespace

template <class T>
void linrec_cpu(linrec_problem<T> const& p, int threads) {
  if (p.lay.batch_stride == 1 && p.lay.count >= 16 && p.lay.n > 1)
    return linrec_lane_blocks(p, available_threads(threads));
  // Chunks whenever pscheme_chunks gives more than one: its cost model
  // already counts linrec's two passes (reduce_ratio 0).
  pscheme(linrec_policy<T>{p}, p.lay.n, p.lay.count, threads, pscheme_costs{1, 0});
}

template void linrec_cpu<float>(linrec_problem<float> const&, int);
template void linrec_cpu<double>(linrec_problem<double> const&, int);
template void linrec_cpu<bfloat16>(linrec_problem<bfloat16> const&, int);
template void linrec_cpu<float16>(linrec_problem<float16> const&, int);

}  // namespace recur::detail
