// Host API of the IIR filters (lfilter, lfilter_zi, lfiltic, sosfilt,
// sosfilt_zi, filtfilt, sosfiltfilt) and the DPCM codecs: every argument
// checked before anything is written, the reverse direction as a mirrored
// view, then the backend (filter_backends.hpp): the references' arithmetic
// per sequence over OpenMP threads (lib/cpu/filter_cpu.cpp), or, with
// recur::cuda, the GPU's own checks (order at most 8, device memory,
// coefficients on the host) and the CUDA backends (lib/cuda/).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <recur/filter.hpp>
#include <recur/reference/lfilter.hpp>
#include "detail/arg_check.hpp"
#include "detail/cuda_support.hpp"
#include "filter_backends.hpp"
#include "filtfilt_edge.hpp"

namespace recur {
namespace {

using detail::byte_span;
using detail::span_of;

// ------------------------------------------------------------------ checks --

// b and a checked and normalised by a[0] (the reference's normalisation).
template <class T>
reference::detail::normalised_filter<T> checked_filter(char const* fn, std::span<T const> b,
                                                       std::span<T const> a) {
  if (b.empty()) detail::bad_argument(fn, "b is empty");
  if (a.empty()) detail::bad_argument(fn, "a is empty");
  detail::check_pointer(fn, b.data(), "b", true);
  detail::check_pointer(fn, a.data(), "a", true);
  detail::check_finite(fn, "b", b.data(), static_cast<std::int64_t>(b.size()));
  detail::check_finite(fn, "a", a.data(), static_cast<std::int64_t>(a.size()));
  if (a[0] == T(0)) detail::bad_argument(fn, "a[0] = 0: the filter cannot be normalised");
  auto f = reference::detail::normalise<T>(fn, b, a);
  for (std::size_t j = 0; j < b.size(); ++j)
    if (!std::isfinite(f.b[j]))
      detail::bad_argument(fn, fmt::format("b[{}] / a[0] = {} / {} is not finite", j, b[j], a[0]));
  for (std::size_t j = 0; j < a.size(); ++j)
    if (!std::isfinite(f.a[j]))
      detail::bad_argument(fn, fmt::format("a[{}] / a[0] = {} / {} is not finite", j, a[j], a[0]));
  return f;
}

// Sections of scipy's sos array checked and normalised, flattened: section j's
// b at b[3 j], its a at a[3 j].
template <class T>
struct normalised_sections {
  std::vector<T> b, a;
  std::int64_t count() const { return static_cast<std::int64_t>(b.size() / 3); }
};

template <class T>
normalised_sections<T> checked_sections(char const* fn, std::span<T const> sos) {
  if (sos.empty() || sos.size() % 6 != 0)
    detail::bad_argument(fn,
                         fmt::format("sos has {} values, not a positive multiple of 6 (n_sections rows of "
                                     "b0 b1 b2 a0 a1 a2)",
                                     sos.size()));
  detail::check_pointer(fn, sos.data(), "sos", true);
  std::int64_t const ns = static_cast<std::int64_t>(sos.size() / 6);
  for (std::int64_t j = 0; j < ns; ++j)
    for (int c = 0; c < 6; ++c)
      if (!std::isfinite(sos[6 * j + c]))
        detail::bad_argument(fn, fmt::format("sos[{}][{}] = {} is not finite", j, c, sos[6 * j + c]));
  normalised_sections<T> s{std::vector<T>(static_cast<std::size_t>(3 * ns)),
                           std::vector<T>(static_cast<std::size_t>(3 * ns))};
  for (std::int64_t j = 0; j < ns; ++j) {
    T const a0 = sos[6 * j + 3];
    if (a0 == T(0))
      detail::bad_argument(
          fn, fmt::format("sos[{}][3] = 0 (a0 of section {}): the section cannot be normalised", j, j));
    auto const f = reference::detail::normalise<T>(fn, sos.subspan(6 * j, 3), sos.subspan(6 * j + 3, 3));
    for (int c = 0; c < 3; ++c) {
      if (!std::isfinite(f.b[c]) || !std::isfinite(f.a[c]))
        detail::bad_argument(fn, fmt::format("section {} divided by a0 = {} is not finite", j, a0));
      s.b[3 * j + c] = f.b[c];
      s.a[3 * j + c] = f.a[c];
    }
  }
  return s;
}

// The checks every filter call shares once its coefficients are known:
// layout, pointers, state pointers, overlaps. `per_sequence` is the state
// size (`what`); `coeffs` are the caller's coefficient arrays (outputs must
// not overlap them either).
template <class T>
void check_filter_call(char const* fn, T const* x, T* y, layout const& lay, filter_options<T> const& opt,
                       std::int64_t per_sequence, char const* what,
                       std::initializer_list<std::pair<std::span<T const>, char const*>> coeffs) {
  detail::check_layout(fn, lay, sizeof(T));
  bool const work = lay.n > 0 && lay.count > 0;
  detail::check_pointer(fn, x, "x", work);
  detail::check_pointer(fn, y, "y", work);
  detail::check_pointer(fn, opt.init, "opt.init", false);
  detail::check_pointer(fn, opt.final_state, "opt.final_state", false);
  if (opt.dir != direction::forward && opt.dir != direction::reverse)
    detail::bad_argument(fn,
                         fmt::format("opt.dir = {} is not forward or reverse", static_cast<int>(opt.dir)));
  std::int64_t const values = detail::state_size(fn, lay.count, per_sequence, what, sizeof(T));
  byte_span const sx = span_of(x, lay), sy = span_of<T>(y, lay);
  byte_span const si = span_of(opt.init, values), sf = span_of<T>(opt.final_state, values);
  detail::overlap_check const o{fn};
  o.in_place(y, sy, "y", x, sx, "x");
  o.state(sy, "y", opt.init, si, opt.final_state, sf);
  o.disjoint(sf, "final_state", sx, "x");
  for (auto const& [c, name] : coeffs) {
    byte_span const sc = span_of(c.data(), static_cast<std::int64_t>(c.size()));
    o.disjoint(sy, "y", sc, name);
    o.disjoint(sf, "final_state", sc, name);
  }
}

// The batch of a checked filter call as the backends run it: the layout
// normalised and, for direction::reverse, mirrored (element i of the view is
// element n - 1 - i: x and y moved to element n - 1, the element stride
// negated), as linrec runs its reverse direction.
template <class T>
struct filter_view {
  T const* x;
  T* y;
  layout lay;
};

template <class T>
filter_view<T> view_of(T const* x, T* y, layout const& lay, direction dir) {
  filter_view<T> v{x, y, detail::normalised_layout(lay)};
  if (dir == direction::reverse && v.lay.n > 0 && v.lay.count > 0) {
    std::int64_t const last = (v.lay.n - 1) * v.lay.element_stride;
    v.x += last;
    v.y += last;
    v.lay.element_stride = -v.lay.element_stride;
  }
  return v;
}

// The arrays of a recur::cuda filter call: x, y and the state (where the
// filter has one) device memory.
template <class T>
void check_device_arrays(char const* fn, T const* x, T* y, layout const& lay, T const* init,
                         T const* final_state, std::int64_t order) {
  if (lay.n > 0 && lay.count > 0) {
    detail::check_device_pointer(fn, x, "x");
    if (y != x) detail::check_device_pointer(fn, y, "y");
  }
  if (lay.count > 0 && order > 0) detail::check_device_state(fn, init, final_state);
}

void check_integer_predictor(char const* fn, std::span<std::int64_t const> c, int shift) {
  if (shift < 0 || shift > 62) detail::bad_argument(fn, fmt::format("shift = {} is outside [0, 62]", shift));
  if (!c.empty()) detail::check_pointer(fn, c.data(), "c", true);
  std::uint64_t total = 0;
  for (std::size_t j = 0; j < c.size(); ++j) {
    std::uint64_t const m =
        c[j] < 0 ? 0 - static_cast<std::uint64_t>(c[j]) : static_cast<std::uint64_t>(c[j]);
    if (m > (std::uint64_t{1} << 31) || (total += m) > (std::uint64_t{1} << 31))
      detail::bad_argument(
          fn, fmt::format("sum |c_j| exceeds 2^31 (at c[{}] = {}): the int64 prediction would not "
                          "be exact",
                          j, c[j]));
  }
}

template <class T>
void check_float_predictor(char const* fn, std::span<T const> c) {
  if (!c.empty()) detail::check_pointer(fn, c.data(), "c", true);
  detail::check_finite(fn, "c", c.data(), static_cast<std::int64_t>(c.size()));
}

// How a DPCM call names its arrays: encode reads x and writes e, decode the
// reverse.
struct dpcm_names {
  char const* fn;
  char const* in;
  char const* out;
};
constexpr dpcm_names encode_names{"recur::dpcm_encode", "x", "e"};
constexpr dpcm_names decode_names{"recur::dpcm_decode", "e", "x"};

// Layout, pointers, init, overlaps; the coefficients are checked by the
// caller. C is the coefficients' element type.
template <class S, class C>
void check_dpcm_call(dpcm_names const& nm, std::span<C const> c, S const* in, S* out, layout const& lay,
                     dpcm_options<S> const& opt) {
  detail::check_layout(nm.fn, lay, sizeof(S));
  bool const work = lay.n > 0 && lay.count > 0;
  detail::check_pointer(nm.fn, in, nm.in, work);
  detail::check_pointer(nm.fn, out, nm.out, work);
  detail::check_pointer(nm.fn, opt.init, "opt.init", false);
  std::int64_t const k = static_cast<std::int64_t>(c.size());
  std::int64_t const values = detail::state_size(nm.fn, lay.count, k, "order", sizeof(S));
  byte_span const si = span_of(in, lay), so = span_of<S>(out, lay);
  detail::overlap_check const o{nm.fn};
  o.in_place(out, so, nm.out, in, si, nm.in);
  o.disjoint(so, nm.out, span_of(opt.init, values), "init");
  o.disjoint(so, nm.out, span_of(c.data(), k), "c");
}

// recur::cuda: the GPU's checks after the host's (order at most 8, device
// memory); true when there is work for the backend.
template <class S>
bool check_dpcm_cuda(dpcm_names const& nm, std::int64_t k, S const* in, S* out, layout const& lay,
                     dpcm_options<S> const& opt) {
  detail::check_lti_cuda_order(nm.fn, k, "c.size()");
  if (lay.n == 0 || lay.count == 0) return false;
  detail::check_device_pointer(nm.fn, in, nm.in);
  if (out != in) detail::check_device_pointer(nm.fn, out, nm.out);
  if (opt.init) detail::check_device_pointer(nm.fn, opt.init, "opt.init");
  return true;
}

// scipy.signal.lfilter_zi of checked coefficients; no steady state (a pole
// at z = 1) is an invalid_argument of `fn` (`where` names the section).
template <class T>
std::vector<T> steady_state(char const* fn, std::string const& where, std::span<T const> b,
                            std::span<T const> a) {
  try {
    return reference::lfilter_zi<T>(b, a);
  } catch (invalid_argument const& e) {
    // The one failure left: no steady state. Keep the reason, name this entry point.
    std::string what = e.what();
    std::string const prefix = "recur::reference::lfilter_zi: ";
    if (what.rfind(prefix, 0) == 0) what.erase(0, prefix.size());
    detail::bad_argument(fn, where + what);
  }
}

// scipy.signal.sosfilt_zi of checked sections: each section's lfilter_zi
// scaled by the product of the DC gains (sum(b) / sum(a), of the rows as
// given) of the sections before it.
template <class T>
std::vector<T> sections_steady_state(char const* fn, std::span<T const> sos) {
  std::int64_t const ns = static_cast<std::int64_t>(sos.size() / 6);
  std::vector<T> zi(static_cast<std::size_t>(2 * ns));
  T scale = T(1);
  for (std::int64_t j = 0; j < ns; ++j) {
    auto const b = sos.subspan(6 * j, 3), a = sos.subspan(6 * j + 3, 3);
    auto const z = steady_state<T>(fn, fmt::format("section {}: ", j), b, a);
    zi[2 * j] = scale * z[0];
    zi[2 * j + 1] = scale * z[1];
    scale *= (b[0] + b[1] + b[2]) / (a[0] + a[1] + a[2]);
  }
  return zi;
}

// ------------------------------------------------------------------ calls --

constexpr char const* lfilter_fn = "recur::lfilter";
constexpr char const* sosfilt_fn = "recur::sosfilt";
constexpr char const* lfilter_what = "the order max(len(a), len(b)) - 1";
constexpr char const* sosfilt_what = "2 n_sections";

template <class T>
void dpcm_float_host(host const& ex, bool encode, std::span<T const> c, T const* in, T* out,
                     layout const& lay, dpcm_options<T> const& opt) {
  dpcm_names const& nm = encode ? encode_names : decode_names;
  detail::check_threads(nm.fn, ex);
  check_float_predictor(nm.fn, c);
  check_dpcm_call<T, T>(nm, c, in, out, lay, opt);
  if (lay.n == 0 || lay.count == 0) return;
  detail::dpcm_float_cpu<T>(encode, c, in, out, detail::normalised_layout(lay), opt.init, ex.threads);
}

template <class T>
void dpcm_float_cuda(cuda const& ex, bool encode, std::span<T const> c, T const* in, T* out,
                     layout const& lay, dpcm_options<T> const& opt) {
  dpcm_names const& nm = encode ? encode_names : decode_names;
  detail::require_cuda(nm.fn);
  if (!c.empty()) detail::check_host_pointer(nm.fn, c.data(), "c");
  check_float_predictor(nm.fn, c);
  check_dpcm_call<T, T>(nm, c, in, out, lay, opt);
  std::int64_t const k = static_cast<std::int64_t>(c.size());
  if (!check_dpcm_cuda(nm, k, in, out, lay, opt)) return;
  detail::dpcm_float_cuda<T>(encode, c.data(), k, in, out, detail::normalised_layout(lay), opt.init,
                             ex.stream);
}

template <class S>
void dpcm_int_host(host const& ex, bool encode, std::span<std::int64_t const> c, int shift, S const* in,
                   S* out, layout const& lay, dpcm_options<S> const& opt) {
  dpcm_names const& nm = encode ? encode_names : decode_names;
  detail::check_threads(nm.fn, ex);
  check_integer_predictor(nm.fn, c, shift);
  check_dpcm_call<S, std::int64_t>(nm, c, in, out, lay, opt);
  if (lay.n == 0 || lay.count == 0) return;
  detail::dpcm_int_cpu<S>(encode, c, shift, in, out, detail::normalised_layout(lay), opt.init, ex.threads);
}

template <class S>
void dpcm_int_cuda(cuda const& ex, bool encode, std::span<std::int64_t const> c, int shift, S const* in,
                   S* out, layout const& lay, dpcm_options<S> const& opt) {
  dpcm_names const& nm = encode ? encode_names : decode_names;
  detail::require_cuda(nm.fn);
  if (!c.empty()) detail::check_host_pointer(nm.fn, c.data(), "c");
  check_integer_predictor(nm.fn, c, shift);
  check_dpcm_call<S, std::int64_t>(nm, c, in, out, lay, opt);
  std::int64_t const k = static_cast<std::int64_t>(c.size());
  if (!check_dpcm_cuda(nm, k, in, out, lay, opt)) return;
  detail::dpcm_int_cuda<S>(encode, c.data(), k, shift, in, out, detail::normalised_layout(lay), opt.init,
                           ex.stream);
}

}  // namespace

// ------------------------------------------------------------ entry points --

template <real_value T>
void lfilter(host const& ex, std::span<std::type_identity_t<T> const> b,
             std::span<std::type_identity_t<T> const> a, std::type_identity_t<T> const* x, T* y,
             layout const& lay, filter_options<std::type_identity_t<T>> const& opt) {
  constexpr char const* fn = lfilter_fn;
  detail::check_threads(fn, ex);
  auto const f = checked_filter<T>(fn, b, a);
  check_filter_call<T>(fn, x, y, lay, opt, f.order(), lfilter_what, {{b, "b"}, {a, "a"}});
  if (lay.count == 0) return;
  auto const v = view_of(x, y, lay, opt.dir);
  detail::df2t_cpu<T>(f.b.data(), f.a.data(), 1, f.order(), v.x, v.y, v.lay, opt.init, opt.final_state,
                      ex.threads);
}

// recur::cuda: the host's checks (the same errors, nothing written on error),
// then the GPU's: an order it implements, coefficients the host can read
// (they are checked and normalised here), device-accessible x, y and state.
template <real_value T>
void lfilter(cuda const& ex, std::span<std::type_identity_t<T> const> b,
             std::span<std::type_identity_t<T> const> a, std::type_identity_t<T> const* x, T* y,
             layout const& lay, filter_options<std::type_identity_t<T>> const& opt) {
  constexpr char const* fn = lfilter_fn;
  detail::require_cuda(fn);
  // b and a are read on the host: device memory there would fault.
  if (!b.empty()) detail::check_host_pointer(fn, b.data(), "b");
  if (!a.empty()) detail::check_host_pointer(fn, a.data(), "a");
  auto const f = checked_filter<T>(fn, b, a);
  std::int64_t const m = f.order();
  detail::check_lti_cuda_order(fn, m, "max(len(a), len(b)) - 1");
  check_filter_call<T>(fn, x, y, lay, opt, m, lfilter_what, {{b, "b"}, {a, "a"}});
  check_device_arrays<T>(fn, x, y, lay, opt.init, opt.final_state, m);  // order 0 has no state
  if (lay.count == 0) return;
  auto const v = view_of(x, y, lay, opt.dir);
  detail::lfilter_cuda<T>(b.data(), static_cast<std::int64_t>(b.size()), a.data(),
                          static_cast<std::int64_t>(a.size()), v.x, v.y, v.lay, opt.init,
                          m > 0 ? opt.final_state : nullptr, ex.stream);
}

template <real_value T>
std::vector<T> lfilter_zi(std::span<T const> b, std::span<T const> a) {
  constexpr char const* fn = "recur::lfilter_zi";
  checked_filter<T>(fn, b, a);
  return steady_state<T>(fn, "", b, a);
}

template <real_value T>
std::vector<T> lfiltic(std::span<T const> b, std::span<T const> a, std::span<T const> y,
                       std::span<T const> x) {
  constexpr char const* fn = "recur::lfiltic";
  checked_filter<T>(fn, b, a);
  if (!y.empty()) detail::check_pointer(fn, y.data(), "y", true);
  if (!x.empty()) detail::check_pointer(fn, x.data(), "x", true);
  detail::check_finite(fn, "y", y.data(), static_cast<std::int64_t>(y.size()));
  detail::check_finite(fn, "x", x.data(), static_cast<std::int64_t>(x.size()));
  // scipy's arithmetic: zi[m] = sum_{j > m} b[j] x[j-m-1] - sum_{j > m} a[j]
  // y[j-m-1], past values beyond those given zero, then divided by a[0].
  std::size_t const nb = b.size(), na = a.size();
  std::vector<T> zi(std::max(nb, na) - 1, T(0));
  auto past = [](std::span<T const> v, std::size_t i) { return i < v.size() ? v[i] : T(0); };
  for (std::size_t m = 0; m + 1 < nb; ++m)
    for (std::size_t j = m + 1; j < nb; ++j) zi[m] += b[j] * past(x, j - m - 1);
  for (std::size_t m = 0; m + 1 < na; ++m) {
    T sum = T(0);
    for (std::size_t j = m + 1; j < na; ++j) sum += a[j] * past(y, j - m - 1);
    zi[m] -= sum;
  }
  if (a[0] != T(1))
    for (T& v : zi) v /= a[0];
  return zi;
}

template <real_value T>
void sosfilt(host const& ex, std::span<std::type_identity_t<T> const> sos, std::type_identity_t<T> const* x,
             T* y, layout const& lay, filter_options<std::type_identity_t<T>> const& opt) {
  constexpr char const* fn = sosfilt_fn;
  detail::check_threads(fn, ex);
  auto const s = checked_sections<T>(fn, sos);
  check_filter_call<T>(fn, x, y, lay, opt, 2 * s.count(), sosfilt_what, {{sos, "sos"}});
  if (lay.count == 0) return;
  auto const v = view_of(x, y, lay, opt.dir);
  detail::df2t_cpu<T>(s.b.data(), s.a.data(), s.count(), 2, v.x, v.y, v.lay, opt.init, opt.final_state,
                      ex.threads);
}

// recur::cuda: the host's checks, then the GPU's (device memory, sos on the
// host), then the LTI backend.
template <real_value T>
void sosfilt(cuda const& ex, std::span<std::type_identity_t<T> const> sos, std::type_identity_t<T> const* x,
             T* y, layout const& lay, filter_options<std::type_identity_t<T>> const& opt) {
  constexpr char const* fn = sosfilt_fn;
  detail::require_cuda(fn);
  if (!sos.empty()) detail::check_host_pointer(fn, sos.data(), "sos");
  auto const s = checked_sections<T>(fn, sos);
  check_filter_call<T>(fn, x, y, lay, opt, 2 * s.count(), sosfilt_what, {{sos, "sos"}});
  check_device_arrays<T>(fn, x, y, lay, opt.init, opt.final_state, 2 * s.count());
  if (lay.count == 0) return;
  auto const v = view_of(x, y, lay, opt.dir);
  detail::sosfilt_cuda<T>(sos.data(), s.count(), v.x, v.y, v.lay, opt.init, opt.final_state, ex.stream);
}

template <real_value T>
std::vector<T> sosfilt_zi(std::span<T const> sos) {
  constexpr char const* fn = "recur::sosfilt_zi";
  checked_sections<T>(fn, sos);
  return sections_steady_state<T>(fn, sos);
}

// filtfilt and sosfiltfilt, one body per executor: every check (the
// coefficients', the extension's, the arrays'), the steady state, then the
// backend.
template <real_value T>
void filtfilt(host const& ex, std::span<std::type_identity_t<T> const> b,
              std::span<std::type_identity_t<T> const> a, std::type_identity_t<T> const* x, T* y,
              layout const& lay, filtfilt_options const& opt) {
  constexpr char const* fn = "recur::filtfilt";
  detail::check_threads(fn, ex);
  auto const f = checked_filter<T>(fn, b, a);
  std::int64_t const edge = detail::filtfilt_edge(fn, opt, f.order() + 1, lay.n);
  check_filter_call<T>(fn, x, y, lay, {}, f.order(), lfilter_what, {{b, "b"}, {a, "a"}});
  auto const zi = steady_state<T>(fn, "", b, a);
  if (lay.count == 0) return;
  detail::filtfilt_cpu<T>(f.b.data(), f.a.data(), 1, f.order(), zi.data(), x, y,
                          detail::normalised_layout(lay), edge, opt.padtype, ex.threads);
}

template <real_value T>
void filtfilt(cuda const& ex, std::span<std::type_identity_t<T> const> b,
              std::span<std::type_identity_t<T> const> a, std::type_identity_t<T> const* x, T* y,
              layout const& lay, filtfilt_options const& opt) {
  constexpr char const* fn = "recur::filtfilt";
  detail::require_cuda(fn);
  if (!b.empty()) detail::check_host_pointer(fn, b.data(), "b");
  if (!a.empty()) detail::check_host_pointer(fn, a.data(), "a");
  auto const f = checked_filter<T>(fn, b, a);
  std::int64_t const m = f.order();
  detail::check_lti_cuda_order(fn, m, "max(len(a), len(b)) - 1");
  std::int64_t const edge = detail::filtfilt_edge(fn, opt, m + 1, lay.n);
  check_filter_call<T>(fn, x, y, lay, {}, m, lfilter_what, {{b, "b"}, {a, "a"}});
  check_device_arrays<T>(fn, x, y, lay, nullptr, nullptr, 0);
  auto const zi = steady_state<T>(fn, "", b, a);
  if (lay.count == 0) return;
  detail::iir_coefficients<T> c;
  c.b = b.data();
  c.nb = static_cast<std::int64_t>(b.size());
  c.a = a.data();
  c.na = static_cast<std::int64_t>(a.size());
  detail::filtfilt_cuda<T>(c, zi.data(), m, x, y, detail::normalised_layout(lay), edge, opt.padtype,
                           ex.stream);
}

template <real_value T>
void sosfiltfilt(host const& ex, std::span<std::type_identity_t<T> const> sos,
                 std::type_identity_t<T> const* x, T* y, layout const& lay, filtfilt_options const& opt) {
  constexpr char const* fn = "recur::sosfiltfilt";
  detail::check_threads(fn, ex);
  auto const s = checked_sections<T>(fn, sos);
  std::int64_t const edge = detail::filtfilt_edge(fn, opt, detail::sections_ntaps(sos), lay.n);
  check_filter_call<T>(fn, x, y, lay, {}, 2 * s.count(), sosfilt_what, {{sos, "sos"}});
  auto const zi = sections_steady_state<T>(fn, sos);
  if (lay.count == 0) return;
  detail::filtfilt_cpu<T>(s.b.data(), s.a.data(), s.count(), 2, zi.data(), x, y,
                          detail::normalised_layout(lay), edge, opt.padtype, ex.threads);
}

template <real_value T>
void sosfiltfilt(cuda const& ex, std::span<std::type_identity_t<T> const> sos,
                 std::type_identity_t<T> const* x, T* y, layout const& lay, filtfilt_options const& opt) {
  constexpr char const* fn = "recur::sosfiltfilt";
  detail::require_cuda(fn);
  if (!sos.empty()) detail::check_host_pointer(fn, sos.data(), "sos");
  auto const s = checked_sections<T>(fn, sos);
  std::int64_t const edge = detail::filtfilt_edge(fn, opt, detail::sections_ntaps(sos), lay.n);
  check_filter_call<T>(fn, x, y, lay, {}, 2 * s.count(), sosfilt_what, {{sos, "sos"}});
  check_device_arrays<T>(fn, x, y, lay, nullptr, nullptr, 0);
  auto const zi = sections_steady_state<T>(fn, sos);
  if (lay.count == 0) return;
  detail::iir_coefficients<T> c;
  c.sos = sos.data();
  c.sections = s.count();
  detail::filtfilt_cuda<T>(c, zi.data(), 2 * s.count(), x, y, detail::normalised_layout(lay), edge,
                           opt.padtype, ex.stream);
}

template <dpcm_sample S>
void dpcm_encode(host const& ex, std::span<std::int64_t const> c, int shift, std::type_identity_t<S> const* x,
                 S* e, layout const& lay, dpcm_options<std::type_identity_t<S>> const& opt) {
  dpcm_int_host<S>(ex, true, c, shift, x, e, lay, opt);
}
template <dpcm_sample S>
void dpcm_encode(cuda const& ex, std::span<std::int64_t const> c, int shift, std::type_identity_t<S> const* x,
                 S* e, layout const& lay, dpcm_options<std::type_identity_t<S>> const& opt) {
  dpcm_int_cuda<S>(ex, true, c, shift, x, e, lay, opt);
}
template <dpcm_sample S>
void dpcm_decode(host const& ex, std::span<std::int64_t const> c, int shift, std::type_identity_t<S> const* e,
                 S* x, layout const& lay, dpcm_options<std::type_identity_t<S>> const& opt) {
  dpcm_int_host<S>(ex, false, c, shift, e, x, lay, opt);
}
template <dpcm_sample S>
void dpcm_decode(cuda const& ex, std::span<std::int64_t const> c, int shift, std::type_identity_t<S> const* e,
                 S* x, layout const& lay, dpcm_options<std::type_identity_t<S>> const& opt) {
  dpcm_int_cuda<S>(ex, false, c, shift, e, x, lay, opt);
}

template <real_value T>
void dpcm_encode(host const& ex, std::span<std::type_identity_t<T> const> c, std::type_identity_t<T> const* x,
                 T* e, layout const& lay, dpcm_options<std::type_identity_t<T>> const& opt) {
  dpcm_float_host<T>(ex, true, c, x, e, lay, opt);
}
template <real_value T>
void dpcm_encode(cuda const& ex, std::span<std::type_identity_t<T> const> c, std::type_identity_t<T> const* x,
                 T* e, layout const& lay, dpcm_options<std::type_identity_t<T>> const& opt) {
  dpcm_float_cuda<T>(ex, true, c, x, e, lay, opt);
}
template <real_value T>
void dpcm_decode(host const& ex, std::span<std::type_identity_t<T> const> c, std::type_identity_t<T> const* e,
                 T* x, layout const& lay, dpcm_options<std::type_identity_t<T>> const& opt) {
  dpcm_float_host<T>(ex, false, c, e, x, lay, opt);
}
template <real_value T>
void dpcm_decode(cuda const& ex, std::span<std::type_identity_t<T> const> c, std::type_identity_t<T> const* e,
                 T* x, layout const& lay, dpcm_options<std::type_identity_t<T>> const& opt) {
  dpcm_float_cuda<T>(ex, false, c, e, x, lay, opt);
}

// ----------------------------------------------------- instantiations ----

#define RECUR_FILTERS(Ex, T)                                                                                \
  template void lfilter<T>(Ex const&, std::span<T const>, std::span<T const>, T const*, T*, layout const&,  \
                           filter_options<T> const&);                                                       \
  template void sosfilt<T>(Ex const&, std::span<T const>, T const*, T*, layout const&,                      \
                           filter_options<T> const&);                                                       \
  template void filtfilt<T>(Ex const&, std::span<T const>, std::span<T const>, T const*, T*, layout const&, \
                            filtfilt_options const&);                                                       \
  template void sosfiltfilt<T>(Ex const&, std::span<T const>, T const*, T*, layout const&,                  \
                               filtfilt_options const&);                                                    \
  template void dpcm_encode<T>(Ex const&, std::span<T const>, T const*, T*, layout const&,                  \
                               dpcm_options<T> const&);                                                     \
  template void dpcm_decode<T>(Ex const&, std::span<T const>, T const*, T*, layout const&,                  \
                               dpcm_options<T> const&);
#define RECUR_DPCM_INT(Ex, S)                                                                              \
  template void dpcm_encode<S>(Ex const&, std::span<std::int64_t const>, int, S const*, S*, layout const&, \
                               dpcm_options<S> const&);                                                    \
  template void dpcm_decode<S>(Ex const&, std::span<std::int64_t const>, int, S const*, S*, layout const&, \
                               dpcm_options<S> const&);
RECUR_FILTERS(host, float)
RECUR_FILTERS(host, double)
RECUR_FILTERS(cuda, float)
RECUR_FILTERS(cuda, double)
RECUR_DPCM_INT(host, std::int16_t)
RECUR_DPCM_INT(host, std::int32_t)
RECUR_DPCM_INT(host, std::uint8_t)
RECUR_DPCM_INT(cuda, std::int16_t)
RECUR_DPCM_INT(cuda, std::int32_t)
RECUR_DPCM_INT(cuda, std::uint8_t)
#undef RECUR_DPCM_INT
#undef RECUR_FILTERS

#define RECUR_HOST_FILTER_STATE(T)                                                               \
  template std::vector<T> lfilter_zi<T>(std::span<T const>, std::span<T const>);                 \
  template std::vector<T> lfiltic<T>(std::span<T const>, std::span<T const>, std::span<T const>, \
                                     std::span<T const>);                                        \
  template std::vector<T> sosfilt_zi<T>(std::span<T const>);
RECUR_HOST_FILTER_STATE(float)
RECUR_HOST_FILTER_STATE(double)
#undef RECUR_HOST_FILTER_STATE

}  // namespace recur
