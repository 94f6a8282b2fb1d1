// Integer DPCM through recur::cuda{stream} (kernels/dispatch/dispatch_dpcm_int.cuh)
// against recur::host (the reference's arithmetic): results must be equal bit
// for bit, and decode(encode(x)) == x. Samples int16_t, int32_t and uint8_t
// over their whole range (extremes included, so residuals wrap); orders 0, 1,
// 2, 3, 5 and 8 with coefficients of both signs; shift 0 (the scan) and
// shifts 1 and 3 (one sequence per thread); contiguous, interleaved and
// strided (gaps) layouts, 1 to 300 sequences, lengths 1 to 2 * 10^5 (across
// tiles); with and without init; in place; an image-like field (rows as
// lanes); argument errors with nothing written. Outputs start poisoned
// (0xA5 bytes) so that an unwritten element shows.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <boost/test/unit_test.hpp>
#include <recur/filter.hpp>

#include "common/cases.hpp"
#include "common/cuda_memory.hpp"
#include "common/layouts.hpp"
#include "common/random.hpp"

using recur::layout;
using recur_test::layout_kind;
using recur_test::rng;
using recur_test::seed_for;

namespace {

using recur_test::finish;
using recur_test::settle;
using recur_test::test_stream;
using recur_test::upload;

// Outputs start as 0xA5 bytes (not all-ones: -1 is a valid sample).
constexpr int poison_byte = 0xA5;

template <class S>
recur_test::dbuf<S> poisoned(std::size_t elements) {
  return recur_test::poisoned<S>(elements, recur_test::memory::device, poison_byte);
}

template <class S>
std::vector<S> poisoned_host(std::size_t size) {
  std::vector<S> v(size);
  if (size) std::memset(v.data(), poison_byte, size * sizeof(S));
  return v;
}

template <class S>
char const* type_name() {
  return sizeof(S) == 1 ? "uint8" : sizeof(S) == 2 ? "int16" : "int32";
}

// Samples over S's whole range, extremes one time in 16.
template <class S>
std::vector<S> samples(rng& r, std::size_t size) {
  std::vector<S> v(size);
  for (auto& x : v) {
    std::uint64_t const b = r.next();
    x = (b & 15) == 0 ? ((b >> 4) & 1 ? std::numeric_limits<S>::max() : std::numeric_limits<S>::min())
                      : static_cast<S>(b >> 8);
  }
  return v;
}

// Order-k predictors: |c_j| up to 2^(shift + 1), both signs.
std::vector<std::int64_t> predictor(rng& r, int k, int shift) {
  std::vector<std::int64_t> c(static_cast<std::size_t>(k));
  for (auto& x : c)
    x = static_cast<std::int64_t>(r.next() % (std::uint64_t(4) << shift)) - (std::int64_t(2) << shift);
  return c;
}

// One case: encode and decode on the GPU (separate and in place) against
// the host, and the round trip.
template <class S>
void dpcm_case(rng& r, layout const& lay, int k, int shift, bool with_init) {
  std::size_t const ext = static_cast<std::size_t>(recur_test::extent(lay));
  auto const c = predictor(r, k, shift);
  auto const x = samples<S>(r, ext);
  auto const init = with_init ? samples<S>(r, static_cast<std::size_t>(lay.count * k)) : std::vector<S>{};
  S const* const hinit = init.empty() ? nullptr : init.data();
  // The host's results (gaps keep the poison).
  auto e_host = poisoned_host<S>(ext);
  recur::dpcm_encode(recur::host{}, c, shift, x.data(), e_host.data(), lay, {hinit});
  auto d_host = poisoned_host<S>(ext);
  recur::dpcm_decode(recur::host{}, c, shift, e_host.data(), d_host.data(), lay, {hinit});

  auto const what = fmt::format("{} k={} shift={} n={} count={} strides {},{} init={}", type_name<S>(), k,
                                shift, lay.n, lay.count, lay.element_stride, lay.batch_stride, with_init);
  auto const dx = upload(x), di = upload(init.empty() ? std::vector<S>(1) : init);
  auto const de = poisoned<S>(ext), dd = poisoned<S>(ext);
  recur::dpcm_options<S> const dinit{with_init ? di.p : nullptr};
  recur::cuda const ex{test_stream()};
  settle();
  recur::dpcm_encode(ex, c, shift, dx.p, de.p, lay, dinit);
  finish();
  auto const e = de.read();
  BOOST_TEST((e == e_host), "encode " << what);
  recur::dpcm_decode(ex, c, shift, de.p, dd.p, lay, dinit);
  finish();
  auto const d = dd.read();
  BOOST_TEST((d == d_host), "decode " << what);
  // The round trip, on layout elements (gaps hold poison in d).
  bool round = true;
  for (std::int64_t q = 0; q < lay.count && round; ++q)
    for (std::int64_t i = 0; i < lay.n && round; ++i) round = d[lay.offset(i, q)] == x[lay.offset(i, q)];
  BOOST_TEST(round, "decode(encode(x)) != x: " << what);
  // In place: encode over a copy of x, then decode over it.
  auto const io = upload(x);
  settle();
  recur::dpcm_encode(ex, c, shift, io.p, io.p, lay, dinit);
  finish();
  auto e_in = io.read();
  auto want_e = x;
  for (std::int64_t q = 0; q < lay.count; ++q)
    for (std::int64_t i = 0; i < lay.n; ++i) want_e[lay.offset(i, q)] = e_host[lay.offset(i, q)];
  BOOST_TEST((e_in == want_e), "encode in place " << what);
  recur::dpcm_decode(ex, c, shift, io.p, io.p, lay, dinit);
  finish();
  BOOST_TEST((io.read() == x), "decode in place (round trip) " << what);
  if (!init.empty()) BOOST_TEST((di.read() == init), "init was written: " << what);
}

// 6 orders x 3 shifts x 3 layouts x 7 shapes, but one long sequence with a
// shift (one thread per sequence: keep it short).
template <class S>
void dpcm_sweep(std::uint64_t seed) {
  recur_test::case_count cases(fmt::format("dpcm {}", type_name<S>()));
  rng r(seed);
  int idx = 0;
  for (int const k : {0, 1, 2, 3, 5, 8})
    for (int const shift : {0, 1, 3})
      for (auto const kind : recur_test::basic_layout_kinds)
        for (auto const& [n, count] : std::initializer_list<std::pair<std::int64_t, std::int64_t>>{
                 {1, 1}, {2, 3}, {3, 1}, {1000, 7}, {5003, 1}, {200003, 1}, {517, 300}}) {
          if (shift > 0 && n * count > 100000 && count < 4) {
            cases.skip("a long sequence with a shift");
            continue;
          }
          dpcm_case<S>(r, recur_test::make_layout(kind, n, count), k, shift, idx++ % 2 == 0);
          cases.run();
        }
  cases.require(6 * 3 * 3 * 7 - 6 * 2 * 3);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(dpcm_int_cuda)

BOOST_AUTO_TEST_CASE(int16_all_shapes) { dpcm_sweep<std::int16_t>(seed_for(801)); }
BOOST_AUTO_TEST_CASE(int32_all_shapes) { dpcm_sweep<std::int32_t>(seed_for(802)); }
BOOST_AUTO_TEST_CASE(uint8_all_shapes) { dpcm_sweep<std::uint8_t>(seed_for(803)); }

// An image-like field (a smooth ramp plus noise, 8-bit pixels), rows as
// lanes: the previous-pixel predictor (shift 0) and the average of the two
// previous pixels (c = {1, 1}, shift 1).
BOOST_AUTO_TEST_CASE(image_rows_as_lanes) {
  rng r(seed_for(804));
  std::int64_t const w = 1920, h = 1080;
  std::vector<std::uint8_t> img(static_cast<std::size_t>(w * h));
  for (std::int64_t y = 0; y < h; ++y)
    for (std::int64_t x = 0; x < w; ++x)
      img[y * w + x] =
          static_cast<std::uint8_t>((x / 8 + y / 4 + static_cast<std::int64_t>(r.next() % 9)) & 0xff);
  layout const lay = layout::contiguous(w, h);
  for (auto const& [c, shift] :
       std::initializer_list<std::pair<std::vector<std::int64_t>, int>>{{{1}, 0}, {{1, 1}, 1}}) {
    std::vector<std::uint8_t> e_host(img.size()), d_host(img.size());
    recur::dpcm_encode(recur::host{}, c, shift, img.data(), e_host.data(), lay);
    auto const dx = upload(img);
    auto const de = poisoned<std::uint8_t>(img.size()), dd = poisoned<std::uint8_t>(img.size());
    recur::cuda const ex{test_stream()};
    settle();
    recur::dpcm_encode(ex, c, shift, dx.p, de.p, lay);
    recur::dpcm_decode(ex, c, shift, de.p, dd.p, lay);
    finish();
    BOOST_TEST((de.read() == e_host), "encode c.size()=" << c.size());
    BOOST_TEST((dd.read() == img), "round trip c.size()=" << c.size());
  }
}

// Bad arguments: recur::invalid_argument, nothing written.
BOOST_AUTO_TEST_CASE(errors_nothing_written) {
  std::int64_t const n = 100;
  std::vector<std::int16_t> const hx(static_cast<std::size_t>(n), 7);
  auto const dx = upload(hx);
  auto const de = poisoned<std::int16_t>(static_cast<std::size_t>(n));
  recur::cuda const ex{test_stream()};
  std::vector<std::int64_t> const c2{1, -1}, c9(9, 1);
  auto rejects = [&](char const* what, auto&& call) {
    settle();
    BOOST_CHECK_THROW(call(), recur::invalid_argument);
    finish();
    auto const e = de.read();
    BOOST_TEST(std::all_of(e.begin(), e.end(), [](std::int16_t v) { return v == std::int16_t(0xA5A5); }),
               what);
  };
  rejects("order 9", [&] { recur::dpcm_encode(ex, c9, 0, dx.p, de.p, layout::contiguous(n)); });
  rejects("shift 63", [&] { recur::dpcm_decode(ex, c2, 63, dx.p, de.p, layout::contiguous(n)); });
  rejects("host x", [&] { recur::dpcm_encode(ex, c2, 0, hx.data(), de.p, layout::contiguous(n)); });
  rejects("e overlaps x", [&] { recur::dpcm_decode(ex, c2, 0, dx.p, dx.p + 1, layout::contiguous(n - 1)); });
  rejects("init misaligned", [&] {
    auto const odd = reinterpret_cast<std::int16_t const*>(reinterpret_cast<char const*>(dx.p) + 1);
    recur::dpcm_encode(ex, c2, 0, dx.p, de.p, layout::contiguous(n), {odd});
  });
  std::vector<std::int64_t> const huge{std::int64_t(1) << 31, 1};
  rejects("sum |c| > 2^31", [&] { recur::dpcm_encode(ex, huge, 0, dx.p, de.p, layout::contiguous(n)); });
}

BOOST_AUTO_TEST_SUITE_END()
