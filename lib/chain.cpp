// Host API of the matrix-chain, order-k and Moebius recurrences: every
// argument checked before anything is written, then the backend
// (chain_backends.hpp): the P-scheme over OpenMP threads (lib/cpu/chain_cpu.cpp)
// or the CUDA scans (lib/cuda/).
#include <cstdint>
#include <span>

#include <fmt/format.h>

#include <recur/chain.hpp>
#include "chain_backends.hpp"
#include "detail/arg_check.hpp"
#include "detail/cuda_support.hpp"

namespace recur {
namespace {

using detail::byte_span;
using detail::span_of;

// W scalars as one element, so that byte spans count whole matrices/vectors.
template <class T, int W>
struct block {
  T v[W];
};
template <int W, class T>
byte_span span_blocks(T const* p, layout const& l) {
  return span_of(reinterpret_cast<block<T, W> const*>(p), l);
}

// The state arrays of a call: pointers checked, their size (count * per)
// checked not to overflow, their spans.
template <class T>
struct state_spans {
  std::int64_t values;
  byte_span init, final_state;
};
template <class T>
state_spans<T> check_state(char const* fn, layout const& lay, std::int64_t per, char const* what,
                           T const* init, T* final_state) {
  detail::check_pointer(fn, init, "opt.init", false);
  detail::check_pointer(fn, final_state, "opt.final_state", false);
  std::int64_t const values = detail::state_size(fn, lay.count, per, what, sizeof(T));
  return {values, span_of(init, values), span_of<T>(final_state, values)};
}

// n == 0: the final state is the initial one.
template <class T>
void copy_state(T const* init, T init_value, T* final_state, std::int64_t values) {
  if (!final_state) return;
  for (std::int64_t j = 0; j < values; ++j) final_state[j] = init ? init[j] : init_value;
}

// ------------------------------------------------------------ matrix_chain --

constexpr char const* chain_fn = "recur::matrix_chain";

// The checks of both executors; returns the state size.
template <int K, class T>
std::int64_t check_matrix_chain(T const* M, T const* u, T* x, layout const& lay,
                                chain_options<T> const& opt) {
  constexpr char const* fn = chain_fn;
  // Offsets are in matrices: the byte offsets of M are the largest.
  detail::check_layout(fn, lay, sizeof(T) * K * K);
  bool const work = lay.n > 0 && lay.count > 0;
  detail::check_pointer(fn, M, "M", work);
  detail::check_pointer(fn, u, "u", false);
  detail::check_pointer(fn, x, "x", work);
  auto const st = check_state(fn, lay, K, "K", opt.init, opt.final_state);
  byte_span const sm = span_blocks<K * K>(M, lay), su = span_blocks<K>(u, lay), sx = span_blocks<K>(x, lay);
  detail::overlap_check const o{fn};
  o.in_place(x, sx, "x", u, su, "u");
  o.disjoint(sx, "x", sm, "M");
  o.state(sx, "x", opt.init, st.init, opt.final_state, st.final_state);
  o.disjoint(st.final_state, "final_state", sm, "M");
  o.disjoint(st.final_state, "final_state", su, "u");
  return st.values;
}

// --------------------------------------------------------- linrec_order_k --

constexpr char const* order_k_fn = "recur::linrec_order_k";

// The checks of both executors; returns the state size.
template <class T>
std::int64_t check_order_k(std::span<T const> a, T const* x, T* y, layout const& lay,
                           chain_options<T> const& opt) {
  constexpr char const* fn = order_k_fn;
  std::int64_t const k = static_cast<std::int64_t>(a.size());
  if (k > 0) detail::check_pointer(fn, a.data(), "a", true);
  detail::check_finite(fn, "a", a.data(), k);
  detail::check_layout(fn, lay, sizeof(T));
  bool const work = lay.n > 0 && lay.count > 0;
  detail::check_pointer(fn, x, "x", work);
  detail::check_pointer(fn, y, "y", work);
  auto const st = check_state(fn, lay, k, "k", opt.init, opt.final_state);
  byte_span const sx = span_of(x, lay), sy = span_of(y, lay), sa = span_of(a.data(), k);
  detail::overlap_check const o{fn};
  o.in_place(y, sy, "y", x, sx, "x");
  o.disjoint(sy, "y", sa, "a");
  o.state(sy, "y", opt.init, st.init, opt.final_state, st.final_state);
  o.disjoint(st.final_state, "final_state", sa, "a");
  o.disjoint(st.final_state, "final_state", sx, "x");
  return st.values;
}

// ------------------------------------------------------ mobius_recurrence --

constexpr char const* mobius_fn = "recur::mobius_recurrence";
constexpr char const* mobius_names[] = {"alpha", "beta", "gamma", "delta"};

// The checks of both executors; returns the state size.
template <class T>
std::int64_t check_mobius(T const* const (&in)[4], T* p, layout const& lay, mobius_options<T> const& opt) {
  constexpr char const* fn = mobius_fn;
  detail::check_layout(fn, lay, sizeof(T));
  bool const work = lay.n > 0 && lay.count > 0;
  for (int j = 0; j < 4; ++j) detail::check_pointer(fn, in[j], mobius_names[j], work);
  detail::check_pointer(fn, p, "p", work);
  auto const st = check_state(fn, lay, 1, "1", opt.init, opt.final_state);
  byte_span const sp = span_of(p, lay);
  detail::overlap_check const o{fn};
  for (int j = 0; j < 4; ++j) {
    byte_span const s = span_of(in[j], lay);
    o.in_place(p, sp, "p", in[j], s, mobius_names[j]);
    o.disjoint(st.final_state, "final_state", s, mobius_names[j]);
  }
  o.state(sp, "p", opt.init, st.init, opt.final_state, st.final_state);
  return st.values;
}

}  // namespace

// ------------------------------------------------------------ entry points --

template <int K, real_value T>
requires(K >= 2 && K <= 8) void matrix_chain(host const& ex, std::type_identity_t<T> const* M,
                                             std::type_identity_t<T> const* u, T* x, layout const& lay,
                                             chain_options<std::type_identity_t<T>> const& opt) {
  detail::check_threads(chain_fn, ex);
  std::int64_t const sv = check_matrix_chain<K, T>(M, u, x, lay, opt);
  if (lay.count == 0) return;
  if (lay.n == 0) return copy_state(opt.init, T(0), opt.final_state, sv);
  detail::matrix_chain_cpu<K, T>(M, u, x, detail::normalised_layout(lay), opt.init, opt.final_state,
                                 ex.threads);
}

template <int K, real_value T>
requires(K >= 2 && K <= 8) void matrix_chain(cuda const& ex, std::type_identity_t<T> const* M,
                                             std::type_identity_t<T> const* u, T* x, layout const& lay,
                                             chain_options<std::type_identity_t<T>> const& opt) {
  constexpr char const* fn = chain_fn;
  detail::require_cuda(fn);
  check_matrix_chain<K, T>(M, u, x, lay, opt);
  if (lay.count == 0) return;
  if (lay.n > 0) {
    detail::check_device_pointer(fn, M, "M");
    if (u) detail::check_device_pointer(fn, u, "u");
    if (x != u) detail::check_device_pointer(fn, x, "x");
  }
  detail::check_device_state(fn, opt.init, opt.final_state);
  detail::matrix_chain_cuda<K, T>(M, u, x, detail::normalised_layout(lay), opt.init, opt.final_state,
                                  ex.stream);
}

template <real_value T>
void linrec_order_k(host const& ex, std::span<std::type_identity_t<T> const> a,
                    std::type_identity_t<T> const* x, T* y, layout const& lay,
                    chain_options<std::type_identity_t<T>> const& opt) {
  detail::check_threads(order_k_fn, ex);
  std::int64_t const sv = check_order_k<T>(a, x, y, lay, opt);
  if (lay.count == 0) return;
  if (lay.n == 0) return copy_state(opt.init, T(0), opt.final_state, sv);
  detail::linrec_order_k_cpu<T>(a.data(), static_cast<std::int64_t>(a.size()), x, y,
                                detail::normalised_layout(lay), opt.init, opt.final_state, ex.threads);
}

// recur::cuda: the same checks, then the GPU's (order at most 8, device
// memory, a host coefficient array), then the LTI backend.
template <real_value T>
void linrec_order_k(cuda const& ex, std::span<std::type_identity_t<T> const> a,
                    std::type_identity_t<T> const* x, T* y, layout const& lay,
                    chain_options<std::type_identity_t<T>> const& opt) {
  constexpr char const* fn = order_k_fn;
  detail::require_cuda(fn);
  std::int64_t const k = static_cast<std::int64_t>(a.size());
  if (k > 0) detail::check_host_pointer(fn, a.data(), "a");
  check_order_k<T>(a, x, y, lay, opt);
  detail::check_lti_cuda_order(fn, k, "a.size()");
  if (lay.n > 0 && lay.count > 0) {
    detail::check_device_pointer(fn, x, "x");
    if (y != x) detail::check_device_pointer(fn, y, "y");
  }
  if (lay.count == 0) return;
  if (k > 0) detail::check_device_state(fn, opt.init, opt.final_state);  // order 0 has no state
  detail::linrec_order_k_cuda<T>(a.data(), k, x, y, detail::normalised_layout(lay), opt.init,
                                 k > 0 ? opt.final_state : nullptr, ex.stream);
}

template <real_value T>
void mobius_recurrence(host const& ex, std::type_identity_t<T> const* alpha,
                       std::type_identity_t<T> const* beta, std::type_identity_t<T> const* gamma,
                       std::type_identity_t<T> const* delta, T* p, layout const& lay,
                       mobius_options<std::type_identity_t<T>> const& opt) {
  detail::check_threads(mobius_fn, ex);
  std::int64_t const sv = check_mobius<T>({alpha, beta, gamma, delta}, p, lay, opt);
  if (lay.count == 0) return;
  if (lay.n == 0) return copy_state(opt.init, opt.init_value, opt.final_state, sv);
  detail::mobius_cpu<T>(alpha, beta, gamma, delta, p, detail::normalised_layout(lay), opt.init,
                        opt.init_value, opt.final_state, ex.threads);
}

template <real_value T>
void mobius_recurrence(cuda const& ex, std::type_identity_t<T> const* alpha,
                       std::type_identity_t<T> const* beta, std::type_identity_t<T> const* gamma,
                       std::type_identity_t<T> const* delta, T* p, layout const& lay,
                       mobius_options<std::type_identity_t<T>> const& opt) {
  constexpr char const* fn = mobius_fn;
  detail::require_cuda(fn);
  T const* const in[] = {alpha, beta, gamma, delta};
  check_mobius<T>(in, p, lay, opt);
  if (lay.count == 0) return;
  if (lay.n > 0) {
    for (int j = 0; j < 4; ++j) detail::check_device_pointer(fn, in[j], mobius_names[j]);
    detail::check_device_pointer(fn, p, "p");
  }
  detail::check_device_state(fn, opt.init, opt.final_state);
  detail::mobius_cuda<T>(alpha, beta, gamma, delta, p, detail::normalised_layout(lay), opt.init,
                         opt.init_value, opt.final_state, ex.stream);
}

#define RECUR_MATRIX_CHAIN(K)                                                                              \
  template void matrix_chain<K, float>(host const&, float const*, float const*, float*, layout const&,     \
                                       chain_options<float> const&);                                       \
  template void matrix_chain<K, double>(host const&, double const*, double const*, double*, layout const&, \
                                        chain_options<double> const&);                                     \
  template void matrix_chain<K, float>(cuda const&, float const*, float const*, float*, layout const&,     \
                                       chain_options<float> const&);                                       \
  template void matrix_chain<K, double>(cuda const&, double const*, double const*, double*, layout const&, \
                                        chain_options<double> const&);
RECUR_MATRIX_CHAIN(2)
RECUR_MATRIX_CHAIN(3)
RECUR_MATRIX_CHAIN(4)
RECUR_MATRIX_CHAIN(5)
RECUR_MATRIX_CHAIN(6)
RECUR_MATRIX_CHAIN(7)
RECUR_MATRIX_CHAIN(8)
#undef RECUR_MATRIX_CHAIN

template void linrec_order_k<float>(host const&, std::span<float const>, float const*, float*, layout const&,
                                    chain_options<float> const&);
template void linrec_order_k<double>(host const&, std::span<double const>, double const*, double*,
                                     layout const&, chain_options<double> const&);
template void linrec_order_k<float>(cuda const&, std::span<float const>, float const*, float*, layout const&,
                                    chain_options<float> const&);
template void linrec_order_k<double>(cuda const&, std::span<double const>, double const*, double*,
                                     layout const&, chain_options<double> const&);

template void mobius_recurrence<float>(host const&, float const*, float const*, float const*, float const*,
                                       float*, layout const&, mobius_options<float> const&);
template void mobius_recurrence<double>(host const&, double const*, double const*, double const*,
                                        double const*, double*, layout const&, mobius_options<double> const&);
template void mobius_recurrence<float>(cuda const&, float const*, float const*, float const*, float const*,
                                       float*, layout const&, mobius_options<float> const&);
template void mobius_recurrence<double>(cuda const&, double const*, double const*, double const*,
                                        double const*, double*, layout const&, mobius_options<double> const&);

}  // namespace recur
