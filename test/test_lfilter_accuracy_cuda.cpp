// recur::lfilter through recur::cuda on every filter scipy.signal designs in
// (b, a) form of orders 1-8 (test/data/lfilter_designs.hpp): the result's
// error against the sequential filter of the designed coefficients in long
// double is at most 10 times scipy's own error in the same precision
// (common/lfilter_accuracy.hpp), f32 and f64, from a zero state, from
// zi = lfilter_zi(b, a) x[0] with zf, and in two calls. Orders 3-8 whose
// companion powers peak run as second-order sections
// (kernels/dispatch/lfilter_sections.cuh); test_lti_emulation.cpp makes the
// same checks on the CPU emulation of the GPU's arithmetic. Also a batch of
// sequences with their own initial states, each mapped to and from the
// sections' states. Host code only.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <boost/test/unit_test.hpp>
#include <recur/filter.hpp>
#include <recur/reference/lfilter.hpp>

#include "common/cuda_memory.hpp"
#include "common/lfilter_accuracy.hpp"

namespace {

using recur::layout;
using recur_test::finish;
using recur_test::poisoned;
using recur_test::settle;
using recur_test::test_stream;
using recur_test::upload;
namespace designs = recur_test::lfilter_designs;

// recur_test::check_designs's run: one sequence through the host API on the
// GPU; outputs and zf start poisoned.
template <class T>
void gpu_lfilter(std::vector<T> const& b, std::vector<T> const& a, T const* x, T* y, std::int64_t n,
                 T const* zi, T* zf) {
  std::size_t const m = a.size() - 1;
  auto const dx = upload(std::vector<T>(x, x + n));
  auto const dzi = upload(zi ? std::vector<T>(zi, zi + m) : std::vector<T>{});
  auto dy = poisoned<T>(static_cast<std::size_t>(n)), dzf = poisoned<T>(m);
  settle();
  recur::filter_options<T> opt;
  opt.init = zi ? dzi.p : nullptr;
  opt.final_state = zf ? dzf.p : nullptr;
  recur::lfilter<T>(recur::cuda{test_stream()}, b, a, dx.p, dy.p, layout::contiguous(n), opt);
  finish();
  auto const hy = dy.read();
  std::copy(hy.begin(), hy.end(), y);
  if (zf) {
    auto const hz = dzf.read();
    std::copy(hz.begin(), hz.end(), zf);
  }
}

// butter(8, 0.1) (4 sections, maps from and to a DF2T state of 8 values) on
// `count` sequences in `lay`, sequence k from zi_k = (k + 1) lfilter_zi x[0]
// (x the designs' input, the same for every sequence): each sequence's y
// and zf within the designs' bound.
template <class T>
void check_batch(bool interleaved) {
  constexpr int t = sizeof(T) == 4 ? 0 : 1;
  constexpr double eps = std::numeric_limits<T>::epsilon();
  designs::design const* d = nullptr;
  for (auto const& e : designs::designs)
    if (std::string(e.name) == "butter(8, 0.1, 'lowpass')") d = &e;
  BOOST_TEST_REQUIRE(d != nullptr);
  int const m = d->order;
  std::int64_t const n = designs::length, count = 3;
  layout const lay = interleaved ? layout::interleaved(n, count) : layout::contiguous(n, count);
  std::vector<T> const x = recur_test::design_input<T>();
  std::vector<double> const zd = recur::reference::lfilter_zi<double>(
      std::vector<double>(d->b, d->b + m + 1), std::vector<double>(d->a, d->a + m + 1));
  std::vector<T> xs(static_cast<std::size_t>(n * count)), zi(static_cast<std::size_t>(m * count));
  for (std::int64_t k = 0; k < count; ++k) {
    for (std::int64_t i = 0; i < n; ++i) xs[lay.offset(i, k)] = x[i];
    for (int j = 0; j < m; ++j) zi[k * m + j] = static_cast<T>((k + 1) * zd[j] * double(x[0]));
  }
  auto const dx = upload(xs), dzi = upload(zi);
  auto dzf = poisoned<T>(zi.size());
  settle();
  std::vector<T> const b(d->b, d->b + m + 1), a(d->a, d->a + m + 1);
  recur::filter_options<T> opt;
  opt.init = dzi.p;
  opt.final_state = dzf.p;
  recur::lfilter<T>(recur::cuda{test_stream()}, b, a, dx.p, dx.p, lay, opt);  // in place
  finish();
  auto const y = dx.read(), zf = dzf.read();
  for (std::int64_t k = 0; k < count; ++k) {
    std::vector<long double> zf_ref;
    auto const ref = recur_test::design_reference<T>(*d, x, zi.data() + k * m, zf_ref);
    std::vector<T> yk(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) yk[i] = y[lay.offset(i, k)];
    double const e = recur_test::relative_error<T>(yk, ref),
                 ez = recur_test::relative_error<T>(std::span<T const>(zf.data() + k * m, m), zf_ref);
    BOOST_TEST(e <= 10 * std::max(d->err_zi[t], eps), "sequence " << k << ": error " << e);
    BOOST_TEST(ez <= 10 * std::max({d->err_zf[t], d->err_zi[t], eps}),
               "sequence " << k << ": zf error " << ez);
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(lfilter_accuracy_cuda)

BOOST_AUTO_TEST_CASE(designs_within_10x_of_scipy_f32) {
  recur_test::check_designs<float>(gpu_lfilter<float>);
}

BOOST_AUTO_TEST_CASE(designs_within_10x_of_scipy_f64) {
  recur_test::check_designs<double>(gpu_lfilter<double>);
}

BOOST_AUTO_TEST_CASE(batches_map_each_sequence_state) {
  check_batch<float>(false);
  check_batch<float>(true);
  check_batch<double>(false);
  check_batch<double>(true);
}

BOOST_AUTO_TEST_SUITE_END()
