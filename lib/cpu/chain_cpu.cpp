// CPU backend of matrix_chain, linrec_order_k and mobius_recurrence: a
// policy per recurrence for the P-scheme (lib/cpu/pscheme.hpp), whose run()
// is the reference's arithmetic operation for operation, so a sequence that
// runs sequentially gives the reference's bits.
#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <utility>

#include <recur/ops/matrix.hpp>
#include <recur/ops/mobius.hpp>
#include <recur/reference/linrec_order_k.hpp>
#include "../chain_backends.hpp"
#include "pscheme.hpp"

namespace recur::detail {
namespace {

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

template <class T, int K>
void order_k_fixed(T const* a, T const* x, T* y, layout const& lay, T const* init, T* final_state,
                   int threads) {
  order_k_policy<T, K> const pol{a, x, y, lay, init, final_state};
  pscheme(pol, lay.n, lay.count, threads, pscheme_costs{K, 1});
}

// order_k_fixed for orders 1 .. sizeof...(J).
template <class T, int... J>
constexpr auto order_k_fixed_table(std::integer_sequence<int, J...>) {
  return std::array{&order_k_fixed<T, J + 1>...};
}

}  // namespace

template <int K, class T>
void matrix_chain_cpu(T const* M, T const* u, T* x, layout const& lay, T const* init, T* final_state,
                      int threads) {
  chain_policy<T, K> const pol{M, u, x, lay, init, final_state};
  pscheme(pol, lay.n, lay.count, threads, pscheme_costs{K * K, K});
}

template <class T>
void linrec_order_k_cpu(T const* a, std::int64_t k, T const* x, T* y, layout const& lay, T const* init,
                        T* final_state, int threads) {
  // Orders 1 to 8: the P-scheme on the companion matrix, the order fixed at
  // compile time.
  static constexpr auto fixed = order_k_fixed_table<T>(std::make_integer_sequence<int, 8>{});
  if (k >= 1 && k <= 8) return fixed[k - 1](a, x, y, lay, init, final_state, threads);
  // k == 0 (y = x) and k > 8: the reference on each sequence, sequences over
  // threads (a one-sequence layout at its first element, its init values).
  layout const one{lay.n, 1, lay.element_stride, lay.n * lay.element_stride};
  std::span<T const> const coeffs(a, static_cast<std::size_t>(k));
  int const nt =
      thread_count(available_threads(threads), lay.count, lay.n * lay.count * std::max<std::int64_t>(k, 1));
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
  for (std::int64_t s = 0; s < lay.count; ++s) {
    std::int64_t const off = lay.offset(0, s);
    reference::linrec_order_k<T>(coeffs, x + off, y + off, one, init ? init + s * k : nullptr,
                                 final_state ? final_state + s * k : nullptr);
  }
}

template <class T>
void mobius_cpu(T const* alpha, T const* beta, T const* gamma, T const* delta, T* p, layout const& lay,
                T const* init, T init_value, T* final_state, int threads) {
  mobius_policy<T> const pol{alpha, beta, gamma, delta, p, lay, init, init_value, final_state};
  // A composition (8 products, a frexp and 4 ldexp) costs about 3 steps
  // (4 products and a division).
  pscheme(pol, lay.n, lay.count, threads, pscheme_costs{4, 3});
}

#define RECUR_MATRIX_CHAIN_CPU(K)                                                                           \
  template void matrix_chain_cpu<K, float>(float const*, float const*, float*, layout const&, float const*, \
                                           float*, int);                                                    \
  template void matrix_chain_cpu<K, double>(double const*, double const*, double*, layout const&,           \
                                            double const*, double*, int);
RECUR_MATRIX_CHAIN_CPU(2)
RECUR_MATRIX_CHAIN_CPU(3)
RECUR_MATRIX_CHAIN_CPU(4)
RECUR_MATRIX_CHAIN_CPU(5)
RECUR_MATRIX_CHAIN_CPU(6)
RECUR_MATRIX_CHAIN_CPU(7)
RECUR_MATRIX_CHAIN_CPU(8)
#undef RECUR_MATRIX_CHAIN_CPU

template void linrec_order_k_cpu<float>(float const*, std::int64_t, float const*, float*, layout const&,
                                        float const*, float*, int);
template void linrec_order_k_cpu<double>(double const*, std::int64_t, double const*, double*, layout const&,
                                         double const*, double*, int);
template void mobius_cpu<float>(float const*, float const*, float const*, float const*, float*, layout const&,
                                float const*, float, float*, int);
template void mobius_cpu<double>(double const*, double const*, double const*, double const*, double*,
                                 layout const&, double const*, double, double*, int);

}  // namespace recur::detail
