// ops::matrix, ops::affine_matrix, companion matrices, and the references
// they are the algebra of: matrix_chain and linrec_order_k.
#include <cmath>
#include <cstdint>
#include <vector>

#include <boost/test/unit_test.hpp>
#include <recur/ops/matrix.hpp>
#include <recur/reference/linrec_order_k.hpp>
#include <recur/reference/matrix_chain.hpp>

#include "common/linrec_harness.hpp"

namespace ops = recur::ops;
namespace ref = recur::reference;
using recur::layout;
using recur_test::rng;
using recur_test::seed_for;

namespace {

// Compile-time: the algebra is constexpr.
constexpr ops::matrix<int, 2> ma{{{1, 2}, {3, 4}}}, mb{{{0, 1}, {1, 0}}};
static_assert(ops::multiply(ma, mb) == ops::matrix<int, 2>{{{2, 1}, {4, 3}}});
static_assert(ops::matrix_product{}(ma, mb) == ops::multiply(mb, ma));
static_assert(ops::multiply(ops::matrix_identity<int, 2>(), ma) == ma);

// Small integers as floats: every product and sum below is exact.
template <class T, int K>
ops::matrix<T, K> small_matrix(rng& r) {
  ops::matrix<T, K> m;
  for (auto& row : m.m)
    for (auto& v : row) v = T(static_cast<int>(r.next() % 5) - 2);
  return m;
}
template <class T, int K>
ops::affine_matrix<T, K> small_affine(rng& r) {
  ops::affine_matrix<T, K> a{small_matrix<T, K>(r), {}};
  for (auto& v : a.u) v = T(static_cast<int>(r.next() % 7) - 3);
  return a;
}
template <class T, int K>
ops::column<T, K> small_column(rng& r) {
  ops::column<T, K> c;
  for (auto& v : c.v) v = T(static_cast<int>(r.next() % 7) - 3);
  return c;
}

// Runs f.template operator()<K>() for K = 1, 2, 3 and 8: both ends of the
// supported range and the orders in use (filters, 3x3 tridiagonal steps),
// not all eight, which would triple this file's compile time.
template <class F>
void for_each_order(F&& f) {
  f.template operator()<1>();
  f.template operator()<2>();
  f.template operator()<3>();
  f.template operator()<8>();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(matrix_algebra)

BOOST_AUTO_TEST_CASE(product_associative_exact_on_small_integers) {
  rng r(seed_for(101));
  for_each_order([&]<int K>() {
    for (int rep = 0; rep < 200; ++rep) {
      // Entries of a triple product are at most 8^2 * 2^3 in magnitude: exact in double.
      auto const x = small_matrix<double, K>(r), y = small_matrix<double, K>(r),
                 z = small_matrix<double, K>(r);
      ops::matrix_product const op;
      BOOST_TEST((op(op(x, y), z) == op(x, op(y, z))), "K = " << K);
    }
  });
}

BOOST_AUTO_TEST_CASE(product_not_commutative_and_in_scan_order) {
  ops::matrix<float, 2> const l{{{1, 1}, {0, 1}}}, r{{{2, 0}, {0, 1}}};
  ops::column<float, 2> const x{{1, 1}};
  auto const lr = ops::matrix_product{}(l, r), rl = ops::matrix_product{}(r, l);
  BOOST_TEST(!(lr == rl));
  // scan order: l acts first, then r.
  BOOST_TEST((ops::multiply(lr, x) == ops::multiply(r, ops::multiply(l, x))));
  BOOST_TEST((lr == ops::matrix<float, 2>{{{2, 2}, {0, 1}}}));
}

BOOST_AUTO_TEST_CASE(identity_left_and_right) {
  rng r(seed_for(102));
  for_each_order([&]<int K>() {
    auto const id = ops::matrix_identity<float, K>();
    auto const aid = ops::affine_matrix_identity<float, K>();
    for (int rep = 0; rep < 50; ++rep) {
      auto const x = small_matrix<float, K>(r);
      BOOST_TEST((ops::matrix_product{}(id, x) == x));
      BOOST_TEST((ops::matrix_product{}(x, id) == x));
      auto const a = small_affine<float, K>(r);
      BOOST_TEST((ops::affine_matrix_compose{}(aid, a) == a));
      BOOST_TEST((ops::affine_matrix_compose{}(a, aid) == a));
      auto const c = small_column<float, K>(r);
      BOOST_TEST((aid.apply(c) == c));
    }
  });
}

// Folding steps with affine_matrix_compose and applying the result is the
// recurrence x_i = M_i x_{i-1} + u_i: the scan view kernels rely on.
BOOST_AUTO_TEST_CASE(affine_matrix_fold_is_sequential_application) {
  rng r(seed_for(103));
  for_each_order([&]<int K>() {
    for (int rep = 0; rep < 20; ++rep) {
      auto acc = ops::affine_matrix_identity<double, K>();
      auto const x0 = small_column<double, K>(r);
      auto x = x0;
      // 0/±1 matrices keep the state small: exact for these lengths.
      for (int i = 0; i < 6; ++i) {
        auto step = small_affine<double, K>(r);
        for (auto& row : step.M.m)
          for (auto& v : row) v = std::fmod(v, 2.0);
        acc = ops::affine_matrix_compose{}(acc, step);
        x = step(x);
        BOOST_TEST((acc(x0) == x), "K = " << K << " step " << i);
      }
      // And associativity of the composition itself.
      auto const a = small_affine<double, K>(r), b = small_affine<double, K>(r),
                 c = small_affine<double, K>(r);
      ops::affine_matrix_compose const op;
      BOOST_TEST((op(op(a, b), c) == op(a, op(b, c))));
    }
  });
}

BOOST_AUTO_TEST_CASE(companion_reproduces_order_k_recurrence) {
  rng r(seed_for(104));
  for_each_order([&]<int K>() {
    std::int64_t const n = 40;
    double a[K];
    for (auto& v : a) v = 0.5 * static_cast<double>(static_cast<int>(r.next() % 3) - 1);
    std::vector<double> x(n), direct(n), via_ref(n);
    for (auto& v : x) v = static_cast<double>(static_cast<int>(r.next() % 9) - 4);
    double init[K];
    for (auto& v : init) v = static_cast<double>(static_cast<int>(r.next() % 5) - 2);
    // Direct: y_i = sum_j a_j y_{i-j} + x_i with y_{-j} = init[j-1].
    auto const y_at = [&](std::int64_t i) { return i >= 0 ? direct[i] : init[-i - 1]; };
    for (std::int64_t i = 0; i < n; ++i) {
      double acc = 0;
      for (int j = 1; j <= K; ++j) acc += a[j - 1] * y_at(i - j);
      direct[i] = acc + x[i];
    }
    // Companion: state (y_i, ..., y_{i-K+1}).
    ops::column<double, K> s;
    for (int j = 0; j < K; ++j) s.v[j] = init[j];
    for (std::int64_t i = 0; i < n; ++i) {
      s = ops::companion_step<double, K>(a, x[i])(s);
      // Same values up to the order of the sum (the companion sums from a_1
      // first too, and adds x after): bitwise equal.
      BOOST_TEST(s.v[0] == direct[i], "K = " << K << " i = " << i);
      for (int j = 1; j < K; ++j) BOOST_TEST(s.v[j] == y_at(i - j));
    }
    // The reference, and its final state (newest first).
    double fin[K];
    ref::linrec_order_k<double>(std::span<double const>(a, K), x.data(), via_ref.data(),
                                layout::contiguous(n), init, fin);
    for (std::int64_t i = 0; i < n; ++i) BOOST_TEST(via_ref[i] == direct[i]);
    for (int j = 0; j < K; ++j) BOOST_TEST(fin[j] == s.v[j]);
  });
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(reference_matrix_chain)

// Against a fold of ops::affine_matrix steps, on a layout that is neither
// contiguous nor interleaved, with poisoned outputs.
BOOST_AUTO_TEST_CASE(matches_fold_across_layouts) {
  constexpr int K = 3;
  rng r(seed_for(105));
  for (auto const kind : {recur_test::layout_kind::contiguous, recur_test::layout_kind::interleaved,
                          recur_test::layout_kind::strided_gaps}) {
    for (std::int64_t const n : {0, 1, 2, 7}) {
      std::int64_t const count = 3;
      layout const lay = recur_test::make_layout(kind, n, count);
      std::int64_t const ext = std::max<std::int64_t>(recur_test::extent(lay), 1);
      std::vector<float> M(ext * K * K), u(ext * K), x(ext * K, recur_test::poison<float>());
      std::vector<float> init(count * K), fin(count * K, recur_test::poison<float>());
      for (auto& v : M) v = float(static_cast<int>(r.next() % 3) - 1);
      for (auto& v : u) v = float(static_cast<int>(r.next() % 7) - 3);
      for (auto& v : init) v = float(static_cast<int>(r.next() % 7) - 3);
      ref::matrix_chain<float, K>(M.data(), u.data(), x.data(), lay, init.data(), fin.data());
      std::vector<bool> written(ext * K, false);
      for (std::int64_t k = 0; k < count; ++k) {
        ops::column<float, K> s;
        for (int j = 0; j < K; ++j) s.v[j] = init[k * K + j];
        for (std::int64_t i = 0; i < n; ++i) {
          std::int64_t const o = lay.offset(i, k);
          ops::affine_matrix<float, K> step;
          for (int a = 0; a < K; ++a) {
            for (int b = 0; b < K; ++b) step.M.m[a][b] = M[o * K * K + a * K + b];
            step.u[a] = u[o * K + a];
          }
          s = step(s);
          for (int a = 0; a < K; ++a) {
            BOOST_TEST(x[o * K + a] == s.v[a], recur_test::name(kind)
                                                   << " n=" << n << " k=" << k << " i=" << i);
            written[o * K + a] = true;
          }
        }
        for (int a = 0; a < K; ++a) BOOST_TEST(fin[k * K + a] == s.v[a]);
      }
      for (std::size_t b = 0; b < written.size(); ++b)
        if (!written[b]) BOOST_TEST(recur_test::is_poison(x[b]), "gap " << b << " written");
    }
  }
}

BOOST_AUTO_TEST_CASE(null_u_and_init) {
  constexpr int K = 2;
  // Rotation by 90 degrees from x_{-1} = 0 stays 0; with u = null and init =
  // null everything is zero.
  std::vector<double> M = {0, -1, 1, 0, 0, -1, 1, 0}, x(4, 7.0);
  ref::matrix_chain<double, K>(M.data(), nullptr, x.data(), layout::contiguous(2), nullptr, nullptr);
  for (double v : x) BOOST_TEST(v == 0.0);
  double const init[2] = {1, 0};
  double fin[2];
  ref::matrix_chain<double, K>(M.data(), nullptr, x.data(), layout::contiguous(2), init, fin);
  BOOST_TEST(x[0] == 0.0);
  BOOST_TEST(x[1] == 1.0);  // (1,0) -> (0,1)
  BOOST_TEST(x[2] == -1.0);
  BOOST_TEST(x[3] == 0.0);  // -> (-1,0)
  BOOST_TEST(fin[0] == -1.0);
  BOOST_TEST(fin[1] == 0.0);
}

BOOST_AUTO_TEST_CASE(argument_errors) {
  double buf[8] = {};
  BOOST_CHECK_THROW(
      (ref::matrix_chain<double, 2>(nullptr, buf, buf, layout::contiguous(1), nullptr, nullptr)),
      recur::invalid_argument);
  BOOST_CHECK_THROW(
      (ref::matrix_chain<double, 2>(buf, buf, nullptr, layout::contiguous(1), nullptr, nullptr)),
      recur::invalid_argument);
  BOOST_CHECK_THROW((ref::matrix_chain<double, 2>(buf, buf, buf, layout{-1, 1, 1, 0}, nullptr, nullptr)),
                    recur::invalid_argument);
  BOOST_CHECK_NO_THROW(
      (ref::matrix_chain<double, 2>(nullptr, nullptr, nullptr, layout::contiguous(0, 4), nullptr, nullptr)));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(reference_linrec_order_k)

// Fibonacci: y_i = y_{i-1} + y_{i-2}, from y_{-1} = 1, y_{-2} = 0.
BOOST_AUTO_TEST_CASE(fibonacci) {
  std::int64_t const n = 30;
  std::vector<double> const a = {1, 1}, x(n, 0.0);
  std::vector<double> y(n);
  double const init[2] = {1, 0};
  double fin[2];
  ref::linrec_order_k<double>(a, x.data(), y.data(), layout::contiguous(n), init, fin);
  double f0 = 0, f1 = 1;
  for (std::int64_t i = 0; i < n; ++i) {
    double const f2 = f0 + f1;
    BOOST_TEST(y[i] == f2);
    f0 = f1;
    f1 = f2;
  }
  BOOST_TEST(fin[0] == y[n - 1]);
  BOOST_TEST(fin[1] == y[n - 2]);
}

// Processing in two pieces with final_state -> init equals one call, also
// for pieces shorter than k; and interleaved equals contiguous.
BOOST_AUTO_TEST_CASE(chaining_and_layouts) {
  rng r(seed_for(106));
  std::vector<double> const a = {0.5, -0.25, 0.125, 0.1};
  std::int64_t const n = 50, count = 3, k = 4;
  std::vector<double> x(n * count), init(count * k);
  for (auto& v : x) v = r.symmetric();
  for (auto& v : init) v = r.symmetric();
  std::vector<double> whole(n * count), fin(count * k);
  ref::linrec_order_k<double>(a, x.data(), whole.data(), layout::contiguous(n, count), init.data(),
                              fin.data());
  for (std::int64_t const cut : {0, 2, 17, 50}) {
    std::vector<double> piece(n * count), mid(count * k), fin2(count * k);
    auto const lay1 = layout::strided(cut, count, 1, n), lay2 = layout::strided(n - cut, count, 1, n);
    ref::linrec_order_k<double>(a, x.data(), piece.data(), lay1, init.data(), mid.data());
    ref::linrec_order_k<double>(a, x.data() + cut, piece.data() + cut, lay2, mid.data(), fin2.data());
    BOOST_TEST(piece == whole, boost::test_tools::per_element());
    BOOST_TEST(fin2 == fin, boost::test_tools::per_element());
  }
  // Interleaved copy, in place.
  std::vector<double> xi(n * count);
  for (std::int64_t s = 0; s < count; ++s)
    for (std::int64_t i = 0; i < n; ++i) xi[i * count + s] = x[s * n + i];
  ref::linrec_order_k<double>(a, xi.data(), xi.data(), layout::interleaved(n, count), init.data(), nullptr);
  for (std::int64_t s = 0; s < count; ++s)
    for (std::int64_t i = 0; i < n; ++i) BOOST_TEST(xi[i * count + s] == whole[s * n + i]);
}

BOOST_AUTO_TEST_CASE(order_zero_copies) {
  std::vector<float> const x = {1, 2, 3};
  std::vector<float> y(3);
  ref::linrec_order_k<float>({}, x.data(), y.data(), layout::contiguous(3), nullptr, nullptr);
  BOOST_TEST(y == x, boost::test_tools::per_element());
  BOOST_CHECK_THROW(
      ref::linrec_order_k<float>({}, nullptr, y.data(), layout::contiguous(3), nullptr, nullptr),
      recur::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()
