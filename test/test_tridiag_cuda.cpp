// recur::solve_batched through recur::cuda{stream}: the shared cases of
// tridiag_harness.hpp on device memory (every algorithm x layout x type,
// breakdown, argument errors, empty problems, reproducibility), with Thomas
// in long double as the oracle (this executable does not link LAPACK; the
// host suite compares the same cases with ?gtsv). Plus what only the GPU
// has: which shapes each algorithm must run and where it must refuse (in
// its documented words), host pointers rejected, managed memory,
// tridiag_plan (workspace, CUDA graph capture), 64-bit offsets.
//
// A shape an algorithm must run (must_run_on_gpu) and refuses fails its
// sweep; the other refusals are counted and listed with --log_level=message.
// Host code only: buffers come from the CUDA runtime, the work from the host
// API. RECUR_TEST_SKIP_HUGE=1 skips the case over 2^31 elements (reported as
// skipped).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <boost/test/unit_test.hpp>
#include <recur/tridiag.hpp>

#include "common/cuda_memory.hpp"
#include "common/tridiag_harness.hpp"

using recur::layout;
using recur::tridiag_algorithm;
using namespace tridiag_test;

namespace {

using recur_test::cuda_ok;
using recur_test::dbuf;
using recur_test::enough_memory;
using recur_test::memory;
using recur_test::test_stream;

// Where cuda_backend's arrays live; managed memory is valid for recur::cuda too.
memory current_memory = memory::device;

// What each named algorithm must run on this device (the limits
// kernels/dispatch/tridiag_resolve.cuh states in its refusals): every algorithm any n
// below 2^30 (a system larger than its tile runs the partitioned form, the
// algorithm solving the reduced systems; Thomas through global memory;
// bondeli its own form).
template <class T>
bool must_run_on_gpu(tridiag_algorithm, layout const& lay) {
  return lay.n < (std::int64_t{1} << 30);
}

// Where an algorithm must refuse: n >= 2^30 for every algorithm but Thomas,
// bondeli and automatic (the partitioned form's rows are int). Thomas
// (global memory), bondeli and automatic never refuse.
template <class T>
bool must_refuse_on_gpu(tridiag_algorithm alg, layout const& lay) {
  switch (alg) {
    case tridiag_algorithm::automatic:
    case tridiag_algorithm::thomas:
    case tridiag_algorithm::bondeli:
      return false;
    default:
      return lay.n >= (std::int64_t{1} << 30);
  }
}

// The documented refusal, word for word (lib/cuda/tridiag_cuda.cuh).
std::string refusal(tridiag_algorithm alg, std::int64_t n) {
  std::string const head = std::string("recur::solve_batched: algorithm ") + recur::to_string(alg);
  switch (alg) {
    case tridiag_algorithm::thomas_pcr:
      return head + " needs 4 <= n < 2^30 (n = " + std::to_string(n) + ")";
    default:
      return head + " needs n < 2^30 (n = " + std::to_string(n) + ")";
  }
}

struct cuda_backend {
  using executor_type = recur::cuda;
  static executor_type executor() { return recur::cuda{test_stream()}; }
  static char const* name() { return current_memory == memory::managed ? "cuda (managed)" : "cuda"; }
  template <class T>
  struct array {
    dbuf<T> buf;
    explicit array(std::vector<T> const& contents) : buf(recur_test::upload(contents, current_memory)) {
      // The solver runs on a non-blocking stream.
      recur_test::settle();
    }
    T* data() const { return buf.p; }
    std::vector<T> read() const { return buf.read(); }
  };
  static void finish() { recur_test::finish(test_stream()); }
  template <class T>
  static std::vector<long double> oracle(problem<T> const& p, std::int64_t k, std::int64_t r) {
    return thomas_long_double(p, k, r);
  }
  template <class T>
  static bool must_run(tridiag_algorithm alg, layout const& lay) {
    return must_run_on_gpu<T>(alg, lay);
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(tridiag_cuda)

// Every algorithm: sweep_<alg>, breakdown_<alg>, deterministic_<alg>
// (tridiag_harness.hpp). A sweep fails where the backend refuses a shape it
// must run (must_run_on_gpu).
RECUR_TRIDIAG_ALL_CASES(cuda_backend)

// Every named algorithm runs (resolves to itself) on every shape it must run
// (must_run_on_gpu) and refuses with its documented message, word for word,
// where it must refuse (must_refuse_on_gpu); between the two (a system that
// fits only without the scratch) either, but a refusal still in those words.
// solve_batched refuses as resolve_tridiag_algorithm does, writing nothing.
// automatic resolves for every shape.
template <class T>
void algorithm_support_of() {
  recur_test::case_count ran(fmt::format("algorithm support {}", type_name<T>)),
      refused(fmt::format("algorithm refusals {}", type_name<T>));
  for (tridiag_algorithm const alg : all_algorithms)
    for (layout_kind const kind : basic_layout_kinds)
      for (std::int64_t const n : {1, 2, 3, 4, 33, 512, 513, 3000, 4096, 4097, 6000, 13000, 100000})
        for (std::int64_t const count : {1, 3, 1000}) {
          layout const lay = make_layout(kind, n, count);
          std::string what;
          tridiag_algorithm got = tridiag_algorithm::automatic;
          try {
            got = recur::resolve_tridiag_algorithm<T>(recur::cuda{test_stream()}, lay, alg);
          } catch (recur::invalid_argument const& e) {
            what = e.what();
          }
          std::string const shape = fmt::format("{} {} n={} count={} {}", recur::to_string(alg), name(kind),
                                                n, count, type_name<T>);
          if (what.empty()) {
            ran.run();
            BOOST_TEST((got != tridiag_algorithm::automatic), shape);
            if (alg != tridiag_algorithm::automatic)
              BOOST_TEST((got == alg), shape << " resolves to " << recur::to_string(got));
            BOOST_TEST(!must_refuse_on_gpu<T>(alg, lay), shape << " runs where it must refuse");
          } else {
            refused.skip(what);
            BOOST_TEST(!must_run_on_gpu<T>(alg, lay), shape << " refused where it must run: " << what);
            BOOST_TEST(what == refusal(alg, n),
                       shape << ": \"" << what << "\", documented \"" << refusal(alg, n) << "\"");
          }
        }
  // The partitioned form's bound on n (rows are int).
  std::int64_t const huge = std::int64_t{1} << 30;
  for (tridiag_algorithm const alg : {tridiag_algorithm::thomas_pcr, tridiag_algorithm::cr}) try {
      (void)recur::resolve_tridiag_algorithm<T>(recur::cuda{test_stream()}, layout::contiguous(huge), alg);
      BOOST_ERROR(recur::to_string(alg) << " runs n = 2^30");
    } catch (recur::invalid_argument const& e) {
      BOOST_TEST(std::string(e.what()) == refusal(alg, huge), e.what());
    }
  // Every algorithm runs on every one of these shapes.
  ran.require(300);
  BOOST_TEST(refused.skips() == 0);
}

BOOST_AUTO_TEST_CASE(algorithm_support) {
  algorithm_support_of<float>();
  algorithm_support_of<double>();
  // Short contiguous systems of n = Lanes R go to Thomas-PCR on segments of
  // a warp (f32 R = 16, f64 R = 8); other short ones to Thomas.
  auto const pick = [](std::int64_t n, std::size_t bytes, bool inter = false) {
    layout const lay = inter ? layout::interleaved(n, 1000) : layout::contiguous(n, 1000);
    return bytes == sizeof(float) ? recur::resolve_tridiag_algorithm<float>(recur::cuda{test_stream()}, lay)
                                  : recur::resolve_tridiag_algorithm<double>(recur::cuda{test_stream()}, lay);
  };
  BOOST_TEST((pick(64, sizeof(float)) == tridiag_algorithm::thomas_pcr));
  BOOST_TEST((pick(64, sizeof(double)) == tridiag_algorithm::thomas_pcr));
  BOOST_TEST((pick(16, sizeof(double)) == tridiag_algorithm::thomas_pcr));
  BOOST_TEST((pick(48, sizeof(float)) == tridiag_algorithm::thomas));
  BOOST_TEST((pick(63, sizeof(double)) == tridiag_algorithm::thomas));
  // Short interleaved systems of a small batch: Thomas-PCR where n is a
  // multiple of 16 (the direct form through shared memory, or the columns
  // kernel's burst instance), else Thomas.
  BOOST_TEST((pick(64, sizeof(float), true) == tridiag_algorithm::thomas_pcr));
  BOOST_TEST((pick(48, sizeof(float), true) == tridiag_algorithm::thomas_pcr));
  BOOST_TEST((pick(16, sizeof(double), true) == tridiag_algorithm::thomas_pcr));
  BOOST_TEST((pick(63, sizeof(double), true) == tridiag_algorithm::thomas));
}

// Bondeli's algorithm on long systems (p = sqrt(n) blocks of sqrt(n) rows,
// a reduced system of 2p - 2 rows): every system solved, close to the
// long-double Thomas as the sweep checks, and its relative residual within
// 32 eps (the sweep's bound, 4 n eps, is loose at this n).
template <class T>
void bondeli_long_systems() {
  recur_test::case_count cases(fmt::format("bondeli long systems {}", type_name<T>));
  tally t;
  int idx = 0;
  for (std::int64_t const n : {std::int64_t{100003}, (std::int64_t{1} << 20) + 1})
    for (auto const& [kind, count] : {std::pair{layout_kind::contiguous, std::int64_t{1}},
                                      std::pair{layout_kind::interleaved, std::int64_t{4}}}) {
      layout const lay = make_layout(kind, n, count);
      auto const p = make_problem<T>(lay, 1, 0, matrix_kind::dominant, seed_for(470, idx++, sizeof(T)));
      auto const out = run<cuda_backend>(p, tridiag_algorithm::bondeli, idx % 2 == 0);
      tally one;
      auto const msg = check(
          p, out, tridiag_algorithm::bondeli, [](std::int64_t) { return info_zero; },
          [](auto const& q, std::int64_t k, std::int64_t r) { return cuda_backend::oracle(q, k, r); }, one);
      BOOST_TEST(msg.empty(), "bondeli " << name(kind) << " " << p.describe() << "\n" << msg);
      double const residual = one.worst_residual * residual_c * double(n) * std::numeric_limits<T>::epsilon();
      BOOST_TEST(residual <= 32 * std::numeric_limits<T>::epsilon(),
                 "bondeli " << name(kind) << " n=" << n << ": relative residual " << residual);
      BOOST_TEST(one.broke == 0);
      cases.run();
    }
  cases.require(4);
}

BOOST_AUTO_TEST_CASE(bondeli_long_systems_f32) { bondeli_long_systems<float>(); }
BOOST_AUTO_TEST_CASE(bondeli_long_systems_f64) { bondeli_long_systems<double>(); }

BOOST_AUTO_TEST_CASE(bad_arguments_f32) { bad_arguments<cuda_backend, float>(); }
BOOST_AUTO_TEST_CASE(bad_arguments_f64) { bad_arguments<cuda_backend, double>(); }
BOOST_AUTO_TEST_CASE(empty_problems_f32) { empty_problems<cuda_backend, float>(); }
BOOST_AUTO_TEST_CASE(empty_problems_f64) { empty_problems<cuda_backend, double>(); }

// A host pointer where recur::cuda needs device memory: invalid_argument
// naming the argument, and nothing written.
BOOST_AUTO_TEST_CASE(host_pointers_rejected) {
  arena<cuda_backend, float> m;
  std::vector<float> host(1024, 1.0f);
  std::vector<std::int32_t> host_info(4, info_poison);
  auto const snap = [&] {
    auto v = m.snapshot();
    v.insert(v.end(), host.begin(), host.end());
    return v;
  };
  auto const call = [&](int which) {
    return [&, which] {
      float const* p[5] = {m.a(), m.b(), m.c(), m.d(), m.x()};
      recur::tridiag_options opt;
      opt.info = which == 5 ? host_info.data() : m.info();
      float* x = m.x();
      if (which < 4) p[which] = host.data();
      if (which == 4) x = host.data();
      recur::solve_batched(recur::cuda{test_stream()}, p[0], p[1], p[2], p[3], x, layout::contiguous(50, 2),
                           opt);
    };
  };
  char const* const names[] = {"a = ", "b = ", "c = ", "d = ", "x = ", "info = "};
  for (int which = 0; which < 6; ++which) expect_invalid(call(which), snap, {names[which]});
  for (std::int32_t const v : host_info) BOOST_TEST(v == info_poison);
}

// Managed memory works like device memory.
BOOST_AUTO_TEST_CASE(managed_memory) {
  current_memory = memory::managed;
  try {
    auto const p =
        make_problem<float>(layout::interleaved(513, 37), 3, 0, matrix_kind::dominant, seed_for(500));
    tally t;
    auto const out = run<cuda_backend>(p, tridiag_algorithm::automatic, false);
    auto const msg = check(
        p, out, tridiag_algorithm::automatic, [](std::int64_t) { return info_zero; },
        [](auto const& q, std::int64_t k, std::int64_t r) { return cuda_backend::oracle(q, k, r); }, t);
    BOOST_TEST(msg.empty(), "managed " << p.describe() << "\n" << msg);
  } catch (...) {
    current_memory = memory::device;
    throw;
  }
  current_memory = memory::device;
}

// ------------------------------------------------------------------ plan ----

// Where two runs' x and info first differ (for the failure message).
template <class T>
std::string first_difference(std::vector<T> const& x, std::vector<T> const& want_x,
                             std::vector<std::int32_t> const& info,
                             std::vector<std::int32_t> const& want_info) {
  std::string msg;
  for (std::size_t j = 0; j < info.size() && j < want_info.size(); ++j)
    if (info[j] != want_info[j]) {
      msg += fmt::format("info element {}: {} vs {}; ", j, info[j], want_info[j]);
      break;
    }
  std::size_t diffs = 0, first = x.size();
  for (std::size_t j = 0; j < x.size() && j < want_x.size(); ++j)
    if (!recur_test::same_bits(x[j], want_x[j])) diffs += 1, first = std::min(first, j);
  if (diffs)
    msg +=
        fmt::format("{} x elements differ, the first at {}: {} vs {}", diffs, first, x[first], want_x[first]);
  return msg;
}

// A plan gives solve_batched's result bit for bit (same algorithm), with a
// workspace the caller owns, and can be captured in a CUDA graph.
template <class T>
void plan_matches_solve(tridiag_algorithm alg) {
  recur_test::case_count cases(fmt::format("plan {} {}", recur::to_string(alg), type_name<T>));
  int idx = 0;
  for (layout const& lay :
       {layout::interleaved(512, 512), layout::contiguous(1000, 37), layout::contiguous(33, 3)}) {
    if (!runs<T, cuda_backend>(alg, lay, cases)) continue;
    cases.run();
    matrix_kind const mk = rd_like(alg) ? matrix_kind::close_values : matrix_kind::dominant;
    auto const p = make_problem<T>(lay, 2, 0, mk, seed_for(510, idx++, sizeof(T)));
    recur::tridiag_options opt;
    opt.nrhs = p.nrhs;
    opt.algorithm = alg;
    opt.pivoting = recur::tridiag_pivoting::none;  // as run() solves
    recur::tridiag_plan<T> const plan(lay, opt);
    BOOST_TEST((plan.algorithm() == recur::resolve_tridiag_algorithm<T>(cuda_backend::executor(), lay, alg)));
    BOOST_TEST((plan.shape() == lay));
    auto const want = run<cuda_backend>(p, alg, false);

    constexpr std::int64_t g = problem<T>::guard;
    using arr = cuda_backend::array<T>;
    arr const da(p.a), db(p.b), dc(p.c), dd(p.d), dx(std::vector<T>(p.d.size(), poison<T>()));
    cuda_backend::array<std::int32_t> const di(
        std::vector<std::int32_t>(static_cast<std::size_t>(lay.count + 2 * g), info_poison));
    dbuf<char> const ws(plan.workspace_size());
    void* const wsp = plan.workspace_size() ? ws.p : nullptr;
    auto const run_plan = [&] {
      plan.run(cuda_backend::executor(), da.data() + g, db.data() + g, dc.data() + g, dd.data() + p.d_base,
               dx.data() + p.d_base, wsp, di.data() + g);
    };
    run_plan();
    cuda_backend::finish();
    BOOST_TEST((same_bytes(dx.read(), want.x) && di.read() == want.info),
               "plan " << recur::to_string(alg) << " differs from solve_batched: " << p.describe() << "\n"
                       << first_difference(dx.read(), want.x, di.read(), want.info));

    // The same through a CUDA graph (run allocates and synchronises nothing).
    cuda_ok(cudaMemset(dx.data(), 0xFF, p.d.size() * sizeof(T)), "cudaMemset");
    cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    cuda_ok(cudaStreamBeginCapture(test_stream(), cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
    try {
      run_plan();
    } catch (...) {
      (void)cudaStreamEndCapture(test_stream(), &graph);
      if (graph) (void)cudaGraphDestroy(graph);
      throw;
    }
    cuda_ok(cudaStreamEndCapture(test_stream(), &graph), "cudaStreamEndCapture (plan.run captured)");
    cuda_ok(cudaGraphInstantiateWithFlags(&exec, graph, 0), "cudaGraphInstantiateWithFlags");
    cuda_ok(cudaGraphLaunch(exec, test_stream()), "cudaGraphLaunch");
    cuda_backend::finish();
    (void)cudaGraphExecDestroy(exec);
    (void)cudaGraphDestroy(graph);
    BOOST_TEST((same_bytes(dx.read(), want.x) && di.read() == want.info),
               "plan " << recur::to_string(alg) << " in a graph differs: " << p.describe());
  }
  cases.require(3);  // every layout
}

BOOST_AUTO_TEST_CASE(plan_runs) {
  for (tridiag_algorithm const alg : all_algorithms) {
    BOOST_TEST_CONTEXT(recur::to_string(alg)) {
      plan_matches_solve<float>(alg);
      plan_matches_solve<double>(alg);
    }
  }
}

BOOST_AUTO_TEST_CASE(plan_bad_arguments) {
  arena<cuda_backend, float> m;
  auto const snap = [&] { return m.snapshot(); };
  layout const lay = layout::contiguous(50, 2);
  expect_invalid(
      [&] {
        recur::tridiag_plan<float> p(layout{-1, 1, 1, 0});
      },
      snap, {"layout.n = -1"}, "recur::tridiag_plan: ");
  recur::tridiag_options bad_nrhs;
  bad_nrhs.nrhs = -2;
  expect_invalid([&] { recur::tridiag_plan<float> p(lay, bad_nrhs); }, snap, {"nrhs = -2"},
                 "recur::tridiag_plan: ");
  recur::tridiag_plan<float> const plan(lay);
  dbuf<char> const ws(plan.workspace_size() + 16);
  void* const wsp = plan.workspace_size() ? ws.p : nullptr;
  expect_invalid(
      [&] { plan.run(cuda_backend::executor(), m.a(), m.b(), m.c(), m.d(), m.d() + 1, wsp, m.info()); }, snap,
      {"overlaps d"}, "recur::tridiag_plan::run: ");
  expect_invalid(
      [&] { plan.run(cuda_backend::executor(), nullptr, m.b(), m.c(), m.d(), m.x(), wsp, m.info()); }, snap,
      {"a is null"}, "recur::tridiag_plan::run: ");
  std::vector<float> host(128);
  expect_invalid(
      [&] { plan.run(cuda_backend::executor(), m.a(), m.b(), m.c(), host.data(), m.x(), wsp, m.info()); },
      snap, {"d = "}, "recur::tridiag_plan::run: ");
  if (plan.workspace_size() > 0) {
    expect_invalid(
        [&] { plan.run(cuda_backend::executor(), m.a(), m.b(), m.c(), m.d(), m.x(), nullptr, m.info()); },
        snap, {"workspace is null"}, "recur::tridiag_plan::run: ");
    expect_invalid(
        [&] {
          plan.run(cuda_backend::executor(), m.a(), m.b(), m.c(), m.d(), m.x(), static_cast<char*>(ws.p) + 4,
                   m.info());
        },
        snap, {"workspace = ", "not aligned"}, "recur::tridiag_plan::run: ");
  }
  // After runs that pass (the plan remembers pointers that passed the
  // device check), a host pointer in any argument is still refused.
  plan.run(cuda_backend::executor(), m.a(), m.b(), m.c(), m.d(), m.x(), wsp, m.info());
  plan.run(cuda_backend::executor(), m.a(), m.b(), m.c(), m.d(), m.x(), wsp, m.info());
  cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  auto const after = m.snapshot();
  expect_invalid(
      [&] { plan.run(cuda_backend::executor(), m.a(), m.b(), m.c(), host.data(), m.x(), wsp, m.info()); },
      [&] { return m.snapshot(); }, {"d = ", "host memory"}, "recur::tridiag_plan::run: ");
  recur::tridiag_plan<float> const copy = plan;
  expect_invalid(
      [&] { copy.run(cuda_backend::executor(), host.data(), m.b(), m.c(), m.d(), m.x(), wsp, m.info()); },
      [&] { return m.snapshot(); }, {"a = ", "host memory"}, "recur::tridiag_plan::run: ");
  BOOST_TEST(same_bytes(m.snapshot(), after));
  BOOST_TEST_MESSAGE("plan 50 x 2 f32: " << recur::to_string(plan.algorithm()) << ", workspace "
                                         << plan.workspace_size() << " bytes");
}

// ------------------------------------------------------------ big cases ----

// Offsets past 2^31 elements: two right-hand side sets 2^31 + 5 elements
// apart (32-bit offsets would wrap), f32.
BOOST_AUTO_TEST_CASE(rhs_offsets_over_2_pow_31, *boost::unit_test::precondition(enough_memory{18, 48})) {
  layout const lay = layout::interleaved(64, 1000);
  std::int64_t const stride = (std::int64_t{1} << 31) + 5;
  auto const p = make_problem<float>(lay, 2, stride, matrix_kind::dominant, seed_for(520));
  tally t;
  auto const out = run<cuda_backend>(p, tridiag_algorithm::automatic, false);
  auto const msg = check(
      p, out, tridiag_algorithm::automatic, [](std::int64_t) { return info_zero; },
      [](auto const& q, std::int64_t k, std::int64_t r) { return cuda_backend::oracle(q, k, r); }, t);
  BOOST_TEST(msg.empty(), p.describe() << "\n" << msg);
}

BOOST_AUTO_TEST_SUITE_END()
