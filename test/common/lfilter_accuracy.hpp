#pragma once
// The accuracy requirement for lfilter on the filters scipy.signal designs
// (test/data/lfilter_designs.hpp): the result's error against the sequential
// filter of the designed float64 coefficients in long double is at most 10
// times scipy's own error in the same precision, for a zero initial state,
// for zi = lfilter_zi(b, a) * x[0] with its zf, and for the same input
// filtered in two calls (zf of the first as zi of the second: streaming).
// Errors are relative to the largest reference value; below one epsilon of
// T they are at T's resolution, so the bound is 10 max(scipy's, eps). The
// final state is one vector whose error fluctuates from sample to sample as
// the output's does (scipy's own zf error ranges from 1/20 of its output
// error to about it): its bound is 10 max(scipy's zf error, scipy's output
// error, eps), and there is none where scipy's zf is off by more than 100%.
// Filters whose rounding to T is unstable (scipy's error negative in the
// table) are skipped. Shared by the CPU emulation of the GPU's arithmetic
// (test_lti_emulation.cpp) and the GPU itself (test_lfilter_accuracy_cuda.cpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>
#include <recur/layout/layout.hpp>
#include <recur/reference/lfilter.hpp>

#include "../data/lfilter_designs.hpp"
#include "random.hpp"

namespace recur_test {

// The design named `name` ("butter(8, 0.1, 'lowpass')"); throws if none.
inline lfilter_designs::design const& find_design(std::string const& name) {
  for (auto const& d : lfilter_designs::designs)
    if (name == d.name) return d;
  throw std::invalid_argument("no design " + name);
}

// The designs' test input rounded to T (lfilter_designs.py draws the same).
template <class T>
std::vector<T> design_input() {
  rng r(lfilter_designs::seed);
  std::vector<T> x(static_cast<std::size_t>(lfilter_designs::length));
  for (T& v : x) v = static_cast<T>(r.symmetric());
  return x;
}

// max |got - ref| / max |ref|.
template <class T>
double relative_error(std::span<T const> got, std::span<long double const> ref) {
  long double e = 0, m = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    long double const d = std::fabs(static_cast<long double>(got[i]) - ref[i]);
    e = d > e || std::isnan(d) ? d : e;
    m = std::max(m, std::fabs(ref[i]));
  }
  return static_cast<double>(e / m);
}

// The sequential filter of the design's float64 coefficients in long
// double on x from zi (may be null); zf gets the final state.
template <class T>
std::vector<long double> design_reference(lfilter_designs::design const& d, std::vector<T> const& x,
                                          T const* zi, std::vector<long double>& zf) {
  std::vector<long double> const b(d.b, d.b + d.order + 1), a(d.a, d.a + d.order + 1);
  std::vector<long double> xl(x.begin(), x.end()), y(x.size()), zil;
  if (zi) zil.assign(zi, zi + d.order);
  zf.assign(static_cast<std::size_t>(d.order), 0.0L);
  recur::reference::lfilter<long double>(b, a, xl.data(), y.data(),
                                         recur::layout::contiguous(static_cast<std::int64_t>(x.size())),
                                         zi ? zil.data() : nullptr, zf.data());
  return y;
}

// Checks one precision T on every design: run(b, a, x, y, n, zi, zf) filters
// x[0, n) into y (zi, zf: null or order values) with T coefficients (the
// design's rounded to T) as recur::lfilter takes them.
template <class T, class Run>
void check_designs(Run&& run) {
  constexpr int t = sizeof(T) == 4 ? 0 : 1;
  constexpr double eps = std::numeric_limits<T>::epsilon();
  std::vector<T> const x = design_input<T>();
  std::int64_t const n = lfilter_designs::length, h = n / 3;
  int checked = 0, skipped = 0;
  for (auto const& d : lfilter_designs::designs) {
    if (d.err[t] < 0 || d.err_zi[t] < 0) {
      ++skipped;
      continue;
    }
    ++checked;
    int const m = d.order;
    std::vector<T> const b(d.b, d.b + m + 1), a(d.a, d.a + m + 1);
    std::string const what = std::string(d.name) + (t == 0 ? " float32" : " float64");
    std::vector<long double> zf_ref;
    // Zero initial state.
    {
      auto const ref = design_reference<T>(d, x, nullptr, zf_ref);
      std::vector<T> y(x.size());
      run(b, a, x.data(), y.data(), n, nullptr, nullptr);
      double const e = relative_error<T>(y, ref), bound = 10 * std::max(d.err[t], eps);
      BOOST_TEST(e <= bound, what << ": error " << e << " (scipy's " << d.err[t] << ")");
    }
    // zi = lfilter_zi(b, a) x[0], in T, and zf; then the same in two calls.
    std::vector<double> const zd = recur::reference::lfilter_zi<double>(
        std::vector<double>(d.b, d.b + m + 1), std::vector<double>(d.a, d.a + m + 1));
    std::vector<T> zi(static_cast<std::size_t>(m));
    for (int j = 0; j < m; ++j) zi[j] = static_cast<T>(zd[j] * static_cast<double>(x[0]));
    auto const ref = design_reference<T>(d, x, zi.data(), zf_ref);
    double const bound_y = 10 * std::max(d.err_zi[t], eps),
                 bound_zf = d.err_zf[t] < 0 ? std::numeric_limits<double>::infinity()
                                            : 10 * std::max({d.err_zf[t], d.err_zi[t], eps});
    {
      std::vector<T> y(x.size()), zf(static_cast<std::size_t>(m));
      run(b, a, x.data(), y.data(), n, zi.data(), zf.data());
      double const e = relative_error<T>(y, ref), ez = relative_error<T>(zf, zf_ref);
      BOOST_TEST(e <= bound_y, what << " with zi: error " << e << " (scipy's " << d.err_zi[t] << ")");
      BOOST_TEST(ez <= bound_zf, what << " with zi: zf error " << ez << " (scipy's " << d.err_zf[t] << ")");
    }
    {
      std::vector<T> y(x.size()), z1(static_cast<std::size_t>(m)), z2(static_cast<std::size_t>(m));
      run(b, a, x.data(), y.data(), h, zi.data(), z1.data());
      run(b, a, x.data() + h, y.data() + h, n - h, z1.data(), z2.data());
      double const e = relative_error<T>(y, ref), ez = relative_error<T>(z2, zf_ref);
      BOOST_TEST(e <= bound_y, what << " in two calls: error " << e << " (scipy's " << d.err_zi[t] << ")");
      BOOST_TEST(ez <= bound_zf,
                 what << " in two calls: zf error " << ez << " (scipy's " << d.err_zf[t] << ")");
    }
  }
  BOOST_TEST_MESSAGE((t == 0 ? "float32: " : "float64: ")
                     << checked << " designs checked, " << skipped << " unstable in this precision skipped");
  BOOST_TEST(checked > 150);
}

}  // namespace recur_test
