#pragma once
// The error gain of an IIR filter, for the tolerances of the GPU lfilter
// tests (test_lfilter_gpu.cu, device level; test_filter_cuda.cpp, host API).
#include <algorithm>
#include <cmath>
#include <vector>

namespace recur_test {

// G = sum over k of ||A^k||_inf for the companion matrix A of the normalised
// a (first column -a[1:], ones above the diagonal). Any evaluation order of
// the recurrence (sequential or a scan) commits errors of order eps in the
// state; they reach the output amplified by at most G.
inline double error_gain(std::vector<double> const& a) {
  int const k = static_cast<int>(a.size()) - 1;
  if (k <= 0) return 1;
  std::vector<double> m(k * k, 0.0), pw(k * k, 0.0);
  for (int j = 0; j < k; ++j) {
    m[j * k] = -a[j + 1] / a[0];
    if (j + 1 < k) m[j * k + j + 1] = 1;
    pw[j * k + j] = 1;
  }
  double g = 0;
  for (int step = 0; step < 1000000; ++step) {
    double norm = 0;
    for (int r = 0; r < k; ++r) {
      double row = 0;
      for (int c = 0; c < k; ++c) row += std::fabs(pw[r * k + c]);
      norm = std::max(norm, row);
    }
    g += norm;
    if (norm < 1e-18) break;
    std::vector<double> next(k * k, 0.0);
    for (int r = 0; r < k; ++r)
      for (int c = 0; c < k; ++c)
        for (int q = 0; q < k; ++q) next[r * k + c] += pw[r * k + q] * m[q * k + c];
    pw = next;
  }
  return g;
}

}  // namespace recur_test
