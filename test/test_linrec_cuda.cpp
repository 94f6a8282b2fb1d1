// recur::linrec through recur::cuda{stream} against the exact recurrence: the
// host suite's matrix on the device, each case with both GPU variants
// (single_pass and three_kernel). Device outputs start as 0xFF bytes (NaN);
// the check (linrec_harness.hpp) requires every layout element written,
// within tolerance, and every other byte of the buffer untouched. Host code
// only: buffers come from the CUDA runtime, the work from the host API.
//
// RECUR_TEST_SKIP_HUGE=1 skips the cases over 2^28 elements (reported as
// skipped), e.g. under compute-sanitizer.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <boost/test/unit_test.hpp>
#include <recur/kernels/tuning/tuning_linrec.cuh>
#include <recur/linrec.hpp>

#include "common/cases.hpp"
#include "common/cuda_memory.hpp"
#include "common/linrec_cuda_cases.hpp"
#include "common/linrec_harness.hpp"

using recur::direction;
using recur::layout;
using recur::linrec_variant;
using namespace recur_test;

namespace {

constexpr linrec_variant variants[] = {linrec_variant::single_pass, linrec_variant::three_kernel,
                                       linrec_variant::pipelined};
constexpr direction directions[] = {direction::forward, direction::reverse};

using recur_test::cuda_ok;
using recur_test::dbuf;
using recur_test::enough_memory;
using recur_test::memory;
using recur_test::poisoned;
using recur_test::test_stream;
using recur_test::upload;

// Seconds since the last lap, logged (--log_level=message) for big cases,
// whose time goes into transfers and the host-side check.
struct stopwatch {
  bool on;
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  void lap(char const* what) {
    auto const t1 = std::chrono::steady_clock::now();
    if (on) BOOST_TEST_MESSAGE(what << ": " << std::chrono::duration<double>(t1 - t0).count() << " s");
    t0 = t1;
  }
};

// One call through recur::cuda on device copies of the problem; returns what
// it wrote. Small cases also check that the inputs were not written.
// state_in_place: final_state is the init array (one buffer, in and out).
template <class T>
outputs<T> run_cuda(problem<T> const& p, linrec_variant v, memory m = memory::device,
                    bool state_in_place = false) {
  constexpr std::int64_t g = problem<T>::guard;
  auto const& sp = p.sp;
  stopwatch clock{p.size() > (std::size_t{1} << 26)};
  dbuf<T> const ds = p.s.empty() ? dbuf<T>() : upload(p.s, m);
  dbuf<T> const dt = p.t.empty() ? dbuf<T>() : upload(p.t, m);
  dbuf<T> const di = upload(p.init, m);
  dbuf<T> const dw_own = sp.where == place::separate ? poisoned<T>(p.size(), m) : dbuf<T>();
  bool const shared = state_in_place && sp.final_state && sp.init == init_kind::array;
  dbuf<T> const df = sp.final_state && !shared ? poisoned<T>(p.final_size(), m) : dbuf<T>();
  T* const final_p = shared ? di.p + g : sp.final_state ? df.p + g : nullptr;
  dbuf<T> const& dw = sp.where == place::w_is_s ? ds : sp.where == place::w_is_t ? dt : dw_own;
  T* const w = dw.p + g;
  recur::operand<T> const s = p.s.empty() ? recur::operand<T>(p.s_value) : recur::operand<T>(ds.p + g);
  recur::operand<T> const t = p.t.empty() ? recur::operand<T>(p.t_value) : recur::operand<T>(dt.p + g);
  cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize (before)");  // uploads and memsets done
  clock.lap("upload");
  recur::linrec(recur::cuda{test_stream()}, s, t, w, sp.lay, p.options(di.p + g, final_p, v));
  cuda_ok(cudaStreamSynchronize(test_stream()), "cudaStreamSynchronize (after linrec)");
  cuda_ok(cudaGetLastError(), "linrec kernels");
  clock.lap(name(v));
  outputs<T> out;
  out.w = download<T>(dw, p.size());
  if (sp.final_state) out.final_state = download<T>(shared ? di : df, p.final_size());
  clock.lap("download");
  if (p.size() <= (std::size_t{1} << 24)) {
    bool const s_ok = p.s.empty() || sp.where == place::w_is_s || same_bytes(download<T>(ds, p.size()), p.s);
    bool const t_ok = p.t.empty() || sp.where == place::w_is_t || same_bytes(download<T>(dt, p.size()), p.t);
    BOOST_TEST((s_ok && t_ok && (shared || same_bytes(download<T>(di, p.init.size()), p.init))),
               "an input was written: " << sp.describe());
  }
  return out;
}

template <class T>
void run_and_check(problem<T> const& p, linrec_variant v, memory m = memory::device) {
  auto const out = run_cuda(p, v, m);
  stopwatch clock{p.size() > (std::size_t{1} << 26)};
  auto const msg = check(p, out);
  clock.lap("check");
  BOOST_TEST(msg.empty(), "cuda " << name(v) << " " << type_name<T> << " " << p.sp.describe() << "\n" << msg);
}

// Each type given, every variant given, one generated problem per type.
template <class... Ts>
void run_types(spec const& sp, std::initializer_list<linrec_variant> vs) {
  auto const one = [&]<class T>(T const*) {
    auto const p = make_problem<T>(sp);
    for (auto const v : vs) run_and_check(p, v);
  };
  (one(static_cast<Ts const*>(nullptr)), ...);
}

void run_both_types(spec const& sp, std::initializer_list<linrec_variant> vs = {linrec_variant::single_pass,
                                                                                linrec_variant::three_kernel,
                                                                                linrec_variant::pipelined}) {
  run_types<float, double>(sp, vs);
}

// 16-bit storage, float arithmetic: inputs generated in bfloat16 and float16,
// the result checked against the exact recurrence of those rounded inputs
// with the float bound plus the rounding of the stored result (relative 2^-8
// and 2^-11 of |w_i|; linrec_harness.hpp). Every variant.
void run_low_precision(spec const& sp) {
  run_types<recur::bfloat16, recur::float16>(sp, {linrec_variant::automatic, linrec_variant::single_pass,
                                                  linrec_variant::three_kernel, linrec_variant::pipelined});
}

// run(spec) on every combination of init, final_state, scalar or array s
// and t, and in-place use, both directions, on one shape per agent.
template <class Run>
void sweep_options(char const* what, std::uint64_t salt, Run&& run) {
  layout const shapes[] = {make_layout(layout_kind::strided_gaps, 5000, 3),  // tiles, with gaps
                           make_layout(layout_kind::interleaved, 3001, 64),  // lanes
                           layout::contiguous(65537)};                       // tiles, one sequence
  case_count cases(what);
  int idx = 0;
  for (layout const& lay : shapes)
    for (direction const dir : directions)
      for (spec const& sp : option_combinations(lay, dir, salt, idx)) {
        run(sp);
        cases.run();
      }
  cases.require(3 * 2 * option_combination_count);
}

// ------------------------------------------------------- preconditions ----

constexpr double gib(double elements, int arrays, std::size_t bytes_per_element) {
  return elements * arrays * static_cast<double>(bytes_per_element) / double(1ull << 30);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(linrec_cuda)

// Tile sizes are 4096 (f32) and 2048 (f64) elements: lengths around them and
// their multiples, primes, more than one grid's worth.
BOOST_AUTO_TEST_CASE(lengths_single_sequence) {
  int idx = 0;
  for (std::int64_t const n : {0,    1,    2,    3,    5,    31,   127,  1000,  2047,    2048,
                               2049, 4095, 4096, 4097, 8191, 8192, 8193, 65537, 1000003, 10000000})
    for (direction const dir : directions) {
      spec sp;
      sp.lay = layout::contiguous(n);
      sp.dir = dir;
      sp.seed = seed_for(300, idx);
      sp = rotated(sp, idx++);
      run_both_types(sp, {linrec_variant::automatic, linrec_variant::single_pass,
                          linrec_variant::three_kernel, linrec_variant::pipelined});
    }
}

BOOST_AUTO_TEST_CASE(batches_and_layouts) {
  // count x n. Interleaved with count >= 32 runs the lanes agent (128 lanes,
  // 32 or 16 rows per tile), in f64 from a stripe per SM on (4096 on the GPUs
  // this runs on) the stripes agent; fewer sequences, or gaps, run the tiles
  // agent.
  sweep_shapes<spec>({{layout_kind::contiguous, 257, 3001},
                      {layout_kind::contiguous, 4096, 33},
                      {layout_kind::contiguous, 64, 65537},
                      {layout_kind::contiguous, 3, 1000003},
                      {layout_kind::interleaved, 4096, 1000},
                      {layout_kind::interleaved, 31, 5000},
                      {layout_kind::interleaved, 1000, 31},
                      {layout_kind::interleaved, 129, 33},
                      {layout_kind::interleaved, 32, 4097},
                      {layout_kind::interleaved, 128, 17},
                      {layout_kind::interleaved, 2, 100003},
                      {layout_kind::strided_gaps, 7, 4099},
                      {layout_kind::strided_gaps, 100, 300},
                      {layout_kind::interleaved_padded, 40, 1025},
                      {layout_kind::interleaved_padded, 31, 257}},
                     301, [](spec const& sp) { run_both_types(sp); });
}

// Every combination of init, final_state, scalar or array s and t, and
// in-place use, both directions, on one shape per agent.
BOOST_AUTO_TEST_CASE(options_cross_product) {
  sweep_options("linrec cuda options", 302, [](spec const& sp) { run_both_types(sp); });
}

// |s| ~ 1: a step's influence spans (nearly) the whole sequence, across every
// tile and chunk boundary.
BOOST_AUTO_TEST_CASE(long_memory) {
  int idx = 0;
  for (coef const dist :
       {coef::near_one, coef::long_memory, coef::long_memory_positive, coef::near_one_resets})
    for (direction const dir : directions) {
      spec sp;
      sp.lay = layout::contiguous(1000003);
      sp.dir = dir;
      sp.dist = dist;
      sp.seed = seed_for(303, idx++);
      run_both_types(sp);
    }
  for (auto const& lay :
       {make_layout(layout_kind::interleaved, 100003, 64), layout::contiguous(1000003, 3)}) {
    spec sp;
    sp.lay = lay;
    sp.dist = coef::long_memory;
    sp.seed = seed_for(304, idx++);
    run_both_types(sp);
  }
}

// A scalar s whose tile-length power underflows (|s| <= 0.5 here) sends
// `automatic` to the pipelined agent on dense layouts; a larger one (0.999)
// keeps the tiles agent. Both against the reference, both types.
BOOST_AUTO_TEST_CASE(automatic_scalar_s_choices) {
  int idx = 0;
  for (double const sv : {0.0, 0.5, -0.25, 0.999})
    for (layout const& lay :
         {layout::contiguous(1), layout::contiguous(4095), layout::contiguous(4096), layout::contiguous(4097),
          layout::contiguous(1000003), layout::contiguous(777, 1001)}) {
      spec sp;
      sp.lay = lay;
      sp.s_scalar = true;
      sp.init = idx % 2 ? init_kind::array : init_kind::value;
      sp.seed = seed_for(313, idx++);
      auto pf = make_problem<float>(sp);
      pf.s_value = static_cast<float>(sv);
      run_and_check(pf, linrec_variant::automatic);
      auto pd = make_problem<double>(sp);
      pd.s_value = sv;
      run_and_check(pd, linrec_variant::automatic);
    }
}

// 16-bit storage (run_low_precision): each agent, tiles (contiguous, gaps,
// few interleaved sequences), lanes (interleaved batches), pipelined (its
// 16-byte copies carry 8 elements), three kernels.
BOOST_AUTO_TEST_CASE(low_precision_lengths) {
  int idx = 0;
  for (std::int64_t const n : {0, 1, 2, 3, 7, 4095, 4096, 4097, 8193, 65536, 100003, 1000003})
    for (direction const dir : directions) {
      spec sp;
      sp.lay = layout::contiguous(n);
      sp.dir = dir;
      sp.seed = seed_for(320, idx);
      sp = rotated(sp, idx++);
      run_low_precision(sp);
    }
  // A scalar s whose tile power underflows: automatic runs the pipelined agent.
  for (layout const& lay : {layout::contiguous(100003), layout::contiguous(65536, 48)}) {
    spec sp;
    sp.lay = lay;
    sp.s_scalar = true;
    sp.seed = seed_for(321, idx++);
    auto pb = make_problem<recur::bfloat16>(sp);
    pb.s_value = recur::bfloat16(0.5f);
    run_and_check(pb, linrec_variant::automatic);
    auto ph = make_problem<recur::float16>(sp);
    ph.s_value = recur::float16(-0.25f);
    run_and_check(ph, linrec_variant::automatic);
  }
}

BOOST_AUTO_TEST_CASE(low_precision_batches) {
  sweep_shapes<spec>({{layout_kind::contiguous, 48, 100003},
                      {layout_kind::contiguous, 64, 65536},
                      {layout_kind::contiguous, 4096, 33},
                      {layout_kind::contiguous, 257, 3001},
                      {layout_kind::interleaved, 4096, 1000},
                      {layout_kind::interleaved, 31, 5000},
                      {layout_kind::interleaved, 129, 33},
                      {layout_kind::interleaved, 2, 100003},
                      {layout_kind::strided_gaps, 7, 4099},
                      {layout_kind::interleaved_padded, 40, 1025}},
                     322, run_low_precision);
}

BOOST_AUTO_TEST_CASE(low_precision_options) {
  sweep_options("linrec cuda bfloat16 and float16 options", 323, run_low_precision);
}

// final_state == init (allowed: one array carries the state in and out).
// The tile that writes a sequence's final state must wait until the tile
// holding its element 0 has read init, even when its look-back stops early at
// a constant map (a zero s, or a scalar s whose tile power underflows), so
// these shapes span several tiles with such maps in between. A race here
// would show as a final state computed from the overwritten init; it cannot
// be forced, so this checks the results on the shapes where it could occur.
BOOST_AUTO_TEST_CASE(final_state_is_init) {
  struct shape {
    layout_kind kind;
    std::int64_t n, count;
  };
  shape const shapes[] = {{layout_kind::contiguous, 65537, 5},
                          {layout_kind::contiguous, 1000003, 3},
                          {layout_kind::strided_gaps, 20000, 3},
                          {layout_kind::interleaved, 3001, 64},
                          {layout_kind::interleaved, 30011, 33}};
  int idx = 0;
  for (auto const& sh : shapes)
    for (direction const dir : directions)
      for (bool const s_scalar : {false, true}) {
        spec sp;
        sp.lay = make_layout(sh.kind, sh.n, sh.count);
        sp.dir = dir;
        sp.init = init_kind::array;
        sp.final_state = true;
        sp.s_scalar = s_scalar;
        sp.dist = coef::near_one_resets;
        sp.seed = seed_for(314, idx++);
        auto pf = make_problem<float>(sp);
        auto pd = make_problem<double>(sp);
        auto pb = make_problem<recur::bfloat16>(sp);  // 16-bit storage: the same waits
        if (s_scalar) {                               // tile powers underflow: walks stop at one predecessor
          pf.s_value = 0.5f;
          pd.s_value = 0.5;
          pb.s_value = recur::bfloat16(0.5f);
        }
        auto const shared_check = [&](auto const& p, linrec_variant v) {
          auto const msg = check(p, run_cuda(p, v, memory::device, true));
          BOOST_TEST(msg.empty(),
                     "cuda " << name(v) << " "
                             << type_name<typename decltype(p.s)::value_type> << " final_state == init "
                             << sp.describe() << "\n"
                             << msg);
        };
        for (auto const v : {linrec_variant::automatic, linrec_variant::single_pass,
                             linrec_variant::three_kernel, linrec_variant::pipelined}) {
          shared_check(pf, v);
          shared_check(pd, v);
          shared_check(pb, v);
        }
      }
}

// ------------------------------------------------------------- rows ----
// `automatic` on batches of sequences contiguous in memory that fill the
// device runs one block per whole sequence, without a look-back (the rows
// agent), from linrec_rows_min_count(SMs) sequences of at least
// linrec_rows_min_n() elements (kernels/tuning/tuning_linrec.cuh); below,
// the tiles agent. Odd lengths and strides leave partial 16-byte chunks at
// both ends of a sequence, and the reverse direction runs over the mirrored
// view (element stride -1).

// Counts and lengths just below, at and above T's threshold, each run by
// run(spec).
template <class T, class Run>
void rows_threshold_cases(int& idx, Run&& run) {
  std::int64_t const c = recur::kernels::linrec_rows_min_count<T>(sm_count());
  std::int64_t const m = recur::kernels::linrec_rows_min_n<T>();
  struct shape {
    std::int64_t count, n;
  };
  shape const shapes[] = {{c - 1, m + 3}, {c, m + 3},     {c + 1, m - 1},
                          {c + 1, m},     {c + 5, m + 1}, {2 * c + 3, m + 7}};
  for (shape const& sh : shapes)
    for (direction const dir : directions) {
      spec sp;
      sp.lay = layout::contiguous(sh.n, sh.count);
      sp.dir = dir;
      sp.seed = seed_for(320, idx);
      sp = rotated(sp, idx++);
      run(sp);
    }
}

template <class T>
void run_automatic(spec const& sp) {
  run_and_check(make_problem<T>(sp), linrec_variant::automatic);
}

BOOST_AUTO_TEST_CASE(rows_counts_around_threshold) {
  int idx = 0;
  rows_threshold_cases<float>(idx, run_automatic<float>);
  rows_threshold_cases<double>(idx, run_automatic<double>);
  // 16-bit storage has a rows policy of its own (bfloat16's, float16's alike).
  rows_threshold_cases<recur::bfloat16>(idx, [](spec const& sp) {
    run_types<recur::bfloat16, recur::float16>(sp, {linrec_variant::automatic});
  });
}

// Every combination of init, final_state, scalar or array s and t, and in
// place use, on a contiguous batch and on one with gaps between its
// sequences (element stride 1, batch stride n + 5); the direction alternates
// from one combination to the next, the other way round on the second
// batch, so each combination runs in both directions.
BOOST_AUTO_TEST_CASE(rows_options) {
  rows_reach const r = rows_reach_both();
  std::int64_t const count = r.count + 1, m = r.n;
  layout const shapes[] = {layout::contiguous(m + 1, count), layout::strided(m + 7, count, 1, m + 7 + 5)};
  case_count cases("linrec cuda rows options");
  int idx = 0;
  for (int b = 0; b < 2; ++b) {
    int k = b;
    for (spec sp : option_combinations(shapes[b], direction::forward, 321, idx)) {
      sp.dir = k++ % 2 ? direction::reverse : direction::forward;
      run_both_types(sp, {linrec_variant::automatic});
      cases.run();
    }
  }
  cases.require(2 * option_combination_count);
}

// A long odd length (10^5 + 3, which accelerated-scan's kernel cannot take),
// both directions and types, then the same call twice: bitwise the same.
BOOST_AUTO_TEST_CASE(rows_odd_length_deterministic,
                     *boost::unit_test::precondition(enough_memory{gib(2.2e8, 4, sizeof(double)) + 1,
                                                                   gib(2.2e8, 6, sizeof(double)) + 1})) {
  auto const twice = [](auto const& p) {
    auto const a = run_cuda(p, linrec_variant::automatic), b = run_cuda(p, linrec_variant::automatic);
    BOOST_TEST((same_bytes(a.w, b.w) && same_bytes(a.final_state, b.final_state)),
               "cuda automatic (rows) run twice: " << p.sp.describe());
  };
  int idx = 0;
  for (direction const dir : directions) {
    spec sp;
    sp.lay = layout::contiguous(100003, rows_reach_both().count + 3);
    sp.dir = dir;
    sp.dist = coef::near_one;
    sp.seed = seed_for(322, idx++);
    auto const pf = make_problem<float>(sp);
    run_and_check(pf, linrec_variant::automatic);
    auto const pd = make_problem<double>(sp);
    run_and_check(pd, linrec_variant::automatic);
    if (dir == direction::reverse)
      twice(pd);
    else
      twice(pf);
  }
}

// ---------------------------------------------------------- stripes ----
// Interleaved f64 batches of at least linrec_stripes_min_count(SMs) sequences
// run one block per stripe of adjacent sequences, chunk after chunk, without
// a look-back (the stripes agent); below, the lanes agent. Counts that are
// not multiples of the stripe leave a partial last stripe; lengths that are
// not multiples of the chunk a partial last chunk; padded rows (element
// stride above the count) and the mirrored reverse view change the offsets.

template <class T>
void stripes_threshold_cases(int& idx) {
  // Without a stripes policy (f32), the same counts around f64's threshold
  // run the lanes agent.
  std::int64_t const c = recur::kernels::linrec_stripes_min_count<double>(sm_count());
  struct shape {
    layout_kind kind;
    std::int64_t count, n;
  };
  shape const shapes[] = {
      {layout_kind::interleaved, c - 1, 301},         {layout_kind::interleaved, c, 1},
      {layout_kind::interleaved, c + 1, 257},         {layout_kind::interleaved, c + 5, 4099},
      {layout_kind::interleaved_padded, c + 3, 1025}, {layout_kind::interleaved, 2 * c + 7, 33}};
  for (shape const& sh : shapes)
    for (direction const dir : directions) {
      spec sp;
      sp.lay = make_layout(sh.kind, sh.n, sh.count);
      sp.dir = dir;
      sp.seed = seed_for(330, idx);
      sp = rotated(sp, idx++);
      run_and_check(make_problem<T>(sp), linrec_variant::automatic);
    }
}

BOOST_AUTO_TEST_CASE(stripes_counts_around_threshold) {
  int idx = 0;
  stripes_threshold_cases<float>(idx);
  stripes_threshold_cases<double>(idx);
}

// Every combination of init, final_state, scalar or array s and t, and in
// place use, both directions.
BOOST_AUTO_TEST_CASE(stripes_options) {
  std::int64_t const count = recur::kernels::linrec_stripes_min_count<double>(sm_count()) + 9;
  case_count cases("linrec cuda stripes options");
  int idx = 0;
  for (direction const dir : directions)
    for (spec const& sp :
         option_combinations(make_layout(layout_kind::interleaved, 2003, count), dir, 331, idx)) {
      run_both_types(sp, {linrec_variant::automatic});
      cases.run();
    }
  cases.require(2 * option_combination_count);
}

// Long memory across many chunks, then the same call twice: bitwise the same.
BOOST_AUTO_TEST_CASE(stripes_long_memory_deterministic) {
  auto const twice = [](auto const& p) {
    auto const a = run_cuda(p, linrec_variant::automatic), b = run_cuda(p, linrec_variant::automatic);
    BOOST_TEST((same_bytes(a.w, b.w) && same_bytes(a.final_state, b.final_state)),
               "cuda automatic (stripes) run twice: " << p.sp.describe());
  };
  std::int64_t const count = recur::kernels::linrec_stripes_min_count<double>(sm_count()) + 3;
  int idx = 0;
  for (direction const dir : directions) {
    spec sp;
    sp.lay = make_layout(layout_kind::interleaved, 20011, count);
    sp.dir = dir;
    sp.dist = coef::near_one;
    sp.seed = seed_for(332, idx++);
    auto const pf = make_problem<float>(sp);
    run_and_check(pf, linrec_variant::automatic);
    auto const pd = make_problem<double>(sp);
    run_and_check(pd, linrec_variant::automatic);
    twice(pf);
    twice(pd);
  }
}

// Same input, device and build: bitwise the same output (API guarantee).
BOOST_AUTO_TEST_CASE(deterministic) {
  auto const twice = [](auto const& p, linrec_variant v) {
    auto const a = run_cuda(p, v), b = run_cuda(p, v);
    BOOST_TEST((same_bytes(a.w, b.w) && same_bytes(a.final_state, b.final_state)),
               "cuda " << name(v) << " " << p.sp.describe());
  };
  int idx = 0;
  for (auto const& lay : {layout::contiguous(10000000), make_layout(layout_kind::interleaved, 1000, 4096),
                          make_layout(layout_kind::strided_gaps, 4099, 7)}) {
    spec sp;
    sp.lay = lay;
    sp.dist = coef::near_one;
    sp.seed = seed_for(305, idx++);
    auto const pf = make_problem<float>(sp);
    auto const pd = make_problem<double>(sp);
    for (auto const v : variants) {
      twice(pf, v);
      twice(pd, v);
    }
  }
}

// Managed and pinned host memory are valid for recur::cuda too.
BOOST_AUTO_TEST_CASE(managed_and_pinned_memory) {
  spec sp;
  sp.lay = make_layout(layout_kind::interleaved, 10007, 33);
  sp.seed = seed_for(306);
  auto const p = make_problem<float>(sp);
  for (auto const v : variants) {
    run_and_check(p, v, memory::managed);
    run_and_check(p, v, memory::pinned);
  }
}

// n == 0: final_state = init, nothing else written. count == 0: a no-op.
BOOST_AUTO_TEST_CASE(empty_shapes) {
  int idx = 0;
  for (auto const& lay : {layout::contiguous(0, 1), layout::contiguous(0, 5), layout::interleaved(0, 1000)})
    for (init_kind const init : {init_kind::value, init_kind::array})
      for (direction const dir : directions) {
        spec sp;
        sp.lay = lay;
        sp.dir = dir;
        sp.init = init;
        sp.seed = seed_for(307, idx++);
        run_both_types(sp, {linrec_variant::automatic, linrec_variant::single_pass,
                            linrec_variant::three_kernel, linrec_variant::pipelined});
      }
  auto const f = poisoned<float>(4);
  recur::linrec_options<float> o;
  o.final_state = f.p;
  for (auto const v : variants) {
    o.variant = v;
    BOOST_CHECK_NO_THROW(recur::linrec<float>(recur::cuda{test_stream()}, recur::operand<float>(1.0f),
                                              recur::operand<float>(1.0f), nullptr, layout::contiguous(10, 0),
                                              o));
  }
  cuda_ok(cudaStreamSynchronize(test_stream()), "cudaStreamSynchronize");
  for (float const x : download<float>(f, 4)) BOOST_TEST(is_poison(x));
}

// A host pointer where recur::cuda needs device memory: invalid_argument
// naming the argument, and nothing written.
BOOST_AUTO_TEST_CASE(host_pointers_rejected) {
  std::int64_t const n = 1000, count = 2;
  std::size_t const elements = n * count;
  auto const rnd = [](std::size_t k) {
    buffer<float> b(k);
    rng r(seed_for(308, k));
    for (auto& x : b) x = float(r.symmetric());
    return b;
  };
  buffer<float> const hs = rnd(elements), ht = rnd(elements), hinit = rnd(count);
  buffer<float> hw(elements, poison<float>()), hf(count, poison<float>());
  auto const ds = upload(hs), dt = upload(ht), di = upload(hinit, memory::device);
  auto const dw = poisoned<float>(elements), df = poisoned<float>(count, memory::device);
  std::vector<float> plain(8);  // an ordinary host allocation
  struct args {
    float const* s;
    float const* t;
    float* w;
    float const* init;
    float* final_state;
    char const* name;
  };
  args const good{ds.p, dt.p, dw.p, di.p, df.p, ""};
  std::vector<args> cases;
  for (int which = 0; which < 5; ++which) {
    args a = good;
    switch (which) {
      case 0:
        a.s = hs.data(), a.name = "s = ";
        break;
      case 1:
        a.t = ht.data(), a.name = "t = ";
        break;
      case 2:
        a.w = hw.data(), a.name = "w = ";
        break;
      case 3:
        a.init = hinit.data(), a.name = "init = ";
        break;
      case 4:
        a.final_state = hf.data(), a.name = "final_state = ";
        break;
    }
    cases.push_back(a);
  }
  args bogus = good;
  bogus.w = plain.data();
  bogus.name = "w = ";
  cases.push_back(bogus);
  for (args const& a : cases)
    for (auto const v : variants) {
      recur::linrec_options<float> o;
      o.init = a.init;
      o.final_state = a.final_state;
      o.variant = v;
      BOOST_CHECK_EXCEPTION(
          recur::linrec(recur::cuda{test_stream()}, a.s, a.t, a.w, layout::contiguous(n, count), o),
          recur::invalid_argument, [&](recur::invalid_argument const& e) {
            bool const named = std::string(e.what()).find(a.name) != std::string::npos;
            BOOST_TEST(named, "message \"" << e.what() << "\" lacks \"" << a.name << "\"");
            return named;
          });
    }
  // Other bad arguments go through the same checks as on the host.
  BOOST_CHECK_THROW(recur::linrec(recur::cuda{test_stream()}, good.s, good.t, good.w, layout{-1, 1, 1, 0}),
                    recur::invalid_argument);
  BOOST_CHECK_THROW(recur::linrec(recur::cuda{test_stream()}, good.s, good.t,
                                  reinterpret_cast<float*>(reinterpret_cast<char*>(good.w) + 2), n),
                    recur::invalid_argument);
  BOOST_CHECK_THROW(recur::linrec(recur::cuda{test_stream()}, good.s, good.w + 1, good.w, n),
                    recur::invalid_argument);
  cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  for (float const x : download<float>(dw, elements)) BOOST_TEST_REQUIRE(is_poison(x));
  for (float const x : download<float>(df, count)) BOOST_TEST(is_poison(x));
  for (float const x : hw) BOOST_TEST_REQUIRE(is_poison(x));
  for (float const x : hf) BOOST_TEST(is_poison(x));
}

// ------------------------------------------------------------ big cases ----
// Device memory: the arrays, plus the three-kernel form's temporary storage
// (two rearranged arrays). Host: the inputs plus the downloaded output.

BOOST_AUTO_TEST_CASE(f32_2_pow_28_plus_5, *boost::unit_test::precondition(enough_memory{
                                              gib(1 << 28, 5, 4) + 1, gib(1 << 28, 3, 4) + 1})) {
  spec sp;
  sp.lay = layout::contiguous((std::int64_t{1} << 28) + 5);
  sp.seed = seed_for(310);
  auto p = make_problem<float>(sp);
  run_and_check(p, linrec_variant::single_pass);
  run_and_check(p, linrec_variant::three_kernel);
  run_and_check(p, linrec_variant::pipelined);
  p.sp.dir = direction::reverse;
  run_and_check(p, linrec_variant::single_pass);
}

// Over 2^31 elements: 32-bit indices, offsets or tile counts would wrap.
// Scalar operands keep the memory down.
BOOST_AUTO_TEST_CASE(f32_single_sequence_over_2_pow_31,
                     *boost::unit_test::precondition(enough_memory{gib(2147483659.0, 4, 4) + 2,
                                                                   gib(2147483659.0, 2, 4) + 2})) {
  spec sp;
  sp.lay = layout::contiguous((std::int64_t{1} << 31) + 11);
  sp.t_scalar = true;
  sp.init = init_kind::value;
  sp.seed = seed_for(311);
  stopwatch clock{true};
  auto p = make_problem<float>(sp);
  clock.lap("generate");
  run_and_check(p, linrec_variant::single_pass);
  run_and_check(p, linrec_variant::pipelined);
  p.sp.dir = direction::reverse;
  run_and_check(p, linrec_variant::three_kernel);
}

BOOST_AUTO_TEST_CASE(f32_batches_over_2_pow_31,
                     *boost::unit_test::precondition(enough_memory{gib(2147483662.0, 2, 4) + 2,
                                                                   gib(2147483662.0, 2, 4) + 2})) {
  spec sp;
  sp.s_scalar = true;
  sp.dir = direction::reverse;
  sp.seed = seed_for(312);
  sp.lay = layout::contiguous((std::int64_t{1} << 30) + 7, 2);  // tiles agent
  run_and_check(make_problem<float>(sp), linrec_variant::single_pass);
  sp.dir = direction::forward;
  run_and_check(make_problem<float>(sp), linrec_variant::pipelined);  // pipelined agent
  sp.dir = direction::forward;
  sp.lay = layout::interleaved((std::int64_t{1} << 25) + 3, 64);  // lanes agent
  run_and_check(make_problem<float>(sp), linrec_variant::single_pass);
}

BOOST_AUTO_TEST_SUITE_END()
