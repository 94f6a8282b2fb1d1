// Argument checks of recur::linrec (lib/linrec.cpp), through recur::host: each
// bad argument throws recur::invalid_argument whose what() names it, before
// anything is written. Plus the edge cases that are not errors: n == 0,
// count == 0, degenerate strides, final_state == init.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include <boost/test/unit_test.hpp>
#include <recur/linrec.hpp>
#include <recur/reference/linrec.hpp>

#include "common/linrec_harness.hpp"

using recur::direction;
using recur::layout;
using recur::linrec_options;
using recur_test::poison;

namespace {

static_assert(std::is_base_of_v<recur::error, recur::invalid_argument>);
static_assert(std::is_base_of_v<recur::error, recur::not_compiled>);
static_assert(std::is_base_of_v<recur::error, recur::cuda_error>);
static_assert(std::is_base_of_v<std::runtime_error, recur::error>);

constexpr std::int64_t big = std::int64_t{1} << 40;

// Short sequences of |s| <= 1: a few eps of 1 + |value| whatever the order.
template <class T>
bool close(T got, T want) {
  return std::fabs(got - want) <= 64 * std::numeric_limits<T>::epsilon() * (1 + std::fabs(want));
}

// All memory a test case touches: one array, so one snapshot covers w, s, t,
// init and final_state, and a failed call must leave it byte for byte.
template <class T>
struct arena {
  std::vector<T> mem;
  arena() : mem(4096) {
    recur_test::rng r(recur_test::seed_for(200));
    for (auto& v : mem) v = T(r.symmetric());
    std::fill(mem.begin() + 1024, mem.begin() + 2048, poison<T>());  // w lives here
    std::fill(mem.begin() + 3072, mem.end(), poison<T>());           // final_state here
  }
  T* s() { return mem.data(); }
  T* t() { return mem.data() + 512; }
  T* w() { return mem.data() + 1024; }
  T* init() { return mem.data() + 2048; }
  T* final_state() { return mem.data() + 3072; }
  T* misaligned(T* p) {  // one byte past an element: not aligned for T
    return reinterpret_cast<T*>(reinterpret_cast<char*>(p) + 1);
  }
};

// Runs call, which must throw invalid_argument mentioning every needle, and
// must leave the arena as it was.
template <class T, class Call>
void expect_invalid(arena<T>& a, Call&& call, std::initializer_list<char const*> needles) {
  auto const before = a.mem;
  bool threw = false;
  try {
    call();
  } catch (recur::invalid_argument const& e) {
    threw = true;
    std::string const what = e.what();
    for (char const* needle : needles)
      BOOST_TEST(what.find(needle) != std::string::npos,
                 "message \"" << what << "\" lacks \"" << needle << "\"");
  } catch (std::exception const& e) {
    BOOST_ERROR("threw something else than recur::invalid_argument: " << e.what());
    return;
  }
  BOOST_TEST(threw, "no exception; expected one mentioning " << *needles.begin());
  BOOST_TEST(std::memcmp(before.data(), a.mem.data(), before.size() * sizeof(T)) == 0,
             "memory changed by a call that threw");
}

template <class T>
void sizes_and_strides() {
  arena<T> a;
  recur::host const h{};
  auto const call = [&](layout l) {
    return [&a, h, l] {
      linrec_options<T> o;
      o.final_state = a.final_state();
      recur::linrec(h, a.s(), a.t(), a.w(), l, o);
    };
  };
  expect_invalid(a, call(layout{-1, 1, 1, 0}), {"layout.n = -1", "negative"});
  expect_invalid(a, call(layout{4, -2, 1, 4}), {"layout.count = -2", "negative"});
  expect_invalid(a, call(layout{big, big, 1, big}), {"layout.n * layout.count", "overflows"});
  // 2^62 elements fit in int64, their bytes do not.
  std::int64_t const b31 = std::int64_t{1} << 31;
  expect_invalid(a, call(layout{b31, b31, 1, b31}), {"layout.n * layout.count", "overflows"});
  expect_invalid(a, call(layout{1 << 20, 1, std::int64_t{1} << 44, 0}),
                 {"layout.element_stride", "overflows"});
  expect_invalid(a, call(layout{2, 2, 1, std::int64_t{1} << 61}), {"layout.batch_stride", "overflows"});
  expect_invalid(a, call(layout{4, 1, 0, 4}), {"layout.element_stride = 0"});
  expect_invalid(a, call(layout{4, 1, -1, 4}), {"layout.element_stride = -1"});
  expect_invalid(a, call(layout{4, 2, 1, 0}), {"layout.batch_stride = 0"});
  expect_invalid(a, call(layout{4, 2, 1, -4}), {"layout.batch_stride = -4"});
  // Self-overlapping: sequences 4 long, 2 apart; interleaved with too small a row.
  expect_invalid(a, call(layout{4, 2, 1, 2}), {"layout", "one address"});
  expect_invalid(a, call(layout{4, 3, 2, 1}), {"layout", "one address"});
}

}  // namespace

BOOST_AUTO_TEST_SUITE(linrec_args)

BOOST_AUTO_TEST_CASE(bad_sizes_and_strides) {
  sizes_and_strides<float>();
  sizes_and_strides<double>();
}

template <class T>
void pointers() {
  arena<T> a;
  recur::host const h{};
  std::int64_t const n = 100;
  auto const call = [&](T const* s, T const* t, T* w, T const* init, T* final_state, std::int64_t count = 2) {
    return [=] {
      linrec_options<T> o;
      o.init = init;
      o.final_state = final_state;
      recur::linrec(h, s, t, w, layout::contiguous(n, count), o);
    };
  };
  expect_invalid(a, call(a.s(), a.t(), nullptr, a.init(), a.final_state()), {"w is null"});
  expect_invalid(a, call(a.misaligned(a.s()), a.t(), a.w(), a.init(), a.final_state()),
                 {"s = ", "not aligned"});
  expect_invalid(a, call(a.s(), a.misaligned(a.t()), a.w(), a.init(), a.final_state()),
                 {"t = ", "not aligned"});
  expect_invalid(a, call(a.s(), a.t(), a.misaligned(a.w()), a.init(), a.final_state()),
                 {"w = ", "not aligned"});
  expect_invalid(a, call(a.s(), a.t(), a.w(), a.misaligned(a.init()), a.final_state()),
                 {"init = ", "not aligned"});
  expect_invalid(a, call(a.s(), a.t(), a.w(), a.init(), a.misaligned(a.final_state())),
                 {"final_state = ", "not aligned"});
  // Overlaps other than w == s or w == t exactly.
  expect_invalid(a, call(a.s(), a.w() + 1, a.w(), a.init(), a.final_state()), {"w overlaps t"});
  expect_invalid(a, call(a.s(), a.w() - 1, a.w(), a.init(), a.final_state()), {"w overlaps t"});
  expect_invalid(a, call(a.w() + 1, a.t(), a.w(), a.init(), a.final_state()), {"w overlaps s"});
  expect_invalid(a, call(a.s(), a.t(), a.w(), a.w() + 3, a.final_state()), {"w overlaps init"});
  expect_invalid(a, call(a.s(), a.t(), a.w(), a.init(), a.w() + 5), {"final_state overlaps w"});
  expect_invalid(a, call(a.s(), a.t(), a.w(), a.init(), a.w() + 2 * n - 1), {"final_state overlaps w"});
  expect_invalid(a, call(a.s(), a.t(), a.w(), a.init(), a.s() + 7), {"final_state overlaps s"});
  expect_invalid(a, call(a.s(), a.t(), a.w(), a.init(), a.t()), {"final_state overlaps t"});
  expect_invalid(a, call(a.s(), a.t(), a.w(), a.init(), a.init() + 1, 3), {"final_state overlaps init"});
  // A scalar operand has no memory, so it overlaps nothing.
  BOOST_CHECK_NO_THROW(recur::linrec(h, recur::operand<T>(T(0.5)), recur::operand<T>(T(1)), a.w(), n));
}

BOOST_AUTO_TEST_CASE(bad_pointers) {
  pointers<float>();
  pointers<double>();
}

BOOST_AUTO_TEST_CASE(bad_executor_and_enums) {
  arena<float> a;
  std::int64_t const n = 10;
  expect_invalid(a, [&] { recur::linrec(recur::host{-1}, a.s(), a.t(), a.w(), n); }, {"host.threads = -1"});
  expect_invalid(a,
                 [&] {
                   linrec_options<float> o;
                   o.dir = static_cast<direction>(2);
                   recur::linrec(recur::host{}, a.s(), a.t(), a.w(), n, o);
                 },
                 {"direction = 2"});
  expect_invalid(a,
                 [&] {
                   linrec_options<float> o;
                   o.variant = static_cast<recur::linrec_variant>(7);
                   recur::linrec(recur::host{}, a.s(), a.t(), a.w(), n, o);
                 },
                 {"variant = 7"});
}

// n == 0: final_state = init and nothing else is written; w may be null.
BOOST_AUTO_TEST_CASE(empty_sequences_pass_init_through) {
  arena<double> a;
  for (bool const use_array : {false, true})
    for (direction const dir : {direction::forward, direction::reverse}) {
      std::fill(a.final_state(), a.final_state() + 8, poison<double>());
      auto const before = a.mem;
      linrec_options<double> o;
      o.dir = dir;
      o.init = use_array ? a.init() : nullptr;
      o.init_value = 0.25;
      o.final_state = a.final_state();
      BOOST_CHECK_NO_THROW(recur::linrec(recur::host{}, a.s(), a.t(), a.w(), layout::contiguous(0, 5), o));
      for (int k = 0; k < 5; ++k) BOOST_TEST(a.final_state()[k] == (use_array ? a.init()[k] : 0.25));
      BOOST_TEST(recur_test::is_poison(a.final_state()[5]));
      BOOST_TEST(std::memcmp(before.data(), a.mem.data(), 3072 * sizeof(double)) ==
                 0);  // all but final_state
      BOOST_CHECK_NO_THROW(
          recur::linrec<double>(recur::host{}, a.s(), a.t(), nullptr, layout::contiguous(0, 5), o));
      // final_state == init exactly is allowed: init passes through unchanged.
      o.init = a.init();
      o.final_state = a.init();
      auto const init_before = std::vector<double>(a.init(), a.init() + 5);
      BOOST_CHECK_NO_THROW(recur::linrec(recur::host{}, a.s(), a.t(), a.w(), layout::contiguous(0, 5), o));
      BOOST_TEST(std::vector<double>(a.init(), a.init() + 5) == init_before,
                 boost::test_tools::per_element());
    }
}

// count == 0: nothing to do, nothing written, w may be null.
BOOST_AUTO_TEST_CASE(empty_batch_is_a_no_op) {
  arena<float> a;
  auto const before = a.mem;
  linrec_options<float> o;
  o.init = a.init();
  o.final_state = a.final_state();
  BOOST_CHECK_NO_THROW(recur::linrec(recur::host{}, a.s(), a.t(), a.w(), layout::contiguous(100, 0), o));
  BOOST_CHECK_NO_THROW(
      recur::linrec<float>(recur::host{}, a.s(), a.t(), nullptr, layout::contiguous(100, 0), o));
  BOOST_CHECK_NO_THROW(
      recur::linrec<float>(recur::host{3}, a.s(), a.t(), nullptr, layout::interleaved(7, 0), o));
  BOOST_TEST(std::memcmp(before.data(), a.mem.data(), before.size() * sizeof(float)) == 0);
}

// Strides that no element uses are not checked: n == 1 with any element
// stride, count == 1 with any batch stride.
BOOST_AUTO_TEST_CASE(unused_strides_are_free) {
  arena<double> a;
  for (layout const l : {layout{1, 6, 0, 1}, layout{1, 6, -3, 2}, layout{50, 1, 1, 0}, layout{50, 1, 2, -7}})
    for (direction const dir : {direction::forward, direction::reverse}) {
      std::fill(a.w(), a.w() + 1024, poison<double>());
      linrec_options<double> o;
      o.dir = dir;
      o.init = a.init();
      o.final_state = a.final_state();
      BOOST_CHECK_NO_THROW(recur::linrec(recur::host{2}, a.s(), a.t(), a.w(), l, o));
      std::vector<double> w(1024, poison<double>()), f(l.count);
      recur::reference::linrec<double>(a.s(), 0, a.t(), 0, w.data(), l, a.init(), 0, f.data(),
                                       dir == direction::reverse);
      for (std::size_t i = 0; i < w.size(); ++i) {
        if (recur_test::is_poison(w[i]))
          BOOST_TEST(recur_test::is_poison(a.w()[i]), "element " << i << " outside the layout written");
        else
          BOOST_TEST(close(a.w()[i], w[i]), "element " << i << ": " << a.w()[i] << " vs " << w[i]);
      }
      for (std::int64_t k = 0; k < l.count; ++k)  // the last w written, bit for bit
        BOOST_TEST(a.final_state()[k] == a.w()[l.offset(dir == direction::reverse ? 0 : l.n - 1, k)]);
    }
}

// final_state may be init itself: each sequence reads its init before its
// final state is written.
BOOST_AUTO_TEST_CASE(final_state_may_be_init) {
  for (int const threads : {1, 2, 7}) {
    arena<float> a;
    std::int64_t const n = 100, count = 5;
    std::vector<float> w(n * count), f(count);
    recur::reference::linrec<float>(a.s(), 0, a.t(), 0, w.data(), layout::contiguous(n, count), a.init(), 0,
                                    f.data());
    linrec_options<float> o;
    o.init = a.init();
    o.final_state = a.init();
    recur::linrec(recur::host{threads}, a.s(), a.t(), a.w(), layout::contiguous(n, count), o);
    for (std::int64_t k = 0; k < count; ++k)
      BOOST_TEST(close(a.init()[k], f[k]), k << ": " << a.init()[k] << " vs " << f[k]);
  }
}

// Strides that interleave without meeting are accepted: {n 3, count 3,
// element_stride 2, batch_stride 3} uses offsets 0 2 4 / 3 5 7 / 6 8 10.
BOOST_AUTO_TEST_CASE(interleaving_strides_that_do_not_overlap) {
  layout const l{3, 3, 2, 3};
  std::vector<double> s(11), t(11), w(11, -7.0), ref(11, -7.0);
  for (int i = 0; i < 11; ++i) {
    s[i] = 0.5 + 0.1 * i;
    t[i] = 1.0 - 0.25 * i;
  }
  recur::reference::linrec<double>(s.data(), 0, t.data(), 0, ref.data(), l, nullptr, 0.5, nullptr);
  linrec_options<double> o;
  o.init_value = 0.5;
  recur::linrec(recur::host{2}, s.data(), t.data(), w.data(), l, o);
  for (int i = 0; i < 11; ++i) BOOST_TEST(w[i] == ref[i], "offset " << i);
  BOOST_TEST(w[1] == -7.0);  // offset 1 belongs to no element
}

BOOST_AUTO_TEST_SUITE_END()
