// recur::linrec through recur::host (the OpenMP P-scheme) against the exact
// recurrence: sizes, layouts, batches, options, in place, long memory, and
// run-to-run reproducibility. Each call's output starts poisoned; the check
// (linrec_harness.hpp) requires every layout element written, within
// tolerance, and every other byte of the buffer untouched.
#include <cstdint>
#include <cstring>
#include <vector>

#include <boost/test/unit_test.hpp>
#include <recur/linrec.hpp>

#include "common/cases.hpp"
#include "common/linrec_harness.hpp"

using recur::direction;
using recur::layout;
using namespace recur_test;

namespace {

// 0: the library chooses; 7 is more threads than this machine has cores.
constexpr int thread_counts[] = {0, 1, 2, 3, 7};
constexpr direction directions[] = {direction::forward, direction::reverse};
constexpr auto const& layout_kinds = all_layout_kinds;

template <class T>
void run_and_check(problem<T> const& p, recur::host ex) {
  auto const out = run_host(p, ex);
  auto const msg = check(p, out);
  BOOST_TEST(msg.empty(), "host{" << ex.threads << "} " << type_name<T> << " " << p.sp.describe() << "\n"
                                  << msg);
}

template <class T>
void run_and_check(spec const& sp, recur::host ex) {
  run_and_check(make_problem<T>(sp), ex);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(linrec_host)

BOOST_AUTO_TEST_CASE(lengths_single_sequence) {
  int idx = 0;
  for (std::int64_t const n :
       {0, 1, 2, 3, 5, 31, 127, 128, 129, 1000, 4095, 4096, 4097, 65537, 1000000})  // 65537+: P-scheme chunks
    for (direction const dir : directions)
      for (int const threads : thread_counts) {
        spec sp;
        sp.lay = layout::contiguous(n);
        sp.dir = dir;
        sp.seed = seed_for(100, idx);
        sp = rotated(sp, idx++);
        run_and_check<float>(sp, recur::host{threads});
        run_and_check<double>(sp, recur::host{threads});
      }
}

BOOST_AUTO_TEST_CASE(ten_million) {
  spec sp;
  sp.lay = layout::contiguous(10000000);
  sp.seed = seed_for(101);
  run_and_check<float>(sp, recur::host{});
}

BOOST_AUTO_TEST_CASE(layouts_and_batches) {
  case_count cases("linrec host layouts and batches");
  int idx = 0;
  for (layout_kind const kind : layout_kinds)
    for (std::int64_t const count : {1, 3, 64})
      for (std::int64_t const n : {0, 1, 2, 3, 5, 31, 127, 128, 129, 1000, 4097, 65537}) {
        if (n == 65537 && count == 64) {  // 4M elements x 20 runs: too slow here for what it adds
          cases.skip("64 sequences of 65537");
          continue;
        }
        cases.run();
        for (direction const dir : directions)
          for (int const threads : thread_counts) {
            spec sp;
            sp.lay = make_layout(kind, n, count);
            sp.dir = dir;
            sp.seed = seed_for(102, idx);
            sp = rotated(sp, idx++);
            run_and_check<float>(sp, recur::host{threads});
            run_and_check<double>(sp, recur::host{threads});
          }
      }
  cases.require(4 * 3 * 12 - 4);  // every shape but 64 x 65537
}

// Every combination of init (none / value / array), final_state, scalar or
// array s and t, and in-place use (w == s, w == t), both directions.
BOOST_AUTO_TEST_CASE(options_cross_product) {
  struct shape {
    layout_kind kind;
    std::int64_t n, count;
    std::vector<int> threads;
  };
  std::vector<shape> const shapes = {
      {layout_kind::strided_gaps, 1, 3, {1, 7}},
      {layout_kind::strided_gaps, 129, 3, {1, 7}},
      {layout_kind::interleaved, 129, 3, {1, 7}},
      {layout_kind::strided_gaps, 65537, 3, {3}},  // P-scheme, 3 chunks per sequence
      {layout_kind::contiguous, 65537, 1, {2}},
  };
  case_count cases("linrec host options");
  int idx = 0;
  for (auto const& sh : shapes)
    for (direction const dir : directions)
      for (spec const& sp : option_combinations(make_layout(sh.kind, sh.n, sh.count), dir, 103, idx)) {
        auto const pf = make_problem<float>(sp);
        auto const pd = make_problem<double>(sp);
        for (int const threads : sh.threads) {
          run_and_check(pf, recur::host{threads});
          run_and_check(pd, recur::host{threads});
        }
        cases.run();
      }
  cases.require(5 * 2 * option_combination_count);
}

// |s| ~ 1: a step's influence lasts (nearly) the whole sequence, so errors
// in the chunk maps of the P-scheme would show far downstream.
BOOST_AUTO_TEST_CASE(long_memory) {
  int idx = 0;
  for (coef const dist :
       {coef::near_one, coef::long_memory, coef::long_memory_positive, coef::near_one_resets})
    for (direction const dir : directions)
      for (int const threads : {0, 2, 7}) {
        spec sp;
        sp.lay = layout::contiguous(1000000);
        sp.dir = dir;
        sp.dist = dist;
        sp.seed = seed_for(104, idx++);
        run_and_check<float>(sp, recur::host{threads});
        run_and_check<double>(sp, recur::host{threads});
      }
  for (coef const dist : {coef::long_memory, coef::near_one_resets}) {
    spec sp;
    sp.lay = make_layout(layout_kind::interleaved, 300007, 3);
    sp.dist = dist;
    sp.seed = seed_for(105, static_cast<int>(dist));
    run_and_check<double>(sp, recur::host{7});
  }
}

// 16-bit storage, float arithmetic: inputs generated in the storage type,
// checked against the exact recurrence of those rounded inputs with the
// float bound plus the rounding of the stored result (linrec_harness.hpp).
// Every layout kind with a batch, the options, a long sequence (P-scheme
// chunks), both directions.
BOOST_AUTO_TEST_CASE(low_precision) {
  case_count cases("linrec host bfloat16 and float16");
  auto const both = [&](spec const& sp, recur::host ex) {
    run_and_check<recur::bfloat16>(sp, ex);
    run_and_check<recur::float16>(sp, ex);
    cases.run();
  };
  int idx = 0;
  for (layout_kind const kind : layout_kinds)
    for (direction const dir : directions) {
      spec sp;
      sp.lay = make_layout(kind, 1001, 37);
      sp.dir = dir;
      sp.seed = seed_for(107, idx);
      sp = rotated(sp, idx++);
      both(sp, recur::host{3});
    }
  for (direction const dir : directions) {
    spec sp;
    sp.lay = layout::contiguous(100003);
    sp.dir = dir;
    sp.dist = coef::near_one;
    sp.seed = seed_for(108, static_cast<int>(dir));
    both(sp, recur::host{0});
    for (spec const& o : option_combinations(make_layout(layout_kind::strided_gaps, 129, 3), dir, 109, idx))
      both(o, recur::host{2});
  }
  cases.require(4 * 2 + 2 * (1 + option_combination_count));
}

// Same input, same executor: bitwise the same output (API guarantee).
BOOST_AUTO_TEST_CASE(deterministic) {
  auto const twice = [](auto const& p, recur::host ex) {
    auto const a = run_host(p, ex), b = run_host(p, ex);
    bool const same = a.w.size() == b.w.size() && a.final_state.size() == b.final_state.size() &&
                      std::memcmp(a.w.data(), b.w.data(), a.w.size() * sizeof a.w[0]) == 0 &&
                      std::memcmp(a.final_state.data(), b.final_state.data(),
                                  a.final_state.size() * sizeof a.final_state[0]) == 0;
    BOOST_TEST(same, "host{" << ex.threads << "} " << p.sp.describe());
  };
  int idx = 0;
  for (auto const& lay : {layout::contiguous(1000003), make_layout(layout_kind::strided_gaps, 100003, 3)})
    for (int const threads : {0, 2, 3, 7}) {
      spec sp;
      sp.lay = lay;
      sp.dist = coef::near_one;
      sp.seed = seed_for(106, idx++);
      twice(make_problem<float>(sp), recur::host{threads});
      twice(make_problem<double>(sp), recur::host{threads});
    }
}

BOOST_AUTO_TEST_SUITE_END()
