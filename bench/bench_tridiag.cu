// Benchmarks for batched tridiagonal solvers (issue 4, section 4), the second
// translation unit of bench_linrec: same process, same stream, same copy
// ceiling, same timing loop and counters (bench_common.cuh; bench_linrec.cu's
// header comment describes them).
//
// Shapes (n, batch): (512, 512), (64, 2^20), (256, 2^17), (512, 2^16),
// (1024, 2^15), (4096, 8192); f32 and f64; the contiguous layout (system
// after system) and the interleaved one (element i of every system side by
// side). For each shape and type, in this order (Google Benchmark runs
// entries in registration order, so the peers' times exist when ours run):
//
//   tridiag_cusparse_gtsv2_<type>_contiguous       peers (gtsv2: pivoting, a
//   tridiag_cusparse_gtsv2StridedBatch_<type>_contiguous  call per system,
//   tridiag_cusparse_gtsvInterleavedBatch_algo{0,1,2}_<type>_interleaved
//                                             batch <= 8192; algo 1, 2 pivot)
//   tridiag_lapack_gtsv_<type>_contiguous     context: LAPACK ?gtsv on the CPU
//   tridiag_<algorithm>_<type>_<layout>       recur::tridiag_plan<T>::run:
//                                             `auto` (label: what it chose),
//                                             then every explicit algorithm
//                                             recur::resolve_tridiag_algorithm
//                                             accepts for that shape
//   tridiag_{nopivot,pivot,periodic,periodic_partial,refine}_<type>_<layout>
//                                             the options of issue 34:
//                                             pivoting = none (auto without
//                                             its screen); partial; periodic
//                                             (automatic: the split around
//                                             the fast forms); periodic with
//                                             pivoting = partial (the pivoted
//                                             form); refinement = mixed (f64)
//
// Large systems (n, batch) = (2^24, 1), (2^26, 1), (2^28, 1), (2^20, 16),
// (2^22, 4), contiguous, f32 and f64 (register_large):
//
//   tridiag_large_cusparse_{gtsv2_nopivot,gtsv2}_<type>_contiguous  peers
//   tridiag_large_<algorithm>_<type>_contiguous  auto and every named
//                                             algorithm but thomas
//   tridiag_large_nopivot_<type>_contiguous   auto with pivoting = none
//
// One system, n = 2^10, 2^12, .. 2^24, contiguous, f32 and f64
// (register_one_system): tridiag_one_{auto,cr,bondeli}_<type>_contiguous
// against tridiag_one_cusparse_gtsv2_nopivot_<type>_contiguous.
//
// all with named arguments n and batch ("tridiag_auto_f32_contiguous/n:512/
// batch:512"). Bytes: 5 words per unknown (a, b, c, d read, x written), for
// peers and ours alike. vs_best_peer: the median time of the fastest cuSPARSE
// routine of this shape and type over this entry's time; the fastest is taken
// over both layouts (the strided and the interleaved routines), for ours in
// either layout, since a caller free to choose the layout would choose it.
//
// Systems: a, c uniform in [-1, 1), |b| uniform in [3, 4) with a random sign,
// d uniform in [-1, 1) (strictly diagonally dominant, |a| + |c| < 2/3 |b|),
// and a[0] = c[n-1] = 0 as cuSPARSE requires (recur ignores both). Element i
// of system k has the same value in both layouts.
//
// GPU timing: time_calls (bench_common.cuh), one call per iteration with CUDA
// events. Small shapes rotate among input sets as bench_linrec does; where
// one set overflows L2 (every shape but 512 x 512), L2 is evicted before each
// timed call by reading a buffer twice its size (untimed), so that neither a
// restore nor the previous call leaves inputs in L2. cuSPARSE solves in place
// (x is the right-hand side) and algorithms 1 and 2 of gtsvInterleavedBatch
// also overwrite the diagonals: after each call the overwritten arrays are
// restored from a pristine copy, untimed. recur never writes its inputs and
// x does not alias d, so nothing is restored; its workspace is allocated once
// (tridiag_plan::workspace_size), outside the timed region.
//
// Checks, before timing, for every entry: x poisoned with NaN (recur), then
// after one call every element of x must be finite and the relative residual
// ||A x - d||_inf / (||A||_inf ||x||_inf) of the first, middle and last
// system (host, double precision) within 16 n eps; LAPACK: info == 0 for
// every system and the same residuals. A failure skips the entry with an
// error and makes the program exit non-zero.

#include <cusparse.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <recur/error.hpp>
#include <recur/executor.hpp>
#include <recur/layout/layout.hpp>
#include <recur/tridiag.hpp>

#include "bench_common.cuh"

extern "C" void sgtsv_(int* n, int* nrhs, float* dl, float* d, float* du, float* b, int* ldb, int* info);
extern "C" void dgtsv_(int* n, int* nrhs, double* dl, double* d, double* du, double* b, int* ldb, int* info);

namespace recur_bench {
namespace {

using recur::layout;
using recur::tridiag_algorithm;

struct tri_shape {
  i64 n, batch;
};
constexpr tri_shape tri_shapes[] = {{512, 512},          {64, i64(1) << 20},   {256, i64(1) << 17},
                                    {512, i64(1) << 16}, {1024, i64(1) << 15}, {4096, 8192}};
// LAPACK runs on the CPU, on these shapes only (those section 4 quotes
// cuSPARSE figures for): a CPU baseline of ~2^25-unknown batches costs
// seconds per entry (restoring the overwritten inputs each iteration, and
// generating them), and it is context, not a target.
// cuSPARSE's gtsv2 solves one system a call: on these batches at most.
constexpr i64 gtsv2_max_batch = 8192;
constexpr tri_shape lapack_shapes[] = {{512, 512}, {64, i64(1) << 20}, {512, i64(1) << 16}, {4096, 8192}};

constexpr tridiag_algorithm explicit_algorithms[] = {
    tridiag_algorithm::thomas,    tridiag_algorithm::cr,      tridiag_algorithm::pcr,
    tridiag_algorithm::rd,        tridiag_algorithm::cr_pcr,  tridiag_algorithm::cr_rd,
    tridiag_algorithm::cr_packed, tridiag_algorithm::pscheme, tridiag_algorithm::thomas_pcr,
    tridiag_algorithm::cr_split};

constexpr std::uint64_t system_seed = 0x7d1a6000ull;

template <class T>
double residual_tolerance(i64 n) {
  return 16.0 * double(std::max<i64>(n, 64)) * double(std::numeric_limits<T>::epsilon());
}

// ---------------------------------------------------------------------------
// The systems. Element i of system k (flat index f = k n + i), the same in
// every layout and on host and device.

// Diagonally dominant rows (|b| in [3, 4], |a|, |c| <= 1), or, for RD and
// CR+RD (close = true), Zhang et al.'s matrices with close values in rows:
// a, b and c of a row within 10% of one value of magnitude [1, 2], on which
// RD's products stay bounded (RD cannot solve dominant systems of this
// length to its accuracy bound; reference/tridiag.hpp).
template <class T>
__host__ __device__ inline void system_values(i64 f, i64 i, i64 n, T& a, T& b, T& c, T& d,
                                              bool close = false) {
  std::uint64_t const u = std::uint64_t(f);
  if (close) {
    double const m = 1 + uniform01(system_seed ^ 6, u);
    a = i == 0 ? T(0) : T(m * (0.9 + 0.2 * uniform01(system_seed ^ 1, u)));
    c = i == n - 1 ? T(0) : T(m * (0.9 + 0.2 * uniform01(system_seed ^ 2, u)));
    b = T(m * (0.9 + 0.2 * uniform01(system_seed ^ 4, u)));
  } else {
    a = i == 0 ? T(0) : T(2 * uniform01(system_seed ^ 1, u) - 1);
    c = i == n - 1 ? T(0) : T(2 * uniform01(system_seed ^ 2, u) - 1);
    double const mag = 3 + uniform01(system_seed ^ 3, u);
    b = T(uniform01(system_seed ^ 4, u) < 0.5 ? -mag : mag);
  }
  d = T(2 * uniform01(system_seed ^ 5, u) - 1);
}

template <class T>
__global__ void fill_systems_kernel(T* a, T* b, T* c, T* d, layout lay, bool close) {
  i64 const total = lay.size();
  for (i64 f = i64(blockIdx.x) * blockDim.x + threadIdx.x; f < total; f += i64(gridDim.x) * blockDim.x) {
    i64 const k = f / lay.n, i = f - k * lay.n, o = lay.offset(i, k);
    system_values(f, i, lay.n, a[o], b[o], c[o], d[o], close);
  }
}

// Reads every 16-byte word of p so that L2 holds nothing else (clean lines).
template <class = void>
__global__ void l2_evict_kernel(uint4 const* p, i64 n, unsigned* sink) {
  unsigned acc = 0;
  for (i64 i = i64(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += i64(gridDim.x) * blockDim.x) {
    uint4 const v = p[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u) *sink = acc;  // the buffer is zero: never, but the loads stay
}

template <class T>
struct tri_arrays {
  dbuf<T> a, b, c, d;
};

template <class T>
tri_arrays<T> make_systems(layout const& lay, bool close = false) {
  std::size_t const total = std::size_t(lay.size());
  tri_arrays<T> s{dbuf<T>(total), dbuf<T>(total), dbuf<T>(total), dbuf<T>(total)};
  fill_systems_kernel<T>
      <<<grid_for(lay.size()), 256, 0, g_stream>>>(s.a.get(), s.b.get(), s.c.get(), s.d.get(), lay, close);
  check(cudaGetLastError());
  return s;
}

// What every GPU case holds besides its own arrays: the L2 eviction buffer
// (empty when the inputs rotate among sets).
struct gpu_case : case_base {
  dbuf<uint4> evict;
  dbuf<unsigned> sink;

  void prepare_eviction(std::size_t sets) {
    if (sets > 1) return;
    evict = dbuf<uint4>(2 * g_l2_bytes / sizeof(uint4) + 1);
    sink = dbuf<unsigned>(1);
    check(cudaMemsetAsync(evict.get(), 0, evict.size() * sizeof(uint4), g_stream));
  }
  void evict_l2() const {
    if (!evict.size()) return;
    i64 const n = i64(evict.size());
    l2_evict_kernel<><<<grid_for(n), 256, 0, g_stream>>>(evict.get(), n, sink.get());
    check(cudaGetLastError());
  }
};

// ---------------------------------------------------------------------------
// Correctness: the relative residual of one system in double precision.

template <class T>
double relative_residual(T const* a, T const* b, T const* c, T const* d, T const* x, i64 n) {
  double rmax = 0, amax = 0, xmax = 0;
  for (i64 i = 0; i < n; ++i) {
    double r = double(b[i]) * double(x[i]) - double(d[i]);
    double row = std::fabs(double(b[i]));
    if (i > 0) {
      r += double(a[i]) * double(x[i - 1]);
      row += std::fabs(double(a[i]));
    }
    if (i < n - 1) {
      r += double(c[i]) * double(x[i + 1]);
      row += std::fabs(double(c[i]));
    }
    if (!std::isfinite(r)) return std::numeric_limits<double>::infinity();
    rmax = std::max(rmax, std::fabs(r));
    amax = std::max(amax, row);
    xmax = std::max(xmax, std::fabs(double(x[i])));
  }
  return xmax > 0 ? rmax / (amax * xmax) : rmax;
}

std::vector<i64> sample_systems(i64 batch) {
  std::vector<i64> ks{0};
  if (batch > 2) ks.push_back(batch / 2);
  if (batch > 1) ks.push_back(batch - 1);
  return ks;
}

void throw_residual(i64 k, double rel, double tol) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "wrong result: system %lld: relative residual %.3g > %.3g", (long long)k,
                rel, tol);
  throw bench_failure(buf);
}

// x (device, layout lay) solves the systems sys: every element finite, the
// sample systems' residuals small.
template <class T>
void check_solution(tri_arrays<T> const& sys, T const* x, layout const& lay) {
  if (any_nonfinite(x, lay.size()))
    throw bench_failure("wrong result: some element of x is not finite (unwritten, or a breakdown)");
  double const tol = residual_tolerance<T>(lay.n);
  for (i64 k : sample_systems(lay.count)) {
    auto const a = gather(sys.a.get(), lay, k, 0, lay.n), b = gather(sys.b.get(), lay, k, 0, lay.n),
               c = gather(sys.c.get(), lay, k, 0, lay.n), d = gather(sys.d.get(), lay, k, 0, lay.n),
               xs = gather(x, lay, k, 0, lay.n);
    double const rel = relative_residual(a.data(), b.data(), c.data(), d.data(), xs.data(), lay.n);
    if (!(rel <= tol)) throw_residual(k, rel, tol);
  }
}

std::size_t sets_for_systems(layout const& lay, std::size_t value_bytes) {
  return sets_for(i64(5 * value_bytes) * lay.size());
}

// ---------------------------------------------------------------------------
// recur: tridiag_plan<T>::run with a preallocated workspace, x apart from d.

template <class T>
struct ours_case : gpu_case {
  std::optional<recur::tridiag_plan<T>> plan;
  std::vector<tri_arrays<T>> sets;
  std::vector<dbuf<T>> x;
  dbuf<char> workspace;

  dbuf<std::int32_t> info;  // RD and CR+RD: which systems they refused (their accuracy check)
  double solved = 1;

  void run(std::size_t i) const {
    plan->run(recur::cuda{g_stream}, sets[i].a.get(), sets[i].b.get(), sets[i].c.get(), sets[i].d.get(),
              x[i].get(), workspace.get(), info.size() ? info.get() : nullptr);
  }
};

// RD and CR+RD report breakdown where their result would miss their
// accuracy bound (reference/tridiag.hpp), which on long systems is often
// (f32, n = 4096: ~90% of these systems): refused systems are NaN with
// info > 0, as the API says, and counted (solved_pct); the sample residuals
// are checked on the first and last solved systems. Returns the solved share.
template <class T>
double check_rd_solution(tri_arrays<T> const& sys, T const* x, std::int32_t const* info_d,
                         layout const& lay) {
  std::vector<std::int32_t> info(std::size_t(lay.count));
  check(cudaMemcpyAsync(info.data(), info_d, info.size() * sizeof(std::int32_t), cudaMemcpyDeviceToHost,
                        g_stream));
  check(cudaStreamSynchronize(g_stream));
  i64 solved = 0, first = -1, last = -1;
  for (i64 k = 0; k < lay.count; ++k)
    if (info[std::size_t(k)] == 0) {
      ++solved;
      if (first < 0) first = k;
      last = k;
    }
  if (any_nonfinite(x, lay.size()) && solved == lay.count)
    throw bench_failure("wrong result: some element of x is not finite, yet info reports no breakdown");
  double const tol = residual_tolerance<T>(lay.n);
  for (i64 k : {first, last}) {
    if (k < 0) continue;  // nothing solved
    auto const a = gather(sys.a.get(), lay, k, 0, lay.n), b = gather(sys.b.get(), lay, k, 0, lay.n),
               c = gather(sys.c.get(), lay, k, 0, lay.n), d = gather(sys.d.get(), lay, k, 0, lay.n),
               xs = gather(x, lay, k, 0, lay.n);
    double const rel = relative_residual(a.data(), b.data(), c.data(), d.data(), xs.data(), lay.n);
    if (!(rel <= tol)) throw_residual(k, rel, tol);
  }
  return double(solved) / double(lay.count);
}

// close: RD and CR+RD's close-values systems (their domain) instead of the
// dominant ones; their refusals are counted either way.
template <class T>
void bm_ours(benchmark::State& st, std::string const& key, entry_info const& info, layout const& lay,
             recur::tridiag_options const& opt, bool close) {
  tridiag_algorithm const algorithm = opt.algorithm;
  bool const rd_like = algorithm == tridiag_algorithm::rd || algorithm == tridiag_algorithm::cr_rd;
  guarded(st, key, [&] {
    auto& c = acquire<ours_case<T>>(key, [&] {
      auto c = std::make_unique<ours_case<T>>();
      c->plan.emplace(lay, opt);
      std::size_t const sets = sets_for_systems(lay, sizeof(T));
      for (std::size_t i = 0; i < sets; ++i) {
        c->sets.push_back(make_systems<T>(lay, close));
        c->x.emplace_back(std::size_t(lay.size()));
        check(
            cudaMemsetAsync(c->x.back().get(), 0xff, std::size_t(lay.size()) * sizeof(T), g_stream));  // NaN
      }
      c->workspace = dbuf<char>(c->plan->workspace_size());
      if (rd_like) c->info = dbuf<std::int32_t>(std::size_t(lay.count));
      c->prepare_eviction(sets);
      c->run(0);
      check(cudaGetLastError());
      check(cudaStreamSynchronize(g_stream));
      if (rd_like)
        c->solved = check_rd_solution(c->sets[0], c->x[0].get(), c->info.get(), lay);
      else
        check_solution(c->sets[0], c->x[0].get(), lay);
      return c;
    });
    st.SetLabel(recur::to_string(c.plan->algorithm()) + std::string(close ? " (close-values systems)" : ""));
    time_calls(
        st, c.sets.size(), info, [&](std::size_t i) { c.run(i); }, [&](std::size_t) { c.evict_l2(); },
        [](std::size_t) {});
    if (c.info.size()) st.counters["solved_pct"] = 100 * c.solved;
  });
}

// ---------------------------------------------------------------------------
// cuSPARSE, called as shared/reference/anchors.cu calls it.

void check_sparse(cusparseStatus_t s, std::source_location loc = std::source_location::current()) {
  if (s == CUSPARSE_STATUS_SUCCESS) return;
  throw bench_failure(where(loc) + ": cuSPARSE: " + cusparseGetErrorString(s));
}

// One handle on the benchmark stream for the whole run (not destroyed: the
// process ends right after the last entry).
constexpr int gtsv2_routine = -2;
constexpr int gtsv2_nopivot_routine = -3;

cusparseHandle_t sparse_handle() {
  static cusparseHandle_t h = nullptr;
  if (!h) {
    check_sparse(cusparseCreate(&h));
    check_sparse(cusparseSetStream(h, g_stream));
  }
  return h;
}

// -3: gtsv2_nopivot and -2: gtsv2 (partial pivoting), one system a call,
// over the contiguous batch; -1: gtsv2StridedBatch (contiguous); 0, 1, 2:
// gtsvInterleavedBatch's algorithm.
template <class T>
cusparseStatus_t sparse_buffer_size(int routine, int n, int batch, tri_arrays<T> const& s,
                                    std::size_t* bytes) {
  if (routine == gtsv2_routine) {
    cusparseHandle_t const h = sparse_handle();
    if constexpr (std::is_same_v<T, float>)
      return cusparseSgtsv2_bufferSizeExt(h, n, 1, s.a.get(), s.b.get(), s.c.get(), s.d.get(), n, bytes);
    else
      return cusparseDgtsv2_bufferSizeExt(h, n, 1, s.a.get(), s.b.get(), s.c.get(), s.d.get(), n, bytes);
  }
  if (routine == gtsv2_nopivot_routine) {
    cusparseHandle_t const h = sparse_handle();
    if constexpr (std::is_same_v<T, float>)
      return cusparseSgtsv2_nopivot_bufferSizeExt(h, n, 1, s.a.get(), s.b.get(), s.c.get(), s.d.get(), n,
                                                  bytes);
    else
      return cusparseDgtsv2_nopivot_bufferSizeExt(h, n, 1, s.a.get(), s.b.get(), s.c.get(), s.d.get(), n,
                                                  bytes);
  }
  auto const h = sparse_handle();
  if constexpr (sizeof(T) == 4) {
    if (routine < 0)
      return cusparseSgtsv2StridedBatch_bufferSizeExt(h, n, s.a.get(), s.b.get(), s.c.get(), s.d.get(), batch,
                                                      n, bytes);
    return cusparseSgtsvInterleavedBatch_bufferSizeExt(h, routine, n, s.a.get(), s.b.get(), s.c.get(),
                                                       s.d.get(), batch, bytes);
  } else {
    if (routine < 0)
      return cusparseDgtsv2StridedBatch_bufferSizeExt(h, n, s.a.get(), s.b.get(), s.c.get(), s.d.get(), batch,
                                                      n, bytes);
    return cusparseDgtsvInterleavedBatch_bufferSizeExt(h, routine, n, s.a.get(), s.b.get(), s.c.get(),
                                                       s.d.get(), batch, bytes);
  }
}

template <class T>
cusparseStatus_t sparse_solve(int routine, int n, int batch, tri_arrays<T> const& s, void* buffer) {
  if (routine == gtsv2_routine || routine == gtsv2_nopivot_routine) {
    cusparseHandle_t const h = sparse_handle();
    bool const pivot = routine == gtsv2_routine;
    for (i64 k = 0; k < batch; ++k) {
      i64 const o = k * i64(n);
      T *const a = s.a.get() + o, *const b = s.b.get() + o, *const c = s.c.get() + o,
               *const d = s.d.get() + o;
      cusparseStatus_t e;
      if constexpr (std::is_same_v<T, float>)
        e = pivot ? cusparseSgtsv2(h, n, 1, a, b, c, d, n, buffer)
                  : cusparseSgtsv2_nopivot(h, n, 1, a, b, c, d, n, buffer);
      else
        e = pivot ? cusparseDgtsv2(h, n, 1, a, b, c, d, n, buffer)
                  : cusparseDgtsv2_nopivot(h, n, 1, a, b, c, d, n, buffer);
      if (e != CUSPARSE_STATUS_SUCCESS) return e;
    }
    return CUSPARSE_STATUS_SUCCESS;
  }
  auto const h = sparse_handle();
  if constexpr (sizeof(T) == 4) {
    if (routine < 0)
      return cusparseSgtsv2StridedBatch(h, n, s.a.get(), s.b.get(), s.c.get(), s.d.get(), batch, n, buffer);
    return cusparseSgtsvInterleavedBatch(h, routine, n, s.a.get(), s.b.get(), s.c.get(), s.d.get(), batch,
                                         buffer);
  } else {
    if (routine < 0)
      return cusparseDgtsv2StridedBatch(h, n, s.a.get(), s.b.get(), s.c.get(), s.d.get(), batch, n, buffer);
    return cusparseDgtsvInterleavedBatch(h, routine, n, s.a.get(), s.b.get(), s.c.get(), s.d.get(), batch,
                                         buffer);
  }
}

template <class T>
struct sparse_case : gpu_case {
  tri_arrays<T> src;                // pristine
  std::vector<tri_arrays<T>> sets;  // solved in place: d becomes x
  dbuf<char> buffer;
  bool restore_diagonals = false;  // algorithms 1 and 2 overwrite them
  std::size_t bytes = 0;           // of one array

  void restore(std::size_t i) const {
    auto copy = [&](dbuf<T> const& to, dbuf<T> const& from) {
      check(cudaMemcpyAsync(to.get(), from.get(), bytes, cudaMemcpyDeviceToDevice, g_stream));
    };
    copy(sets[i].d, src.d);
    if (restore_diagonals) {
      copy(sets[i].a, src.a);
      copy(sets[i].b, src.b);
      copy(sets[i].c, src.c);
    }
  }
};

template <class T>
void bm_sparse(benchmark::State& st, std::string const& key, entry_info const& info, layout const& lay,
               int routine) {
  guarded(st, key, [&] {
    int const n = int(lay.n), batch = int(lay.count);
    auto& c = acquire<sparse_case<T>>(key, [&] {
      auto c = std::make_unique<sparse_case<T>>();
      c->restore_diagonals = routine >= 1 || routine <= gtsv2_routine;  // gtsv2_nopivot: restored as gtsv2
      c->bytes = std::size_t(lay.size()) * sizeof(T);
      c->src = make_systems<T>(lay);
      std::size_t const sets = sets_for_systems(lay, sizeof(T));
      for (std::size_t i = 0; i < sets; ++i) c->sets.push_back(make_systems<T>(lay));
      std::size_t bytes = 0;
      check_sparse(sparse_buffer_size<T>(routine, n, batch, c->sets[0], &bytes));
      c->buffer = dbuf<char>(bytes + 1);
      c->prepare_eviction(sets);
      check_sparse(sparse_solve<T>(routine, n, batch, c->sets[0], c->buffer.get()));
      check(cudaGetLastError());
      check(cudaStreamSynchronize(g_stream));
      check_solution(c->src, c->sets[0].d.get(), lay);
      c->restore(0);
      check(cudaStreamSynchronize(g_stream));
      return c;
    });
    time_calls(
        st, c.sets.size(), info,
        [&](std::size_t i) { check_sparse(sparse_solve<T>(routine, n, batch, c.sets[i], c.buffer.get())); },
        [&](std::size_t) { c.evict_l2(); }, [&](std::size_t i) { c.restore(i); });
  });
}

// ---------------------------------------------------------------------------
// LAPACK ?gtsv (partial pivoting) over the batch on the CPU, one system per
// call, the systems spread over OpenMP threads (the reference LAPACK is
// sequential). Contiguous layout: dl = a + 1, d = b, du = c, rhs = d, each of
// system k at k n. ?gtsv overwrites the diagonals and the right-hand side
// (the solution), so they are restored before each iteration, untimed
// (small shapes then run from the CPU's caches). Time: std::chrono around
// the parallel loop, as manual time.

template <class T>
void gtsv(int n, T* dl, T* d, T* du, T* b, int* info) {
  int nrhs = 1, ldb = n;
  if constexpr (sizeof(T) == 4)
    sgtsv_(&n, &nrhs, dl, d, du, b, &ldb, info);
  else
    dgtsv_(&n, &nrhs, dl, d, du, b, &ldb, info);
}

template <class T>
struct lapack_case : case_base {
  std::unique_ptr<T[]> a, b, c, d;     // pristine
  std::unique_ptr<T[]> wa, wb, wc, x;  // overwritten by ?gtsv
  std::vector<int> info;
};

template <class T>
void bm_lapack(benchmark::State& st, std::string const& key, entry_info const& info, i64 n, i64 batch) {
  guarded(st, key, [&] {
    std::size_t const total = std::size_t(n * batch);
    auto restore = [&](lapack_case<T>& c) {
#pragma omp parallel for schedule(static)
      for (i64 k = 0; k < batch; ++k) {
        std::size_t const o = std::size_t(k * n);
        std::copy_n(c.a.get() + o, n, c.wa.get() + o);
        std::copy_n(c.b.get() + o, n, c.wb.get() + o);
        std::copy_n(c.c.get() + o, n, c.wc.get() + o);
        std::copy_n(c.d.get() + o, n, c.x.get() + o);
      }
    };
    auto solve = [&](lapack_case<T>& c) {
#pragma omp parallel for schedule(static)
      for (i64 k = 0; k < batch; ++k) {
        std::size_t const o = std::size_t(k * n);
        gtsv<T>(int(n), c.wa.get() + o + 1, c.wb.get() + o, c.wc.get() + o, c.x.get() + o, &c.info[k]);
      }
    };
    auto& c = acquire<lapack_case<T>>(key, [&] {
      auto c = std::make_unique<lapack_case<T>>();
      for (auto* p : {&c->a, &c->b, &c->c, &c->d, &c->wa, &c->wb, &c->wc, &c->x}) p->reset(new T[total]);
      c->info.assign(std::size_t(batch), -1);
#pragma omp parallel for schedule(static)
      for (i64 k = 0; k < batch; ++k)
        for (i64 i = 0; i < n; ++i) {
          std::size_t const o = std::size_t(k * n + i);
          system_values(i64(o), i, n, c->a[o], c->b[o], c->c[o], c->d[o]);
        }
      restore(*c);
      solve(*c);
      for (i64 k = 0; k < batch; ++k)
        if (c->info[k] != 0)
          throw bench_failure("?gtsv: system " + std::to_string(k) + ": info " + std::to_string(c->info[k]));
      double const tol = residual_tolerance<T>(n);
      for (i64 k : sample_systems(batch)) {
        std::size_t const o = std::size_t(k * n);
        double const rel = relative_residual(c->a.get() + o, c->b.get() + o, c->c.get() + o, c->d.get() + o,
                                             c->x.get() + o, n);
        if (!(rel <= tol)) throw_residual(k, rel, tol);
      }
      return c;
    });
    restore(c);  // warm-up, untimed: without it a first run saw its first iterations up to 10x slower
    solve(c);
    double total_ms = 0;
    i64 iters = 0;
    for (auto _ : st) {
      restore(c);
      auto const t0 = std::chrono::steady_clock::now();
      solve(c);
      auto const t1 = std::chrono::steady_clock::now();
      double const s = std::chrono::duration<double>(t1 - t0).count();
      st.SetIterationTime(s);
      total_ms += 1e3 * s;
      ++iters;
    }
    if (iters == 0) return;
    double const ms = total_ms / double(iters);
    st.counters["bytes"] = info.bytes;
    st.counters["GBps"] = info.bytes / (ms * 1e-3) / 1e9;
    st.counters["threads"] = omp_get_max_threads();
  });
}

// ---------------------------------------------------------------------------
// Registration.

// Whether the CUDA backend implements `a` for this shape. At registration the
// device is set up (or, when only listing, maybe not: anything but a named
// rejection registers the entry, which then reports for itself when run).
template <class T>
bool accepted(layout const& lay, tridiag_algorithm a) {
  try {
    (void)recur::resolve_tridiag_algorithm<T>(recur::cuda{}, lay, a);
    return true;
  } catch (recur::invalid_argument const&) {
    return false;
  } catch (std::exception const&) {
    return true;
  }
}

template <class F>
void register_entry(std::string const& family, tri_shape sh, F&& body) {
  finish(benchmark::RegisterBenchmark(family.c_str(), std::forward<F>(body))
             ->Args({sh.n, sh.batch})
             ->ArgNames({"n", "batch"}));
}

template <class T>
void register_shape(tri_shape sh) {
  std::string const ty = type_name<T>;
  std::string const shape = arg_name("tridiag_" + ty, {{"n", sh.n}, {"batch", sh.batch}});
  double const bytes = 5.0 * double(sizeof(T)) * double(sh.n) * double(sh.batch);
  layout const layouts[] = {layout::contiguous(sh.n, sh.batch), layout::interleaved(sh.n, sh.batch)};
  char const* const layout_names[] = {"contiguous", "interleaved"};

  auto key_of = [&](std::string const& family) {
    return arg_name(family, {{"n", sh.n}, {"batch", sh.batch}});
  };

  // Peers: cuSPARSE's strided routine on the contiguous layout, its
  // interleaved routine's three algorithms on the interleaved one (1 and 2
  // pivot), and the pivoting gtsv2 system by system where the batch is
  // small enough for a call per system.
  for (int routine = gtsv2_routine; routine <= 2; ++routine) {
    if (routine == gtsv2_routine && sh.batch > gtsv2_max_batch) continue;
    bool const interleaved = routine >= 0;
    std::string const family = "tridiag_cusparse_" +
                               (interleaved ? "gtsvInterleavedBatch_algo" + std::to_string(routine)
                                : routine == gtsv2_routine ? std::string("gtsv2")
                                                           : std::string("gtsv2StridedBatch")) +
                               "_" + ty + "_" + layout_names[interleaved];
    std::string const key = key_of(family);
    entry_info const info{bytes, role::peer, shape, key};
    layout const lay = layouts[interleaved];
    register_entry(family, sh, [=](benchmark::State& st) { bm_sparse<T>(st, key, info, lay, routine); });
  }

  if (std::find_if(std::begin(lapack_shapes), std::end(lapack_shapes), [&](tri_shape s) {
        return s.n == sh.n && s.batch == sh.batch;
      }) != std::end(lapack_shapes)) {
    std::string const family = "tridiag_lapack_gtsv_" + ty + "_contiguous";
    std::string const key = key_of(family);
    entry_info const info{bytes, role::context, shape, key};
    register_entry(family, sh, [=](benchmark::State& st) { bm_lapack<T>(st, key, info, sh.n, sh.batch); });
  }

  for (int l = 0; l < 2; ++l) {
    layout const lay = layouts[l];
    std::vector<tridiag_algorithm> algorithms{tridiag_algorithm::automatic};
    for (tridiag_algorithm a : explicit_algorithms)
      if (accepted<T>(lay, a)) algorithms.push_back(a);
    for (tridiag_algorithm a : algorithms) {
      std::string const family =
          std::string("tridiag_") + recur::to_string(a) + "_" + ty + "_" + layout_names[l];
      std::string const key = key_of(family);
      entry_info const info{bytes, role::ours, shape, key};
      recur::tridiag_options opt;
      opt.algorithm = a;
      bool const close = a == tridiag_algorithm::rd || a == tridiag_algorithm::cr_rd;
      register_entry(family, sh, [=](benchmark::State& st) { bm_ours<T>(st, key, info, lay, opt, close); });
    }
  }

  // The options beyond the default solve: pivoting none (automatic's
  // algorithm without its screen, to which tridiag_auto_* compares), partial
  // pivoting, periodic systems (the systems' corners are zero, which costs
  // what any corners cost) with pivoting automatic (the default, without
  // pivoted: the Sherman-Morrison split around the fast forms) and partial
  // (the pivoted form), and mixed refinement (double only).
  for (int l = 0; l < 2; ++l) {
    layout const lay = layouts[l];
    struct variant {
      char const* name;
      recur::tridiag_options opt;
    };
    std::vector<variant> variants;
    variants.push_back({"nopivot", {}});
    variants.back().opt.pivoting = recur::tridiag_pivoting::none;
    variants.push_back({"pivot", {}});
    variants.back().opt.pivoting = recur::tridiag_pivoting::partial;
    variants.push_back({"periodic", {}});
    variants.back().opt.periodic = true;
    variants.push_back({"periodic_partial", {}});
    variants.back().opt.periodic = true;
    variants.back().opt.pivoting = recur::tridiag_pivoting::partial;
    if constexpr (std::is_same_v<T, double>) {
      variants.push_back({"refine", {}});
      variants.back().opt.refinement = recur::tridiag_refinement::mixed;
    }
    for (variant const& v : variants) {
      std::string const family = std::string("tridiag_") + v.name + "_" + ty + "_" + layout_names[l];
      std::string const key = key_of(family);
      entry_info const info{bytes, role::ours, shape, key};
      recur::tridiag_options const opt = v.opt;
      register_entry(family, sh, [=](benchmark::State& st) { bm_ours<T>(st, key, info, lay, opt, false); });
    }
  }
}

// One large system, and a few (tridiag_large_*): automatic (the
// partitioned form) and every named algorithm but Thomas (one thread a
// system: seconds a call), contiguous, against cuSPARSE's gtsv2_nopivot and
// gtsv2 (a call per system) of the same shape; pct_of_copy at 5 words per
// unknown. Every entry solves the dominant systems: the partitioned form's
// chunk elimination does not pivot, and on RD's close-values systems of
// this length it is not stable (rd and cr_rd refuse the reduced systems
// that leave RD's domain: solved_pct). The largest, 2^28 f64: 5 arrays of 2 GiB and the workspace
// (ours), 8 arrays and the buffer (cuSPARSE, which solves in place and keeps
// a pristine copy).
constexpr tri_shape large_shapes[] = {
    {i64(1) << 24, 1}, {i64(1) << 26, 1}, {i64(1) << 28, 1}, {i64(1) << 20, 16}, {i64(1) << 22, 4}};

// The families PREFIX_cusparse_<routine>_<type>_contiguous (peers: the
// cuSPARSE routines given) and PREFIX_<algorithm>_<type>_contiguous (ours)
// of one contiguous shape, 5 words per unknown.
template <class T>
void register_contiguous(std::string const& prefix, tri_shape sh, std::initializer_list<int> routines,
                         std::vector<tridiag_algorithm> const& algorithms, bool nopivot = false) {
  std::string const ty = type_name<T>;
  std::string const shape = arg_name(prefix + "_" + ty, {{"n", sh.n}, {"batch", sh.batch}});
  double const bytes = 5.0 * double(sizeof(T)) * double(sh.n) * double(sh.batch);
  layout const lay = layout::contiguous(sh.n, sh.batch);
  auto key_of = [&](std::string const& family) {
    return arg_name(family, {{"n", sh.n}, {"batch", sh.batch}});
  };
  for (int const routine : routines) {
    std::string const family =
        prefix + "_cusparse_" + (routine == gtsv2_routine ? "gtsv2_" : "gtsv2_nopivot_") + ty + "_contiguous";
    std::string const key = key_of(family);
    entry_info const info{bytes, role::peer, shape, key};
    register_entry(family, sh, [=](benchmark::State& st) { bm_sparse<T>(st, key, info, lay, routine); });
  }
  for (tridiag_algorithm a : algorithms) {
    std::string const family = prefix + "_" + recur::to_string(a) + "_" + ty + "_contiguous";
    std::string const key = key_of(family);
    entry_info const info{bytes, role::ours, shape, key};
    recur::tridiag_options opt;
    opt.algorithm = a;
    register_entry(family, sh, [=](benchmark::State& st) { bm_ours<T>(st, key, info, lay, opt, false); });
  }
  if (nopivot) {  // automatic without its screen: what the screen costs
    std::string const family = prefix + "_nopivot_" + ty + "_contiguous";
    std::string const key = key_of(family);
    entry_info const info{bytes, role::ours, shape, key};
    recur::tridiag_options opt;
    opt.pivoting = recur::tridiag_pivoting::none;
    register_entry(family, sh, [=](benchmark::State& st) { bm_ours<T>(st, key, info, lay, opt, false); });
  }
}

template <class T>
void register_large(tri_shape sh) {
  std::vector<tridiag_algorithm> algorithms{tridiag_algorithm::automatic};
  for (tridiag_algorithm a : explicit_algorithms)
    if (a != tridiag_algorithm::thomas && accepted<T>(layout::contiguous(sh.n, sh.batch), a))
      algorithms.push_back(a);
  algorithms.push_back(tridiag_algorithm::bondeli);
  register_contiguous<T>("tridiag_large", sh, {gtsv2_nopivot_routine, gtsv2_routine}, algorithms, true);
}

// One system, n = 2^10 .. 2^24 (tridiag_one_*): CR against Bondeli's
// algorithm, the comparison of the CR-and-Bondeli paper (doc/tridiag-internals.md),
// beside automatic and cuSPARSE's gtsv2_nopivot; dominant systems,
// contiguous, 5 words per unknown.
template <class T>
void register_one_system(i64 n) {
  register_contiguous<T>("tridiag_one", {n, 1}, {gtsv2_nopivot_routine},
                         {tridiag_algorithm::automatic, tridiag_algorithm::cr, tridiag_algorithm::bondeli});
}

}  // namespace

void register_tridiag() {
  benchmark::AddCustomContext("cusparse_version", std::to_string(CUSPARSE_VER_MAJOR) + "." +
                                                      std::to_string(CUSPARSE_VER_MINOR) + "." +
                                                      std::to_string(CUSPARSE_VER_PATCH));
  benchmark::AddCustomContext("lapack_threads", std::to_string(omp_get_max_threads()));
  for (tri_shape sh : tri_shapes) register_shape<float>(sh);
  for (tri_shape sh : tri_shapes) register_shape<double>(sh);
  for (tri_shape sh : large_shapes) register_large<float>(sh);
  for (tri_shape sh : large_shapes) register_large<double>(sh);
  for (int lg = 10; lg <= 24; lg += 2) register_one_system<float>(i64(1) << lg);
  for (int lg = 10; lg <= 24; lg += 2) register_one_system<double>(i64(1) << lg);
}

}  // namespace recur_bench
