// reference::dpcm_encode / dpcm_decode: integer (exact, wrap-around) and
// floating point.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <boost/test/unit_test.hpp>
#include <recur/reference/dpcm.hpp>
#include <recur/reference/linrec_order_k.hpp>

#include "common/dpcm.hpp"
#include "common/linrec_harness.hpp"

namespace ref = recur::reference;
using recur::layout;
using recur_test::rng;
using recur_test::seed_for;

namespace {

using recur_test::predictor;
using recur_test::predictors;
using recur_test::random_sample;

// Whether some residual left the sample range before wrapping: the round
// trip then depends on wrap-around.
template <class S>
bool wraps(predictor const& p, std::vector<S> const& x) {
  for (std::size_t i = 0; i < x.size(); ++i) {
    std::int64_t acc = 0;
    for (std::size_t j = 0; j < p.c.size() && j < i; ++j) acc += p.c[j] * x[i - 1 - j];
    std::int64_t const e = static_cast<std::int64_t>(x[i]) - (acc >> p.shift);
    if (e < std::numeric_limits<S>::min() || e > std::numeric_limits<S>::max()) return true;
  }
  return false;
}

template <class S>
void integer_round_trip(std::uint64_t seed) {
  rng r(seed);
  std::int64_t const n = 257, count = 3;
  for (auto const& p : predictors)
    for (auto const kind : {recur_test::layout_kind::contiguous, recur_test::layout_kind::interleaved}) {
      layout const lay = recur_test::make_layout(kind, n, count);
      std::vector<S> x(n * count), e(n * count), back(n * count);
      for (auto& v : x) v = random_sample<S>(r);
      ref::dpcm_encode<S>(p.c, p.shift, x.data(), e.data(), lay);
      ref::dpcm_decode<S>(p.c, p.shift, e.data(), back.data(), lay);
      BOOST_TEST(back == x, boost::test_tools::per_element());
      if (!p.c.empty() && kind == recur_test::layout_kind::contiguous) {
        std::vector<S> first(x.begin(), x.begin() + n);
        BOOST_TEST(wraps(p, first), "predictor " << p.c.size() << " never wrapped: the test lost its point");
      }
      // In place, both ways.
      std::vector<S> y = x;
      ref::dpcm_encode<S>(p.c, p.shift, y.data(), y.data(), lay);
      BOOST_TEST(y == e, boost::test_tools::per_element());
      ref::dpcm_decode<S>(p.c, p.shift, y.data(), y.data(), lay);
      BOOST_TEST(y == x, boost::test_tools::per_element());
    }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(reference_dpcm)

BOOST_AUTO_TEST_CASE(first_difference_by_hand) {
  std::vector<std::int16_t> const x = {5, 7, 4, -32768, 32767};
  std::vector<std::int16_t> e(5);
  std::vector<std::int64_t> const c = {1};
  ref::dpcm_encode<std::int16_t>(c, 0, x.data(), e.data(), layout::contiguous(5));
  // -32768 - 4 wraps to 32764; 32767 - (-32768) wraps to -1.
  BOOST_TEST(e == (std::vector<std::int16_t>{5, 2, -3, 32764, -1}), boost::test_tools::per_element());
  // init supplies x_{-1}.
  std::int16_t const init = 5;
  ref::dpcm_encode<std::int16_t>(c, 0, x.data(), e.data(), layout::contiguous(5), &init);
  BOOST_TEST(e[0] == 0);
}

BOOST_AUTO_TEST_CASE(integer_round_trip_int16) { integer_round_trip<std::int16_t>(seed_for(401)); }
BOOST_AUTO_TEST_CASE(integer_round_trip_int32) { integer_round_trip<std::int32_t>(seed_for(402)); }
BOOST_AUTO_TEST_CASE(integer_round_trip_uint8) { integer_round_trip<std::uint8_t>(seed_for(405)); }
BOOST_AUTO_TEST_CASE(integer_round_trip_uint16) { integer_round_trip<std::uint16_t>(seed_for(406)); }

// Unsigned samples wrap modulo 2^B into [0, 2^B): 0 - 255 is 1, 255 - 0 is 255.
BOOST_AUTO_TEST_CASE(uint8_wraps_by_hand) {
  std::vector<std::uint8_t> const x = {10, 7, 255, 0, 0};
  std::vector<std::uint8_t> e(5), back(5);
  std::vector<std::int64_t> const c = {1};
  ref::dpcm_encode<std::uint8_t>(c, 0, x.data(), e.data(), layout::contiguous(5));
  BOOST_TEST(e == (std::vector<std::uint8_t>{10, 253, 248, 1, 0}), boost::test_tools::per_element());
  ref::dpcm_decode<std::uint8_t>(c, 0, e.data(), back.data(), layout::contiguous(5));
  BOOST_TEST(back == x, boost::test_tools::per_element());
}

// An image-like field: rows are the sequences (layout::contiguous(width,
// height)), a smooth gradient plus noise, saturated in one corner; the
// gradient predictor leaves small residuals, and the round trip is exact.
BOOST_AUTO_TEST_CASE(image_rows_as_lanes) {
  rng r(seed_for(403));
  std::int64_t const width = 97, height = 61;
  layout const lay = layout::contiguous(width, height);
  std::vector<std::int16_t> img(width * height), e(img.size()), back(img.size());
  for (std::int64_t y = 0; y < height; ++y)
    for (std::int64_t x = 0; x < width; ++x) {
      double const v = 300.0 * x + 100.0 * y - 20000.0 + double(r.next() % 9) - 4;
      img[y * width + x] = static_cast<std::int16_t>(std::fmin(std::fmax(v, -32768.0), 32767.0));
    }
  std::vector<std::int64_t> const c = {2, -1};
  std::vector<std::int16_t> init(2 * height);
  for (std::int64_t y = 0; y < height; ++y) init[2 * y] = init[2 * y + 1] = img[y * width];  // row starts
  ref::dpcm_encode<std::int16_t>(c, 0, img.data(), e.data(), lay, init.data());
  ref::dpcm_decode<std::int16_t>(c, 0, e.data(), back.data(), lay, init.data());
  BOOST_TEST(back == img, boost::test_tools::per_element());
  // Away from the saturated corner and the first two columns, residuals are noise.
  std::int64_t small = 0, total = 0;
  for (std::int64_t y = 0; y < height; ++y)
    for (std::int64_t x = 2; x < width; ++x, ++total) small += std::abs(e[y * width + x]) <= 16;
  BOOST_TEST(small > total / 2);
}

// Floating point: decode is linrec_order_k of the residuals, to the bit; the
// round trip is exact to a few ulps for a stable predictor.
BOOST_AUTO_TEST_CASE(float_round_trip) {
  rng r(seed_for(404));
  std::vector<double> const c = {1.2, -0.5, 0.1};  // poles inside the unit circle
  std::int64_t const n = 500, count = 4;
  layout const lay = layout::interleaved(n, count);
  std::vector<double> x(n * count), e(x.size()), back(x.size()), via_linrec(x.size());
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t k = 0; k < count; ++k)
      x[lay.offset(i, k)] = std::sin(0.05 * double(i) + double(k)) + 0.01 * r.symmetric();
  ref::dpcm_encode<double>(c, x.data(), e.data(), lay);
  ref::dpcm_decode<double>(c, e.data(), back.data(), lay);
  ref::linrec_order_k<double>(c, e.data(), via_linrec.data(), lay, nullptr, nullptr);
  BOOST_TEST(back == via_linrec, boost::test_tools::per_element());
  for (std::size_t i = 0; i < x.size(); ++i) BOOST_TEST(std::fabs(back[i] - x[i]) <= 1e-13);
  std::vector<float> xf(x.begin(), x.end()), ef(x.size()), bf(x.size());
  std::vector<float> const cf(c.begin(), c.end());
  ref::dpcm_encode<float>(cf, xf.data(), ef.data(), lay);
  ref::dpcm_decode<float>(cf, ef.data(), bf.data(), lay);
  for (std::size_t i = 0; i < x.size(); ++i) BOOST_TEST(std::fabs(bf[i] - xf[i]) <= 1e-5f);
}

BOOST_AUTO_TEST_CASE(argument_errors) {
  std::int32_t v[2] = {1, 2};
  auto const lay = layout::contiguous(2);
  std::vector<std::int64_t> const one = {1};
  BOOST_CHECK_THROW(ref::dpcm_encode<std::int32_t>(one, -1, v, v, lay), recur::invalid_argument);
  BOOST_CHECK_THROW(ref::dpcm_encode<std::int32_t>(one, 63, v, v, lay), recur::invalid_argument);
  std::vector<std::int64_t> const huge = {std::int64_t{1} << 30, std::int64_t{1} << 30, 1};
  BOOST_CHECK_THROW(ref::dpcm_decode<std::int32_t>(huge, 0, v, v, lay), recur::invalid_argument);
  BOOST_CHECK_THROW(ref::dpcm_decode<std::int32_t>(one, 0, nullptr, v, lay), recur::invalid_argument);
  std::vector<std::int64_t> const limit = {std::int64_t{1} << 30, -(std::int64_t{1} << 30)};
  BOOST_CHECK_NO_THROW(ref::dpcm_decode<std::int32_t>(limit, 0, v, v, lay));
}

BOOST_AUTO_TEST_SUITE_END()
