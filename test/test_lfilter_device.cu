// recur::device::lfilter (kernels/dispatch/dispatch_lfilter.cuh, the
// device-level header) against the sequential DF2T reference (in double) and
// against analytic impulse and step responses, for orders 0 to 8, one
// sequence and batches in every layout, with and without initial and final
// state, in place, f32 and f64. (The host API's lfilter on the GPU:
// test_lfilter_cuda.cpp.)
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>
#include <recur/kernels/dispatch/dispatch_lfilter.cuh>
#include <recur/kernels/dispatch/lti_instances.cuh>
#include <recur/reference/lfilter.hpp>
#include "common/cuda_memory.hpp"
#include "common/filters.hpp"
#include "common/layouts.hpp"
#include "common/random.hpp"

// The kernels are librecur's (its dispatch_lti instances, one unit per type
// and state size), so that this unit does not compile them all again.
RECUR_LTI_ALL_INSTANCES(extern, float)
RECUR_LTI_ALL_INSTANCES(extern, double)

namespace {

using recur::layout;

using recur_test::dbuf;
using recur_test::extent;
using recur_test::upload;

// A stable filter of the given order: real or conjugate poles of radius up to
// 0.95 (recur_test::stable_poly), random numerator; a[0] in [1, 3), not 1, so
// normalisation is exercised.
std::pair<std::vector<double>, std::vector<double>> random_filter(int order, recur_test::rng& g) {
  std::vector<double> a = recur_test::stable_poly(g, order, 0.0, 0.95),
                      b(static_cast<std::size_t>(order) + 1);
  double const a0 = 1.0 + 2.0 * g.uniform();
  for (double& x : a) x *= a0;
  for (double& x : b) x = g.symmetric();
  return {b, a};
}

using recur_test::error_gain;

template <class T>
struct filter_run {
  std::vector<T> y, zf;
};

template <class T>
filter_run<T> run_gpu(std::vector<T> const& b, std::vector<T> const& a, std::vector<T> const& x,
                      layout const& lay, std::vector<T> const* zi, bool want_zf, bool in_place) {
  int const order = static_cast<int>(std::max(a.size(), b.size())) - 1;
  auto const dx = upload(x), dy = upload(x);  // gaps of y keep x's values, as the reference's copy
  auto const dzi = upload(zi ? *zi : std::vector<T>{});
  auto const dzf = upload(std::vector<T>(static_cast<std::size_t>(lay.count * order), T(-7)));
  T* y = in_place ? dx.p : dy.p;
  std::size_t bytes = 0;
  RECUR_TEST_CUDA_OK(recur::device::lfilter<T>(nullptr, bytes, b, a, dx.p, y, lay, zi ? dzi.p : nullptr,
                                               want_zf ? dzf.p : nullptr));
  void* temp = nullptr;
  RECUR_TEST_CUDA_OK(cudaMalloc(&temp, bytes));
  RECUR_TEST_CUDA_OK(recur::device::lfilter<T>(temp, bytes, b, a, dx.p, y, lay, zi ? dzi.p : nullptr,
                                               want_zf ? dzf.p : nullptr));
  RECUR_TEST_CUDA_OK(cudaDeviceSynchronize());
  RECUR_TEST_CUDA_OK(cudaFree(temp));
  filter_run<T> r;
  r.y = (in_place ? dx : dy).read();
  if (want_zf) r.zf = dzf.read();
  return r;
}

template <class T>
void check_against_reference(int order, layout const& lay, bool with_zi, bool with_zf, bool in_place,
                             unsigned seed) {
  recur_test::rng g(seed);
  auto const [bd, ad] = random_filter(order, g);
  std::vector<T> b(bd.begin(), bd.end()), a(ad.begin(), ad.end());
  std::vector<T> x = recur_test::random_values<T>(g, static_cast<std::size_t>(extent(lay)));
  std::vector<T> zi = recur_test::random_values<T>(g, static_cast<std::size_t>(lay.count * order));
  // Reference in double on the same (rounded) coefficients and data.
  std::vector<double> xd(x.begin(), x.end()), yd = xd, zid(zi.begin(), zi.end()),
                                              zfd(static_cast<std::size_t>(lay.count * order));
  std::vector<double> bb(b.begin(), b.end()), aa(a.begin(), a.end());
  recur::reference::lfilter<double>(bb, aa, xd.data(), yd.data(), lay, with_zi ? zid.data() : nullptr,
                                    zfd.data());
  auto const got = run_gpu<T>(b, a, x, lay, with_zi ? &zi : nullptr, with_zf, in_place);
  // Tolerance: a few eps times the error gain of the filter, times the size
  // of the signal (output, input, initial state).
  double scale = 1;
  for (double v : yd) scale = std::max(scale, std::fabs(v));
  for (double v : zid) scale = std::max(scale, std::fabs(v));
  double const eps = sizeof(T) == 4 ? 0x1p-24 : 0x1p-53;
  double const tol = 16 * eps * (order + 1) * error_gain(aa) * scale * (1 + std::fabs(bb[0]));
  double worst = 0;
  std::int64_t where = -1;
  for (std::size_t i = 0; i < yd.size(); ++i) {
    double const e = std::fabs(double(got.y[i]) - yd[i]);
    if (!(e <= worst)) {
      worst = e;
      where = static_cast<std::int64_t>(i);
    }
  }
  BOOST_TEST(worst <= tol, "order " << order << " n " << lay.n << " count " << lay.count << " strides "
                                    << lay.element_stride << "/" << lay.batch_stride << (with_zi ? " zi" : "")
                                    << (in_place ? " in place" : "") << ": y error " << worst << " at "
                                    << where << " (tolerance " << tol << ")");
  if (with_zf) {
    double zw = 0;
    for (std::size_t i = 0; i < zfd.size(); ++i) zw = std::max(zw, std::fabs(double(got.zf[i]) - zfd[i]));
    BOOST_TEST(zw <= tol, "order " << order << " n " << lay.n << ": zf error " << zw);
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(lfilter_device)

BOOST_AUTO_TEST_CASE(single_sequence_orders_0_to_8) {
  unsigned seed = 1;
  for (int order = 0; order <= 8; ++order)
    for (std::int64_t n : {1, 2, 5, 1000, 2047, 2048, 2049, 4095, 4096, 4097, 100003, 1 << 20}) {
      check_against_reference<float>(order, layout::contiguous(n), false, true, false, seed++);
      check_against_reference<float>(order, layout::contiguous(n), true, true, false, seed++);
      check_against_reference<double>(order, layout::contiguous(n), true, true, false, seed++);
    }
}

BOOST_AUTO_TEST_CASE(batches_in_every_layout) {
  unsigned seed = 100;
  struct shape {
    std::int64_t n, count;
  };
  for (int order : {1, 2, 4})
    for (auto [n, count] : {shape{1, 7}, shape{3, 1000}, shape{4097, 9}, shape{1000, 300}, shape{262144, 64},
                            shape{50, 5000}, shape{9000, 4100}})
      for (layout lay : {layout::contiguous(n, count), layout::interleaved(n, count),
                         layout::strided(n, count, 2, 2 * n + 1)}) {
        check_against_reference<float>(order, lay, true, true, false, seed++);
        check_against_reference<double>(order, lay, false, true, false, seed++);
      }
}

BOOST_AUTO_TEST_CASE(in_place_and_no_state) {
  check_against_reference<float>(3, layout::contiguous(100000), true, false, true, 7);
  check_against_reference<float>(2, layout::contiguous(5000, 40), false, false, true, 8);
}

// h[k] = b0 p^k for y_i = p y_(i-1) + b0 x_i; the step response of a two-pole
// resonator converges to its DC gain b0 / (1 - a1' - a2'), computed in double.
BOOST_AUTO_TEST_CASE(analytic_responses) {
  std::int64_t const n = 4096;
  {
    double const p = 0.9, b0 = 0.5;
    std::vector<double> x(n, 0.0);
    x[0] = 1;
    auto const r = run_gpu<double>({b0}, {1.0, -p}, x, layout::contiguous(n), nullptr, false, false);
    double worst = 0;
    for (std::int64_t k = 0; k < n; ++k)
      worst = std::max(worst, std::fabs(r.y[k] - b0 * std::pow(p, double(k))));
    BOOST_TEST(worst < 1e-13, "one-pole impulse response error " << worst);
  }
  {
    double const rho = 0.95, theta = 0.3, a1 = 2 * rho * std::cos(theta), a2 = -rho * rho, b0 = 0.25;
    std::vector<float> x(n, 1.0f);
    auto const r = run_gpu<float>({float(b0)}, {1.0f, float(-a1), float(-a2)}, x, layout::contiguous(n),
                                  nullptr, false, false);
    double const dc = b0 / (1 - double(float(a1)) - double(float(a2)));
    BOOST_TEST(std::fabs(r.y[n - 1] - dc) < 1e-4 * dc,
               "two-pole step response " << r.y[n - 1] << " vs " << dc);
    // y_k = sum_{j<=k} h_j with h the impulse response of the resonator:
    // h_k = b0 rho^k sin((k+1) theta) / sin(theta).
    double s = 0, worst = 0;
    for (std::int64_t k = 0; k < n; ++k) {
      s += b0 * std::pow(rho, double(k)) * std::sin((k + 1) * theta) / std::sin(theta);
      worst = std::max(worst, std::fabs(r.y[k] - s));
    }
    BOOST_TEST(worst < 1e-4, "two-pole step response error " << worst);
  }
}

BOOST_AUTO_TEST_CASE(long_stable_filter_stays_accurate) {
  // 2^26 samples of a second-order filter, f32, against the double reference.
  check_against_reference<float>(2, layout::contiguous(std::int64_t{1} << 26), true, true, false, 99);
}

BOOST_AUTO_TEST_CASE(bad_arguments_and_empty_shapes) {
  std::size_t bytes = 0;
  float* p = nullptr;
  std::vector<float> const b{1, 2}, a{1, -0.5f}, a0{0, 1}, empty;
  BOOST_TEST(recur::device::lfilter<float>(nullptr, bytes, b, a0, p, p, layout::contiguous(8)) ==
             cudaErrorInvalidValue);
  BOOST_TEST(recur::device::lfilter<float>(nullptr, bytes, empty, a, p, p, layout::contiguous(8)) ==
             cudaErrorInvalidValue);
  std::vector<float> const long_a(10, 0.1f);
  BOOST_TEST(recur::device::lfilter<float>(nullptr, bytes, b, long_a, p, p, layout::contiguous(8)) ==
             cudaErrorNotSupported);
  // n == 0: zf = zi.
  auto const zi = upload(std::vector<float>{1, 2, 3}), zf = upload(std::vector<float>{0, 0, 0});
  BOOST_TEST(recur::device::lfilter<float>(nullptr, bytes, b, a, p, p, layout::contiguous(0, 3), zi.p,
                                           zf.p) == cudaSuccess);
  void* temp = nullptr;
  RECUR_TEST_CUDA_OK(cudaMalloc(&temp, bytes));
  RECUR_TEST_CUDA_OK(
      recur::device::lfilter<float>(temp, bytes, b, a, p, p, layout::contiguous(0, 3), zi.p, zf.p));
  RECUR_TEST_CUDA_OK(cudaDeviceSynchronize());
  RECUR_TEST_CUDA_OK(cudaFree(temp));
  BOOST_TEST((zf.read() == std::vector<float>{1, 2, 3}));
}

BOOST_AUTO_TEST_SUITE_END()
