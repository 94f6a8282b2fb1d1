// reference::linrec, the oracle: against closed forms, across layouts, and
// against the exact (long double) recurrence with the harness's tolerance,
// which this also validates (a sequential evaluation must pass it easily).
#include <cmath>
#include <cstdint>
#include <vector>

#include <boost/test/unit_test.hpp>
#include <recur/reference/linrec.hpp>

#include "common/linrec_harness.hpp"

namespace ref = recur::reference;
using recur::layout;
using namespace recur_test;

namespace {

// w_i after i+1 steps of constant (s, t) from init, and the reverse form
// (w_i after n-i steps).
double closed_form(double s, double t, double init, std::int64_t steps) {
  double const p = std::pow(s, static_cast<double>(steps));
  return p * init + t * (1 - p) / (1 - s);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(reference_linrec)

BOOST_AUTO_TEST_CASE(constant_coefficients_closed_form) {
  std::int64_t const n = 60;
  for (double const s : {0.5, -0.9, 0.99, -1.01, 1.1}) {
    for (bool const rev : {false, true}) {
      double const t = 0.75, init = -2.0;
      std::vector<double> w(n, -1.0);
      // scalar s and t (null arrays)
      double const last =
          ref::linrec_sequence<double>(nullptr, s, nullptr, t, w.data(), layout::contiguous(n), 0, init, rev);
      for (std::int64_t i = 0; i < n; ++i) {
        double const want = closed_form(s, t, init, rev ? n - i : i + 1);
        BOOST_TEST(w[i] == want, boost::test_tools::tolerance(1e-12));
      }
      BOOST_TEST(last == w[rev ? 0 : n - 1]);
    }
  }
}

BOOST_AUTO_TEST_CASE(unit_s_is_a_running_sum) {
  // Small integers as floats: exact, so compare exactly.
  std::int64_t const n = 1000;
  for (bool const rev : {false, true}) {
    std::vector<float> s(n, 1.0f), t(n, 3.0f), w(n, -1.0f);
    ref::linrec<float>(s.data(), 0.0f, t.data(), 0.0f, w.data(), layout::contiguous(n), nullptr, 2.0f,
                       nullptr, rev);
    for (std::int64_t i = 0; i < n; ++i) {
      float const steps = static_cast<float>(rev ? n - i : i + 1);
      BOOST_TEST(w[i] == 2.0f + steps * 3.0f);
    }
  }
}

BOOST_AUTO_TEST_CASE(empty_sequence_returns_init) {
  float w = 7.0f;
  BOOST_TEST(ref::linrec_sequence<float>(nullptr, 2.0f, nullptr, 1.0f, &w, layout::contiguous(0), 0, 4.5f) ==
             4.5f);
  BOOST_TEST(w == 7.0f);
  float final_state[2] = {0, 0};
  float const init[2] = {1.5f, -2.5f};
  ref::linrec<float>(nullptr, 2.0f, nullptr, 1.0f, &w, layout::contiguous(0, 2), init, 0.0f, final_state);
  BOOST_TEST(final_state[0] == 1.5f);
  BOOST_TEST(final_state[1] == -2.5f);
}

BOOST_AUTO_TEST_CASE(layouts_agree_with_contiguous) {
  // The same sequences stored contiguous, interleaved, with gaps: the same
  // operations in the same order, so bitwise the same results.
  std::int64_t const n = 37, count = 5;
  rng r(seed_for(10));
  std::vector<double> s(n * count), t(n * count), init(count);
  for (auto& v : s) v = r.symmetric();
  for (auto& v : t) v = r.symmetric();
  for (auto& v : init) v = r.symmetric();
  for (bool const rev : {false, true}) {
    auto const c = layout::contiguous(n, count);
    std::vector<double> wc(n * count), fc(count);
    ref::linrec(s.data(), 0.0, t.data(), 0.0, wc.data(), c, init.data(), 0.0, fc.data(), rev);
    for (auto const kind :
         {layout_kind::interleaved, layout_kind::strided_gaps, layout_kind::interleaved_padded}) {
      auto const l = make_layout(kind, n, count);
      std::vector<double> ls(extent(l)), lt(extent(l)), lw(extent(l), -99.0), lf(count);
      for (std::int64_t k = 0; k < count; ++k)
        for (std::int64_t i = 0; i < n; ++i) {
          ls[l.offset(i, k)] = s[c.offset(i, k)];
          lt[l.offset(i, k)] = t[c.offset(i, k)];
        }
      ref::linrec(ls.data(), 0.0, lt.data(), 0.0, lw.data(), l, init.data(), 0.0, lf.data(), rev);
      for (std::int64_t k = 0; k < count; ++k) {
        BOOST_TEST(lf[k] == fc[k]);
        for (std::int64_t i = 0; i < n; ++i) BOOST_TEST(lw[l.offset(i, k)] == wc[c.offset(i, k)]);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(scalar_operands_equal_constant_arrays) {
  std::int64_t const n = 100;
  std::vector<float> s(n, 0.9f), t(n, -0.3f), w1(n), w2(n), w3(n);
  ref::linrec_sequence<float>(nullptr, 0.9f, nullptr, -0.3f, w1.data(), layout::contiguous(n), 0, 1.0f);
  ref::linrec_sequence<float>(s.data(), 0.0f, nullptr, -0.3f, w2.data(), layout::contiguous(n), 0, 1.0f);
  ref::linrec_sequence<float>(nullptr, 0.9f, t.data(), 0.0f, w3.data(), layout::contiguous(n), 0, 1.0f);
  BOOST_TEST(w1 == w2, boost::test_tools::per_element());
  BOOST_TEST(w1 == w3, boost::test_tools::per_element());
}

// The reference run in T passes the harness's exact check: validates the
// check itself (tolerance, poisoning, gaps, final_state) on every layout.
template <class T>
void reference_passes_check(spec sp) {
  auto p = make_problem<T>(sp);
  outputs<T> out;
  constexpr std::int64_t g = problem<T>::guard;
  out.w.assign(p.size(), poison<T>());
  if (sp.final_state) out.final_state.assign(p.final_size(), poison<T>());
  auto const o = p.options(p.init_ptr(), sp.final_state ? out.final_state.data() + g : nullptr);
  ref::linrec<T>(p.s_ptr(), p.s_value, p.t_ptr(), p.t_value, out.w.data() + g, sp.lay, o.init, o.init_value,
                 o.final_state, sp.dir == recur::direction::reverse);
  auto const msg = check(p, out);
  BOOST_TEST(msg.empty(), sp.describe() << "\n" << msg);
}

BOOST_AUTO_TEST_CASE(reference_passes_the_harness_check) {
  int idx = 0;
  for (auto const kind : {layout_kind::contiguous, layout_kind::interleaved, layout_kind::strided_gaps,
                          layout_kind::interleaved_padded})
    for (std::int64_t const n : {0, 1, 2, 5, 129, 4097})
      for (std::int64_t const count : {1, 3}) {
        spec sp;
        sp.lay = make_layout(kind, n, count);
        sp.dir = idx % 2 ? recur::direction::reverse : recur::direction::forward;
        sp.seed = seed_for(11, idx);
        sp.where = place::separate;
        sp.s_scalar = idx % 5 == 3;
        sp.t_scalar = idx % 7 == 5;
        sp.init = static_cast<init_kind>(idx % 3);
        sp.final_state = idx % 2 == 0;
        reference_passes_check<float>(sp);
        reference_passes_check<double>(sp);
        ++idx;
      }
  // Big enough to be checked in chunks, on several threads, by sequence and
  // by row.
  for (auto const& lay : {make_layout(layout_kind::interleaved, 20000, 64), layout::contiguous(300007, 5)}) {
    spec sp;
    sp.lay = lay;
    sp.dist = coef::near_one;
    sp.dir = recur::direction::reverse;
    sp.seed = seed_for(12, lay.count);
    reference_passes_check<float>(sp);
  }
  for (auto const dist : {coef::uniform, coef::near_one, coef::long_memory, coef::long_memory_positive}) {
    spec sp;
    sp.lay = layout::contiguous(1000000);
    sp.dist = dist;
    sp.seed = seed_for(12, static_cast<int>(dist));
    reference_passes_check<float>(sp);
    reference_passes_check<double>(sp);
  }
}

BOOST_AUTO_TEST_CASE(check_catches_errors) {
  // The harness must fail a wrong result, an unwritten element, a write into
  // a gap and a wrong final_state, or the suites prove nothing.
  spec sp;
  sp.lay = make_layout(layout_kind::strided_gaps, 50, 3);
  sp.seed = seed_for(13);
  auto p = make_problem<double>(sp);
  constexpr std::int64_t g = problem<double>::guard;
  auto const reference_out = [&] {
    outputs<double> out;
    out.w.assign(p.size(), poison<double>());
    out.final_state.assign(p.final_size(), poison<double>());
    auto const o = p.options(p.init_ptr(), out.final_state.data() + g);
    ref::linrec<double>(p.s_ptr(), 0, p.t_ptr(), 0, out.w.data() + g, p.sp.lay, o.init, 0, o.final_state);
    return out;
  };
  BOOST_TEST(check(p, reference_out()).empty());
  auto out = reference_out();
  out.w[g + sp.lay.offset(10, 1)] += 1e-9;  // far above the tolerance, ~1e-14 here
  BOOST_TEST(!check(p, out).empty());
  out = reference_out();
  out.w[g + sp.lay.offset(49, 2)] = poison<double>();
  BOOST_TEST(!check(p, out).empty());
  out = reference_out();
  out.w[g + sp.lay.offset(3, 1) + 1] = 0.0;  // a gap
  BOOST_TEST(!check(p, out).empty());
  out = reference_out();
  out.w[g + p.ext] = 0.0;  // just past the end
  BOOST_TEST(!check(p, out).empty());
  out = reference_out();
  out.final_state[g + 2] = std::nextafter(out.final_state[g + 2], 10.0);
  BOOST_TEST(!check(p, out).empty());

  // The same in the chunked, threaded check of big cases: an error in the
  // last chunk of a long sequence, and in the middle of an interleaved batch.
  for (auto const& lay : {layout::contiguous(1 << 21), make_layout(layout_kind::interleaved, 40000, 64)}) {
    spec big;
    big.lay = lay;
    big.dist = coef::near_one;
    big.seed = seed_for(14, lay.count);
    p = make_problem<double>(big);
    out = reference_out();
    BOOST_TEST(check(p, out).empty());
    auto& x = out.w[static_cast<std::size_t>(g + lay.offset(lay.n - 7, lay.count / 2))];
    x = x + 1e-6;  // near_one: the tolerance here is ~1e-9
    auto const msg = check(p, out);
    BOOST_TEST(msg.find("1 failures in total") != std::string::npos, msg);
  }
}

BOOST_AUTO_TEST_SUITE_END()
