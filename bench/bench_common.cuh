#pragma once
// What the benchmark program's translation units share (bench_linrec.cu:
// recurrences, scans, lfilter, and main; bench_tridiag.cu: the batched
// tridiagonal solvers): CUDA error checks, owned device memory, fill and
// check kernels, the process-wide stream, events and results (copy ceiling,
// peers' times), the entry cache, the timing loop and the counters, and the
// naming of entries. bench_linrec.cu's header comment describes the timing
// and the counters.
//
// One process, one state: the variables are C++17 inline variables, so both
// translation units see the same copy ceiling and peer times. Kernels are
// templates (a non-template __global__ function defined in two translation
// units would clash at link time).

#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <source_location>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <recur/layout/layout.hpp>
#include <recur/storage.hpp>

namespace recur_bench {

using i64 = std::int64_t;

constexpr i64 copy_bytes = i64(1) << 30;  // copied; read + write is twice this
// The spin ahead of each timed call: it must outlast the host's enqueue of
// the call (host_us, reported per entry), or that time is measured too.
// Each entry's spin is 4 times the enqueue of its last warm-up call (the
// first may load modules), 40 us at least, 2 ms at most, and grows for the
// later runs where a run's mean enqueue came within half of it;
// RECUR_BENCH_SPIN_US fixes it for every entry.
inline long long const spin_fixed_us = [] {
  char const* e = std::getenv("RECUR_BENCH_SPIN_US");
  return e ? std::atoll(e) : 0;
}();
inline unsigned long long spin_for(double enqueue_s) {
  if (spin_fixed_us > 0) return static_cast<unsigned long long>(spin_fixed_us) * 1000ull;
  double const ns = std::clamp(4e9 * enqueue_s, 40e3, 2e6);
  return static_cast<unsigned long long>(ns);
}

template <class T>
constexpr char const* type_name = std::is_same_v<T, recur::bfloat16>  ? "bf16"
                                  : std::is_same_v<T, recur::float16> ? "f16"
                                  : sizeof(T) == 4                    ? "f32"
                                                                      : "f64";

// ---------------------------------------------------------------------------
// Errors: every CUDA call is checked; a failure throws, the entry is skipped
// with the message, and the program exits non-zero at the end.

struct bench_failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline std::string where(std::source_location const& loc) {
  char const* file = std::strrchr(loc.file_name(), '/');
  return std::string(file ? file + 1 : loc.file_name()) + ":" + std::to_string(loc.line());
}

inline void check(cudaError_t e, std::source_location loc = std::source_location::current()) {
  if (e == cudaSuccess) return;
  throw bench_failure(where(loc) + ": " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
}

inline int g_failures = 0;

// ---------------------------------------------------------------------------
// Device memory, owned.

template <class T>
class dbuf {
 public:
  dbuf() = default;
  explicit dbuf(std::size_t n) : n_(n) {
    if (n) check(cudaMalloc(&p_, n * sizeof(T)));
  }
  dbuf(dbuf&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  dbuf& operator=(dbuf&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    return *this;
  }
  ~dbuf() {
    if (p_) cudaFree(p_);  // no throw from a destructor; a broken context shows elsewhere
  }
  T* get() const { return p_; }
  std::size_t size() const { return n_; }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0;
};

// ---------------------------------------------------------------------------
// Device helpers.

__host__ __device__ inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Uniform in [0, 1), a counter-based hash of (seed, i): same data every run.
__host__ __device__ inline double uniform01(std::uint64_t seed, std::uint64_t i) {
  return double(splitmix64(seed ^ splitmix64(i)) >> 11) * 0x1.0p-53;
}

// Uniform in [lo, hi).
template <class T>
__global__ void fill_uniform_kernel(T* p, i64 n, double lo, double hi, std::uint64_t seed) {
  for (i64 i = i64(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += i64(gridDim.x) * blockDim.x) {
    double const u = uniform01(seed, std::uint64_t(i));
    p[i] = T(lo + (hi - lo) * u);
  }
}

template <class T>
__global__ void any_nonfinite_kernel(T const* p, i64 n, int* flag) {
  for (i64 i = i64(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += i64(gridDim.x) * blockDim.x)
    if (!isfinite(p[i])) *flag = 1;
}

// dst[j] = src[lay.offset(start + j, k)], j < len: one sequence's stretch.
template <class T>
__global__ void gather_kernel(T const* src, T* dst, recur::layout lay, i64 k, i64 start, i64 len) {
  for (i64 j = i64(blockIdx.x) * blockDim.x + threadIdx.x; j < len; j += i64(gridDim.x) * blockDim.x)
    dst[j] = src[lay.offset(start + j, k)];
}

template <class = void>
__global__ void spin_kernel(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}

constexpr unsigned grid_for(i64 n) {
  i64 const b = (n + 255) / 256;
  return unsigned(std::clamp<i64>(b, 1, 4096));
}

// ---------------------------------------------------------------------------
// Process-wide state: the stream and events every entry uses, the device, and
// the results later entries refer to.

inline cudaStream_t g_stream = nullptr;
inline cudaEvent_t g_start = nullptr, g_stop = nullptr;
inline std::size_t g_l2_bytes = 0;
inline std::vector<double> g_copy_gbps;                                              // every copy_ceiling run
inline std::map<std::string, std::map<std::string, std::vector<double>>> g_peer_ms;  // shape -> peer -> runs
// What an entry's first timed run measures once for its later runs (Google
// Benchmark calls the function several times per repetition): warmed up,
// its spin, its host loop time.
struct entry_timing {
  unsigned long long spin_ns = 0;
  double host_loop_us = -1;  // not measured (a call of loop_max_ms or more, or a peer)
};
inline std::map<std::string, entry_timing> g_timing;  // entry key -> its timing state

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::size_t const h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

template <class T>
void fill_uniform(T* p, i64 n, double lo, double hi, std::uint64_t seed) {
  fill_uniform_kernel<T><<<grid_for(n), 256, 0, g_stream>>>(p, n, lo, hi, seed);
  check(cudaGetLastError());
}

// Enough input sets that one pass over all of them overflows L2 three times.
inline std::size_t sets_for(i64 bytes_per_set) {
  i64 const want = (3 * i64(g_l2_bytes) + bytes_per_set - 1) / std::max<i64>(bytes_per_set, 1);
  return std::size_t(std::clamp<i64>(want, 1, 64));
}

// The copy ceiling in GB/s: the median of this run's copy_ceiling entry, or,
// when a filter left that entry out, measured here once the same way.
inline double copy_ceiling_gbps() {
  if (g_copy_gbps.empty()) {
    dbuf<char> a(copy_bytes), b(copy_bytes);
    check(cudaMemsetAsync(a.get(), 0x5a, copy_bytes, g_stream));
    for (int r = 0; r < 17; ++r) {
      spin_kernel<><<<1, 1, 0, g_stream>>>(spin_for(50e-6));
      check(cudaGetLastError());
      check(cudaEventRecord(g_start, g_stream));
      check(cudaMemcpyAsync(b.get(), a.get(), copy_bytes, cudaMemcpyDeviceToDevice, g_stream));
      check(cudaEventRecord(g_stop, g_stream));
      check(cudaEventSynchronize(g_stop));
      float ms = 0;
      check(cudaEventElapsedTime(&ms, g_start, g_stop));
      if (r >= 2) g_copy_gbps.push_back(2.0 * copy_bytes / (ms * 1e-3) / 1e9);
    }
    std::fprintf(stderr, "bench_linrec: copy_ceiling not in this run; measured it: %.1f GB/s\n",
                 median(g_copy_gbps));
  }
  return median(g_copy_gbps);
}

inline std::optional<double> best_peer_ms(std::string const& shape) {
  auto const it = g_peer_ms.find(shape);
  if (it == g_peer_ms.end()) return std::nullopt;
  std::optional<double> best;
  for (auto const& [peer, runs] : it->second) {
    if (runs.empty()) continue;
    double const m = median(runs);
    if (!best || m < *best) best = m;
  }
  return best;
}

// ---------------------------------------------------------------------------
// The entry currently set up. Google Benchmark calls an entry's function once
// per iteration-count trial and once per repetition; the inputs are made and
// checked on the first call and kept until another entry runs, so setup and
// the correctness check happen once per entry.

struct case_base {
  virtual ~case_base() = default;
};

inline std::string g_case_key;
inline std::unique_ptr<case_base> g_case;
inline std::map<std::string, std::string> g_failed;  // entry -> message

template <class C, class Make>
C& acquire(std::string const& key, Make&& make) {
  if (g_case_key != key || !g_case) {
    g_case.reset();  // free the previous entry's memory first
    g_case_key.clear();
    g_case = make();
    g_case_key = key;
  }
  return static_cast<C&>(*g_case);
}

// Runs an entry's body; a failure skips the entry (and its later repetitions)
// with the message and is counted.
template <class Body>
void guarded(benchmark::State& st, std::string const& key, Body&& body) {
  if (auto const it = g_failed.find(key); it != g_failed.end()) {
    st.SkipWithError(it->second.c_str());
    return;
  }
  try {
    body();
  } catch (std::exception const& e) {
    g_case.reset();
    g_case_key.clear();
    (void)cudaGetLastError();  // clear a non-sticky error (out of memory) for later entries
    std::string const msg = std::string(e.what());
    std::fprintf(stderr, "bench_linrec: FAILED %s: %s\n", key.c_str(), msg.c_str());
    g_failed[key] = msg;
    ++g_failures;
    st.SkipWithError(g_failed[key].c_str());
  }
}

enum class role { context, peer, ours };

struct entry_info {
  double bytes = 0;  // per call
  role kind = role::ours;
  std::string shape;        // peers and ours of one shape share it
  std::string name;         // the entry's name (a peer's key within its shape)
  bool is_ceiling = false;  // the copy_ceiling entry itself
  std::string scan_peer;    // recur: the InclusiveScan peer of its shape (anchors.cu's formulation)
};

// Counters of one entry whose mean time per call is `ms`: bytes, GBps,
// pct_of_copy, and for recur vs_best_peer (and vs_cub_scan); a peer's time is
// recorded for the later entries of its shape.
inline void set_counters(benchmark::State& st, entry_info const& info, double ms) {
  double const gbps = info.bytes / (ms * 1e-3) / 1e9;
  if (info.kind == role::peer) g_peer_ms[info.shape][info.name].push_back(ms);
  if (info.is_ceiling) g_copy_gbps.push_back(gbps);
  st.counters["bytes"] = info.bytes;
  st.counters["GBps"] = gbps;
  st.counters["pct_of_copy"] = 100.0 * gbps / copy_ceiling_gbps();
  if (info.kind == role::ours) {
    if (auto const best = best_peer_ms(info.shape)) st.counters["vs_best_peer"] = *best / ms;
    if (auto const it = g_peer_ms[info.shape].find(info.scan_peer);
        it != g_peer_ms[info.shape].end() && !it->second.empty())
      st.counters["vs_cub_scan"] = median(it->second) / ms;
  }
}

// host_loop_us is measured for calls of at most this GPU time (ms); the
// Python bench (bench/python_bench.py, LOOP_MAX_MS) uses the same bound.
constexpr double loop_max_ms = 2.0;

// Times one call per iteration; call(i) enqueues a call on input set i.
// before(i) is enqueued ahead of the spin kernel (untimed: e.g. evicting L2),
// after(i) runs once call(i) has finished (untimed: e.g. restoring inputs an
// in-place peer overwrote); after also follows every warm-up call.
template <class Call, class Before, class After>
void time_calls(benchmark::State& st, std::size_t sets, entry_info const& info, Call&& call, Before&& before,
                After&& after) {
  // Warm-up, on the entry's first run only (its inputs stay as they are
  // between runs): 2 calls (one input set) or 3 (on sets 0, 1, 2 modulo the
  // sets), the last one's enqueue timed for the spin.
  auto it = g_timing.find(info.name);
  bool const first_run = it == g_timing.end();
  if (first_run) {
    double enqueue_s = 0;
    for (std::size_t w = 0; w < std::min<std::size_t>(sets, 2) + 1; ++w) {
      auto const h0 = std::chrono::steady_clock::now();
      call(w % sets);
      enqueue_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - h0).count();
      check(cudaStreamSynchronize(g_stream));
      after(w % sets);
    }
    it = g_timing.emplace(info.name, entry_timing{spin_for(enqueue_s)}).first;
  }
  entry_timing& tm = it->second;

  double total_ms = 0, host_s = 0;
  i64 iters = 0;
  std::size_t next = 0;
  for (auto _ : st) {
    before(next);
    spin_kernel<><<<1, 1, 0, g_stream>>>(tm.spin_ns);
    check(cudaGetLastError());
    check(cudaEventRecord(g_start, g_stream));
    auto const h0 = std::chrono::steady_clock::now();
    call(next);
    host_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - h0).count();
    check(cudaEventRecord(g_stop, g_stream));
    check(cudaEventSynchronize(g_stop));
    float ms = 0;
    check(cudaEventElapsedTime(&ms, g_start, g_stop));
    st.SetIterationTime(double(ms) * 1e-3);
    total_ms += ms;
    ++iters;
    after(next);
    next = (next + 1) % sets;
  }
  check(cudaGetLastError());
  if (iters == 0) return;
  set_counters(st, info, total_ms / double(iters));
  // The host's time to enqueue one call (mean), against the spin ahead of it.
  st.counters["host_us"] = 1e6 * host_s / double(iters);
  st.counters["spin_us"] = 1e-3 * double(tm.spin_ns);
  if (2e9 * host_s / double(iters) > double(tm.spin_ns))
    tm.spin_ns = std::max(tm.spin_ns, spin_for(host_s / double(iters)));
  if (first_run && info.kind == role::ours && total_ms / double(iters) < loop_max_ms) {
    // And among back-to-back calls, no wait between them (a loop of calls,
    // the host's caches warm): host_loop_us, the mean of loop_calls after
    // loop_warm untimed ones; the comparand of the Python layer's figure.
    // Only for calls short enough that a loop of them stays a small part of
    // the entry's time (the host's time matters where the GPU's is short);
    // measured on the entry's first run, reported with every run.
    constexpr int loop_warm = 10, loop_calls = 50;
    for (int i = 0; i < loop_warm; ++i) call(0);
    auto const l0 = std::chrono::steady_clock::now();
    for (int i = 0; i < loop_calls; ++i) call(0);
    double const loop_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - l0).count();
    check(cudaStreamSynchronize(g_stream));
    after(0);
    tm.host_loop_us = 1e6 * loop_s / loop_calls;
  }
  if (tm.host_loop_us >= 0) st.counters["host_loop_us"] = tm.host_loop_us;
}

template <class Call>
void time_calls(benchmark::State& st, std::size_t sets, entry_info const& info, Call&& call) {
  auto const none = [](std::size_t) {};
  time_calls(st, sets, info, std::forward<Call>(call), none, none);
}

// dst = one stretch of one sequence of src (device), copied to the host.
template <class T>
std::vector<T> gather(T const* src, recur::layout const& lay, i64 k, i64 start, i64 len) {
  dbuf<T> d{std::size_t(len)};
  gather_kernel<T><<<grid_for(len), 256, 0, g_stream>>>(src, d.get(), lay, k, start, len);
  check(cudaGetLastError());
  std::vector<T> h(static_cast<std::size_t>(len));
  check(cudaMemcpyAsync(h.data(), d.get(), std::size_t(len) * sizeof(T), cudaMemcpyDeviceToHost, g_stream));
  check(cudaStreamSynchronize(g_stream));
  return h;
}

// True when some element of p[0, n) is not finite (NaN poison left unwritten).
template <class T>
bool any_nonfinite(T const* p, i64 n) {
  dbuf<int> flag(1);
  check(cudaMemsetAsync(flag.get(), 0, sizeof(int), g_stream));
  any_nonfinite_kernel<T><<<grid_for(n), 256, 0, g_stream>>>(p, n, flag.get());
  check(cudaGetLastError());
  int h_flag = 0;
  check(cudaMemcpyAsync(&h_flag, flag.get(), sizeof(int), cudaMemcpyDeviceToHost, g_stream));
  check(cudaStreamSynchronize(g_stream));
  return h_flag != 0;
}

// ---------------------------------------------------------------------------
// Registration: "family/arg:value/...", the names Google Benchmark gives an
// entry registered with Args and ArgNames (before its /manual_time suffix).

inline std::string arg_name(std::string const& family, std::vector<std::pair<char const*, i64>> const& args) {
  std::string s = family;
  for (auto const& [k, v] : args) {
    s += '/';
    s += k;
    s += ':';
    s += std::to_string(v);
  }
  return s;
}

inline benchmark::internal::Benchmark* finish(benchmark::internal::Benchmark* b) {
  return b->UseManualTime()->Unit(benchmark::kMillisecond);
}

// bench_tridiag.cu: the batched tridiagonal entries, registered after
// bench_linrec.cu's own (the device is set up first, unless only listing).
void register_tridiag();

}  // namespace recur_bench
