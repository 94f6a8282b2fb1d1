#pragma once
// recur::linrec_summary's cases, written once over the memory of
// either_memory.hpp (test_linrec_summary_host.cpp, _cuda.cpp): each
// sequence's map against the sequential reference (a: the product of s, b:
// the last state from 0) over layouts, lengths around the GPU's tile of
// 2048 elements, both directions, scalar s, zero steps; bad arguments write
// nothing.
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>
#include <recur/error.hpp>
#include <recur/linrec.hpp>
#include <recur/reference/linrec.hpp>
#include <recur/storage.hpp>

#include "either_memory.hpp"

namespace linrec_summary_test {

using recur::direction;
using recur::layout;

template <class T>
double tolerance() {
  if constexpr (std::is_same_v<T, double>) return 1e-12;
  if constexpr (std::is_same_v<T, float>) return 1e-5;
  return 1e-2;
}

template <class M, class T>
void matches_reference() {
  using V = recur::compute_t<T>;
  M mem;
  struct shape {
    std::int64_t n, count;
    int kind;  // 0 contiguous, 1 interleaved, 2 contiguous with a gap between sequences
  };
  std::vector<shape> const shapes = {{0, 3, 0},    {1, 1, 0},      {5, 3, 1},        {2047, 2, 0},
                                     {2048, 2, 0}, {2049, 5, 1},   {100000, 1, 0},   {(1 << 20) + 3, 1, 0},
                                     {3000, 1000, 1}, {777, 300, 0}, {4100, 4, 2},     {70000, 40, 1}};
  std::mt19937 gen(7);
  std::uniform_real_distribution<double> us(-1.02, 1.02), ut(-1, 1);
  for (auto const& sh : shapes)
    for (direction dir : {direction::forward, direction::reverse})
      for (int variant = 0; variant < 3; ++variant) {  // 0: arrays; 1: scalar s; 2: some s_i == 0
        layout const lay = sh.kind == 1   ? layout::interleaved(sh.n, sh.count)
                           : sh.kind == 0 ? layout::contiguous(sh.n, sh.count)
                                          : layout{sh.n, sh.count, 1, sh.n + 13};
        std::int64_t const size = sh.count == 0 ? 0 : (sh.count - 1) * (lay.batch_stride > 0 ? lay.batch_stride : 1) +
                                                           (sh.n > 0 ? (sh.n - 1) * lay.element_stride : 0) + 1;
        std::vector<T> s(size), t(size);
        for (auto& v : s) v = T(static_cast<V>(us(gen)));
        for (auto& v : t) v = T(static_cast<V>(ut(gen)));
        if (variant == 2)
          for (std::int64_t i = 0; i < size; i += 997) s[i] = T(V(0));
        T const s_scalar = T(V(0.999));
        // The reference in double: b from 0, a the product (in the map's order).
        std::vector<double> want_a(sh.count), want_b(sh.count);
        for (std::int64_t k = 0; k < sh.count; ++k) {
          double a = 1, b = 0;
          for (std::int64_t j = 0; j < sh.n; ++j) {
            std::int64_t const i = dir == direction::reverse ? sh.n - 1 - j : j;
            double const si = variant == 1 ? double(recur::to_compute(s_scalar)) : double(recur::to_compute(s[lay.offset(i, k)]));
            double const ti = recur::to_compute(t[lay.offset(i, k)]);
            a *= si;
            b = si * b + ti;
          }
          want_a[k] = a;
          want_b[k] = b;
        }
        auto ds = mem.upload(s), dt = mem.upload(t);
        auto da = mem.upload(std::vector<T>(sh.count, T(V(-7)))), db = mem.upload(std::vector<T>(sh.count, T(V(-7))));
        recur::operand<T> const so = variant == 1 ? recur::operand<T>(s_scalar) : recur::operand<T>(mem.cptr(ds));
        recur::linrec_summary<T>(mem.executor(), so, mem.cptr(dt), mem.ptr(da), mem.ptr(db), lay, dir);
        auto const a = mem.download(da, sh.count), b = mem.download(db, sh.count);
        std::string bad;
        // b's terms sum to at most about n (|t| <= 1, |s| up to 1.02 compounding).
        for (std::int64_t k = 0; k < sh.count && bad.empty(); ++k) {
          double const ga = recur::to_compute(a[k]), gb = recur::to_compute(b[k]);
          double const ea = std::abs(ga - want_a[k]), eb = std::abs(gb - want_b[k]);
          double const scale_b = std::max(1.0, std::abs(want_b[k])) * std::sqrt(double(sh.n) + 1);
          // a may underflow: below the compute type's smallest normal it is compared absolutely.
          double const floor_a = 4 * double(std::numeric_limits<V>::min());
          if (!(ea <= tolerance<T>() * std::abs(want_a[k]) * std::sqrt(double(sh.n) + 1) + floor_a) ||
              !(eb <= tolerance<T>() * scale_b))
            bad = "sequence " + std::to_string(k) + ": (" + std::to_string(ga) + ", " + std::to_string(gb) +
                  ") against (" + std::to_string(want_a[k]) + ", " + std::to_string(want_b[k]) + ")";
        }
        BOOST_TEST(bad.empty(), "n=" << sh.n << " count=" << sh.count << " layout " << sh.kind
                                     << (dir == direction::reverse ? " reverse" : " forward") << " variant " << variant
                                     << ": " << bad);
      }
}

template <class M>
void bad_arguments() {
  M mem;
  auto ds = mem.upload(std::vector<float>(100, 0.5f));
  auto dab = mem.upload(std::vector<float>(4, -7.0f));
  auto untouched = [&] {
    auto const v = mem.download(dab, 4);
    BOOST_TEST((v == std::vector<float>(4, -7.0f)), "a call that threw wrote its outputs");
  };
  layout const lay = layout::contiguous(50, 2);
  float* const a = mem.ptr(dab);
  float* const b = a + 2;
  BOOST_CHECK_THROW(recur::linrec_summary<float>(mem.executor(), mem.cptr(ds), 1.0f, nullptr, b, lay),
                    recur::invalid_argument);
  BOOST_CHECK_THROW(recur::linrec_summary<float>(mem.executor(), mem.cptr(ds), 1.0f, a, a + 1, lay),
                    recur::invalid_argument);  // a and b overlap
  BOOST_CHECK_THROW(recur::linrec_summary<float>(mem.executor(), mem.cptr(ds), 1.0f, a, b, lay, direction(7)),
                    recur::invalid_argument);
  BOOST_CHECK_THROW(recur::linrec_summary<float>(mem.executor(), mem.cptr(ds), 1.0f, mem.ptr(ds), b, lay),
                    recur::invalid_argument);  // a overlaps s
  BOOST_CHECK_THROW(recur::linrec_summary<float>(mem.executor(), mem.cptr(ds), 1.0f, a, b, layout{50, 2, 1, -50}),
                    recur::invalid_argument);
  untouched();
  // Empty batches write nothing; no sequences need no outputs.
  recur::linrec_summary<float>(mem.executor(), mem.cptr(ds), 1.0f, nullptr, nullptr, layout::contiguous(50, 0));
  untouched();
}

}  // namespace linrec_summary_test

#define RECUR_LINREC_SUMMARY_CASES(Memory)                                                              \
  BOOST_AUTO_TEST_CASE(matches_reference_f32) { linrec_summary_test::matches_reference<Memory, float>(); }  \
  BOOST_AUTO_TEST_CASE(matches_reference_f64) { linrec_summary_test::matches_reference<Memory, double>(); } \
  BOOST_AUTO_TEST_CASE(matches_reference_bf16) {                                                        \
    linrec_summary_test::matches_reference<Memory, recur::bfloat16>();                                  \
  }                                                                                                     \
  BOOST_AUTO_TEST_CASE(bad_arguments) { linrec_summary_test::bad_arguments<Memory>(); }
