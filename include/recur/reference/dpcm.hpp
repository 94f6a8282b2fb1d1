#pragma once
// Sequential references for DPCM (differential pulse-code modulation) with an
// order-k linear predictor. Encoding is a stencil (each residual needs only
// past samples); decoding is a k-th order recurrence, the part that needs a
// scan in parallel.
//
// Integer codec, samples of an integer type S of B bits: signed of up to 32
// bits (int8_t, int16_t, int32_t) or unsigned of up to 16 (uint8_t, uint16_t;
// images):
//   p_i = (sum_j c_j x_{i-j}) >> shift     exact, in int64 (an arithmetic
//                                          shift: floor division by 2^shift)
//   e_i = wrap(x_i - p_i)                  encode
//   x_i = wrap(e_i + p_i)                  decode
// where wrap reduces modulo 2^B into S's range (two's complement wrap-around
// for signed S, conversion to a signed type being modular since C++20; plain
// reduction modulo 2^B into [0, 2^B) for unsigned S, so a uint8_t residual of
// -3 is stored as 253). Both sides compute p_i
// from the same samples x, so e_i + p_i == x_i modulo 2^B and decode(encode(x))
// == x exactly for every input, extreme values included: residuals that do not
// fit wrap around instead of saturating, and wrap back on decoding. With shift
// = 0 the coefficients are plain integers; a shift makes them fixed point
// (c_j / 2^shift). To keep the int64 sum exact, sum |c_j| <= 2^31 is required
// (samples are below 2^31 in magnitude, which is why unsigned samples stop at
// 16 bits).
//
// Floating-point codec: p_i = sum_j c_j x_{i-j} (summed j = 1 .. k), e_i = x_i
// - p_i, x_i = e_i + p_i. Decoding is reference::linrec_order_k with a = c and
// input e, in the same order of operations; the round trip is exact only up
// to rounding, which the decoder's recurrence can amplify for an unstable
// predictor.
//
// Both: x and e are sequences of one layout and may alias (in place). Samples
// before the first, x_{-1} .. x_{-k}, are zero, or k values per sequence from
// init, newest first: sequence s's x_{-1} at init[s * k].

#include <concepts>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <recur/layout/layout.hpp>
#include <recur/reference/arguments.hpp>

namespace recur::reference {

namespace detail {

inline void require_dpcm_coefficients(char const* fn, std::span<std::int64_t const> c, int shift) {
  if (shift < 0 || shift > 62) fail(fn, "shift = " + std::to_string(shift) + " is outside [0, 62]");
  // |sum c_j x_j| <= sum |c_j| 2^31 <= 2^62 for samples of at most 32 bits.
  std::uint64_t total = 0;
  for (std::size_t j = 0; j < c.size(); ++j) {
    std::uint64_t const m =
        c[j] < 0 ? 0 - static_cast<std::uint64_t>(c[j]) : static_cast<std::uint64_t>(c[j]);
    if (m > (std::uint64_t{1} << 31) || (total += m) > (std::uint64_t{1} << 31))
      fail(fn, "sum |c_j| exceeds 2^31 (c[" + std::to_string(j) + "] = " + std::to_string(c[j]) +
                   "): the prediction would not be exact in int64");
  }
}

// The history x_{i-1} .. x_{i-k} as a small ring, newest first.
template <class V>
struct dpcm_history {
  std::vector<V> h;
  explicit dpcm_history(std::size_t k) : h(k) {}
  void reset(V const* init, std::int64_t s) {
    std::int64_t const k = static_cast<std::int64_t>(h.size());
    for (std::int64_t j = 0; j < k; ++j) h[j] = init ? init[s * k + j] : V(0);
  }
  void push(V v) {
    if (h.empty()) return;
    for (std::size_t j = h.size() - 1; j > 0; --j) h[j] = h[j - 1];
    h[0] = v;
  }
};

template <class S>
std::int64_t integer_prediction(std::span<std::int64_t const> c, int shift, std::vector<S> const& h) {
  std::int64_t acc = 0;
  for (std::size_t j = 0; j < c.size(); ++j) acc += c[j] * static_cast<std::int64_t>(h[j]);
  return acc >> shift;  // arithmetic since C++20
}

template <class T>
T float_prediction(std::span<T const> c, std::vector<T> const& h) {
  T acc = T(0);
  for (std::size_t j = 0; j < c.size(); ++j) acc += c[j] * h[j];
  return acc;
}

template <class S>
concept dpcm_sample = (std::signed_integral<S> && sizeof(S) <= 4) ||
                      (std::unsigned_integral<S> && !std::same_as<S, bool> && sizeof(S) <= 2);

}  // namespace detail

// Integer encode: e_i = wrap(x_i - p_i).
template <detail::dpcm_sample S>
void dpcm_encode(std::span<std::int64_t const> c, int shift, S const* x, S* e, layout const& lay,
                 S const* init = nullptr) {
  constexpr char const* fn = "dpcm_encode";
  detail::require_dpcm_coefficients(fn, c, shift);
  detail::require_layout(fn, lay);
  detail::require_pointer(fn, "x", x, lay);
  detail::require_pointer(fn, "e", e, lay);
  detail::dpcm_history<S> hist(c.size());
  for (std::int64_t s = 0; s < lay.count; ++s) {
    hist.reset(init, s);
    for (std::int64_t i = 0; i < lay.n; ++i) {
      std::int64_t const o = lay.offset(i, s);
      S const xi = x[o];  // read first: e may alias x
      e[o] = static_cast<S>(static_cast<std::int64_t>(xi) - detail::integer_prediction(c, shift, hist.h));
      hist.push(xi);
    }
  }
}

// Integer decode: x_i = wrap(e_i + p_i).
template <detail::dpcm_sample S>
void dpcm_decode(std::span<std::int64_t const> c, int shift, S const* e, S* x, layout const& lay,
                 S const* init = nullptr) {
  constexpr char const* fn = "dpcm_decode";
  detail::require_dpcm_coefficients(fn, c, shift);
  detail::require_layout(fn, lay);
  detail::require_pointer(fn, "e", e, lay);
  detail::require_pointer(fn, "x", x, lay);
  detail::dpcm_history<S> hist(c.size());
  for (std::int64_t s = 0; s < lay.count; ++s) {
    hist.reset(init, s);
    for (std::int64_t i = 0; i < lay.n; ++i) {
      std::int64_t const o = lay.offset(i, s);
      S const xi =
          static_cast<S>(static_cast<std::int64_t>(e[o]) + detail::integer_prediction(c, shift, hist.h));
      x[o] = xi;
      hist.push(xi);
    }
  }
}

// Floating-point encode: e_i = x_i - p_i.
template <std::floating_point T>
void dpcm_encode(std::span<std::type_identity_t<T> const> c, T const* x, T* e, layout const& lay,
                 T const* init = nullptr) {
  constexpr char const* fn = "dpcm_encode";
  detail::require_layout(fn, lay);
  detail::require_pointer(fn, "x", x, lay);
  detail::require_pointer(fn, "e", e, lay);
  detail::dpcm_history<T> hist(c.size());
  for (std::int64_t s = 0; s < lay.count; ++s) {
    hist.reset(init, s);
    for (std::int64_t i = 0; i < lay.n; ++i) {
      std::int64_t const o = lay.offset(i, s);
      T const xi = x[o];
      e[o] = xi - detail::float_prediction<T>(c, hist.h);
      hist.push(xi);
    }
  }
}

// Floating-point decode: x_i = e_i + p_i, a k-th order recurrence.
template <std::floating_point T>
void dpcm_decode(std::span<std::type_identity_t<T> const> c, T const* e, T* x, layout const& lay,
                 T const* init = nullptr) {
  constexpr char const* fn = "dpcm_decode";
  detail::require_layout(fn, lay);
  detail::require_pointer(fn, "e", e, lay);
  detail::require_pointer(fn, "x", x, lay);
  detail::dpcm_history<T> hist(c.size());
  for (std::int64_t s = 0; s < lay.count; ++s) {
    hist.reset(init, s);
    for (std::int64_t i = 0; i < lay.n; ++i) {
      std::int64_t const o = lay.offset(i, s);
      // prediction first, then the residual: linrec_order_k's order.
      T const xi = detail::float_prediction<T>(c, hist.h) + e[o];
      x[o] = xi;
      hist.push(xi);
    }
  }
}

}  // namespace recur::reference
