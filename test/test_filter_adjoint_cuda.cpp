// The pieces of lfilter's and sosfilt's backward passes through
// recur::cuda{stream} (host code only: buffers from the CUDA runtime, the
// work from the host API).
//
// Reverse direction: the GPU runs the mirrored view (element stride -1, or
// the negated stride of a strided layout) with the arithmetic of the forward
// filter on the flipped sequences, so recur::cuda's reverse result must equal
// its forward result on flipped inputs, flipped back, bit for bit (that
// forward result is checked against the oracle by test_lfilter_cuda.cpp and
// test_sosfilt_cuda.cpp); also within a loose bound of recur::host's reverse
// result (a gross error, such as a shifted or unreversed sequence, fails it).
// lfilter of orders 0-8 and sosfilt of 1, 2 and 5 sections, contiguous,
// interleaved and strided layouts, 1 to 64 lanes of lengths 1 to 100003 and
// 5000 short lanes (one thread per sequence), state in and out, in place.
//
// correlate_lags: against sums in long double, within (48 + tiles / 256)
// eps of the sum of the terms' magnitudes (each tile's sum is a run of at
// most 8 products per thread, a shuffle tree and 8 warps; the tiles'
// partials a strided sum per thread and a tree); every layout, 1 to 5000 lanes,
// lengths across both tile shapes, one and two arrays, lags 1 to 9, both
// directions; bitwise the same on a second run and on another stream; empty
// batches; the GPU's limits and host pointers rejected with nothing written.
//
// RECUR_TEST_SEED changes the inputs (common/random.hpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <boost/test/unit_test.hpp>
#include <recur/filter.hpp>

#include "common/cuda_memory.hpp"
#include "common/expect_invalid.hpp"
#include "common/iir.hpp"
#include "common/layouts.hpp"
#include "common/poison.hpp"
#include "common/random.hpp"

using recur::direction;
using recur::layout;
using recur_test::layout_kind;
using recur_test::rng;
using recur_test::seed_for;

namespace {

using recur_test::dbuf;
using recur_test::finish;
using recur_test::flipped;
using recur_test::iir;
using recur_test::other_stream;
using recur_test::poison;
using recur_test::poisoned;
using recur_test::random_values;
using recur_test::same_bytes;
using recur_test::settle;
using recur_test::test_stream;
using recur_test::upload;

// lfilter of orders 0-8 (nb = na), sosfilt of 1, 2 and 5 sections.
template <class T>
std::vector<iir<T>> filters(rng& r) {
  std::vector<iir<T>> fs;
  for (int order = 0; order <= 8; ++order) fs.push_back(iir<T>::filter(r, order + 1, order, 0.7));
  for (int sections : {1, 2, 5}) fs.push_back(iir<T>::cascade(r, sections, 0.7));
  return fs;
}

std::string describe(layout const& lay) {
  return fmt::format("layout {{n = {}, count = {}, element_stride = {}, batch_stride = {}}}", lay.n,
                     lay.count, lay.element_stride, lay.batch_stride);
}

struct filtered {
  std::vector<double> y, zf;  // rounded to double
  std::vector<std::uint8_t> y_bytes, zf_bytes;
};

// One GPU call on fresh buffers: y (and zf) poisoned, or y == x (in place,
// zf == zi).
template <class T>
filtered run_gpu(iir<T> const& f, std::vector<T> const& x, std::vector<T> const& zi, layout const& lay,
                 direction dir, bool in_place) {
  dbuf<T> const dx = upload(x), dzi = upload(zi);
  dbuf<T> const dy = poisoned<T>(x.size()), dzf = poisoned<T>(zi.size());
  settle();
  T* const y = in_place ? dx.p : dy.p;
  T* const zf = in_place ? dzi.p : dzf.p;
  f.run(recur::cuda{test_stream()}, dx.p, y, lay,
        {zi.empty() ? nullptr : dzi.p, zi.empty() ? nullptr : zf, dir});
  finish();
  auto const hy = (in_place ? dx : dy).read();
  auto const hz = (in_place ? dzi : dzf).read();
  filtered r;
  r.y.assign(hy.begin(), hy.end());
  r.zf.assign(hz.begin(), hz.end());
  r.y_bytes.resize(hy.size() * sizeof(T));
  if (!hy.empty()) std::memcpy(r.y_bytes.data(), hy.data(), r.y_bytes.size());
  r.zf_bytes.resize(hz.size() * sizeof(T));
  if (!hz.empty()) std::memcpy(r.zf_bytes.data(), hz.data(), r.zf_bytes.size());
  return r;
}

template <class T>
void reverse_case(iir<T> const& f, layout const& lay, bool in_place, std::uint64_t seed) {
  rng r(seed);
  std::size_t const ext = static_cast<std::size_t>(recur_test::extent(lay));
  auto const x = random_values<T>(r, ext);
  auto const zi = random_values<T>(r, static_cast<std::size_t>(lay.count * f.state()));
  std::string const what = fmt::format("{} {}: {}{}", sizeof(T) == 4 ? "f32" : "f64", f.name(), describe(lay),
                                       in_place ? ", in place" : "");
  auto const rev = run_gpu(f, x, zi, lay, direction::reverse, in_place);
  auto const fwd = run_gpu(f, flipped(x, lay), zi, lay, direction::forward, in_place);
  // Bitwise the forward filter of the flipped sequences, flipped back; gaps
  // untouched (or x's, in place).
  bool same = true, gaps = true;
  auto const in = recur_test::covered(lay);
  for (std::size_t o = 0; o < ext; ++o) {
    if (!in[o]) {
      T v;
      std::memcpy(&v, rev.y_bytes.data() + o * sizeof(T), sizeof(T));
      gaps = gaps && (in_place ? recur_test::same_bits(v, x[o]) : recur_test::is_poison(v));
    }
  }
  for (std::int64_t k = 0; k < lay.count; ++k)
    for (std::int64_t i = 0; i < lay.n; ++i) {
      std::size_t const o = static_cast<std::size_t>(lay.offset(i, k)),
                        m = static_cast<std::size_t>(lay.offset(lay.n - 1 - i, k));
      same = same && std::memcmp(rev.y_bytes.data() + o * sizeof(T), fwd.y_bytes.data() + m * sizeof(T),
                                 sizeof(T)) == 0;
    }
  BOOST_TEST(same, what << ": not bitwise the flipped forward filter");
  BOOST_TEST(rev.zf_bytes == fwd.zf_bytes, what << ": zf differs from the flipped forward filter's");
  BOOST_TEST(gaps, what << ": a gap was written");
  // Near recur::host's reverse result.
  std::vector<T> hy(ext), hz(zi.size());
  f.run(recur::host{}, x.data(), hy.data(), lay,
        {zi.empty() ? nullptr : zi.data(), hz.empty() ? nullptr : hz.data(), direction::reverse});
  double scale = 1, worst = 0;
  for (std::int64_t k = 0; k < lay.count; ++k)
    for (std::int64_t i = 0; i < lay.n; ++i) {
      std::size_t const o = static_cast<std::size_t>(lay.offset(i, k));
      scale = std::max(scale, std::fabs(double(hy[o])));
      worst = std::max(worst, std::fabs(rev.y[o] - double(hy[o])));
    }
  for (std::size_t j = 0; j < hz.size(); ++j) worst = std::max(worst, std::fabs(rev.zf[j] - double(hz[j])));
  double const tol = (sizeof(T) == 4 ? 1e-2 : 1e-9) * scale;
  BOOST_TEST(worst <= tol, what << ": " << worst << " from recur::host's result (bound " << tol << ")");
}

template <class T>
void reverse_sweep(std::uint64_t salt) {
  rng r(seed_for(salt));
  auto const fs = filters<T>(r);
  int idx = 0;
  struct shape {
    std::int64_t n, count;
  };
  for (auto const& f : fs)
    for (layout_kind const kind : recur_test::basic_layout_kinds)
      for (auto const [n, count] : {shape{1, 1}, shape{2, 3}, shape{37, 64}, shape{4099, 3}, shape{100003, 1},
                                    shape{20011, 64}, shape{50, 5000}}) {
        layout const lay = recur_test::make_layout(kind, n, count);
        reverse_case<T>(f, lay, false, seed_for(salt, static_cast<std::uint64_t>(idx++)));
        if (n == 4099 || n == 50)
          reverse_case<T>(f, lay, true, seed_for(salt, static_cast<std::uint64_t>(idx++)));
      }
}

// --- correlate_lags -----------------------------------------------------------

struct sums {
  std::vector<long double> c, size;
};

template <class T>
sums reference(std::vector<T> const& u, std::vector<std::vector<T>> const& v, std::int64_t lags,
               layout const& lay, direction dir) {
  std::int64_t const nv = static_cast<std::int64_t>(v.size());
  sums s{std::vector<long double>(static_cast<std::size_t>(nv * lags), 0),
         std::vector<long double>(static_cast<std::size_t>(nv * lags), 0)};
  auto at = [&](std::int64_t i, std::int64_t k) {
    return lay.offset(dir == direction::forward ? i : lay.n - 1 - i, k);
  };
  for (std::int64_t k = 0; k < lay.count; ++k)
    for (std::int64_t i = 0; i < lay.n; ++i) {
      long double const ui = u[static_cast<std::size_t>(at(i, k))];
      for (std::int64_t j = 0; j < nv; ++j)
        for (std::int64_t l = 0; l < lags && l <= i; ++l) {
          long double const t = ui * v[j][static_cast<std::size_t>(at(i - l, k))];
          s.c[j * lags + l] += t;
          s.size[j * lags + l] += std::fabs(t);
        }
    }
  return s;
}

template <class T>
std::vector<T> correlate_gpu(dbuf<T> const& u, std::vector<dbuf<T>> const& v, std::int64_t nv,
                             std::int64_t lags, layout const& lay, direction dir, cudaStream_t stream) {
  std::vector<T const*> p;
  for (std::int64_t j = 0; j < nv; ++j) p.push_back(v[j].p);
  dbuf<T> const c = poisoned<T>(static_cast<std::size_t>(nv * lags));
  settle();
  recur::correlate_lags(recur::cuda{stream}, u.p, std::span<T const* const>(p), c.p, lags, lay, dir);
  finish(stream);
  return c.read();
}

template <class T>
void correlate_sweep(std::uint64_t salt) {
  int idx = 0;
  struct shape {
    std::int64_t n, count;
  };
  for (layout_kind const kind : recur_test::all_layout_kinds)
    for (auto const [n, count] :
         {shape{1, 1}, shape{2, 3}, shape{37, 64}, shape{1023, 3}, shape{1024, 1}, shape{1025, 64},
          shape{4099, 3}, shape{100003, 1}, shape{20011, 64}, shape{50, 5000}, shape{1025, 5000}}) {
      rng r(seed_for(salt, static_cast<std::uint64_t>(idx++)));
      layout const lay = recur_test::make_layout(kind, n, count);
      std::size_t const ext = static_cast<std::size_t>(recur_test::extent(lay));
      auto const u = random_values<T>(r, ext);
      std::vector<std::vector<T>> v = {random_values<T>(r, ext), random_values<T>(r, ext)};
      dbuf<T> const du = upload(u);
      std::vector<dbuf<T>> dv;
      for (auto const& a : v) dv.push_back(upload(a));
      // Tiles of the long shape or of 32 sequences, whichever runs: at most this many.
      double const tiles = double(count) * double((n + 1023) / 1024) + 1;
      // The additions in one output's sum: a run of at most 8 products, a
      // shuffle tree (5) and 8 warps per tile, then tiles / 256 per thread, a
      // tree and 8 warps. A wrong term, even on random data, is off by about
      // the sum of magnitudes over sqrt(terms): far above.
      double const depth = 48 + tiles / 256;
      double const eps = std::numeric_limits<T>::epsilon();
      for (direction const dir : {direction::forward, direction::reverse}) {
        auto const want = reference(u, v, 9, lay, dir);
        for (std::int64_t const nv : {1, 2})
          for (std::int64_t const lags : {1, 2, 3, 9}) {
            std::string const what =
                fmt::format("{} {} nv {} lags {}{}", sizeof(T) == 4 ? "f32" : "f64", describe(lay), nv, lags,
                            dir == direction::reverse ? " reverse" : "");
            auto const c = correlate_gpu(du, dv, nv, lags, lay, dir, test_stream());
            double worst = 0;
            bool ok = true;
            for (std::int64_t j = 0; j < nv; ++j)
              for (std::int64_t l = 0; l < lags; ++l) {
                std::size_t const o = static_cast<std::size_t>(j * lags + l),
                                  w = static_cast<std::size_t>(j * 9 + l);
                double const err = std::fabs(double(c[o]) - double(want.c[w]));
                double const bound = depth * eps * double(want.size[w]);
                ok = ok && err <= bound;
                worst = std::max(worst, err / std::max(bound, 1e-300));
              }
            BOOST_TEST(ok, what << ": error up to " << worst << " times the bound");
            if (lags == 9 && nv == 2) {
              auto const again = correlate_gpu(du, dv, nv, lags, lay, dir, test_stream());
              auto const other = correlate_gpu(du, dv, nv, lags, lay, dir, other_stream());
              BOOST_TEST(same_bytes(c, again), what << ": two runs differ");
              BOOST_TEST(same_bytes(c, other), what << ": a run on another stream differs");
            }
          }
      }
    }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(filter_adjoint_cuda)

// lfilter orders 0-8 and sosfilt of 1, 2, 5 sections x layouts x shapes, in
// reverse: bitwise the flipped forward filter.
BOOST_AUTO_TEST_CASE(f32_reverse_is_the_flipped_forward_filter) { reverse_sweep<float>(3611); }
BOOST_AUTO_TEST_CASE(f64_reverse_is_the_flipped_forward_filter) { reverse_sweep<double>(3612); }

BOOST_AUTO_TEST_CASE(f32_correlate_lags) { correlate_sweep<float>(3613); }
BOOST_AUTO_TEST_CASE(f64_correlate_lags) { correlate_sweep<double>(3614); }

// Empty batches: zeros; no lags: nothing written.
BOOST_AUTO_TEST_CASE(correlate_lags_empty) {
  dbuf<float> const u = poisoned<float>(8, recur_test::memory::device, 0);
  std::vector<float const*> const v = {u.p, u.p};
  for (layout const lay : {layout::contiguous(0, 3), layout::contiguous(4, 0)}) {
    dbuf<float> const c = poisoned<float>(6);
    settle();
    recur::correlate_lags(recur::cuda{test_stream()}, u.p, std::span<float const* const>(v), c.p, 3, lay);
    finish();
    BOOST_TEST(c.read() == std::vector<float>(6, 0.0f));
  }
  dbuf<float> const c = poisoned<float>(6);
  settle();
  recur::correlate_lags(recur::cuda{test_stream()}, u.p, std::span<float const* const>(v), c.p, 0,
                        layout::contiguous(4, 2));
  finish();
  BOOST_TEST(recur_test::all_poison(c.read()));
}

// The GPU's limits (lags <= 9, two arrays), host memory, and the host's
// checks: invalid_argument naming the argument, nothing written.
BOOST_AUTO_TEST_CASE(correlate_lags_errors_nothing_written) {
  std::int64_t const n = 100, count = 2;
  layout const lay = layout::contiguous(n, count);
  std::vector<double> const h(static_cast<std::size_t>(n * count), 1.0);
  dbuf<double> const u = upload(h), v0 = upload(h), v1 = upload(h), v2 = upload(h);
  dbuf<double> const c = poisoned<double>(30);
  std::vector<double> host_c(30, poison<double>());
  settle();
  recur::cuda const ex{test_stream()};
  std::vector<double const*> const two = {v0.p, v1.p}, three = {v0.p, v1.p, v2.p}, host_v = {v0.p, h.data()};
  using span = std::span<double const* const>;
  auto rejected = [&](auto&& call, char const* what) {
    recur_test::expect_invalid(
        call, [&] { return c.read(); }, {what}, "recur::correlate_lags: ");
  };
  rejected([&] { recur::correlate_lags(ex, u.p, span(two), c.p, 10, lay); },
           "lags = 10 is not supported with recur::cuda: at most 9");
  rejected([&] { recur::correlate_lags(ex, u.p, span(three), c.p, 3, lay); },
           "v.size() = 3 is not supported with recur::cuda: at most 2");
  rejected([&] { recur::correlate_lags(ex, h.data(), span(two), c.p, 3, lay); }, "u = ");
  rejected([&] { recur::correlate_lags(ex, u.p, span(host_v), c.p, 3, lay); }, "v[1] = ");
  rejected([&] { recur::correlate_lags(ex, u.p, span(two), host_c.data(), 3, lay); }, "c = ");
  rejected([&] { recur::correlate_lags(ex, u.p, span(two), c.p, -2, lay); }, "lags = -2 is negative");
  rejected([&] { recur::correlate_lags(ex, u.p, span(two), u.p + 5, 3, lay); }, "c overlaps u");
  finish();
  BOOST_TEST(recur_test::all_poison(c.read()));
  BOOST_TEST(recur_test::all_poison(host_c));
}

BOOST_AUTO_TEST_SUITE_END()
