#pragma once
// Stable recurrences and the error gain that scales their tolerances, for the
// IIR filter, DPCM and order-k tests (host API and device level). No fmt:
// nvcc-compiled tests include it too.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "parallel.hpp"
#include "random.hpp"

namespace recur_test {

// G = sum over k of ||A^k||_inf for an m x m matrix A (row-major), until a
// power's norm is below 1e-18. Any evaluation order of a recurrence with
// state matrix A (sequential or a scan) commits errors of order eps in the
// state; they reach the output amplified by at most G.
inline double power_sum(std::vector<double> const& A, int m) {
  std::vector<double> pw(static_cast<std::size_t>(m * m), 0.0);
  for (int i = 0; i < m; ++i) pw[i * m + i] = 1;
  double g = 0;
  for (int step = 0; step < 1000000; ++step) {
    double norm = 0;
    for (int r = 0; r < m; ++r) {
      double row = 0;
      for (int c = 0; c < m; ++c) row += std::fabs(pw[r * m + c]);
      norm = std::max(norm, row);
    }
    g += norm;
    if (norm < 1e-18) break;
    std::vector<double> next(pw.size(), 0.0);
    for (int r = 0; r < m; ++r)
      for (int q = 0; q < m; ++q)
        for (int c = 0; c < m; ++c) next[r * m + c] += pw[r * m + q] * A[q * m + c];
    pw = std::move(next);
  }
  return g;
}

// The error gain of an IIR filter's denominator a: power_sum of the companion
// matrix of the normalised a (first column -a[1:] / a[0], ones above the
// diagonal). 1 for k = 0.
inline double error_gain(std::vector<double> const& a) {
  int const k = static_cast<int>(a.size()) - 1;
  if (k <= 0) return 1;
  std::vector<double> m(static_cast<std::size_t>(k * k), 0.0);
  for (int j = 0; j < k; ++j) {
    m[j * k] = -a[j + 1] / a[0];
    if (j + 1 < k) m[j * k + j + 1] = 1;
  }
  return power_sum(m, k);
}

// The monic polynomial (1, p_1, ..., p_k) with k roots inside the unit
// circle: while two roots remain, with probability 1/2 a conjugate pair of
// radius r_min to r_max and angle 0.4 to 2.7 rad, else a real root of
// magnitude r_min to r_max and random sign.
inline std::vector<double> stable_poly(rng& r, int k, double r_min = 0.3, double r_max = 0.9) {
  std::vector<std::complex<double>> poly{1.0};
  auto mul = [&](std::complex<double> root) {
    std::vector<std::complex<double>> q(poly.size() + 1, 0.0);
    for (std::size_t i = 0; i < poly.size(); ++i) {
      q[i] += poly[i];
      q[i + 1] -= poly[i] * root;
    }
    poly = q;
  };
  for (int j = 0; j < k;) {
    if (k - j >= 2 && r.uniform() < 0.5) {
      auto const p = std::polar(r_min + (r_max - r_min) * r.uniform(), 0.4 + 2.3 * r.uniform());
      mul(p);
      mul(std::conj(p));
      j += 2;
    } else {
      mul(r.sign() * (r_min + (r_max - r_min) * r.uniform()));
      j += 1;
    }
  }
  std::vector<double> out;
  for (auto const& c : poly) out.push_back(c.real());
  return out;
}

// The oracle's arithmetic for outputs in T: double for f32 (29 more bits);
// for f64, long double where it is the x87 80-bit format (11 more bits, in
// hardware), else double (where long double is a software quad, e.g.
// aarch64, it would take minutes; the oracle's own error is then that of the
// sequential filter, within the margin of the tolerances' constant).
template <class T>
using oracle_t =
    std::conditional_t<sizeof(T) == sizeof(double) && std::numeric_limits<long double>::digits == 64,
                       long double, double>;

// x[i] = a value in [-1, 1) drawn from (key, i), filled on every core.
template <class T>
void fill_symmetric(std::vector<T>& x, std::uint64_t key) {
  std::int64_t const size = static_cast<std::int64_t>(x.size());
  parallel_for(64, worker_count(size), [&](std::int64_t piece, int) {
    for (std::int64_t i = size * piece / 64; i < size * (piece + 1) / 64; ++i)
      x[static_cast<std::size_t>(i)] =
          static_cast<T>(2.0 * unit(draw(key, static_cast<std::uint64_t>(i))) - 1.0);
  });
}

// b of nb values in [-1, 1); a = a0 prod_j (1 - r_j z^-1) with `poles` real
// poles r_j in (-radius, radius), a0 in [0.5, 1.5) (not 1: the
// normalisation is exercised).
template <class T>
void real_pole_filter(rng& r, int nb, int poles, double radius, std::vector<T>& b, std::vector<T>& a) {
  std::vector<double> p = {1.0};
  for (int j = 0; j < poles; ++j) {
    double const root = radius * r.symmetric();
    p.push_back(0.0);
    for (std::size_t i = p.size() - 1; i > 0; --i) p[i] -= root * p[i - 1];
  }
  double const a0 = 0.5 + r.uniform();
  a.clear();
  b.clear();
  for (double v : p) a.push_back(static_cast<T>(v * a0));
  for (int j = 0; j < nb; ++j) b.push_back(static_cast<T>(r.symmetric()));
}

}  // namespace recur_test
