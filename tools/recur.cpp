// The recur command-line program. `recur demo` runs a fixed workload of
// first-order recurrences and batched tridiagonal systems through the public
// API, on the GPU when there is one and on the CPU otherwise, checks every
// result (recurrences against the sequential reference computed in double
// precision, tridiagonal solutions by their residual), and prints a table. It
// is a smoke test for an installation as much as a demonstration, so it exits
// non-zero when a check fails. `recur tridiag` solves the batched tridiagonal
// systems of .npy files; `recur filter`, `recur sosfilt` and `recur dpcm` run
// IIR filters and DPCM codecs along one axis of .npy arrays, on the CPU.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <recur/recur.hpp>
#include <recur/reference/dpcm.hpp>
#include <recur/reference/lfilter.hpp>

#if RECUR_HAS_CUDA
#include <cuda_runtime_api.h>
#endif

namespace {

constexpr int exit_ok = 0;
constexpr int exit_failed = 1;
constexpr int exit_usage = 2;

constexpr int exit_breakdown = 3;

constexpr char const* usage_text =
    "usage: recur <command> [options]\n"
    "\n"
    "commands:\n"
    "  demo [--cpu]   run the built-in workload: first-order recurrences\n"
    "                 w_i = s_i w_{i-1} + t_i (one 2^24-element f32 sequence, a batch of\n"
    "                 4096 x 4096 f32 in contiguous and interleaved layouts, one 2^24-element\n"
    "                 f64 sequence), checked against the double-precision reference, and\n"
    "                 batched tridiagonal systems (512 systems of 512 unknowns, Zhang et al.'s\n"
    "                 shape, in f32 and f64, and 2^16 systems of 64 unknowns interleaved),\n"
    "                 checked by their residual; prints time, bandwidth and error. Runs on\n"
    "                 the GPU when a CUDA device is present, on the CPU otherwise. Then an\n"
    "                 order-2 IIR filter over batches and a DPCM round trip of a 16-bit image\n"
    "                 (always on the CPU), checked against the sequential references.\n"
    "    --cpu        run on the CPU even when a CUDA device is present\n"
    "  tridiag DL D DU RHS -o X [--algorithm NAME] [--device cpu|gpu]\n"
    "                 solve the tridiagonal systems dl_i x_{i-1} + d_i x_i + du_i x_{i+1} = rhs_i\n"
    "                 stored in .npy files (float32 or float64, C order, all of one dtype): each\n"
    "                 system lies along the last axis, so DL, D and DU of shape (..., n) hold\n"
    "                 prod(...) systems of n unknowns; dl[..., 0] and du[..., n-1] are not read.\n"
    "                 RHS has their shape, or (k, ..., n) for k right-hand sides per system. X\n"
    "                 is written with RHS's shape. Systems that break down (a zero or\n"
    "                 non-finite pivot; no pivoting is done) are listed on stderr and their x is\n"
    "                 NaN.\n"
    "    -o, --output X         where to write the solution\n"
    "    --algorithm NAME       auto (default), thomas, cr, pcr, rd, cr_pcr, cr_rd, cr_packed,\n"
    "                           pscheme, thomas_pcr (the GPU runs some of them only)\n"
    "    --device cpu|gpu       default: gpu when a CUDA device is present, else cpu\n"
    "  filter --b B0,B1,... [--a A0,A1,...] IN OUT [--axis N]\n"
    "                 y = scipy.signal.lfilter(b, a, x, axis=N) on the CPU: b and a divided by\n"
    "                 a[0] (a defaults to 1, an FIR filter), zero initial state, direct form II\n"
    "                 transposed. IN is a float32 or float64 .npy array in C order (integer\n"
    "                 arrays are rejected: convert them first); the coefficients are rounded to\n"
    "                 its dtype; OUT gets IN's shape and dtype.\n"
    "    --axis N               the axis to filter along, negative counting from the end\n"
    "                           (default -1, the last)\n"
    "  sosfilt --sos SOS IN OUT [--axis N]\n"
    "                 y = scipy.signal.sosfilt(sos, x, axis=N) on the CPU: SOS is a .npy array of\n"
    "                 shape (n_sections, 6), rows [b0 b1 b2 a0 a1 a2] (float32 or float64, rounded\n"
    "                 to IN's dtype); IN and OUT as for filter.\n"
    "  dpcm encode|decode [--order K] [--coeffs C1,...,CK] [--shift S] IN OUT [--axis N]\n"
    "                 DPCM along axis N (default the last) on the CPU, with the predictor\n"
    "                 p_i = (C1 x_(i-1) + ... + CK x_(i-K)) >> S: encode writes the residuals\n"
    "                 e_i = x_i - p_i, decode rebuilds x from them; samples before the first\n"
    "                 are 0. int16, int32 and uint8 arrays are coded losslessly (residuals wrap\n"
    "                 around modulo 2^bits, so decode(encode(x)) == x exactly, and OUT has IN's\n"
    "                 dtype); float32 and float64 arrays with real coefficients (no shift), exact\n"
    "                 to rounding.\n"
    "    --order K              0 to 4: the fixed polynomial predictor of order K (1: x_(i-1);\n"
    "                           2: 2 x_(i-1) - x_(i-2); 3: 3, -3, 1; 4: 4, -6, 4, -1); default 1.\n"
    "                           With --coeffs, K must be their number\n"
    "    --coeffs C1,...,CK     the predictor's coefficients (integers for integer arrays)\n"
    "    --shift S              0 to 62 fractional bits of integer coefficients (default 0)\n"
    "\n"
    "options:\n"
    "  -h, --help     print this help\n"
    "  --version      print the version\n"
    "\n"
    "exit status: 0 success, 1 a check, a run or an input failed, 2 bad command line,\n"
    "3 (tridiag) some system broke down (x was written, NaN for those systems)\n";

// ---------------------------------------------------------------------------
// Inputs

// splitmix64: tiny, fast, and the same stream on every platform (the standard
// distributions are not specified bit for bit), so the demo's inputs are too.
struct splitmix64 {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform(double lo, double hi) {  // [lo, hi)
    return lo + (hi - lo) * static_cast<double>(next() >> 11) * 0x1p-53;
  }
};

// |s| <= s_bound < 1 keeps every sequence stable: the influence of a step on the
// ones after it decays, so values stay O(1 / (1 - s_bound)) whatever n is.
constexpr double s_bound = 0.99;
constexpr std::uint64_t seed = 42;

template <class T>
struct inputs {
  std::vector<T> s, t;
};

template <class T>
inputs<T> make_inputs(std::int64_t size, std::uint64_t stream_id) {
  inputs<T> in;
  in.s.resize(static_cast<std::size_t>(size));
  in.t.resize(static_cast<std::size_t>(size));
  splitmix64 rng{seed ^ (stream_id * 0xd1b54a32d192ed03ull)};
  for (std::int64_t i = 0; i < size; ++i) {
    in.s[i] = static_cast<T>(rng.uniform(-s_bound, s_bound));
    in.t[i] = static_cast<T>(rng.uniform(-1.0, 1.0));
  }
  return in;
}

// ---------------------------------------------------------------------------
// Checking

// Error metric. With a_i = |s_i| a_{i-1} + |t_i| (a_{-1} = 0), the forward
// error of any evaluation order of the recurrence is bounded term by term by
// (roundings on the term's path) * eps * a_i, so
//     err = max_i |w_i - w_ref_i| / max_i a_i
// is the normwise relative error on the scale the rounding actually acts on.
// It is invariant under scaling of t, needs no guard against w_ref_i ~ 0, and
// max a >= max |w_ref|, so it is never looser than a plain relative error by
// more than the cancellation in the data.
struct check_result {
  double err = 0;    // as above; +inf when some w is not finite
  double scale = 0;  // max_i a_i
};

// The reference is recur::reference::linrec_sequence in double, run chunk by
// chunk (each chunk starting from the previous chunk's last value, which is
// exactly the sequential recurrence) so the check needs no full-size double
// copy of the inputs.
template <class T>
check_result check_against_reference(T const* s, T const* t, T const* w, recur::layout const& lay) {
  constexpr std::int64_t chunk = 1 << 14;
  std::vector<double> sd(chunk), td(chunk), wd(chunk);
  double max_diff = 0, scale = 0;
  bool finite = true;
  for (std::int64_t k = 0; k < lay.count; ++k) {
    double x = 0;  // w_{-1} = init_value = 0, the API's default
    double a = 0;
    for (std::int64_t i0 = 0; i0 < lay.n; i0 += chunk) {
      std::int64_t const len = std::min(chunk, lay.n - i0);
      for (std::int64_t j = 0; j < len; ++j) {
        std::int64_t const o = lay.offset(i0 + j, k);
        sd[j] = static_cast<double>(s[o]);
        td[j] = static_cast<double>(t[o]);
      }
      x = recur::reference::linrec_sequence<double>(sd.data(), 0.0, td.data(), 0.0, wd.data(),
                                                    recur::layout::contiguous(len, 1), 0, x);
      for (std::int64_t j = 0; j < len; ++j) {
        a = std::abs(sd[j]) * a + std::abs(td[j]);
        scale = std::max(scale, a);
        double const got = static_cast<double>(w[lay.offset(i0 + j, k)]);
        if (!std::isfinite(got)) finite = false;
        max_diff = std::max(max_diff, std::abs(got - wd[j]));
      }
    }
  }
  check_result r;
  r.scale = scale;
  if (!finite)
    r.err = std::numeric_limits<double>::infinity();
  else
    r.err = scale > 0 ? max_diff / scale : max_diff;
  return r;
}

// Tolerance. Each term (prod_{k=j+1..i} s_k) t_j of w_i passes through about
// (i - j) multiply-adds plus the levels at which a parallel algorithm combines
// partial results (at most ~log2 of the element count for a tree; longer
// chains, such as a look-back across tiles, only carry terms multiplied by a
// whole tile of s's, which |s| <= 0.99 has damped to nothing). Weighted by
// prod |s_k| <= 0.99^(i-j), the lags (i - j) average at most 1 / (1 - 0.99)
// = 100, so err <= ~2 u (100 + log2 N) = eps (100 + log2 N). This is the "n"
// of the usual n*eps tolerance: the recurrence's memory, not its length. A
// factor 8 covers the constants of the first-order analysis: for f32 at N =
// 2^24 that is 8 * 1.19e-7 * 124 = 1.2e-4, for f64 2.2e-13. Typical errors are
// a few eps; a wrong element (a missed carry, an unwritten element) gives
// err ~ 1e-2 or more.
template <class T>
double tolerance(std::int64_t total_elements) {
  double const memory = 1.0 / (1.0 - s_bound);
  double const depth = std::ceil(std::log2(static_cast<double>(std::max<std::int64_t>(total_elements, 2))));
  return 8.0 * static_cast<double>(std::numeric_limits<T>::epsilon()) * (memory + depth);
}

// ---------------------------------------------------------------------------
// Running and timing

struct timing {
  double median_ms = 0;
  bool repeatable = true;  // every timed run gave the warm-up's result bit for bit
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::size_t const m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

template <class T>
bool same_bits(std::vector<T> const& a, std::vector<T> const& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// One warm-up call (its result is kept to check that the timed runs
// reproduce it bit for bit, a documented guarantee), then `runs` timed calls.
template <class T>
timing run_host(inputs<T> const& in, std::vector<T>& w, recur::layout const& lay, int runs) {
  // Poison: an element the library fails to write is NaN and fails the check.
  std::fill(w.begin(), w.end(), std::numeric_limits<T>::quiet_NaN());
  recur::linrec(recur::host{}, in.s.data(), in.t.data(), w.data(), lay);
  std::vector<T> const first = w;
  std::vector<double> ms;
  bool repeatable = true;
  for (int r = 0; r < runs; ++r) {
    auto const t0 = std::chrono::steady_clock::now();
    recur::linrec(recur::host{}, in.s.data(), in.t.data(), w.data(), lay);
    auto const t1 = std::chrono::steady_clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    repeatable = repeatable && same_bits(first, w);
  }
  return {median(ms), repeatable};
}

#if RECUR_HAS_CUDA
void cuda_check(cudaError_t e, char const* what) {
  if (e != cudaSuccess) throw std::runtime_error(fmt::format("{} failed: {}", what, cudaGetErrorString(e)));
}

template <class T>
struct device_buffer {
  T* p = nullptr;
  explicit device_buffer(std::size_t count) {
    cuda_check(cudaMalloc(reinterpret_cast<void**>(&p), count * sizeof(T)), "cudaMalloc");
  }
  ~device_buffer() { cudaFree(p); }
  device_buffer(device_buffer const&) = delete;
  device_buffer& operator=(device_buffer const&) = delete;
};

struct cuda_stream {
  cudaStream_t s = nullptr;
  cuda_stream() { cuda_check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate"); }
  ~cuda_stream() { cudaStreamDestroy(s); }
};

struct cuda_event {
  cudaEvent_t e = nullptr;
  cuda_event() { cuda_check(cudaEventCreate(&e), "cudaEventCreate"); }
  ~cuda_event() { cudaEventDestroy(e); }
};

template <class T>
timing run_cuda(inputs<T> const& in, std::vector<T>& w, recur::layout const& lay, int runs) {
  std::size_t const size = w.size(), bytes = size * sizeof(T);
  device_buffer<T> s(size), t(size), dw(size);
  cuda_stream stream;
  cuda_event start, stop;
  cuda_check(cudaMemcpy(s.p, in.s.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  cuda_check(cudaMemcpy(t.p, in.t.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  cuda_check(cudaMemset(dw.p, 0xff, bytes), "cudaMemset");  // poison: all-ones bits are a NaN
  recur::cuda const ex{stream.s};

  recur::linrec(ex, s.p, t.p, dw.p, lay);  // warm-up (module load, first-touch allocations)
  cuda_check(cudaStreamSynchronize(stream.s), "linrec (warm-up)");
  std::vector<T> first(size);
  cuda_check(cudaMemcpy(first.data(), dw.p, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");

  std::vector<double> ms;
  for (int r = 0; r < runs; ++r) {
    cuda_check(cudaEventRecord(start.e, stream.s), "cudaEventRecord");
    recur::linrec(ex, s.p, t.p, dw.p, lay);
    cuda_check(cudaEventRecord(stop.e, stream.s), "cudaEventRecord");
    cuda_check(cudaEventSynchronize(stop.e), "linrec");
    float elapsed = 0;
    cuda_check(cudaEventElapsedTime(&elapsed, start.e, stop.e), "cudaEventElapsedTime");
    ms.push_back(elapsed);
  }
  cuda_check(cudaMemcpy(w.data(), dw.p, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
  return {median(ms), same_bits(first, w)};
}
#endif

// ---------------------------------------------------------------------------
// The demo

enum class backend { host, cuda };

// Timed runs after the warm-up. Five on the CPU keep the whole CPU demo well
// under 20 s on 2 cores.
constexpr int gpu_runs = 10;
constexpr int cpu_runs = 5;

struct row {
  std::string problem;
  double ms = 0, gbps = 0, err = 0, tol = 0;
  bool repeatable = true, ok = false;
};

template <class T>
row run_problem(backend be, std::string problem, recur::layout const& lay, std::uint64_t stream_id) {
  inputs<T> const in = make_inputs<T>(lay.size(), stream_id);
  std::vector<T> w(static_cast<std::size_t>(lay.size()));
  timing tm;
#if RECUR_HAS_CUDA
  if (be == backend::cuda)
    tm = run_cuda(in, w, lay, gpu_runs);
  else
#endif
    tm = run_host(in, w, lay, cpu_runs);
  (void)be;

  row r;
  r.problem = std::move(problem);
  r.ms = tm.median_ms;
  // s and t read, w written, once each: the traffic of an ideal implementation.
  double const bytes = 3.0 * sizeof(T) * static_cast<double>(lay.size());
  r.gbps = r.ms > 0 ? bytes / (r.ms * 1e-3) / 1e9 : 0;
  r.err = check_against_reference(in.s.data(), in.t.data(), w.data(), lay).err;
  r.tol = tolerance<T>(lay.size());
  r.repeatable = tm.repeatable;
  r.ok = r.err <= r.tol && r.repeatable;
  return r;
}

// ---------------------------------------------------------------------------
// Batched tridiagonal systems (demo section)

// Diagonally dominant rows, |b| >= |a| + |c| + 1, random signs: the systems of
// Zhang et al.'s first accuracy set, which every algorithm without pivoting
// solves. a[0] and c[n-1] are NaN: the solvers never read them.
template <class T>
struct tridiag_inputs {
  std::vector<T> a, b, c, d;
};

template <class T>
tridiag_inputs<T> make_tridiag(recur::layout const& lay, std::uint64_t stream_id) {
  std::size_t const size = static_cast<std::size_t>(lay.size());
  tridiag_inputs<T> in{std::vector<T>(size), std::vector<T>(size), std::vector<T>(size),
                       std::vector<T>(size)};
  splitmix64 rng{seed ^ (stream_id * 0xd1b54a32d192ed03ull)};
  for (std::int64_t k = 0; k < lay.count; ++k)
    for (std::int64_t i = 0; i < lay.n; ++i) {
      std::size_t const o = static_cast<std::size_t>(lay.offset(i, k));
      double const a = rng.uniform(-1, 1), c = rng.uniform(-1, 1);
      double const m = std::abs(a) * (i > 0) + std::abs(c) * (i + 1 < lay.n) + 1 + rng.uniform(0, 1);
      in.a[o] = i > 0 ? static_cast<T>(a) : std::numeric_limits<T>::quiet_NaN();
      in.c[o] = i + 1 < lay.n ? static_cast<T>(c) : std::numeric_limits<T>::quiet_NaN();
      in.b[o] = static_cast<T>(rng.uniform(-1, 1) < 0 ? -m : m);
      in.d[o] = static_cast<T>(rng.uniform(-1, 1));
    }
  return in;
}

// max over the systems of ||A x - d|| / (||A|| ||x||) (infinity norms), in
// double; +inf when some x is not finite.
template <class T>
double max_relative_residual(tridiag_inputs<T> const& in, std::vector<T> const& x, recur::layout const& lay) {
  double worst = 0;
  for (std::int64_t k = 0; k < lay.count; ++k) {
    double res = 0, anorm = 0, xnorm = 0;
    for (std::int64_t i = 0; i < lay.n; ++i) {
      std::size_t const o = static_cast<std::size_t>(lay.offset(i, k));
      double const xi = static_cast<double>(x[o]);
      if (!std::isfinite(xi)) return std::numeric_limits<double>::infinity();
      double const ai = i > 0 ? static_cast<double>(in.a[o]) : 0.0;
      double const ci = i + 1 < lay.n ? static_cast<double>(in.c[o]) : 0.0;
      double acc = static_cast<double>(in.b[o]) * xi - static_cast<double>(in.d[o]);
      if (i > 0) acc += ai * static_cast<double>(x[static_cast<std::size_t>(lay.offset(i - 1, k))]);
      if (i + 1 < lay.n) acc += ci * static_cast<double>(x[static_cast<std::size_t>(lay.offset(i + 1, k))]);
      res = std::max(res, std::abs(acc));
      anorm = std::max(anorm, std::abs(ai) + std::abs(static_cast<double>(in.b[o])) + std::abs(ci));
      xnorm = std::max(xnorm, std::abs(xi));
    }
    worst = std::max(worst, res / (anorm * xnorm + std::numeric_limits<double>::min()));
  }
  return worst;
}

struct tridiag_timing {
  timing t;
  std::int64_t broke = 0;  // systems with info != 0
};

std::int64_t count_broken(std::vector<std::int32_t> const& info) {
  return std::count_if(info.begin(), info.end(), [](std::int32_t v) { return v != 0; });
}

template <class T>
tridiag_timing solve_tridiag_host(tridiag_inputs<T> const& in, std::vector<T>& x, recur::layout const& lay,
                                  int runs) {
  std::fill(x.begin(), x.end(), std::numeric_limits<T>::quiet_NaN());
  std::vector<std::int32_t> info(static_cast<std::size_t>(lay.count), -1);
  recur::tridiag_options opt;
  opt.info = info.data();
  recur::host const ex{};
  recur::solve_batched(ex, in.a.data(), in.b.data(), in.c.data(), in.d.data(), x.data(), lay, opt);
  std::vector<T> const first = x;
  std::vector<double> ms;
  bool repeatable = true;
  for (int r = 0; r < runs; ++r) {
    auto const t0 = std::chrono::steady_clock::now();
    recur::solve_batched(ex, in.a.data(), in.b.data(), in.c.data(), in.d.data(), x.data(), lay, opt);
    auto const t1 = std::chrono::steady_clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    repeatable = repeatable && same_bits(first, x);
  }
  return {{median(ms), repeatable}, count_broken(info)};
}

#if RECUR_HAS_CUDA
template <class T>
tridiag_timing solve_tridiag_cuda(tridiag_inputs<T> const& in, std::vector<T>& x, recur::layout const& lay,
                                  int runs) {
  std::size_t const size = x.size(), bytes = size * sizeof(T);
  std::size_t const count = static_cast<std::size_t>(lay.count);
  device_buffer<T> a(size), b(size), c(size), d(size), dx(size);
  device_buffer<std::int32_t> info(count);
  cuda_stream stream;
  cuda_event start, stop;
  cuda_check(cudaMemcpy(a.p, in.a.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  cuda_check(cudaMemcpy(b.p, in.b.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  cuda_check(cudaMemcpy(c.p, in.c.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  cuda_check(cudaMemcpy(d.p, in.d.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  cuda_check(cudaMemset(dx.p, 0xff, bytes), "cudaMemset");  // poison: all-ones bits are a NaN
  cuda_check(cudaMemset(info.p, 0xff, count * sizeof(std::int32_t)), "cudaMemset");
  cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  recur::cuda const ex{stream.s};
  recur::tridiag_options opt;
  opt.info = info.p;

  recur::solve_batched(ex, a.p, b.p, c.p, d.p, dx.p, lay, opt);  // warm-up
  cuda_check(cudaStreamSynchronize(stream.s), "solve_batched (warm-up)");
  std::vector<T> first(size);
  cuda_check(cudaMemcpy(first.data(), dx.p, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");

  std::vector<double> ms;
  for (int r = 0; r < runs; ++r) {
    cuda_check(cudaEventRecord(start.e, stream.s), "cudaEventRecord");
    recur::solve_batched(ex, a.p, b.p, c.p, d.p, dx.p, lay, opt);
    cuda_check(cudaEventRecord(stop.e, stream.s), "cudaEventRecord");
    cuda_check(cudaEventSynchronize(stop.e), "solve_batched");
    float elapsed = 0;
    cuda_check(cudaEventElapsedTime(&elapsed, start.e, stop.e), "cudaEventElapsedTime");
    ms.push_back(elapsed);
  }
  cuda_check(cudaMemcpy(x.data(), dx.p, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
  std::vector<std::int32_t> host_info(count);
  cuda_check(cudaMemcpy(host_info.data(), info.p, count * sizeof(std::int32_t), cudaMemcpyDeviceToHost),
             "cudaMemcpy");
  return {{median(ms), same_bits(first, x)}, count_broken(host_info)};
}
#endif

struct tridiag_row {
  std::string problem, algorithm, failure;
  double ms = 0, gbps = 0, res = 0, tol = 0;
  std::int64_t broke = 0;
  bool repeatable = true, ok = false;
};

template <class T>
tridiag_row run_tridiag(backend be, std::string problem, recur::layout const& lay, std::uint64_t stream_id) {
  tridiag_row r;
  r.problem = std::move(problem);
  tridiag_inputs<T> const in = make_tridiag<T>(lay, stream_id);
  std::vector<T> x(static_cast<std::size_t>(lay.size()));
  // The relative residual of a backward stable solver is a few eps; the
  // tests allow 4 n eps (test/tridiag_harness.hpp), and so does the demo.
  r.tol = 4.0 * static_cast<double>(lay.n) * static_cast<double>(std::numeric_limits<T>::epsilon());
  try {
    tridiag_timing tm;
#if RECUR_HAS_CUDA
    if (be == backend::cuda) {
      r.algorithm = recur::to_string(recur::resolve_tridiag_algorithm<T>(recur::cuda{}, lay));
      tm = solve_tridiag_cuda(in, x, lay, gpu_runs);
    } else
#endif
    {
      r.algorithm = recur::to_string(recur::resolve_tridiag_algorithm<T>(recur::host{}, lay));
      tm = solve_tridiag_host(in, x, lay, cpu_runs);
    }
    (void)be;
    r.ms = tm.t.median_ms;
    r.repeatable = tm.t.repeatable;
    r.broke = tm.broke;
  } catch (recur::error const& e) {
    r.failure = e.what();
    return r;
  }
  // a, b, c, d read and x written once each.
  double const bytes = 5.0 * sizeof(T) * static_cast<double>(lay.size());
  r.gbps = r.ms > 0 ? bytes / (r.ms * 1e-3) / 1e9 : 0;
  r.res = max_relative_residual(in, x, lay);
  r.ok = r.res <= r.tol && r.repeatable && r.broke == 0;
  return r;
}

// Runs the tridiagonal section and prints its table; false when a check failed.
bool tridiag_demo(backend be, std::string const& backend_name) {
  std::vector<tridiag_row> rows;
  auto report = [&](tridiag_row r) {
    fmt::print("  {:<36} done\n", r.problem);
    std::fflush(stdout);
    rows.push_back(std::move(r));
  };
  constexpr std::int64_t zhang = 512, lanes = std::int64_t{1} << 16;
  report(run_tridiag<float>(be, "f32  512 x 512 contiguous", recur::layout::contiguous(zhang, zhang), 11));
  report(run_tridiag<double>(be, "f64  512 x 512 contiguous", recur::layout::contiguous(zhang, zhang), 12));
  report(run_tridiag<float>(be, "f32  64 x 2^16 interleaved", recur::layout::interleaved(64, lanes), 13));
  report(run_tridiag<double>(be, "f64  64 x 2^16 interleaved", recur::layout::interleaved(64, lanes), 14));

  fmt::print("\n{:<8} {:<30} {:<10} {:>10} {:>9} {:>12} {:>10} {:>10} {:>6}\n", "backend", "problem",
             "algorithm", "time (ms)", "GB/s", "max rel res", "tolerance", "repeatable", "check");
  bool all_ok = true;
  for (tridiag_row const& r : rows) {
    if (!r.failure.empty()) {
      fmt::print("{:<8} {:<30} {:<10} FAILED: {}\n", backend_name, r.problem, r.algorithm, r.failure);
      all_ok = false;
      continue;
    }
    fmt::print("{:<8} {:<30} {:<10} {:>10.3f} {:>9.2f} {:>12.3e} {:>10.1e} {:>10} {:>6}\n", backend_name,
               r.problem, r.algorithm, r.ms, r.gbps, r.res, r.tol, r.repeatable ? "yes" : "NO",
               r.ok ? "ok" : "FAIL");
    if (r.broke) fmt::print("         {} systems reported breakdown (info != 0)\n", r.broke);
    all_ok = all_ok && r.ok;
  }
  fmt::print(
      "\nn x count: count systems of n unknowns, diagonally dominant, random (seed {}). algorithm: what\n"
      "`auto` resolves to. GB/s: 5 words per unknown (a, b, c, d read, x written). max rel res: the\n"
      "largest ||A x - d|| / (||A|| ||x||) over the systems (infinity norms, in double); tolerance\n"
      "4 n eps.\n",
      seed);
  return all_ok;
}

// ---------------------------------------------------------------------------
// IIR filter and DPCM (demo section; on the CPU: the CUDA executor is not
// wired for these yet)

struct filter_row {
  std::string problem, check;
  double ms = 0, gbps = 0;
  bool repeatable = true, ok = false;
};

// Median of `runs` timed calls after a warm-up, each result compared with
// the warm-up's bit for bit. `call` writes `out`.
template <class T, class F>
timing time_host(std::vector<T>& out, int runs, F&& call) {
  call();
  std::vector<T> const first = out;
  std::vector<double> ms;
  bool repeatable = true;
  for (int r = 0; r < runs; ++r) {
    auto const t0 = std::chrono::steady_clock::now();
    call();
    auto const t1 = std::chrono::steady_clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    repeatable = repeatable && same_bits(first, out);
  }
  return {median(ms), repeatable};
}

// An order-2 low-pass (a Butterworth-like pair of poles at radius 0.9) over
// a batch of f32 sequences; the check: the sequential reference's bits.
filter_row run_lfilter_demo(std::string problem, recur::layout const& lay, std::uint64_t stream_id) {
  std::vector<float> const b = {0.0675f, 0.135f, 0.0675f}, a = {1.0f, -1.1430f, 0.4128f};
  std::vector<float> x(static_cast<std::size_t>(lay.size())),
      y(x.size(), std::numeric_limits<float>::quiet_NaN());
  splitmix64 rng{seed ^ (stream_id * 0xd1b54a32d192ed03ull)};
  for (auto& v : x) v = static_cast<float>(rng.uniform(-1, 1));
  filter_row r;
  r.problem = std::move(problem);
  timing const tm =
      time_host(y, cpu_runs, [&] { recur::lfilter(recur::host{}, b, a, x.data(), y.data(), lay); });
  r.ms = tm.median_ms;
  r.repeatable = tm.repeatable;
  r.gbps = r.ms > 0 ? 8.0 * static_cast<double>(lay.size()) / (r.ms * 1e-3) / 1e9 : 0;  // x read, y written
  std::vector<float> want(x.size());
  recur::reference::lfilter<float>(b, a, x.data(), want.data(), lay, nullptr, nullptr);
  bool const same = same_bits(y, want);
  r.check = same ? "== reference::lfilter, bitwise" : "DIFFERS from reference::lfilter";
  r.ok = same && r.repeatable;
  return r;
}

// A 16-bit image (rows as lanes): a smooth field plus noise, coded with the
// gradient predictor 2 x_(i-1) - x_(i-2). Encode is checked against the
// reference's bits, decode by the round trip (exactly the image).
std::vector<filter_row> run_dpcm_demo(std::int64_t width, std::int64_t height, std::uint64_t stream_id) {
  recur::layout const lay = recur::layout::contiguous(width, height);
  std::vector<std::int16_t> img(static_cast<std::size_t>(lay.size()));
  splitmix64 rng{seed ^ (stream_id * 0xd1b54a32d192ed03ull)};
  for (std::int64_t yy = 0; yy < height; ++yy)
    for (std::int64_t xx = 0; xx < width; ++xx) {
      double const v =
          8000.0 * std::sin(0.003 * static_cast<double>(xx)) * std::cos(0.002 * static_cast<double>(yy)) +
          rng.uniform(-20, 20);
      img[static_cast<std::size_t>(yy * width + xx)] = static_cast<std::int16_t>(v);
    }
  std::vector<std::int64_t> const c = {2, -1};
  std::vector<std::int16_t> e(img.size(), -1), back(img.size(), -1);
  std::string const shape = fmt::format("{} x {} rows", width, height);
  double const bytes = 4.0 * static_cast<double>(lay.size());  // 2 B read, 2 B written per sample

  filter_row enc;
  enc.problem = "i16  DPCM encode order 2, " + shape;
  timing const te =
      time_host(e, cpu_runs, [&] { recur::dpcm_encode(recur::host{}, c, 0, img.data(), e.data(), lay); });
  std::vector<std::int16_t> want(img.size());
  recur::reference::dpcm_encode<std::int16_t>(c, 0, img.data(), want.data(), lay);
  bool const same = same_bits(e, want);
  enc.ms = te.median_ms;
  enc.repeatable = te.repeatable;
  enc.gbps = enc.ms > 0 ? bytes / (enc.ms * 1e-3) / 1e9 : 0;
  enc.check = same ? "== reference::dpcm_encode, bitwise" : "DIFFERS from reference::dpcm_encode";
  enc.ok = same && enc.repeatable;

  filter_row dec;
  dec.problem = "i16  DPCM decode order 2, " + shape;
  timing const td =
      time_host(back, cpu_runs, [&] { recur::dpcm_decode(recur::host{}, c, 0, e.data(), back.data(), lay); });
  bool const exact = back == img;
  dec.ms = td.median_ms;
  dec.repeatable = td.repeatable;
  dec.gbps = dec.ms > 0 ? bytes / (dec.ms * 1e-3) / 1e9 : 0;
  dec.check = exact ? "decode(encode(x)) == x, exact" : "ROUND TRIP NOT EXACT";
  dec.ok = exact && dec.repeatable;
  return {enc, dec};
}

// Runs the filter and DPCM section and prints its table; false when a check failed.
bool filter_demo() {
  std::vector<filter_row> rows;
  auto report = [&](filter_row r) {
    fmt::print("  {:<46} done\n", r.problem);
    std::fflush(stdout);
    rows.push_back(std::move(r));
  };
  report(run_lfilter_demo("f32  lfilter order 2, 1024 x 2^14 contiguous",
                          recur::layout::contiguous(std::int64_t{1} << 14, 1024), 21));
  report(run_lfilter_demo("f32  lfilter order 2, 2^14 x 1024 interleaved",
                          recur::layout::interleaved(std::int64_t{1} << 14, 1024), 22));
  for (auto& r : run_dpcm_demo(2048, 2048, 23)) report(std::move(r));

  fmt::print("\n{:<8} {:<46} {:>10} {:>9} {:<36} {:>10} {:>6}\n", "backend", "problem", "time (ms)", "GB/s",
             "check against", "repeatable", "check");
  bool all_ok = true;
  for (filter_row const& r : rows) {
    fmt::print("{:<8} {:<46} {:>10.3f} {:>9.2f} {:<36} {:>10} {:>6}\n", "host", r.problem, r.ms, r.gbps,
               r.check, r.repeatable ? "yes" : "NO", r.ok ? "ok" : "FAIL");
    all_ok = all_ok && r.ok;
  }
  fmt::print(
      "\nn x count: count sequences of n samples (inputs U[-1, 1], seed {}). lfilter: b = [0.0675 0.135\n"
      "0.0675], a = [1 -1.143 0.4128]. GB/s: 8 B per f32 sample (x read, y written), 4 B per int16\n"
      "sample. Each sequence runs sequentially on one thread, with the reference's arithmetic, so\n"
      "the results equal the references bit for bit.\n",
      seed);
  return all_ok;
}

int demo(bool force_cpu) {
  int const devices = recur::cuda_device_count();
  backend const be = (!force_cpu && devices > 0) ? backend::cuda : backend::host;
  std::string const backend_name = be == backend::cuda ? "cuda" : "host";

  fmt::print("recur {} demo: w_i = s_i w_(i-1) + t_i, w_(-1) = 0, s ~ U[-{}, {}], t ~ U[-1, 1], seed {}\n",
             RECUR_VERSION_STRING, s_bound, s_bound, seed);
  if (be == backend::cuda) {
    fmt::print("backend: cuda, {}\n", recur::cuda_device_description());
  } else {
    std::string why;
    if (force_cpu)
      why = "--cpu given";
    else if (!recur::cuda_compiled())
      why = "this build has no CUDA backend";
    else
      why = recur::cuda_device_description();  // says why there is no device
    fmt::print("backend: host, {} hardware threads (running on the CPU: {})\n",
               std::max(1u, std::thread::hardware_concurrency()), why);
  }
  std::fflush(stdout);

  constexpr std::int64_t big = std::int64_t{1} << 24;
  constexpr std::int64_t batch = 4096;
  std::vector<row> rows;
  auto report = [&](row r) {
    fmt::print("  {:<36} done\n", r.problem);
    std::fflush(stdout);
    rows.push_back(std::move(r));
  };
  report(run_problem<float>(be, "f32  1 x 2^24", recur::layout::contiguous(big, 1), 1));
  report(run_problem<float>(be, "f32  4096 x 4096 contiguous", recur::layout::contiguous(batch, batch), 2));
  report(run_problem<float>(be, "f32  4096 x 4096 interleaved", recur::layout::interleaved(batch, batch), 3));
  report(run_problem<double>(be, "f64  1 x 2^24", recur::layout::contiguous(big, 1), 4));

  fmt::print("\n{:<8} {:<30} {:>10} {:>9} {:>12} {:>10} {:>10} {:>6}\n", "backend", "problem", "time (ms)",
             "GB/s", "max rel err", "tolerance", "repeatable", "check");
  bool all_ok = true;
  for (row const& r : rows) {
    fmt::print("{:<8} {:<30} {:>10.3f} {:>9.2f} {:>12.3e} {:>10.1e} {:>10} {:>6}\n", backend_name, r.problem,
               r.ms, r.gbps, r.err, r.tol, r.repeatable ? "yes" : "NO", r.ok ? "ok" : "FAIL");
    all_ok = all_ok && r.ok;
  }
  fmt::print(
      "\ntime: median of {} runs after a warm-up ({}). GB/s: 12 B per f32 element, 24 B per f64 element\n"
      "(s and t read, w written once). max rel err: max |w - w_ref| / max a, a_i = |s_i| a_(i-1) + |t_i|,\n"
      "w_ref the sequential reference in double. repeatable: every run matched the first bit for bit.\n",
      be == backend::cuda ? gpu_runs : cpu_runs, be == backend::cuda ? "CUDA events" : "std::chrono");

  fmt::print(
      "\nbatched tridiagonal systems a_i x_(i-1) + b_i x_i + c_i x_(i+1) = d_i, recur::solve_batched\n");
  std::fflush(stdout);
  all_ok = tridiag_demo(be, backend_name) && all_ok;

  fmt::print(
      "\nIIR filter and DPCM: recur::lfilter, recur::dpcm_encode, recur::dpcm_decode (on the CPU, with the\n"
      "references' arithmetic; the library also runs lfilter, sosfilt and floating-point DPCM on recur::cuda)\n");
  std::fflush(stdout);
  all_ok = filter_demo() && all_ok;
  if (!all_ok) {
    fmt::print(stderr,
               "recur demo: FAILED: a result is outside its tolerance, not repeatable, or a run failed\n");
    return exit_failed;
  }
  fmt::print("all checks passed\n");
  return exit_ok;
}

int usage_error(std::string const& msg) {
  fmt::print(stderr, "recur: {}\nTry 'recur --help'.\n", msg);
  return exit_usage;
}

// ---------------------------------------------------------------------------
// recur tridiag: systems from .npy files

std::string shape_string(std::vector<std::int64_t> const& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += fmt::format("{}{}", i ? ", " : "", shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

// An input problem: what the files hold, not how the command line was typed.
struct input_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Solves on the chosen executor; x and info are host vectors of the right size.
template <class T>
void solve_arrays(bool gpu, T const* a, T const* b, T const* c, T const* d, T* x, std::int32_t* info,
                  recur::layout const& lay, recur::tridiag_options opt) {
  std::size_t const size = static_cast<std::size_t>(lay.size());
  std::size_t const rhs_size = size * static_cast<std::size_t>(opt.nrhs);
  std::size_t const count = static_cast<std::size_t>(lay.count);
  if (!gpu) {
    opt.info = info;
    recur::solve_batched(recur::host{}, a, b, c, d, x, lay, opt);
    return;
  }
#if RECUR_HAS_CUDA
  device_buffer<T> da(std::max<std::size_t>(size, 1)), db(std::max<std::size_t>(size, 1)),
      dc(std::max<std::size_t>(size, 1)), dd(std::max<std::size_t>(rhs_size, 1)),
      dx(std::max<std::size_t>(rhs_size, 1));
  device_buffer<std::int32_t> di(std::max<std::size_t>(count, 1));
  cuda_check(cudaMemcpy(da.p, a, size * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  cuda_check(cudaMemcpy(db.p, b, size * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  cuda_check(cudaMemcpy(dc.p, c, size * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  cuda_check(cudaMemcpy(dd.p, d, rhs_size * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  cuda_stream stream;
  opt.info = di.p;
  recur::solve_batched(recur::cuda{stream.s}, da.p, db.p, dc.p, dd.p, dx.p, lay, opt);
  cuda_check(cudaStreamSynchronize(stream.s), "solve_batched");
  cuda_check(cudaMemcpy(x, dx.p, rhs_size * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
  cuda_check(cudaMemcpy(info, di.p, count * sizeof(std::int32_t), cudaMemcpyDeviceToHost), "cudaMemcpy");
#else
  (void)a, (void)b, (void)c, (void)d, (void)x, (void)info, (void)rhs_size, (void)count;
  throw recur::not_compiled("this build of recur has no CUDA backend (use --device cpu)");
#endif
}

template <class T>
recur::npy_array solve_npy(bool gpu, recur::npy_array const& dl, recur::npy_array const& dg,
                           recur::npy_array const& du, recur::npy_array const& rhs, recur::layout const& lay,
                           recur::tridiag_options const& opt, std::vector<std::int32_t>& info) {
  std::vector<T> x(static_cast<std::size_t>(rhs.size()));
  info.assign(static_cast<std::size_t>(lay.count), 0);
  solve_arrays<T>(gpu, dl.as<T>().data(), dg.as<T>().data(), du.as<T>().data(), rhs.as<T>().data(), x.data(),
                  info.data(), lay, opt);
  return recur::make_npy<T>(rhs.shape, std::span<T const>(x));
}

int tridiag_command(int argc, char** argv) {
  std::vector<std::string> files;
  std::string output, algorithm_name = "auto", device;
  for (int i = 2; i < argc; ++i) {
    std::string_view const a = argv[i];
    auto value = [&](std::string& into) {
      if (i + 1 >= argc) return false;
      into = argv[++i];
      return true;
    };
    if (a == "-h" || a == "--help") {
      fmt::print("{}", usage_text);
      return exit_ok;
    } else if (a == "-o" || a == "--output") {
      if (!value(output)) return usage_error(fmt::format("{} needs a file name", a));
    } else if (a == "--algorithm") {
      if (!value(algorithm_name)) return usage_error("--algorithm needs a name");
    } else if (a == "--device") {
      if (!value(device)) return usage_error("--device needs cpu or gpu");
    } else if (!a.empty() && a[0] == '-' && a != "-") {
      return usage_error(fmt::format("unknown option '{}' for tridiag", a));
    } else {
      files.emplace_back(a);
    }
  }
  if (files.size() != 4)
    return usage_error(fmt::format("tridiag takes four arrays, DL D DU RHS ({} given)", files.size()));
  if (output.empty()) return usage_error("tridiag needs -o X (where to write the solution)");
  auto const alg = recur::parse_tridiag_algorithm(algorithm_name);
  if (!alg) return usage_error(fmt::format("unknown algorithm '{}'", algorithm_name));
  bool gpu = false;
  if (device.empty())
    gpu = recur::cuda_device_count() > 0;
  else if (device == "gpu")
    gpu = true;
  else if (device != "cpu")
    return usage_error(fmt::format("--device must be cpu or gpu, not '{}'", device));
  if (gpu && recur::cuda_device_count() == 0)
    throw input_error(fmt::format("--device gpu: {}", recur::cuda_device_description()));

  recur::npy_array const dl = recur::read_npy(files[0]), dg = recur::read_npy(files[1]),
                         du = recur::read_npy(files[2]), rhs = recur::read_npy(files[3]);
  char const* const names[] = {"DL", "D", "DU", "RHS"};
  recur::npy_array const* const arrays[] = {&dl, &dg, &du, &rhs};
  for (int j = 0; j < 4; ++j) {
    auto const& arr = *arrays[j];
    if (arr.dtype != recur::npy_dtype::f32 && arr.dtype != recur::npy_dtype::f64)
      throw input_error(fmt::format("{} ({}) holds {}; float32 or float64 is needed", names[j], files[j],
                                    recur::npy_dtype_name(arr.dtype)));
    if (arr.dtype != dg.dtype)
      throw input_error(fmt::format("{} ({}) holds {} but D holds {}; all four must have one dtype", names[j],
                                    files[j], recur::npy_dtype_name(arr.dtype),
                                    recur::npy_dtype_name(dg.dtype)));
    if (arr.shape.empty())
      throw input_error(
          fmt::format("{} ({}) is a scalar; the systems lie along the last axis", names[j], files[j]));
  }
  for (int j : {0, 2})
    if (arrays[j]->shape != dg.shape)
      throw input_error(fmt::format("{} has shape {} but D has {}; the diagonals must have one shape",
                                    names[j], shape_string(arrays[j]->shape), shape_string(dg.shape)));
  std::int64_t nrhs = 1;
  if (rhs.shape != dg.shape) {
    bool const stacked = rhs.shape.size() == dg.shape.size() + 1 &&
                         std::equal(dg.shape.begin(), dg.shape.end(), rhs.shape.begin() + 1);
    if (!stacked)
      throw input_error(fmt::format("RHS has shape {}; with diagonals of shape {} it must be {} or (k, {}",
                                    shape_string(rhs.shape), shape_string(dg.shape), shape_string(dg.shape),
                                    shape_string(dg.shape).substr(1)));
    nrhs = rhs.shape[0];
  }
  std::int64_t const n = dg.shape.back();
  std::int64_t count = 1;
  for (std::size_t i = 0; i + 1 < dg.shape.size(); ++i) count *= dg.shape[i];
  recur::layout const lay = recur::layout::contiguous(n, count);
  recur::tridiag_options opt;
  opt.nrhs = nrhs;
  opt.algorithm = *alg;

  std::vector<std::int32_t> info;
  recur::npy_array const x = dg.dtype == recur::npy_dtype::f32
                                 ? solve_npy<float>(gpu, dl, dg, du, rhs, lay, opt, info)
                                 : solve_npy<double>(gpu, dl, dg, du, rhs, lay, opt, info);
  recur::write_npy(output, x);

  std::int64_t broke = 0;
  for (std::int64_t k = 0; k < count; ++k) {
    std::int32_t const row = info[static_cast<std::size_t>(k)];
    if (row == 0) continue;
    if (++broke <= 20) {
      // The system's index over the leading axes.
      std::vector<std::int64_t> idx(dg.shape.size() - 1);
      std::int64_t rest = k;
      for (std::size_t i = idx.size(); i-- > 0;) {
        idx[i] = rest % dg.shape[i];
        rest /= dg.shape[i];
      }
      std::string where;
      for (std::size_t i = 0; i < idx.size(); ++i) where += fmt::format("{}{}", i ? ", " : "", idx[i]);
      fmt::print(stderr,
                 "recur tridiag: system [{}] broke down at index {} of the last axis (info {}: a zero or "
                 "non-finite pivot); its x is NaN\n",
                 where, row - 1, row);
    }
  }
  if (broke > 20) fmt::print(stderr, "recur tridiag: ... and {} more systems\n", broke - 20);
  if (broke) {
    fmt::print(stderr, "recur tridiag: {} of {} systems broke down ({} on the {}); wrote {}\n", broke, count,
               recur::to_string(*alg), gpu ? "gpu" : "cpu", output);
    return exit_breakdown;
  }
  return exit_ok;
}

// ---------------------------------------------------------------------------
// recur filter, recur sosfilt, recur dpcm: along one axis of .npy arrays, on
// the CPU (the command line does not use the CUDA executor for these yet)

// The command being run, for messages about its inputs.
std::string_view command_name = "tridiag";

// "1,-0.5,2e-3" -> doubles; false when an item is empty or not a number.
bool parse_reals(std::string_view text, std::vector<double>& out) {
  out.clear();
  std::size_t start = 0;
  while (true) {
    std::size_t const comma = text.find(',', start);
    std::string const item(text.substr(start, comma == std::string_view::npos ? text.npos : comma - start));
    if (item.empty()) return false;
    char* end = nullptr;
    double const v = std::strtod(item.c_str(), &end);
    if (end != item.c_str() + item.size()) return false;
    out.push_back(v);
    if (comma == std::string_view::npos) return true;
    start = comma + 1;
  }
}

// A whole number in base 10 (strtoll's syntax), within int64.
bool parse_integer(std::string_view text, std::int64_t& v) {
  std::string const item(text);
  if (item.empty()) return false;
  char* end = nullptr;
  errno = 0;
  long long const r = std::strtoll(item.c_str(), &end, 10);
  if (end != item.c_str() + item.size() || errno == ERANGE) return false;
  v = r;
  return true;
}

// The array seen as `outer` blocks of `n` x `inner` elements (C order): axis
// `axis` of length n, the axes before it flattened into outer, the axes after
// it into inner.
struct axis_view {
  std::int64_t outer = 1, n = 1, inner = 1;
};

axis_view view_along(std::vector<std::int64_t> const& shape, std::int64_t axis, std::string const& file) {
  std::int64_t const dims = static_cast<std::int64_t>(shape.size());
  if (dims == 0) throw input_error(fmt::format("{} is a scalar; it needs an axis to run along", file));
  if (axis < -dims || axis >= dims)
    throw input_error(fmt::format("--axis {} is out of range for {} of shape {} ({} axes)", axis, file,
                                  shape_string(shape), dims));
  std::size_t const a = static_cast<std::size_t>(axis < 0 ? axis + dims : axis);
  axis_view v;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i < a) v.outer *= shape[i];
    if (i > a) v.inner *= shape[i];
  }
  v.n = shape[a];
  return v;
}

// Calls f(offset, layout) for every block of sequences along the axis: one
// call for the last axis (contiguous sequences) or the first (interleaved),
// one per outer index otherwise.
template <class F>
void for_each_block(axis_view const& v, F&& f) {
  if (v.inner == 1) {
    f(std::int64_t{0}, recur::layout::contiguous(v.n, v.outer));
    return;
  }
  for (std::int64_t o = 0; o < v.outer; ++o) f(o * v.n * v.inner, recur::layout::interleaved(v.n, v.inner));
}

bool is_float_dtype(recur::npy_dtype t) { return t == recur::npy_dtype::f32 || t == recur::npy_dtype::f64; }

// What the filter commands share: IN OUT and --axis, plus their own options
// (name -> where its value goes).
struct array_command {
  std::vector<std::string> files;
  std::string axis_text = "-1";
  std::int64_t axis = -1;
};

// Parses argv[first..] into cmd and the named options; returns -1 on success,
// else the exit status (usage printed).
int parse_array_command(int argc, char** argv, int first, std::string_view name, array_command& cmd,
                        std::initializer_list<std::pair<std::string_view, std::string*>> options) {
  for (int i = first; i < argc; ++i) {
    std::string_view const a = argv[i];
    if (a == "-h" || a == "--help") {
      fmt::print("{}", usage_text);
      return exit_ok;
    }
    std::string* into = nullptr;
    if (a == "--axis") into = &cmd.axis_text;
    for (auto const& [opt, where] : options)
      if (a == opt) into = where;
    if (into) {
      if (i + 1 >= argc) return usage_error(fmt::format("{} needs a value", a));
      *into = argv[++i];
    } else if (!a.empty() && a[0] == '-' && a != "-") {
      return usage_error(fmt::format("unknown option '{}' for {}", a, name));
    } else {
      cmd.files.emplace_back(a);
    }
  }
  if (cmd.files.size() != 2)
    return usage_error(fmt::format("{} takes two files, IN and OUT ({} given)", name, cmd.files.size()));
  if (!parse_integer(cmd.axis_text, cmd.axis))
    return usage_error(fmt::format("--axis needs an integer, not '{}'", cmd.axis_text));
  return -1;
}

template <class T>
recur::npy_array filter_npy(recur::npy_array const& in, axis_view const& v, std::vector<double> const& bd,
                            std::vector<double> const& ad) {
  std::vector<T> const b(bd.begin(), bd.end()), a(ad.begin(), ad.end());
  std::span<T const> const x = in.as<T>();
  std::vector<T> y(x.size());
  for_each_block(v, [&](std::int64_t off, recur::layout const& lay) {
    recur::lfilter(recur::host{}, b, a, x.data() + off, y.data() + off, lay);
  });
  return recur::make_npy<T>(in.shape, std::span<T const>(y));
}

recur::npy_array read_float_input(std::string const& file, std::string_view cmd) {
  recur::npy_array in = recur::read_npy(file);
  if (!is_float_dtype(in.dtype))
    throw input_error(
        fmt::format("{} holds {}; recur {} filters float32 or float64 arrays (convert it first, "
                    "e.g. with numpy's x.astype(np.float32))",
                    file, recur::npy_dtype_name(in.dtype), cmd));
  return in;
}

int filter_command(int argc, char** argv) {
  command_name = "filter";
  array_command cmd;
  std::string b_text, a_text = "1";
  if (int const rc = parse_array_command(argc, argv, 2, "filter", cmd, {{"--b", &b_text}, {"--a", &a_text}});
      rc >= 0)
    return rc;
  if (b_text.empty()) return usage_error("filter needs --b B0,B1,... (the numerator coefficients)");
  std::vector<double> b, a;
  if (!parse_reals(b_text, b))
    return usage_error(fmt::format("--b needs numbers separated by commas, not '{}'", b_text));
  if (!parse_reals(a_text, a))
    return usage_error(fmt::format("--a needs numbers separated by commas, not '{}'", a_text));
  recur::npy_array const in = read_float_input(cmd.files[0], "filter");
  axis_view const v = view_along(in.shape, cmd.axis, cmd.files[0]);
  recur::write_npy(cmd.files[1], in.dtype == recur::npy_dtype::f32 ? filter_npy<float>(in, v, b, a)
                                                                   : filter_npy<double>(in, v, b, a));
  return exit_ok;
}

template <class T>
recur::npy_array sosfilt_npy(recur::npy_array const& in, axis_view const& v,
                             std::vector<double> const& sosd) {
  std::vector<T> const sos(sosd.begin(), sosd.end());
  std::span<T const> const x = in.as<T>();
  std::vector<T> y(x.size());
  for_each_block(v, [&](std::int64_t off, recur::layout const& lay) {
    recur::sosfilt(recur::host{}, sos, x.data() + off, y.data() + off, lay);
  });
  return recur::make_npy<T>(in.shape, std::span<T const>(y));
}

int sosfilt_command(int argc, char** argv) {
  command_name = "sosfilt";
  array_command cmd;
  std::string sos_file;
  if (int const rc = parse_array_command(argc, argv, 2, "sosfilt", cmd, {{"--sos", &sos_file}}); rc >= 0)
    return rc;
  if (sos_file.empty()) return usage_error("sosfilt needs --sos SOS (a .npy array of shape (n_sections, 6))");
  recur::npy_array const sos = recur::read_npy(sos_file);
  if (!is_float_dtype(sos.dtype))
    throw input_error(fmt::format("--sos {} holds {}; float32 or float64 is needed", sos_file,
                                  recur::npy_dtype_name(sos.dtype)));
  if (sos.shape.size() != 2 || sos.shape[1] != 6 || sos.shape[0] < 1)
    throw input_error(fmt::format("--sos {} has shape {}; (n_sections, 6) with n_sections >= 1 is needed",
                                  sos_file, shape_string(sos.shape)));
  std::vector<double> sosd;
  if (sos.dtype == recur::npy_dtype::f32)
    for (float const v : sos.as<float>()) sosd.push_back(v);
  else
    for (double const v : sos.as<double>()) sosd.push_back(v);
  recur::npy_array const in = read_float_input(cmd.files[0], "sosfilt");
  axis_view const v = view_along(in.shape, cmd.axis, cmd.files[0]);
  recur::write_npy(cmd.files[1], in.dtype == recur::npy_dtype::f32 ? sosfilt_npy<float>(in, v, sosd)
                                                                   : sosfilt_npy<double>(in, v, sosd));
  return exit_ok;
}

template <class S>
recur::npy_array dpcm_int_npy(bool encode, recur::npy_array const& in, axis_view const& v,
                              std::vector<std::int64_t> const& c, int shift) {
  std::span<S const> const x = in.as<S>();
  std::vector<S> y(x.size());
  for_each_block(v, [&](std::int64_t off, recur::layout const& lay) {
    if (encode)
      recur::dpcm_encode(recur::host{}, c, shift, x.data() + off, y.data() + off, lay);
    else
      recur::dpcm_decode(recur::host{}, c, shift, x.data() + off, y.data() + off, lay);
  });
  return recur::make_npy<S>(in.shape, std::span<S const>(y));
}

template <class T>
recur::npy_array dpcm_float_npy(bool encode, recur::npy_array const& in, axis_view const& v,
                                std::vector<double> const& cd) {
  std::vector<T> const c(cd.begin(), cd.end());
  std::span<T const> const x = in.as<T>();
  std::vector<T> y(x.size());
  for_each_block(v, [&](std::int64_t off, recur::layout const& lay) {
    if (encode)
      recur::dpcm_encode(recur::host{}, c, x.data() + off, y.data() + off, lay);
    else
      recur::dpcm_decode(recur::host{}, c, x.data() + off, y.data() + off, lay);
  });
  return recur::make_npy<T>(in.shape, std::span<T const>(y));
}

int dpcm_command(int argc, char** argv) {
  command_name = "dpcm";
  if (argc < 3) return usage_error("dpcm needs encode or decode");
  std::string_view const mode = argv[2];
  if (mode == "-h" || mode == "--help") {
    fmt::print("{}", usage_text);
    return exit_ok;
  }
  if (mode != "encode" && mode != "decode")
    return usage_error(fmt::format("dpcm needs encode or decode, not '{}'", mode));
  bool const encode = mode == "encode";
  array_command cmd;
  std::string order_text, coeffs_text, shift_text = "0";
  if (int const rc = parse_array_command(
          argc, argv, 3, "dpcm", cmd,
          {{"--order", &order_text}, {"--coeffs", &coeffs_text}, {"--shift", &shift_text}});
      rc >= 0)
    return rc;
  std::int64_t order = 1, shift = 0;
  if (!order_text.empty() && !parse_integer(order_text, order))
    return usage_error(fmt::format("--order needs an integer, not '{}'", order_text));
  if (!parse_integer(shift_text, shift) || shift < 0 || shift > 62)
    return usage_error(fmt::format("--shift needs an integer from 0 to 62, not '{}'", shift_text));
  std::vector<std::string> items;  // the coefficients as typed, read once the dtype is known
  if (!coeffs_text.empty()) {
    std::vector<double> check;
    if (!parse_reals(coeffs_text, check))
      return usage_error(fmt::format("--coeffs needs numbers separated by commas, not '{}'", coeffs_text));
    std::size_t start = 0;
    while (true) {
      std::size_t const comma = coeffs_text.find(',', start);
      items.push_back(
          coeffs_text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    if (!order_text.empty() && order != static_cast<std::int64_t>(items.size()))
      return usage_error(fmt::format("--order {} but --coeffs gives {} coefficients", order, items.size()));
  } else {
    if (order < 0 || order > 4)
      return usage_error(
          fmt::format("--order {} has no fixed predictor (0 to 4; give --coeffs for others)", order));
    // The binomial predictors: (1 - z^-1)^K = 1 - sum_j c_j z^-j.
    std::int64_t binom = 1;
    for (std::int64_t j = 1; j <= order; ++j) {
      binom = binom * (order - j + 1) / j;
      items.push_back(std::to_string(j % 2 ? binom : -binom));
    }
  }

  recur::npy_array const in = recur::read_npy(cmd.files[0]);
  axis_view const v = view_along(in.shape, cmd.axis, cmd.files[0]);
  recur::npy_array out;
  if (is_float_dtype(in.dtype)) {
    if (shift != 0)
      throw input_error(fmt::format("--shift {} applies to integer arrays; {} holds {}", shift, cmd.files[0],
                                    recur::npy_dtype_name(in.dtype)));
    std::vector<double> c;
    for (auto const& item : items) c.push_back(std::strtod(item.c_str(), nullptr));
    out = in.dtype == recur::npy_dtype::f32 ? dpcm_float_npy<float>(encode, in, v, c)
                                            : dpcm_float_npy<double>(encode, in, v, c);
  } else {
    std::vector<std::int64_t> c;
    for (auto const& item : items) {
      std::int64_t value = 0;
      if (!parse_integer(item, value))
        throw input_error(
            fmt::format("{} holds {}, whose codec needs integer coefficients (fixed point with "
                        "--shift), not '{}'",
                        cmd.files[0], recur::npy_dtype_name(in.dtype), item));
      c.push_back(value);
    }
    int const sh = static_cast<int>(shift);
    switch (in.dtype) {
      case recur::npy_dtype::i16:
        out = dpcm_int_npy<std::int16_t>(encode, in, v, c, sh);
        break;
      case recur::npy_dtype::i32:
        out = dpcm_int_npy<std::int32_t>(encode, in, v, c, sh);
        break;
      default:
        out = dpcm_int_npy<std::uint8_t>(encode, in, v, c, sh);
        break;
    }
  }
  recur::write_npy(cmd.files[1], out);
  return exit_ok;
}

int run(int argc, char** argv) {
  if (argc < 2) return usage_error("no command given");
  std::string_view const cmd = argv[1];
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    if (argc > 2) return usage_error(fmt::format("unexpected argument '{}'", argv[2]));
    fmt::print("recur {}: recurrence and scan primitives on the CPU and CUDA GPUs\n\n{}",
               RECUR_VERSION_STRING, usage_text);
    return exit_ok;
  }
  if (cmd == "--version") {
    if (argc > 2) return usage_error(fmt::format("unexpected argument '{}'", argv[2]));
    fmt::print("recur {}\n", RECUR_VERSION_STRING);
    return exit_ok;
  }
  if (cmd == "demo") {
    bool force_cpu = false;
    for (int i = 2; i < argc; ++i) {
      std::string_view const a = argv[i];
      if (a == "--cpu") {
        force_cpu = true;
      } else if (a == "-h" || a == "--help") {
        fmt::print("{}", usage_text);
        return exit_ok;
      } else {
        return usage_error(fmt::format("unknown option '{}' for demo", a));
      }
    }
    return demo(force_cpu);
  }
  if (cmd == "tridiag") return tridiag_command(argc, argv);
  if (cmd == "filter") return filter_command(argc, argv);
  if (cmd == "sosfilt") return sosfilt_command(argc, argv);
  if (cmd == "dpcm") return dpcm_command(argc, argv);
  if (!cmd.empty() && cmd[0] == '-') return usage_error(fmt::format("unknown option '{}'", cmd));
  return usage_error(fmt::format("unknown command '{}'", cmd));
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (input_error const& e) {
    fmt::print(stderr, "recur {}: {}\n", command_name, e.what());
  } catch (recur::error const& e) {
    fmt::print(stderr, "recur: {}\n", e.what());
  } catch (std::exception const& e) {
    fmt::print(stderr, "recur: error: {}\n", e.what());
  }
  return exit_failed;
}
