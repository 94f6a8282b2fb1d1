#pragma once
// Integer DPCM inputs shared by the reference and host suites: samples with
// the extremes (so residuals wrap around) and a set of predictors.
#include <cstdint>
#include <limits>
#include <vector>

#include "random.hpp"

namespace recur_test {

// Random samples with a good share of the extremes and their neighbours, so
// residuals wrap around.
template <class S>
S random_sample(rng& r) {
  using lim = std::numeric_limits<S>;
  switch (r.next() % 4) {
    case 0:
      return static_cast<S>(lim::min() + static_cast<S>(r.next() % 3));
    case 1:
      return static_cast<S>(lim::max() - static_cast<S>(r.next() % 3));
    default:
      return static_cast<S>(r.next());  // modular since C++20
  }
}

struct predictor {
  std::vector<std::int64_t> c;
  int shift;
};

// Previous sample; linear extrapolation; a fixed-point third-order predictor
// (x1 + x2 - x3/2 ... in 1/4 units); one with large coefficients; none.
inline std::vector<predictor> const predictors = {
    {{1}, 0}, {{2, -1}, 0}, {{3, -3, 1}, 0}, {{5, -2, 1}, 2}, {{-7, 1 << 20, 12345}, 19}, {{}, 0}};

}  // namespace recur_test
