// CPU backend of linrec and linrec_adjoint: the P-scheme on threads
// (lib/cpu/pscheme.hpp) over affine maps, and interleaved batches by blocks
// of adjacent sequences, written once over an element access (linrec's, or
// the adjoint's). Values stored as T are computed in compute_t<T> (float for
// the 16-bit storage types): converted when loaded, rounded to T when stored.
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
#include <vector>

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

// An element access: the coefficient and input of step i of sequence k
// (s, t), the initial state, what each state is stored as (store), and the
// final state (finish).
//
// linrec's: s_i, t_i; w_i stored; the last w as the final state.
template <class T>
struct linrec_elements {
  using V = compute_t<T>;
  linrec_problem<T> const& p;

  layout const& lay() const { return p.lay; }
  V s(std::int64_t i, std::int64_t k) const { return to_compute(p.s ? p.s[p.lay.offset(i, k)] : p.s_value); }
  V t(std::int64_t i, std::int64_t k) const { return to_compute(p.t ? p.t[p.lay.offset(i, k)] : p.t_value); }
  V init(std::int64_t k) const { return to_compute(p.init_of(k)); }
  void store(std::int64_t i, std::int64_t k, V x) const { p.w[p.lay.offset(i, k)] = to_storage<T>(x); }
  void finish(std::int64_t k, V x) const {
    if (p.final_state) p.final_state[k] = to_storage<T>(x);
  }
};

// linrec_adjoint's (linrec_adjoint_problem): coefficient s_{i-1} (1 at
// i = 0), input g_i; dt_i = lambda_i and ds_i = lambda_i x_i stored; the
// init's gradient s_{n-1} lambda_{n-1} at the end.
template <class T>
struct linrec_adjoint_elements {
  using V = compute_t<T>;
  linrec_adjoint_problem<T> const& q;

  layout const& lay() const { return q.scan.lay; }
  V coefficient(std::int64_t i, std::int64_t k) const {
    return to_compute(q.scan.s ? q.scan.s[q.scan.lay.offset(i, k)] : q.scan.s_value);
  }
  V s(std::int64_t i, std::int64_t k) const { return i == 0 ? V(1) : coefficient(i - 1, k); }
  V t(std::int64_t i, std::int64_t k) const { return to_compute(q.scan.t[q.scan.lay.offset(i, k)]); }
  V init(std::int64_t k) const { return to_compute(q.scan.init_of(k)); }
  void store(std::int64_t i, std::int64_t k, V lambda) const {
    std::int64_t const o = q.scan.lay.offset(i, k);
    q.scan.w[o] = to_storage<T>(lambda);
    if (q.ds) {
      V const x = to_compute(i == q.scan.lay.n - 1 ? q.w_init_of(k) : q.w[q.scan.lay.offset(i + 1, k)]);
      q.ds[o] = to_storage<T>(lambda * x);
    }
  }
  void finish(std::int64_t k, V lambda) const {
    if (q.scan.final_state) q.scan.final_state[k] = to_storage<T>(coefficient(q.scan.lay.n - 1, k) * lambda);
  }
};

// The P-scheme policy of an element access: the state is w (or lambda), a
// chunk's map the composition of its affine steps.
template <class E>
struct linrec_policy {
  using V = typename E::V;
  using state = V;
  using map = ops::affine<V>;
  E const& e;

  state init(std::int64_t k) const { return e.init(k); }
  map reduce(std::int64_t k, std::int64_t b, std::int64_t end) const {
    auto m = ops::affine_identity<V>();
    for (std::int64_t i = b; i < end; ++i) m = ops::compose_resetting{}(m, map{e.s(i, k), e.t(i, k)});
    return m;
  }
  state apply(map const& m, state x) const { return step(m.a, m.b, x); }
  state run(std::int64_t k, std::int64_t b, std::int64_t end, state x) const {
    for (std::int64_t i = b; i < end; ++i) {
      x = step(e.s(i, k), e.t(i, k), x);
      e.store(i, k, x);
    }
    return x;
  }
  void finish(std::int64_t k, state x) const { e.finish(k, x); }
};

// Interleaved batches (batch_stride 1): a block of adjacent sequences is
// advanced one row at a time, so every access runs along memory. One
// sequence per thread would stride through memory `count` elements apart.
template <class E>
void lane_blocks(E const& e, int threads) {
  constexpr std::int64_t lanes = 256;
  std::int64_t const n = e.lay().n, count = e.lay().count;
  std::int64_t const blocks = (count + lanes - 1) / lanes;
  int const nt = static_cast<int>(std::min<std::int64_t>(threads, blocks));
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
  for (std::int64_t b = 0; b < blocks; ++b) {
    std::int64_t const k0 = b * lanes, m = std::min(lanes, count - k0);
    typename E::V x[lanes];
    for (std::int64_t j = 0; j < m; ++j) x[j] = e.init(k0 + j);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < m; ++j) {
        x[j] = step(e.s(i, k0 + j), e.t(i, k0 + j), x[j]);
        e.store(i, k0 + j, x[j]);
      }
    for (std::int64_t j = 0; j < m; ++j) e.finish(k0 + j, x[j]);
  }
}

// Chunks whenever pscheme_chunks gives more than one: its cost model
// already counts linrec's two passes (reduce_ratio 0).
constexpr pscheme_costs linrec_costs{1, 0};

// Interleaved batches of 16 or more sequences run in lane blocks.
inline bool lanes_apply(layout const& lay) { return lay.batch_stride == 1 && lay.count >= 16 && lay.n > 1; }

template <class E>
void run_elements(E const& e, int threads, typename linrec_policy<E>::map const* given = nullptr) {
  layout const& lay = e.lay();
  if (lanes_apply(lay)) return lane_blocks(e, available_threads(threads));
  pscheme(linrec_policy<E>{e}, lay.n, lay.count, threads, linrec_costs, given);
}

}  // namespace

template <class T>
void linrec_cpu(linrec_problem<T> const& p, int threads, linrec_chunk_maps<compute_t<T>> const* kept) {
  bool const use = kept && kept->chunks > 1 &&
                   kept->chunks == pscheme_chunk_count(p.lay.n, p.lay.count, threads, linrec_costs) &&
                   !lanes_apply(p.lay);
  run_elements(linrec_elements<T>{p}, threads, use ? kept->maps.data() : nullptr);
}

template <class T>
void linrec_adjoint_cpu(linrec_adjoint_problem<T> const& p, int threads) {
  run_elements(linrec_adjoint_elements<T>{p}, threads);
}

// The summary: each sequence's maps composed (the pre-computation of the
// P-scheme alone, over whole sequences). Interleaved batches compose blocks
// of adjacent sequences row by row, as lane_blocks runs them; a batch the
// P-scheme chunks (fewer sequences than threads) is cut into linrec_cpu's
// chunks, composed in parallel and folded in order, the chunk maps kept
// where `keep` is given.
template <class T>
void linrec_summary_cpu(linrec_problem<T> const& p, ops::affine<compute_t<T>>* out, int threads,
                        linrec_chunk_maps<compute_t<T>>* keep) {
  using V = compute_t<T>;
  using map = ops::affine<V>;
  linrec_elements<T> const e{p};
  linrec_policy<linrec_elements<T>> const pol{e};
  ops::compose_resetting const op;
  std::int64_t const n = p.lay.n, count = p.lay.count;
  int const max_threads = available_threads(threads);
  if (keep) *keep = {};
  if (lanes_apply(p.lay)) {
    constexpr std::int64_t lanes = 256;
    std::int64_t const blocks = (count + lanes - 1) / lanes;
    int const nt = static_cast<int>(std::min<std::int64_t>(max_threads, blocks));
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (std::int64_t b = 0; b < blocks; ++b) {
      std::int64_t const k0 = b * lanes, m = std::min(lanes, count - k0);
      map x[lanes];
      for (std::int64_t j = 0; j < m; ++j) x[j] = ops::affine_identity<V>();
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = 0; j < m; ++j) x[j] = op(x[j], map{e.s(i, k0 + j), e.t(i, k0 + j)});
      for (std::int64_t j = 0; j < m; ++j) out[k0 + j] = x[j];
    }
    return;
  }
  int const chunks = pscheme_chunk_count(n, count, threads, linrec_costs);
  if (chunks == 1) {
    int const nt = thread_count(max_threads, count, n * count);
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (std::int64_t k = 0; k < count; ++k) out[k] = pol.reduce(k, 0, n);
    return;
  }
  // pscheme()'s chunks: chunk c covers n c / chunks .. n (c + 1) / chunks.
  std::vector<map> part(static_cast<std::size_t>(chunks * count));
  for (std::int64_t k = 0; k < count; ++k) {
    map* const pk = part.data() + k * chunks;
#pragma omp parallel for schedule(static) num_threads(chunks)
    for (int c = 0; c < chunks; ++c) pk[c] = pol.reduce(k, n * c / chunks, n * (c + 1) / chunks);
    map m = pk[0];
    for (int c = 1; c < chunks; ++c) m = op(m, pk[c]);
    out[k] = m;
  }
  if (keep) *keep = {chunks, std::move(part)};
}

template void linrec_cpu<float>(linrec_problem<float> const&, int, linrec_chunk_maps<float> const*);
template void linrec_cpu<double>(linrec_problem<double> const&, int, linrec_chunk_maps<double> const*);
template void linrec_cpu<bfloat16>(linrec_problem<bfloat16> const&, int, linrec_chunk_maps<float> const*);
template void linrec_cpu<float16>(linrec_problem<float16> const&, int, linrec_chunk_maps<float> const*);
template void linrec_summary_cpu<float>(linrec_problem<float> const&, ops::affine<float>*, int,
                                        linrec_chunk_maps<float>*);
template void linrec_summary_cpu<double>(linrec_problem<double> const&, ops::affine<double>*, int,
                                         linrec_chunk_maps<double>*);
template void linrec_summary_cpu<bfloat16>(linrec_problem<bfloat16> const&, ops::affine<float>*, int,
                                           linrec_chunk_maps<float>*);
template void linrec_summary_cpu<float16>(linrec_problem<float16> const&, ops::affine<float>*, int,
                                          linrec_chunk_maps<float>*);
template void linrec_adjoint_cpu<float>(linrec_adjoint_problem<float> const&, int);
template void linrec_adjoint_cpu<double>(linrec_adjoint_problem<double> const&, int);
template void linrec_adjoint_cpu<bfloat16>(linrec_adjoint_problem<bfloat16> const&, int);
template void linrec_adjoint_cpu<float16>(linrec_adjoint_problem<float16> const&, int);

}  // namespace recur::detail
