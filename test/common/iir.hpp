#pragma once
// lfilter or sosfilt as one value, for tests that run both the same way
// (test_filter_adjoint.cpp, test_filter_adjoint_cuda.cpp): b and a, or sos
// rows, run on either executor or by the sequential reference. No fmt:
// nvcc-compiled tests may include it.
#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <recur/filter.hpp>
#include <recur/reference/lfilter.hpp>

#include "filters.hpp"
#include "random.hpp"

namespace recur_test {

template <class T>
struct iir {
  std::vector<T> b, a, sos;  // sos non-empty: sosfilt

  // real_pole_filter(r, nb, poles, radius).
  static iir filter(rng& r, int nb, int poles, double radius) {
    iir f;
    real_pole_filter(r, nb, poles, radius, f.b, f.a);
    return f;
  }
  // `sections` rows, each real_pole_filter(r, 3, 2, radius).
  static iir cascade(rng& r, int sections, double radius) {
    iir f;
    for (int j = 0; j < sections; ++j) {
      std::vector<T> b, a;
      real_pole_filter(r, 3, 2, radius, b, a);
      f.sos.insert(f.sos.end(), b.begin(), b.end());
      f.sos.insert(f.sos.end(), a.begin(), a.end());
    }
    return f;
  }

  // The state values per sequence.
  std::int64_t state() const {
    return sos.empty() ? std::int64_t(std::max(a.size(), b.size())) - 1 : std::int64_t(sos.size() / 6) * 2;
  }
  std::string name() const {
    return sos.empty() ? "lfilter nb " + std::to_string(b.size()) + " na " + std::to_string(a.size())
                       : "sosfilt " + std::to_string(sos.size() / 6) + " sections";
  }
  template <class Ex>
  void run(Ex const& ex, T const* x, T* y, recur::layout const& lay,
           recur::filter_options<T> const& opt) const {
    if (sos.empty())
      recur::lfilter(ex, std::span<T const>(b), std::span<T const>(a), x, y, lay, opt);
    else
      recur::sosfilt(ex, std::span<T const>(sos), x, y, lay, opt);
  }
  void reference(T const* x, T* y, recur::layout const& lay, T const* zi, T* zf) const {
    if (sos.empty())
      recur::reference::lfilter<T>(b, a, x, y, lay, zi, zf);
    else
      recur::reference::sosfilt<T>(sos, x, y, lay, zi, zf);
  }
};

}  // namespace recur_test
