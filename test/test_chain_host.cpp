// recur::matrix_chain, linrec_order_k and mobius_recurrence with recur::host:
// against the sequential references (bit for bit where a sequence runs
// sequentially, to rounding where it is cut into chunks), layouts, thread
// counts, init/final state, in place, the Moebius rescaling where the plain
// product overflows f32, argument errors (nothing written), repeatability.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>
#include <recur/chain.hpp>
#include <recur/ops/mobius.hpp>
#include <recur/reference/linrec_order_k.hpp>
#include <recur/reference/matrix_chain.hpp>
#include <recur/reference/mobius.hpp>

#include "common/chains.hpp"
#include "common/layouts.hpp"
#include "common/poison.hpp"
#include "common/random.hpp"

namespace ref = recur::reference;
namespace ops = recur::ops;
using recur::host;
using recur::layout;
using recur_test::layout_kind;
using recur_test::poison;
using recur_test::rng;
using recur_test::same_bytes;
using recur_test::seed_for;

namespace {

constexpr auto const& all_kinds = recur_test::all_layout_kinds;

template <class T>
constexpr double eps = std::numeric_limits<T>::epsilon();

using recur_test::contractive_matrices;
using recur_test::contractive_mobius;
using recur_test::covered;
using recur_test::gaps_untouched;
using recur_test::max_error;
using recur_test::random_values;
using recur_test::rho;
using recur_test::widen;

// ------------------------------------------------------------ matrix chain --

// Small cases all run sequentially (P = 1): the reference's bits.
template <class T, int K>
void chain_small(std::uint64_t seed) {
  rng r(seed);
  for (std::int64_t const n : {0, 1, 2, 3, 5, 31, 127, 129, 257})
    for (auto const kind : all_kinds)
      for (std::int64_t const count : {1, 3}) {
        layout const lay = recur_test::make_layout(kind, n, count);
        std::size_t const ext = static_cast<std::size_t>(recur_test::extent(lay));
        auto const M = contractive_matrices<T, K>(r, ext);
        auto const u = random_values<T>(r, ext * K);
        auto const init = random_values<T>(r, count * K);
        std::vector<T> want(ext * K, poison<T>()), want_f(count * K, poison<T>());
        ref::matrix_chain<T, K>(M.data(), u.data(), want.data(), lay, init.data(), want_f.data());
        for (int const threads : {1, 2, 0}) {
          std::vector<T> x(ext * K, poison<T>()), f(count * K, poison<T>());
          recur::chain_options<T> opt;
          opt.init = init.data();
          opt.final_state = f.data();
          recur::matrix_chain<K>(host{threads}, M.data(), u.data(), x.data(), lay, opt);
          BOOST_TEST(same_bytes(x, want), "K=" << K << " n=" << n << " " << recur_test::name(kind)
                                               << " count=" << count << " threads=" << threads);
          BOOST_TEST(same_bytes(f, want_f));
          BOOST_TEST(gaps_untouched(x, lay, K));
        }
        // No input, no init, no final state.
        std::vector<T> want0(ext * K, poison<T>()), x0(ext * K, poison<T>());
        ref::matrix_chain<T, K>(M.data(), nullptr, want0.data(), lay, nullptr, nullptr);
        recur::matrix_chain<K>(host{}, M.data(), nullptr, x0.data(), lay);
        BOOST_TEST(same_bytes(x0, want0));
        // In place: x == u.
        std::vector<T> v = u;
        recur::matrix_chain<K>(host{}, M.data(), v.data(), v.data(), lay,
                               recur::chain_options<T>{init.data(), nullptr});
        auto const in = covered(lay, K);
        bool ok = true;
        for (std::size_t o = 0; o < v.size(); ++o)
          ok = ok && recur_test::same_bits(v[o], in[o] ? want[o] : u[o]);
        BOOST_TEST(ok, "in place K=" << K << " n=" << n);
      }
}

// Long sequences cut into chunks, compared with the reference in double;
// repeated to the bit with the same thread count, and to rounding across
// thread counts. (Contractive chunks forget their incoming state to the last
// bit, so these results often equal the float reference bitwise; the
// rotation test below shows the chunks at work.)
template <class T, int K>
void chain_long(std::uint64_t seed, std::int64_t n, std::int64_t count, layout_kind kind,
                std::initializer_list<int> thread_counts) {
  rng r(seed);
  layout const lay = recur_test::make_layout(kind, n, count);
  std::size_t const ext = static_cast<std::size_t>(recur_test::extent(lay));
  auto const M = contractive_matrices<T, K>(r, ext);
  auto const u = random_values<T>(r, ext * K);
  auto const init = random_values<T>(r, count * K, 4.0);
  std::vector<T> same_type(ext * K, poison<T>()), same_type_f(count * K);
  ref::matrix_chain<T, K>(M.data(), u.data(), same_type.data(), lay, init.data(), same_type_f.data());
  std::vector<double> want(ext * K), want_f(count * K);
  ref::matrix_chain<double, K>(widen(M).data(), widen(u).data(), want.data(), lay, widen(init).data(),
                               want_f.data());
  // Errors are forgotten at rate rho: each value carries those of the last
  // 1 / (1 - rho) steps, K roundings each, plus the chunk products'
  // O(log n) reassociation.
  double const tol = 2.0 * K * eps<T> * (1.0 / (1.0 - rho) + std::log2(double(n)));
  for (int const threads : thread_counts) {
    std::vector<T> x(ext * K, poison<T>()), f(count * K, poison<T>());
    recur::chain_options<T> opt{init.data(), f.data()};
    recur::matrix_chain<K>(host{threads}, M.data(), u.data(), x.data(), lay, opt);
    auto const [err, mag] = max_error(x, want, lay, K);
    BOOST_TEST(err <= tol * (1 + mag), "K=" << K << " n=" << n << " " << recur_test::name(kind) << " threads="
                                            << threads << " err=" << err << " tol=" << tol * (1 + mag));
    auto const [ferr, fmag] = max_error(f, want_f, layout::contiguous(count * K), 1);
    BOOST_TEST(ferr <= tol * (1 + fmag));
    BOOST_TEST(gaps_untouched(x, lay, K));
    std::vector<T> again(ext * K, poison<T>()), f2(count * K, poison<T>());
    recur::matrix_chain<K>(host{threads}, M.data(), u.data(), again.data(), lay,
                           recur::chain_options<T>{init.data(), f2.data()});
    BOOST_TEST(same_bytes(again, x), "repeat threads=" << threads);
    BOOST_TEST(same_bytes(f2, f));
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(chain_host)

BOOST_AUTO_TEST_CASE(matrix_chain_small_f32) {
  chain_small<float, 2>(seed_for(601));
  chain_small<float, 3>(seed_for(602));
  chain_small<float, 5>(seed_for(603));
  chain_small<float, 8>(seed_for(604));
}
BOOST_AUTO_TEST_CASE(matrix_chain_small_f64) {
  chain_small<double, 2>(seed_for(605));
  chain_small<double, 3>(seed_for(606));
  chain_small<double, 5>(seed_for(607));
  chain_small<double, 8>(seed_for(608));
}
// Other orders of the instantiated range, briefly.
BOOST_AUTO_TEST_CASE(matrix_chain_other_orders) {
  rng r(seed_for(609));
  auto check = [&]<int K>() {
    layout const lay = layout::interleaved(17, 4);
    auto const M = contractive_matrices<double, K>(r, 68);
    auto const u = random_values<double>(r, 68 * K);
    std::vector<double> want(68 * K), x(68 * K, poison<double>());
    ref::matrix_chain<double, K>(M.data(), u.data(), want.data(), lay, nullptr, nullptr);
    recur::matrix_chain<K>(host{}, M.data(), u.data(), x.data(), lay);
    BOOST_TEST(same_bytes(x, want), "K=" << K);
  };
  check.operator()<4>();
  check.operator()<6>();
  check.operator()<7>();
}

// Chunk counts (P = floor(sqrt(n / 5000)), clamped to the threads) are
// chosen so that chunks pay for K x K products: P > 1 + K.
BOOST_AUTO_TEST_CASE(matrix_chain_long_k2_f64) {
  chain_long<double, 2>(seed_for(611), 100003, 1, layout_kind::contiguous, {4, 6});
}
BOOST_AUTO_TEST_CASE(matrix_chain_long_k3_f32_interleaved) {
  chain_long<float, 3>(seed_for(612), (1 << 17) + 1, 2, layout_kind::interleaved, {5, 8});
}
BOOST_AUTO_TEST_CASE(matrix_chain_long_k5_f32_strided) {
  chain_long<float, 5>(seed_for(613), 300007, 1, layout_kind::strided_gaps, {8});
}
BOOST_AUTO_TEST_CASE(matrix_chain_long_k8_f32) {
  chain_long<float, 8>(seed_for(614), 500009, 1, layout_kind::contiguous, {10});
}

// Rotations (K = 3, random Givens pairs, non-commuting) remember everything:
// x_i = R_i ... R_0 x_{-1} keeps its norm, errors grow at most like i K eps,
// and the chunked products are reassociated, so the result differs from the
// float reference in its last bits while matching the double one.
template <class T>
void rotations(std::uint64_t seed) {
  rng r(seed);
  constexpr int K = 3;
  std::int64_t const n = 200003;
  std::vector<T> M(n * K * K);
  for (std::int64_t i = 0; i < n; ++i) {
    double const a = 6.283 * r.uniform(), b = 6.283 * r.uniform();
    double const ca = std::cos(a), sa = std::sin(a), cb = std::cos(b), sb = std::sin(b);
    // G_xy(a) * G_yz(b)
    double const m[K][K] = {{ca, -sa * cb, sa * sb}, {sa, ca * cb, -ca * sb}, {0, sb, cb}};
    for (int row = 0; row < K; ++row)
      for (int c = 0; c < K; ++c) M[i * K * K + row * K + c] = static_cast<T>(m[row][c]);
  }
  std::vector<T> const init = {T(1), T(0.5), T(-0.25)};
  layout const lay = layout::contiguous(n);
  std::vector<T> same_type(n * K);
  ref::matrix_chain<T, K>(M.data(), nullptr, same_type.data(), lay, init.data(), nullptr);
  std::vector<double> want(n * K);
  ref::matrix_chain<double, K>(widen(M).data(), nullptr, want.data(), lay, widen(init).data(), nullptr);
  std::vector<T> x(n * K, poison<T>());
  recur::matrix_chain<K>(host{8}, M.data(), nullptr, x.data(), lay,
                         recur::chain_options<T>{init.data(), nullptr});
  auto const [err, mag] = max_error(x, want, lay, K);
  BOOST_TEST(err <= 2.0 * K * eps<T> * double(n) * mag, "err=" << err);
  BOOST_TEST(!same_bytes(x, same_type), "chunks expected");
}

BOOST_AUTO_TEST_CASE(matrix_chain_rotations_f32) { rotations<float>(seed_for(615)); }
BOOST_AUTO_TEST_CASE(matrix_chain_rotations_f64) { rotations<double>(seed_for(616)); }

BOOST_AUTO_TEST_SUITE_END()

// ------------------------------------------------------------------ order k --

namespace {

// a_1 .. a_k of prod_j (1 - r_j z^-1), real poles |r_j| < 0.5: stable, and
// the impulse response sums to at most 2^k.
template <class T>
std::vector<T> stable_coefficients(rng& r, int k) {
  std::vector<double> p = {1.0};
  for (int j = 0; j < k; ++j) {
    double const root = 0.5 * r.symmetric();
    p.push_back(0.0);
    for (std::size_t i = p.size() - 1; i > 0; --i) p[i] -= root * p[i - 1];
  }
  std::vector<T> a;
  for (int j = 1; j <= k; ++j) a.push_back(static_cast<T>(-p[j]));
  return a;
}

template <class T>
void order_k_small(std::uint64_t seed) {
  rng r(seed);
  for (int const k : {0, 1, 2, 3, 4, 8, 10})
    for (std::int64_t const n : {0, 1, 2, 3, 7, 13, 64, 65, 200})
      for (auto const kind : all_kinds)
        for (std::int64_t const count : {1, 5}) {
          auto const a = stable_coefficients<T>(r, k);
          layout const lay = recur_test::make_layout(kind, n, count);
          std::size_t const ext = static_cast<std::size_t>(recur_test::extent(lay));
          auto const x = random_values<T>(r, ext);
          auto const init = random_values<T>(r, count * k);
          std::vector<T> want(ext, poison<T>()), want_f(count * k, poison<T>());
          ref::linrec_order_k<T>(a, x.data(), want.data(), lay, init.data(), want_f.data());
          for (int const threads : {1, 3, 0}) {
            std::vector<T> y(ext, poison<T>()), f(count * k, poison<T>());
            recur::linrec_order_k(host{threads}, a, x.data(), y.data(), lay,
                                  recur::chain_options<T>{init.data(), f.data()});
            BOOST_TEST(same_bytes(y, want), "k=" << k << " n=" << n << " " << recur_test::name(kind)
                                                 << " count=" << count << " threads=" << threads);
            BOOST_TEST(same_bytes(f, want_f));
            BOOST_TEST(gaps_untouched(y, lay, 1));
          }
          // In place, zero initial history; final_state == init exactly.
          std::vector<T> want0(ext, poison<T>());
          ref::linrec_order_k<T>(a, x.data(), want0.data(), lay, nullptr, nullptr);
          std::vector<T> v = x;
          recur::linrec_order_k(host{}, a, v.data(), v.data(), lay);
          auto const in = covered(lay, 1);
          bool ok = true;
          for (std::size_t o = 0; o < v.size(); ++o)
            ok = ok && recur_test::same_bits(v[o], in[o] ? want0[o] : x[o]);
          BOOST_TEST(ok, "in place k=" << k << " n=" << n);
          std::vector<T> state = init, y2(ext, poison<T>());
          recur::linrec_order_k(host{}, a, x.data(), y2.data(), lay,
                                recur::chain_options<T>{state.data(), state.data()});
          BOOST_TEST(same_bytes(y2, want));
          BOOST_TEST(same_bytes(state, want_f));
        }
}

// Chunks (P > 2: three or more threads); in place; continuation: the first
// half's final state as the second half's init gives the one-call result.
template <class T>
void order_k_long(std::uint64_t seed) {
  rng r(seed);
  for (int const k : {2, 4, 8})
    for (auto const kind : {layout_kind::contiguous, layout_kind::interleaved}) {
      std::int64_t const n = 200003, count = 2;
      auto const a = stable_coefficients<T>(r, k);
      layout const lay = recur_test::make_layout(kind, n, count);
      std::size_t const ext = static_cast<std::size_t>(recur_test::extent(lay));
      auto const x = random_values<T>(r, ext);
      auto const init = random_values<T>(r, count * k);
      std::vector<double> const ad(a.begin(), a.end());
      std::vector<double> want(ext), want_f(count * k);
      ref::linrec_order_k<double>(ad, widen(x).data(), want.data(), lay, widen(init).data(), want_f.data());
      std::vector<T> same_type(ext);
      ref::linrec_order_k<T>(a, x.data(), same_type.data(), lay, init.data(), nullptr);
      // Each value carries the errors of the steps its impulse response
      // remembers (sum |h| <= 2^k), k roundings each, plus the powers of the
      // companion matrix (log2 n products).
      double const tol = 2.0 * k * eps<T> * (std::ldexp(1.0, k) + std::log2(double(n)));
      for (int const threads : {3, 8}) {
        std::vector<T> y = x, f(count * k, poison<T>());
        recur::linrec_order_k(host{threads}, a, y.data(), y.data(), lay,
                              recur::chain_options<T>{init.data(), f.data()});
        auto const [err, mag] = max_error(y, want, lay, 1);
        BOOST_TEST(err <= tol * (1 + mag), "k=" << k << " " << recur_test::name(kind) << " threads="
                                                << threads << " err=" << err << " tol=" << tol * (1 + mag));
        auto const [ferr, fmag] = max_error(f, want_f, layout::contiguous(count * k), 1);
        BOOST_TEST(ferr <= tol * (1 + fmag));
        std::vector<T> again = x;
        recur::linrec_order_k(host{threads}, a, again.data(), again.data(), lay,
                              recur::chain_options<T>{init.data(), nullptr});
        BOOST_TEST(same_bytes(again, y), "repeat threads=" << threads);
      }
      // Two calls, state carried (sequential path for both halves, threads 1).
      layout first = lay, second = lay;
      first.n = n / 2;
      second.n = n - n / 2;
      std::int64_t const shift = first.n * lay.element_stride;
      std::vector<T> halves(ext, poison<T>()), z(count * k);
      recur::linrec_order_k(host{1}, a, x.data(), halves.data(), first,
                            recur::chain_options<T>{init.data(), z.data()});
      recur::linrec_order_k(host{1}, a, x.data() + shift, halves.data() + shift, second,
                            recur::chain_options<T>{z.data(), z.data()});
      BOOST_TEST(same_bytes(halves, same_type));
    }
  // With poles inside |z| < 1/2 a chunk's incoming history is forgotten to
  // the last bit long before the chunk ends, so the chunked result usually
  // equals the reference bitwise. A running sum (pole at 1, k = 1 and, with
  // a zero coefficient, k = 2) remembers everything: chunks reassociate the
  // sum, and the result agrees with the double reference to summation error
  // (n eps times the sum of |x|), not bitwise with the float reference.
  for (int const k : {1, 2}) {
    std::int64_t const n = 200003;
    std::vector<T> a(static_cast<std::size_t>(k), T(0));
    a[0] = T(1);
    auto const x = random_values<T>(r, n);
    std::vector<double> want(n);
    ref::linrec_order_k<double>(std::vector<double>(a.begin(), a.end()), widen(x).data(), want.data(),
                                layout::contiguous(n), nullptr, nullptr);
    std::vector<T> same_type(n), y(n, poison<T>());
    ref::linrec_order_k<T>(a, x.data(), same_type.data(), layout::contiguous(n), nullptr, nullptr);
    recur::linrec_order_k(host{4}, a, x.data(), y.data(), layout::contiguous(n));
    double sum = 0;
    for (auto v : x) sum += std::fabs(double(v));
    auto const [err, mag] = max_error(y, want, layout::contiguous(n), 1);
    BOOST_TEST(err <= 2 * eps<T> * double(n) * sum, "k=" << k << " err=" << err);
    BOOST_TEST(!same_bytes(y, same_type), "chunks expected k=" << k);
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(order_k_host)
BOOST_AUTO_TEST_CASE(order_k_small_f32) { order_k_small<float>(seed_for(621)); }
BOOST_AUTO_TEST_CASE(order_k_small_f64) { order_k_small<double>(seed_for(622)); }
BOOST_AUTO_TEST_CASE(order_k_long_f32) { order_k_long<float>(seed_for(623)); }
BOOST_AUTO_TEST_CASE(order_k_long_f64) { order_k_long<double>(seed_for(624)); }
BOOST_AUTO_TEST_SUITE_END()

// ------------------------------------------------------------------- Moebius --

namespace {

template <class T>
void mobius_small(std::uint64_t seed) {
  rng r(seed);
  for (std::int64_t const n : {0, 1, 2, 3, 11, 127, 128, 129, 1000})
    for (auto const kind : all_kinds)
      for (std::int64_t const count : {1, 4}) {
        layout const lay = recur_test::make_layout(kind, n, count);
        std::size_t const ext = static_cast<std::size_t>(recur_test::extent(lay));
        auto const d = contractive_mobius<T>(r, ext);
        auto const init = random_values<T>(r, count);
        std::vector<T> want(ext, poison<T>()), want_f(count, poison<T>());
        ref::mobius<T>(d.alpha.data(), d.beta.data(), d.gamma.data(), d.delta.data(), want.data(), lay,
                       init.data(), T(0), want_f.data());
        for (int const threads : {1, 2, 0}) {
          std::vector<T> p(ext, poison<T>()), f(count, poison<T>());
          recur::mobius_options<T> opt;
          opt.init = init.data();
          opt.final_state = f.data();
          recur::mobius_recurrence(host{threads}, d.alpha.data(), d.beta.data(), d.gamma.data(),
                                   d.delta.data(), p.data(), lay, opt);
          BOOST_TEST(same_bytes(p, want), "n=" << n << " " << recur_test::name(kind) << " count=" << count
                                               << " threads=" << threads);
          BOOST_TEST(same_bytes(f, want_f));
          BOOST_TEST(gaps_untouched(p, lay, 1));
        }
        // One initial value for all; in place over delta.
        std::vector<T> want1(ext, poison<T>()), want1_f(count);
        ref::mobius<T>(d.alpha.data(), d.beta.data(), d.gamma.data(), d.delta.data(), want1.data(), lay,
                       nullptr, T(0.25), want1_f.data());
        std::vector<T> v = d.delta, f(count, poison<T>());
        recur::mobius_options<T> opt;
        opt.init_value = T(0.25);
        opt.final_state = f.data();
        recur::mobius_recurrence(host{}, d.alpha.data(), d.beta.data(), d.gamma.data(), v.data(), v.data(),
                                 lay, opt);
        auto const in = covered(lay, 1);
        bool ok = true;
        for (std::size_t o = 0; o < v.size(); ++o)
          ok = ok && recur_test::same_bits(v[o], in[o] ? want1[o] : d.delta[o]);
        BOOST_TEST(ok, "in place n=" << n);
        BOOST_TEST(same_bytes(f, want1_f));
      }
}

template <class T>
void mobius_long(std::uint64_t seed) {
  rng r(seed);
  std::int64_t const n = 200003, count = 2;
  for (auto const kind : {layout_kind::contiguous, layout_kind::interleaved_padded}) {
    layout const lay = recur_test::make_layout(kind, n, count);
    std::size_t const ext = static_cast<std::size_t>(recur_test::extent(lay));
    auto const d = contractive_mobius<T>(r, ext);
    auto const init = random_values<T>(r, count);
    std::vector<double> want(ext), want_f(count);
    ref::mobius<double>(widen(d.alpha).data(), widen(d.beta).data(), widen(d.gamma).data(),
                        widen(d.delta).data(), want.data(), lay, widen(init).data(), 0.0, want_f.data());
    double const tol = 16 * eps<T> * (4 + std::log2(double(n)));
    for (int const threads : {5, 8}) {  // P = 5, 6 > 1 + 3: chunks
      std::vector<T> p(ext, poison<T>()), f(count, poison<T>());
      recur::mobius_options<T> opt;
      opt.init = init.data();
      opt.final_state = f.data();
      recur::mobius_recurrence(host{threads}, d.alpha.data(), d.beta.data(), d.gamma.data(), d.delta.data(),
                               p.data(), lay, opt);
      auto const [err, mag] = max_error(p, want, lay, 1);
      BOOST_TEST(err <= tol * (1 + mag), recur_test::name(kind) << " threads=" << threads << " err=" << err);
      auto const [ferr, fmag] = max_error(f, want_f, layout::contiguous(count), 1);
      BOOST_TEST(ferr <= tol * (1 + fmag));
      std::vector<T> again(ext, poison<T>());
      recur::mobius_recurrence(host{threads}, d.alpha.data(), d.beta.data(), d.gamma.data(), d.delta.data(),
                               again.data(), lay, opt);
      BOOST_TEST(same_bytes(again, p), "repeat threads=" << threads);
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(mobius_host)
BOOST_AUTO_TEST_CASE(mobius_small_f32) { mobius_small<float>(seed_for(631)); }
BOOST_AUTO_TEST_CASE(mobius_small_f64) { mobius_small<double>(seed_for(632)); }
BOOST_AUTO_TEST_CASE(mobius_long_f32) { mobius_long<float>(seed_for(633)); }
BOOST_AUTO_TEST_CASE(mobius_long_f64) { mobius_long<double>(seed_for(634)); }

// The pivot-like maps of recur_test::overflowing_pivot_maps: the plain
// product of a chunk (tens of thousands of steps) leaves f32's range after a
// few steps, but p stays near 2 - sqrt(3). The chunked run (8 threads: P = 6)
// is finite and matches the recurrence evaluated in double.
BOOST_AUTO_TEST_CASE(mobius_rescaling_where_the_plain_product_overflows) {
  rng r(seed_for(635));
  std::int64_t const n = 200003;
  auto const maps = recur_test::overflowing_pivot_maps(r, static_cast<std::size_t>(n), 0.25);
  auto const &al = maps.d.alpha, &be = maps.d.beta, &ga = maps.d.gamma, &de = maps.d.delta;
  // The unscaled product of the first 100 steps is already not finite.
  BOOST_TEST(!maps.plain_product_finite);

  layout const lay = layout::contiguous(n);
  std::vector<double> const& want = maps.want;
  std::vector<float> p(n, poison<float>()), f(1, poison<float>());
  recur::mobius_options<float> opt;
  opt.init_value = 0.25f;
  opt.final_state = f.data();
  recur::mobius_recurrence(host{8}, al.data(), be.data(), ga.data(), de.data(), p.data(), lay, opt);
  bool finite = true;
  double err = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    finite = finite && std::isfinite(p[i]);
    err = std::max(err, std::fabs(double(p[i]) - want[i]));
  }
  BOOST_TEST(finite);
  BOOST_TEST(err <= 8 * eps<float>, "err=" << err);
  BOOST_TEST(std::fabs(double(f[0]) - maps.want_final) <= 8 * eps<float>);

  // p -> (s p + s b) / s = p + b_i, s a random power of two in [2^8, 2^24]:
  // a running sum, which remembers everything. The plain product (s^n on the
  // diagonal) overflows; the chunked, rescaled one reassociates the sum, so
  // the result matches the double reference to summation error and differs
  // from the float reference in its last bits (the chunks did run).
  std::vector<float> sal(n), sbe(n), sga(n, 0.0f), sde(n);
  double total = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    float const s = std::ldexp(1.0f, 8 + int(r.next() % 17)), b = float(r.symmetric());
    sal[i] = sde[i] = s;
    sbe[i] = s * b;
    total += std::fabs(b);
  }
  std::vector<double> swant(n);
  ref::mobius<double>(widen(sal).data(), widen(sbe).data(), widen(sga).data(), widen(sde).data(),
                      swant.data(), lay, nullptr, 0.0, nullptr);
  std::vector<float> sref(n), sp(n, poison<float>());
  ref::mobius<float>(sal.data(), sbe.data(), sga.data(), sde.data(), sref.data(), lay, nullptr, 0.0f,
                     nullptr);
  recur::mobius_recurrence(host{8}, sal.data(), sbe.data(), sga.data(), sde.data(), sp.data(), lay);
  double serr = 0;
  for (std::int64_t i = 0; i < n; ++i) serr = std::max(serr, std::fabs(double(sp[i]) - swant[i]));
  BOOST_TEST(serr <= 2 * eps<float> * double(n) * total, "err=" << serr);
  BOOST_TEST(!same_bytes(sp, sref), "chunks expected");
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------- arguments --

BOOST_AUTO_TEST_SUITE(chain_host_arguments)

namespace {

// call() must throw invalid_argument and leave every output byte as it was.
template <class T>
void rejects(std::string const& what, std::function<void()> const& call,
             std::vector<std::vector<T>*> outputs) {
  std::vector<std::vector<T>> before;
  for (auto* o : outputs) before.push_back(*o);
  BOOST_CHECK_THROW(call(), recur::invalid_argument);
  bool untouched = true;
  for (std::size_t j = 0; j < outputs.size(); ++j)
    untouched = untouched && same_bytes(*outputs[j], before[j]);
  BOOST_TEST(untouched, what);
}

}  // namespace

BOOST_AUTO_TEST_CASE(matrix_chain_bad_arguments) {
  constexpr int K = 3;
  std::int64_t const n = 10, count = 2;
  layout const lay = layout::contiguous(n, count);
  std::vector<double> M(n * count * K * K + K * K, 0.5), u(n * count * K + K, 1.0);
  std::vector<double> x(n * count * K + K, poison<double>()), st(count * K + 1, poison<double>());
  std::vector<double> fin(count * K, poison<double>());
  auto outs = std::vector<std::vector<double>*>{&x, &st, &fin};
  using opts = recur::chain_options<double>;
  auto run = [&](host h, double const* m, double const* uu, double* xx, layout l, opts o = {}) {
    return [=] { recur::matrix_chain<K>(h, m, uu, xx, l, o); };
  };
  rejects<double>("threads", run(host{-1}, M.data(), u.data(), x.data(), lay), outs);
  rejects<double>("n < 0", run(host{}, M.data(), u.data(), x.data(), layout{-1, 1, 1, 0}), outs);
  rejects<double>("count < 0", run(host{}, M.data(), u.data(), x.data(), layout{n, -2, 1, n}), outs);
  rejects<double>("M null", run(host{}, nullptr, u.data(), x.data(), lay), outs);
  rejects<double>("x null", run(host{}, M.data(), u.data(), nullptr, lay), outs);
  auto const* mis = reinterpret_cast<double const*>(reinterpret_cast<char const*>(M.data()) + 4);
  rejects<double>("M misaligned", run(host{}, mis, u.data(), x.data(), lay), outs);
  rejects<double>("self-overlapping layout",
                  run(host{}, M.data(), u.data(), x.data(), layout{n, count, 1, 3}), outs);
  rejects<double>("zero element stride", run(host{}, M.data(), u.data(), x.data(), layout{n, count, 0, n}),
                  outs);
  rejects<double>("huge stride",
                  run(host{}, M.data(), u.data(), x.data(), layout{n, count, std::int64_t{1} << 58, 1}),
                  outs);
  // x shifted by one vector against u: a partial overlap (x == u is in place).
  std::vector<double> xu(n * count * K + K, 1.0);
  auto outs2 = std::vector<std::vector<double>*>{&xu, &st, &fin};
  rejects<double>("x overlaps u", run(host{}, M.data(), xu.data(), xu.data() + K, lay), outs2);
  rejects<double>(
      "x overlaps M",
      run(host{}, M.data(), u.data(), reinterpret_cast<double*>(const_cast<double*>(M.data())) + 1, lay),
      outs);
  rejects<double>("final overlaps init partially",
                  run(host{}, M.data(), u.data(), x.data(), lay, opts{st.data(), st.data() + 1}), outs);
  rejects<double>("final overlaps x",
                  run(host{}, M.data(), u.data(), x.data(), lay, opts{nullptr, x.data() + 2}), outs);
  rejects<double>("init overlaps x",
                  run(host{}, M.data(), u.data(), x.data(), lay, opts{x.data(), fin.data()}), outs);
  // Empty batches with null pointers are fine and write nothing but the state.
  recur::matrix_chain<K>(host{}, static_cast<double const*>(nullptr), nullptr, static_cast<double*>(nullptr),
                         layout::contiguous(0, count), opts{nullptr, fin.data()});
  BOOST_TEST(std::all_of(fin.begin(), fin.end(), [](double v) { return v == 0.0; }));
}

BOOST_AUTO_TEST_CASE(order_k_bad_arguments) {
  std::int64_t const n = 10, count = 2;
  layout const lay = layout::contiguous(n, count);
  std::vector<float> a = {0.5f, -0.25f}, x(n * count + 4, 1.0f), y(n * count + 4, poison<float>());
  std::vector<float> st(count * 2 + 1, 0.0f), fin(count * 2, poison<float>());
  auto outs = std::vector<std::vector<float>*>{&y, &fin, &st};
  using opts = recur::chain_options<float>;
  auto run = [&](host h, std::span<float const> aa, float const* xx, float* yy, layout l, opts o = {}) {
    return [=] { recur::linrec_order_k(h, aa, xx, yy, l, o); };
  };
  rejects<float>("threads", run(host{-3}, a, x.data(), y.data(), lay), outs);
  std::vector<float> bad_a = {0.5f, std::numeric_limits<float>::quiet_NaN()};
  rejects<float>("a not finite", run(host{}, bad_a, x.data(), y.data(), lay), outs);
  bad_a[1] = std::numeric_limits<float>::infinity();
  rejects<float>("a infinite", run(host{}, bad_a, x.data(), y.data(), lay), outs);
  rejects<float>("x null", run(host{}, a, nullptr, y.data(), lay), outs);
  rejects<float>("y null", run(host{}, a, x.data(), nullptr, lay), outs);
  rejects<float>("y overlaps x", run(host{}, a, y.data(), y.data() + 1, lay), outs);
  rejects<float>("final overlaps init",
                 run(host{}, a, x.data(), y.data(), lay, opts{st.data(), st.data() + 1}), outs);
  rejects<float>("final overlaps y", run(host{}, a, x.data(), y.data(), lay, opts{nullptr, y.data()}), outs);
  rejects<float>("y overlaps a", run(host{}, std::span<float const>(y.data(), 2), x.data(), y.data(), lay),
                 outs);
  rejects<float>("layout", run(host{}, a, x.data(), y.data(), layout{n, count, 1, 1}), outs);
}

BOOST_AUTO_TEST_CASE(mobius_bad_arguments) {
  std::int64_t const n = 10, count = 2;
  layout const lay = layout::interleaved(n, count);
  std::vector<double> c(n * count + 2, 1.0), p(n * count + 2, poison<double>()),
      fin(count + 1, poison<double>());
  auto outs = std::vector<std::vector<double>*>{&p, &fin};
  using opts = recur::mobius_options<double>;
  auto run = [&](host h, double const* al, double const* be, double const* ga, double const* de, double* pp,
                 layout l,
                 opts o = {}) { return [=] { recur::mobius_recurrence(h, al, be, ga, de, pp, l, o); }; };
  double const* k = c.data();
  rejects<double>("threads", run(host{-1}, k, k, k, k, p.data(), lay), outs);
  rejects<double>("alpha null", run(host{}, nullptr, k, k, k, p.data(), lay), outs);
  rejects<double>("beta null", run(host{}, k, nullptr, k, k, p.data(), lay), outs);
  rejects<double>("gamma null", run(host{}, k, k, nullptr, k, p.data(), lay), outs);
  rejects<double>("delta null", run(host{}, k, k, k, nullptr, p.data(), lay), outs);
  rejects<double>("p null", run(host{}, k, k, k, k, nullptr, lay), outs);
  rejects<double>("p overlaps delta", run(host{}, k, k, k, p.data() + 1, p.data(), lay), outs);
  rejects<double>("final overlaps p",
                  run(host{}, k, k, k, k, p.data(), lay, opts{nullptr, 0.0, p.data() + 3}), outs);
  rejects<double>("final overlaps alpha",
                  run(host{}, fin.data(), k, k, k, p.data(), lay, opts{nullptr, 0.0, fin.data()}), outs);
  rejects<double>("final overlaps init",
                  run(host{}, k, k, k, k, p.data(), lay, opts{fin.data(), 0.0, fin.data() + 1}), outs);
  rejects<double>("layout", run(host{}, k, k, k, k, p.data(), layout{n, count, 1, 1}), outs);
  // Nothing to do: n == 0 copies init (or init_value) to final_state.
  recur::mobius_recurrence<double>(host{}, nullptr, nullptr, nullptr, nullptr, nullptr,
                                   layout::contiguous(0, count), opts{nullptr, 0.5, fin.data()});
  BOOST_TEST(fin[0] == 0.5);
  BOOST_TEST(fin[1] == 0.5);
}

BOOST_AUTO_TEST_SUITE_END()
