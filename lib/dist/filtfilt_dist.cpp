// recur::dist::filtfilt and sosfiltfilt (include/recur/dist.hpp): the
// forward-backward filter over sequences split along their length, as two
// split filters (lti_dist.cpp) whose initial states come from the
// extensions at the two ends, filtered on the host.
//
// filtfilt filters [front extension, x, back extension] forward from
// zi * (its first value), then the result backward from zi * (its last
// value), and keeps the middle. Split over the ranks:
//   1. every rank checks the extension (padtype, padlen; the first and the
//      last rank must hold more than padlen samples, since the extensions
//      mirror their samples) and the coefficients (the steady state zi);
//      rank 0 reads x[0 .. padlen] of each sequence and filters the front
//      extension from zi * (its first value) on the host: the state
//      entering x; the last rank reads x[n-1-padlen .. n-1] (before
//      anything is written, so y may be x); the ranks agree;
//   2. the forward pass: the split filter of x into y from that state, its
//      final state brought to the last rank;
//   3. the last rank filters the back extension forward from that state,
//      then backward from zi * (its last filtered value) on the host: the
//      state entering y backward;
//   4. the backward pass: the split filter of y in place, in reverse, from
//      that state.
// Each pass is one split filter (two runs of the slice), so a rank reads
// and writes its slice four times each. Three agreements guard the call:
// the first (above) before anything is written; a failure in the forward
// pass (memory, CUDA) or between the passes is raised on every rank, y then
// holding the forward pass where it was written.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <memory>
#include <span>
#include <vector>

#include <mpi.h>

#include <fmt/format.h>

#include <recur/dist.hpp>
#include <recur/filter.hpp>
#include <recur/reference/lfilter.hpp>
#include "../detail/arg_check.hpp"
#include "../detail/cuda_support.hpp"
#include "../filtfilt_edge.hpp"
#include "../split_memory.hpp"
#include "agree.hpp"

namespace recur::dist {
namespace {

// A filter as the split filtfilt drives it: its state size and steady state,
// scipy's ntaps, and two runs: the one-device call on host memory (the
// extensions) and the split call on the executor's.
template <class T>
struct forward_backward {
  using run = std::function<void(T const* x, T* y, layout const&, T const* init, T* final_state, direction)>;
  char const* fn = nullptr;
  std::int64_t k = 0, ntaps = 0, coefficients = 0;
  std::function<std::vector<T>()> steady{};  // zi, checking the coefficients
  run on_host{}, split{};
};

// Columns j0 .. j0 + m - 1 of the layout (every sequence's element j) to
// the host, sequence-major: out[q * m + j].
template <class Executor, class T>
std::vector<T> columns(Executor const& ex, T const* x, layout const& lay, std::int64_t j0, std::int64_t m) {
  std::int64_t const count = lay.count;
  std::vector<T> cols(static_cast<std::size_t>(m * count)), out(cols.size());
  std::vector<recur::detail::split_column<T>> at;
  for (std::int64_t j = 0; j < m; ++j)
    at.push_back({const_cast<T*>(x) + lay.offset(j0 + j, 0), cols.data() + j * count});
  recur::detail::split_gather(ex, at.data(), at.size(), lay.batch_stride, count);
  for (std::int64_t q = 0; q < count; ++q)
    for (std::int64_t j = 0; j < m; ++j) out[q * m + j] = cols[j * count + q];
  return out;
}

// The states start(v) = zi * v per sequence.
template <class T>
std::vector<T> started(std::vector<T> const& zi, std::vector<T> const& v) {
  std::int64_t const k = std::int64_t(zi.size());
  std::vector<T> z(v.size() * zi.size());
  for (std::size_t q = 0; q < v.size(); ++q)
    for (std::int64_t i = 0; i < k; ++i) z[q * k + i] = zi[i] * v[q];
  return z;
}

template <class Executor, class T>
void split_filtfilt(communicator const& comm, Executor const& ex, forward_backward<T> const& f, T const* x,
                    T* y, layout const& given, filtfilt_options const& opt) {
  auto const me = detail::check_communicator(f.fn, comm.comm);
  bool const first = me.rank == 0, last = me.rank == me.size - 1;
  layout const lay = recur::detail::normalised_layout(given);
  std::int64_t const count = given.count > 0 ? given.count : 0, n = given.n, k = f.k;
  std::int64_t edge = 0;
  std::vector<T> zi, entering, tail;  // entering: rank 0's state before x; tail: the last rank's last samples
  std::shared_ptr<void> in, fin;      // executor memory: the entering state (rank 0), the final (last rank)
  auto facts = detail::batch_facts<T, Executor>(given.count);
  facts.set(3, static_cast<std::int64_t>(opt.padtype), "opt.padtype");
  facts.set(4, opt.padlen.value_or(-1), "opt.padlen");
  facts.set(5, f.coefficients, "the coefficients");
  detail::agree_after(f.fn, comm.comm, me, facts, [&] {
    zi = f.steady();
    edge = recur::detail::filtfilt_edge(f.fn, opt, f.ntaps, std::numeric_limits<std::int64_t>::max());
    if ((first || last) && n <= edge)
      throw invalid_argument(
          fmt::format("{}: this rank holds {} samples of each sequence, but the first and "
                      "the last rank must each hold more than padlen = {}",
                      f.fn, n, edge));
    recur::detail::check_layout(f.fn, given, sizeof(T));
    recur::detail::check_pointer(f.fn, x, "x", n > 0 && count > 0);
    if constexpr (std::is_same_v<Executor, cuda>)
      if (n > 0 && count > 0) recur::detail::check_device_pointer(f.fn, x, "x");
    if (count == 0) return;
    std::int64_t const m = edge + 1;
    if (last) {
      tail = columns(ex, x, lay, n - m, m);
      if (k > 0) fin = recur::detail::split_alloc(ex, sizeof(T) * std::size_t(count * k));
    }
    if (!first) return;
    std::vector<T> const head = columns(ex, x, lay, 0, m);
    std::vector<T> pad(static_cast<std::size_t>(edge * count)), start(static_cast<std::size_t>(count));
    for (std::int64_t q = 0; q < count; ++q) {
      T const* const h = head.data() + q * m;
      for (std::int64_t j = -edge; j < 0; ++j)
        pad[q * edge + j + edge] = reference::detail::filtfilt_extended(opt.padtype, h, m, 1, j);
      start[q] = edge > 0 ? pad[q * edge] : h[0];
    }
    entering = started(zi, start);
    if (edge > 0) {
      std::vector<T> out(pad.size());
      f.on_host(pad.data(), out.data(), layout::contiguous(edge, count), entering.data(), entering.data(),
                direction::forward);
    }
    in = recur::detail::split_upload(ex, entering.data(), entering.size());
  });
  if (count == 0) return;

  // The forward pass, its final state to the last rank; the back extension
  // on the last rank: forward from the final state, then backward from
  // zi * its last value.
  // Both run inside an agreement, so that a failure there (memory, CUDA)
  // is raised on every rank before the backward pass rather than leaving
  // the others waiting in it.
  std::vector<T> back;
  std::shared_ptr<void> b;
  detail::agree_after(f.fn, comm.comm, me, facts, [&] {
    // The forward pass, its final state to the last rank.
    f.split(x, y, given, static_cast<T const*>(in.get()), static_cast<T*>(fin.get()), direction::forward);
    if (!last) return;
    std::vector<T> state(static_cast<std::size_t>(count * k));
    if (k > 0) {
      recur::detail::split_column<T> col{static_cast<T*>(fin.get()), state.data()};
      recur::detail::split_gather(ex, &col, 1, 1, count * k);
    }
    std::int64_t const m = edge + 1;
    std::vector<T> pad(static_cast<std::size_t>(edge * count)), out(pad.size()),
        v(static_cast<std::size_t>(count));
    for (std::int64_t q = 0; q < count; ++q)
      for (std::int64_t t = 0; t < edge; ++t)
        pad[q * edge + t] =
            reference::detail::filtfilt_extended(opt.padtype, tail.data() + q * m, m, 1, m + t);
    if (edge > 0) {
      f.on_host(pad.data(), out.data(), layout::contiguous(edge, count), state.data(), nullptr,
                direction::forward);
      for (std::int64_t q = 0; q < count; ++q) v[q] = out[q * edge + edge - 1];
    } else {
      v = columns(ex, static_cast<T const*>(y), lay, n - 1, 1);
    }
    back = started(zi, v);
    if (edge > 0)
      f.on_host(out.data(), pad.data(), layout::contiguous(edge, count), back.data(), back.data(),
                direction::reverse);
    b = recur::detail::split_upload(ex, back.data(), back.size());
  });
  f.split(y, y, given, static_cast<T const*>(b.get()), nullptr, direction::reverse);
}

host one_thread() { return host{1}; }

// With recur::cuda the coefficients must be host memory (the one-device
// call's rule), checked before the steady state reads them.
template <class Executor, class T>
void host_coefficients(char const* fn, std::initializer_list<std::span<T const>> spans) {
  if constexpr (std::is_same_v<Executor, cuda>)
    for (auto const& c : spans)
      if (!c.empty()) recur::detail::check_host_pointer(fn, c.data(), "the coefficients");
}

}  // namespace

template <real_value T, class Executor>
void filtfilt(communicator const& comm, Executor const& ex, std::span<std::type_identity_t<T> const> b,
              std::span<std::type_identity_t<T> const> a, std::type_identity_t<T> const* x, T* y,
              layout const& lay, filtfilt_options const& opt) {
  forward_backward<T> f{.fn = "recur::dist::filtfilt"};
  f.k = b.empty() || a.empty() ? 0 : lfilter_order(std::int64_t(b.size()), std::int64_t(a.size()));
  f.ntaps = f.k + 1;
  f.coefficients = detail::coefficient_hash<Executor>(f.fn, b, detail::coefficient_hash<Executor>(f.fn, a));
  f.steady = [&] {
    host_coefficients<Executor>(f.fn, {b, a});
    return lfilter_zi<T>(b, a);
  };
  f.on_host = [&](T const* u, T* v, layout const& l, T const* i, T* z, direction d) {
    recur::lfilter<T>(one_thread(), b, a, u, v, l, {i, z, d});
  };
  f.split = [&](T const* u, T* v, layout const& l, T const* i, T* z, direction d) {
    dist::lfilter<T>(comm, ex, b, a, u, v, l, {i, z, d});
  };
  split_filtfilt(comm, ex, f, x, y, lay, opt);
}

template <real_value T, class Executor>
void sosfiltfilt(communicator const& comm, Executor const& ex, std::span<std::type_identity_t<T> const> sos,
                 std::type_identity_t<T> const* x, T* y, layout const& lay, filtfilt_options const& opt) {
  forward_backward<T> f{.fn = "recur::dist::sosfiltfilt"};
  f.k = 2 * std::int64_t(sos.size() / 6);
  f.ntaps = recur::detail::sections_ntaps(sos);
  f.coefficients = detail::coefficient_hash<Executor>(f.fn, sos, std::int64_t(sos.size()));
  f.steady = [&] {
    host_coefficients<Executor>(f.fn, {sos});
    return sosfilt_zi<T>(sos);
  };
  f.on_host = [&](T const* u, T* v, layout const& l, T const* i, T* z, direction d) {
    recur::sosfilt<T>(one_thread(), sos, u, v, l, {i, z, d});
  };
  f.split = [&](T const* u, T* v, layout const& l, T const* i, T* z, direction d) {
    dist::sosfilt<T>(comm, ex, sos, u, v, l, {i, z, d});
  };
  split_filtfilt(comm, ex, f, x, y, lay, opt);
}

#define RECUR_DIST_FILTFILT(E, T)                                                                     \
  template void filtfilt<T, E>(communicator const&, E const&, std::span<T const>, std::span<T const>, \
                               T const*, T*, layout const&, filtfilt_options const&);                 \
  template void sosfiltfilt<T, E>(communicator const&, E const&, std::span<T const>, T const*, T*,    \
                                  layout const&, filtfilt_options const&);
RECUR_DIST_FILTFILT(host, float)
RECUR_DIST_FILTFILT(host, double)
RECUR_DIST_FILTFILT(cuda, float)
RECUR_DIST_FILTFILT(cuda, double)
#undef RECUR_DIST_FILTFILT

}  // namespace recur::dist
