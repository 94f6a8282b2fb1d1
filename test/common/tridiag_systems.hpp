#pragma once
// Tridiagonal systems for the tests, one at a time in long double: the
// matrix classes they draw, residuals, condition numbers, an independent
// solver, and the systems recursive doubling (RD) must solve. Host code
// without fmt: nvcc-compiled tests include it too (vectors of long double are
// built with an explicit fill value: the default-filling constructor is a
// constexpr template that nvcc also compiles for the device, where it warns
// that long double is double).
//
// A system is a_i x_{i-1} + b_i x_i + c_i x_{i+1} = d_i, i = 0 .. n-1; here
// a_0 = c_{n-1} = 0 (the solvers never read them).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include <recur/reference/tridiag.hpp>

namespace recur_test {

// A draw in [0, 1) from the tests' rng (random.hpp) or a standard generator.
template <class G>
double uniform01(G& g) {
  if constexpr (requires { g.uniform(); })
    return g.uniform();
  else
    return std::uniform_real_distribution<double>(0, 1)(g);
}

// ------------------------------------------------------- matrix classes ---

struct row_values {
  double a, b, c;
};

// Diagonally dominant: a and c in [-1, 1), |b| = |a| + |c| + 1 + U[0, 1) with
// a random sign (the unread a of the first row and c of the last not
// counted). Every algorithm solves these without pivoting.
template <class G>
row_values dominant_row(G& g, bool first = false, bool last = false) {
  double const a = 2 * uniform01(g) - 1, c = 2 * uniform01(g) - 1;
  double const m = std::fabs(a) * !first + std::fabs(c) * !last + 1 + uniform01(g);
  return {a, uniform01(g) < 0.5 ? -m : m, c};
}

// Zhang et al.'s "close values in rows": a, b and c of a row within 10% of
// one value in [1, 2]. Not diagonally dominant: the class RD is for (see
// rd_must_solve).
template <class G>
row_values close_values_row(G& g) {
  double const v = 1 + uniform01(g);
  double const a = v * (1 + 0.1 * (2 * uniform01(g) - 1)), b = v * (1 + 0.1 * (2 * uniform01(g) - 1));
  return {a, b, v * (1 + 0.1 * (2 * uniform01(g) - 1))};
}

// A component of a close-values system's solution: magnitude 1/2 to 1,
// random sign (the right-hand side is then d = A x).
template <class G>
double solution_value(G& g) {
  double const m = 0.5 + 0.5 * uniform01(g);
  return uniform01(g) < 0.5 ? -m : m;
}

// ----------------------------------------------------------- one system ---

// ||A x - d||_inf and the norms it is measured against.
struct residual_norms {
  long double residual = 0, a = 0, x = 0, d = 0;  // ||A x - d||, ||A||, ||x||, ||d|| (infinity norms)
  bool finite = true;                             // every x_i finite
};

struct tridiag_system {
  std::vector<long double> a, b, c;

  // Row i from sub(i), diag(i), sup(i) (sub(0) and sup(n - 1) are not called).
  template <class SubT, class DiagT, class SupT>
  static tridiag_system gather(std::int64_t n, SubT&& sub, DiagT&& diag, SupT&& sup) {
    tridiag_system s;
    s.a.assign(static_cast<std::size_t>(n), 0.0L);
    s.b = s.a;
    s.c = s.a;
    for (std::int64_t i = 0; i < n; ++i) {
      if (i > 0) s.a[i] = static_cast<long double>(sub(i));
      s.b[i] = static_cast<long double>(diag(i));
      if (i + 1 < n) s.c[i] = static_cast<long double>(sup(i));
    }
    return s;
  }

  std::int64_t n() const { return static_cast<std::int64_t>(b.size()); }

  long double norm() const {
    long double m = 0;
    for (std::int64_t i = 0; i < n(); ++i)
      m = std::max(m, std::fabs(a[i]) + std::fabs(b[i]) + std::fabs(c[i]));
    return m;
  }

  // (A x)_i for x(j) the solution's components.
  template <class XT>
  long double row_times(std::int64_t i, XT&& x) const {
    long double acc = b[i] * static_cast<long double>(x(i));
    if (i > 0) acc += a[i] * static_cast<long double>(x(i - 1));
    if (i + 1 < n()) acc += c[i] * static_cast<long double>(x(i + 1));
    return acc;
  }

  template <class XT, class DT>
  residual_norms residual(XT&& x, DT&& d) const {
    residual_norms r;
    for (std::int64_t i = 0; i < n(); ++i) {
      long double const xi = static_cast<long double>(x(i)), di = static_cast<long double>(d(i));
      if (!std::isfinite(xi)) r.finite = false;
      // std::max, not fmax (a library call for long double); the caller
      // checks `finite` before it uses the result.
      r.residual = std::max(r.residual, std::fabs(row_times(i, x) - di));
      r.x = std::max(r.x, std::fabs(xi));
      r.d = std::max(r.d, std::fabs(di));
    }
    r.a = norm();
    return r;
  }

  // ||A|| / min_i (|b_i| - |a_i| - |c_i|): Varah's bound on ||A|| ||A^-1|| for
  // diagonally dominant rows (infinity where a row is not).
  long double varah_condition() const {
    long double margin = std::numeric_limits<long double>::infinity();
    for (std::int64_t i = 0; i < n(); ++i)
      margin = std::min(margin, std::fabs(b[i]) - std::fabs(a[i]) - std::fabs(c[i]));
    return margin > 0 ? norm() / margin : std::numeric_limits<long double>::infinity();
  }

  // ||A^-1||_inf by Gaussian elimination with partial pivoting (LAPACK's
  // ?gttrf and ?gtts2) in long double, one column of A^-1 at a time: O(n^2).
  // Infinity when a pivot is exactly zero.
  long double inverse_norm() const {
    std::int64_t const m = n();
    std::vector<long double> dl(static_cast<std::size_t>(m), 0.0L),
        d = b, du(static_cast<std::size_t>(m), 0.0L), du2(static_cast<std::size_t>(m), 0.0L);
    std::vector<char> swapped(static_cast<std::size_t>(m), 0);
    for (std::int64_t i = 0; i + 1 < m; ++i) dl[i] = a[i + 1], du[i] = c[i];
    for (std::int64_t i = 0; i + 1 < m; ++i) {
      if (std::fabs(d[i]) >= std::fabs(dl[i])) {
        if (d[i] != 0) {
          long double const f = dl[i] / d[i];
          dl[i] = f;
          d[i + 1] -= f * du[i];
        }
      } else {  // rows i and i + 1 change places
        long double const f = d[i] / dl[i], t = du[i];
        swapped[i] = 1;
        d[i] = dl[i];
        dl[i] = f;
        du[i] = d[i + 1];
        d[i + 1] = t - f * d[i + 1];
        if (i + 2 < m) {
          du2[i] = du[i + 1];
          du[i + 1] = -f * du[i + 1];
        }
      }
    }
    for (std::int64_t i = 0; i < m; ++i)
      if (d[i] == 0) return std::numeric_limits<long double>::infinity();
    std::vector<long double> rows(static_cast<std::size_t>(m), 0.0L), y(static_cast<std::size_t>(m), 0.0L);
    for (std::int64_t j = 0; j < m; ++j) {
      std::fill(y.begin(), y.end(), 0.0L);
      y[j] = 1;
      for (std::int64_t i = 0; i + 1 < m; ++i) {
        if (swapped[i]) std::swap(y[i], y[i + 1]);
        y[i + 1] -= dl[i] * y[i];
      }
      y[m - 1] /= d[m - 1];
      if (m > 1) y[m - 2] = (y[m - 2] - du[m - 2] * y[m - 1]) / d[m - 2];
      for (std::int64_t i = m - 3; i >= 0; --i) y[i] = (y[i] - du[i] * y[i + 1] - du2[i] * y[i + 2]) / d[i];
      for (std::int64_t i = 0; i < m; ++i) rows[i] += std::fabs(y[i]);
    }
    return *std::max_element(rows.begin(), rows.end());
  }

  // kappa_inf(A) = ||A|| ||A^-1||.
  long double condition() const { return norm() * inverse_norm(); }

  // Thomas' algorithm in long double: for diagonally dominant rows (no
  // pivoting needed) accurate to ~ n 1e-19 kappa, an oracle far below any
  // tolerance here.
  template <class DT>
  std::vector<long double> thomas(DT&& d) const {
    std::int64_t const m = n();
    std::vector<long double> cp(static_cast<std::size_t>(m), 0.0L), x(static_cast<std::size_t>(m), 0.0L);
    long double c_prev = 0, d_prev = 0;
    for (std::int64_t i = 0; i < m; ++i) {
      long double const piv = b[i] - a[i] * c_prev;
      c_prev = cp[i] = c[i] / piv;
      d_prev = x[i] = (static_cast<long double>(d(i)) - a[i] * d_prev) / piv;
    }
    for (std::int64_t i = m - 2; i >= 0; --i) x[i] -= cp[i] * x[i + 1];
    return x;
  }

  // Every row of Zhang's close-values class (close_values_row): a, b, c
  // within 10% of one value in [1, 2] (with the rounding of T's values).
  bool is_close_values() const {
    for (std::int64_t i = 0; i < n(); ++i) {
      long double lo = b[i], hi = b[i];
      if (i > 0) lo = std::min(lo, a[i]), hi = std::max(hi, a[i]);
      if (i + 1 < n()) lo = std::min(lo, c[i]), hi = std::max(hi, c[i]);
      if (!(lo >= 0.9L && hi <= 2.2L && hi <= lo * (1.1L / 0.9L) * (1 + 1e-6L))) return false;
    }
    return true;
  }
};

// ------------------------------------------------- the systems RD solves ---
//
// RD (reference::detail::recursive_doubling_one, the GPU's group_rd; CR+RD
// runs it on CR's reduced system) is a shooting method: x_0 comes from the
// product of every row's 3x3 matrix, each x_i from a prefix product, i.e.
// from running the three-term recurrence forwards. Its rounding errors grow
// like the recurrence's growing solutions, and it accepts its result only
// where every row's residual is within 2^rd_backward_error_exponent eps
// (2^6 eps in f32, 2^13 eps in f64) of the magnitudes of the row's terms (a
// componentwise backward error), reporting breakdown (info > 0, x NaN)
// otherwise. On diagonally dominant rows the growing solution at least
// doubles every row: RD solves those reliably only for n = 1 (x_0 = d_0 /
// b_0). On Zhang et al.'s close-values rows the recurrence's roots lie near
// the unit circle and the products' growth is a slow random walk.
//
// RD, and CR+RD with an intermediate system of at least 8 equations (the
// default is 128: CR's reduction of close-values rows to 2 or 4 equations
// fails about 3e-5 of f32 systems of n = 64 to 128), must solve every system
// of this domain:
// - close-values rows (close_values_row), n <= 128 in f32, n <= 512 in f64;
// - a right-hand side d = A x (rounded to T) with every |x_i| in [1/2, 1]
//   (solution_value): the check is componentwise, so a row whose terms all
//   nearly vanish (x_{i-1}, x_i, x_{i+1} and d_i far below max |x|, which a
//   uniformly drawn d gives about once in 10^5 systems of n = 16) can be
//   refused although x is accurate normwise;
// - kappa_inf(A) <= 2^-rd_backward_error_exponent / eps (2^17 in f32, 2^39 in
//   f64): a matrix that is not singular to within RD's own tolerance.
// The bounds on n: in the GPU's order of operations (group_rd's
// Hillis-Steele scan, emulated on the CPU) random systems of the domain fail
// at a rate of 6e-7 at f32 n = 128, 6e-6 at 160 and 7e-5 at 192; none of
// 3 10^5 f64 systems fail at n = 640, 8e-4 at n = 1024. In the reference's
// sequential order the rate reaches 1e-5 only at f32 n = 320 and f64
// n ~ 1100. Outside the domain RD may report breakdown, and every suite
// checks that it does so with NaN x rather than return a wrong answer.
template <class T>
inline constexpr std::int64_t rd_domain_max_n = std::is_same_v<T, float> ? 128 : 512;

template <class T>
long double rd_domain_max_condition() {
  return std::ldexp(1.0L, -recur::reference::detail::rd_backward_error_exponent<T>) /
         static_cast<long double>(std::numeric_limits<T>::epsilon());
}

// Whether RD must solve this system of T's values, its right-hand sides
// drawn as above (the caller's part of the contract: d = A x, |x_i| in
// [1/2, 1]).
template <class T>
bool rd_must_solve(tridiag_system const& s) {
  return s.n() >= 1 && s.n() <= rd_domain_max_n<T> && s.is_close_values() &&
         s.condition() <= rd_domain_max_condition<T>();
}

}  // namespace recur_test
