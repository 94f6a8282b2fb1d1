#pragma once
// Contractive steps for the matrix-chain and Moebius suites (host and CUDA):
// rounding errors are forgotten at a known rate, which bounds how many steps'
// errors a value carries.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

#include <recur/layout/layout.hpp>
#include <recur/ops/mobius.hpp>
#include <recur/reference/mobius.hpp>

#include "layouts.hpp"
#include "random.hpp"

namespace recur_test {

// Steps of a matrix chain with |M|_inf <= rho < 1 (every row's absolute sum):
// x stays bounded by |u| / (1 - rho), and rounding errors are forgotten at
// rate rho, so a step's error counts for at most 1 / (1 - rho) steps.
inline constexpr double rho = 0.9;
template <class T, int K>
std::vector<T> contractive_matrices(rng& r, std::size_t elements) {
  std::vector<T> M(elements * K * K);
  for (std::size_t e = 0; e < elements; ++e)
    for (int row = 0; row < K; ++row) {
      T* const m = M.data() + e * K * K + row * K;
      double sum = 0;
      for (int c = 0; c < K; ++c) sum += std::fabs(m[c] = static_cast<T>(r.symmetric()));
      double const f = rho * (0.5 + 0.5 * r.uniform()) / std::max(sum, 1e-300);
      for (int c = 0; c < K; ++c) m[c] = static_cast<T>(m[c] * f);
    }
  return M;
}

// p -> (alpha p + beta) / (gamma p + delta) with |alpha|, |gamma| <= 0.3,
// |beta| <= 1, |delta| in [2, 3): maps [-1, 1] into itself with derivative
// at most 0.42, so errors are forgotten within a few steps.
template <class T>
struct mobius_data {
  std::vector<T> alpha, beta, gamma, delta;
};
template <class T>
mobius_data<T> contractive_mobius(rng& r, std::size_t size) {
  mobius_data<T> d;
  for (std::size_t i = 0; i < size; ++i) {
    d.alpha.push_back(static_cast<T>(0.3 * r.symmetric()));
    d.beta.push_back(static_cast<T>(r.symmetric()));
    d.gamma.push_back(static_cast<T>(0.3 * r.symmetric()));
    d.delta.push_back(static_cast<T>(r.sign() * (2 + r.uniform())));
  }
  return d;
}

template <class T>
std::vector<double> widen(std::vector<T> const& v) {
  return std::vector<double>(v.begin(), v.end());
}

// The pivot-like map p -> s / (3 s' - s p) (alpha = 0, beta = s s',
// gamma = -s s', delta = c s s', c in [2.9, 3.1)) with s, s' random powers of
// two in [2^8, 2^24]: every entry is at least 2^16, so the plain product of a
// few steps leaves f32's range, yet p stays near 2 - sqrt(3). Also whether
// the unscaled product of the first 100 steps is finite (it must not be, for
// the case to test the rescaling), and the recurrence in double.
struct overflowing_maps {
  mobius_data<float> d;
  bool plain_product_finite = true;
  std::vector<double> want;  // p from p_{-1} = init_value, in double (reference::mobius)
  double want_final = 0;
};
inline overflowing_maps overflowing_pivot_maps(rng& r, std::size_t n, double init_value) {
  overflowing_maps m;
  for (std::size_t i = 0; i < n; ++i) {
    float const s = std::ldexp(1.0f, 8 + int(r.next() % 17)), s2 = std::ldexp(1.0f, 8 + int(r.next() % 17));
    float const c = float(3 + 0.1 * r.symmetric());
    m.d.alpha.push_back(0.0f);
    m.d.beta.push_back(s * s2);
    m.d.gamma.push_back(-s * s2);
    m.d.delta.push_back(c * s * s2);
  }
  auto plain = recur::ops::mobius_identity<float>();
  for (std::size_t i = 0; i < std::min<std::size_t>(n, 100); ++i)
    plain = recur::ops::mobius_compose_unscaled{}(
        plain, recur::ops::mobius<float>{m.d.alpha[i], m.d.beta[i], m.d.gamma[i], m.d.delta[i]});
  m.plain_product_finite =
      std::isfinite(plain.a) && std::isfinite(plain.b) && std::isfinite(plain.c) && std::isfinite(plain.d);
  m.want.resize(n);
  recur::reference::mobius<double>(widen(m.d.alpha).data(), widen(m.d.beta).data(), widen(m.d.gamma).data(),
                                   widen(m.d.delta).data(), m.want.data(),
                                   recur::layout::contiguous(static_cast<std::int64_t>(n)), nullptr,
                                   init_value, &m.want_final);
  return m;
}

// max |got - want| over the layout's values (W per element; a NaN counts as
// infinite), and max |want|.
template <class T, class U>
std::pair<double, double> max_error(std::vector<T> const& got, std::vector<U> const& want,
                                    recur::layout const& lay, int W) {
  double err = 0, mag = 0;
  auto const in = covered(lay, W);
  for (std::size_t o = 0; o < got.size(); ++o)
    if (in[o]) {
      double const d = std::fabs(double(got[o]) - double(want[o]));
      err = std::isnan(d) ? std::numeric_limits<double>::infinity() : std::max(err, d);
      mag = std::max(mag, std::fabs(double(want[o])));
    }
  return {err, mag};
}

}  // namespace recur_test
