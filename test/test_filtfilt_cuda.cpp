// recur::filtfilt and sosfiltfilt through recur::cuda{stream} (GPU lfilter
// and sosfilt passes over an extended copy, lib/cuda/filtfilt_cuda.cu),
// against recur::host (whose results test_filtfilt.cpp checks bit for bit
// against scipy's algorithm). The GPU filter agrees with the sequential one
// to rounding amplified by the filter's error gain (test_filter_cuda.cpp);
// the filters here are mild (poles inside radius 0.8), so a relative error of
// 1e-3 (f32) or 1e-9 (f64) of the output's size catches a lost state, a
// wrong padding or a shifted sample, errors of order one. Cases: contiguous,
// interleaved and strided layouts, every padtype, in place, the outputs
// poisoned first (every element written, gaps untouched); errors: order 9,
// host memory, n <= padlen, with nothing written.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <boost/test/unit_test.hpp>
#include <recur/filter.hpp>

#include "common/linrec_harness.hpp"

using recur::filtfilt_options;
using recur::filtfilt_pad;
using recur::layout;
using recur_test::layout_kind;
using recur_test::rng;
using recur_test::seed_for;

namespace {

template <class T>
struct device_array {
  T* p = nullptr;
  std::size_t size = 0;
  explicit device_array(std::vector<T> const& h) : size(h.size()) {
    BOOST_REQUIRE(cudaMalloc(reinterpret_cast<void**>(&p), std::max<std::size_t>(1, size) * sizeof(T)) ==
                  cudaSuccess);
    BOOST_REQUIRE(cudaMemcpy(p, h.data(), size * sizeof(T), cudaMemcpyHostToDevice) == cudaSuccess);
  }
  device_array(device_array const&) = delete;
  ~device_array() { cudaFree(p); }
  std::vector<T> get() const {
    std::vector<T> h(size);
    BOOST_REQUIRE(cudaMemcpy(h.data(), p, size * sizeof(T), cudaMemcpyDeviceToHost) == cudaSuccess);
    return h;
  }
};

template <class T>
void compare(std::vector<T> const& got, std::vector<T> const& want, layout const& lay,
             std::vector<T> const& gaps) {
  std::vector<bool> in(got.size(), false);
  double scale = 0;
  for (std::int64_t k = 0; k < lay.count; ++k)
    for (std::int64_t i = 0; i < lay.n; ++i) {
      in[lay.offset(i, k)] = true;
      scale = std::max(scale, std::fabs(static_cast<double>(want[lay.offset(i, k)])));
    }
  double const tol = (sizeof(T) == 4 ? 1e-3 : 1e-9) * std::max(scale, 1.0);
  std::int64_t bad = 0, touched = 0;
  for (std::size_t p = 0; p < got.size(); ++p) {
    if (in[p])
      bad += !(std::fabs(static_cast<double>(got[p]) - static_cast<double>(want[p])) <= tol);
    else
      touched += std::memcmp(&got[p], &gaps[p], sizeof(T)) != 0;
  }
  BOOST_TEST(bad == 0);
  BOOST_TEST(touched == 0);
}

template <class T>
void gpu_matches_host(std::uint64_t seed) {
  rng r(seed);
  std::vector<T> const b = {T(0.2), T(0.3), T(-0.1)}, a = {T(1.5), T(-0.6), T(0.12)};
  std::vector<T> const sos = {T(0.5), T(0.2), T(0.1), T(1), T(-0.5), T(0.1),
                              T(1),   T(-1),  T(0.5), T(1), T(0.3),  T(0.2)};
  cudaStream_t stream = nullptr;
  BOOST_REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
  for (layout_kind kind : {layout_kind::contiguous, layout_kind::interleaved, layout_kind::strided_gaps})
    for (std::int64_t n : {16, 1001, 70001})
      for (std::int64_t count : {1, 5})
        for (filtfilt_pad pad :
             {filtfilt_pad::odd, filtfilt_pad::even, filtfilt_pad::constant, filtfilt_pad::none})
          for (bool sections : {false, true})
            for (bool in_place : {false, true}) {
              layout const lay = recur_test::make_layout(kind, n, count);
              std::vector<T> x(static_cast<std::size_t>(recur_test::extent(lay)));
              for (auto& v : x) v = static_cast<T>(r.symmetric());
              std::vector<T> const poison(x.size(), std::numeric_limits<T>::quiet_NaN());
              std::vector<T> want = in_place ? x : poison;
              filtfilt_options const opt{pad, {}};
              if (sections)
                recur::sosfiltfilt(recur::host{}, sos, x.data(), want.data(), lay, opt);
              else
                recur::filtfilt(recur::host{}, b, a, x.data(), want.data(), lay, opt);
              device_array<T> dx(x), dy(in_place ? x : poison);
              T* const out = in_place ? dx.p : dy.p;
              if (sections)
                recur::sosfiltfilt(recur::cuda{stream}, sos, dx.p, out, lay, opt);
              else
                recur::filtfilt(recur::cuda{stream}, b, a, dx.p, out, lay, opt);
              BOOST_REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
              BOOST_TEST_CONTEXT(recur_test::name(kind)
                                 << " n=" << n << " count=" << count << " pad=" << static_cast<int>(pad)
                                 << " sos=" << sections << " in_place=" << in_place) {
                compare<T>(in_place ? dx.get() : dy.get(), want, lay, in_place ? x : poison);
                if (!in_place) BOOST_TEST((dx.get() == x));
              }
            }
  cudaStreamDestroy(stream);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(filtfilt_cuda)

BOOST_AUTO_TEST_CASE(f32_matches_host) { gpu_matches_host<float>(seed_for(951)); }
BOOST_AUTO_TEST_CASE(f64_matches_host) { gpu_matches_host<double>(seed_for(952)); }

BOOST_AUTO_TEST_CASE(errors_write_nothing) {
  std::vector<double> const x(64, 1.0), minus(64, -7.0);
  device_array<double> dx(x), dy(minus);
  std::vector<double> const b9(10, 0.1), a = {1, -0.5};
  recur::cuda const ex{};
  BOOST_CHECK_THROW(recur::filtfilt(ex, b9, a, dx.p, dy.p, 64), recur::invalid_argument);
  BOOST_CHECK_THROW(recur::filtfilt(ex, a, a, x.data(), dy.p, 64), recur::invalid_argument);
  BOOST_CHECK_THROW(recur::filtfilt(ex, a, a, dx.p, dy.p, 6), recur::invalid_argument);
  BOOST_CHECK_THROW(recur::sosfiltfilt(ex, std::vector<double>{1, 0, 0, 1, -2, 1}, dx.p, dy.p, 64),
                    recur::invalid_argument);
  BOOST_REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  BOOST_TEST((dy.get() == minus));
}

BOOST_AUTO_TEST_SUITE_END()
