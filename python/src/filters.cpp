// Bindings of include/recur/filter.hpp: lfilter, lfilter_zi, lfiltic,
// sosfilt, sosfilt_zi, filtfilt, sosfiltfilt, correlate_lags, dpcm_encode,
// dpcm_decode. Each checks what the C++ API cannot see (dtypes, devices,
// shapes, state sizes), then calls the entry point, which checks the rest.
// lfilter's and sosfilt's `reverse` and correlate_lags serve the backward
// passes of recur._autograd's ops (scipy's signatures have neither).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <recur/filter.hpp>

#include "arrays.hpp"

namespace recur::python {
namespace {

using nb::arg;
using stream_arg = std::optional<std::uintptr_t>;

// sos of shape (n_sections, 6), contiguous, as the flat span the C++ API takes.
template <class T>
std::span<T const> sections(char const* fn, array const& sos) {
  auto const s = coefficients<T>(fn, "sos", sos, 2);
  if (sos.shape(1) != 6) value_error(std::string(fn) + ": sos must be shape (n_sections, 6)");
  return s;
}

filtfilt_options filtfilt_opts(char const* fn, std::optional<std::string> const& padtype,
                               std::optional<std::int64_t> padlen) {
  filtfilt_options o;
  o.padlen = padlen;
  if (!padtype)
    o.padtype = filtfilt_pad::none;
  else if (*padtype == "odd")
    o.padtype = filtfilt_pad::odd;
  else if (*padtype == "even")
    o.padtype = filtfilt_pad::even;
  else if (*padtype == "constant")
    o.padtype = filtfilt_pad::constant;
  else
    value_error(std::string(fn) + ": Unknown value '" + *padtype +
                "' given to padtype. padtype must be 'even', 'odd', 'constant', or None.");
  return o;
}

// One binding for lfilter and sosfilt: `coeffs(T)` gives the entry point's
// coefficients and state size per sequence, `call(ex, ...)` runs it.
template <class Coeffs, class Call>
void filter_call(char const* fn, array const& x, array const& y, std::int64_t axis,
                 std::optional<array> const& zi, std::optional<array> const& zf, bool reverse,
                 stream_arg stream, int threads, Coeffs coeffs, Call call) {
  executor_spec const ex{stream, threads};
  check_devices(fn, ex, {{"x", &x}, {"y", &y}, {"zi", given(zi)}, {"zf", given(zf)}});
  auto const bt = shared_batch(fn, x, "x", y, "y", axis);
  with_real_type(fn, "x", x, [&](auto t) {
    using T = decltype(t);
    check_same_dtype(fn, x, {{"y", &y}, {"zi", given(zi)}, {"zf", given(zf)}});
    auto const [c, per] = coeffs(T{});
    check_state(fn, "zi", zi, sequences(bt) * per);
    check_state(fn, "zf", zf, sequences(bt) * per);
    run(ex, bt, [&](auto const& e, std::int64_t off, std::int64_t first) {
      filter_options<T> const opt{at(in<T>(zi), first * per), at(output<T>(zf), first * per),
                                  reverse ? direction::reverse : direction::forward};
      call(e, c, in<T>(x) + off, output<T>(y) + off, bt.lay, opt);
    });
  });
}

// correlate_lags along `axis` of u and of each array of v, which share u's
// layout (the Python layer copies those that do not). A batch that takes
// several calls (batch.outer) writes one set of nv * lags sums per call,
// c[part * nv * lags ...), for the Python layer to add.
void correlate_call(array const& u, std::vector<array> const& v, array const& c, std::int64_t axis,
                    std::int64_t lags, bool reverse, stream_arg stream, int threads) {
  char const* fn = "recur.signal.correlate_lags";
  executor_spec const ex{stream, threads};
  std::vector<std::string> names;
  for (std::size_t j = 0; j < v.size(); ++j) names.push_back("v[" + std::to_string(j) + "]");
  std::vector<std::pair<char const*, array const*>> arrays = {{"u", &u}, {"c", &c}};
  for (std::size_t j = 0; j < v.size(); ++j) arrays.emplace_back(names[j].c_str(), &v[j]);
  check_devices(fn, ex, arrays);
  auto const bu = batch_of(u, axis);
  if (!bu) value_error(std::string(fn) + ": no layout describes u (the Python layer copies such inputs)");
  batch const& bt = *bu;
  for (std::size_t j = 0; j < v.size(); ++j) shared_batch(fn, u, "u", v[j], names[j].c_str(), axis);
  std::int64_t parts = 1;
  for (auto const& g : bt.outer) parts *= g.first;
  with_real_type(fn, "u", u, [&](auto t) {
    using T = decltype(t);
    arrays.erase(arrays.begin());
    check_same_dtype(fn, u, arrays);
    if (lags < 0) value_error(std::string(fn) + ": lags = " + std::to_string(lags) + " is negative");
    std::int64_t const values = static_cast<std::int64_t>(v.size()) * lags;
    check_state(fn, "c", c, parts * values);
    std::int64_t part = 0;
    run(ex, bt, [&](auto const& e, std::int64_t off, std::int64_t) {
      std::vector<T const*> vs;
      for (auto const& a : v) vs.push_back(in<T>(a) + off);
      correlate_lags<T>(e, in<T>(u) + off, std::span<T const* const>(vs), output<T>(c) + part++ * values,
                        lags, bt.lay, reverse ? direction::reverse : direction::forward);
    });
  });
}

// One binding for filtfilt and sosfiltfilt: make(T{}) checks the
// coefficients (with the GIL, before anything runs) and returns the call
// (ex, x, y, lay, opt) of the entry point.
template <class Make>
void forward_backward_call(char const* fn, array const& x, array const& y, std::int64_t axis,
                           filtfilt_options const& opt, stream_arg stream, int threads, Make make) {
  executor_spec const ex{stream, threads};
  check_devices(fn, ex, {{"x", &x}, {"y", &y}});
  auto const bt = shared_batch(fn, x, "x", y, "y", axis);
  with_real_type(fn, "x", x, [&](auto t) {
    using T = decltype(t);
    check_same_dtype(fn, x, {{"y", &y}});
    auto const call = make(T{});
    run(ex, bt, [&](auto const& e, std::int64_t off, std::int64_t) {
      call(e, in<T>(x) + off, output<T>(y) + off, bt.lay, opt);
    });
  });
}

// The DPCM codecs: integer samples (int16, int32, uint8) with int64
// coefficients and a shift, or floating-point samples with coefficients of
// their type (shift must be 0).
template <bool Encode>
void dpcm_call(array const& c, int shift, array const& in_arr, array const& out_arr, std::int64_t axis,
               std::optional<array> const& init, stream_arg stream, int threads) {
  char const* fn = Encode ? "recur.dpcm.encode" : "recur.dpcm.decode";
  executor_spec const ex{stream, threads};
  check_devices(fn, ex, {{"x", &in_arr}, {"out", &out_arr}, {"init", given(init)}});
  auto const bt = shared_batch(fn, in_arr, "the input", out_arr, "the output", axis);
  check_same_dtype(fn, in_arr, {{"the output", &out_arr}, {"init", given(init)}});
  auto integer = [&](auto s) {
    using S = decltype(s);
    if (!has_dtype<std::int64_t>(c))
      type_error(std::string(fn) + ": c has dtype " + dtype_name(c.dtype()) +
                 "; integer samples take int64 "
                 "coefficients");
    auto const cs = coefficients<std::int64_t>(fn, "c", c);
    auto const k = static_cast<std::int64_t>(cs.size());
    check_state(fn, "init", init, sequences(bt) * k);
    run(ex, bt, [&](auto const& e, std::int64_t off, std::int64_t first) {
      dpcm_options<S> const opt{at(in<S>(init), first * k)};
      if constexpr (Encode)
        dpcm_encode<S>(e, cs, shift, in<S>(in_arr) + off, output<S>(out_arr) + off, bt.lay, opt);
      else
        dpcm_decode<S>(e, cs, shift, in<S>(in_arr) + off, output<S>(out_arr) + off, bt.lay, opt);
    });
  };
  if (has_dtype<std::int16_t>(in_arr)) return integer(std::int16_t{});
  if (has_dtype<std::int32_t>(in_arr)) return integer(std::int32_t{});
  if (has_dtype<std::uint8_t>(in_arr)) return integer(std::uint8_t{});
  if (!has_dtype<float>(in_arr) && !has_dtype<double>(in_arr))
    type_error(std::string(fn) + ": the samples have dtype " + dtype_name(in_arr.dtype()) +
               "; expected int16, int32, uint8, float32 or float64");
  if (shift != 0)
    value_error(std::string(fn) + ": shift = " + std::to_string(shift) + " with floating-point samples");
  with_real_type(fn, "x", in_arr, [&](auto t) {
    using T = decltype(t);
    auto const cs = coefficients<T>(fn, "c", c);
    auto const k = static_cast<std::int64_t>(cs.size());
    check_state(fn, "init", init, sequences(bt) * k);
    run(ex, bt, [&](auto const& e, std::int64_t off, std::int64_t first) {
      dpcm_options<T> const opt{at(in<T>(init), first * k)};
      if constexpr (Encode)
        dpcm_encode<T>(e, cs, in<T>(in_arr) + off, output<T>(out_arr) + off, bt.lay, opt);
      else
        dpcm_decode<T>(e, cs, in<T>(in_arr) + off, output<T>(out_arr) + off, bt.lay, opt);
    });
  });
}

}  // namespace

void bind_filters(nb::module_& m) {
  m.def(
      "lfilter",
      [](array const& b, array const& a, array const& x, array const& y, std::int64_t axis,
         std::optional<array> const& zi, std::optional<array> const& zf, stream_arg stream, int threads,
         bool reverse) {
        char const* fn = "recur.signal.lfilter";
        filter_call(
            fn, x, y, axis, zi, zf, reverse, stream, threads,
            [&](auto t) {
              using T = decltype(t);
              std::pair<std::span<T const>, std::span<T const>> const c{coefficients<T>(fn, "b", b),
                                                                        coefficients<T>(fn, "a", a)};
              std::int64_t const per = c.first.empty() || c.second.empty()
                                           ? 0
                                           : lfilter_order(std::ssize(c.first), std::ssize(c.second));
              return std::pair{c, per};
            },
            [](auto const& e, auto const& c, auto const* xp, auto* yp, layout const& lay, auto const& opt) {
              lfilter(e, c.first, c.second, xp, yp, lay, opt);
            });
      },
      arg("b"), arg("a"), arg("x"), arg("y"), arg("axis"), arg("zi").none(), arg("zf").none(),
      arg("stream").none(), arg("threads"), arg("reverse") = false);

  m.def(
      "sosfilt",
      [](array const& sos, array const& x, array const& y, std::int64_t axis, std::optional<array> const& zi,
         std::optional<array> const& zf, stream_arg stream, int threads, bool reverse) {
        char const* fn = "recur.signal.sosfilt";
        filter_call(
            fn, x, y, axis, zi, zf, reverse, stream, threads,
            [&](auto t) {
              auto const s = sections<decltype(t)>(fn, sos);
              return std::pair{s, static_cast<std::int64_t>(s.size() / 3)};
            },
            [](auto const& e, auto const& s, auto const* xp, auto* yp, layout const& lay, auto const& opt) {
              sosfilt(e, s, xp, yp, lay, opt);
            });
      },
      arg("sos"), arg("x"), arg("y"), arg("axis"), arg("zi").none(), arg("zf").none(), arg("stream").none(),
      arg("threads"), arg("reverse") = false);

  m.def("correlate_lags", &correlate_call, arg("u"), arg("v"), arg("c"), arg("axis"), arg("lags"),
        arg("reverse"), arg("stream").none(), arg("threads"));

  m.def(
      "filtfilt",
      [](array const& b, array const& a, array const& x, array const& y, std::int64_t axis,
         std::optional<std::string> const& padtype, std::optional<std::int64_t> padlen, stream_arg stream,
         int threads) {
        char const* fn = "recur.signal.filtfilt";
        forward_backward_call(
            fn, x, y, axis, filtfilt_opts(fn, padtype, padlen), stream, threads, [&](auto t) {
              using T = decltype(t);
              auto const bs = coefficients<T>(fn, "b", b), as = coefficients<T>(fn, "a", a);
              return [bs, as](auto const& e, T const* xp, T* yp, layout const& lay,
                              filtfilt_options const& opt) { filtfilt<T>(e, bs, as, xp, yp, lay, opt); };
            });
      },
      arg("b"), arg("a"), arg("x"), arg("y"), arg("axis"), arg("padtype").none(), arg("padlen").none(),
      arg("stream").none(), arg("threads"));

  m.def(
      "sosfiltfilt",
      [](array const& sos, array const& x, array const& y, std::int64_t axis,
         std::optional<std::string> const& padtype, std::optional<std::int64_t> padlen, stream_arg stream,
         int threads) {
        char const* fn = "recur.signal.sosfiltfilt";
        forward_backward_call(
            fn, x, y, axis, filtfilt_opts(fn, padtype, padlen), stream, threads, [&](auto t) {
              using T = decltype(t);
              auto const s = sections<T>(fn, sos);
              return [s](auto const& e, T const* xp, T* yp, layout const& lay, filtfilt_options const& opt) {
                sosfiltfilt<T>(e, s, xp, yp, lay, opt);
              };
            });
      },
      arg("sos"), arg("x"), arg("y"), arg("axis"), arg("padtype").none(), arg("padlen").none(),
      arg("stream").none(), arg("threads"));

  // The host functions of the coefficients: lists of the state values.
  m.def(
      "lfilter_zi",
      [](array const& b, array const& a) {
        std::vector<double> r;
        with_real_type("recur.signal.lfilter_zi", "b", b, [&](auto t) {
          using T = decltype(t);
          char const* fn = "recur.signal.lfilter_zi";
          auto const z = lfilter_zi<T>(coefficients<T>(fn, "b", b), coefficients<T>(fn, "a", a));
          r.assign(z.begin(), z.end());
        });
        return r;
      },
      arg("b"), arg("a"));
  m.def(
      "lfiltic",
      [](array const& b, array const& a, array const& y, array const& x) {
        std::vector<double> r;
        with_real_type("recur.signal.lfiltic", "b", b, [&](auto t) {
          using T = decltype(t);
          char const* fn = "recur.signal.lfiltic";
          auto const z = lfiltic<T>(coefficients<T>(fn, "b", b), coefficients<T>(fn, "a", a),
                                    coefficients<T>(fn, "y", y), coefficients<T>(fn, "x", x));
          r.assign(z.begin(), z.end());
        });
        return r;
      },
      arg("b"), arg("a"), arg("y"), arg("x"));
  m.def(
      "sosfilt_zi",
      [](array const& sos) {
        std::vector<double> r;
        with_real_type("recur.signal.sosfilt_zi", "sos", sos, [&](auto t) {
          auto const z = sosfilt_zi<decltype(t)>(sections<decltype(t)>("recur.signal.sosfilt_zi", sos));
          r.assign(z.begin(), z.end());
        });
        return r;
      },
      arg("sos"));

  m.def("dpcm_encode", &dpcm_call<true>, arg("c"), arg("shift"), arg("x"), arg("e"), arg("axis"),
        arg("init").none(), arg("stream").none(), arg("threads"));
  m.def("dpcm_decode", &dpcm_call<false>, arg("c"), arg("shift"), arg("e"), arg("x"), arg("axis"),
        arg("init").none(), arg("stream").none(), arg("threads"));
}

}  // namespace recur::python
