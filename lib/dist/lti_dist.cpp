// recur::dist's linear time-invariant filters and codecs (include/recur/dist.hpp):
// lfilter, sosfilt, linrec_order_k and the DPCM codecs split along their
// length, all through one routine, split_lti.
//
// A facility's state after a rank's slice is an affine map of the state
// before it: z_out = A^n z_in + c, with A the step's state matrix (the
// state after one zero sample from each unit state) and c the state after
// the slice from a zero state. The steps:
//   1. every rank runs its slice once into scratch (the one-device call,
//      with its checks; the entering rank from opt.init, so its c carries
//      the initial state and the initial state need not travel) and brings
//      c to the host: the call's final_state for the filters, the last k
//      samples of the output (decoding) or of the input (encoding, whose
//      state is its past inputs) for the codecs; y and final_state are
//      checked beside it;
//   2. the ranks agree (agree.hpp), then all-gather (n_r, c);
//   3. every rank folds z <- A^(n_r) z + c over the ranks in the call's
//      order (the same arithmetic on every rank, so the same bits) and runs
//      its slice again from its incoming state into the output; the final
//      z goes to opt.final_state where it is asked for.
// The fold's arithmetic (fold_value): long double for double data, double
// for float, and uint64_t for integer samples, whose arithmetic modulo 2^64
// is that of the samples modulo 2^bits.
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

#include <mpi.h>

#include <fmt/format.h>

#include <recur/chain.hpp>
#include <recur/dist.hpp>
#include <recur/filter.hpp>
#include "../detail/arg_check.hpp"
#include "../detail/cuda_support.hpp"
#include "../split_memory.hpp"
#include "agree.hpp"

namespace recur::dist {
namespace {

template <class S>
using fold_value = std::conditional_t<std::is_same_v<S, double>, long double,
                                      std::conditional_t<std::is_same_v<S, float>, double, std::uint64_t>>;

template <class V, class S>
V to_fold(S v) {
  if constexpr (std::is_floating_point_v<S>)
    return static_cast<V>(v);
  else
    return static_cast<V>(static_cast<std::int64_t>(v));  // modulo 2^64
}
template <class S, class V>
S from_fold(V v) {
  return static_cast<S>(v);  // rounded (floating point) or modulo 2^bits (integers)
}

// k x k row-major matrices in the fold's arithmetic.
template <class V>
std::vector<V> product(std::vector<V> const& x, std::vector<V> const& y, std::int64_t k) {
  std::vector<V> r(static_cast<std::size_t>(k * k), V(0));
  for (std::int64_t i = 0; i < k; ++i)
    for (std::int64_t l = 0; l < k; ++l) {
      V const xil = x[i * k + l];
      for (std::int64_t j = 0; j < k; ++j) r[i * k + j] += xil * y[l * k + j];
    }
  return r;
}
template <class V>
std::vector<V> power(std::vector<V> a, std::int64_t n, std::int64_t k) {
  std::vector<V> r(static_cast<std::size_t>(k * k), V(0));
  for (std::int64_t i = 0; i < k; ++i) r[i * k + i] = V(1);
  for (; n > 0; n >>= 1) {
    if (n & 1) r = product(r, a, k);
    if (n > 1) a = product(a, a, k);
  }
  return r;
}

// Where a facility's state after the slice is read.
enum class state_source { final_state, output_tail, input_tail };

// One split call: the facility's state size, step matrix and state, and the
// user's arrays (executor memory).
template <class S>
struct lti_call {
  char const* fn = nullptr;
  std::int64_t k = 0;     // state values per sequence
  std::vector<S> step{};  // A, k x k row-major (set inside the agreement: it may throw)
  state_source source = state_source::final_state;
  char const* in_name = "x";
  char const* out_name = "y";
  S const* in = nullptr;
  S* out = nullptr;
  layout lay{};
  direction dir = direction::forward;
  S const* init = nullptr;
  S* final_state = nullptr;
  std::int64_t elem = 1;  // values an element of in and out (matrix chains: K)
  // Where the map's linear part varies along the sequence (matrix chains):
  // each sequence's, count x k x k row-major, from products(scratch,
  // entering) after the first run (the entering rank's is not needed);
  // otherwise A^n.
  std::function<std::vector<S>(S* scratch, bool entering)> products{};
  S const* matrices = nullptr;  // an input the output must not overlap (the chain's M), elem * elem a element
};

// The output's and the final state's checks, which the first run (into
// scratch) does not make: pointers, overlaps, device memory.
template <class Executor, class S>
void check_outputs(lti_call<S> const& c, bool entering) {
  layout const& lay = c.lay;
  bool const work = lay.n > 0 && lay.count > 0;
  recur::detail::check_pointer(c.fn, c.out, c.out_name, work);
  recur::detail::check_pointer(c.fn, c.final_state, "opt.final_state", false);
  std::int64_t const values = recur::detail::state_size(c.fn, lay.count, c.k, "the state size", sizeof(S));
  std::int64_t const extent = work ? recur::detail::layout_extent(lay) : 0;
  auto span = [&](S const* p, std::int64_t per) {  // the bytes of per values an element
    return per == 1 ? recur::detail::span_of(p, lay) : recur::detail::span_of(p, extent * per);
  };
  auto const sx = span(c.in, c.elem), sy = span(c.out, c.elem);
  auto const si = recur::detail::span_of(c.init, values),
             sf = recur::detail::span_of<S>(c.final_state, values);
  recur::detail::overlap_check const o{c.fn};
  o.in_place(c.out, sy, c.out_name, c.in, sx, c.in_name);
  o.state(sy, c.out_name, c.init, si, c.final_state, sf);
  o.disjoint(sf, "final_state", sx, c.in_name);
  if (c.matrices) {
    o.disjoint(sy, c.out_name, span(c.matrices, c.elem * c.elem), "M");
    o.disjoint(sf, "final_state", span(c.matrices, c.elem * c.elem), "M");
  }
  if constexpr (std::is_same_v<Executor, cuda>) {
    if (work && c.out != c.in) recur::detail::check_device_pointer(c.fn, c.out, c.out_name);
    if (c.final_state && lay.count > 0 && c.k > 0)
      recur::detail::check_device_pointer(c.fn, c.final_state, "opt.final_state");
    if (entering && c.init && lay.count > 0 && c.k > 0)  // read by the tail (DPCM) even when n == 0
      recur::detail::check_device_pointer(c.fn, c.init, "opt.init");
  }
}

// The state after this rank's first run, count x k on the host: from the
// final state it wrote, or from the last k samples of `tail` (and, for a
// slice shorter than k, the initial state it ran from).
template <class Executor, class S>
std::vector<S> state_after(Executor const& ex, lti_call<S> const& c, S const* zf, S const* tail,
                           S const* init) {
  std::int64_t const count = c.lay.count, k = c.k, n = c.lay.n;
  std::vector<S> z(static_cast<std::size_t>(count * k), S(0));
  if (count == 0 || k == 0) return z;
  if (c.source == state_source::final_state) {
    recur::detail::split_column<S> col{const_cast<S*>(zf), z.data()};
    recur::detail::split_gather(ex, &col, 1, 1, count * k);
    return z;
  }
  layout const lay = recur::detail::normalised_layout(c.lay);
  std::int64_t const have = std::min(n, k);
  std::vector<S> cols(static_cast<std::size_t>(count * k), S(0)), before(init && have < k ? z.size() : 0);
  std::vector<recur::detail::split_column<S>> tails;
  for (std::int64_t j = 0; j < have; ++j)  // newest first
    tails.push_back({const_cast<S*>(tail) + lay.offset(n - 1 - j, 0), cols.data() + j * count});
  recur::detail::split_gather(ex, tails.data(), tails.size(), lay.batch_stride, count);
  if (!before.empty()) {
    recur::detail::split_column<S> col{const_cast<S*>(init), before.data()};
    recur::detail::split_gather(ex, &col, 1, 1, count * k);
  }
  for (std::int64_t q = 0; q < count; ++q)
    for (std::int64_t j = 0; j < k; ++j)
      z[q * k + j] = j < have ? cols[j * count + q] : before.empty() ? S(0) : before[q * k + j - have];
  return z;
}

// The split (above). step() returns A (making the facility's checks of the
// coefficients); run(init, final_state, out) runs the one-device call on
// this rank's slice, reading c.in.
template <class Executor, class S, class Step, class Run>
void split_lti(communicator const& comm, Executor const& ex, lti_call<S>& c, detail::call_facts facts,
               Step&& step, Run&& run) {
  using V = fold_value<S>;
  auto const me = detail::check_communicator(c.fn, comm.comm);
  bool const reverse = c.dir == direction::reverse;
  int const entry = reverse ? me.size - 1 : 0;
  bool const entering = me.rank == entry;
  std::int64_t const count = c.lay.count > 0 ? c.lay.count : 0;
  std::vector<V> mine, all;
  facts.set(6, c.k, "the state size");
  detail::agree_after(c.fn, comm.comm, me, facts, [&] {
    std::int64_t const k = c.k;
    std::shared_ptr<void> scratch, zf;
    S* first = nullptr;
    if (c.lay.n > 0 && count > 0) {  // the layout is checked by the run below before it is used
      recur::detail::check_layout(c.fn, c.lay, sizeof(S));
      scratch = recur::detail::split_alloc(
          ex, sizeof(S) * std::size_t(recur::detail::layout_extent(c.lay) * c.elem));
      first = static_cast<S*>(scratch.get());
    }
    if (c.source == state_source::final_state && count > 0 && k > 0)
      zf = recur::detail::split_alloc(ex, sizeof(S) * std::size_t(count * k));
    S* const zfp = static_cast<S*>(zf.get());
    run(entering ? c.init : nullptr, zfp, first);  // the one-device call's checks
    c.step = step();                               // reads the coefficients, checked above
    check_outputs<Executor>(c, entering);
    std::uint64_t const per = std::uint64_t(k) * (c.products ? std::uint64_t(k) + 1 : 1);
    if ((1 + std::uint64_t(count) * per) * sizeof(V) > std::uint64_t(std::numeric_limits<int>::max()))
      throw invalid_argument(
          fmt::format("{}: lay.count = {} sequences of {} state values are more than one "
                      "MPI_Allgather carries",
                      c.fn, c.lay.count, k));
    std::vector<S> const z = state_after(ex, c, zfp, c.source == state_source::input_tail ? c.in : first,
                                         entering ? c.init : nullptr);
    mine.assign(1, V(c.lay.n > 0 ? c.lay.n : 0));
    for (S v : z) mine.push_back(to_fold<V>(v));
    if (c.products)
      for (S v : c.products(first, entering)) mine.push_back(to_fold<V>(v));
    all.resize(mine.size() * std::size_t(me.size));
  });
  if (count == 0) return;
  std::int64_t const k = c.k, width = 1 + count * k * (c.products ? k + 1 : 1);
  int const bytes = static_cast<int>(sizeof(V) * std::size_t(width));
  MPI_Allgather(mine.data(), bytes, MPI_BYTE, all.data(), bytes, MPI_BYTE, comm.comm);

  std::vector<V> A(c.step.size());
  for (std::size_t i = 0; i < A.size(); ++i) A[i] = to_fold<V>(c.step[i]);
  std::vector<V> z(static_cast<std::size_t>(count * k), V(0)), in, next(static_cast<std::size_t>(k));
  for (int s = 0; s < me.size; ++s) {
    int const r = reverse ? me.size - 1 - s : s;
    V const* rec = all.data() + std::size_t(r) * std::size_t(width);
    if (r == me.rank) in = z;
    if (r == entry) {
      z.assign(rec + 1, rec + 1 + count * k);
      continue;
    }
    std::int64_t const n_r = static_cast<std::int64_t>(rec[0]);
    if (n_r == 0) continue;  // A^0 z + 0
    std::vector<V> const power_n = c.products ? std::vector<V>{} : power(A, n_r, k);
    for (std::int64_t q = 0; q < count; ++q) {
      V* const zq = z.data() + q * k;
      V const* const p = c.products ? rec + 1 + count * k + q * k * k : power_n.data();
      for (std::int64_t i = 0; i < k; ++i) {
        V acc = rec[1 + q * k + i];
        for (std::int64_t j = 0; j < k; ++j) acc += p[i * k + j] * zq[j];
        next[i] = acc;
      }
      std::copy(next.begin(), next.end(), zq);
    }
  }
  std::vector<S> in_s(in.size()), final_s(z.size());
  for (std::size_t i = 0; i < in.size(); ++i) in_s[i] = from_fold<S>(in[i]);
  for (std::size_t i = 0; i < z.size(); ++i) final_s[i] = from_fold<S>(z[i]);
  auto const incoming = entering ? nullptr : recur::detail::split_upload(ex, in_s.data(), in_s.size());
  run(entering ? c.init : static_cast<S const*>(incoming.get()), nullptr, c.out);
  if (c.final_state && k > 0) {  // after the run, which may read init == final_state
    recur::detail::split_column<S> col{c.final_state, final_s.data()};
    recur::detail::split_scatter(ex, &col, 1, 1, count * k);
  }
}

template <class Executor, class S>
detail::call_facts facts_of(layout const& lay, direction dir, std::int64_t coefficients) {
  auto f = detail::batch_facts<S, Executor>(lay.count);
  f.set(3, static_cast<std::int64_t>(dir), "opt.dir");
  f.set(4, coefficients, "the coefficients");
  return f;
}

// The k x k identity as k sequences' states, and A from the k final states
// of one zero sample from them (column j of A is the state after e_j).
template <class S, class OneStep>
std::vector<S> step_from(std::int64_t k, OneStep&& one_step) {
  std::size_t const kk = static_cast<std::size_t>(k * k);
  std::vector<S> eye(kk, S(0)), after(kk), zero(static_cast<std::size_t>(k), S(0)), y(zero.size());
  for (std::int64_t j = 0; j < k; ++j) eye[j * k + j] = S(1);
  if (k > 0) one_step(zero.data(), y.data(), layout::contiguous(1, k), eye.data(), after.data());
  std::vector<S> a(kk);
  for (std::int64_t j = 0; j < k; ++j)
    for (std::int64_t i = 0; i < k; ++i) a[i * k + j] = after[j * k + i];
  return a;
}

// The companion matrix of y_i = c_1 y_(i-1) + ... + c_k y_(i-k) on the
// state (y_(i-1), ..., y_(i-k)); with c zero, the shift of the past inputs.
template <class S, class C>
std::vector<S> companion(std::span<C const> c) {
  std::int64_t const k = static_cast<std::int64_t>(c.size());
  std::vector<S> a(static_cast<std::size_t>(k * k), S(0));
  for (std::int64_t j = 0; j < k; ++j) a[j] = static_cast<S>(c[j]);
  for (std::int64_t i = 1; i < k; ++i) a[i * k + i - 1] = S(1);
  return a;
}

host one_thread() { return host{1}; }

}  // namespace

template <real_value T, class Executor>
void lfilter(communicator const& comm, Executor const& ex, std::span<std::type_identity_t<T> const> b,
             std::span<std::type_identity_t<T> const> a, std::type_identity_t<T> const* x, T* y,
             layout const& lay, filter_options<std::type_identity_t<T>> const& opt) {
  lti_call<T> c{.fn = "recur::dist::lfilter"};
  c.k = b.empty() || a.empty() ? 0 : lfilter_order(std::int64_t(b.size()), std::int64_t(a.size()));
  c.in = x, c.out = y, c.lay = lay, c.dir = opt.dir, c.init = opt.init, c.final_state = opt.final_state;
  split_lti(
      comm, ex, c,
      facts_of<Executor, T>(
          lay, opt.dir,
          detail::coefficient_hash<Executor>(c.fn, b, detail::coefficient_hash<Executor>(c.fn, a))),
      [&] {
        return step_from<T>(c.k, [&](T const* z, T* o, layout const& l, T const* i, T* f) {
          recur::lfilter<T>(one_thread(), b, a, z, o, l, {i, f});
        });
      },
      [&](T const* init, T* zf, T* out) {
        recur::lfilter<T>(ex, b, a, x, out, lay, {init, zf, opt.dir});
      });
}

template <real_value T, class Executor>
void sosfilt(communicator const& comm, Executor const& ex, std::span<std::type_identity_t<T> const> sos,
             std::type_identity_t<T> const* x, T* y, layout const& lay,
             filter_options<std::type_identity_t<T>> const& opt) {
  lti_call<T> c{.fn = "recur::dist::sosfilt"};
  c.k = 2 * std::int64_t(sos.size() / 6);
  c.in = x, c.out = y, c.lay = lay, c.dir = opt.dir, c.init = opt.init, c.final_state = opt.final_state;
  split_lti(
      comm, ex, c,
      facts_of<Executor, T>(lay, opt.dir,
                            detail::coefficient_hash<Executor>(c.fn, sos, std::int64_t(sos.size()))),
      [&] {
        if (sos.size() % 6 != 0 || sos.empty())  // the facility's message
          recur::sosfilt<T>(one_thread(), sos, nullptr, nullptr, layout::contiguous(0, 0));
        return step_from<T>(c.k, [&](T const* z, T* o, layout const& l, T const* i, T* f) {
          recur::sosfilt<T>(one_thread(), sos, z, o, l, {i, f});
        });
      },
      [&](T const* init, T* zf, T* out) {
        recur::sosfilt<T>(ex, sos, x, out, lay, {init, zf, opt.dir});
      });
}

template <real_value T, class Executor>
void linrec_order_k(communicator const& comm, Executor const& ex, std::span<std::type_identity_t<T> const> a,
                    std::type_identity_t<T> const* x, T* y, layout const& lay,
                    chain_options<std::type_identity_t<T>> const& opt) {
  lti_call<T> c{.fn = "recur::dist::linrec_order_k"};
  c.k = std::int64_t(a.size());
  c.in = x, c.out = y, c.lay = lay, c.init = opt.init, c.final_state = opt.final_state;
  split_lti(
      comm, ex, c,
      facts_of<Executor, T>(lay, direction::forward, detail::coefficient_hash<Executor>(c.fn, a)),
      [&] {
        return step_from<T>(c.k, [&](T const* z, T* o, layout const& l, T const* i, T* f) {
          recur::linrec_order_k<T>(one_thread(), a, z, o, l, {i, f});
        });
      },
      [&](T const* init, T* zf, T* out) {
        recur::linrec_order_k<T>(ex, a, x, out, lay, {init, zf});
      });
}

template <int K, real_value T, class Executor>
requires(K >= 2 && K <= 8) void matrix_chain(communicator const& comm, Executor const& ex,
                                             std::type_identity_t<T> const* M,
                                             std::type_identity_t<T> const* u, T* x, layout const& lay,
                                             chain_options<std::type_identity_t<T>> const& opt) {
  lti_call<T> c{.fn = "recur::dist::matrix_chain"};
  c.k = K, c.elem = K, c.matrices = M;
  c.in = u, c.in_name = "u", c.out = x, c.out_name = "x";
  c.lay = lay, c.init = opt.init, c.final_state = opt.final_state;
  // Each sequence's product M_(n-1) ... M_0: its column j the final state
  // from e_j with u = 0, one run of the chain a column.
  c.products = [&](T* scratch, bool entering) {
    std::int64_t const count = lay.count, set = count * K;  // one set: every sequence's K-vector
    std::vector<T> p(static_cast<std::size_t>(set * K), T(0)), units(p.size(), T(0));
    if (entering || count == 0) return p;
    for (int j = 0; j < K; ++j)  // set j: e_j for every sequence
      for (std::int64_t q = 0; q < count; ++q) units[(j * count + q) * K + j] = T(1);
    auto const from = recur::detail::split_upload(ex, units.data(), units.size());
    auto const to = recur::detail::split_alloc(ex, sizeof(T) * units.size());
    T* const f = static_cast<T*>(from.get());
    T* const t = static_cast<T*>(to.get());
    for (int j = 0; j < K; ++j)
      recur::matrix_chain<K, T>(ex, M, nullptr, scratch, lay, {f + j * set, t + j * set});
    recur::detail::split_column<T> out{t, units.data()};
    recur::detail::split_gather(ex, &out, 1, 1, set * K);  // one wait for the K runs
    for (int j = 0; j < K; ++j)
      for (std::int64_t q = 0; q < count; ++q)
        for (int i = 0; i < K; ++i) p[(q * K + i) * K + j] = units[(j * count + q) * K + i];
    return p;
  };
  split_lti(
      comm, ex, c, facts_of<Executor, T>(lay, direction::forward, K), [] { return std::vector<T>{}; },
      [&](T const* init, T* zf, T* out) {
        recur::matrix_chain<K, T>(ex, M, u, out, lay, {init, zf});
      });
}

namespace {

// The DPCM codecs: the state is the k samples before, newest first, read
// from the output's tail (decoding) or the input's (encoding); `one` runs
// the one-device codec on (in, out, lay, init). A is the predictor's
// companion matrix (decoding) or the shift (encoding).
template <class S, class C, class Executor, class One>
void split_dpcm(communicator const& comm, Executor const& ex, bool encode, std::span<C const> coef,
                std::int64_t extra, S const* in, S* out, layout const& lay, S const* init, One&& one) {
  lti_call<S> c{.fn = encode ? "recur::dist::dpcm_encode" : "recur::dist::dpcm_decode"};
  c.k = std::int64_t(coef.size());
  c.source = encode ? state_source::input_tail : state_source::output_tail;
  c.in_name = encode ? "x" : "e";
  c.out_name = encode ? "e" : "x";
  c.in = in, c.out = out, c.lay = lay, c.init = init;
  split_lti(
      comm, ex, c,
      facts_of<Executor, S>(lay, direction::forward, detail::coefficient_hash<Executor>(c.fn, coef, extra)),
      [&] {
        std::vector<C> const zero(coef.size(), C(0));
        return encode ? companion<S>(std::span<C const>(zero)) : companion<S>(coef);
      },
      [&](S const* i, S*, S* o) { one(o, i); });
}

}  // namespace

template <real_value T, class Executor>
void dpcm_encode(communicator const& comm, Executor const& ex, std::span<std::type_identity_t<T> const> c,
                 std::type_identity_t<T> const* x, T* e, layout const& lay,
                 dpcm_options<std::type_identity_t<T>> const& opt) {
  split_dpcm<T>(comm, ex, true, c, 0, x, e, lay, opt.init,
                [&](T* o, T const* i) { recur::dpcm_encode<T>(ex, c, x, o, lay, {i}); });
}
template <real_value T, class Executor>
void dpcm_decode(communicator const& comm, Executor const& ex, std::span<std::type_identity_t<T> const> c,
                 std::type_identity_t<T> const* e, T* x, layout const& lay,
                 dpcm_options<std::type_identity_t<T>> const& opt) {
  split_dpcm<T>(comm, ex, false, c, 0, e, x, lay, opt.init,
                [&](T* o, T const* i) { recur::dpcm_decode<T>(ex, c, e, o, lay, {i}); });
}
template <dpcm_sample S, class Executor>
void dpcm_encode(communicator const& comm, Executor const& ex, std::span<std::int64_t const> c, int shift,
                 std::type_identity_t<S> const* x, S* e, layout const& lay,
                 dpcm_options<std::type_identity_t<S>> const& opt) {
  split_dpcm<S>(comm, ex, true, c, shift, x, e, lay, opt.init,
                [&](S* o, S const* i) { recur::dpcm_encode<S>(ex, c, shift, x, o, lay, {i}); });
}
template <dpcm_sample S, class Executor>
void dpcm_decode(communicator const& comm, Executor const& ex, std::span<std::int64_t const> c, int shift,
                 std::type_identity_t<S> const* e, S* x, layout const& lay,
                 dpcm_options<std::type_identity_t<S>> const& opt) {
  split_dpcm<S>(comm, ex, false, c, shift, e, x, lay, opt.init, [&](S* o, S const* i) {
    if (shift != 0)  // in the first run, inside the agreement
      throw invalid_argument(
          fmt::format("recur::dist::dpcm_decode: shift = {}: decoding with a shift is not "
                      "linear (its floor), so it cannot be split across ranks; use shift 0",
                      shift));
    recur::dpcm_decode<S>(ex, c, shift, e, o, lay, {i});
  });
}

#define RECUR_DIST_LTI(E, T)                                                                          \
  template void lfilter<T, E>(communicator const&, E const&, std::span<T const>, std::span<T const>,  \
                              T const*, T*, layout const&, filter_options<T> const&);                 \
  template void sosfilt<T, E>(communicator const&, E const&, std::span<T const>, T const*, T*,        \
                              layout const&, filter_options<T> const&);                               \
  template void linrec_order_k<T, E>(communicator const&, E const&, std::span<T const>, T const*, T*, \
                                     layout const&, chain_options<T> const&);                         \
  template void dpcm_encode<T, E>(communicator const&, E const&, std::span<T const>, T const*, T*,    \
                                  layout const&, dpcm_options<T> const&);                             \
  template void dpcm_decode<T, E>(communicator const&, E const&, std::span<T const>, T const*, T*,    \
                                  layout const&, dpcm_options<T> const&);
#define RECUR_DIST_DPCM_INT(E, S)                                                                    \
  template void dpcm_encode<S, E>(communicator const&, E const&, std::span<std::int64_t const>, int, \
                                  S const*, S*, layout const&, dpcm_options<S> const&);              \
  template void dpcm_decode<S, E>(communicator const&, E const&, std::span<std::int64_t const>, int, \
                                  S const*, S*, layout const&, dpcm_options<S> const&);
RECUR_DIST_LTI(host, float)
RECUR_DIST_LTI(host, double)
RECUR_DIST_LTI(cuda, float)
RECUR_DIST_LTI(cuda, double)
RECUR_DIST_DPCM_INT(host, std::int16_t)
RECUR_DIST_DPCM_INT(host, std::int32_t)
RECUR_DIST_DPCM_INT(host, std::uint8_t)
RECUR_DIST_DPCM_INT(cuda, std::int16_t)
RECUR_DIST_DPCM_INT(cuda, std::int32_t)
RECUR_DIST_DPCM_INT(cuda, std::uint8_t)
#define RECUR_DIST_CHAIN(E, K, T)                                                                           \
  template void matrix_chain<K, T, E>(communicator const&, E const&, T const*, T const*, T*, layout const&, \
                                      chain_options<T> const&);
#define RECUR_DIST_CHAINS(E, T) \
  RECUR_DIST_CHAIN(E, 2, T)     \
  RECUR_DIST_CHAIN(E, 3, T)     \
  RECUR_DIST_CHAIN(E, 4, T)     \
  RECUR_DIST_CHAIN(E, 5, T)     \
  RECUR_DIST_CHAIN(E, 6, T)     \
  RECUR_DIST_CHAIN(E, 7, T)     \
  RECUR_DIST_CHAIN(E, 8, T)
RECUR_DIST_CHAINS(host, float)
RECUR_DIST_CHAINS(host, double)
RECUR_DIST_CHAINS(cuda, float)
RECUR_DIST_CHAINS(cuda, double)
#undef RECUR_DIST_CHAINS
#undef RECUR_DIST_CHAIN
#undef RECUR_DIST_LTI
#undef RECUR_DIST_DPCM_INT

}  // namespace recur::dist
