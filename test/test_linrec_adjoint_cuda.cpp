// recur::linrec_adjoint through recur::cuda{stream} against the adjoint
// recurrence in long double (linrec_adjoint_harness.hpp), on every agent of
// linrec's dispatch: tiles (single_pass; few or strided sequences), lanes
// (interleaved batches), rows (automatic on batches that fill the device),
// pipe (pipelined, or automatic with a forgetful scalar s, on dense batches
// whose adjoint runs forward: a reverse forward call) and three_kernel.
// Outputs start as 0xFF bytes (NaN); the check requires every layout
// element written, within tolerance, and every other byte untouched.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <vector>

#include <cuda_runtime_api.h>
#include <boost/test/unit_test.hpp>
#include <recur/linrec.hpp>

#include "common/cases.hpp"
#include "common/cuda_memory.hpp"
#include "common/linrec_adjoint_harness.hpp"
#include "common/linrec_cuda_cases.hpp"

using recur::direction;
using recur::layout;
using recur::linrec_variant;
using namespace recur_test;

namespace {

constexpr direction directions[] = {direction::forward, direction::reverse};
std::vector<linrec_variant> const all_variants = {linrec_variant::automatic, linrec_variant::single_pass,
                                                  linrec_variant::three_kernel, linrec_variant::pipelined};

// One call through recur::cuda on device copies of the problem; returns what
// it wrote, and checks that the inputs were not written. shared_state: the
// init's gradient is written over the final gradient's array.
template <class T>
adjoint_outputs<T> run_cuda(adjoint_problem<T> const& p, linrec_variant v, bool shared_state = false) {
  constexpr std::int64_t g = adjoint_problem<T>::guard;
  auto const& sp = p.sp;
  dbuf<T> const ds_ = sp.s_scalar ? dbuf<T>() : upload(p.a.s);
  dbuf<T> const dw = upload(p.b.t), dg = upload(p.a.t), dinit = upload(p.a.init), dfg = upload(p.b.init);
  dbuf<T> const ddt = sp.in_place ? dbuf<T>() : poisoned<T>(p.size());
  dbuf<T> const dds = sp.ds ? poisoned<T>(p.size()) : dbuf<T>();
  bool const shared = shared_state && sp.init_gradient && sp.final_gradient;
  dbuf<T> const dig = sp.init_gradient && !shared ? poisoned<T>(p.state_size()) : dbuf<T>();
  T* const dt = (sp.in_place ? dg.p : ddt.p) + g;
  T* const ig = shared ? dfg.p + g : sp.init_gradient ? dig.p + g : nullptr;
  recur::operand<T> const s = sp.s_scalar ? recur::operand<T>(p.s_value()) : recur::operand<T>(ds_.p + g);
  cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize (before)");
  recur::linrec_adjoint(recur::cuda{test_stream()}, s, dw.p + g, sp.in_place ? dt : dg.p + g, dt,
                        sp.ds ? dds.p + g : nullptr, sp.lay, p.options(dinit.p + g, dfg.p + g, ig, v));
  cuda_ok(cudaStreamSynchronize(test_stream()), "cudaStreamSynchronize (after linrec_adjoint)");
  cuda_ok(cudaGetLastError(), "linrec_adjoint kernels");
  adjoint_outputs<T> out;
  out.dt = download(sp.in_place ? dg : ddt, p.size());
  if (sp.ds) out.ds = download(dds, p.size());
  if (sp.init_gradient) out.init_gradient = download(shared ? dfg : dig, p.state_size());
  bool const inputs_kept = (sp.s_scalar || same_bytes(download(ds_, p.size()), p.a.s)) &&
                           same_bytes(download(dw, p.size()), p.b.t) &&
                           (sp.in_place || same_bytes(download(dg, p.size()), p.a.t)) &&
                           same_bytes(download(dinit, p.a.init.size()), p.a.init) &&
                           (shared || same_bytes(download(dfg, p.b.init.size()), p.b.init));
  BOOST_TEST(inputs_kept, "an input was written: " << sp.describe());
  return out;
}

template <class T>
void run_and_check(adjoint_problem<T> const& p, linrec_variant v) {
  auto const msg = check_adjoint(p, run_cuda(p, v));
  BOOST_TEST(msg.empty(), "cuda " << name(v) << " " << type_name<T> << " " << p.sp.describe() << "\n" << msg);
}

template <class... Ts>
void run_types(adjoint_spec const& sp, std::vector<linrec_variant> const& vs) {
  auto const one = [&]<class T>(T const*) {
    auto const p = make_adjoint_problem<T>(sp);
    for (auto const v : vs) run_and_check(p, v);
  };
  (one(static_cast<Ts const*>(nullptr)), ...);
}

void run_both_types(adjoint_spec const& sp, std::vector<linrec_variant> const& vs = all_variants) {
  run_types<float, double>(sp, vs);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(linrec_adjoint_cuda)

// One sequence: lengths around the tile sizes (4096 f32, 2048 f64), both
// directions, every variant (pipelined runs the pipe agent where the
// adjoint runs forward, a reverse forward call; tiles otherwise).
BOOST_AUTO_TEST_CASE(lengths_single_sequence) {
  int idx = 0;
  for (std::int64_t const n :
       {0, 1, 2, 3, 5, 31, 127, 1000, 2047, 2048, 2049, 4095, 4096, 4097, 8191, 8193, 65537, 1000003})
    for (direction const dir : directions) {
      adjoint_spec sp;
      sp.lay = layout::contiguous(n);
      sp.dir = dir;
      sp.seed = seed_for(800, idx);
      sp = rotated(sp, idx++);
      run_both_types(sp);
    }
}

// Interleaved batches of 32 sequences or more run the lanes agent; fewer,
// padded rows or gaps, the tiles agent.
BOOST_AUTO_TEST_CASE(batches_and_layouts) {
  sweep_shapes<adjoint_spec>({{layout_kind::contiguous, 257, 3001},
                              {layout_kind::contiguous, 4096, 33},
                              {layout_kind::contiguous, 3, 100003},
                              {layout_kind::interleaved, 4096, 1000},
                              {layout_kind::interleaved, 31, 5000},
                              {layout_kind::interleaved, 1000, 31},
                              {layout_kind::interleaved, 129, 33},
                              {layout_kind::interleaved, 32, 4097},
                              {layout_kind::interleaved, 2, 10003},
                              {layout_kind::strided_gaps, 7, 4099},
                              {layout_kind::strided_gaps, 100, 300},
                              {layout_kind::interleaved_padded, 40, 1025},
                              {layout_kind::interleaved_padded, 31, 257}},
                             801, [](adjoint_spec const& sp) { run_both_types(sp); });
}

// Every combination of scalar or array s, init, final and init gradients,
// ds and dt == g, both directions, on one shape per agent.
BOOST_AUTO_TEST_CASE(options_cross_product) {
  layout const shapes[] = {make_layout(layout_kind::strided_gaps, 5000, 3),  // tiles, with gaps
                           make_layout(layout_kind::interleaved, 3001, 64),  // lanes
                           layout::contiguous(65537)};                       // tiles, pipe (reverse)
  case_count cases("linrec_adjoint cuda options");
  int idx = 0;
  for (layout const& lay : shapes)
    for (direction const dir : directions)
      for (auto const& sp : adjoint_combinations(lay, dir, 802, idx)) {
        run_both_types(
            sp, {linrec_variant::single_pass, linrec_variant::three_kernel, linrec_variant::pipelined});
        cases.run();
      }
  cases.require(3 * 2 * adjoint_combination_count);
}

// |s| ~ 1 and exact zeros in s: lambda crosses every tile boundary, or is
// cut where a coefficient is 0.
BOOST_AUTO_TEST_CASE(long_memory) {
  int idx = 0;
  for (coef const dist : {coef::near_one, coef::long_memory, coef::near_one_resets})
    for (direction const dir : directions)
      for (layout const& lay :
           {layout::contiguous(1000003), make_layout(layout_kind::interleaved, 30011, 64)}) {
        adjoint_spec sp;
        sp.lay = lay;
        sp.dir = dir;
        sp.dist = dist;
        sp.seed = seed_for(803, idx++);
        run_both_types(sp);
      }
}

// A scalar s whose tile power underflows: automatic runs the pipe agent on
// a reverse call's dense batch (its adjoint runs forward), tiles otherwise.
BOOST_AUTO_TEST_CASE(forgetful_scalar_s) {
  int idx = 0;
  for (double const sv : {0.0, 0.5, -0.25, 0.999})
    for (direction const dir : directions)
      for (layout const& lay :
           {layout::contiguous(4097), layout::contiguous(1000003), layout::contiguous(777, 1001)}) {
        adjoint_spec sp;
        sp.lay = lay;
        sp.dir = dir;
        sp.s_scalar = true;
        sp.ds = idx % 2 == 0;
        sp.init = idx % 3 ? init_kind::array : init_kind::value;
        sp.seed = seed_for(804, idx++);
        auto pf = make_adjoint_problem<float>(sp);
        pf.a.s_value = static_cast<float>(sv);
        run_and_check(pf, linrec_variant::automatic);
        auto pd = make_adjoint_problem<double>(sp);
        pd.a.s_value = sv;
        run_and_check(pd, linrec_variant::automatic);
      }
}

// 16-bit storage, float arithmetic: each agent.
BOOST_AUTO_TEST_CASE(low_precision) {
  sweep_shapes<adjoint_spec>(
      {{layout_kind::contiguous, 1, 100003},
       {layout_kind::contiguous, 64, 65536},
       {layout_kind::contiguous, 257, 3001},
       {layout_kind::interleaved, 4096, 1000},
       {layout_kind::interleaved, 31, 5000},
       {layout_kind::strided_gaps, 7, 4099}},
      805, [](adjoint_spec const& sp) { run_types<recur::bfloat16, recur::float16>(sp, all_variants); });
}

// --------------------------------------------------------------- rows ----
// Batches that fill the device run the rows agent (one block per sequence,
// tiles aligned in memory: partial chunks at both ends; the adjoint of a
// forward call runs over the mirrored view, element stride -1), from the
// adjoint's policy's count (linrec_adjoint_policy: two blocks per SM).

BOOST_AUTO_TEST_CASE(rows_counts_around_threshold) {
  rows_reach const r = rows_reach_both<recur::kernels::linrec_adjoint_policy>();
  struct shape {
    std::int64_t count, n;
  };
  shape const shapes[] = {{r.count - 1, r.n + 3},
                          {r.count, r.n + 3},
                          {r.count + 1, r.n - 1},
                          {r.count + 5, r.n + 1},
                          {2 * r.count + 3, r.n + 7}};
  int idx = 0;
  for (shape const& sh : shapes)
    for (direction const dir : directions) {
      adjoint_spec sp;
      sp.lay = layout::contiguous(sh.n, sh.count);
      sp.dir = dir;
      sp.seed = seed_for(806, idx);
      sp = rotated(sp, idx++);
      run_both_types(sp, {linrec_variant::automatic});
    }
}

// Every combination of the options on a contiguous batch and on one with
// gaps between its sequences, the direction alternating.
BOOST_AUTO_TEST_CASE(rows_options) {
  rows_reach const r = rows_reach_both<recur::kernels::linrec_adjoint_policy>();
  std::int64_t const count = r.count + 1, m = r.n;
  layout const shapes[] = {layout::contiguous(m + 1, count), layout::strided(m + 7, count, 1, m + 7 + 5)};
  case_count cases("linrec_adjoint cuda rows options");
  int idx = 0;
  for (int b = 0; b < 2; ++b) {
    int k = b;
    for (adjoint_spec sp : adjoint_combinations(shapes[b], direction::forward, 807, idx)) {
      sp.dir = k++ % 2 ? direction::reverse : direction::forward;
      run_both_types(sp, {linrec_variant::automatic});
      cases.run();
    }
  }
  cases.require(2 * adjoint_combination_count);
}

// 16-bit storage on the rows agent.
BOOST_AUTO_TEST_CASE(rows_low_precision) {
  rows_reach const r = rows_reach_both<recur::kernels::linrec_adjoint_policy>();
  int idx = 0;
  for (direction const dir : directions) {
    adjoint_spec sp;
    sp.lay = layout::contiguous(r.n + 5, r.count + 2);
    sp.dir = dir;
    sp.seed = seed_for(808, idx);
    sp = rotated(sp, idx++);
    run_types<recur::bfloat16, recur::float16>(sp, {linrec_variant::automatic});
  }
}

// The same call twice gives the same bits (rows, tiles, lanes).
BOOST_AUTO_TEST_CASE(deterministic) {
  rows_reach const r = rows_reach_both<recur::kernels::linrec_adjoint_policy>();
  for (layout const& lay : {layout::contiguous(r.n + 3, r.count + 1), layout::contiguous(1000003),
                            make_layout(layout_kind::interleaved, 3001, 64)}) {
    adjoint_spec sp;
    sp.lay = lay;
    sp.dist = coef::near_one;
    sp.seed = seed_for(809, static_cast<std::uint64_t>(lay.n));
    auto const p = make_adjoint_problem<float>(sp);
    auto const a = run_cuda(p, linrec_variant::automatic), b = run_cuda(p, linrec_variant::automatic);
    BOOST_TEST(
        (same_bytes(a.dt, b.dt) && same_bytes(a.ds, b.ds) && same_bytes(a.init_gradient, b.init_gradient)),
        "two runs differ: " << sp.describe());
    auto const msg = check_adjoint(p, a);
    BOOST_TEST(msg.empty(), sp.describe() << "\n" << msg);
  }
}

// init_gradient == final_gradient (one array, in and out): the element that
// writes a sequence's init gradient must come after the one that reads its
// final gradient, including where look-backs stop early at constant maps.
BOOST_AUTO_TEST_CASE(init_gradient_is_final_gradient) {
  struct shape {
    layout_kind kind;
    std::int64_t n, count;
  };
  shape const shapes[] = {{layout_kind::contiguous, 65537, 5},
                          {layout_kind::contiguous, 1000003, 3},
                          {layout_kind::strided_gaps, 20000, 3},
                          {layout_kind::interleaved, 30011, 33}};
  int idx = 0;
  for (auto const& sh : shapes)
    for (direction const dir : directions)
      for (bool const s_scalar : {false, true}) {
        adjoint_spec sp;
        sp.lay = make_layout(sh.kind, sh.n, sh.count);
        sp.dir = dir;
        sp.s_scalar = s_scalar;
        sp.ds = !s_scalar;
        sp.dist = coef::near_one_resets;
        sp.seed = seed_for(810, idx++);
        auto pf = make_adjoint_problem<float>(sp);
        auto pd = make_adjoint_problem<double>(sp);
        if (s_scalar) {
          pf.a.s_value = 0.5f;
          pd.a.s_value = 0.5;
        }
        for (auto const v : all_variants) {
          auto const mf = check_adjoint(pf, run_cuda(pf, v, true));
          BOOST_TEST(mf.empty(), "cuda " << name(v) << " f32 init_gradient == final_gradient "
                                         << sp.describe() << "\n"
                                         << mf);
          auto const md = check_adjoint(pd, run_cuda(pd, v, true));
          BOOST_TEST(md.empty(), "cuda " << name(v) << " f64 init_gradient == final_gradient "
                                         << sp.describe() << "\n"
                                         << md);
        }
      }
}

// n == 0: the init gradient is the final gradient; count == 0: nothing.
BOOST_AUTO_TEST_CASE(empty_shapes) {
  for (layout const& lay : {layout::contiguous(0, 5), layout::contiguous(7, 0), layout::interleaved(0, 40)})
    for (direction const dir : directions) {
      adjoint_spec sp;
      sp.lay = lay;
      sp.dir = dir;
      sp.seed = seed_for(811, static_cast<std::uint64_t>(lay.count));
      run_both_types(sp);
    }
}

// A host pointer where recur::cuda needs device memory: invalid_argument
// naming the argument, nothing written.
BOOST_AUTO_TEST_CASE(host_pointers_rejected) {
  std::int64_t const n = 1000, count = 2;
  std::size_t const elements = n * count;
  buffer<float> host(elements, 0.5f);
  auto const s = upload(host), w = upload(host), g = upload(host), fg = upload(buffer<float>(count, 1.0f));
  auto const dt = poisoned<float>(elements), ds = poisoned<float>(elements), ig = poisoned<float>(count);
  struct args {
    float const* s;
    float const* w;
    float const* g;
    float* dt;
    float* ds;
    float const* fg;
    float* ig;
  };
  args const good{s.p, w.p, g.p, dt.p, ds.p, fg.p, ig.p};
  std::vector<float> plain(elements);
  auto const with = [&](auto change) {
    args a = good;
    change(a);
    return a;
  };
  std::pair<args, char const*> const cases[] = {
      {with([&](args& a) { a.s = plain.data(); }), "s = "},
      {with([&](args& a) { a.w = plain.data(); }), "w = "},
      {with([&](args& a) { a.g = plain.data(); }), "g = "},
      {with([&](args& a) { a.dt = plain.data(); }), "dt = "},
      {with([&](args& a) { a.ds = plain.data(); }), "ds = "},
      {with([&](args& a) { a.fg = plain.data(); }), "opt.final_gradient = "},
      {with([&](args& a) { a.ig = plain.data(); }), "opt.init_gradient = "},
  };
  for (auto const& [a, needle] : cases) {
    bool threw = false;
    try {
      recur::linrec_adjoint_options<float> o;
      o.final_gradient = a.fg;
      o.init_gradient = a.ig;
      recur::linrec_adjoint<float>(recur::cuda{test_stream()}, a.s, a.w, a.g, a.dt, a.ds,
                                   layout::contiguous(n, count), o);
    } catch (recur::invalid_argument const& e) {
      threw = std::string(e.what()).find(needle) != std::string::npos;
      BOOST_TEST(threw, e.what() << " lacks " << needle);
    }
    BOOST_TEST(threw, "no invalid_argument naming " << needle);
    cuda_ok(cudaStreamSynchronize(test_stream()), "cudaStreamSynchronize");
    BOOST_TEST(all_poison(dt.read()));
    BOOST_TEST(all_poison(ds.read()));
    BOOST_TEST(all_poison(ig.read()));
  }
}

BOOST_AUTO_TEST_SUITE_END()
