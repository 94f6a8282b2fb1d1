// Host API of the matrix-chain, order-k and Moebius recurrences: every
// argument checked before anything is written, then one P-scheme on OpenMP
// threads (as lib/cpu/linrec_cpu.cpp does for affine maps), generic over the
// recurrence. A recurrence is described by a policy:
//   state                     the value carried from step to step
//   map                       a composed chunk of steps
//   init(k)                   sequence k's initial state
//   reduce(k, b, e)           pre-computation: steps [b, e) composed into a map
//   apply(map, state)         propagation: a chunk's outgoing state
//   run(k, b, e, state)       determination: steps [b, e) from state, outputs
//                             written, the last state returned
//   finish(k, state)          the final state written (if wanted)
// Its element loader and writer are the policy's own (matrices and vectors
// along the layout, four coefficient arrays, ...). run is the reference's
// arithmetic operation for operation, so a sequence that runs sequentially
// gives the reference's bits.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include <fmt/format.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include <recur/chain.hpp>
#include <recur/ops/matrix.hpp>
#include <recur/ops/mobius.hpp>
#include <recur/reference/linrec_order_k.hpp>
#include "arg_check.hpp"
#include "chain_backends.hpp"
#include "filter_backends.hpp"
#include "linrec_backends.hpp"

namespace recur {
namespace {

using detail::byte_span;
using detail::span_of;

// ------------------------------------------------------------ the P-scheme --

int available_threads(int requested) {
#ifdef _OPENMP
  int const hw = omp_get_max_threads();
#else
  int const hw = 1;
#endif
  return requested > 0 ? requested : hw;
}

// How a policy's costs compare: `weight`, the work of one step of run()
// relative to a scalar affine step (sizes the sequential path's thread
// budget); `reduce_ratio`, the work of one step of reduce() relative to one
// of run(). Chunking costs (1 + reduce_ratio) / P per step against 1
// sequentially, so it pays only for P > 1 + reduce_ratio.
struct costs {
  std::int64_t weight;
  int reduce_ratio;
};

// The chunk count of one sequence of n steps: the linrec cost model's P
// (detail::pscheme_cpu_threads), or 1 where chunks would not pay.
int chunk_count(std::int64_t n, int max_threads, costs c) {
  int const P = detail::pscheme_cpu_threads(n, max_threads);
  return P > 1 + c.reduce_ratio ? P : 1;
}

template <class Policy>
void pscheme(Policy const& pol, layout const& lay, int requested_threads, costs c) {
  using state = typename Policy::state;
  using map = typename Policy::map;
  std::int64_t const n = lay.n, count = lay.count;
  int const max_threads = available_threads(requested_threads);
  int const P = chunk_count(n, max_threads, c);

  if (count >= max_threads || P == 1) {
    // Whole sequences per thread, at least 2^14 scalar steps' worth of work
    // each (below that, starting threads costs more than it saves).
    std::int64_t const work = n * count * c.weight;
    int const nt =
        static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>({max_threads, count, work >> 14})));
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
      for (int b = q; b < P; b += nq) chunk[b] = pol.reduce(k, bounds(b), bounds(b + 1));
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

// ---------------------------------------------------------------- policies --

// x_i = M_i x_{i-1} + u_i (reference::matrix_chain's storage and arithmetic).
template <class T, int K>
struct chain_policy {
  using state = ops::column<T, K>;
  using map = ops::affine_matrix<T, K>;
  T const* M;
  T const* u;  // may be null
  T* x;
  layout lay;
  T const* initial;  // may be null
  T* final_state;

  ops::matrix<T, K> load_matrix(std::int64_t o) const {
    ops::matrix<T, K> m;
    for (int r = 0; r < K; ++r)
      for (int c = 0; c < K; ++c) m.m[r][c] = M[o * K * K + r * K + c];
    return m;
  }
  state init(std::int64_t k) const {
    state s{};
    if (initial)
      for (int r = 0; r < K; ++r) s.v[r] = initial[k * K + r];
    return s;
  }
  map reduce(std::int64_t k, std::int64_t b, std::int64_t e) const {
    map acc = ops::affine_matrix_identity<T, K>();
    for (std::int64_t i = b; i < e; ++i) {
      std::int64_t const o = lay.offset(i, k);
      map step{load_matrix(o), {}};
      if (u)
        for (int r = 0; r < K; ++r) step.u[r] = u[o * K + r];
      acc = ops::affine_matrix_compose{}(acc, step);
    }
    return acc;
  }
  state apply(map const& m, state const& s) const { return m.apply(s); }
  state run(std::int64_t k, std::int64_t b, std::int64_t e, state s) const {
    for (std::int64_t i = b; i < e; ++i) {
      std::int64_t const o = lay.offset(i, k);
      s = ops::multiply(load_matrix(o), s);
      for (int r = 0; r < K; ++r) {
        if (u) s.v[r] += u[o * K + r];  // u_i read before x_i is written (x may be u)
        x[o * K + r] = s.v[r];
      }
    }
    return s;
  }
  void finish(std::int64_t k, state const& s) const {
    if (final_state)
      for (int r = 0; r < K; ++r) final_state[k * K + r] = s.v[r];
  }
};

// y_i = a_1 y_{i-1} + ... + a_K y_{i-K} + x_i (reference::linrec_order_k's
// arithmetic), state (y_i, ..., y_{i-K+1}). A chunk's map is x -> C^m h + v:
// C^m the m-th power of the companion matrix, the same for every chunk of m
// steps, and v the chunk run from zero history. So the pre-computation costs
// what the determination costs (K per step), not a K x K product per step.
template <class T, int K>
struct order_k_policy {
  using state = ops::column<T, K>;
  struct map {
    ops::matrix<T, K> power;
    state v;
  };
  T const* a;
  T const* x;
  T* y;
  layout lay;
  T const* initial;  // may be null
  T* final_state;

  state init(std::int64_t k) const {
    state s{};
    if (initial)
      for (int j = 0; j < K; ++j) s.v[j] = initial[k * K + j];
    return s;
  }
  template <bool Write>
  state steps(std::int64_t k, std::int64_t b, std::int64_t e, state h) const {
    for (std::int64_t i = b; i < e; ++i) {
      std::int64_t const o = lay.offset(i, k);
      T acc = T(0);
      for (int j = 0; j < K; ++j) acc += a[j] * h.v[j];
      T const yi = acc + x[o];
      for (int j = K - 1; j > 0; --j) h.v[j] = h.v[j - 1];
      h.v[0] = yi;
      if constexpr (Write) y[o] = yi;
    }
    return h;
  }
  map reduce(std::int64_t k, std::int64_t b, std::int64_t e) const {
    map m{ops::matrix_identity<T, K>(), steps<false>(k, b, e, state{})};
    ops::matrix<T, K> sq = ops::companion<T, K>(a);
    for (std::int64_t len = e - b; len > 0; len >>= 1) {  // binary powering
      if (len & 1) m.power = ops::multiply(sq, m.power);
      if (len > 1) sq = ops::multiply(sq, sq);
    }
    return m;
  }
  state apply(map const& m, state const& h) const {
    state r = ops::multiply(m.power, h);
    for (int j = 0; j < K; ++j) r.v[j] += m.v.v[j];
    return r;
  }
  state run(std::int64_t k, std::int64_t b, std::int64_t e, state h) const { return steps<true>(k, b, e, h); }
  void finish(std::int64_t k, state const& h) const {
    if (final_state)
      for (int j = 0; j < K; ++j) final_state[k * K + j] = h.v[j];
  }
};

// p_i = (alpha_i p_{i-1} + beta_i) / (gamma_i p_{i-1} + delta_i); chunks
// composed with ops::mobius_compose (rescaled 2x2 products).
template <class T>
struct mobius_policy {
  using state = T;
  using map = ops::mobius<T>;
  T const *alpha, *beta, *gamma, *delta;
  T* p;
  layout lay;
  T const* initial;  // may be null
  T init_value;
  T* final_state;

  state init(std::int64_t k) const { return initial ? initial[k] : init_value; }
  map reduce(std::int64_t k, std::int64_t b, std::int64_t e) const {
    map acc = ops::mobius_identity<T>();
    for (std::int64_t i = b; i < e; ++i) {
      std::int64_t const o = lay.offset(i, k);
      acc = ops::mobius_compose{}(acc, map{alpha[o], beta[o], gamma[o], delta[o]});
    }
    return acc;
  }
  state apply(map const& m, state q) const { return m.apply(q); }
  state run(std::int64_t k, std::int64_t b, std::int64_t e, state q) const {
    for (std::int64_t i = b; i < e; ++i) {
      std::int64_t const o = lay.offset(i, k);
      q = (alpha[o] * q + beta[o]) / (gamma[o] * q + delta[o]);
      p[o] = q;
    }
    return q;
  }
  void finish(std::int64_t k, state q) const {
    if (final_state) final_state[k] = q;
  }
};

// ------------------------------------------------------------------ checks --

void check_threads(char const* fn, host const& ex) {
  if (ex.threads < 0) detail::bad_argument(fn, fmt::format("host.threads = {} is negative", ex.threads));
}

// The layout with the strides an empty or degenerate batch leaves unused made
// well defined (as lib/linrec.cpp and lib/filter.cpp do).
layout normalised_layout(layout const& lay) {
  layout l = lay;
  if (l.n <= 1) l.element_stride = 1;
  if (l.count <= 1) l.batch_stride = l.n * l.element_stride;
  return l;
}

// W scalars as one element, so that byte spans count whole matrices/vectors.
template <class T, int W>
struct block {
  T v[W];
};
template <int W, class T>
byte_span span_blocks(T const* p, layout const& l) {
  return span_of(reinterpret_cast<block<T, W> const*>(p), l);
}

// count * per values of per-sequence state, checked not to overflow.
std::int64_t state_size(char const* fn, std::int64_t count, std::int64_t per) {
  if (per > 0 && count > std::numeric_limits<std::int64_t>::max() / per / 8)
    detail::bad_argument(fn, fmt::format("layout.count * {} = {} * {} overflows", per, count, per));
  return count * per;
}

struct overlap_check {
  char const* fn;
  void disjoint(byte_span a, char const* an, byte_span b, char const* bn) const {
    if (a.intersects(b)) detail::bad_argument(fn, fmt::format("{} overlaps {}", an, bn));
  }
  // out may be in exactly (in place); any other overlap is rejected.
  void in_place(void const* out, byte_span so, char const* on, void const* in, byte_span si,
                char const* in_name) const {
    if (out != in && so.intersects(si))
      detail::bad_argument(
          fn, fmt::format("{} overlaps {} (only {} == {} exactly is allowed)", on, in_name, on, in_name));
  }
  // final_state may be init exactly; the output array must avoid both.
  void state(byte_span out, char const* on, byte_span si, byte_span sf, void const* init,
             void const* final_state) const {
    disjoint(out, on, si, "init");
    disjoint(out, on, sf, "final_state");
    if (final_state != init && sf.intersects(si))
      detail::bad_argument(fn, "final_state overlaps init (only final_state == init exactly is allowed)");
  }
};

// n == 0: the final state is the initial one.
template <class T>
void copy_state(T const* init, T init_value, T* final_state, std::int64_t values) {
  if (!final_state) return;
  for (std::int64_t j = 0; j < values; ++j) final_state[j] = init ? init[j] : init_value;
}

// ------------------------------------------------------------ entry points --

// The checks of matrix_chain (both executors); returns the state size.
template <int K, class T>
std::int64_t check_matrix_chain(char const* fn, T const* M, T const* u, T* x, layout const& lay,
                                chain_options<T> const& opt) {
  // Offsets are in matrices: the byte offsets of M are the largest.
  detail::check_layout(fn, lay, sizeof(T) * K * K);
  bool const work = lay.n > 0 && lay.count > 0;
  detail::check_pointer(fn, M, "M", work);
  detail::check_pointer(fn, u, "u", false);
  detail::check_pointer(fn, x, "x", work);
  detail::check_pointer(fn, opt.init, "opt.init", false);
  detail::check_pointer(fn, opt.final_state, "opt.final_state", false);
  std::int64_t const sv = state_size(fn, lay.count, K);
  byte_span const sm = span_blocks<K * K>(M, lay), su = span_blocks<K>(u, lay), sx = span_blocks<K>(x, lay);
  byte_span const si = span_of(opt.init, sv), sf = span_of(opt.final_state, sv);
  overlap_check const o{fn};
  o.in_place(x, sx, "x", u, su, "u");
  o.disjoint(sx, "x", sm, "M");
  o.state(sx, "x", si, sf, opt.init, opt.final_state);
  o.disjoint(sf, "final_state", sm, "M");
  o.disjoint(sf, "final_state", su, "u");
  return sv;
}

template <int K, class T>
void run_matrix_chain(host const& ex, T const* M, T const* u, T* x, layout const& lay,
                      chain_options<T> const& opt) {
  constexpr char const* fn = "recur::matrix_chain";
  check_threads(fn, ex);
  std::int64_t const sv = check_matrix_chain<K>(fn, M, u, x, lay, opt);
  if (lay.count == 0) return;
  if (lay.n == 0) return copy_state(opt.init, T(0), opt.final_state, sv);
  chain_policy<T, K> const pol{M, u, x, normalised_layout(lay), opt.init, opt.final_state};
  pscheme(pol, pol.lay, ex.threads, costs{K * K, K});
}

void require_cuda(char const* fn) {
  if (!cuda_compiled())
    throw not_compiled(fmt::format("{}: this build has no CUDA backend (configure with RECUR_ENABLE_CUDA=ON)", fn));
}

// The state arrays of a recur::cuda call: device memory where used.
template <class T>
void check_device_state(char const* fn, T const* init, T* final_state) {
  if (init) detail::check_device_pointer(fn, init, "opt.init");
  if (final_state && final_state != init) detail::check_device_pointer(fn, final_state, "opt.final_state");
}

// recur::cuda: the same checks, then device memory (kernels/dispatch/
// dispatch_chain.cuh through chain_backends.hpp).
template <int K, class T>
void run_matrix_chain_cuda(cuda const& ex, T const* M, T const* u, T* x, layout const& lay,
                           chain_options<T> const& opt) {
  constexpr char const* fn = "recur::matrix_chain";
  require_cuda(fn);
  check_matrix_chain<K>(fn, M, u, x, lay, opt);
  if (lay.count == 0) return;
  if (lay.n > 0) {
    detail::check_device_pointer(fn, M, "M");
    if (u) detail::check_device_pointer(fn, u, "u");
    if (x != u) detail::check_device_pointer(fn, x, "x");
  }
  check_device_state(fn, opt.init, opt.final_state);
  detail::matrix_chain_cuda<K, T>(M, u, x, normalised_layout(lay), opt.init, opt.final_state, ex.stream);
}

template <class T, int K>
void order_k_fixed(host const& ex, T const* a, T const* x, T* y, layout const& lay,
                   chain_options<T> const& opt) {
  order_k_policy<T, K> const pol{a, x, y, lay, opt.init, opt.final_state};
  pscheme(pol, lay, ex.threads, costs{K, 1});
}

// The checks both executors share; returns the state values of the batch.
template <class T>
std::int64_t check_order_k(char const* fn, std::span<T const> a, T const* x, T* y, layout const& lay,
                           chain_options<T> const& opt) {
  std::int64_t const k = static_cast<std::int64_t>(a.size());
  if (k > 0) detail::check_pointer(fn, a.data(), "a", true);
  for (std::int64_t j = 0; j < k; ++j)
    if (!std::isfinite(a[j])) detail::bad_argument(fn, fmt::format("a[{}] = {} is not finite", j, a[j]));
  detail::check_layout(fn, lay, sizeof(T));
  bool const work = lay.n > 0 && lay.count > 0;
  detail::check_pointer(fn, x, "x", work);
  detail::check_pointer(fn, y, "y", work);
  detail::check_pointer(fn, opt.init, "opt.init", false);
  detail::check_pointer(fn, opt.final_state, "opt.final_state", false);
  std::int64_t const sv = state_size(fn, lay.count, k);
  byte_span const sx = span_of(x, lay), sy = span_of(y, lay), sa = span_of(a.data(), k);
  byte_span const si = span_of(opt.init, sv), sf = span_of(opt.final_state, sv);
  overlap_check const o{fn};
  o.in_place(y, sy, "y", x, sx, "x");
  o.disjoint(sy, "y", sa, "a");
  o.state(sy, "y", si, sf, opt.init, opt.final_state);
  o.disjoint(sf, "final_state", sa, "a");
  o.disjoint(sf, "final_state", sx, "x");
  return sv;
}

template <class T>
void run_order_k(host const& ex, std::span<T const> a, T const* x, T* y, layout const& lay,
                 chain_options<T> const& opt) {
  constexpr char const* fn = "recur::linrec_order_k";
  check_threads(fn, ex);
  std::int64_t const k = static_cast<std::int64_t>(a.size());
  std::int64_t const sv = check_order_k(fn, a, x, y, lay, opt);
  if (lay.count == 0) return;
  if (lay.n == 0) return copy_state(opt.init, T(0), opt.final_state, sv);
  layout const l = normalised_layout(lay);
  switch (k) {
    case 1:
      return order_k_fixed<T, 1>(ex, a.data(), x, y, l, opt);
    case 2:
      return order_k_fixed<T, 2>(ex, a.data(), x, y, l, opt);
    case 3:
      return order_k_fixed<T, 3>(ex, a.data(), x, y, l, opt);
    case 4:
      return order_k_fixed<T, 4>(ex, a.data(), x, y, l, opt);
    case 5:
      return order_k_fixed<T, 5>(ex, a.data(), x, y, l, opt);
    case 6:
      return order_k_fixed<T, 6>(ex, a.data(), x, y, l, opt);
    case 7:
      return order_k_fixed<T, 7>(ex, a.data(), x, y, l, opt);
    case 8:
      return order_k_fixed<T, 8>(ex, a.data(), x, y, l, opt);
    default:
      break;
  }
  // k == 0 (y = x) and k > 8: the reference on each sequence, sequences over
  // threads (a one-sequence layout at its first element, its init values).
  layout const one{l.n, 1, l.element_stride, l.n * l.element_stride};
  int const max_threads = available_threads(ex.threads);
  int const nt = static_cast<int>(std::max<std::int64_t>(
      1,
      std::min<std::int64_t>({max_threads, l.count, (l.n * l.count * std::max<std::int64_t>(k, 1)) >> 14})));
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
  for (std::int64_t s = 0; s < l.count; ++s) {
    std::int64_t const off = l.offset(0, s);
    reference::linrec_order_k<T>(a, x + off, y + off, one, opt.init ? opt.init + s * k : nullptr,
                                 opt.final_state ? opt.final_state + s * k : nullptr);
  }
}

// recur::cuda: the same checks, then the GPU's (order at most 8, device
// memory, a host coefficient array), then the LTI backend (filter_backends.hpp).
template <class T>
void run_order_k_cuda(cuda const& ex, std::span<T const> a, T const* x, T* y, layout const& lay,
                      chain_options<T> const& opt) {
  constexpr char const* fn = "recur::linrec_order_k";
  require_cuda(fn);
  std::int64_t const k = static_cast<std::int64_t>(a.size());
  if (k > 0) detail::check_host_pointer(fn, a.data(), "a");
  check_order_k(fn, a, x, y, lay, opt);
  if (k > detail::predictor_cuda_max_order)
    detail::bad_argument(fn, fmt::format("order {} (a.size()) is not supported with recur::cuda: the CUDA backend "
                                         "supports orders 0-{} (recur::host has no limit)",
                                         k, detail::predictor_cuda_max_order));
  if (lay.n > 0 && lay.count > 0) {
    detail::check_device_pointer(fn, x, "x");
    if (y != x) detail::check_device_pointer(fn, y, "y");
  }
  if (lay.count > 0 && k > 0) {
    if (opt.init) detail::check_device_pointer(fn, opt.init, "opt.init");
    if (opt.final_state && opt.final_state != opt.init) detail::check_device_pointer(fn, opt.final_state, "opt.final_state");
  }
  if (lay.count == 0) return;
  detail::predictor_cuda<T>(false, a.data(), k, x, y, normalised_layout(lay), opt.init,
                            k > 0 ? opt.final_state : nullptr, ex.stream);
}

// The checks of mobius_recurrence (both executors); returns the state size.
template <class T>
std::int64_t check_mobius(char const* fn, T const* alpha, T const* beta, T const* gamma, T const* delta, T* p,
                          layout const& lay, mobius_options<T> const& opt) {
  detail::check_layout(fn, lay, sizeof(T));
  bool const work = lay.n > 0 && lay.count > 0;
  detail::check_pointer(fn, alpha, "alpha", work);
  detail::check_pointer(fn, beta, "beta", work);
  detail::check_pointer(fn, gamma, "gamma", work);
  detail::check_pointer(fn, delta, "delta", work);
  detail::check_pointer(fn, p, "p", work);
  detail::check_pointer(fn, opt.init, "opt.init", false);
  detail::check_pointer(fn, opt.final_state, "opt.final_state", false);
  std::int64_t const sv = state_size(fn, lay.count, 1);
  byte_span const sp = span_of(p, lay), si = span_of(opt.init, sv), sf = span_of(opt.final_state, sv);
  overlap_check const o{fn};
  T const* const in[] = {alpha, beta, gamma, delta};
  char const* const names[] = {"alpha", "beta", "gamma", "delta"};
  for (int j = 0; j < 4; ++j) {
    byte_span const s = span_of(in[j], lay);
    o.in_place(p, sp, "p", in[j], s, names[j]);
    o.disjoint(sf, "final_state", s, names[j]);
  }
  o.state(sp, "p", si, sf, opt.init, opt.final_state);
  return sv;
}

template <class T>
void run_mobius(host const& ex, T const* alpha, T const* beta, T const* gamma, T const* delta, T* p,
                layout const& lay, mobius_options<T> const& opt) {
  constexpr char const* fn = "recur::mobius_recurrence";
  check_threads(fn, ex);
  std::int64_t const sv = check_mobius(fn, alpha, beta, gamma, delta, p, lay, opt);
  if (lay.count == 0) return;
  if (lay.n == 0) return copy_state(opt.init, opt.init_value, opt.final_state, sv);
  layout const l = normalised_layout(lay);
  mobius_policy<T> const pol{alpha, beta, gamma, delta, p, l, opt.init, opt.init_value, opt.final_state};
  // A composition (8 products, a frexp and 4 ldexp) costs about 3 steps
  // (4 products and a division).
  pscheme(pol, l, ex.threads, costs{4, 3});
}

template <class T>
void run_mobius_cuda(cuda const& ex, T const* alpha, T const* beta, T const* gamma, T const* delta, T* p,
                     layout const& lay, mobius_options<T> const& opt) {
  constexpr char const* fn = "recur::mobius_recurrence";
  require_cuda(fn);
  check_mobius(fn, alpha, beta, gamma, delta, p, lay, opt);
  if (lay.count == 0) return;
  if (lay.n > 0) {
    T const* const in[] = {alpha, beta, gamma, delta};
    char const* const names[] = {"alpha", "beta", "gamma", "delta"};
    for (int j = 0; j < 4; ++j) detail::check_device_pointer(fn, in[j], names[j]);
    detail::check_device_pointer(fn, p, "p");
  }
  check_device_state(fn, opt.init, opt.final_state);
  detail::mobius_cuda<T>(alpha, beta, gamma, delta, p, normalised_layout(lay), opt.init, opt.init_value,
                         opt.final_state, ex.stream);
}

}  // namespace

template <int K, class T>
requires(K >= 2 && K <= 8 && (std::same_as<T, float> || std::same_as<T, double>)) void matrix_chain(
    host const& ex, T const* M, std::type_identity_t<T> const* u, T* x, layout const& lay,
    chain_options<std::type_identity_t<T>> const& opt) {
  run_matrix_chain<K, T>(ex, M, u, x, lay, opt);
}

template <int K, class T>
requires(K >= 2 && K <= 8 && (std::same_as<T, float> || std::same_as<T, double>)) void matrix_chain(
    cuda const& ex, T const* M, std::type_identity_t<T> const* u, T* x, layout const& lay,
    chain_options<std::type_identity_t<T>> const& opt) {
  run_matrix_chain_cuda<K, T>(ex, M, u, x, lay, opt);
}

#define RECUR_CHAIN_INSTANTIATE(K)                                                                         \
  template void matrix_chain<K, float>(host const&, float const*, float const*, float*, layout const&,     \
                                       chain_options<float> const&);                                       \
  template void matrix_chain<K, double>(host const&, double const*, double const*, double*, layout const&, \
                                        chain_options<double> const&);                                     \
  template void matrix_chain<K, float>(cuda const&, float const*, float const*, float*, layout const&,     \
                                       chain_options<float> const&);                                       \
  template void matrix_chain<K, double>(cuda const&, double const*, double const*, double*, layout const&, \
                                        chain_options<double> const&);
RECUR_CHAIN_INSTANTIATE(2)
RECUR_CHAIN_INSTANTIATE(3)
RECUR_CHAIN_INSTANTIATE(4)
RECUR_CHAIN_INSTANTIATE(5)
RECUR_CHAIN_INSTANTIATE(6)
RECUR_CHAIN_INSTANTIATE(7)
RECUR_CHAIN_INSTANTIATE(8)
#undef RECUR_CHAIN_INSTANTIATE

void linrec_order_k(host const& ex, std::span<float const> a, float const* x, float* y, layout const& lay,
                    chain_options<float> const& opt) {
  run_order_k<float>(ex, a, x, y, lay, opt);
}
void linrec_order_k(host const& ex, std::span<double const> a, double const* x, double* y, layout const& lay,
                    chain_options<double> const& opt) {
  run_order_k<double>(ex, a, x, y, lay, opt);
}

void linrec_order_k(cuda const& ex, std::span<float const> a, float const* x, float* y, layout const& lay,
                    chain_options<float> const& opt) {
  run_order_k_cuda<float>(ex, a, x, y, lay, opt);
}
void linrec_order_k(cuda const& ex, std::span<double const> a, double const* x, double* y, layout const& lay,
                    chain_options<double> const& opt) {
  run_order_k_cuda<double>(ex, a, x, y, lay, opt);
}

void mobius_recurrence(host const& ex, float const* alpha, float const* beta, float const* gamma,
                       float const* delta, float* p, layout const& lay, mobius_options<float> const& opt) {
  run_mobius<float>(ex, alpha, beta, gamma, delta, p, lay, opt);
}
void mobius_recurrence(host const& ex, double const* alpha, double const* beta, double const* gamma,
                       double const* delta, double* p, layout const& lay, mobius_options<double> const& opt) {
  run_mobius<double>(ex, alpha, beta, gamma, delta, p, lay, opt);
}

void mobius_recurrence(cuda const& ex, float const* alpha, float const* beta, float const* gamma,
                       float const* delta, float* p, layout const& lay, mobius_options<float> const& opt) {
  run_mobius_cuda<float>(ex, alpha, beta, gamma, delta, p, lay, opt);
}
void mobius_recurrence(cuda const& ex, double const* alpha, double const* beta, double const* gamma,
                       double const* delta, double* p, layout const& lay, mobius_options<double> const& opt) {
  run_mobius_cuda<double>(ex, alpha, beta, gamma, delta, p, lay, opt);
}

}  // namespace recur
