// recur::solve_batched through recur::cuda{stream}: the shared cases of
// tridiag_harness.hpp on device memory (every algorithm the CUDA backend
// implements x layout x type, breakdown, argument errors, empty problems,
// reproducibility), with Thomas in long double as the oracle (this
// executable does not link LAPACK; the host suite compares the same cases
// with ?gtsv). Plus what only the GPU has: host pointers rejected, managed
// memory, tridiag_plan (workspace, CUDA graph capture), 64-bit offsets.
//
// An algorithm the backend does not implement at all is reported skipped
// (a precondition asks resolve_tridiag_algorithm(recur::cuda{}, ...));
// shapes it does not implement are listed as "skipped <alg>: <why>" with
// --log_level=message. Host code only: buffers come from the CUDA runtime,
// the work from the host API. RECUR_TEST_SKIP_HUGE=1 skips the case over
// 2^31 elements (reported as skipped).
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
#include <recur/tridiag.hpp>

#include "tridiag_harness.hpp"

using recur::layout;
using recur::tridiag_algorithm;
using namespace tridiag_test;

namespace {

void cuda_ok(cudaError_t e, char const* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(
        fmt::format("test_gpu: {} failed: {} ({})", what, cudaGetErrorString(e), int(e)));
}

// A non-blocking stream: the library must order its work on the stream it
// is given, not on the legacy default stream.
cudaStream_t test_stream() {
  static cudaStream_t const s = [] {
    cudaStream_t x = nullptr;
    cuda_ok(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    return x;
  }();
  return s;
}

enum class memory { device, managed };

// One allocation, freed on scope exit.
struct cuda_buffer {
  void* p = nullptr;
  cuda_buffer() = default;
  cuda_buffer(std::size_t bytes, memory m) {
    if (m == memory::managed)
      cuda_ok(cudaMallocManaged(&p, bytes ? bytes : 1), "cudaMallocManaged");
    else
      cuda_ok(cudaMalloc(&p, bytes ? bytes : 1), "cudaMalloc");
  }
  cuda_buffer(cuda_buffer&& o) noexcept : p(std::exchange(o.p, nullptr)) {}
  cuda_buffer& operator=(cuda_buffer&& o) noexcept {
    std::swap(p, o.p);
    return *this;
  }
  cuda_buffer(cuda_buffer const&) = delete;
  cuda_buffer& operator=(cuda_buffer const&) = delete;
  ~cuda_buffer() {
    if (p) (void)cudaFree(p);
  }
};

// Where cuda_backend's arrays live; managed memory is valid for recur::cuda too.
memory current_memory = memory::device;

struct cuda_backend {
  using executor_type = recur::cuda;
  static executor_type executor() { return recur::cuda{test_stream()}; }
  static char const* name() { return current_memory == memory::managed ? "cuda (managed)" : "cuda"; }
  template <class T>
  struct array {
    cuda_buffer buf;
    std::size_t size = 0;
    explicit array(std::vector<T> const& contents)
        : buf(contents.size() * sizeof(T), current_memory), size(contents.size()) {
      if (size)
        cuda_ok(cudaMemcpy(buf.p, contents.data(), size * sizeof(T), cudaMemcpyDefault),
                "cudaMemcpy (upload)");
      // A copy from pageable memory may still be in flight when cudaMemcpy
      // returns, and the solver runs on a non-blocking stream.
      cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize (upload)");
    }
    T* data() const { return static_cast<T*>(buf.p); }
    std::vector<T> read() const {
      std::vector<T> v(size);
      if (size)
        cuda_ok(cudaMemcpy(v.data(), buf.p, size * sizeof(T), cudaMemcpyDefault), "cudaMemcpy (download)");
      return v;
    }
  };
  static void finish() {
    cuda_ok(cudaStreamSynchronize(test_stream()), "cudaStreamSynchronize (after solve_batched)");
    cuda_ok(cudaGetLastError(), "tridiag kernels");
  }
  template <class T>
  static std::vector<long double> oracle(problem<T> const& p, std::int64_t k, std::int64_t r) {
    return thomas_long_double(p, k, r);
  }
};

// ------------------------------------------------------- preconditions ----

std::size_t host_available_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  std::size_t kb = 0;
  while (in >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  return 0;
}

// Enough free device and host memory, and big cases not turned off.
struct enough_memory {
  double device_gib, host_gib;
  boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) const {
    boost::test_tools::assertion_result r(true);
    if (char const* e = std::getenv("RECUR_TEST_SKIP_HUGE"); e && *e && std::string(e) != "0") {
      r = false;
      r.message() << "RECUR_TEST_SKIP_HUGE is set";
      return r;
    }
    std::size_t free = 0, total = 0;
    if (cudaMemGetInfo(&free, &total) != cudaSuccess) {
      (void)cudaGetLastError();
      r = false;
      r.message() << "cudaMemGetInfo failed";
      return r;
    }
    double const gib = double(1ull << 30);
    double const dev_free = double(free) / gib, host_free = double(host_available_bytes()) / gib;
    if (dev_free < device_gib || host_free < host_gib) {
      r = false;
      r.message() << "needs " << device_gib << " GiB of device memory (" << dev_free << " free) and "
                  << host_gib << " GiB of host memory (" << host_free << " available)";
    }
    return r;
  }
};

using implemented_on_gpu = implemented<cuda_backend>;

}  // namespace

BOOST_AUTO_TEST_SUITE(tridiag_cuda)

// One case per algorithm and type; skipped (with the backend's reason) when
// the CUDA backend does not implement the algorithm.
#define RECUR_TRIDIAG_SWEEP(alg)                                                                      \
  BOOST_AUTO_TEST_CASE(sweep_##alg,                                                                   \
                       *boost::unit_test::precondition(implemented_on_gpu{tridiag_algorithm::alg})) { \
    sweep<cuda_backend, float>(tridiag_algorithm::alg);                                               \
    sweep<cuda_backend, double>(tridiag_algorithm::alg);                                              \
  }                                                                                                   \
  BOOST_AUTO_TEST_CASE(breakdown_##alg,                                                               \
                       *boost::unit_test::precondition(implemented_on_gpu{tridiag_algorithm::alg})) { \
    breakdown<cuda_backend, float>(tridiag_algorithm::alg);                                           \
    breakdown<cuda_backend, double>(tridiag_algorithm::alg);                                          \
  }                                                                                                   \
  BOOST_AUTO_TEST_CASE(deterministic_##alg,                                                           \
                       *boost::unit_test::precondition(implemented_on_gpu{tridiag_algorithm::alg})) { \
    deterministic<cuda_backend, float>(tridiag_algorithm::alg);                                       \
    deterministic<cuda_backend, double>(tridiag_algorithm::alg);                                      \
  }
RECUR_TRIDIAG_SWEEP(automatic)
RECUR_TRIDIAG_SWEEP(thomas)
RECUR_TRIDIAG_SWEEP(cr)
RECUR_TRIDIAG_SWEEP(pcr)
RECUR_TRIDIAG_SWEEP(rd)
RECUR_TRIDIAG_SWEEP(cr_pcr)
RECUR_TRIDIAG_SWEEP(cr_rd)
RECUR_TRIDIAG_SWEEP(cr_packed)
RECUR_TRIDIAG_SWEEP(pscheme)
RECUR_TRIDIAG_SWEEP(thomas_pcr)
#undef RECUR_TRIDIAG_SWEEP

// Which algorithms the backend implements, and what automatic picks: the
// honest list, in the log. automatic must resolve for every shape.
BOOST_AUTO_TEST_CASE(algorithm_support) {
  for (tridiag_algorithm const alg : all_algorithms) {
    try {
      auto const got = recur::resolve_tridiag_algorithm<float>(recur::cuda{test_stream()},
                                                               layout::interleaved(512, 512), alg);
      BOOST_TEST_MESSAGE(recur::to_string(alg)
                         << ": runs as " << recur::to_string(got) << " (512 x 512 f32)");
      BOOST_TEST((got != tridiag_algorithm::automatic));
      if (alg != tridiag_algorithm::automatic) BOOST_TEST((got == alg));
    } catch (recur::invalid_argument const& e) {
      BOOST_TEST_MESSAGE("skipped " << recur::to_string(alg) << ": " << e.what());
      BOOST_TEST((alg != tridiag_algorithm::automatic), "automatic must always resolve: " << e.what());
    }
  }
  for (layout_kind const kind : layout_kinds)
    for (std::int64_t const n : {1, 2, 3, 33, 512, 513, 4096, 100000})
      for (std::int64_t const count : {1, 3, 1000})
      {
        layout const lay = make_layout(kind, n, count);
        BOOST_CHECK_NO_THROW(recur::resolve_tridiag_algorithm<float>(recur::cuda{test_stream()}, lay));
        BOOST_CHECK_NO_THROW(recur::resolve_tridiag_algorithm<double>(recur::cuda{test_stream()}, lay));
      }
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

// A plan gives solve_batched's result bit for bit (same algorithm), with a
// workspace the caller owns, and can be captured in a CUDA graph.
template <class T>
void plan_matches_solve(tridiag_algorithm alg) {
  int idx = 0;
  for (layout const& lay :
       {layout::interleaved(512, 512), layout::contiguous(1000, 37), layout::contiguous(33, 3)}) {
    if (unsupported<T, cuda_backend>(alg, lay)) continue;
    matrix_kind const mk = rd_like(alg) ? matrix_kind::close_values : matrix_kind::dominant;
    auto const p = make_problem<T>(lay, 2, 0, mk, seed_for(510, idx++, sizeof(T)));
    recur::tridiag_options opt;
    opt.nrhs = p.nrhs;
    opt.algorithm = alg;
    recur::tridiag_plan<T> const plan(lay, opt);
    BOOST_TEST((plan.algorithm() == recur::resolve_tridiag_algorithm<T>(cuda_backend::executor(), lay, alg)));
    BOOST_TEST((plan.shape() == lay));
    auto const want = run<cuda_backend>(p, alg, false);

    constexpr std::int64_t g = problem<T>::guard;
    using arr = cuda_backend::array<T>;
    arr const da(p.a), db(p.b), dc(p.c), dd(p.d), dx(std::vector<T>(p.d.size(), poison<T>()));
    cuda_backend::array<std::int32_t> const di(
        std::vector<std::int32_t>(static_cast<std::size_t>(lay.count + 2 * g), info_poison));
    cuda_buffer const ws(plan.workspace_size(), memory::device);
    void* const wsp = plan.workspace_size() ? ws.p : nullptr;
    auto const run_plan = [&] {
      plan.run(cuda_backend::executor(), da.data() + g, db.data() + g, dc.data() + g, dd.data() + p.d_base,
               dx.data() + p.d_base, wsp, di.data() + g);
    };
    run_plan();
    cuda_backend::finish();
    BOOST_TEST((same_bytes(dx.read(), want.x) && di.read() == want.info),
               "plan " << recur::to_string(alg) << " differs from solve_batched: " << p.describe());

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
}

BOOST_AUTO_TEST_CASE(plan_runs) {
  for (tridiag_algorithm const alg : all_algorithms) {
    if (unsupported<float, cuda_backend>(alg, layout::contiguous(33, 3))) {
      BOOST_TEST_MESSAGE("skipped plan " << recur::to_string(alg) << ": not implemented");
      continue;
    }
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
  cuda_buffer const ws(plan.workspace_size() + 16, memory::device);
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
