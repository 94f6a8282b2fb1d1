// recur::matrix_chain and recur::mobius_recurrence through recur::cuda{stream}
// (kernels/dispatch/dispatch_chain.cuh: a segmented single-pass scan of the
// steps). Host code only.
//
// Outputs start poisoned (all-ones bytes, a NaN) and are compared with the
// sequential references (reference::matrix_chain, reference::mobius) run on
// the host in double on the same rounded inputs: every element of the layout
// must be written and within the tolerance, every gap left alone, the final
// state too. The steps are contractive (as in test_chain_host.cpp): matrices
// with every row's absolute sum <= rho = 0.9, Moebius maps of [-1, 1] into
// itself with derivative <= 0.42, so an error made at one step is forgotten at
// rate rho and a value carries those of about 1 / (1 - rho) steps, K
// roundings each, plus the O(log n) levels of the scan's reassociation:
//   chain:  |x - x_ref| <= 4 K eps (1 / (1 - rho) + log2 n) (1 + max|x_ref|)
//   Moebius: 16 eps (4 + log2 n) (1 + max|p_ref|)       (test_chain_host.cpp's)
// Cases: K = 2..8; f32 and f64; contiguous, interleaved, strided (gaps) and
// padded-interleaved layouts; n from 1 to 3 * 10^5 (across tiles of 64 to 512
// steps) and 1 to 1000 sequences; init and final_state, none, final_state ==
// init; u null; in place (x == u, p == delta); n == 0 and count == 0; a
// Moebius chain whose unscaled product overflows f32 while p stays finite;
// bitwise reproducibility; argument errors with nothing written.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <boost/test/unit_test.hpp>
#include <recur/chain.hpp>
#include <recur/ops/mobius.hpp>
#include <recur/reference/matrix_chain.hpp>
#include <recur/reference/mobius.hpp>

#include "common/cases.hpp"
#include "common/chains.hpp"
#include "common/cuda_memory.hpp"
#include "common/layouts.hpp"
#include "common/poison.hpp"
#include "common/random.hpp"

using recur::layout;
using recur_test::layout_kind;
using recur_test::poison;
using recur_test::rng;
using recur_test::seed_for;
namespace ref = recur::reference;

namespace {

using recur_test::contractive_matrices;
using recur_test::contractive_mobius;
using recur_test::covered;
using recur_test::finish;
using recur_test::poisoned;
using recur_test::random_values;
using recur_test::rho;
using recur_test::same_bytes;
using recur_test::settle;
using recur_test::test_stream;
using recur_test::upload;
using recur_test::widen;

template <class T>
constexpr double eps = std::numeric_limits<T>::epsilon();

// Compares got with want over the layout's values (W per element): "" when
// every value is within tol (1 + max|want|) and every other value of `got`
// equals `outside` bit for bit (poison, or the input overwritten in place).
template <class T>
std::string compare(std::vector<T> const& got, std::vector<double> const& want, std::vector<T> const& outside,
                    layout const& lay, int W, double tol) {
  auto const in = covered(lay, W);
  double err = 0, mag = 0;
  std::size_t worst = 0, bad_gap = got.size();
  for (std::size_t o = 0; o < got.size(); ++o) {
    if (in[o]) {
      double const d = std::fabs(double(got[o]) - want[o]);
      if (!(d <= err)) worst = o;
      err = std::isnan(d) ? std::numeric_limits<double>::infinity() : std::max(err, d);
      mag = std::max(mag, std::fabs(want[o]));
    } else if (bad_gap == got.size() && !recur_test::same_bits(got[o], outside[o])) {
      bad_gap = o;
    }
  }
  if (bad_gap != got.size())
    return fmt::format("value {} outside the layout was written: {}", bad_gap, got[bad_gap]);
  if (!(err <= tol * (1 + mag)))
    return fmt::format("max error {} at value {} (got {}, want {}), tolerance {}", err, worst, got[worst],
                       want[worst], tol * (1 + mag));
  return "";
}

// ------------------------------------------------------------ matrix chain --

enum class state_mode { none, separate, shared };  // shared: final_state == init

template <class T, int K>
void chain_case(rng& r, layout const& lay, state_mode sm, bool with_u, bool in_place) {
  std::size_t const ext = static_cast<std::size_t>(recur_test::extent(lay));
  std::size_t const sv = static_cast<std::size_t>(lay.count * K);
  auto const M = contractive_matrices<T, K>(r, ext);
  auto const u = random_values<T>(r, ext * K);
  auto const init = random_values<T>(r, sv, 4.0);
  bool const has_init = sm != state_mode::none;
  std::vector<double> want(ext * K, 0.0), want_f(sv, 0.0);
  bool const use_u = with_u || in_place;
  ref::matrix_chain<double, K>(widen(M).data(), use_u ? widen(u).data() : nullptr, want.data(), lay,
                               has_init ? widen(init).data() : nullptr, want_f.data());
  auto const dM = upload(M), du = upload(u), di = upload(init);
  auto const df = poisoned<T>(sv), dx = poisoned<T>(ext * K);
  T* const x = in_place ? du.p : dx.p;
  recur::chain_options<T> opt;
  if (has_init) opt.init = di.p;
  if (sm == state_mode::separate) opt.final_state = df.p;
  if (sm == state_mode::shared) opt.final_state = di.p;
  settle();
  recur::matrix_chain<K>(recur::cuda{test_stream()}, dM.p, use_u ? du.p : nullptr, x, lay, opt);
  finish();
  double const tol =
      4.0 * K * eps<T> * (1.0 / (1.0 - rho) + std::log2(double(std::max<std::int64_t>(lay.n, 2))));
  auto const what = fmt::format("K={} {} n={} count={} state={} u={} in_place={}", K,
                                sizeof(T) == 4 ? "f32" : "f64", lay.n, lay.count, int(sm), use_u, in_place);
  std::vector<T> const outside = in_place ? u : std::vector<T>(ext * K, poison<T>());
  auto const got = (in_place ? du : dx).read();
  auto const msg = compare(got, want, outside, lay, K, tol);
  BOOST_TEST(msg.empty(),
             what << " (layout strides " << lay.element_stride << "," << lay.batch_stride << "): " << msg);
  if (sm != state_mode::none) {
    auto const f = (sm == state_mode::shared ? di : df).read();
    auto const fmsg = compare(f, want_f, f, layout::contiguous(static_cast<std::int64_t>(sv)), 1, tol);
    BOOST_TEST(fmsg.empty(), what << " final state: " << fmsg);
  }
  if (sm != state_mode::shared) BOOST_TEST(same_bytes(di.read(), init), what << ": init was written");
  BOOST_TEST(same_bytes(dM.read(), M), what << ": M was written");
}

constexpr auto const& all_kinds = recur_test::all_layout_kinds;

// 9 lengths x 4 layouts x 3 batch sizes.
template <class T, int K>
void chain_shapes(std::uint64_t seed) {
  recur_test::case_count cases(fmt::format("matrix_chain K={} {}", K, recur_test::type_name<T>));
  rng r(seed);
  int idx = 0;
  for (std::int64_t const n : {1, 2, 3, 63, 64, 65, 511, 513, 4099})
    for (auto const kind : all_kinds)
      for (std::int64_t const count : {1, 3, 100}) {
        layout const lay = recur_test::make_layout(kind, n, count);
        state_mode const sm = static_cast<state_mode>(idx % 3);
        chain_case<T, K>(r, lay, sm, idx % 4 != 3, idx % 5 == 2);
        cases.run();
        ++idx;
      }
  cases.require(108);
}

// Long sequences: many tiles, long look-backs.
template <class T, int K>
void chain_long(std::uint64_t seed) {
  rng r(seed);
  chain_case<T, K>(r, layout::contiguous(300007), state_mode::separate, true, false);
  chain_case<T, K>(r, recur_test::make_layout(layout_kind::interleaved, 20011, 7), state_mode::shared, true,
                   false);
  chain_case<T, K>(r, layout::contiguous(1001, 1000), state_mode::shared, true, true);
}

// ----------------------------------------------------------------- Moebius --

template <class T>
void mobius_case(rng& r, layout const& lay, state_mode sm, bool in_place) {
  std::size_t const ext = static_cast<std::size_t>(recur_test::extent(lay));
  std::size_t const count = static_cast<std::size_t>(lay.count);
  auto const d = contractive_mobius<T>(r, ext);
  auto const init = random_values<T>(r, count);
  T const init_value = T(0.25);
  bool const has_init = sm != state_mode::none;
  std::vector<double> want(ext, 0.0), want_f(count, 0.0);
  ref::mobius<double>(widen(d.alpha).data(), widen(d.beta).data(), widen(d.gamma).data(),
                      widen(d.delta).data(), want.data(), lay, has_init ? widen(init).data() : nullptr,
                      double(init_value), want_f.data());
  auto const da = upload(d.alpha), db = upload(d.beta), dg = upload(d.gamma), dd = upload(d.delta),
             di = upload(init);
  auto const df = poisoned<T>(count), dp = poisoned<T>(ext);
  T* const p = in_place ? dd.p : dp.p;
  recur::mobius_options<T> opt;
  if (has_init) opt.init = di.p;
  opt.init_value = init_value;
  opt.final_state = sm == state_mode::shared ? di.p : df.p;
  settle();
  recur::mobius_recurrence(recur::cuda{test_stream()}, da.p, db.p, dg.p, dd.p, p, lay, opt);
  finish();
  double const tol = 16 * eps<T> * (4 + std::log2(double(std::max<std::int64_t>(lay.n, 2))));
  auto const what = fmt::format("mobius {} n={} count={} strides {},{} state={} in_place={}",
                                sizeof(T) == 4 ? "f32" : "f64", lay.n, lay.count, lay.element_stride,
                                lay.batch_stride, int(sm), in_place);
  std::vector<T> const outside = in_place ? d.delta : std::vector<T>(ext, poison<T>());
  auto const msg = compare((in_place ? dd : dp).read(), want, outside, lay, 1, tol);
  BOOST_TEST(msg.empty(), what << ": " << msg);
  auto const f = (sm == state_mode::shared ? di : df).read();
  auto const fmsg = compare(f, want_f, f, layout::contiguous(lay.count), 1, tol);
  BOOST_TEST(fmsg.empty(), what << " final state: " << fmsg);
  BOOST_TEST(same_bytes(da.read(), d.alpha), what << ": alpha was written");
}

// 8 lengths x 4 layouts x 3 batch sizes, but 333 sequences of 200003 (time).
template <class T>
void mobius_shapes(std::uint64_t seed) {
  recur_test::case_count cases(fmt::format("mobius_recurrence {}", recur_test::type_name<T>));
  rng r(seed);
  int idx = 0;
  for (std::int64_t const n : {1, 2, 3, 1023, 1024, 1025, 4097, 200003})
    for (auto const kind : all_kinds)
      for (std::int64_t const count : {1, 4, 333}) {
        if (n * count > 3000000) {
          cases.skip("more than 3 10^6 elements");
          continue;
        }
        mobius_case<T>(r, recur_test::make_layout(kind, n, count), static_cast<state_mode>(idx % 3),
                       idx % 4 == 1);
        cases.run();
        ++idx;
      }
  cases.require(92);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(chain_cuda)

BOOST_AUTO_TEST_CASE(matrix_chain_k2_k3) {
  chain_shapes<float, 2>(seed_for(701));
  chain_shapes<double, 2>(seed_for(702));
  chain_shapes<float, 3>(seed_for(703));
  chain_shapes<double, 3>(seed_for(704));
}

BOOST_AUTO_TEST_CASE(matrix_chain_k4_to_k8) {
  std::uint64_t s = 710;
  auto both = [&]<int K>() {
    chain_shapes<float, K>(seed_for(s++));
    chain_shapes<double, K>(seed_for(s++));
  };
  both.template operator()<4>();
  both.template operator()<5>();
  both.template operator()<6>();
  both.template operator()<7>();
  both.template operator()<8>();
}

BOOST_AUTO_TEST_CASE(matrix_chain_long) {
  chain_long<float, 2>(seed_for(720));
  chain_long<double, 3>(seed_for(721));
  chain_long<float, 4>(seed_for(722));
  chain_long<double, 8>(seed_for(723));
}

// x_{i} = M_i x_{i-1} with rotations: nothing is forgotten, so a tile's
// incoming state matters to the last step; the norm stays |init|.
BOOST_AUTO_TEST_CASE(matrix_chain_rotations) {
  rng r(seed_for(724));
  std::int64_t const n = 100003;
  std::vector<double> M(static_cast<std::size_t>(n) * 4);
  for (std::int64_t i = 0; i < n; ++i) {
    double const a = 0.5 * r.symmetric(), c = std::cos(a), s = std::sin(a);
    M[i * 4 + 0] = c, M[i * 4 + 1] = -s, M[i * 4 + 2] = s, M[i * 4 + 3] = c;
  }
  std::vector<double> const init{0.6, 0.8};
  std::vector<double> want(static_cast<std::size_t>(n) * 2), wf(2);
  ref::matrix_chain<double, 2>(M.data(), nullptr, want.data(), layout::contiguous(n), init.data(), wf.data());
  auto const dM = upload(M), di = upload(init);
  auto const dx = poisoned<double>(static_cast<std::size_t>(n) * 2), df = poisoned<double>(2);
  settle();
  recur::matrix_chain<2>(recur::cuda{test_stream()}, dM.p, nullptr, dx.p, layout::contiguous(n),
                         recur::chain_options<double>{di.p, df.p});
  finish();
  // Each composed rotation is off by a few eps; log2 n levels of them.
  auto const msg = compare(dx.read(), want, std::vector<double>(want.size()), layout::contiguous(n), 2,
                           64 * eps<double> * std::log2(double(n)));
  BOOST_TEST(msg.empty(), msg);
}

BOOST_AUTO_TEST_CASE(mobius_shapes_f32) { mobius_shapes<float>(seed_for(731)); }
BOOST_AUTO_TEST_CASE(mobius_shapes_f64) { mobius_shapes<double>(seed_for(732)); }

// The pivot-like maps of recur_test::overflowing_pivot_maps (entries of 2^16
// to 2^48): the unscaled product of a few steps overflows f32, yet p stays
// near 2 - sqrt(3); every GPU result is finite and matches double.
BOOST_AUTO_TEST_CASE(mobius_rescaling_where_the_plain_product_overflows) {
  rng r(seed_for(735));
  std::int64_t const n = 200003;
  auto const maps = recur_test::overflowing_pivot_maps(r, static_cast<std::size_t>(n), 0.25);
  auto const &al = maps.d.alpha, &be = maps.d.beta, &ga = maps.d.gamma, &de = maps.d.delta;
  BOOST_TEST(!maps.plain_product_finite);
  layout const lay = layout::contiguous(n);
  std::vector<double> const& want = maps.want;
  auto const da = upload(al), db = upload(be), dg = upload(ga), dd = upload(de);
  auto const dp = poisoned<float>(static_cast<std::size_t>(n)), df = poisoned<float>(1);
  recur::mobius_options<float> opt;
  opt.init_value = 0.25f;
  opt.final_state = df.p;
  settle();
  recur::mobius_recurrence(recur::cuda{test_stream()}, da.p, db.p, dg.p, dd.p, dp.p, lay, opt);
  finish();
  auto const p = dp.read();
  BOOST_TEST(std::all_of(p.begin(), p.end(), [](float v) { return std::isfinite(v); }));
  auto const msg = compare(p, want, p, lay, 1, 8 * eps<float>);
  BOOST_TEST(msg.empty(), msg);
  BOOST_TEST(std::fabs(double(df.read()[0]) - maps.want_final) <= 8 * eps<float>);
}

// n == 0: final_state = init (or init_value), nothing else written;
// count == 0: nothing at all.
BOOST_AUTO_TEST_CASE(empty_shapes) {
  std::vector<float> const init{1, 2, 3, 4, 5, 6};
  auto const di = upload(init);
  auto const df = poisoned<float>(6), dx = poisoned<float>(4), dM = poisoned<float>(4);
  settle();
  recur::matrix_chain<2>(recur::cuda{test_stream()}, dM.p, nullptr, dx.p, layout::contiguous(0, 3),
                         recur::chain_options<float>{di.p, df.p});
  finish();
  BOOST_TEST(same_bytes(df.read(), init));
  auto const df2 = poisoned<float>(3);
  recur::mobius_options<float> mo;
  mo.init_value = 7.0f;
  mo.final_state = df2.p;
  recur::mobius_recurrence(recur::cuda{test_stream()}, dM.p, dM.p, dM.p, dM.p, dx.p, layout::contiguous(0, 3),
                           mo);
  finish();
  BOOST_TEST((df2.read() == std::vector<float>{7, 7, 7}));
  auto const df3 = poisoned<float>(6);
  recur::matrix_chain<2>(recur::cuda{test_stream()}, dM.p, nullptr, dx.p, layout::contiguous(5, 0),
                         recur::chain_options<float>{di.p, df3.p});
  finish();
  auto const x = dx.read(), f3 = df3.read();
  BOOST_TEST(std::all_of(x.begin(), x.end(), [](float v) { return recur_test::is_poison(v); }));
  BOOST_TEST(std::all_of(f3.begin(), f3.end(), [](float v) { return recur_test::is_poison(v); }));
}

BOOST_AUTO_TEST_CASE(deterministic) {
  rng r(seed_for(740));
  std::int64_t const n = 1000003;
  auto const M = contractive_matrices<float, 3>(r, static_cast<std::size_t>(n));
  auto const u = random_values<float>(r, static_cast<std::size_t>(n) * 3);
  auto const dM = upload(M), du = upload(u);
  auto const x1 = poisoned<float>(static_cast<std::size_t>(n) * 3),
             x2 = poisoned<float>(static_cast<std::size_t>(n) * 3);
  settle();
  recur::matrix_chain<3>(recur::cuda{test_stream()}, dM.p, du.p, x1.p, layout::contiguous(n));
  recur::matrix_chain<3>(recur::cuda{test_stream()}, dM.p, du.p, x2.p, layout::contiguous(n));
  finish();
  BOOST_TEST(same_bytes(x1.read(), x2.read()));
  auto const d = contractive_mobius<double>(r, static_cast<std::size_t>(n));
  auto const da = upload(d.alpha), db = upload(d.beta), dg = upload(d.gamma), dd = upload(d.delta);
  auto const p1 = poisoned<double>(static_cast<std::size_t>(n)),
             p2 = poisoned<double>(static_cast<std::size_t>(n));
  settle();
  recur::mobius_recurrence(recur::cuda{test_stream()}, da.p, db.p, dg.p, dd.p, p1.p, layout::contiguous(n));
  recur::mobius_recurrence(recur::cuda{test_stream()}, da.p, db.p, dg.p, dd.p, p2.p, layout::contiguous(n));
  finish();
  BOOST_TEST(same_bytes(p1.read(), p2.read()));
}

// Bad arguments: recur::invalid_argument naming the argument, nothing written.
BOOST_AUTO_TEST_CASE(errors_nothing_written) {
  std::int64_t const n = 100;
  auto const dM = poisoned<float>(static_cast<std::size_t>(n) * 4),
             du = poisoned<float>(static_cast<std::size_t>(n) * 2),
             dx = poisoned<float>(static_cast<std::size_t>(n) * 2), di = poisoned<float>(2),
             df = poisoned<float>(2);
  std::vector<float> host_M(static_cast<std::size_t>(n) * 4, 0.5f);
  settle();
  recur::cuda const ex{test_stream()};
  auto rejects = [&](char const* what, char const* needle, auto&& call) {
    bool thrown = false;
    try {
      call();
    } catch (recur::invalid_argument const& e) {
      thrown = std::string(e.what()).find(needle) != std::string::npos;
      BOOST_TEST(thrown, what << ": message '" << e.what() << "' lacks '" << needle << "'");
    }
    BOOST_TEST(thrown, what << ": no invalid_argument");
    finish();
    auto const x = dx.read(), f = df.read();
    BOOST_TEST(std::all_of(x.begin(), x.end(), [](float v) { return recur_test::is_poison(v); }), what);
    BOOST_TEST(std::all_of(f.begin(), f.end(), [](float v) { return recur_test::is_poison(v); }), what);
  };
  using opts = recur::chain_options<float>;
  rejects("host M", "M", [&] {
    recur::matrix_chain<2>(ex, host_M.data(), du.p, dx.p, layout::contiguous(n), opts{nullptr, df.p});
  });
  rejects("null M", "M", [&] {
    recur::matrix_chain<2>(ex, static_cast<float const*>(nullptr), du.p, dx.p, layout::contiguous(n),
                           opts{nullptr, df.p});
  });
  rejects("x overlaps u", "x overlaps u", [&] {
    recur::matrix_chain<2>(ex, dM.p, du.p, du.p + 1, layout::contiguous(n - 1), opts{nullptr, df.p});
  });
  rejects("negative n", "n", [&] {
    recur::matrix_chain<2>(ex, dM.p, du.p, dx.p, layout::contiguous(-1), opts{nullptr, df.p});
  });
  rejects("final_state overlaps x", "final_state", [&] {
    recur::matrix_chain<2>(ex, dM.p, du.p, dx.p, layout::contiguous(n), opts{nullptr, dx.p + 4});
  });
  recur::mobius_options<float> mo;
  mo.final_state = df.p;
  rejects("mobius host alpha", "alpha", [&] {
    recur::mobius_recurrence(ex, host_M.data(), dM.p, dM.p, dM.p, dx.p, layout::contiguous(n), mo);
  });
  rejects("mobius p overlaps beta", "p overlaps beta", [&] {
    recur::mobius_recurrence(ex, dM.p, dM.p + 100, dM.p + 200, dM.p + 300, dM.p + 101, layout::contiguous(50),
                             mo);
  });
}

BOOST_AUTO_TEST_SUITE_END()
