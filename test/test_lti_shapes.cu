// The LTI agent (kernels/agent/agent_lti.cuh) at explicit tile shapes, the
// ones the tuned policy does not pick for the systems of the public tests:
// with and without the output-correcting determination, unit and general
// element stride, forgetting and long-memory filters, initial and final
// state; against each System's step run sequentially in double on the host.
#include <cmath>
#include <complex>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>
#include <recur/kernels/dispatch/dispatch_lti.cuh>
#include "common/cuda_memory.hpp"
#include "common/filters.hpp"

namespace {

using recur::layout;
namespace k = recur::kernels;

using recur_test::upload;

// Multiply polynomials (coefficients of z^-k).
std::vector<double> poly_mul(std::vector<double> const& p, std::vector<double> const& q) {
  std::vector<double> r(p.size() + q.size() - 1, 0.0);
  for (std::size_t i = 0; i < p.size(); ++i)
    for (std::size_t j = 0; j < q.size(); ++j) r[i + j] += p[i] * q[j];
  return r;
}

// A 4-section cascade with resonant sections of radius 0.5-0.8 (forgets
// within a tile in f32, not in f64), and its error gain: the gain of the
// product denominator times the numerators' sizes.
template <class T>
k::sos_system<T, 4> cascade(double& gain) {
  k::sos_system<T, 4> s{};
  std::vector<double> den{1.0};
  double num = 1;
  for (int j = 0; j < 4; ++j) {
    double const r = 0.8 - 0.1 * j, t = 0.3 + 0.7 * j;
    double const b[3] = {0.4, -0.3, 0.2 + 0.1 * j}, a[3] = {1, -2 * r * std::cos(t), r * r};
    for (int c = 0; c < 3; ++c) s.b[j][c] = T(b[c]), s.a[j][c] = T(a[c]);
    den = poly_mul(den, {1.0, double(s.a[j][1]), double(s.a[j][2])});
    num *= 1 + std::fabs(b[0]) + std::fabs(b[1]) + std::fabs(b[2]);
  }
  gain = recur_test::error_gain(den) * num;
  return s;
}

// Order 2, real poles 0.999 and -0.5: long memory (A^4096 is far from zero),
// so walks go past the first predecessor.
template <class T>
k::lfilter_system<T, 2> slow_filter(double& gain) {
  k::lfilter_system<T, 2> s{};
  double const a[3] = {1, -(0.999 - 0.5), -0.999 * 0.5}, b[3] = {0.05, 0.02, -0.01};
  for (int c = 0; c < 3; ++c) s.a[c] = T(a[c]), s.b[c] = T(b[c]);
  gain = recur_test::error_gain({1.0, double(s.a[1]), double(s.a[2])}) * 1.08;
  return s;
}

template <class T, class Policy, class System>
void check(System const& sys, double gain, layout const& lay, bool with_state, unsigned seed) {
  constexpr int K = System::K;
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::int64_t const extent = lay.n == 0 || lay.count == 0 ? 0 : lay.offset(lay.n - 1, lay.count - 1) + 1;
  std::vector<T> x(static_cast<std::size_t>(extent)), zi(static_cast<std::size_t>(lay.count * K));
  for (auto& v : x) v = T(u(g));
  for (auto& v : zi) v = T(u(g));
  // Reference: the System's step in double on the rounded coefficients.
  auto const hs = sys.template cast<double>();
  std::vector<double> want(x.begin(), x.end()), want_zf(zi.size());
  double scale = 1;
  for (std::int64_t q = 0; q < lay.count; ++q) {
    double z[K];
    for (int e = 0; e < K; ++e) z[e] = with_state ? double(zi[q * K + e]) : 0.0;
    for (std::int64_t i = 0; i < lay.n; ++i) {
      auto const o = static_cast<std::size_t>(lay.offset(i, q));
      want[o] = hs.step(z, double(x[o]));
      scale = std::max(scale, std::fabs(want[o]));
    }
    for (int e = 0; e < K; ++e) want_zf[q * K + e] = z[e];
  }
  auto const dx = upload(x), dy = upload(std::vector<T>(x.size(), T(-5))), dzi = upload(zi),
             dzf = upload(std::vector<T>(zi.size(), T(-7)));
  std::size_t bytes = 0;
  RECUR_TEST_CUDA_OK((k::dispatch_lti<T, Policy>(nullptr, bytes, sys, dx.p, dy.p, lay,
                                                 with_state ? dzi.p : nullptr, dzf.p, K, nullptr)));
  void* temp = nullptr;
  RECUR_TEST_CUDA_OK(cudaMalloc(&temp, bytes));
  RECUR_TEST_CUDA_OK((k::dispatch_lti<T, Policy>(temp, bytes, sys, dx.p, dy.p, lay,
                                                 with_state ? dzi.p : nullptr, dzf.p, K, nullptr)));
  RECUR_TEST_CUDA_OK(cudaDeviceSynchronize());
  RECUR_TEST_CUDA_OK(cudaFree(temp));
  auto const y = dy.read();
  auto const zf = dzf.read();
  double const eps = sizeof(T) == 4 ? 0x1p-24 : 0x1p-53;
  double const tol = 16 * eps * (K + 1) * gain * scale;
  double worst = 0, zworst = 0;
  std::int64_t where = -1;
  for (std::int64_t q = 0; q < lay.count; ++q)
    for (std::int64_t i = 0; i < lay.n; ++i) {
      auto const o = static_cast<std::size_t>(lay.offset(i, q));
      double const e = std::fabs(double(y[o]) - want[o]);
      if (!(e <= worst)) worst = e, where = static_cast<std::int64_t>(o);
    }
  for (std::size_t i = 0; i < zf.size(); ++i) {
    double const e = std::fabs(double(zf[i]) - want_zf[i]);
    if (!(e <= zworst)) zworst = e;
  }
  std::string const what = "block " + std::to_string(Policy::block) + " items " +
                           std::to_string(Policy::items) + (Policy::correct ? " corrected" : "") + " K " +
                           std::to_string(K) + " n " + std::to_string(lay.n) + " count " +
                           std::to_string(lay.count) + " stride " + std::to_string(lay.element_stride) +
                           (with_state ? " zi" : "") + (sizeof(T) == 4 ? " f32" : " f64");
  BOOST_TEST(worst <= tol, what << ": y error " << worst << " at " << where << " (tolerance " << tol << ")");
  BOOST_TEST(zworst <= tol, what << ": zf error " << zworst << " (tolerance " << tol << ")");
  // Gaps between strided elements are not written.
  if (lay.element_stride > 1 && lay.n > 1)
    BOOST_TEST(y[static_cast<std::size_t>(lay.offset(0, 0) + 1)] == T(-5), what << ": a gap was written");
}

template <class T, class Policy, class System>
void sweep(System const& sys, double gain, unsigned& seed) {
  constexpr std::int64_t tile = Policy::block * Policy::items;
  for (std::int64_t n :
       {std::int64_t{1}, std::int64_t{2}, std::int64_t{Policy::items + 1}, std::int64_t{Policy::items + 3},
        tile - 1, tile, tile + 1, 3 * tile + 17, std::int64_t{100003}}) {
    check<T, Policy>(sys, gain, layout::contiguous(n), true, seed++);
    bool const with_state = seed % 2 == 0;
    check<T, Policy>(sys, gain, layout::contiguous(n, 3), with_state, seed++);
  }
  check<T, Policy>(sys, gain, layout::strided(5000, 3, 2, 2 * 5000 + 1), true, seed++);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(lti_shapes)

BOOST_AUTO_TEST_CASE(shapes_f32) {
  unsigned seed = 1;
  double g_sos = 0, g_slow = 0;
  auto const sos = cascade<float>(g_sos);
  auto const slow = slow_filter<float>(g_slow);
  using k::lti_shape;
  sweep<float, lti_shape<128, 32, 128, 3, true>>(sos, g_sos, seed);
  sweep<float, lti_shape<64, 16, 128, 4>>(sos, g_sos, seed);
  sweep<float, lti_shape<128, 16, 128, 8, true>>(slow, g_slow, seed);
  sweep<float, lti_shape<128, 32, 128, 3>>(slow, g_slow, seed);
  sweep<float, lti_shape<256, 16, 128, 6, true>>(slow, g_slow, seed);
  // The f32 defaults: states of up to 4 values that forget (corrected), and
  // long memory (tiles of 8192 samples), at both filters; the cascade's own
  // default shape (128 x 32 at 3, plain) runs in the public tests.
  sweep<float, lti_shape<128, 32, 128, 6, true>>(slow, g_slow, seed);
  sweep<float, lti_shape<256, 32, 128, 3>>(slow, g_slow, seed);
  sweep<float, lti_shape<256, 32, 128, 3>>(sos, g_sos, seed);
}

BOOST_AUTO_TEST_CASE(shapes_f64) {
  unsigned seed = 1000;
  double g_sos = 0, g_slow = 0;
  auto const sos = cascade<double>(g_sos);
  auto const slow = slow_filter<double>(g_slow);
  using k::lti_shape;
  sweep<double, lti_shape<128, 32, 128, 2>>(sos, g_sos, seed);
  sweep<double, lti_shape<128, 16, 128, 4, true>>(slow, g_slow, seed);
}

BOOST_AUTO_TEST_SUITE_END()
