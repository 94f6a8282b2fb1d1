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
#include "common/lfilter_accuracy.hpp"
#include "common/lti_emulation.hpp"
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

namespace designs = recur_test::lfilter_designs;

// One sequence through dispatch_lti with `sys` (zero state).
template <class T, class System>
std::vector<T> run_system(System const& sys, std::vector<T> const& x) {
  auto const dx = upload(x);
  dbuf<T> dy(x.size());
  layout const lay = layout::contiguous(static_cast<std::int64_t>(x.size()));
  std::size_t bytes = 0;
  RECUR_TEST_CUDA_OK(recur::kernels::dispatch_lti<T>(nullptr, bytes, sys, dx.p, dy.p, lay, nullptr, nullptr,
                                                     System::K, nullptr));
  void* temp = nullptr;
  RECUR_TEST_CUDA_OK(cudaMalloc(&temp, bytes));
  RECUR_TEST_CUDA_OK(recur::kernels::dispatch_lti<T>(temp, bytes, sys, dx.p, dy.p, lay, nullptr, nullptr,
                                                     System::K, nullptr));
  RECUR_TEST_CUDA_OK(cudaDeviceSynchronize());
  RECUR_TEST_CUDA_OK(cudaFree(temp));
  return dy.read();
}

// device::lfilter of a design against dispatch_lti with the form its plan
// names, bit for bit (zero state); returns whether that form is sections.
template <class T, int K>
bool check_form(designs::design const& d) {
  namespace k = recur::kernels;
  std::vector<T> const x = recur_test::design_input<T>();
  std::vector<T> const b(d.b, d.b + K + 1), a(d.a, d.a + K + 1);
  auto const got =
      run_gpu<T>(b, a, x, layout::contiguous(static_cast<std::int64_t>(x.size())), nullptr, false, false);
  auto const sys = recur_test::lfilter_companion<T, K>(b.data(), a.data());
  auto const plan = k::lfilter_plan_sections<T, K>(sys, k::lti_power_chain<K>(sys, k::lti_power_top<T, K>()));
  auto const want = plan.use ? run_system<T>(plan.sys, x) : run_system<T>(sys, x);
  BOOST_TEST(got.y == want, d.name << (sizeof(T) == 4 ? " f32" : " f64") << ": not the "
                                   << (plan.use ? "sections'" : "companion form's") << " bits");
  return plan.use;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(lfilter_device)

// Orders 1 and 2 and higher orders whose companion powers stay small run
// the companion system, as before the sections form existed; the rest run
// the plan's cascade.
BOOST_AUTO_TEST_CASE(forms_bit_for_bit) {
  BOOST_TEST(!(check_form<float, 2>(recur_test::find_design("butter(2, 0.1, 'lowpass')"))));
  BOOST_TEST(!(check_form<double, 1>(recur_test::find_design("cheby1(1, 1, 0.3, 'highpass')"))));
  BOOST_TEST(!(check_form<float, 3>(recur_test::find_design("butter(3, 0.3, 'lowpass')"))));
  BOOST_TEST(!(check_form<double, 4>(recur_test::find_design("bessel(4, 0.3, 'lowpass')"))));
  BOOST_TEST((check_form<float, 8>(recur_test::find_design("butter(8, 0.1, 'lowpass')"))));
  BOOST_TEST((check_form<double, 8>(recur_test::find_design("butter(8, 0.1, 'lowpass')"))));
  BOOST_TEST((check_form<float, 7>(recur_test::find_design("cheby2(7, 40, 0.1, 'highpass')"))));
  BOOST_TEST((check_form<double, 5>(recur_test::find_design("ellip(5, 1, 40, 0.1, 'lowpass')"))));
}

// The CPU emulation of the companion scan predicts the device's error: on
// designs whose companion powers peak high (errors 8 to 2e4
// times the sequential one's) both errors agree within a factor of 16, in
// f32 and f64. (Not bit for bit: nvcc contracts the step into fmas.)
BOOST_AUTO_TEST_CASE(emulation_predicts_the_companion_scan_error) {
  auto check = [&]<class T, int K>(designs::design const& d, T, std::integral_constant<int, K>) {
    std::vector<T> const x = recur_test::design_input<T>();
    std::vector<long double> zf;
    auto const ref = recur_test::design_reference<T>(d, x, nullptr, zf);
    std::vector<T> const b(d.b, d.b + K + 1), a(d.a, d.a + K + 1);
    auto const sys = recur_test::lfilter_companion<T, K>(b.data(), a.data());
    auto const dev = run_system<T>(sys, x);
    std::vector<T> emu(x.size());
    recur_test::emulate_lti<T>(sys, x.data(), emu.data(), static_cast<std::int64_t>(x.size()),
                               static_cast<T const*>(nullptr), static_cast<T*>(nullptr));
    double const ed = recur_test::relative_error<T>(dev, ref), ee = recur_test::relative_error<T>(emu, ref);
    BOOST_TEST_MESSAGE(d.name << (sizeof(T) == 4 ? " f32" : " f64") << ": device " << ed << ", emulation "
                              << ee);
    BOOST_TEST((ed <= 16 * ee && ee <= 16 * ed), d.name << ": device " << ed << ", emulation " << ee);
  };
  auto const& b8 = recur_test::find_design("butter(8, 0.1, 'lowpass')");
  check(b8, 0.0f, std::integral_constant<int, 8>{});
  check(b8, 0.0, std::integral_constant<int, 8>{});
  auto const& c6 = recur_test::find_design("cheby2(6, 40, 0.1, 'lowpass')");
  check(c6, 0.0f, std::integral_constant<int, 6>{});
  check(c6, 0.0, std::integral_constant<int, 6>{});
  auto const& e4 = recur_test::find_design("ellip(4, 1, 40, 0.1, 'lowpass')");
  check(e4, 0.0, std::integral_constant<int, 4>{});
}

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
