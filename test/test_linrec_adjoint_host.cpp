// recur::linrec_adjoint through recur::host against the adjoint recurrence
// in long double (linrec_adjoint_harness.hpp): lengths, layouts, batches,
// every option, in place, 16-bit storage; against the unfused composition
// of recur::linrec calls it replaces; and its argument checks (each bad
// argument named, nothing written).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>
#include <recur/linrec.hpp>
#include <recur/reference/linrec.hpp>

#include "common/cases.hpp"
#include "common/expect_invalid.hpp"
#include "common/linrec_adjoint_harness.hpp"

using recur::direction;
using recur::layout;
using recur::linrec_adjoint_options;
using namespace recur_test;

namespace {

constexpr direction directions[] = {direction::forward, direction::reverse};

template <class T>
void run_and_check(adjoint_problem<T> const& p, recur::host ex) {
  auto const msg = check_adjoint(p, run_adjoint_host(p, ex));
  BOOST_TEST(msg.empty(), "host{" << ex.threads << "} " << type_name<T> << " " << p.sp.describe() << "\n"
                                  << msg);
}

template <class... Ts>
void run_types(adjoint_spec const& sp, std::initializer_list<int> threads) {
  auto const one = [&]<class T>(T const*) {
    auto const p = make_adjoint_problem<T>(sp);
    for (int const th : threads) run_and_check(p, recur::host{th});
  };
  (one(static_cast<Ts const*>(nullptr)), ...);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(linrec_adjoint_host)

// Every layout, 1, 3 and 64 sequences (64 interleaved: blocks of adjacent
// sequences), lengths to 65537 (one sequence of it is cut into P-scheme
// chunks), both directions, options rotated.
BOOST_AUTO_TEST_CASE(lengths_layouts_and_batches) {
  case_count cases("linrec_adjoint host layouts");
  int idx = 0;
  for (layout_kind const kind : all_layout_kinds)
    for (std::int64_t const count : {1, 3, 64})
      for (std::int64_t const n : {0, 1, 2, 3, 5, 127, 128, 129, 1000, 4097, 65537}) {
        if (n == 65537 && count == 64) {
          cases.skip("64 sequences of 65537");
          continue;
        }
        cases.run();
        for (direction const dir : directions) {
          adjoint_spec sp;
          sp.lay = make_layout(kind, n, count);
          sp.dir = dir;
          sp.seed = seed_for(700, idx);
          sp = rotated(sp, idx++);
          run_types<float, double>(sp, {0, 1, 3});
        }
      }
  cases.require(4 * 3 * 11 - 4);
}

// Every combination of scalar or array s, init (none, value, array), final
// and init gradients, ds and dt == g, both directions: sequences with gaps,
// interleaved blocks, and one sequence in P-scheme chunks.
BOOST_AUTO_TEST_CASE(options_cross_product) {
  struct shape {
    layout_kind kind;
    std::int64_t n, count;
    std::initializer_list<int> threads;
  };
  shape const shapes[] = {{layout_kind::strided_gaps, 1, 3, {1}},
                          {layout_kind::strided_gaps, 129, 3, {1, 7}},
                          {layout_kind::interleaved, 129, 20, {1, 7}},
                          {layout_kind::contiguous, 65537, 1, {3}}};
  case_count cases("linrec_adjoint host options");
  int idx = 0;
  for (auto const& sh : shapes)
    for (direction const dir : directions)
      for (auto const& sp : adjoint_combinations(make_layout(sh.kind, sh.n, sh.count), dir, 701, idx)) {
        run_types<float, double>(sp, sh.threads);
        cases.run();
      }
  cases.require(4 * 2 * adjoint_combination_count);
}

// |s| ~ 1: lambda carries each g across the whole sequence.
BOOST_AUTO_TEST_CASE(long_memory) {
  int idx = 0;
  for (coef const dist : {coef::near_one, coef::long_memory, coef::near_one_resets})
    for (direction const dir : directions) {
      adjoint_spec sp;
      sp.lay = layout::contiguous(300007);
      sp.dir = dir;
      sp.dist = dist;
      sp.seed = seed_for(702, idx++);
      run_types<float, double>(sp, {1, 0});
    }
}

// 16-bit storage computed in float.
BOOST_AUTO_TEST_CASE(low_precision) {
  int idx = 0;
  for (layout const& lay :
       {layout::contiguous(1), layout::contiguous(4097, 3), make_layout(layout_kind::interleaved, 300, 40),
        make_layout(layout_kind::strided_gaps, 129, 3), layout::contiguous(65537)})
    for (direction const dir : directions) {
      adjoint_spec sp;
      sp.lay = lay;
      sp.dir = dir;
      sp.seed = seed_for(703, idx);
      sp = rotated(sp, idx++);
      run_types<recur::bfloat16, recur::float16>(sp, {1, 3});
    }
}

// The unfused composition the fused call replaces (the Python backward's
// former form): lambda = linrec(s shifted one element against the
// direction, g with the final gradient added at the last element) run in
// the other direction, ds = lambda times w shifted the other way (init at
// the first element), the init's gradient s lambda at the first element.
BOOST_AUTO_TEST_CASE(matches_the_unfused_composition) {
  int idx = 0;
  for (layout const& lay : {layout::contiguous(1000, 3), make_layout(layout_kind::interleaved, 257, 20),
                            make_layout(layout_kind::strided_gaps, 65537, 2), layout::contiguous(1, 4)})
    for (direction const dir : directions) {
      adjoint_spec sp;
      sp.lay = lay;
      sp.dir = dir;
      sp.seed = seed_for(704, idx++);
      auto const p = make_adjoint_problem<double>(sp);
      auto const out = run_adjoint_host(p, recur::host{});
      std::int64_t const n = lay.n, g = adjoint_problem<double>::guard;
      bool const fwd = dir == direction::forward;
      std::int64_t const first = fwd ? 0 : n - 1, last = n - 1 - first, step = fwd ? 1 : -1;
      std::vector<double> coeff(p.size(), 0.0), gg(p.size(), 0.0), lam(p.size(), 0.0);
      for (std::int64_t k = 0; k < lay.count; ++k)
        for (std::int64_t i = 0; i < n; ++i) {
          std::int64_t const o = g + lay.offset(i, k);
          coeff[o] = i == last ? 0.0 : p.a.s[g + lay.offset(i + step, k)];  // s_{i+1} (s_{i-1} in reverse)
          gg[o] = p.a.t[o] + (i == last ? p.final_gradient_of(k) : 0.0);
        }
      recur::linrec_options<double> o;
      o.dir = fwd ? direction::reverse : direction::forward;
      recur::linrec(recur::host{}, coeff.data() + g, gg.data() + g, lam.data() + g, lay, o);
      for (std::int64_t k = 0; k < lay.count; ++k) {
        for (std::int64_t i = 0; i < n; ++i) {
          std::int64_t const at = g + lay.offset(i, k);
          double const prev = i == first ? p.init_of(k) : p.b.t[g + lay.offset(i - step, k)];
          BOOST_TEST(std::fabs(out.dt[at] - lam[at]) <= 1e-12 * (1 + std::fabs(lam[at])));
          BOOST_TEST(std::fabs(out.ds[at] - lam[at] * prev) <= 1e-12 * (1 + std::fabs(lam[at] * prev)));
        }
        double const dinit = p.a.s[g + lay.offset(first, k)] * lam[g + lay.offset(first, k)];
        BOOST_TEST(std::fabs(out.init_gradient[g + k] - dinit) <= 1e-12 * (1 + std::fabs(dinit)));
      }
    }
}

// The sequential reference (recur/reference/linrec.hpp) is the same math.
BOOST_AUTO_TEST_CASE(reference_twin) {
  for (direction const dir : directions) {
    adjoint_spec sp;
    sp.lay = make_layout(layout_kind::strided_gaps, 333, 4);
    sp.dir = dir;
    sp.seed = seed_for(705, dir == direction::reverse);
    auto const p = make_adjoint_problem<double>(sp);
    adjoint_outputs<double> ref;
    constexpr std::int64_t g = adjoint_problem<double>::guard;
    ref.dt.assign(p.size(), poison<double>());
    ref.ds.assign(p.size(), poison<double>());
    ref.init_gradient.assign(p.state_size(), poison<double>());
    recur::reference::linrec_adjoint<double>(p.s_ptr(), 0.0, p.w_ptr(), p.g_ptr(), ref.dt.data() + g,
                                             ref.ds.data() + g, sp.lay, p.a.init_ptr(), 0.0, p.b.init_ptr(),
                                             ref.init_gradient.data() + g, dir == direction::reverse);
    auto const msg = check_adjoint(p, ref);
    BOOST_TEST(msg.empty(), sp.describe() << "\n" << msg);
  }
}

// ------------------------------------------------------------ arguments ---

namespace {

// All memory a case touches, so that one snapshot shows any write.
struct arena {
  std::vector<float> mem;
  arena() : mem(8192) {
    rng r(seed_for(706));
    for (auto& v : mem) v = float(r.symmetric());
  }
  float* s() { return mem.data(); }
  float* w() { return mem.data() + 1024; }
  float* g() { return mem.data() + 2048; }
  float* dt() { return mem.data() + 3072; }
  float* ds() { return mem.data() + 4096; }
  float* init() { return mem.data() + 5120; }
  float* fg() { return mem.data() + 5632; }
  float* ig() { return mem.data() + 6144; }
};

template <class Call>
void expect_invalid(arena& a, Call&& call, std::initializer_list<char const*> needles) {
  recur_test::expect_invalid(
      call, [&] { return a.mem; }, needles, "recur::linrec_adjoint: ");
}

}  // namespace

BOOST_AUTO_TEST_CASE(bad_arguments) {
  arena a;
  constexpr std::int64_t n = 100, count = 3;
  constexpr layout lay = layout::contiguous(n, count);
  struct args {
    float const* s;
    float const* w;
    float const* g;
    float* dt;
    float* ds;
    float const* init;
    float const* fg;
    float* ig;
  };
  args const good{a.s(), a.w(), a.g(), a.dt(), a.ds(), a.init(), a.fg(), a.ig()};
  auto const call = [&](args x, layout l, int threads) {
    return [=] {
      linrec_adjoint_options<float> o;
      o.init = x.init;
      o.final_gradient = x.fg;
      o.init_gradient = x.ig;
      recur::linrec_adjoint<float>(recur::host{threads}, x.s, x.w, x.g, x.dt, x.ds, l, o);
    };
  };
  auto const call0 = [&](args x) { return call(x, lay, 0); };
  auto const with = [&](auto change) {
    args x = good;
    change(x);
    return x;
  };
  auto const odd = [](auto* p) { return reinterpret_cast<decltype(p)>(reinterpret_cast<char*>(p) + 1); };
  expect_invalid(a, call0(with([](args& x) { x.g = nullptr; })), {"g is null"});
  expect_invalid(a, call0(with([](args& x) { x.dt = nullptr; })), {"dt is null"});
  expect_invalid(a, call0(with([](args& x) { x.w = nullptr; })), {"w (read where ds is written) is null"});
  expect_invalid(a, call0(with([&](args& x) { x.s = odd(a.s()); })), {"s = ", "not aligned"});
  expect_invalid(a, call0(with([&](args& x) { x.ds = odd(a.ds()); })), {"ds = ", "not aligned"});
  expect_invalid(a, call0(with([&](args& x) { x.ig = odd(a.ig()); })),
                 {"opt.init_gradient = ", "not aligned"});
  expect_invalid(a, call0(with([&](args& x) { x.fg = odd(a.fg()); })),
                 {"opt.final_gradient = ", "not aligned"});
  expect_invalid(a, call(good, layout{n, count, -1, n}, 0),
                 {"layout.element_stride = -1", "direction::reverse"});
  expect_invalid(a, call(good, layout{n, count, 1, 2}, 0), {"one address"});
  expect_invalid(a, call(good, lay, -2), {"host.threads = -2"});
  // Overlaps: dt may be g exactly, nothing else.
  expect_invalid(a, call0(with([&](args& x) { x.dt = a.g() + 1; })), {"dt overlaps g"});
  expect_invalid(a, call0(with([&](args& x) { x.dt = const_cast<float*>(x.w); })), {"dt overlaps w"});
  expect_invalid(a, call0(with([&](args& x) { x.dt = a.s() + 5; })), {"dt overlaps s"});
  expect_invalid(a, call0(with([&](args& x) { x.ds = a.g(); })), {"ds overlaps g"});
  expect_invalid(a, call0(with([&](args& x) { x.ds = a.dt() + n; })), {"ds overlaps dt"});
  expect_invalid(a, call0(with([&](args& x) { x.ds = a.w() + 1; })), {"ds overlaps w"});
  expect_invalid(a, call0(with([&](args& x) { x.init = a.dt() + 3; })), {"dt overlaps opt.init"});
  expect_invalid(a, call0(with([&](args& x) { x.fg = a.ds() + 3; })), {"ds overlaps opt.final_gradient"});
  expect_invalid(a, call0(with([&](args& x) { x.ig = a.dt() + 3; })), {"opt.init_gradient overlaps dt"});
  expect_invalid(a, call0(with([&](args& x) { x.ig = a.init() + 1; })),
                 {"opt.init_gradient overlaps opt.init"});
  expect_invalid(a, call0(with([&](args& x) { x.ig = a.fg() + 1; })),
                 {"opt.init_gradient overlaps opt.final_gradient"});
  expect_invalid(a,
                 [&] {
                   linrec_adjoint_options<float> o;
                   o.dir = static_cast<direction>(3);
                   recur::linrec_adjoint<float>(recur::host{}, a.s(), a.w(), a.g(), a.dt(), a.ds(), lay, o);
                 },
                 {"direction = 3"});
  expect_invalid(a,
                 [&] {
                   linrec_adjoint_options<float> o;
                   o.variant = static_cast<recur::linrec_variant>(9);
                   recur::linrec_adjoint<float>(recur::host{}, a.s(), a.w(), a.g(), a.dt(), a.ds(), lay, o);
                 },
                 {"variant = 9"});
  // Not errors: dt == g, init_gradient == final_gradient, no ds (w unread,
  // may be null or overlap dt), a scalar s.
  BOOST_CHECK_NO_THROW(call0(with([&](args& x) { x.dt = a.g(); }))());
  BOOST_CHECK_NO_THROW(call0(with([&](args& x) { x.ig = a.fg(); }))());
  BOOST_CHECK_NO_THROW(call0(with([&](args& x) {
    x.ds = nullptr;
    x.w = nullptr;
  }))());
  BOOST_CHECK_NO_THROW(call0(with([&](args& x) {
    x.ds = nullptr;
    x.w = x.dt;
  }))());
  BOOST_CHECK_NO_THROW(recur::linrec_adjoint<float>(recur::host{}, 0.5f, a.w(), a.g(), a.dt(), a.ds(), lay));
}

// n == 0: the init's gradient is the final state's (zero without one);
// count == 0: nothing is written; neither needs the arrays.
BOOST_AUTO_TEST_CASE(empty_sequences_and_batches) {
  arena a;
  for (bool const with_fg : {false, true}) {
    std::fill(a.ig(), a.ig() + 8, poison<float>());
    auto const before = a.mem;
    linrec_adjoint_options<float> o;
    o.final_gradient = with_fg ? a.fg() : nullptr;
    o.init_gradient = a.ig();
    recur::linrec_adjoint<float>(recur::host{}, a.s(), nullptr, nullptr, nullptr, nullptr,
                                 layout::contiguous(0, 5), o);
    for (int k = 0; k < 5; ++k) BOOST_TEST(a.ig()[k] == (with_fg ? a.fg()[k] : 0.0f));
    BOOST_TEST(is_poison(a.ig()[5]));
    BOOST_TEST(std::memcmp(before.data(), a.mem.data(), 6144 * sizeof(float)) == 0);
  }
  auto const before = a.mem;
  linrec_adjoint_options<float> o;
  o.init_gradient = a.ig();
  recur::linrec_adjoint<float>(recur::host{}, a.s(), nullptr, nullptr, nullptr, nullptr,
                               layout::contiguous(10, 0), o);
  BOOST_TEST(std::memcmp(before.data(), a.mem.data(), before.size() * sizeof(float)) == 0);
}

BOOST_AUTO_TEST_SUITE_END()
